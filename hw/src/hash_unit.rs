//! The page-table hash unit: `xxh32(pid as u32 LE ++ vpn as u64 LE, PT_HASH_SEED)`, pipelined.
//!
//! This is the 12-byte short-input path of xxh32 (`proto::pt_hash::xxh32_12_steps`): three
//! 4-byte lanes `h = rotl(h + w * P3, 17) * P4`, then the avalanche. Every 32 x 32 constant
//! multiply is a `MulLo32` (`crate::mul_lo32`, shared with Clio-KV's `xxh32`): three 16 x 16
//! products (the low 32 bits only), the multiplier width rust-hdl supports and a DSP slice
//! implements.
//!
//! Each multiply has a cycle of its own, from a registered operand to three registered
//! products (a DSP48E2 with its A/B and P registers), and the adds and rotations between two
//! multiplies have the next cycle: a multiply never shares a cycle with an adder. Six
//! multiplies in series (the lane product, three rounds, two avalanche steps), two cycles
//! each:
//!
//! ```text
//! cycle  0 -> 1 : lane product w0 * P3 (three 16 x 16 products)             w0: pid; vpn registered
//! cycle  1 -> 2 : a0 = rotl(H0 + sum(lane 0), 17); lane products w1, w2 * P3   H0 = seed + P5 + 12
//!                                                                          w1, w2: vpn lo, vpn hi
//! cycle  2 -> 3 : products of a0 * P4; m1, m2 = sum(lane 1, 2)
//! cycle  3 -> 4 : a1 = rotl(sum + m1, 17)
//! cycle  4 -> 5 : products of a1 * P4
//! cycle  5 -> 6 : a2 = rotl(sum + m2, 17)
//! cycle  6 -> 7 : products of a2 * P4
//! cycle  7 -> 8 : a3 = h ^ h >> 15                 (h = the sum of the products)
//! cycle  8 -> 9 : products of a3 * P2
//! cycle  9 -> 10: a4 = h ^ h >> 13
//! cycle 10 -> 11: products of a4 * P3
//! cycle 11 -> 12: out = h ^ h >> 16
//! ```
//!
//! Latency [`HASH_LATENCY`] cycles, II = 1. `pid`, `vpn` and an opaque context travel with the
//! hash so the walker needs no side queue.
//!
//! `in_pid` goes straight into its multiplier (the caller registers it); `in_vpn`'s lanes are
//! not needed before the second round, so the VPN is registered here first (`vpn[0]`, the
//! register that carries it along) and its products are a cycle later, within the same
//! latency: a caller may have a few levels of logic in front of `in_vpn` (the TLB
//! look-ahead's page shift).

use crate::mul_lo32::MulLo32;
use rust_hdl::prelude::*;

/// Cycles from `in_valid` to `out_valid`.
pub const HASH_LATENCY: usize = 12;
/// Width of the opaque context the walker's hash unit carries alongside a request (the
/// unit's default `C`; the TLB look-ahead's carries a 4-bit tag).
pub const HASH_CTX_BITS: usize = 24;

const P2: u32 = 0x85EB_CA77;
const P3: u32 = 0xC2B2_AE3D;
const P4: u32 = 0x27D4_EB2F;
const P5: u32 = 0x1656_67B1;

/// The pipelined xxh32 unit, with a context of `C` bits.
#[derive(LogicBlock)]
pub struct HashUnit<const C: usize = HASH_CTX_BITS> {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (clears the valid pipeline).
    pub reset: Signal<In, Bit>,
    /// A request enters this cycle.
    pub in_valid: Signal<In, Bit>,
    /// Process id.
    pub in_pid: Signal<In, Bits<16>>,
    /// Virtual page number (36 bits: a 48-bit VA at the smallest 4 KiB page).
    pub in_vpn: Signal<In, Bits<36>>,
    /// Opaque context returned with the hash.
    pub in_ctx: Signal<In, Bits<C>>,
    /// The hash of the request that entered [`HASH_LATENCY`] cycles ago.
    pub out_valid: Signal<Out, Bit>,
    /// 32-bit xxh32 value.
    pub out_hash: Signal<Out, Bits<32>>,
    /// Its process id.
    pub out_pid: Signal<Out, Bits<16>>,
    /// Its virtual page number.
    pub out_vpn: Signal<Out, Bits<36>>,
    /// Its context.
    pub out_ctx: Signal<Out, Bits<C>>,
    valid: [DFF<Bit>; HASH_LATENCY],
    pid: [DFF<Bits<16>>; HASH_LATENCY],
    vpn: [DFF<Bits<36>>; HASH_LATENCY],
    ctx: [DFF<Bits<C>>; HASH_LATENCY],
    /// The lane products `w * P3` (lane 0: pid, 1: vpn's low word, 2: its high word).
    lane_mul: [MulLo32; 3],
    /// Lane 1's product, from cycle 3, for cycle 3's round.
    m1: [DFF<Bits<32>>; 1],
    /// Lane 2's product, from cycle 3, delayed to cycle 5's round.
    m2: [DFF<Bits<32>>; 3],
    /// Multiply k's operand (k = 0..5: three rounds times P4, the avalanche times P2, P3).
    a: [DFF<Bits<32>>; 5],
    /// Multiply k: `a[k]` times P4 (the rounds), P2, P3 (the avalanche).
    mul: [MulLo32; 5],
    /// The hash.
    out: DFF<Bits<32>>,
    // Lane words (combinational).
    w: [Signal<Local, Bits<32>>; 3],
    /// The rounds' sums before the rotation.
    s: [Signal<Local, Bits<32>>; 3],
    h0: Constant<Bits<32>>,
    p2: Constant<Bits<32>>,
    p3: Constant<Bits<32>>,
    p4: Constant<Bits<32>>,
}

impl<const C: usize> Default for HashUnit<C> {
    fn default() -> Self {
        let seed = clio_proto::consts::PT_HASH_SEED;
        Self {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_pid: Default::default(),
            in_vpn: Default::default(),
            in_ctx: Default::default(),
            out_valid: Default::default(),
            out_hash: Default::default(),
            out_pid: Default::default(),
            out_vpn: Default::default(),
            out_ctx: Default::default(),
            valid: Default::default(),
            pid: Default::default(),
            vpn: Default::default(),
            ctx: Default::default(),
            lane_mul: Default::default(),
            m1: Default::default(),
            m2: Default::default(),
            a: Default::default(),
            mul: Default::default(),
            out: Default::default(),
            w: Default::default(),

            s: Default::default(),
            h0: Constant::new(seed.wrapping_add(P5).wrapping_add(12).to_bits()),
            p2: Constant::new(P2.to_bits()),
            p3: Constant::new(P3.to_bits()),
            p4: Constant::new(P4.to_bits()),
        }
    }
}

impl<const C: usize> Logic for HashUnit<C> {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..12 {
            self.valid[i].clock.next = self.clock.val();
            self.pid[i].clock.next = self.clock.val();
            self.vpn[i].clock.next = self.clock.val();
            self.ctx[i].clock.next = self.clock.val();
        }
        for i in 0..3 {
            self.lane_mul[i].clock.next = self.clock.val();
        }
        for i in 0..5 {
            self.a[i].clock.next = self.clock.val();
            self.mul[i].clock.next = self.clock.val();
        }
        self.m1[0].clock.next = self.clock.val();
        for i in 0..3 {
            self.m2[i].clock.next = self.clock.val();
        }
        dff_setup!(self, clock, out);
        // The identity travels down the pipeline.
        self.valid[0].d.next = self.in_valid.val() & !self.reset.val();
        self.pid[0].d.next = self.in_pid.val();
        self.vpn[0].d.next = self.in_vpn.val();
        self.ctx[0].d.next = self.in_ctx.val();
        for i in 1..12 {
            self.valid[i].d.next = self.valid[i - 1].q.val() & !self.reset.val();
            self.pid[i].d.next = self.pid[i - 1].q.val();
            self.vpn[i].d.next = self.vpn[i - 1].q.val();
            self.ctx[i].d.next = self.ctx[i - 1].q.val();
        }
        // Cycle 0: lane 0's product (pid); cycle 1: lanes 1 and 2 (the VPN, registered).
        self.w[0].next = bit_cast::<32, 16>(self.in_pid.val());
        self.w[1].next = self.vpn[0].q.val().get_bits::<32>(0);
        self.w[2].next = bit_cast::<32, 4>(self.vpn[0].q.val().get_bits::<4>(32));
        for i in 0..3 {
            self.lane_mul[i].a.next = self.w[i].val();
            self.lane_mul[i].b.next = self.p3.val();
        }
        // The operands: three rounds rotl(acc + lane, 17), then the avalanche's shift-xors.
        self.s[0].next = self.h0.val() + self.lane_mul[0].y.val();
        self.m1[0].d.next = self.lane_mul[1].y.val();
        self.m2[0].d.next = self.lane_mul[2].y.val();
        for i in 1..3 {
            self.m2[i].d.next = self.m2[i - 1].q.val();
        }
        self.s[1].next = self.mul[0].y.val() + self.m1[0].q.val();
        self.s[2].next = self.mul[1].y.val() + self.m2[2].q.val();
        for i in 0..3 {
            self.a[i].d.next = (self.s[i].val() << 17) | (self.s[i].val() >> 15);
        }
        self.a[3].d.next = self.mul[2].y.val() ^ (self.mul[2].y.val() >> 15);
        self.a[4].d.next = self.mul[3].y.val() ^ (self.mul[3].y.val() >> 13);
        // The multiplies (P4 for the rounds, P2 and P3 for the avalanche).
        for i in 0..5 {
            self.mul[i].a.next = self.a[i].q.val();
        }
        for i in 0..3 {
            self.mul[i].b.next = self.p4.val();
        }
        self.mul[3].b.next = self.p2.val();
        self.mul[4].b.next = self.p3.val();
        // The final shift-xor.
        self.out.d.next = self.mul[4].y.val() ^ (self.mul[4].y.val() >> 16);
        self.out_hash.next = self.out.q.val();
        self.out_valid.next = self.valid[11].q.val();
        self.out_pid.next = self.pid[11].q.val();
        self.out_vpn.next = self.vpn[11].q.val();
        self.out_ctx.next = self.ctx[11].q.val();
    }
}

impl<const C: usize> crate::bench::Clocked for HashUnit<C> {
    fn clock_in(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use clio_proto::pt_hash::{hash_input, pt_hash, xxh32_12_steps};

    /// A stream of requests, one per cycle with gaps, checked against `pt_hash` and against the
    /// step-form reference, in order and at exactly `HASH_LATENCY` cycles.
    #[test]
    fn bit_exact_with_xxhash_rust_at_fixed_latency() {
        let mut b = Bench::new(<HashUnit>::default());
        let mut rng = 0x1234_5678_9abc_def0u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let mut sent: Vec<Option<(u16, u64, u32)>> = vec![];
        let mut checked = 0;
        for cyc in 0..300 {
            let r = next();
            let valid = cyc < 280 && r % 5 != 0;
            let pid = (r >> 8) as u16;
            let vpn = (r >> 20) & ((1 << 36) - 1);
            let ctx = (r >> 3) as u32 & 0xFF_FFFF;
            b.uut.in_valid.next = valid;
            b.uut.in_pid.next = pid.to_bits();
            b.uut.in_vpn.next = vpn.to_bits();
            b.uut.in_ctx.next = ctx.to_bits();
            sent.push(valid.then_some((pid, vpn, ctx)));
            b.settle();
            if cyc >= HASH_LATENCY {
                let expect = sent[cyc - HASH_LATENCY];
                assert_eq!(
                    b.uut.out_valid.val(),
                    expect.is_some(),
                    "valid at cycle {cyc}"
                );
                if let Some((pid, vpn, ctx)) = expect {
                    let want = pt_hash(pid, vpn);
                    assert_eq!(
                        want,
                        xxh32_12_steps(&hash_input(pid, vpn), clio_proto::consts::PT_HASH_SEED)
                    );
                    assert_eq!(
                        b.uut.out_hash.val().to_u32(),
                        want,
                        "pid {pid} vpn {vpn:#x}"
                    );
                    assert_eq!(b.uut.out_pid.val().to_u16(), pid);
                    assert_eq!(b.uut.out_vpn.val().to_u64(), vpn);
                    assert_eq!(b.uut.out_ctx.val().to_u32(), ctx);
                    checked += 1;
                }
            }
            b.tick();
        }
        assert!(checked > 150);
    }

    #[test]
    fn edge_values() {
        let mut b = Bench::new(<HashUnit>::default());
        let cases = [
            (0u16, 0u64),
            (u16::MAX, (1 << 36) - 1),
            (1, 1),
            (0x8000, 1 << 35),
        ];
        for (pid, vpn) in cases {
            b.uut.in_valid.next = true;
            b.uut.in_pid.next = pid.to_bits();
            b.uut.in_vpn.next = vpn.to_bits();
            b.tick();
            b.uut.in_valid.next = false;
            for _ in 1..HASH_LATENCY {
                b.tick();
            }
            b.settle();
            assert!(b.uut.out_valid.val());
            assert_eq!(b.uut.out_hash.val().to_u32(), pt_hash(pid, vpn));
            b.tick();
            b.settle();
            assert!(!b.uut.out_valid.val());
        }
    }
}
