//! `SlotCheck`: is `cand` the address of a record slot (`StoreLayout::is_record`: `first <=
//! cand < end` and `cand - first` a multiple of `RECORD_BYTES`)? Every link the Clio-KV unit
//! reads back from memory (a chain's next record, the free list's head) passes it before the
//! unit follows it, so even corrupt memory cannot send the unit outside the record area.
//!
//! A slot is 1104 bytes = 16 * 69, so the check drops 4 bits and tests divisibility by the odd
//! 69 without a divider (Granlund and Montgomery): `y` is a multiple of `REC_ODD` iff `y *
//! REC_INV mod 2^40 <= REC_BOUND`. A pipeline of four registers, one stage a cycle, with `cand`,
//! `first` and `stop` held steady meanwhile (the unit's `Cand1`..`Cand4` states):
//!
//! 1. `(cand - first) / 16` (`cy_q`) and the range and the low bits (`cin_q`);
//! 2. the six 16 x 16 (or 8 x 16) products of `cy_q * REC_INV` that count mod 2^40 (`cp0`..`cp5`);
//! 3. their sum (`cprod_q`);
//! 4. the sum against the bound, and the range (`ok`).
//!
//! `ok` is the answer for the `cand` of four cycles before.

use crate::spec::Spec;
use clio_proto::kv::RECORD_BYTES;
use rust_hdl::prelude::*;

/// Odd part of a record slot's size: `RECORD_BYTES = REC_ODD << 4` (the `get_bits::<40>(4)`
/// of stage 1).
const REC_ODD: u64 = RECORD_BYTES >> 4;
/// `REC_ODD`'s inverse modulo 2^40: `y` is a multiple of `REC_ODD` iff `y * REC_INV mod 2^40
/// <= REC_BOUND` (for `y < 2^40`; Granlund and Montgomery's divisibility test).
const REC_INV: u64 = {
    let mut x = REC_ODD; // correct to 3 bits; each step doubles them
    let mut i = 0;
    while i < 5 {
        x = x.wrapping_mul(2u64.wrapping_sub(REC_ODD.wrapping_mul(x)));
        i += 1;
    }
    x & ((1 << 40) - 1)
};
/// The largest `y * REC_INV mod 2^40` of a multiple `y` of `REC_ODD`.
const REC_BOUND: u64 = ((1 << 40) - 1) / REC_ODD;

// The literals of the check, pinned to proto: the slot's size is 16 times an odd number whose
// inverse the 40-bit products use (the inverse's top byte is bits 32..40: `cp3`, `cp5`).
const _: () = {
    assert!(RECORD_BYTES == REC_ODD << 4 && REC_ODD % 2 == 1);
    assert!((REC_ODD.wrapping_mul(REC_INV)) & ((1 << 40) - 1) == 1);
};

/// The slot check (module doc).
#[derive(LogicBlock, Default)]
pub struct SlotCheck {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The address to check (held for four cycles).
    pub cand: Signal<In, Bits<64>>,
    /// The first slot's address (`StoreLayout::record(0)`).
    pub first: Signal<In, Bits<64>>,
    /// One past the last slot (`StoreLayout::record(records)`; not `end`: a Verilog keyword).
    pub stop: Signal<In, Bits<64>>,
    /// `cand` of four cycles before is a slot's address.
    pub ok: Signal<Out, Bit>,
    /// Stage 1: `(cand - first) / 16`.
    cy_q: DFF<Bits<40>>,
    /// Stage 1: `first <= cand < stop` and `cand - first` a multiple of 16.
    cin_q: DFF<Bit>,
    /// Stage 2: the six products of `cy_q * REC_INV` that count mod 2^40, registered as they
    /// leave the multipliers (by their weight: 2^0, 2^16, 2^16, 2^32, 2^32, 2^32).
    cp0: DFF<Bits<40>>,
    cp1: DFF<Bits<40>>,
    cp2: DFF<Bits<40>>,
    cp3: DFF<Bits<40>>,
    cp4: DFF<Bits<40>>,
    cp5: DFF<Bits<40>>,
    /// Stage 3: `cy_q * REC_INV mod 2^40`, the products' sum.
    cprod_q: DFF<Bits<40>>,
    /// Stage 4: the answer.
    cok_q: DFF<Bit>,
    /// `cand - first` (its low 44 bits), stage 1's input.
    cx: Signal<Local, Bits<44>>,
    /// The products' sum, stage 3's input.
    cprod: Signal<Local, Bits<40>>,
    c_rec_inv: Spec<40, REC_INV>,
    c_rec_bound: Spec<40, REC_BOUND>,
}

impl Logic for SlotCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, cy_q, cin_q, cp0, cp1, cp2, cp3, cp4, cp5, cprod_q, cok_q);
        self.cx.next = bit_cast::<44, 64>(self.cand.val() - self.first.val());
        self.cy_q.d.next = self.cx.val().get_bits::<40>(4);
        self.cin_q.d.next = (self.cand.val() >= self.first.val())
            & (self.cand.val() < self.stop.val())
            & (self.cx.val().get_bits::<4>(0) == 0);
        self.cp0.d.next = bit_cast::<40, 32>(
            self.cy_q.q.val().get_bits::<16>(0) * self.c_rec_inv.val().get_bits::<16>(0),
        );
        self.cp1.d.next = bit_cast::<40, 32>(
            self.cy_q.q.val().get_bits::<16>(0) * self.c_rec_inv.val().get_bits::<16>(16),
        );
        self.cp2.d.next = bit_cast::<40, 32>(
            self.cy_q.q.val().get_bits::<16>(16) * self.c_rec_inv.val().get_bits::<16>(0),
        );
        self.cp3.d.next = bit_cast::<40, 32>(
            self.cy_q.q.val().get_bits::<16>(0)
                * bit_cast::<16, 8>(self.c_rec_inv.val().get_bits::<8>(32)),
        );
        self.cp4.d.next = bit_cast::<40, 32>(
            self.cy_q.q.val().get_bits::<16>(16) * self.c_rec_inv.val().get_bits::<16>(16),
        );
        self.cp5.d.next = bit_cast::<40, 32>(
            bit_cast::<16, 8>(self.cy_q.q.val().get_bits::<8>(32))
                * self.c_rec_inv.val().get_bits::<16>(0),
        );
        self.cprod.next = self.cp0.q.val()
            + (self.cp1.q.val() << 16)
            + (self.cp2.q.val() << 16)
            + (self.cp3.q.val() << 32)
            + (self.cp4.q.val() << 32)
            + (self.cp5.q.val() << 32);
        self.cprod_q.d.next = self.cprod.val();
        self.cok_q.d.next = self.cin_q.q.val() & (self.cprod_q.q.val() <= self.c_rec_bound.val());
        self.ok.next = self.cok_q.q.val();
    }
}

crate::impl_clocked!(SlotCheck);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use clio_proto::kv::StoreLayout;

    /// Every address near the record area's slots, its ends and far outside, held four cycles
    /// as the unit holds it: `ok` is `StoreLayout::is_record`.
    #[test]
    fn ok_is_is_record_four_cycles_later() {
        let mut b = Bench::new(SlotCheck::default());
        for l in [
            StoreLayout::fit(0x40_0000, 1 << 20).expect("a store"),
            StoreLayout {
                base: 0x10_0000,
                buckets: 4,
                records: 8,
            },
        ] {
            let (first, end) = (l.record(0), l.record(l.records));
            let mut cands = vec![0, 1, first - 16, end, end + RECORD_BYTES, u64::MAX];
            for i in [0, 1, l.records / 2, l.records - 1] {
                let s = l.record(i);
                cands.extend([s, s + 8, s + 16, s - 16, s + RECORD_BYTES / 2]);
            }
            // Far above, where `cand - first` wraps past 44 bits onto a multiple of the slot.
            cands.push(first + (RECORD_BYTES << 44));
            let mut hits = 0;
            for c in cands {
                b.uut.cand.next = c.to_bits();
                b.uut.first.next = first.to_bits();
                b.uut.stop.next = end.to_bits();
                for _ in 0..4 {
                    b.tick();
                }
                b.settle();
                assert_eq!(b.uut.ok.val(), l.is_record(c), "{c:#x} in {l:?}");
                hits += usize::from(l.is_record(c));
            }
            assert_eq!(hits, 4, "the four slots pass, nothing else");
        }
    }
}
