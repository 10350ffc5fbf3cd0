//! SipHash-2-4 of a one-block message, half a SipRound a cycle: the route check's PRF
//! (`clio_proto::route_cookie::siphash24_final_block`, the reference its testbench compares
//! with).
//!
//! `start` loads SipHash's initial state for `key0`/`key1` with the message block `msg` mixed
//! into `v3`; then four half rounds (the two compression rounds), one cycle mixing the block
//! into `v0` and `0xff` into `v2`, and eight half rounds (the four finalization rounds): `done`
//! pulses 14 cycles after `start`, and `out` = `v0 ^ v1 ^ v2 ^ v3` holds until the next
//! `start`. A `start` while busy restarts it.
//!
//! A SipRound is two half rounds, A and B, which differ only in their rotations once `v0` and
//! `v2` trade places after each half (B is A on `(v2, v1, v0, v3)`). So the registers hold
//! `s = (v0, v1, v2, v3)` before an A and `(v2, v1, v0, v3)` before a B, and every half is the
//! same two 64-bit additions side by side, each followed by a rotation and an XOR; only the
//! rotation of `s1` and `s3` is chosen (13 and 16 for A, 17 and 21 for B), off the adders'
//! path. After an even number of halves (the mix, the end) the order is `(v0, v1, v2, v3)`.
//!
//! ```text
//! a = s0 + s1; b = s2 + s3
//! s0 <- b; s1 <- rotl(s1, 13 | 17) ^ a; s2 <- rotl(a, 32); s3 <- rotl(s3, 16 | 21) ^ b
//! ```

use crate::spec::Spec;
use rust_hdl::prelude::*;

/// Cycles from `start` to `done`: the load, 4 + 8 half rounds, the mix.
pub const SIPHASH_CYCLES: u64 = 14;

/// The unit.
#[derive(LogicBlock, Default)]
pub struct SipHash {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Start on `key0`, `key1`, `msg` (sampled this cycle).
    pub start: Signal<In, Bit>,
    /// The key's first word (`k0`).
    pub key0: Signal<In, Bits<64>>,
    /// The key's second word (`k1`).
    pub key1: Signal<In, Bits<64>>,
    /// The message's one final block (bytes little endian, the length in the top byte).
    pub msg: Signal<In, Bits<64>>,
    /// A computation runs.
    pub busy: Signal<Out, Bit>,
    /// The computation ended (one-cycle pulse); `out` is its hash.
    pub done: Signal<Out, Bit>,
    /// The hash (valid from `done` until the next `start`).
    pub out: Signal<Out, Bits<64>>,
    v0: DFF<Bits<64>>,
    v1: DFF<Bits<64>>,
    v2: DFF<Bits<64>>,
    v3: DFF<Bits<64>>,
    /// The message block (mixed into `v0` after the compression rounds).
    m: DFF<Bits<64>>,
    /// Steps taken since the load: 0..=3 compression halves, 4 the mix, 5..=12
    /// finalization halves.
    step: DFF<Bits<4>>,
    /// The next half round is a B (the rotations 17 and 21).
    half_b: DFF<Bit>,
    run: DFF<Bit>,
    fin: DFF<Bit>,
    /// The half round's sums, `s0 + s1` and `s2 + s3`.
    sa: Signal<Local, Bits<64>>,
    sb: Signal<Local, Bits<64>>,
    /// `s1` and `s3` rotated for this half (A's or B's amounts).
    r1: Signal<Local, Bits<64>>,
    r3: Signal<Local, Bits<64>>,
    c0: Spec<64, 0x736f_6d65_7073_6575>,
    c1: Spec<64, 0x646f_7261_6e64_6f6d>,
    c2: Spec<64, 0x6c79_6765_6e65_7261>,
    c3: Spec<64, 0x7465_6462_7974_6573>,
    c_ff: Spec<64, 0xff>,
}

impl Logic for SipHash {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, v0, v1, v2, v3, m, step, half_b, run, fin);
        self.fin.d.next = false;
        self.sa.next = self.v0.q.val() + self.v1.q.val();
        self.sb.next = self.v2.q.val() + self.v3.q.val();
        self.r1.next = (self.v1.q.val() << 13) | (self.v1.q.val() >> 51);
        self.r3.next = (self.v3.q.val() << 16) | (self.v3.q.val() >> 48);
        if self.half_b.q.val() {
            self.r1.next = (self.v1.q.val() << 17) | (self.v1.q.val() >> 47);
            self.r3.next = (self.v3.q.val() << 21) | (self.v3.q.val() >> 43);
        }
        if self.run.q.val() {
            self.step.d.next = self.step.q.val() + 1;
            if self.step.q.val() == 4 {
                self.v0.d.next = self.v0.q.val() ^ self.m.q.val();
                self.v2.d.next = self.v2.q.val() ^ self.c_ff.val();
            } else {
                self.v0.d.next = self.sb.val();
                self.v1.d.next = self.r1.val() ^ self.sa.val();
                self.v2.d.next = (self.sa.val() << 32) | (self.sa.val() >> 32);
                self.v3.d.next = self.r3.val() ^ self.sb.val();
                self.half_b.d.next = !self.half_b.q.val();
            }
            if self.step.q.val() == 12 {
                self.run.d.next = false;
                self.fin.d.next = true;
            }
        }
        if self.start.val() {
            self.v0.d.next = self.key0.val() ^ self.c0.val();
            self.v1.d.next = self.key1.val() ^ self.c1.val();
            self.v2.d.next = self.key0.val() ^ self.c2.val();
            self.v3.d.next = self.key1.val() ^ self.c3.val() ^ self.msg.val();
            self.m.d.next = self.msg.val();
            self.step.d.next = 0.into();
            self.half_b.d.next = false;
            self.run.d.next = true;
            self.fin.d.next = false;
        }
        self.busy.next = self.run.q.val();
        self.done.next = self.fin.q.val();
        self.out.next = self.v0.q.val() ^ self.v1.q.val() ^ self.v2.q.val() ^ self.v3.q.val();
    }
}

crate::impl_clocked!(SipHash);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use clio_proto::route_cookie::siphash24_final_block;

    fn run(b: &mut Bench<SipHash>, k: [u64; 2], m: u64) -> u64 {
        b.uut.start.next = true;
        b.uut.key0.next = k[0].to_bits();
        b.uut.key1.next = k[1].to_bits();
        b.uut.msg.next = m.to_bits();
        b.tick();
        b.uut.start.next = false;
        for i in 1..SIPHASH_CYCLES {
            b.settle();
            assert!(!b.uut.done.val(), "done early, cycle {i}");
            assert!(b.uut.busy.val());
            b.tick();
        }
        b.settle();
        assert!(
            b.uut.done.val() && !b.uut.busy.val(),
            "done after {SIPHASH_CYCLES}"
        );
        let out = b.uut.out.val().to_u64();
        b.tick();
        b.settle();
        assert!(!b.uut.done.val(), "one pulse");
        assert_eq!(b.uut.out.val().to_u64(), out, "held");
        out
    }

    /// The paper's vector, then random keys and blocks (IPv4- and MAC-shaped): every hash is
    /// proto's; a start in the middle of a run restarts it.
    #[test]
    fn hashes_as_proto_does() {
        let mut b = Bench::new(SipHash::default());
        let k = [0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908];
        assert_eq!(run(&mut b, k, 0), 0x726f_db47_dd0e_0e31);
        let mut rng = crate::tb::Rng(0x5151_2024_0BAD_F00D);
        for i in 0..300 {
            let k = [rng.next(), rng.next()];
            let m = if i % 2 == 0 {
                (4 << 56) | (rng.next() & 0xFFFF_FFFF)
            } else {
                (6 << 56) | (rng.next() & 0xFFFF_FFFF_FFFF)
            };
            if i % 7 == 0 {
                // Start something else and interrupt it.
                b.uut.start.next = true;
                b.uut.msg.next = (!m).to_bits();
                b.tick();
                b.uut.start.next = false;
                for _ in 0..(i % 11) {
                    b.tick();
                }
            }
            assert_eq!(run(&mut b, k, m), siphash24_final_block(k, m), "case {i}");
        }
    }
}
