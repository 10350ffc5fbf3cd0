//! The sync unit: the atomic ALU and the idempotence table of non-idempotent results.
//!
//! The table has one **row per member** (`proto::consts::RING_MEMBERS` rows, a row per client
//! id, handed out node-wide by the slow path) of `RING_WAYS` entries, exactly as
//! `clio_model::sync_unit::SyncUnit`: a ring-recorded request (TAS, Unlock, CAS, FAA, Append,
//! Clio-KV's writes) looks up the entry `ring_way(req_id)` of its client id's row:
//!
//! - the row is not its RAS's (nobody's, another RAS's, or the client id beyond the table):
//!   `stranger` (DENIED), nothing of the row is answered or recorded;
//! - the entry holds the request id: `hit`, its recorded status and value;
//! - the member holds its share of unacknowledged results (`share`, RING_SHARE; 0: the row),
//!   or the entry holds another of its unacknowledged results: `quota` (QUOTA_EXCEEDED);
//! - otherwise the request executes and its result is recorded into the entry.
//!
//! A CN_ACK (`port.ack`) marks the entry acknowledged when it holds the acknowledged request
//! id; a RING_OWNER (`ctl.owner`, the slow path's, with `port.key`'s pid and client) empties the
//! row and hands it to the pid (0: nobody). So one member's results are replaced only by its
//! own, and a row's next holder sees nothing of its last.
//!
//! Storage, all in block RAM: the entries (request id, status, value) at `{client, way}`; each
//! row's owner pid, its `used`/`busy` bits (one each per way) and the count of its `busy` bits
//! at `client` (in LUT RAM until stop 65: 144 RAM64M8, 1,152 LUTs). The row words are read at
//! the key's row every cycle; a write that lands on the row being read at the same edge is
//! taken from a bypass register (the block RAM returns the word before it). After reset a sweep empties every row (`RING_MEMBERS`
//! cycles, within the key table's longer sweep, which the executor waits for before it takes a
//! request or a descriptor: asserted below).
//!
//! Timing: present `port.key` with `port.lookup` in cycle c: the entry's and the row's block
//! RAM reads are registered at c+1, with the row's owner compare and bits (the key is the
//! executor's register, held for the whole request, so the row read is `l_key`'s); at c+2 the verdict is decided and registered, so `hit`, `stranger`, `quota`,
//! `status` and `value` are valid from c+3 ([`RING_VERDICT_LATENCY`]) and held until the next
//! lookup; a record (for the key of the last lookup) may come from c+4 on
//! ([`RING_RECORD_LATENCY`]). An ack reads the entry in its cycle a, compares at a+1 and
//! clears the way's `busy` bit at the edge after a+2, so nothing else may come at a+1
//! ([`RING_ACK_GAP`]: the top's CN_ACK goes on to its response). A RING_OWNER is applied at the
//! edge after the cycle after its pulse; a record writes at its own edge. The top serves one
//! request or descriptor at a time (lookups and acks in Dispatch, records after the request
//! executed, RING_OWNER in SpTx), so the row words' one write port never has two writers and no
//! lookup reads a row while an ack or hand-over to it is still to land.
//! The ALU (`alu_*`) is combinational; the RMW around it is the top's memory access.

use crate::fastpath::links::{RequestFieldsIn, RingControlIn, RingPort};
use clio_proto::consts::{
    KEY_TABLE_ENTRIES, RING_MEMBERS, RING_MEMBER_BITS, RING_WAYS, RING_WAY_BITS,
};
use rust_hdl::prelude::*;

/// Rows (client ids).
const ROWS: usize = 1024;
/// Client-id bits that select a row.
const ROW_BITS: usize = 10;
/// Entries per row.
const WAYS: usize = 16;
/// Way bits.
const WAY_BITS: usize = 4;
const _: () = assert!(
    ROWS == RING_MEMBERS
        && ROW_BITS == RING_MEMBER_BITS
        && WAYS == RING_WAYS
        && WAY_BITS == RING_WAY_BITS
);
// `ring_way`: the request id's low four bits XOR the next four.
const _: () = assert!(
    clio_proto::consts::ring_way(0x35) == 3 ^ 5 && clio_proto::consts::ring_way(0x1F0) == 0xF
);
// The sweep that empties the rows after reset ends before the key table's, which the
// executor waits for (`KeyTable::ready`).
const _: () = assert!(ROWS <= KEY_TABLE_ENTRIES);
/// Cycles from a lookup to its verdict (`hit`, `stranger`, `quota`, `status`, `value`).
pub const RING_VERDICT_LATENCY: usize = 3;
/// Cycles from a lookup to the first cycle its record may come.
pub const RING_RECORD_LATENCY: usize = 4;
/// Cycles after reset until every row is empty.
pub const RING_SWEEP_CYCLES: usize = ROWS;
/// Cycles after an ack before the next lookup, ack or record may come (its clear lands at the
/// edge after the cycle after it; the top's CN_ACK goes on to its response).
pub const RING_ACK_GAP: usize = 2;
/// A share above a row's entries is no limit beyond the row; the register holds the byte.
const _: () = assert!(WAYS < 256);
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
    /// Synchronous reset (starts the sweep that empties every row).
    pub reset: Signal<In, Bit>,
    /// The table's port, for the executor (`Executor::ring`, joined in the top): the key
    /// (`port.key`, `pid << 48 | client << 32 | req_id`) for lookup, ack, record and RING_OWNER.
    pub port: RingPort,
    /// The slow path's changes (`SlowPathTx::ring`): RING_OWNER (`ctl.owner`: the row of the
    /// key's client emptied and handed to the key's pid, 0: nobody); RING_SHARE
    /// (`ctl.share_set`) sets the share to `ctl.share` (0: the row).
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
    /// The entries: request id (bits 0..32), status (32..40), value (40..104), at
    /// `{client, way}`.
    entries: RAM<Bits<104>, 14>,
    /// Each row's owner pid (0: nobody), in block RAM read at the key's row.
    owner: RAM<Bits<16>, 10>,
    /// Each row's bits: `used` per way (0..16), `busy` (used, not acknowledged; 16..32), and
    /// the count of `busy` (32..37).
    bits: RAM<Bits<37>, 10>,
    /// The write that landed at the last edge on the row read at it (the block RAMs read the
    /// word before that write): valid, and the word written.
    byp_bits_on: DFF<Bit>,
    byp_bits: DFF<Bits<37>>,
    byp_owner_on: DFF<Bit>,
    byp_owner: DFF<Bits<16>>,
    /// The row's words as they are now: the block RAMs' read, or the write that bypassed it.
    b_data: Signal<Local, Bits<37>>,
    o_data: Signal<Local, Bits<16>>,
    /// The sweep after reset, and the row it empties.
    sweep: DFF<Bit>,
    sweep_at: DFF<Bits<10>>,
    /// Unacknowledged results one member may hold (0: its row).
    share: DFF<Bits<8>>,
    /// The key of the last lookup or ack (`l_on`: a lookup is in its second cycle; `a_on`:
    /// an ack): the row whose words are used and a record writes, the entry a record writes.
    l_on: DFF<Bit>,
    l_key: DFF<Bits<64>>,
    /// Its second cycle's reads and compares, registered at c+2 (`m_on`).
    m_on: DFF<Bit>,
    m_own: DFF<Bit>,
    m_match: DFF<Bit>,
    m_busy: DFF<Bit>,
    m_count: DFF<Bits<5>>,
    m_entry: DFF<Bits<104>>,
    /// The verdict, registered at c+3 and held until the next lookup's.
    v_hit: DFF<Bit>,
    v_stranger: DFF<Bit>,
    v_quota: DFF<Bit>,
    v_status: DFF<Bits<8>>,
    v_value: DFF<Bits<64>>,
    /// An ack in its second cycle (its key in `l_key`), and in its third when its entry holds
    /// the acknowledged id (`aw_on`: the clear is written).
    a_on: DFF<Bit>,
    aw_on: DFF<Bit>,
    /// A RING_OWNER waiting one cycle (`o_on`): its key.
    o_on: DFF<Bit>,
    o_key: DFF<Bits<64>>,
    /// The key's row, way and whether the client id is in the table.
    k_row: Signal<Local, Bits<10>>,
    k_way: Signal<Local, Bits<4>>,
    /// The way a record writes (of the last lookup's key).
    w_way: Signal<Local, Bits<4>>,
    /// The row (and its way) whose words are used: `l_key`'s (an ack's or a lookup's second
    /// cycle, a record: nothing comes between a lookup and its request's record).
    r_row: Signal<Local, Bits<10>>,
    /// That key's low request-id bits (its way) and its member, `pid << 16 | client`.
    r_id8: Signal<Local, Bits<8>>,
    r_member: Signal<Local, Bits<32>>,
    r_way1h: Signal<Local, Bits<16>>,
    /// The row's owner is the pid and the client id is in the table.
    r_own: Signal<Local, Bit>,
    /// The busy bits' count (the member's unacknowledged results).
    cnt: Signal<Local, Bits<5>>,
    at_share: Signal<Local, Bit>,
    ack_hits: Signal<Local, Bit>,
}

impl Default for SyncUnit {
    fn default() -> Self {
        SyncUnit {
            clock: Default::default(),
            reset: Default::default(),
            port: Default::default(),
            ctl: Default::default(),
            req: Default::default(),
            alu_old: Default::default(),
            alu_eq: Default::default(),
            alu_new: Default::default(),
            alu_write: Default::default(),
            entries: Default::default(),
            owner: Default::default(),
            bits: Default::default(),
            byp_bits_on: Default::default(),
            byp_bits: Default::default(),
            byp_owner_on: Default::default(),
            byp_owner: Default::default(),
            b_data: Default::default(),
            o_data: Default::default(),
            sweep: Default::default(),
            sweep_at: Default::default(),
            share: Default::default(),
            l_on: Default::default(),
            l_key: Default::default(),
            m_on: Default::default(),
            m_own: Default::default(),
            m_match: Default::default(),
            m_busy: Default::default(),
            m_count: Default::default(),
            m_entry: Default::default(),
            v_hit: Default::default(),
            v_stranger: Default::default(),
            v_quota: Default::default(),
            v_status: Default::default(),
            v_value: Default::default(),
            a_on: Default::default(),
            aw_on: Default::default(),
            o_on: Default::default(),
            o_key: Default::default(),
            k_row: Default::default(),
            k_way: Default::default(),
            w_way: Default::default(),
            r_row: Default::default(),
            r_id8: Default::default(),
            r_member: Default::default(),
            r_way1h: Default::default(),
            r_own: Default::default(),
            cnt: Default::default(),
            at_share: Default::default(),
            ack_hits: Default::default(),
        }
    }
}

impl Logic for SyncUnit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            sweep,
            sweep_at,
            share,
            l_on,
            l_key,
            m_on,
            m_own,
            m_match,
            m_busy,
            m_count,
            m_entry,
            v_hit,
            v_stranger,
            v_quota,
            v_status,
            v_value,
            a_on,
            aw_on,
            o_on,
            o_key,
            byp_bits_on,
            byp_bits,
            byp_owner_on,
            byp_owner
        );
        self.entries.read_clock.next = self.clock.val();
        self.entries.write_clock.next = self.clock.val();
        self.owner.read_clock.next = self.clock.val();
        self.owner.write_clock.next = self.clock.val();
        self.bits.read_clock.next = self.clock.val();
        self.bits.write_clock.next = self.clock.val();
        // The key's row and way (`proto::consts::ring_way`).
        self.k_row.next = self.port.key.val().get_bits::<10>(32);
        self.k_way.next =
            self.port.key.val().get_bits::<4>(0) ^ self.port.key.val().get_bits::<4>(4);
        self.entries.read_address.next =
            bit_cast::<14, 4>(self.k_way.val()) | (bit_cast::<14, 10>(self.k_row.val()) << 4);
        // A record is for the key of the last lookup (nothing comes between a lookup and its
        // request's record), held in `l_key`: the write port's address is its own signal,
        // so synthesis keeps the two ports apart (block RAM, not a single-port LUT RAM).
        self.w_way.next = self.l_key.q.val().get_bits::<4>(0) ^ self.l_key.q.val().get_bits::<4>(4);
        self.entries.write_address.next = bit_cast::<14, 4>(self.w_way.val())
            | (bit_cast::<14, 10>(self.l_key.q.val().get_bits::<10>(32)) << 4);
        self.entries.write_data.next = bit_cast::<104, 32>(self.l_key.q.val().get_bits::<32>(0))
            | (bit_cast::<104, 8>(self.port.rec_status.val()) << 32)
            | (bit_cast::<104, 64>(self.port.rec_value.val()) << 40);
        self.entries.write_enable.next = self.port.record.val();
        // The row words used: an ack's second cycle, a lookup's second cycle, else the key.
        self.r_id8.next = self.l_key.q.val().get_bits::<8>(0);
        self.r_member.next = self.l_key.q.val().get_bits::<32>(32);
        self.r_row.next = self.r_member.val().get_bits::<10>(0);
        self.r_way1h.next = bit_cast::<16, 1>(1.into())
            << (self.r_id8.val().get_bits::<4>(0) ^ self.r_id8.val().get_bits::<4>(4));
        // The row words: read at the key's row every cycle (the key is the executor's register,
        // the request's for as long as it is served), so the word of `l_key`'s row is out the
        // cycle after a lookup or an ack and in every later cycle of its request; a write
        // landing on that row at the read's edge is taken from the bypass.
        self.owner.read_address.next = self.k_row.val();
        self.bits.read_address.next = self.k_row.val();
        self.b_data.next = self.bits.read_data.val();
        if self.byp_bits_on.q.val() {
            self.b_data.next = self.byp_bits.q.val();
        }
        self.o_data.next = self.owner.read_data.val();
        if self.byp_owner_on.q.val() {
            self.o_data.next = self.byp_owner.q.val();
        }
        self.r_own.next = (self.o_data.val() == self.r_member.val().get_bits::<16>(16))
            & self.o_data.val().any()
            & !self.r_member.val().get_bits::<6>(10).any();
        // The row's unacknowledged results, kept beside its bits (a count the record and
        // ack keep, rather than a popcount of `busy` in front of the compare).
        self.cnt.next = self.b_data.val().get_bits::<5>(32);
        // ---- Lookup: c+1 (`l_on`), the reads and compares registered; c+2 (`m_on`), the
        // verdict registered.
        self.l_on.d.next = self.port.lookup.val();
        if self.port.lookup.val() | self.port.ack.val() {
            self.l_key.d.next = self.port.key.val();
        }
        self.m_on.d.next = self.l_on.q.val();
        if self.l_on.q.val() {
            self.m_own.d.next = self.r_own.val();
            self.m_match.d.next = (self.b_data.val().get_bits::<16>(0) & self.r_way1h.val()).any()
                & (self.entries.read_data.val().get_bits::<32>(0)
                    == self.l_key.q.val().get_bits::<32>(0));
            self.m_busy.d.next = (self.b_data.val().get_bits::<16>(16) & self.r_way1h.val()).any();
            self.m_count.d.next = self.cnt.val();
            self.m_entry.d.next = self.entries.read_data.val();
        }
        self.at_share.next = self.share.q.val().any()
            & (bit_cast::<8, 5>(self.m_count.q.val()) >= self.share.q.val());
        if self.m_on.q.val() {
            self.v_stranger.d.next = !self.m_own.q.val();
            self.v_hit.d.next = self.m_own.q.val() & self.m_match.q.val();
            self.v_quota.d.next = self.m_own.q.val()
                & !self.m_match.q.val()
                & (self.at_share.val() | self.m_busy.q.val());
            self.v_status.d.next = self.m_entry.q.val().get_bits::<8>(32);
            self.v_value.d.next = self.m_entry.q.val().get_bits::<64>(40);
        }
        self.port.verdict.hit.next = self.v_hit.q.val();
        self.port.verdict.stranger.next = self.v_stranger.q.val();
        self.port.verdict.quota.next = self.v_quota.q.val();
        self.port.verdict.status.next = self.v_status.q.val();
        self.port.verdict.value.next = self.v_value.q.val();
        if self.ctl.share_set.val() {
            self.share.d.next = self.ctl.share.val();
        }
        // ---- The row words' one write port: the sweep, a RING_OWNER a cycle after its pulse,
        // an ack in its second cycle (the entry holds the acknowledged id), a record.
        self.a_on.d.next = self.port.ack.val();
        self.o_on.d.next = self.ctl.owner.val();
        if self.ctl.owner.val() {
            self.o_key.d.next = self.port.key.val();
        }
        self.ack_hits.next = self.r_own.val()
            & (self.b_data.val().get_bits::<16>(16) & self.r_way1h.val()).any()
            & (self.entries.read_data.val().get_bits::<32>(0)
                == self.l_key.q.val().get_bits::<32>(0));
        self.owner.write_enable.next = false;
        self.owner.write_address.next = self.o_key.q.val().get_bits::<10>(32);
        self.owner.write_data.next = self.o_key.q.val().get_bits::<16>(48);
        self.bits.write_enable.next = false;
        self.bits.write_address.next = self.r_row.val();
        // A record's entry is never busy (a busy one is refused), so the count goes up.
        self.bits.write_data.next = bit_cast::<37, 32>(
            self.b_data.val().get_bits::<32>(0)
                | bit_cast::<32, 16>(self.r_way1h.val())
                | (bit_cast::<32, 16>(self.r_way1h.val()) << 16),
        ) | (bit_cast::<37, 5>(self.cnt.val() + 1) << 32);
        if self.port.record.val() {
            self.bits.write_enable.next = true;
        }
        // An ack's clear lands a cycle after its compares (`aw_on`), off their path; the top
        // sends nothing to the table in the cycle after an ack (its response follows), so the
        // row in `l_key` is still the ack's.
        self.aw_on.d.next = self.a_on.q.val() & self.ack_hits.val();
        if self.aw_on.q.val() {
            self.bits.write_enable.next = true;
            self.bits.write_data.next = bit_cast::<37, 32>(
                self.b_data.val().get_bits::<32>(0)
                    & !(bit_cast::<32, 16>(self.r_way1h.val()) << 16),
            ) | (bit_cast::<37, 5>(self.cnt.val() - 1) << 32);
        }
        if self.o_on.q.val() {
            // A client id beyond the table names no row: nothing is written.
            self.owner.write_enable.next = !self.o_key.q.val().get_bits::<6>(42).any();
            self.bits.write_enable.next = !self.o_key.q.val().get_bits::<6>(42).any();
            self.bits.write_address.next = self.o_key.q.val().get_bits::<10>(32);
            self.bits.write_data.next = 0.into();
        }
        if self.sweep.q.val() {
            self.owner.write_enable.next = true;
            self.owner.write_address.next = self.sweep_at.q.val();
            self.owner.write_data.next = 0.into();
            self.bits.write_enable.next = true;
            self.bits.write_address.next = self.sweep_at.q.val();
            self.bits.write_data.next = 0.into();
            self.sweep_at.d.next = self.sweep_at.q.val() + 1;
            if self.sweep_at.q.val().all() {
                self.sweep.d.next = false;
            }
        }
        // The bypass: a write landing on the row the block RAMs read at this edge.
        self.byp_bits_on.d.next =
            self.bits.write_enable.val() & (self.bits.write_address.val() == self.k_row.val());
        self.byp_bits.d.next = self.bits.write_data.val();
        self.byp_owner_on.d.next =
            self.owner.write_enable.val() & (self.owner.write_address.val() == self.k_row.val());
        self.byp_owner.d.next = self.owner.write_data.val();
        if self.reset.val() {
            self.sweep.d.next = true;
            self.sweep_at.d.next = 0.into();
            self.share.d.next = 0.into();
            self.l_on.d.next = false;
            self.m_on.d.next = false;
            self.a_on.d.next = false;
            self.aw_on.d.next = false;
            self.o_on.d.next = false;
            self.v_hit.d.next = false;
            self.v_stranger.d.next = false;
            self.v_quota.d.next = false;
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
    use clio_model::sync_unit::{RingCheck as Verdict, SyncUnit as Ring};
    use clio_proto::{Opcode, Status};

    fn key(b: &mut Bench<SyncUnit>, pid: u16, client: u16, req: u32) {
        b.uut.port.key.next = ((pid as u64) << 48 | (client as u64) << 32 | req as u64).to_bits();
    }

    fn pulse(b: &mut Bench<SyncUnit>, f: fn(&mut SyncUnit) -> &mut Signal<In, Bit>) {
        f(&mut b.uut).next = true;
        b.tick();
        f(&mut b.uut).next = false;
    }

    fn fresh() -> Bench<SyncUnit> {
        let mut b = Bench::new(SyncUnit::default());
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        for _ in 0..RING_SWEEP_CYCLES + 1 {
            b.tick();
        }
        b
    }

    /// The verdict of a lookup of `(pid, client, req)`: (hit, stranger, quota, status, value).
    fn lookup(
        b: &mut Bench<SyncUnit>,
        pid: u16,
        client: u16,
        req: u32,
    ) -> (bool, bool, bool, u64, u64) {
        key(b, pid, client, req);
        pulse(b, |u| &mut u.port.lookup);
        for _ in 1..RING_VERDICT_LATENCY {
            b.tick();
        }
        b.settle();
        let v = &b.uut.port.verdict;
        (
            v.hit.val(),
            v.stranger.val(),
            v.quota.val(),
            v.status.val().to_u64(),
            v.value.val().to_u64(),
        )
    }

    /// Random RING_OWNER, RING_SHARE, lookup/record and ack traffic over a few rows (two pids,
    /// rows handed to either, to nobody, and a client id beyond the table), request ids that
    /// share entries; every verdict compared with the model's, records at the earliest cycle
    /// they may come, hand-overs followed at once by the next operation and acks after the
    /// one idle cycle the top leaves (`RING_ACK_GAP`).
    #[test]
    fn table_matches_model() {
        let mut b = fresh();
        let mut m = Ring::default();
        let mut rng = 0x1234_5678_9ABC_DEF1u64;
        let clients = [1u16, 2, 3, 1023, 1030];
        let (mut hits, mut strangers, mut quotas, mut execs, mut owners, mut shares) =
            (0, 0, 0, 0, 0, 0);
        for step in 0..6000u64 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            let pid = (rng % 2) as u16 + 1;
            let client = clients[((rng >> 4) % 5) as usize];
            let req = ((rng >> 8) % 40) as u32 * 7;
            match rng >> 58 {
                0..=3 => {
                    key(&mut b, pid, client, req);
                    pulse(&mut b, |u| &mut u.port.ack);
                    // The cycle after an ack the top sends nothing (its response goes out).
                    b.tick();
                    m.ack(pid, client, req);
                }
                4 => {
                    let to = [0u16, 1, 2][(rng >> 40) as usize % 3];
                    key(&mut b, to, client, 0);
                    pulse(&mut b, |u| &mut u.ctl.owner);
                    m.set_owner(client, to);
                    owners += 1;
                }
                5 if (rng >> 44) % 8 == 0 => {
                    let share = [0u8, 1, 2, 3, 5, 16][(rng >> 30) as usize % 6];
                    b.uut.ctl.share_set.next = true;
                    b.uut.ctl.share.next = u64::from(share).to_bits();
                    b.tick();
                    b.uut.ctl.share_set.next = false;
                    m.set_share(share);
                    shares += 1;
                }
                _ => {
                    let (hit, stranger, quota, status, value) = lookup(&mut b, pid, client, req);
                    let at = format!("step {step}: {pid}/{client}/{req}");
                    match m.check(pid, client, req) {
                        Verdict::Cached(s, v) => {
                            hits += 1;
                            assert!(hit && !stranger && !quota, "{at}: hit");
                            assert_eq!((status, value), (s as u64, v), "{at}");
                        }
                        Verdict::Stranger => {
                            strangers += 1;
                            assert!(!hit && stranger && !quota, "{at}: stranger");
                        }
                        Verdict::OverShare => {
                            quotas += 1;
                            assert!(!hit && !stranger && quota, "{at}: quota");
                        }
                        Verdict::Execute => {
                            execs += 1;
                            assert!(!hit && !stranger && !quota, "{at}: execute");
                            let v = rng.rotate_left(17) ^ step;
                            let s = [
                                Status::Ok,
                                Status::OutOfMemory,
                                Status::Unmapped,
                                Status::Ok,
                            ][(rng >> 20) as usize % 4];
                            for _ in RING_VERDICT_LATENCY..RING_RECORD_LATENCY {
                                b.tick();
                            }
                            b.uut.port.record.next = true;
                            b.uut.port.rec_value.next = v.to_bits();
                            b.uut.port.rec_status.next = (s as u64).to_bits();
                            b.tick();
                            b.uut.port.record.next = false;
                            m.record_offload(pid, client, req, s, v);
                        }
                    }
                }
            }
        }
        assert!(
            hits > 100
                && strangers > 100
                && quotas > 20
                && execs > 100
                && owners > 50
                && shares > 3,
            "hits {hits} strangers {strangers} quotas {quotas} execs {execs} owners {owners} \
             shares {shares}"
        );
    }

    /// Rows step by step: a row handed to a RAS answers only that RAS; a member's entries are
    /// replaced only by its own later requests; a hand-over empties the row, also to the same
    /// pid again; a reset forgets every row.
    #[test]
    fn rows_are_owned_and_emptied() {
        let mut b = fresh();
        let record = |b: &mut Bench<SyncUnit>, v: u64| {
            b.tick();
            b.uut.port.record.next = true;
            b.uut.port.rec_value.next = v.to_bits();
            b.tick();
            b.uut.port.record.next = false;
        };
        let own = |b: &mut Bench<SyncUnit>, client: u16, pid: u16| {
            key(b, pid, client, 0);
            pulse(b, |u| &mut u.ctl.owner);
        };
        assert!(lookup(&mut b, 5, 1, 3).1, "nobody's row after reset");
        own(&mut b, 1, 5);
        own(&mut b, 2, 6);
        assert_eq!(lookup(&mut b, 5, 1, 3), (false, false, false, 0, 0));
        record(&mut b, 33);
        assert_eq!(lookup(&mut b, 5, 1, 3), (true, false, false, 0, 33));
        // Another RAS under that client id: denied, nothing read.
        assert_eq!(lookup(&mut b, 6, 1, 3).1, true);
        // Another member with the same request id: its own row.
        assert_eq!(lookup(&mut b, 6, 2, 3), (false, false, false, 0, 0));
        // The member's request of the same entry while 3 is unacknowledged: refused.
        let same = (4..)
            .find(|&i| clio_proto::consts::ring_way(i) == clio_proto::consts::ring_way(3))
            .unwrap();
        assert!(lookup(&mut b, 5, 1, same).2);
        key(&mut b, 5, 1, 3);
        pulse(&mut b, |u| &mut u.port.ack);
        b.tick();
        let (hit, stranger, quota, _, _) = lookup(&mut b, 5, 1, same);
        assert!(
            !hit && !stranger && !quota,
            "acknowledged: it may be replaced"
        );
        record(&mut b, 44);
        assert!(!lookup(&mut b, 5, 1, 3).0, "replaced by its own");
        // Handed again, even to the same pid: empty.
        own(&mut b, 1, 5);
        assert_eq!(lookup(&mut b, 5, 1, same).0, false);
        own(&mut b, 1, 0);
        assert!(lookup(&mut b, 5, 1, same).1, "nobody's");
        // A reset forgets row 2's owner.
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        for _ in 0..RING_SWEEP_CYCLES + 1 {
            b.tick();
        }
        assert!(lookup(&mut b, 6, 2, 3).1);
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
