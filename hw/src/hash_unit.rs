//! The page-table hash unit: `xxh32(pid as u32 LE ++ vpn as u64 LE, PT_HASH_SEED)`, pipelined.
//!
//! This is the 12-byte short-input path of xxh32 (`proto::pt_hash::xxh32_12_steps`): three
//! 4-byte lanes `h = rotl(h + w * P3, 17) * P4`, then the avalanche. Every 32 x 32 constant
//! multiply is built from three 16 x 16 products (the low 32 bits only), the multiplier width
//! rust-hdl supports and a DSP slice implements. One multiply per stage:
//!
//! ```text
//! stage 0: m0..m2 = w0..w2 * P3          (lane products are independent of h)
//! stage 1: h = rotl(H0 + m0, 17) * P4     H0 = seed + P5 + 12 (a constant)
//! stage 2: h = rotl(h  + m1, 17) * P4
//! stage 3: h = rotl(h  + m2, 17) * P4
//! stage 4: h = (h ^ h >> 15) * P2
//! stage 5: h = (h ^ h >> 13) * P3
//! output : h ^ h >> 16                   (combinational from the stage-5 register)
//! ```
//!
//! Latency [`HASH_LATENCY`] cycles, II = 1. `pid`, `vpn` and an opaque context travel with the
//! hash so the walker needs no side queue.

use rust_hdl::prelude::*;

/// Cycles from `in_valid` to `out_valid`.
pub const HASH_LATENCY: usize = 6;
/// Width of the opaque context carried alongside a hash request.
pub const HASH_CTX_BITS: usize = 24;

const P2: u32 = 0x85EB_CA77;
const P3: u32 = 0xC2B2_AE3D;
const P4: u32 = 0x27D4_EB2F;
const P5: u32 = 0x1656_67B1;

/// The pipelined xxh32 unit.
#[derive(LogicBlock)]
pub struct HashUnit {
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
    pub in_ctx: Signal<In, Bits<HASH_CTX_BITS>>,
    /// The hash of the request that entered [`HASH_LATENCY`] cycles ago.
    pub out_valid: Signal<Out, Bit>,
    /// 32-bit xxh32 value.
    pub out_hash: Signal<Out, Bits<32>>,
    /// Its process id.
    pub out_pid: Signal<Out, Bits<16>>,
    /// Its virtual page number.
    pub out_vpn: Signal<Out, Bits<36>>,
    /// Its context.
    pub out_ctx: Signal<Out, Bits<HASH_CTX_BITS>>,
    valid: [DFF<Bit>; HASH_LATENCY],
    pid: [DFF<Bits<16>>; HASH_LATENCY],
    vpn: [DFF<Bits<36>>; HASH_LATENCY],
    ctx: [DFF<Bits<HASH_CTX_BITS>>; HASH_LATENCY],
    h: [DFF<Bits<32>>; HASH_LATENCY],
    m1: [DFF<Bits<32>>; 2],
    m2: [DFF<Bits<32>>; 3],
    // Multiplicand of each stage (combinational).
    w0: Signal<Local, Bits<32>>,
    w1: Signal<Local, Bits<32>>,
    w2: Signal<Local, Bits<32>>,
    a1: Signal<Local, Bits<32>>,
    a2: Signal<Local, Bits<32>>,
    a3: Signal<Local, Bits<32>>,
    a4: Signal<Local, Bits<32>>,
    a5: Signal<Local, Bits<32>>,
    s1: Signal<Local, Bits<32>>,
    s2: Signal<Local, Bits<32>>,
    s3: Signal<Local, Bits<32>>,
    h0: Constant<Bits<32>>,
    p2l: Constant<Bits<16>>,
    p2h: Constant<Bits<16>>,
    p3l: Constant<Bits<16>>,
    p3h: Constant<Bits<16>>,
    p4l: Constant<Bits<16>>,
    p4h: Constant<Bits<16>>,
}

impl Default for HashUnit {
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
            h: Default::default(),
            m1: Default::default(),
            m2: Default::default(),
            w0: Default::default(),
            w1: Default::default(),
            w2: Default::default(),
            a1: Default::default(),
            a2: Default::default(),
            a3: Default::default(),
            a4: Default::default(),
            a5: Default::default(),
            s1: Default::default(),
            s2: Default::default(),
            s3: Default::default(),
            h0: Constant::new(seed.wrapping_add(P5).wrapping_add(12).to_bits()),
            p2l: Constant::new((P2 & 0xFFFF).to_bits()),
            p2h: Constant::new((P2 >> 16).to_bits()),
            p3l: Constant::new((P3 & 0xFFFF).to_bits()),
            p3h: Constant::new((P3 >> 16).to_bits()),
            p4l: Constant::new((P4 & 0xFFFF).to_bits()),
            p4h: Constant::new((P4 >> 16).to_bits()),
        }
    }
}

impl Logic for HashUnit {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..6 {
            self.valid[i].clock.next = self.clock.val();
            self.pid[i].clock.next = self.clock.val();
            self.vpn[i].clock.next = self.clock.val();
            self.ctx[i].clock.next = self.clock.val();
            self.h[i].clock.next = self.clock.val();
        }
        for i in 0..2 {
            self.m1[i].clock.next = self.clock.val();
        }
        for i in 0..3 {
            self.m2[i].clock.next = self.clock.val();
        }
        // The identity travels down the pipeline.
        self.valid[0].d.next = self.in_valid.val() & !self.reset.val();
        self.pid[0].d.next = self.in_pid.val();
        self.vpn[0].d.next = self.in_vpn.val();
        self.ctx[0].d.next = self.in_ctx.val();
        for i in 1..6 {
            self.valid[i].d.next = self.valid[i - 1].q.val() & !self.reset.val();
            self.pid[i].d.next = self.pid[i - 1].q.val();
            self.vpn[i].d.next = self.vpn[i - 1].q.val();
            self.ctx[i].d.next = self.ctx[i - 1].q.val();
        }
        // Stage 0: the three lane products (lanes: pid as u32, vpn low word, vpn high word).
        self.w0.next = bit_cast::<32, 16>(self.in_pid.val());
        self.w1.next = self.in_vpn.val().get_bits::<32>(0);
        self.w2.next = bit_cast::<32, 4>(self.in_vpn.val().get_bits::<4>(32));
        self.h[0].d.next = self.w0.val().get_bits::<16>(0) * self.p3l.val()
            + ((self.w0.val().get_bits::<16>(0) * self.p3h.val()) << 16)
            + ((self.w0.val().get_bits::<16>(16) * self.p3l.val()) << 16);
        self.m1[0].d.next = self.w1.val().get_bits::<16>(0) * self.p3l.val()
            + ((self.w1.val().get_bits::<16>(0) * self.p3h.val()) << 16)
            + ((self.w1.val().get_bits::<16>(16) * self.p3l.val()) << 16);
        self.m2[0].d.next = self.w2.val().get_bits::<16>(0) * self.p3l.val()
            + ((self.w2.val().get_bits::<16>(0) * self.p3h.val()) << 16)
            + ((self.w2.val().get_bits::<16>(16) * self.p3l.val()) << 16);
        self.m1[1].d.next = self.m1[0].q.val();
        self.m2[1].d.next = self.m2[0].q.val();
        self.m2[2].d.next = self.m2[1].q.val();
        // Stages 1-3: the lane rounds.
        self.s1.next = self.h0.val() + self.h[0].q.val();
        self.a1.next = (self.s1.val() << 17) | (self.s1.val() >> 15);
        self.h[1].d.next = self.a1.val().get_bits::<16>(0) * self.p4l.val()
            + ((self.a1.val().get_bits::<16>(0) * self.p4h.val()) << 16)
            + ((self.a1.val().get_bits::<16>(16) * self.p4l.val()) << 16);
        self.s2.next = self.h[1].q.val() + self.m1[1].q.val();
        self.a2.next = (self.s2.val() << 17) | (self.s2.val() >> 15);
        self.h[2].d.next = self.a2.val().get_bits::<16>(0) * self.p4l.val()
            + ((self.a2.val().get_bits::<16>(0) * self.p4h.val()) << 16)
            + ((self.a2.val().get_bits::<16>(16) * self.p4l.val()) << 16);
        self.s3.next = self.h[2].q.val() + self.m2[2].q.val();
        self.a3.next = (self.s3.val() << 17) | (self.s3.val() >> 15);
        self.h[3].d.next = self.a3.val().get_bits::<16>(0) * self.p4l.val()
            + ((self.a3.val().get_bits::<16>(0) * self.p4h.val()) << 16)
            + ((self.a3.val().get_bits::<16>(16) * self.p4l.val()) << 16);
        // Stages 4-5: the avalanche.
        self.a4.next = self.h[3].q.val() ^ (self.h[3].q.val() >> 15);
        self.h[4].d.next = self.a4.val().get_bits::<16>(0) * self.p2l.val()
            + ((self.a4.val().get_bits::<16>(0) * self.p2h.val()) << 16)
            + ((self.a4.val().get_bits::<16>(16) * self.p2l.val()) << 16);
        self.a5.next = self.h[4].q.val() ^ (self.h[4].q.val() >> 13);
        self.h[5].d.next = self.a5.val().get_bits::<16>(0) * self.p3l.val()
            + ((self.a5.val().get_bits::<16>(0) * self.p3h.val()) << 16)
            + ((self.a5.val().get_bits::<16>(16) * self.p3l.val()) << 16);
        self.out_hash.next = self.h[5].q.val() ^ (self.h[5].q.val() >> 16);
        self.out_valid.next = self.valid[5].q.val();
        self.out_pid.next = self.pid[5].q.val();
        self.out_vpn.next = self.vpn[5].q.val();
        self.out_ctx.next = self.ctx[5].q.val();
    }
}

crate::impl_clocked!(HashUnit);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use clio_proto::pt_hash::{hash_input, pt_hash, xxh32_12_steps};

    /// A stream of requests, one per cycle with gaps, checked against `pt_hash` and against the
    /// step-form reference, in order and at exactly `HASH_LATENCY` cycles.
    #[test]
    fn bit_exact_with_xxhash_rust_at_fixed_latency() {
        let mut b = Bench::new(HashUnit::default());
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
        let mut b = Bench::new(HashUnit::default());
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
