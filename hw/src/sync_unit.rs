//! The sync unit: the atomic ALU and the idempotence ring of non-idempotent results.
//!
//! The ring ([`RING_ENTRIES`] = `proto::consts::IDEMPOTENCE_RING_ENTRIES`) remembers
//! `(pid, client, req_id) -> result` of the last executed requests that use it (TAS, Unlock,
//! CAS, FAA: `proto::Opcode::uses_idempotence_ring`), exactly as
//! `clio_model::sync_unit::SyncUnit`: a retry finds its entry (acknowledged or not) and is
//! answered from it; an entry is freed by its member's CN_ACK (`arg0` = req_id) or by the slow
//! path's RING_RELEASE for the member (every entry of that `(pid, client)`), but stays until
//! the write pointer overwrites it. A RING_RELEASE with client `RING_PURGE_ALL` (the RAS is
//! torn down, its key already removed) forgets every entry of the pid at once, so the next
//! owner of the pid is never answered from them: the pid's match vector is registered in the
//! release's cycle (`purge_m`) and cleared from `used` and `busy` at the edge after, so the
//! purge adds no logic to the lookup, ack or record paths. When the slot at the write pointer is still
//! unacknowledged the request gets RETRY_LATER and the write pointer moves past that slot
//! (`port.skip`), so the next attempt takes the next slot: a dead member's slot costs others
//! one short retry per pass of the ring, never a stall.
//!
//! Keys (`{pid, client, req_id}`, 64 bits) live in flip-flops (a 64-way CAM, one compare
//! port shared by lookup, ack and release), the answers in a 64 x 72 LUTRAM ([`AsyncRam`]):
//! the value and the status. A lookup's match vector and the first level of its slot's index
//! are registered (`o_m`, `o_part`: per index bit, six ORs of at most six match bits) and the
//! answer read the next cycle at the index those give (one OR of six each), so one LUT and the
//! RAM read are the logic between a register and `status`/`value`, and the CAM compare is
//! followed by one LUT level in the lookup's cycle.
//!
//! **Shares** (`clio_model::sync_unit`'s module doc: the rule). The share (`ctl.share_set` /
//! `ctl.share`, the slow path's RING_SHARE; 0 after reset: no limit) is held in `share`. A
//! lookup registers, beside its match vector, the member's entries (`o_own`, the member match
//! that ack and release use) and their count in eight groups of eight slots (`grp`, four bits
//! each: the CAM compare, then an eight-input sum). The cycle after (c+1) the eight counts are
//! summed (`total_q`) and the member's acknowledged entries registered, all (`cand_q`) and
//! those at or after the write pointer (`hi_q`). At c+2 the sum is compared with the share
//! (`at_share`, registered too) and the verdicts registered: `full` (below its share, the slot
//! at the write pointer is unacknowledged) and `quota` (at its share, none of its entries
//! acknowledged); meanwhile the first of `hi_q`, else of `cand_q`, is picked (`pick`: the
//! member's oldest acknowledged entry in ring order from the pointer), per eight slots: whether
//! any is set and the first set, registered (`gany_q`, `gfirst`); at c+3 the first group's
//! first slot is registered (`victim_q`). (The sum and the compare in one cycle were 10 LUT
//! levels, and a 64-bit lowest-bit isolate by a carry before the lookup's OR encoder 9, each
//! deeper than anything else in the fast path.) A record of a member at its share goes to
//! `victim_q` and the write pointer moves past it; any other record goes to the write pointer
//! as before. So `full` and `quota` are valid from c+3 ([`RING_VERDICT_LATENCY`]) and a record
//! may come from c+4 on ([`RING_RECORD_LATENCY`]: the executor's and Clio-KV's records come
//! many cycles later, after their memory accesses); the
//! lookup's results are held until the next lookup (no ack, release or record comes between
//! a lookup and its request's record: the top serves one request at a time).
//!
//! Atomics and Append record only successful executions (status OK); Clio-KV's puts
//! and deletes (`Opcode::offload_uses_idempotence_ring`) record whatever the unit answered,
//! errors included (`SyncUnit::record_offload` in the model: the status, value 0), so a
//! retry gets the same status back.
//!
//! Timing: present `port.key` with `port.lookup` in cycle c; `port.hit`,
//! `port.value` and `port.arg1` are valid from cycle c+1 ([`RING_LATENCY`]), `port.full` and
//! `port.quota` from cycle c+3 ([`RING_VERDICT_LATENCY`]), all held until the next lookup:
//! `hit` is the ring as it was in cycle c (registered), the answer is read from cycle c+1, so
//! a record in cycle c into the slot the lookup matched would show through. The top never changes the ring in a
//! cycle it looks up (its lookups are in Dispatch and an offload's first cycles, its records
//! after the request has executed, its acknowledgements in a CN_ACK's Dispatch and a release's
//! SpTx, its skips the cycle after a lookup). `port.ack`, `ctl.release`, `port.skip`
//! and `port.record` act at the clock edge (the port is the bundle `fastpath::links::RingPort`). The ALU (`alu_*`) is combinational; the RMW around
//! it is the top's memory access.

use crate::async_ram::AsyncRam;
use crate::fastpath::links::{RequestFieldsIn, RingControlIn, RingPort};
use crate::util::Gather;
use clio_proto::consts::IDEMPOTENCE_RING_ENTRIES;
use rust_hdl::prelude::*;

/// Ring entries.
pub const RING_ENTRIES: usize = 64;
const _: () = assert!(IDEMPOTENCE_RING_ENTRIES == RING_ENTRIES);
/// RING_RELEASE's client that forgets a whole RAS (`proto::ring::RING_PURGE_ALL`).
const PURGE_ALL: u16 = 0;
const _: () = assert!(clio_proto::ring::RING_PURGE_ALL == PURGE_ALL);
/// Cycles from a lookup to its result (`hit`, the answer).
pub const RING_LATENCY: usize = 1;
/// Cycles from a lookup to its verdict (`full`, `quota`).
pub const RING_VERDICT_LATENCY: usize = 3;
/// Cycles from a lookup to the first cycle its record may come (the slot of a member at its
/// share is registered then).
pub const RING_RECORD_LATENCY: usize = 4;
/// Shares above the ring's size are no limit; the share register holds the descriptor's byte.
const _: () = assert!(RING_ENTRIES < 256);
// The ALU decodes these opcode bytes.
const _: () = assert!(
    clio_proto::Opcode::TestAndSet as u8 == 0x20
        && clio_proto::Opcode::Unlock as u8 == 0x21
        && clio_proto::Opcode::CompareAndSwap as u8 == 0x22
        && clio_proto::Opcode::FetchAdd as u8 == 0x23
);

/// The sync unit.
#[derive(LogicBlock)]
pub struct SyncUnit {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (empties the ring).
    pub reset: Signal<In, Bit>,
    /// The ring's port, for the executor (`Executor::ring`, joined in the top): the key
    /// (`port.key`, `pid << 48 | client << 32 | req_id`) for lookup, ack, release and record.
    pub port: RingPort,
    /// The slow path's changes (`SlowPathTx::ring`): RING_RELEASE (`ctl.release`) marks every
    /// entry of the key's `(pid, client)` acknowledged, or with client `RING_PURGE_ALL` (0)
    /// forgets every entry of the pid (the RAS is torn down); RING_SHARE (`ctl.share_set`)
    /// sets the share to `ctl.share` (entries one member may hold, 0: no limit).
    pub ctl: RingControlIn,
    /// ALU: the request's fields (`Decode::fields`): its opcode byte (TAS 0x20, UNLOCK 0x21,
    /// CAS 0x22, FAA 0x23), `arg0` (CAS's expected value, FAA's addend), `arg1` (CAS's new
    /// value).
    pub req: RequestFieldsIn,
    /// ALU: the word in memory.
    pub alu_old: Signal<In, Bits<64>>,
    /// ALU: `alu_old == alu_arg0` (CAS's compare), registered with the word as it was read
    /// (`WordAccess::old_eq`), so no 64-bit compare is in front of `alu_write`.
    pub alu_eq: Signal<In, Bit>,
    /// ALU: the word to store.
    pub alu_new: Signal<Out, Bits<64>>,
    /// ALU: store it (CAS with a mismatch leaves memory unchanged).
    pub alu_write: Signal<Out, Bit>,
    /// Each slot's key, `pid << 48 | client << 32 | req_id`.
    key: [DFF<Bits<64>>; RING_ENTRIES],
    /// The slots holding a recorded result.
    used: DFF<Bits<64>>,
    /// The slots holding a result not yet acknowledged (used and not acked): the one at the
    /// write pointer makes the ring `full`, a one-bit select from flip-flops.
    busy: DFF<Bits<64>>,
    /// Write pointer (read by the top's testbench).
    pub(crate) wp: DFF<Bits<6>>,
    /// The lookup's match vector (zero without a lookup), registered: `hit` comes from it.
    o_m: DFF<Bits<64>>,
    /// The first level of the lookup's matching slot's index (module doc), registered with
    /// `o_m`: bit `6k + j` is bit `k` of the index of a match in the sixth `j` of the ring
    /// (zero without a match).
    o_part: DFF<Bits<36>>,
    /// The verdict `full`, registered every cycle from the held lookup (module doc), so
    /// neither the 64-way select nor the share's sum is in front of the executor's decision.
    full_q: DFF<Bit>,
    /// The verdict `quota`, likewise.
    quota_q: DFF<Bit>,
    /// Entries one member may hold (0: no limit).
    share: DFF<Bits<8>>,
    /// The lookup's member's entries (held until the next lookup).
    o_own: DFF<Bits<64>>,
    /// Their count per eight slots, registered with `o_own`.
    grp: [DFF<Bits<4>>; 8],
    /// The member match with room to take four bits from each of its bits (the counts).
    mm_pad: Signal<Local, Bits<67>>,
    one4: Constant<Bits<4>>,
    /// The member's entries: the sum of `grp`, registered.
    total_q: DFF<Bits<8>>,
    /// The member holds its share (`total_q` against `share`).
    at_share: Signal<Local, Bit>,
    /// `at_share`, registered (held until the next lookup): its record goes to `victim_q`.
    at_share_q: DFF<Bit>,
    /// The member's acknowledged entries (`cand_q`), those at or after the write pointer
    /// (`hi_q`), the first of the latter else of the former (`pick`) and the index of its
    /// lowest set slot (`victim_q`): the member's oldest acknowledged entry in ring order.
    cand_q: DFF<Bits<64>>,
    hi_q: DFF<Bits<64>>,
    pick: Signal<Local, Bits<64>>,
    /// Per eight slots of `pick`: whether any is set (`gany_q`) and the first set
    /// (`gfirst`), registered; the first group's first slot is `victim_q`.
    gany: Gather<8>,
    gany_q: DFF<Bits<8>>,
    gfirst: [DFF<Bits<3>>; 8],
    victim_q: DFF<Bits<6>>,
    /// Where a record goes: `victim_q` at the member's share, else the write pointer.
    rec_at: Signal<Local, Bits<6>>,
    ones: Constant<Bits<64>>,
    /// The answers: value (bits 0..64), status (64..72) and the second word (72..136) per
    /// slot (a replayed Append's `arg1` is read, not summed from the value).
    vals: AsyncRam<Bits<136>, 6>,
    m: Gather<64>,
    mm: Gather<64>,
    /// Entries of the key's RAS (a purge's).
    mp: Gather<64>,
    /// A purge's entries, registered in the RING_RELEASE's cycle (zero otherwise) and cleared
    /// from `used` and `busy` at the next edge: the purge stays out of every other path.
    purge_m: DFF<Bits<64>>,
    /// `used` and `busy` less the purge registered the cycle before.
    used_now: Signal<Local, Bits<64>>,
    busy_now: Signal<Local, Bits<64>>,
    rec1h: Signal<Local, Bits<64>>,
    kk: Signal<Local, Bits<64>>,
    /// The matching entry's index (the match vector is one-hot or zero): an OR encoder cut
    /// after its first level (`util::onehot_index_part_masks`).
    enc: [Constant<Bits<64>>; 36],
    part: Gather<36>,
    idx: Gather<6>,
}

impl Default for SyncUnit {
    fn default() -> Self {
        SyncUnit {
            key: core::array::from_fn(|_| Default::default()),
            clock: Default::default(),
            reset: Default::default(),
            port: Default::default(),
            ctl: Default::default(),
            full_q: Default::default(),
            quota_q: Default::default(),
            share: Default::default(),
            o_own: Default::default(),
            grp: core::array::from_fn(|_| Default::default()),
            at_share: Default::default(),
            total_q: Default::default(),
            mm_pad: Default::default(),
            one4: Constant::new(1.into()),
            at_share_q: Default::default(),
            cand_q: Default::default(),
            hi_q: Default::default(),
            pick: Default::default(),
            gany: Default::default(),
            gany_q: Default::default(),
            gfirst: core::array::from_fn(|_| Default::default()),
            victim_q: Default::default(),
            rec_at: Default::default(),
            ones: Constant::new(u64::MAX.to_bits()),
            req: Default::default(),
            alu_old: Default::default(),
            alu_eq: Default::default(),
            alu_new: Default::default(),
            alu_write: Default::default(),
            used: Default::default(),
            busy: Default::default(),
            o_part: Default::default(),
            wp: Default::default(),
            o_m: Default::default(),
            vals: Default::default(),
            m: Default::default(),
            mm: Default::default(),
            mp: Default::default(),
            purge_m: Default::default(),
            used_now: Default::default(),
            busy_now: Default::default(),
            rec1h: Default::default(),
            kk: Default::default(),
            enc: crate::util::onehot_index_part_masks(),
            part: Default::default(),
            idx: Default::default(),
        }
    }
}

impl Logic for SyncUnit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, used, busy, wp, o_m, o_part, full_q, quota_q, share, o_own, purge_m,
            at_share_q, cand_q, hi_q, gany_q, victim_q, total_q
        );
        for g in 0..8 {
            self.grp[g].clock.next = self.clock.val();
            self.grp[g].d.next = self.grp[g].q.val();
        }
        for i in 0..64 {
            self.key[i].clock.next = self.clock.val();
            self.key[i].d.next = self.key[i].q.val();
        }
        self.vals.clock.next = self.clock.val();
        self.kk.next = self.port.key.val();
        // m: entries of the whole key; mm: entries of the member (pid, client).
        for i in 0..64 {
            self.mm.bits[i].next = self.used.q.val().get_bit(i)
                & (self.key[i].q.val().get_bits::<32>(32) == self.kk.val().get_bits::<32>(32));
            self.m.bits[i].next =
                self.used.q.val().get_bit(i) & (self.key[i].q.val() == self.kk.val());
            self.mp.bits[i].next =
                self.key[i].q.val().get_bits::<16>(48) == self.kk.val().get_bits::<16>(48);
        }
        // One-hot of where a record goes (module doc).
        self.rec_at.next = self.wp.q.val();
        if self.at_share_q.q.val() {
            self.rec_at.next = self.victim_q.q.val();
        }
        self.rec1h.next = bit_cast::<64, 1>(1.into()) << self.rec_at.val();
        // Keys are unique in the ring (a key is recorded only when the lookup missed), so the
        // match vector is one-hot or zero.
        for n in 0..36 {
            self.part.bits[n].next = (self.m.out.val() & self.enc[n].val()).any();
        }
        // The lookup's results are held until the next lookup.
        if self.port.lookup.val() {
            self.o_m.d.next = self.m.out.val();
            self.o_part.d.next = self.part.out.val();
            self.o_own.d.next = self.mm.out.val();
        }
        self.mm_pad.next = bit_cast::<67, 64>(self.mm.out.val());
        for g in 0..8 {
            if self.port.lookup.val() {
                self.grp[g].d.next = (self.mm_pad.val().get_bits::<4>(8 * g + 0) & self.one4.val())
                    + (self.mm_pad.val().get_bits::<4>(8 * g + 1) & self.one4.val())
                    + (self.mm_pad.val().get_bits::<4>(8 * g + 2) & self.one4.val())
                    + (self.mm_pad.val().get_bits::<4>(8 * g + 3) & self.one4.val())
                    + (self.mm_pad.val().get_bits::<4>(8 * g + 4) & self.one4.val())
                    + (self.mm_pad.val().get_bits::<4>(8 * g + 5) & self.one4.val())
                    + (self.mm_pad.val().get_bits::<4>(8 * g + 6) & self.one4.val())
                    + (self.mm_pad.val().get_bits::<4>(8 * g + 7) & self.one4.val());
            }
        }
        if self.ctl.share_set.val() {
            self.share.d.next = self.ctl.share.val();
        }
        for k in 0..6 {
            self.idx.bits[k].next = self.o_part.q.val().get_bits::<6>(6 * k).any();
        }
        self.vals.read_address.next = self.idx.out.val();
        self.port.verdict.hit.next = self.o_m.q.val().any();
        self.port.verdict.value.next = self.vals.read_data.val().get_bits::<64>(0);
        self.port.verdict.status.next = self.vals.read_data.val().get_bits::<8>(64);
        self.port.arg1.next = self.vals.read_data.val().get_bits::<64>(72);
        // The verdicts (module doc), from the held lookup: the member's count summed at c+1,
        // compared with the share at c+2 (when `cand_q` and `total_q` are the lookup's).
        self.total_q.d.next = ((bit_cast::<8, 4>(self.grp[0].q.val())
            + bit_cast::<8, 4>(self.grp[1].q.val()))
            + (bit_cast::<8, 4>(self.grp[2].q.val()) + bit_cast::<8, 4>(self.grp[3].q.val())))
            + ((bit_cast::<8, 4>(self.grp[4].q.val()) + bit_cast::<8, 4>(self.grp[5].q.val()))
                + (bit_cast::<8, 4>(self.grp[6].q.val()) + bit_cast::<8, 4>(self.grp[7].q.val())));
        self.at_share.next =
            self.share.q.val().any() & (self.total_q.q.val() >= self.share.q.val());
        self.full_q.d.next =
            self.busy.q.val().get_bit(self.wp.q.val().index()) & !self.at_share.val();
        self.quota_q.d.next = self.at_share.val() & !self.cand_q.q.val().any();
        self.at_share_q.d.next = self.at_share.val();
        self.cand_q.d.next = self.o_own.q.val() & !self.busy.q.val();
        self.hi_q.d.next =
            self.o_own.q.val() & !self.busy.q.val() & (self.ones.val() << self.wp.q.val());
        // The member's oldest acknowledged entry (module doc): at c+2 the first at or after the
        // write pointer, else the first of all, per eight slots; at c+3 the first group's.
        self.pick.next = self.cand_q.q.val();
        if self.hi_q.q.val().any() {
            self.pick.next = self.hi_q.q.val();
        }
        for g in 0..8 {
            self.gfirst[g].clock.next = self.clock.val();
            self.gany.bits[g].next = self.pick.val().get_bits::<8>(8 * g).any();
            // Lowest set slot of the eight: the later assignment (lower slot) wins.
            self.gfirst[g].d.next = 7.into();
            if self.pick.val().get_bit(8 * g + 6) {
                self.gfirst[g].d.next = 6.into();
            }
            if self.pick.val().get_bit(8 * g + 5) {
                self.gfirst[g].d.next = 5.into();
            }
            if self.pick.val().get_bit(8 * g + 4) {
                self.gfirst[g].d.next = 4.into();
            }
            if self.pick.val().get_bit(8 * g + 3) {
                self.gfirst[g].d.next = 3.into();
            }
            if self.pick.val().get_bit(8 * g + 2) {
                self.gfirst[g].d.next = 2.into();
            }
            if self.pick.val().get_bit(8 * g + 1) {
                self.gfirst[g].d.next = 1.into();
            }
            if self.pick.val().get_bit(8 * g) {
                self.gfirst[g].d.next = 0.into();
            }
        }
        self.gany_q.d.next = self.gany.out.val();
        self.victim_q.d.next =
            (bit_cast::<6, 3>(self.gfirst[7].q.val())) | (bit_cast::<6, 3>(7.into()) << 3);
        if self.gany_q.q.val().get_bit(6) {
            self.victim_q.d.next =
                bit_cast::<6, 3>(self.gfirst[6].q.val()) | (bit_cast::<6, 3>(6.into()) << 3);
        }
        if self.gany_q.q.val().get_bit(5) {
            self.victim_q.d.next =
                bit_cast::<6, 3>(self.gfirst[5].q.val()) | (bit_cast::<6, 3>(5.into()) << 3);
        }
        if self.gany_q.q.val().get_bit(4) {
            self.victim_q.d.next =
                bit_cast::<6, 3>(self.gfirst[4].q.val()) | (bit_cast::<6, 3>(4.into()) << 3);
        }
        if self.gany_q.q.val().get_bit(3) {
            self.victim_q.d.next =
                bit_cast::<6, 3>(self.gfirst[3].q.val()) | (bit_cast::<6, 3>(3.into()) << 3);
        }
        if self.gany_q.q.val().get_bit(2) {
            self.victim_q.d.next =
                bit_cast::<6, 3>(self.gfirst[2].q.val()) | (bit_cast::<6, 3>(2.into()) << 3);
        }
        if self.gany_q.q.val().get_bit(1) {
            self.victim_q.d.next =
                bit_cast::<6, 3>(self.gfirst[1].q.val()) | (bit_cast::<6, 3>(1.into()) << 3);
        }
        if self.gany_q.q.val().get_bit(0) {
            self.victim_q.d.next = bit_cast::<6, 3>(self.gfirst[0].q.val());
        }
        self.port.verdict.full.next = self.full_q.q.val();
        self.port.verdict.quota.next = self.quota_q.q.val();
        self.vals.write_enable.next = self.port.record.val();
        self.vals.write_address.next = self.rec_at.val();
        self.vals.write_data.next = bit_cast::<136, 64>(self.port.rec_value.val())
            | (bit_cast::<136, 8>(self.port.rec_status.val()) << 64)
            | (bit_cast::<136, 64>(self.port.rec_arg1.val()) << 72);
        // A purge (RING_RELEASE of client == PURGE_ALL, 0, asserted above: the RAS is torn
        // down, its key already removed, so none of its requests is looked up meanwhile):
        // its entries are registered here and cleared at the next edge.
        self.purge_m.d.next = 0.into();
        if self.ctl.release.val() & !self.kk.val().get_bits::<16>(32).any() {
            self.purge_m.d.next = self.mp.out.val();
        }
        self.used_now.next = self.used.q.val() & !self.purge_m.q.val();
        self.busy_now.next = self.busy.q.val() & !self.purge_m.q.val();
        self.used.d.next = self.used_now.val();
        self.busy.d.next = self.busy_now.val();
        if self.port.ack.val() {
            self.busy.d.next = self.busy_now.val() & !self.m.out.val();
        }
        if self.ctl.release.val() {
            self.busy.d.next = self.busy_now.val() & !self.mm.out.val();
        }
        if self.port.skip.val() {
            self.wp.d.next = self.wp.q.val() + 1;
        }
        if self.port.record.val() {
            self.used.d.next = self.used_now.val() | self.rec1h.val();
            self.busy.d.next = self.busy_now.val() | self.rec1h.val();
            self.wp.d.next = self.rec_at.val() + 1;
            for i in 0..64 {
                if self.rec1h.val().get_bit(i) {
                    self.key[i].d.next = self.kk.val();
                }
            }
        }
        if self.reset.val() {
            self.used.d.next = 0.into();
            self.busy.d.next = 0.into();
            self.purge_m.d.next = 0.into();
            self.wp.d.next = 0.into();
            self.o_m.d.next = 0.into();
            self.o_part.d.next = 0.into();
            self.o_own.d.next = 0.into();
            self.share.d.next = 0.into();
            self.at_share_q.d.next = false;
        }
        for g in 0..8 {
            if self.reset.val() {
                self.grp[g].d.next = 0.into();
            }
        }
        // proto::opcode: TAS 0x20 -> 1, UNLOCK 0x21 -> 0, CAS 0x22 -> arg1 if old == arg0 (`alu_eq`),
        // FAA 0x23 -> old + arg0. The result returned is always the old word.
        self.alu_write.next = true;
        self.alu_new.next = self.alu_old.val();
        if self.req.opcode.val() == 0x20 {
            self.alu_new.next = 1.into();
        } else if self.req.opcode.val() == 0x21 {
            self.alu_new.next = 0.into();
        } else if self.req.opcode.val() == 0x22 {
            self.alu_new.next = self.req.arg1.val();
            self.alu_write.next = self.alu_eq.val();
        } else if self.req.opcode.val() == 0x23 {
            self.alu_new.next = self.alu_old.val() + self.req.arg0.val();
        } else {
            self.alu_write.next = false;
        }
    }
}

crate::impl_clocked!(SyncUnit);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use clio_model::sync_unit::{Entry, RingCheck as Verdict, SyncUnit as Ring};
    use clio_proto::{Opcode, Status};

    fn key(b: &mut Bench<SyncUnit>, pid: u16, client: u16, req: u32) {
        b.uut.port.key.next = ((pid as u64) << 48 | (client as u64) << 32 | req as u64).to_bits();
    }

    fn pulse(b: &mut Bench<SyncUnit>, f: fn(&mut SyncUnit) -> &mut Signal<In, Bit>) {
        f(&mut b.uut).next = true;
        b.tick();
        f(&mut b.uut).next = false;
    }

    /// Random check/record/ack/release traffic over a small key space (two pids, two members
    /// each, colliding request ids) that fills and wraps the ring; every lookup is compared
    /// with the model (replay value and status, full with the skip, execute). The statuses
    /// recorded are those a Clio-KV put or delete can end with (errors included).
    #[test]
    fn ring_matches_model() {
        let mut b = Bench::new(SyncUnit::default());
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        let mut m = Ring::with_entries(RING_ENTRIES);
        let mut rng = 0x1234_5678_9ABC_DEF1u64;
        let (mut replays, mut fulls, mut execs, mut releases) = (0, 0, 0, 0);
        let (mut purges, mut shares, mut over_shares) = (0, 0, 0);
        let mut arg1s = std::collections::HashMap::new();
        for step in 0..1500u64 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let pid = (rng % 2) as u16 + 1;
            let client = ((rng >> 4) % 2) as u16 + 1;
            let req = ((rng >> 8) % 60) as u32;
            if rng >> 61 == 0 {
                // CN ack (acks are denser than requests late in the run so the ring drains).
                key(&mut b, pid, client, req);
                b.uut.port.ack.next = true;
                b.tick();
                b.uut.port.ack.next = false;
                m.ack(pid, client, req);
                continue;
            }
            if rng >> 58 == 9 {
                releases += 1;
                // One release in four purges the whole RAS (client RING_PURGE_ALL).
                let client = if (rng >> 40) % 4 == 0 { 0 } else { client };
                purges += usize::from(client == 0);
                key(&mut b, pid, client, 0xFFFF_FFFF);
                b.uut.ctl.release.next = true;
                b.tick();
                b.uut.ctl.release.next = false;
                // A purge lands at the next edge (the top never looks the pid up meanwhile).
                b.tick();
                m.release(pid, client);
                continue;
            }
            if rng >> 56 == 0x2A {
                // A new share (0: none), as the slow path's RING_SHARE sets it.
                let share = [0u8, 1, 2, 3, 5, 200][(rng >> 30) as usize % 6];
                b.uut.ctl.share_set.next = true;
                b.uut.ctl.share.next = u64::from(share).to_bits();
                b.tick();
                b.uut.ctl.share_set.next = false;
                m.set_share(share);
                shares += 1;
                continue;
            }
            key(&mut b, pid, client, req);
            b.uut.port.lookup.next = true;
            b.tick();
            b.uut.port.lookup.next = false;
            b.settle();
            // The result now, the verdict the cycle after; both held.
            let hit_now = b.uut.port.verdict.hit.val();
            for _ in RING_LATENCY..RING_VERDICT_LATENCY {
                b.tick();
            }
            b.settle();
            assert_eq!(
                b.uut.port.verdict.hit.val(),
                hit_now,
                "step {step}: hit is held"
            );
            match m.check(pid, client, req) {
                Verdict::Cached(s, v) => {
                    replays += 1;
                    assert!(b.uut.port.verdict.hit.val(), "step {step}: replay expected");
                    assert_eq!(
                        b.uut.port.verdict.value.val().to_u64(),
                        v,
                        "step {step}: value"
                    );
                    assert_eq!(
                        b.uut.port.verdict.status.val().to_u64(),
                        s as u64,
                        "step {step}: status"
                    );
                    assert_eq!(
                        b.uut.port.arg1.val().to_u64(),
                        arg1s[&(pid, client, req)],
                        "step {step}: second word"
                    );
                }
                Verdict::OverShare => {
                    over_shares += 1;
                    assert!(
                        !b.uut.port.verdict.hit.val() && b.uut.port.verdict.quota.val(),
                        "step {step}: over its share expected"
                    );
                }
                Verdict::Full => {
                    fulls += 1;
                    assert!(
                        !b.uut.port.verdict.hit.val()
                            && !b.uut.port.verdict.quota.val()
                            && b.uut.port.verdict.full.val(),
                        "step {step}: full expected"
                    );
                    b.uut.port.skip.next = true;
                    b.tick();
                    b.uut.port.skip.next = false;
                }
                Verdict::Execute => {
                    execs += 1;
                    assert!(
                        !b.uut.port.verdict.hit.val()
                            && !b.uut.port.verdict.quota.val()
                            && !b.uut.port.verdict.full.val(),
                        "step {step}: execute expected"
                    );
                    let v = rng.rotate_left(17) ^ step;
                    let s = [
                        Status::Ok,
                        Status::OutOfMemory,
                        Status::Unmapped,
                        Status::Ok,
                    ][(rng >> 20) as usize % 4];
                    let a1 = v.rotate_left(29) ^ 0x5A5A;
                    // The record comes at the earliest cycle it may (`RING_RECORD_LATENCY`).
                    for _ in RING_VERDICT_LATENCY..RING_RECORD_LATENCY {
                        b.tick();
                    }
                    b.uut.port.record.next = true;
                    b.uut.port.rec_value.next = v.to_bits();
                    b.uut.port.rec_status.next = (s as u64).to_bits();
                    b.uut.port.rec_arg1.next = a1.to_bits();
                    b.tick();
                    b.uut.port.record.next = false;
                    m.record_offload(pid, client, req, s, v);
                    // (Keys are unique in the ring: the latest record of a key is the one a
                    // replay finds.)
                    arg1s.insert((pid, client, req), a1);
                }
            }
            assert_eq!(
                b.uut.wp.q.val().to_u64() as usize,
                m.write_pointer(),
                "step {step}: write pointer"
            );
            if step % 4 == 0 {
                // Ack the entry at the write pointer sometimes so the ring keeps moving.
                if let Some(Entry {
                    pid: p,
                    client: c,
                    req_id: r,
                    ..
                }) = m.slots()[m.write_pointer()]
                {
                    key(&mut b, p, c, r);
                    b.uut.port.ack.next = true;
                    b.tick();
                    b.uut.port.ack.next = false;
                    m.ack(p, c, r);
                }
            }
        }
        assert!(
            replays > 50
                && fulls > 5
                && execs > 64
                && releases > 2
                && purges > 0
                && shares > 2
                && over_shares > 2
                && m.full > 5
                && m.cov.count(clio_proto::rules::Rule::RingShareOwnSlots) > 2,
            "replays {replays} fulls {fulls} execs {execs} releases {releases} purges {purges} \
             shares {shares} over shares {over_shares}"
        );
    }

    /// The skip policy and the member release, step by step: a ring full of one member's
    /// unacknowledged entries turns each new request away once and moves past a slot; the
    /// release of that member frees all of them at once; another member's entries with the
    /// same request ids are untouched and never replayed to the first.
    #[test]
    fn skip_and_release() {
        let mut b = Bench::new(SyncUnit::default());
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        let lookup = |b: &mut Bench<SyncUnit>, pid: u16, client: u16, req: u32| {
            key(b, pid, client, req);
            b.uut.port.lookup.next = true;
            b.tick();
            b.uut.port.lookup.next = false;
            for _ in RING_LATENCY..RING_VERDICT_LATENCY {
                b.tick();
            }
            b.settle();
            (
                b.uut.port.verdict.hit.val(),
                b.uut.port.verdict.full.val(),
                b.uut.port.verdict.value.val().to_u64(),
            )
        };
        let record = |b: &mut Bench<SyncUnit>, v: u64| {
            b.uut.port.record.next = true;
            b.uut.port.rec_value.next = v.to_bits();
            b.tick();
            b.uut.port.record.next = false;
        };
        // Member 1 of pid 5 fills the ring, never acking.
        for r in 0..RING_ENTRIES as u32 {
            let (hit, full, _) = lookup(&mut b, 5, 1, r);
            assert!(!hit && !full);
            record(&mut b, 1000 + r as u64);
        }
        // Member 2 with request id 3: not member 1's entry; the ring is full: retry later,
        // and the pointer moves on, so each attempt is refused by the next slot.
        for _ in 0..3 {
            let (hit, full, _) = lookup(&mut b, 5, 2, 3);
            assert!(!hit && full);
            pulse(&mut b, |u| &mut u.port.skip);
        }
        assert_eq!(b.uut.wp.q.val().to_u64(), 3);
        // Member 1's entry 3 replays to member 1 only.
        assert_eq!(lookup(&mut b, 5, 1, 3), (true, true, 1003));
        // Release member 1: every slot is free; entries stay for late duplicates.
        key(&mut b, 5, 1, 0);
        pulse(&mut b, |u| &mut u.ctl.release);
        let (hit, full, _) = lookup(&mut b, 5, 2, 3);
        assert!(!hit && !full, "released: member 2 executes");
        record(&mut b, 77);
        assert_eq!(lookup(&mut b, 5, 2, 3), (true, false, 77));
        assert_eq!(lookup(&mut b, 5, 1, 4), (true, false, 1004));
        // Releasing another member (or pid) frees nothing of member 2.
        key(&mut b, 6, 2, 0);
        pulse(&mut b, |u| &mut u.ctl.release);
        for r in 0..RING_ENTRIES as u32 - 1 {
            record(&mut b, r as u64);
        }
        // The pointer is back at member 2's unacknowledged entry: full.
        assert!(
            lookup(&mut b, 9, 9, 9).1,
            "member 2's entry still holds its slot"
        );
    }

    /// The ALU against `clio_model::sync_unit::atomic_apply`'s table.
    #[test]
    fn alu_matches_atomic_apply() {
        let mut b = Bench::new(SyncUnit::default());
        let cases = [
            (Opcode::TestAndSet, 0u64, 0u64, 0u64, Some(1u64)),
            (Opcode::TestAndSet, 1, 5, 6, Some(1)),
            (Opcode::Unlock, 1, 0, 0, Some(0)),
            (Opcode::CompareAndSwap, 5, 5, 9, Some(9)),
            (Opcode::CompareAndSwap, 4, 5, 9, None),
            (Opcode::FetchAdd, u64::MAX, 2, 0, Some(1)),
            (Opcode::FetchAdd, 40, 2, 0, Some(42)),
            (Opcode::Fence, 7, 1, 1, None),
        ];
        for (op, old, a0, a1, want) in cases {
            b.uut.req.opcode.next = (op as u8 as u64).to_bits();
            b.uut.alu_old.next = old.to_bits();
            b.uut.req.arg0.next = a0.to_bits();
            b.uut.req.arg1.next = a1.to_bits();
            b.uut.alu_eq.next = old == a0;
            b.settle();
            let got = b.uut.alu_write.val().then(|| b.uut.alu_new.val().to_u64());
            assert_eq!(got, want, "{op:?}");
        }
    }
}
