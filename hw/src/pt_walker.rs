//! The page-table walker: hash `(pid, vpn)`, read the whole bucket in one AXI burst, compare tags.
//!
//! ```text
//! req --> HashUnit (HASH_LATENCY cycles) --> bucket = hash & bucket_mask, addr = pt_base + bucket * 256
//!     --> AR register (the oldest address, the next cycle) or AR queue (younger ones)
//!     --> AXI AR (len 3: 4 beats of 512 bits = 16 slots of 16 bytes)
//!     --> context queue (waits for the data, in order) --> tag compare on every R beat
//!     --> outcome on the last beat + 1 cycle
//! ```
//!
//! Each beat holds slots `4k..4k+4`; a slot matches when USED is set and word0 bits 0..52
//! equal `pid << 36 | vpn` (the PTE's vpn and pid fields, exactly the TLB key). The lowest
//! matching slot wins (as `proto::pte::bucket_lookup`). Outcomes ([`outcome`]): HIT (valid,
//! permitted), FAULT (allocated but not valid, permitted: the page-fault unit maps it),
//! PERMISSION, UNMAPPED. A read needs READ, a write needs WRITE.
//!
//! A request may come hashed already (`req_hashed`, with `req_hash` = `proto::pt_hash`: the
//! TLB look-ahead hashes every frame's page as its header arrives): it skips the hash unit
//! and enters the queues in its own cycle. Such a request must not overtake one still in the
//! hash unit (the queues keep their order): the translate stage walks one page at a time.
//!
//! Throughput: one walk per 4 cycles on the DRAM read port (one burst each); the hash stage
//! accepts one request per cycle. The queues hold [`WALKER_DEPTH`] walks in flight;
//! `busy` tells the producer (the top) to stop issuing misses before they would overflow.

use crate::hash_unit::HashUnit;
use crate::spec::Spec;
use clio_proto::consts::{BEAT_BYTES, BUCKET_BYTES, PTE_BYTES, VPN_BITS};
use clio_proto::pte::{PID_SHIFT, READ_SHIFT, USED_SHIFT, VALID_SHIFT, WRITE_SHIFT};
use rust_hdl::prelude::*;

// Bucket geometry: `bucket << 8` bytes, four 128-bit slots per 512-bit beat (`128 * j`,
// slot `beat << 2 | j`), AR length BUCKET_BYTES / BEAT_BYTES - 1.
const _: () = assert!(BUCKET_BYTES == 1 << 8 && PTE_BYTES == 16 && BEAT_BYTES == 4 * PTE_BYTES);
// Tag compare and outcome on word0: the key `pid << 36 | vpn` is bits 0..52, USED @56,
// VALID @57, READ @58, WRITE @59.
const _: () = assert!(
    VPN_BITS == 36
        && PID_SHIFT == 36
        && USED_SHIFT == 56
        && VALID_SHIFT == 57
        && READ_SHIFT == 58
        && WRITE_SHIFT == 59
);

/// Walks in flight (AR queue and context queue depth; `busy` rises at 15).
pub const WALKER_DEPTH: usize = 16;
/// Cycles from a request to its AR (hash pipeline + queue).
pub const WALKER_AR_LATENCY: usize = crate::hash_unit::HASH_LATENCY + 1;

/// Walk outcomes (the `out_outcome` encoding).
pub mod outcome {
    /// A valid PTE with the needed permission.
    pub const HIT: u8 = 0;
    /// Allocated but never touched: take a page fault.
    pub const FAULT: u8 = 1;
    /// The PTE denies this access.
    pub const PERMISSION: u8 = 2;
    /// No PTE for `(pid, vpn)`.
    pub const UNMAPPED: u8 = 3;
}

type WalkFifo<D> = SynchronousFIFO<D, 4, 5, 1>;

/// The walker.
#[derive(LogicBlock, Default)]
pub struct PtWalker {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Physical address of bucket 0 (`MemoryLayout::pt_base`).
    pub pt_base: Signal<In, Bits<40>>,
    /// `bucket_count - 1`.
    pub bucket_mask: Signal<In, Bits<32>>,
    /// A walk request enters.
    pub req_valid: Signal<In, Bit>,
    /// Process id.
    pub req_pid: Signal<In, Bits<16>>,
    /// Virtual page number.
    pub req_vpn: Signal<In, Bits<36>>,
    /// The access is a write (else a read).
    pub req_write: Signal<In, Bit>,
    /// TLB generation of the lookup that missed (returned with the result).
    pub req_gen: Signal<In, Bits<16>>,
    /// Caller's tag (returned with the result).
    pub req_tag: Signal<In, Bits<7>>,
    /// The request comes with its hash (`req_hash`, `proto::pt_hash(pid, vpn)`): no hash
    /// unit, into the queues now (only when no earlier request is in the hash unit).
    pub req_hashed: Signal<In, Bit>,
    /// The request's hash (`proto::pt_hash(pid, vpn)`), read with `req_hashed`.
    pub req_hash: Signal<In, Bits<32>>,
    /// Too many walks in flight: do not issue more.
    pub busy: Signal<Out, Bit>,
    /// AXI AR valid.
    pub ar_valid: Signal<Out, Bit>,
    /// AXI AR address (bytes).
    pub ar_addr: Signal<Out, Bits<40>>,
    /// AXI AR burst length minus one (always 3).
    pub ar_len: Signal<Out, Bits<8>>,
    /// AXI AR ready.
    pub ar_ready: Signal<In, Bit>,
    /// AXI R valid.
    pub r_valid: Signal<In, Bit>,
    /// AXI R data (one 512-bit beat, byte k at bits 8k..8k+8).
    pub r_data: Signal<In, Bits<512>>,
    /// AXI R last.
    pub r_last: Signal<In, Bit>,
    /// AXI R ready (always 1: the walker never stalls data).
    pub r_ready: Signal<Out, Bit>,
    /// A walk completes.
    pub out_valid: Signal<Out, Bit>,
    /// One of [`outcome`].
    pub out_outcome: Signal<Out, Bits<2>>,
    /// Process id.
    pub out_pid: Signal<Out, Bits<16>>,
    /// Virtual page number.
    pub out_vpn: Signal<Out, Bits<36>>,
    /// The access was a write.
    pub out_write: Signal<Out, Bit>,
    /// The TLB generation given with the request.
    pub out_gen: Signal<Out, Bits<16>>,
    /// The caller's tag.
    pub out_tag: Signal<Out, Bits<7>>,
    /// Bucket index.
    pub out_bucket: Signal<Out, Bits<32>>,
    /// Slot of the PTE in the bucket (when found).
    pub out_slot: Signal<Out, Bits<4>>,
    /// PTE frame number (when found).
    pub out_pfn: Signal<Out, Bits<40>>,
    /// PTE permissions `READ | WRITE << 1` (when found).
    pub out_perms: Signal<Out, Bits<2>>,
    hash: HashUnit,
    ar_q: WalkFifo<Bits<40>>,
    /// The oldest bucket address, out on AR the cycle after it is known when the AR queue is
    /// empty (the queue takes two): the queue holds only younger ones.
    ar_next_valid: DFF<Bit>,
    ar_next: DFF<Bits<40>>,
    /// Addresses in the AR queue (its `empty` flag lags a write by a cycle or more).
    ar_held: DFF<Bits<5>>,
    /// The bucket address that enters this cycle.
    q_addr: Signal<Local, Bits<40>>,
    /// It goes to `ar_next` (nothing older waits), not to the queue.
    to_next: Signal<Local, Bit>,
    ctx_q: WalkFifo<Bits<108>>,
    beat: DFF<Bits<2>>,
    inflight: DFF<Bits<5>>,
    acc_found: DFF<Bit>,
    acc_slot: DFF<Bits<4>>,
    acc_w0: DFF<Bits<64>>,
    acc_w1: DFF<Bits<64>>,
    /// The outcome of the match kept from an earlier beat of the walk (`acc_found`).
    acc_oc: DFF<Bits<2>>,
    o_valid: DFF<Bit>,
    o_outcome: DFF<Bits<2>>,
    o_ctx: DFF<Bits<108>>,
    o_slot: DFF<Bits<4>>,
    o_w0: DFF<Bits<64>>,
    o_w1: DFF<Bits<64>>,
    bucket: Signal<Local, Bits<32>>,
    /// What enters the queues this cycle: the hash unit's result, or a hashed request.
    q_write: Signal<Local, Bit>,
    q_hash: Signal<Local, Bits<32>>,
    q_pid: Signal<Local, Bits<16>>,
    q_vpn: Signal<Local, Bits<36>>,
    q_ctx: Signal<Local, Bits<24>>,
    key: Signal<Local, Bits<52>>,
    m: [Signal<Local, Bit>; 4],
    now_found: Signal<Local, Bit>,
    now_slot: Signal<Local, Bits<2>>,
    now_w0: Signal<Local, Bits<64>>,
    now_w1: Signal<Local, Bits<64>>,
    f_found: Signal<Local, Bit>,
    f_slot: Signal<Local, Bits<4>>,
    f_w0: Signal<Local, Bits<64>>,
    f_w1: Signal<Local, Bits<64>>,
    /// The walk at the queue head asks for write permission (else read).
    o_write: Signal<Local, Bit>,
    /// Per slot of the beat: the walk's outcome if that slot is its match (permission from
    /// the slot's word 0 bits 58/59 against `o_write`, then bit 57 VALID), decided beside
    /// the tag compare, so only the match's select is in front of `o_outcome` (not the
    /// outcome computed after the select of the matching word).
    oc_s: [Signal<Local, Bits<2>>; 4],
    /// The outcome of this beat's first match, and of the walk's first match so far.
    now_oc: Signal<Local, Bits<2>>,
    f_oc: Signal<Local, Bits<2>>,
    oc_hit: Spec<2, { outcome::HIT as u64 }>,
    oc_fault: Spec<2, { outcome::FAULT as u64 }>,
    oc_permission: Spec<2, { outcome::PERMISSION as u64 }>,
    oc_unmapped: Spec<2, { outcome::UNMAPPED as u64 }>,
    /// AXI length of one bucket burst (beats - 1).
    bucket_len: Spec<8, { (BUCKET_BYTES / BEAT_BYTES - 1) as u64 }>,
    /// `busy` rises with this many walks in flight.
    busy_at: Spec<5, { (WALKER_DEPTH - 1) as u64 }>,
}

impl Logic for PtWalker {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ar_next_valid,
            ar_next,
            ar_held,
            beat,
            inflight,
            acc_found,
            acc_slot,
            acc_w0,
            acc_oc,
            acc_w1,
            o_valid,
            o_outcome,
            o_ctx,
            o_slot,
            o_w0,
            o_w1
        );
        clock!(self, clock, hash, ar_q, ctx_q);
        self.hash.reset.next = self.reset.val();
        // Hash; the context rides along: gen(16) | write(1) | tag(7).
        self.hash.in_valid.next = self.req_valid.val() & !self.req_hashed.val();
        self.hash.in_pid.next = self.req_pid.val();
        self.hash.in_vpn.next = self.req_vpn.val();
        self.hash.in_ctx.next = (bit_cast::<24, 16>(self.req_gen.val()) << 8)
            | (bit_cast::<24, 1>(self.req_write.val().into()) << 7)
            | bit_cast::<24, 7>(self.req_tag.val());
        // Into the queues: the hash unit's result, or a request hashed already.
        self.q_write.next = self.hash.out_valid.val();
        self.q_hash.next = self.hash.out_hash.val();
        self.q_pid.next = self.hash.out_pid.val();
        self.q_vpn.next = self.hash.out_vpn.val();
        self.q_ctx.next = self.hash.out_ctx.val();
        if self.req_valid.val() & self.req_hashed.val() {
            self.q_write.next = true;
            self.q_hash.next = self.req_hash.val();
            self.q_pid.next = self.req_pid.val();
            self.q_vpn.next = self.req_vpn.val();
            self.q_ctx.next = self.hash.in_ctx.val();
        }
        self.bucket.next = self.q_hash.val() & self.bucket_mask.val();
        // Bucket address and walk context into the queues.
        self.q_addr.next = self.pt_base.val() + (bit_cast::<40, 32>(self.bucket.val()) << 8);
        self.to_next.next =
            self.q_write.val() & (self.ar_held.q.val() == 0) & !self.ar_next_valid.q.val();
        self.ar_q.write.next = self.q_write.val() & !self.to_next.val();
        self.ar_q.data_in.next = self.q_addr.val();
        if self.to_next.val() {
            self.ar_next_valid.d.next = true;
            self.ar_next.d.next = self.q_addr.val();
        }
        self.ctx_q.write.next = self.q_write.val();
        // ctx: bucket(32) << 76 | tag(7) << 69 | gen(16) << 53 | write << 52 | pid << 36 | vpn
        self.ctx_q.data_in.next = (bit_cast::<108, 32>(self.bucket.val()) << 76)
            | (bit_cast::<108, 7>(self.q_ctx.val().get_bits::<7>(0)) << 69)
            | (bit_cast::<108, 16>(self.q_ctx.val().get_bits::<16>(8)) << 53)
            | (bit_cast::<108, 1>(self.q_ctx.val().get_bits::<1>(7)) << 52)
            | (bit_cast::<108, 16>(self.q_pid.val()) << 36)
            | bit_cast::<108, 36>(self.q_vpn.val());
        // Walks in flight, counted from the request (the hash pipeline holds some too).
        self.inflight.d.next = self.inflight.q.val()
            + bit_cast::<5, 1>(self.req_valid.val().into())
            - bit_cast::<5, 1>((self.r_valid.val() & self.r_last.val()).into());
        self.busy.next = self.inflight.q.val() >= self.busy_at.val();
        // AR: `ar_next` first (the oldest), then the queue.
        self.ar_valid.next = self.ar_next_valid.q.val() | !self.ar_q.empty.val();
        self.ar_addr.next = self.ar_q.data_out.val();
        if self.ar_next_valid.q.val() {
            self.ar_addr.next = self.ar_next.q.val();
            if self.ar_ready.val() {
                self.ar_next_valid.d.next = false;
            }
        }
        self.ar_len.next = self.bucket_len.val();
        self.ar_q.read.next =
            !self.ar_next_valid.q.val() & !self.ar_q.empty.val() & self.ar_ready.val();
        self.ar_held.d.next = self.ar_held.q.val() + bit_cast::<5, 1>(self.ar_q.write.val().into())
            - bit_cast::<5, 1>(self.ar_q.read.val().into());
        self.r_ready.next = true;
        // Tag compare of the four slots of this beat against the walk at the queue head.
        self.key.next = self.ctx_q.data_out.val().get_bits::<52>(0);
        self.o_write.next = self.ctx_q.data_out.val().get_bit(52);
        for j in 0..4 {
            self.m[j].next = self.r_data.val().get_bit(128 * j + 56)
                & (self.r_data.val().get_bits::<52>(128 * j) == self.key.val());
            // Outcome if this slot matches: word0 bit 57 VALID, 58 READ, 59 WRITE.
            self.oc_s[j].next = self.oc_hit.val();
            if (self.o_write.val() & !self.r_data.val().get_bit(128 * j + 59))
                | (!self.o_write.val() & !self.r_data.val().get_bit(128 * j + 58))
            {
                self.oc_s[j].next = self.oc_permission.val();
            } else if !self.r_data.val().get_bit(128 * j + 57) {
                self.oc_s[j].next = self.oc_fault.val();
            }
        }
        self.now_found.next = self.m[0].val() | self.m[1].val() | self.m[2].val() | self.m[3].val();
        if self.m[0].val() {
            self.now_slot.next = 0.into();
            self.now_oc.next = self.oc_s[0].val();
            self.now_w0.next = self.r_data.val().get_bits::<64>(0);
            self.now_w1.next = self.r_data.val().get_bits::<64>(64);
        } else if self.m[1].val() {
            self.now_slot.next = 1.into();
            self.now_oc.next = self.oc_s[1].val();
            self.now_w0.next = self.r_data.val().get_bits::<64>(128);
            self.now_w1.next = self.r_data.val().get_bits::<64>(192);
        } else if self.m[2].val() {
            self.now_slot.next = 2.into();
            self.now_oc.next = self.oc_s[2].val();
            self.now_w0.next = self.r_data.val().get_bits::<64>(256);
            self.now_w1.next = self.r_data.val().get_bits::<64>(320);
        } else {
            self.now_slot.next = 3.into();
            self.now_oc.next = self.oc_s[3].val();
            self.now_w0.next = self.r_data.val().get_bits::<64>(384);
            self.now_w1.next = self.r_data.val().get_bits::<64>(448);
        }
        // Earlier beats win (lower slots).
        if self.acc_found.q.val() & (self.beat.q.val() != 0) {
            self.f_found.next = true;
            self.f_slot.next = self.acc_slot.q.val();
            self.f_w0.next = self.acc_w0.q.val();
            self.f_oc.next = self.acc_oc.q.val();
            self.f_w1.next = self.acc_w1.q.val();
        } else {
            self.f_found.next = self.now_found.val();
            self.f_slot.next =
                (bit_cast::<4, 2>(self.beat.q.val()) << 2) | bit_cast::<4, 2>(self.now_slot.val());
            self.f_w0.next = self.now_w0.val();
            self.f_oc.next = self.now_oc.val();
            self.f_w1.next = self.now_w1.val();
        }
        self.o_valid.d.next = false;
        self.ctx_q.read.next = false;
        if self.r_valid.val() {
            self.beat.d.next = self.beat.q.val() + 1;
            self.acc_found.d.next = self.f_found.val();
            self.acc_slot.d.next = self.f_slot.val();
            self.acc_w0.d.next = self.f_w0.val();
            self.acc_oc.d.next = self.f_oc.val();
            self.acc_w1.d.next = self.f_w1.val();
            if self.r_last.val() {
                self.beat.d.next = 0.into();
                self.ctx_q.read.next = true;
                self.o_valid.d.next = true;
                self.o_ctx.d.next = self.ctx_q.data_out.val();
                self.o_slot.d.next = self.f_slot.val();
                self.o_w0.d.next = self.f_w0.val();
                self.o_w1.d.next = self.f_w1.val();
                // Outcome: the match's (`f_oc`), or no match.
                self.o_outcome.d.next = self.f_oc.val();
                if !self.f_found.val() {
                    self.o_outcome.d.next = self.oc_unmapped.val();
                }
            }
        }
        if self.reset.val() {
            self.ar_next_valid.d.next = false;
            self.ar_held.d.next = 0.into();
            self.o_valid.d.next = false;
            self.beat.d.next = 0.into();
            self.inflight.d.next = 0.into();
        }
        self.out_valid.next = self.o_valid.q.val();
        self.out_outcome.next = self.o_outcome.q.val();
        self.out_vpn.next = self.o_ctx.q.val().get_bits::<36>(0);
        self.out_pid.next = self.o_ctx.q.val().get_bits::<16>(36);
        self.out_write.next = self.o_ctx.q.val().get_bit(52);
        self.out_gen.next = self.o_ctx.q.val().get_bits::<16>(53);
        self.out_tag.next = self.o_ctx.q.val().get_bits::<7>(69);
        self.out_bucket.next = self.o_ctx.q.val().get_bits::<32>(76);
        self.out_slot.next = self.o_slot.q.val();
        self.out_pfn.next = self.o_w1.q.val().get_bits::<40>(0);
        self.out_perms.next = (bit_cast::<2, 1>(self.o_w0.q.val().get_bits::<1>(59)) << 1)
            | bit_cast::<2, 1>(self.o_w0.q.val().get_bits::<1>(58));
    }
}

crate::impl_clocked!(PtWalker);

/// A DRAM model for the testbenches: serves AXI read bursts in order after a fixed latency,
/// one beat per cycle, from a sparse byte image.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::hash_unit::HASH_LATENCY;
    use crate::tb::{AxiDram, Memory, SparseMemory};
    use crate::util::bytes_to_bits;
    use clio_proto::consts::BUCKET_BYTES;
    use clio_proto::pt_hash::bucket_index;
    use clio_proto::pte::{bucket_lookup, BucketLookup, Pte, PERM_READ, PERM_WRITE};
    use std::collections::VecDeque;

    const BUCKET_BITS: u32 = 3;
    const PT_BASE: u64 = 0x10_0000;

    /// The outcome `proto` implies for an access.
    fn expected(
        dram: &SparseMemory,
        pid: u16,
        vpn: u64,
        write: bool,
    ) -> (u8, Option<(usize, Pte)>) {
        let bucket = bucket_index(pid, vpn, BUCKET_BITS);
        let img: [u8; BUCKET_BYTES] = dram
            .bytes(PT_BASE + bucket * BUCKET_BYTES as u64, BUCKET_BYTES)
            .try_into()
            .unwrap();
        match bucket_lookup(&img, pid, vpn) {
            BucketLookup::Missing => (outcome::UNMAPPED, None),
            BucketLookup::Found(i, p) => {
                let need = if write { PERM_WRITE } else { PERM_READ };
                let o = if p.perms & need == 0 {
                    outcome::PERMISSION
                } else if !p.valid {
                    outcome::FAULT
                } else {
                    outcome::HIT
                };
                (o, Some((i, p)))
            }
        }
    }

    /// Walks issued back to back over a crowded 8-bucket table: every outcome class, the
    /// lowest-slot rule, context return and in-order completion are checked against
    /// `proto::pte::bucket_lookup`.
    #[test]
    fn walks_match_bucket_lookup() {
        walks(false);
    }

    /// The same with a third of the requests hashed already (`req_hashed`, `proto::pt_hash`),
    /// each when no earlier request is in the hash unit.
    #[test]
    fn hashed_walks_match_bucket_lookup() {
        walks(true);
    }

    fn walks(with_hashed: bool) {
        let mut dram = SparseMemory::default();
        let mut rng = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = move || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        // Fill buckets with PTEs of pid 1..3, vpn 0..40 (some slots stay empty).
        let mut fill = [0usize; 8];
        let mut placed = vec![];
        for pid in 1..=3u16 {
            for vpn in 0..40u64 {
                let r = rnd();
                if r % 4 == 0 {
                    continue; // unmapped
                }
                let bucket = bucket_index(pid, vpn, BUCKET_BITS) as usize;
                if fill[bucket] == 16 {
                    continue;
                }
                let mut p = Pte::allocated(pid, vpn, (r >> 8) as u8 & 3);
                if r >> 12 & 1 == 1 {
                    p.valid = true;
                    p.pfn = (r >> 20) & 0xFF_FFFF_FFFF;
                }
                dram.write(
                    PT_BASE + (bucket * BUCKET_BYTES + fill[bucket] * 16) as u64,
                    &p.to_bytes(),
                );
                fill[bucket] += 1;
                placed.push((pid, vpn));
            }
        }
        // A duplicate of an existing key in a higher slot must lose to the first one.
        let (dp, dv) = placed[3];
        let db = bucket_index(dp, dv, BUCKET_BITS) as usize;
        if fill[db] < 16 {
            let p = Pte {
                used: true,
                valid: true,
                perms: 3,
                pid: dp,
                vpn: dv,
                pfn: 0xDEAD,
            };
            dram.write(
                PT_BASE + (db * BUCKET_BYTES + fill[db] * 16) as u64,
                &p.to_bytes(),
            );
        }
        let mut dram = AxiDram::new(dram, 7, 0);
        let mut b = Bench::new(PtWalker::default());
        b.uut.pt_base.next = PT_BASE.to_bits();
        b.uut.bucket_mask.next = ((1u32 << BUCKET_BITS) - 1).to_bits();
        b.uut.ar_ready.next = true;
        let mut issued: VecDeque<(u16, u64, bool, u8)> = VecDeque::new();
        let mut seen = [0usize; 4];
        let total = 120;
        let mut sent = 0;
        let mut hashed_sent = 0;
        let mut last_unhashed: Option<u64> = None;
        for cyc in 0..4000u64 {
            b.settle();
            let want = sent < total && !b.uut.busy.val() && rnd() % 3 != 0;
            let (pid, vpn, write) = (((rnd() % 4) as u16), rnd() % 44, rnd() & 1 == 1);
            // Hashed only when no earlier request is still in the hash unit; with hashed
            // requests, unhashed ones only every other 32 cycles (so the hash unit empties).
            let pipe_empty = last_unhashed.is_none_or(|c| c + (HASH_LATENCY as u64) < cyc);
            let hashed = with_hashed && want && pipe_empty && rnd() % 2 == 0;
            let issue = want && (hashed || !with_hashed || (cyc / 32) % 2 == 0);
            b.uut.req_hashed.next = hashed;
            b.uut.req_hash.next = clio_proto::pt_hash::pt_hash(pid, vpn).to_bits();
            if issue && !hashed {
                last_unhashed = Some(cyc);
            }
            hashed_sent += hashed as u32;
            b.uut.req_valid.next = issue;
            b.uut.req_pid.next = pid.to_bits();
            b.uut.req_vpn.next = vpn.to_bits();
            b.uut.req_write.next = write;
            b.uut.req_tag.next = ((sent % 128) as u64).to_bits();
            b.uut.req_gen.next = ((sent * 7) as u16).to_bits();
            if issue {
                issued.push_back((pid, vpn, write, (sent % 128) as u8));
                sent += 1;
            }
            let r = dram.drive(cyc);
            b.uut.r_valid.next = r.r_valid;
            b.uut.r_data.next = bytes_to_bits(dram.r_data());
            b.uut.r_last.next = r.r_last;
            b.settle();
            if b.uut.r_ready.val() {
                dram.r_ready();
            }
            if b.uut.ar_valid.val() {
                dram.ar(
                    cyc,
                    b.uut.ar_addr.val().to_u64(),
                    b.uut.ar_len.val().to_u8(),
                );
            }
            if b.uut.out_valid.val() {
                let (pid, vpn, write, tag) = issued.pop_front().expect("result without request");
                let (o, found) = expected(dram.mem(), pid, vpn, write);
                assert_eq!(
                    b.uut.out_outcome.val().to_u8(),
                    o,
                    "pid {pid} vpn {vpn} write {write}"
                );
                assert_eq!(b.uut.out_pid.val().to_u16(), pid);
                assert_eq!(b.uut.out_vpn.val().to_u64(), vpn);
                assert_eq!(b.uut.out_write.val(), write);
                assert_eq!(b.uut.out_tag.val().to_u8(), tag);
                assert_eq!(
                    b.uut.out_bucket.val().to_u64(),
                    bucket_index(pid, vpn, BUCKET_BITS)
                );
                if let Some((slot, p)) = found {
                    assert_eq!(b.uut.out_slot.val().index(), slot);
                    assert_eq!(b.uut.out_pfn.val().to_u64(), p.pfn);
                    assert_eq!(b.uut.out_perms.val().to_u8(), p.perms);
                }
                seen[o as usize] += 1;
            }
            b.tick();
            if sent == total && issued.is_empty() {
                break;
            }
        }
        assert!(issued.is_empty(), "walks lost");
        assert!(
            !with_hashed || hashed_sent > 15,
            "hashed requests: {hashed_sent}"
        );
        assert!(
            seen.iter().all(|&n| n > 3),
            "every outcome class exercised: {seen:?}"
        );
    }
}
