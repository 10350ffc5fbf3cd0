//! `VaEnd<K, K1>`: does the range `[va, va + n + n2)` end inside the VA space, `va + n + n2 <=
//! VA_LIMIT` (`proto::consts`, 2^48), for a length `n + n2` below 2^K? Combinational, without a
//! 66-bit sum. The length comes as two terms (`n2` is 0 where one suffices) so that a length
//! that is itself a sum (a write packet's `pkt_index * 1024 + payload_len`) is added in the same
//! three-operand sum as the VA's low bits: one carry chain, not two in a row.
//!
//! With `n < 2^K` (K < 48; `n` standing for `n + n2` here) the rule is: `va`'s bits 48..64 are
//! zero, and either its bits K..48 are not all ones (then `va + n < 2^48`), or `va[0..K] + n <=
//! 2^K` (that sum is below 2^(K+1): it fits in K bits, or it is exactly 2^K). One exception: `va = 2^48` with `n = 0` ends at the limit, so it is
//! inside too. A (K+1)-bit sum and a few wide ANDs, where the plain form is a 64-bit add and
//! compare in front of whatever reads the answer.
//!
//! Used by the dispatch decode (a read's `total_len`, K = 32; a write packet's end from the
//! request's VA, K = 27) and by the executor (an offload's answer read, K = 12). `K1` is
//! `K + 1` (rust-hdl's widths are type parameters; a compile-time assert pins it).

use clio_proto::consts::{VA_BITS, VA_LIMIT};
use rust_hdl::prelude::*;

/// What the rule reads of `(va, n, n2)`, as [`VaEnd::terms`] packs them: `va`'s bits 48..64
/// zero (bit 0), its bits K..48 all ones (bit 1), the sum's bit K (bit 2), the sum's low K
/// bits zero (bit 3), the exception `va = VA_LIMIT` with `n + n2 = 0` (bit 4). Everything wide
/// (the sum's carry chain, the 48-bit compares) is here; [`VaEndRule`] is one LUT, so a caller
/// can register the terms and decide in the next cycle.
pub const VA_END_TERMS: usize = 5;
// The kernels' `bit_cast::<5, 1>` and `get_bit(0..5)` are these five terms.
const _: () = assert!(VA_END_TERMS == 5);

/// The range check's terms (module doc; [`VA_END_TERMS`]).
#[derive(LogicBlock)]
pub struct VaEndTerms<const K: usize, const K1: usize> {
    /// The range's first byte.
    pub va: Signal<In, Bits<64>>,
    /// Its length, `n + n2`, below 2^K (the caller's bound).
    pub n: Signal<In, Bits<K>>,
    /// The length's second term (0 where one suffices).
    pub n2: Signal<In, Bits<K>>,
    /// The terms, for [`VaEndRule`].
    pub terms: Signal<Out, Bits<VA_END_TERMS>>,
    /// `va[0..K] + n + n2`.
    sum: Signal<Local, Bits<K1>>,
    /// A VA's bits 0..K, K..48 and 48..64.
    low: Constant<Bits<64>>,
    mid: Constant<Bits<64>>,
    high: Constant<Bits<64>>,
    /// The sum's bits 0..K, and bit K.
    sum_low: Constant<Bits<K1>>,
    bit_k: Constant<Bits<K1>>,
    /// `VA_LIMIT`.
    limit: Constant<Bits<64>>,
}

impl<const K: usize, const K1: usize> Default for VaEndTerms<K, K1> {
    fn default() -> Self {
        const {
            assert!(
                K1 == K + 1 && K < VA_BITS as usize && VA_BITS < 64,
                "VaEnd: K1 = K + 1, and K below the VA's bits"
            )
        };
        let low = (1u64 << K) - 1;
        let va_mask = VA_LIMIT - 1;
        VaEndTerms {
            va: Default::default(),
            n: Default::default(),
            n2: Default::default(),
            terms: Default::default(),
            sum: Default::default(),
            low: Constant::new(low.to_bits()),
            mid: Constant::new((va_mask & !low).to_bits()),
            high: Constant::new((!va_mask).to_bits()),
            sum_low: Constant::new(low.to_bits()),
            bit_k: Constant::new((1u64 << K).to_bits()),
            limit: Constant::new(VA_LIMIT.to_bits()),
        }
    }
}

impl<const K: usize, const K1: usize> Logic for VaEndTerms<K, K1> {
    #[hdl_gen]
    fn update(&mut self) {
        self.sum.next = bit_cast::<K1, 64>(self.va.val() & self.low.val())
            + bit_cast::<K1, K>(self.n.val())
            + bit_cast::<K1, K>(self.n2.val());
        self.terms.next = bit_cast::<5, 1>(((self.va.val() & self.high.val()) == 0).into())
            | (bit_cast::<5, 1>(((self.va.val() & self.mid.val()) == self.mid.val()).into()) << 1)
            | (bit_cast::<5, 1>(((self.sum.val() & self.bit_k.val()) != 0).into()) << 2)
            | (bit_cast::<5, 1>(((self.sum.val() & self.sum_low.val()) == 0).into()) << 3)
            | (bit_cast::<5, 1>(
                ((self.va.val() == self.limit.val()) & (self.n.val() == 0) & (self.n2.val() == 0))
                    .into(),
            ) << 4);
    }
}

/// The range check's decision from its terms: `va`'s bits 48..64 zero, and either its bits
/// K..48 not all ones (then `va + n < 2^48`) or `va[0..K] + n + n2 <= 2^K` (the sum's bit K
/// clear, or the sum exactly 2^K); or the exception.
#[derive(LogicBlock, Default)]
pub struct VaEndRule {
    /// [`VaEndTerms::terms`], possibly a cycle old.
    pub terms: Signal<In, Bits<VA_END_TERMS>>,
    /// `va + n + n2 <= VA_LIMIT` (not `inside`: a SystemVerilog keyword).
    pub in_va: Signal<Out, Bit>,
}

impl Logic for VaEndRule {
    #[hdl_gen]
    fn update(&mut self) {
        self.in_va.next = self.terms.val().get_bit(0)
            & (!self.terms.val().get_bit(1)
                | !self.terms.val().get_bit(2)
                | self.terms.val().get_bit(3))
            | self.terms.val().get_bit(4);
    }
}

/// The range check (module doc): [`VaEndTerms`] and [`VaEndRule`] in one cycle.
#[derive(LogicBlock, Default)]
pub struct VaEnd<const K: usize, const K1: usize> {
    /// The range's first byte.
    pub va: Signal<In, Bits<64>>,
    /// Its length, `n + n2`, below 2^K (the caller's bound).
    pub n: Signal<In, Bits<K>>,
    /// The length's second term (0 where one suffices).
    pub n2: Signal<In, Bits<K>>,
    /// `va + n + n2 <= VA_LIMIT`.
    pub in_va: Signal<Out, Bit>,
    /// The terms, also for a caller that registers them (`Decode::rd_terms`, ...).
    pub terms: Signal<Out, Bits<VA_END_TERMS>>,
    parts: VaEndTerms<K, K1>,
    rule: VaEndRule,
}

impl<const K: usize, const K1: usize> Logic for VaEnd<K, K1> {
    #[hdl_gen]
    fn update(&mut self) {
        self.parts.va.next = self.va.val();
        self.parts.n.next = self.n.val();
        self.parts.n2.next = self.n2.val();
        self.terms.next = self.parts.terms.val();
        self.rule.terms.next = self.parts.terms.val();
        self.in_va.next = self.rule.in_va.val();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The VAs and lengths around every edge of the rule (the limit, the K-bit boundary below
    /// it, the 48-bit field) and a spread of others, against `va + n <= VA_LIMIT` in u128.
    fn check<const K: usize, const K1: usize>() {
        let mut w = VaEnd::<K, K1>::default();
        w.connect_all();
        let kmax = (1u64 << K) - 1;
        let edge = VA_LIMIT - (1u64 << K);
        let mut vas = vec![
            0,
            1,
            kmax,
            1 << K,
            edge - 1,
            edge,
            edge + 1,
            edge + kmax / 2,
            VA_LIMIT - 1,
            VA_LIMIT,
            VA_LIMIT + 1,
            VA_LIMIT | edge,
            1 << 63,
            u64::MAX,
        ];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for _ in 0..24 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            vas.push(x);
            vas.push(edge | (x & kmax));
        }
        let mut cases = 0;
        for &va in &vas {
            let mut ns = vec![0, 1, kmax, kmax / 2, 4096.min(kmax)];
            for d in [
                VA_LIMIT.wrapping_sub(va),
                VA_LIMIT.wrapping_sub(va).wrapping_add(1),
            ] {
                if d <= kmax {
                    ns.push(d);
                    ns.push(d.saturating_sub(1));
                }
            }
            for n in ns {
                // The length whole in `n`, whole in `n2`, or split between them.
                for n2 in [0, n, n / 3] {
                    w.va.next = va.to_bits();
                    w.n.next = (n - n2).to_bits();
                    w.n2.next = n2.to_bits();
                    assert!(simulate(&mut w, 100));
                    let want = va as u128 + n as u128 <= VA_LIMIT as u128;
                    assert_eq!(w.in_va.val(), want, "K {K}: va {va:#x} n {n:#x} n2 {n2:#x}");
                    cases += 1;
                }
            }
        }
        assert!(cases > 900);
    }

    #[test]
    fn va_end_matches_the_exact_sum() {
        check::<12, 13>();
        check::<27, 28>();
        check::<32, 33>();
    }
}
