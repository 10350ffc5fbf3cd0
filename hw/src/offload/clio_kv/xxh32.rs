//! Clio-KV's key hash in hardware: xxh32 of `owner as u16 LE ++ key` with seed
//! `clio_proto::kv::KEY_HASH_SEED` (`clio_proto::kv::key_hash`), over 3..=66 bytes, with one
//! pipelined 32 x 32 multiplier (`MulLo32`: three 16 x 16 products, the low 32 bits, shared
//! with the hash unit): an operand register, the three products registered as they leave the
//! multipliers (a DSP48E2 with its input and output registers), and their sum read two cycles
//! after the operand was issued. A multiply never shares a cycle with an adder, and one is
//! issued every cycle while the stripes run (their four lanes are independent, so the products
//! of two lanes interleave):
//!
//! ```text
//! start    : v1..v4 = seed + P1 + P2, seed + P2, seed, seed - P1; h = seed + P5 + len
//! stripes  : 16 bytes each, v = rotl(v + w * P2, 13) * P1 for v1..v4; 8 cycles per stripe:
//!            issue w1*P2, w2*P2, v1', v2', w3*P2, w4*P2, v3', v4' (v' = rotl(v + product, 13)
//!            times P1); v1, v2 take their products in cycles 4, 5, v3, v4 in the next stripe's
//!            cycles 0, 1 (or two drain cycles after the last stripe)
//! merge    : h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18) + len     (1 cycle)
//! words    : while 4 bytes remain: h = rotl(h + w * P3, 17) * P4        (4 cycles, 1 to leave)
//! bytes    : while a byte remains: h = rotl(h + b * P5, 11) * P1        (4 cycles, 1 to leave)
//! avalanche: h = (h ^ h >> 15) * P2; h = (h ^ h >> 13) * P3             (4 cycles, 1 to finish)
//! out      : h ^ h >> 16
//! ```
//!
//! Depth after the multiplier: a lane's (word's, byte's) `acc + product` adds the three
//! registered products into the accumulator (`acc`, chosen the cycle before) with two
//! carry-save layers and one adder, and its rotation goes into a register of its own (`mqr`,
//! the rotation chosen the cycle before, `rsel`); the operand issued is `mqr` or `mq` (the
//! other operands), one select in front of the multipliers. The merge's first three terms are
//! registered during the drain (`mpart`).
//!
//! Cycles from `start` to `busy` low, for n bytes: 8 per 16-byte stripe plus 3 (drain and
//! merge) if n >= 16, 4 per remaining word and byte, plus 7 (18 bytes, a 16-byte key: 26
//! cycles; the longest, 66 bytes: 50).

use crate::mul_lo32::MulLo32;
use crate::spec::Spec;
use clio_proto::kv::{KEY_HASH_SEED, MAX_KEY};
use rust_hdl::prelude::*;

/// Bytes the unit hashes at most: the owner (u16) and the longest key.
pub const HASH_BYTES: usize = 2 + MAX_KEY;

const P1: u32 = 0x9E37_79B1;
const P2: u32 = 0x85EB_CA77;
const P3: u32 = 0xC2B2_AE3D;
const P4: u32 = 0x27D4_EB2F;
const P5: u32 = 0x1656_67B1;
const SEED: u64 = KEY_HASH_SEED as u64;

// The input register is 528 bits and the lengths 7 bits: the longest input must fit both.
const _: () = assert!(HASH_BYTES * 8 == 528 && HASH_BYTES < 128);

/// Where the hash is.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum XxhState {
    /// Done (or not started): `hash` holds the last result.
    Idle,
    /// Accumulating 16-byte stripes in v1..v4 (`ph` 0..8).
    Stripe,
    /// After the last stripe: v3 and v4 take their products (`ph` 0, 1).
    Drain,
    /// Folding v1..v4 into h.
    Merge,
    /// Remaining 4-byte words (`ph` 0..4).
    Word,
    /// Remaining bytes (`ph` 0..4).
    Byte,
    /// The avalanche's two multiplies (`ph` 0..4).
    Aval,
    /// The last product into h.
    Fin,
}

/// The iterative xxh32 unit.
#[derive(LogicBlock, Default)]
pub struct Xxh32 {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// Start hashing `data` (taken only while idle).
    pub start: Signal<In, Bit>,
    /// The input: byte k at bits 8k.. (bytes past `len` are ignored).
    pub data: Signal<In, Bits<528>>,
    /// Input bytes (0..=66).
    pub len: Signal<In, Bits<7>>,
    /// Hashing: from the cycle after `start` until `hash` is ready.
    pub busy: Signal<Out, Bit>,
    /// The hash of the last input, valid while not busy.
    pub hash: Signal<Out, Bits<32>>,
    /// The step being taken.
    state: DFF<XxhState>,
    /// The cycle within the step.
    ph: DFF<Bits<3>>,
    /// v3 and v4 of the last stripe take their products in this stripe's cycles 0 and 1.
    pend: DFF<Bit>,
    /// The product arriving this cycle is the new h (a word's or byte's second multiply).
    hpend: DFF<Bit>,
    /// Stripe accumulators.
    v1: DFF<Bits<32>>,
    /// Second stripe accumulator.
    v2: DFF<Bits<32>>,
    /// Third stripe accumulator.
    v3: DFF<Bits<32>>,
    /// Fourth stripe accumulator.
    v4: DFF<Bits<32>>,
    /// The hash state after the stripes.
    h: DFF<Bits<32>>,
    /// The input not eaten yet, its next byte at bits 0..8 (a stripe eats 16 bytes at its end).
    inbuf: DFF<Bits<528>>,
    /// Input bytes not eaten yet.
    rem: DFF<Bits<7>>,
    /// The input's length.
    n: DFF<Bits<7>>,
    /// The multiplier's operand, issued the cycle before: `mqr` if `mq_rot`, else `mq` (a
    /// word of the input, `h ^ h >> 15` or `av2`). The rotated sum has a register of its own,
    /// so after the adder there is only the rotation's select; the choice between the two is
    /// one LUT in front of the multipliers.
    mq: DFF<Bits<32>>,
    /// The operand that is a rotated `sum` (a lane's, word's or byte's).
    mqr: DFF<Bits<32>>,
    /// The operand issued is `mqr` (else `mq`).
    mq_rot: DFF<Bit>,
    /// The multiplier's constant, issued with the operand.
    kq: DFF<Bits<32>>,
    /// The accumulator `sum` adds the product to this cycle (v1..v4 or h), chosen the cycle
    /// before: the adder's operands are registers.
    acc: DFF<Bits<32>>,
    /// `mqr` takes `sum` rotated this cycle, decided the cycle before: 0 = no, 1 = rotl 13
    /// (a lane), 2 = rotl 17 (a word), 3 = rotl 11 (a byte). After the adder, `mqr`'s input is
    /// one select of registered choices.
    rsel: DFF<Bits<2>>,
    /// `mq` takes `av2` this cycle (the avalanche's second multiply), decided the cycle before.
    avsel: DFF<Bit>,
    /// `rotl(v1, 1) + rotl(v2, 7) + len`, registered each cycle: the merge's first three
    /// terms (v1 and v2 are final before the drain's two cycles).
    mpart: DFF<Bits<32>>,
    /// `mq * kq mod 2^32`, its three products registered (`MulLo32`).
    mul: MulLo32,
    /// The product of the operand issued two cycles ago (`mul.y`).
    prod: Signal<Local, Bits<32>>,
    /// `acc + product` of a lane, word or byte: `acc + lo + (x1 << 16) + (x2 << 16)` of the
    /// multiplier's registered products, two carry-save layers (`cs1`/`cc1`, `cs2`/`cc2`: sum
    /// and carry words) and one adder, not `prod`'s two adders and a third.
    sum: Signal<Local, Bits<32>>,
    cs1: Signal<Local, Bits<32>>,
    cc1: Signal<Local, Bits<32>>,
    cs2: Signal<Local, Bits<32>>,
    cc2: Signal<Local, Bits<32>>,
    /// The cross products at their weight (`x1 << 16`, `x2 << 16`).
    px1: Signal<Local, Bits<32>>,
    px2: Signal<Local, Bits<32>>,
    /// The avalanche's second operand, from the first product.
    av2: Signal<Local, Bits<32>>,
    /// The operand issued: `mqr` or `mq`.
    opa: Signal<Local, Bits<32>>,
    c_p1: Spec<32, { P1 as u64 }>,
    c_p2: Spec<32, { P2 as u64 }>,
    c_p3: Spec<32, { P3 as u64 }>,
    c_p4: Spec<32, { P4 as u64 }>,
    c_p5: Spec<32, { P5 as u64 }>,
    c_seed: Spec<32, SEED>,
    c_v1: Spec<32, { SEED.wrapping_add(P1 as u64).wrapping_add(P2 as u64) & 0xFFFF_FFFF }>,
    c_v2: Spec<32, { SEED.wrapping_add(P2 as u64) & 0xFFFF_FFFF }>,
    c_v4: Spec<32, { SEED.wrapping_sub(P1 as u64) & 0xFFFF_FFFF }>,
    c_h0: Spec<32, { SEED.wrapping_add(P5 as u64) & 0xFFFF_FFFF }>,
}

impl Logic for Xxh32 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, ph, pend, hpend, v1, v2, v3, v4, h, inbuf, rem, n, mq, mqr, mq_rot,
            kq, acc, rsel, avsel, mpart
        );
        // The multiplier: registered operand -> registered products -> their sum.
        self.mul.clock.next = self.clock.val();
        self.opa.next = self.mq.q.val();
        if self.mq_rot.q.val() {
            self.opa.next = self.mqr.q.val();
        }
        self.mul.a.next = self.opa.val();
        self.mul.b.next = self.kq.q.val();
        self.prod.next = self.mul.y.val();
        self.px1.next = self.mul.x1.val() << 16;
        self.px2.next = self.mul.x2.val() << 16;
        self.cs1.next = self.acc.q.val() ^ self.mul.lo.val() ^ self.px1.val();
        self.cc1.next = ((self.acc.q.val() & self.mul.lo.val())
            | (self.acc.q.val() & self.px1.val())
            | (self.mul.lo.val() & self.px1.val()))
            << 1;
        self.cs2.next = self.cs1.val() ^ self.cc1.val() ^ self.px2.val();
        self.cc2.next = ((self.cs1.val() & self.cc1.val())
            | (self.cs1.val() & self.px2.val())
            | (self.cc1.val() & self.px2.val()))
            << 1;
        self.sum.next = self.cs2.val() + self.cc2.val();
        self.av2.next = self.prod.val() ^ (self.prod.val() >> 13);
        self.mpart.d.next = ((self.v1.q.val() << 1) | (self.v1.q.val() >> 31))
            + ((self.v2.q.val() << 7) | (self.v2.q.val() >> 25))
            + bit_cast::<32, 7>(self.n.q.val());
        // Next cycle's accumulator and `mq` choice (set below, for the cycle that uses them).
        self.acc.d.next = self.h.q.val();
        self.rsel.d.next = 0.into();
        self.avsel.d.next = false;
        self.busy.next = self.state.q.val() != XxhState::Idle;
        self.hash.next = self.h.q.val() ^ (self.h.q.val() >> 16);
        self.ph.d.next = self.ph.q.val() + 1;
        match self.state.q.val() {
            XxhState::Idle => {
                self.ph.d.next = 0.into();
                if self.start.val() {
                    self.inbuf.d.next = self.data.val();
                    self.n.d.next = self.len.val();
                    self.rem.d.next = self.len.val();
                    self.pend.d.next = false;
                    self.hpend.d.next = false;
                    self.v1.d.next = self.c_v1.val();
                    self.v2.d.next = self.c_v2.val();
                    self.v3.d.next = self.c_seed.val();
                    self.v4.d.next = self.c_v4.val();
                    self.h.d.next = self.c_h0.val() + bit_cast::<32, 7>(self.len.val());
                    if self.len.val() >= 16 {
                        self.state.d.next = XxhState::Stripe;
                    } else {
                        self.state.d.next = XxhState::Word;
                    }
                }
            }
            XxhState::Stripe => {
                // Cycle k issues one operand; the product of cycle k - 2's arrives.
                match self.ph.q.val().index() {
                    0 => {
                        self.mq.d.next = self.inbuf.q.val().get_bits::<32>(0);
                        self.mq_rot.d.next = false;
                        self.kq.d.next = self.c_p2.val();
                        if self.pend.q.val() {
                            self.v3.d.next = self.prod.val();
                        }
                    }
                    1 => {
                        self.mq.d.next = self.inbuf.q.val().get_bits::<32>(32);
                        self.mq_rot.d.next = false;
                        self.kq.d.next = self.c_p2.val();
                        if self.pend.q.val() {
                            self.v4.d.next = self.prod.val();
                        }
                        self.acc.d.next = self.v1.q.val();
                        self.rsel.d.next = 1.into();
                    }
                    2 => {
                        // mq = rotl(v1 + product, 13) (`rsel`).
                        self.kq.d.next = self.c_p1.val();
                        self.acc.d.next = self.v2.q.val();
                        self.rsel.d.next = 1.into();
                    }
                    3 => {
                        // mq = rotl(v2 + product, 13).
                        self.kq.d.next = self.c_p1.val();
                    }
                    4 => {
                        self.v1.d.next = self.prod.val();
                        self.mq.d.next = self.inbuf.q.val().get_bits::<32>(64);
                        self.mq_rot.d.next = false;
                        self.kq.d.next = self.c_p2.val();
                    }
                    5 => {
                        self.v2.d.next = self.prod.val();
                        self.mq.d.next = self.inbuf.q.val().get_bits::<32>(96);
                        self.mq_rot.d.next = false;
                        self.kq.d.next = self.c_p2.val();
                        self.acc.d.next = self.v3.q.val();
                        self.rsel.d.next = 1.into();
                    }
                    6 => {
                        // mq = rotl(v3 + product, 13).
                        self.kq.d.next = self.c_p1.val();
                        self.acc.d.next = self.v4.q.val();
                        self.rsel.d.next = 1.into();
                    }
                    _ => {
                        // mq = rotl(v4 + product, 13).
                        self.kq.d.next = self.c_p1.val();
                        self.inbuf.d.next = self.inbuf.q.val() >> 128;
                        self.rem.d.next = self.rem.q.val() - 16;
                        self.pend.d.next = true;
                        self.ph.d.next = 0.into();
                        if self.rem.q.val() < 32 {
                            self.state.d.next = XxhState::Drain;
                        }
                    }
                }
            }
            XxhState::Drain => {
                if self.ph.q.val() == 0 {
                    self.v3.d.next = self.prod.val();
                } else {
                    self.v4.d.next = self.prod.val();
                    self.pend.d.next = false;
                    self.state.d.next = XxhState::Merge;
                }
            }
            XxhState::Merge => {
                self.h.d.next = self.mpart.q.val()
                    + ((self.v3.q.val() << 12) | (self.v3.q.val() >> 20))
                    + ((self.v4.q.val() << 18) | (self.v4.q.val() >> 14));
                self.ph.d.next = 0.into();
                self.state.d.next = XxhState::Word;
            }
            XxhState::Word => {
                // 0: (h takes the last word's product) issue w * P3, or leave; 2: issue
                // rotl(h + product, 17) * P4.
                if self.ph.q.val() == 0 {
                    if self.hpend.q.val() {
                        self.h.d.next = self.prod.val();
                        self.hpend.d.next = false;
                    }
                    if self.rem.q.val() < 4 {
                        self.ph.d.next = 0.into();
                        self.state.d.next = XxhState::Byte;
                    } else {
                        self.mq.d.next = self.inbuf.q.val().get_bits::<32>(0);
                        self.mq_rot.d.next = false;
                        self.kq.d.next = self.c_p3.val();
                    }
                } else if self.ph.q.val() == 1 {
                    self.rsel.d.next = 2.into();
                } else if self.ph.q.val() == 2 {
                    // mq = rotl(h + product, 17) (`rsel`).
                    self.kq.d.next = self.c_p4.val();
                    self.inbuf.d.next = self.inbuf.q.val() >> 32;
                    self.rem.d.next = self.rem.q.val() - 4;
                } else if self.ph.q.val() == 3 {
                    self.hpend.d.next = true;
                    self.ph.d.next = 0.into();
                }
            }
            XxhState::Byte => {
                if self.ph.q.val() == 0 {
                    if self.hpend.q.val() {
                        self.h.d.next = self.prod.val();
                        self.hpend.d.next = false;
                    }
                    if self.rem.q.val() == 0 {
                        self.ph.d.next = 0.into();
                        self.state.d.next = XxhState::Aval;
                    } else {
                        self.mq.d.next = bit_cast::<32, 8>(self.inbuf.q.val().get_bits::<8>(0));
                        self.mq_rot.d.next = false;
                        self.kq.d.next = self.c_p5.val();
                    }
                } else if self.ph.q.val() == 1 {
                    self.rsel.d.next = 3.into();
                } else if self.ph.q.val() == 2 {
                    // mq = rotl(h + product, 11) (`rsel`).
                    self.kq.d.next = self.c_p1.val();
                    self.inbuf.d.next = self.inbuf.q.val() >> 8;
                    self.rem.d.next = self.rem.q.val() - 1;
                } else if self.ph.q.val() == 3 {
                    self.hpend.d.next = true;
                    self.ph.d.next = 0.into();
                }
            }
            XxhState::Aval => {
                if self.ph.q.val() == 0 {
                    self.mq.d.next = self.h.q.val() ^ (self.h.q.val() >> 15);
                    self.mq_rot.d.next = false;
                    self.kq.d.next = self.c_p2.val();
                } else if self.ph.q.val() == 1 {
                    self.avsel.d.next = true;
                } else if self.ph.q.val() == 2 {
                    // mq = av2 (`avsel`).
                    self.kq.d.next = self.c_p3.val();
                } else if self.ph.q.val() == 3 {
                    self.state.d.next = XxhState::Fin;
                }
            }
            XxhState::Fin => {
                self.h.d.next = self.prod.val();
                self.state.d.next = XxhState::Idle;
            }
        }
        // The operand after the adder: a rotated sum (`mqr`) or `av2` (`mq`), by the registered
        // choices; `mq_rot` says which register the multiplier takes.
        if self.avsel.q.val() {
            self.mq.d.next = self.av2.val();
            self.mq_rot.d.next = false;
        }
        match self.rsel.q.val().index() {
            0 => {}
            1 => {
                self.mqr.d.next = (self.sum.val() << 13) | (self.sum.val() >> 19);
                self.mq_rot.d.next = true;
            }
            2 => {
                self.mqr.d.next = (self.sum.val() << 17) | (self.sum.val() >> 15);
                self.mq_rot.d.next = true;
            }
            _ => {
                self.mqr.d.next = (self.sum.val() << 11) | (self.sum.val() >> 21);
                self.mq_rot.d.next = true;
            }
        }
        if self.reset.val() {
            self.state.d.next = XxhState::Idle;
            self.rsel.d.next = 0.into();
            self.avsel.d.next = false;
        }
    }
}

crate::impl_clocked!(Xxh32);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::util::bytes_to_bits;
    use clio_proto::kv::key_hash;

    /// Every key length 1..=64 with two owners, against `clio_proto::kv::key_hash`; the cycle
    /// count the doc comment states.
    #[test]
    fn bit_exact_with_key_hash_for_every_length() {
        let mut b = Bench::new(Xxh32::default());
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        for klen in 1..=MAX_KEY {
            for owner in [1u16, 0xBEEF] {
                let key: Vec<u8> = (0..klen)
                    .map(|i| (i * 37 + klen + owner as usize) as u8)
                    .collect();
                let mut input = owner.to_le_bytes().to_vec();
                input.extend_from_slice(&key);
                input.resize(HASH_BYTES, 0xA5); // bytes past the length are ignored
                b.uut.data.next = bytes_to_bits(&input);
                b.uut.len.next = ((klen + 2) as u64).to_bits();
                b.uut.start.next = true;
                b.tick();
                b.uut.start.next = false;
                let t0 = b.cycle;
                while b.uut.busy.val() {
                    b.tick();
                }
                let n = klen + 2;
                let stripes = if n >= 16 { 8 * (n / 16) + 3 } else { 0 };
                let want = stripes + 4 * (n % 16 / 4) + 4 * (n % 4) + 7;
                assert_eq!((b.cycle - t0) as usize, want, "cycles for {n} bytes");
                assert_eq!(
                    b.uut.hash.val().to_u64(),
                    key_hash(owner, &key),
                    "key of {klen} bytes, owner {owner:#x}"
                );
            }
        }
    }
}
