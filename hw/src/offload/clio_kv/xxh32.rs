//! Clio-KV's key hash in hardware: xxh32 of `owner as u16 LE ++ key` with seed
//! `clio_proto::kv::KEY_HASH_SEED` (`clio_proto::kv::key_hash`), over 3..=66 bytes, one
//! 32 x 32 multiply per cycle (three 16 x 16 products, the low 32 bits: one multiplier for
//! the whole hash instead of one per step, the hash unit's pattern).
//!
//! Steps, two cycles per 4-byte lane (`acc + w * P`, rotate, then `* P'`), from the input
//! register shifted down as it is eaten:
//!
//! ```text
//! start    : v1..v4 = seed + P1 + P2, seed + P2, seed, seed - P1; h = seed + P5 + len
//! stripes  : while 16 bytes remain, each of v1..v4: v = rotl(v + w * P2, 13) * P1   (8 cycles)
//! merge    : h = rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18) + len     (1 cycle)
//! words    : while 4 bytes remain: h = rotl(h + w * P3, 17) * P4                    (2 cycles)
//! bytes    : while a byte remains: h = rotl(h + b * P5, 11) * P1                    (2 cycles)
//! avalanche: h = (h ^ h >> 15) * P2; h = (h ^ h >> 13) * P3; out = h ^ h >> 16     (2 cycles)
//! ```
//!
//! Cycles from `start` to `busy` low: 8 per 16-byte stripe, 2 per remaining word and byte,
//! plus 5 (4 below 16 bytes; a 16-byte key, 18 bytes: 17 cycles; the longest, 66 bytes: 41).

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
    /// Accumulating 16-byte stripes in v1..v4.
    Stripe,
    /// Folding v1..v4 into h.
    Merge,
    /// Remaining 4-byte words.
    Word,
    /// Remaining bytes.
    Byte,
    /// The avalanche's two multiplies.
    Aval,
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
    /// First (0) or second (1) cycle of a lane's two.
    ph: DFF<Bit>,
    /// Lanes of the current stripe done.
    lane: DFF<Bits<2>>,
    /// Stripe accumulators; v1 is the one being updated (they rotate after each lane).
    v1: DFF<Bits<32>>,
    /// Second stripe accumulator.
    v2: DFF<Bits<32>>,
    /// Third stripe accumulator.
    v3: DFF<Bits<32>>,
    /// Fourth stripe accumulator.
    v4: DFF<Bits<32>>,
    /// The hash state after the stripes.
    h: DFF<Bits<32>>,
    /// The input not eaten yet, its next byte at bits 0..8.
    inbuf: DFF<Bits<528>>,
    /// Input bytes not eaten yet.
    rem: DFF<Bits<7>>,
    /// The input's length.
    n: DFF<Bits<7>>,
    /// The multiplier's operands and its product (low 32 bits).
    ma: Signal<Local, Bits<32>>,
    mb: Signal<Local, Bits<32>>,
    prod: Signal<Local, Bits<32>>,
    /// `acc + product` of a lane's first cycle.
    sum: Signal<Local, Bits<32>>,
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
        dff_setup!(self, clock, state, ph, lane, v1, v2, v3, v4, h, inbuf, rem, n);
        // The multiplier's operands for this step (first), then its product.
        self.ma.next = 0.into();
        self.mb.next = 0.into();
        match self.state.q.val() {
            XxhState::Stripe => {
                if self.ph.q.val() {
                    self.ma.next = self.v1.q.val();
                    self.mb.next = self.c_p1.val();
                } else {
                    self.ma.next = self.inbuf.q.val().get_bits::<32>(0);
                    self.mb.next = self.c_p2.val();
                }
            }
            XxhState::Word => {
                if self.ph.q.val() {
                    self.ma.next = self.h.q.val();
                    self.mb.next = self.c_p4.val();
                } else {
                    self.ma.next = self.inbuf.q.val().get_bits::<32>(0);
                    self.mb.next = self.c_p3.val();
                }
            }
            XxhState::Byte => {
                if self.ph.q.val() {
                    self.ma.next = self.h.q.val();
                    self.mb.next = self.c_p1.val();
                } else {
                    self.ma.next = bit_cast::<32, 8>(self.inbuf.q.val().get_bits::<8>(0));
                    self.mb.next = self.c_p5.val();
                }
            }
            XxhState::Aval => {
                if self.ph.q.val() {
                    self.ma.next = self.h.q.val() ^ (self.h.q.val() >> 13);
                    self.mb.next = self.c_p3.val();
                } else {
                    self.ma.next = self.h.q.val() ^ (self.h.q.val() >> 15);
                    self.mb.next = self.c_p2.val();
                }
            }
            _ => {}
        }
        self.prod.next = self.ma.val().get_bits::<16>(0) * self.mb.val().get_bits::<16>(0)
            + ((self.ma.val().get_bits::<16>(0) * self.mb.val().get_bits::<16>(16)) << 16)
            + ((self.ma.val().get_bits::<16>(16) * self.mb.val().get_bits::<16>(0)) << 16);
        self.sum.next = self.prod.val();
        self.busy.next = self.state.q.val() != XxhState::Idle;
        self.hash.next = self.h.q.val() ^ (self.h.q.val() >> 16);
        match self.state.q.val() {
            XxhState::Idle => {
                if self.start.val() {
                    self.inbuf.d.next = self.data.val();
                    self.n.d.next = self.len.val();
                    self.rem.d.next = self.len.val();
                    self.ph.d.next = false;
                    self.lane.d.next = 0.into();
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
                if self.ph.q.val() {
                    // The lanes rotate: v1 is always the one to update.
                    self.v1.d.next = self.v2.q.val();
                    self.v2.d.next = self.v3.q.val();
                    self.v3.d.next = self.v4.q.val();
                    self.v4.d.next = self.prod.val();
                    self.ph.d.next = false;
                    self.lane.d.next = self.lane.q.val() + 1;
                    if (self.lane.q.val() == 3) & (self.rem.q.val() < 16) {
                        self.state.d.next = XxhState::Merge;
                    }
                } else {
                    self.sum.next = self.v1.q.val() + self.prod.val();
                    self.v1.d.next = (self.sum.val() << 13) | (self.sum.val() >> 19);
                    self.inbuf.d.next = self.inbuf.q.val() >> 32;
                    self.rem.d.next = self.rem.q.val() - 4;
                    self.ph.d.next = true;
                }
            }
            XxhState::Merge => {
                self.h.d.next = ((self.v1.q.val() << 1) | (self.v1.q.val() >> 31))
                    + ((self.v2.q.val() << 7) | (self.v2.q.val() >> 25))
                    + ((self.v3.q.val() << 12) | (self.v3.q.val() >> 20))
                    + ((self.v4.q.val() << 18) | (self.v4.q.val() >> 14))
                    + bit_cast::<32, 7>(self.n.q.val());
                self.state.d.next = XxhState::Word;
            }
            XxhState::Word => {
                if self.ph.q.val() {
                    self.h.d.next = self.prod.val();
                    self.ph.d.next = false;
                } else if self.rem.q.val() < 4 {
                    self.state.d.next = XxhState::Byte;
                } else {
                    self.sum.next = self.h.q.val() + self.prod.val();
                    self.h.d.next = (self.sum.val() << 17) | (self.sum.val() >> 15);
                    self.inbuf.d.next = self.inbuf.q.val() >> 32;
                    self.rem.d.next = self.rem.q.val() - 4;
                    self.ph.d.next = true;
                }
            }
            XxhState::Byte => {
                if self.ph.q.val() {
                    self.h.d.next = self.prod.val();
                    self.ph.d.next = false;
                } else if self.rem.q.val() == 0 {
                    self.state.d.next = XxhState::Aval;
                } else {
                    self.sum.next = self.h.q.val() + self.prod.val();
                    self.h.d.next = (self.sum.val() << 11) | (self.sum.val() >> 21);
                    self.inbuf.d.next = self.inbuf.q.val() >> 8;
                    self.rem.d.next = self.rem.q.val() - 1;
                    self.ph.d.next = true;
                }
            }
            XxhState::Aval => {
                self.h.d.next = self.prod.val();
                self.ph.d.next = !self.ph.q.val();
                if self.ph.q.val() {
                    self.state.d.next = XxhState::Idle;
                }
            }
        }
        if self.reset.val() {
            self.state.d.next = XxhState::Idle;
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
                let want = 8 * (n / 16) + 2 * (n % 16 / 4) + 2 * (n % 4) + 5 - usize::from(n < 16);
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
