//! Sync unit: atomic word operations and the idempotence ring.
//!
//! The ring remembers the results of the last [`IDEMPOTENCE_RING_ENTRIES`] ring-recorded
//! requests (`Opcode::uses_idempotence_ring`: TAS, Unlock, CAS, FAA) by
//! `(pid, client, req_id)`. A retry finds its result and is not executed again. A slot is
//! reusable once the client acknowledged the result (CN ack); acknowledged entries stay
//! until overwritten, so a late network duplicate still finds its result. When the slot at the
//! write pointer is still unacknowledged the request gets retry-later and the write pointer
//! moves past that slot, so one client that never acks (it died) costs the others one short
//! retry per pass of the ring, not a stall; the slow path releases a departed member's slots
//! (`RING_RELEASE`), so dead clients cannot fill the ring either.
//!
//! **Shares.** Once the slow path sets a share (`RING_SHARE`, `proto::quota::Quota::RingShare`;
//! none until then), a member `(pid, client)` holding that many entries, acknowledged or not,
//! is *at its share*: its next result is recorded over its own oldest acknowledged entry. The
//! write pointer moves on to that entry (the first of the member's acknowledged entries in
//! ring order from the pointer) and past it with the record, so the entries between are
//! passed over, never evicted, and the ring's order from the pointer stays the order of
//! recording (oldest first). With all of its entries unacknowledged the member is refused
//! [`RingCheck::OverShare`] (QUOTA_EXCEEDED) and nothing moves. So one member never holds
//! more than its share of the ring, never blocks another's atomics with its unacknowledged
//! results, and once at its share evicts only its own results; below its share it records at
//! the write pointer as before (evicting the oldest acknowledged result there, whoever's:
//! at most its share of them before it reaches its share).
use super::coverage::Coverage;
use clio_proto::consts::IDEMPOTENCE_RING_ENTRIES;
use clio_proto::rules::Rule;
use clio_proto::{Opcode, Status};

/// One slot of the ring: a recorded answer, keyed by `(pid, client, req_id)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The RAS.
    pub pid: u16,
    /// The member of the RAS.
    pub client: u16,
    /// The member's request id.
    pub req_id: u32,
    /// The recorded status.
    pub status: Status,
    /// The recorded value (the old word of an atomic, HIT/MISS of a KV write).
    pub value: u64,
    /// The client acknowledged the answer (CN ack) or left: the slot may be reused.
    pub acked: bool,
}

/// What to do with a non-idempotent request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingCheck {
    /// Already executed: answer with this status and value.
    Cached(Status, u64),
    /// Execute it, then [`SyncUnit::record`] the result.
    Execute,
    /// The slot at the write pointer is unacknowledged (and the member below its share):
    /// answer retry-later (the pointer has moved on to the next slot).
    Full,
    /// The member holds its share of the ring and none of it is acknowledged: answer
    /// QUOTA_EXCEEDED (`Quota::RingShare`); nothing moves.
    OverShare,
}

/// The sync unit's state (bounded: the ring).
#[derive(Debug, Clone)]
pub struct SyncUnit {
    ring: Vec<Option<Entry>>,
    wp: usize,
    /// Entries one member may hold (0: no limit).
    share: usize,
    /// Where the next record goes when not at the write pointer: the oldest acknowledged
    /// entry of a member at its share ([`SyncUnit::check`] sets it).
    target: Option<usize>,
    /// Retries answered from the ring.
    pub replays: u64,
    /// Requests refused because the ring was full.
    pub full: u64,
    /// Requests refused because their member held its share, all unacknowledged.
    pub over_share: u64,
    /// Atomic operations executed.
    pub executed: u64,
    /// Rules decided here.
    pub cov: Coverage,
}

impl Default for SyncUnit {
    fn default() -> Self {
        SyncUnit::with_entries(IDEMPOTENCE_RING_ENTRIES)
    }
}

impl SyncUnit {
    /// A sync unit whose ring has `entries` slots (the node's is
    /// [`IDEMPOTENCE_RING_ENTRIES`]; testbenches use smaller rings to reach their corners).
    pub fn with_entries(entries: usize) -> SyncUnit {
        assert!(entries > 0, "a ring needs a slot");
        SyncUnit {
            ring: vec![None; entries],
            wp: 0,
            share: 0,
            target: None,
            replays: 0,
            full: 0,
            over_share: 0,
            executed: 0,
            cov: Coverage::default(),
        }
    }

    /// The ring's slots, in slot order.
    pub fn slots(&self) -> &[Option<Entry>] {
        &self.ring
    }

    /// The slot the next recorded answer goes to.
    pub fn write_pointer(&self) -> usize {
        self.wp
    }

    /// Set the entries one member may hold (`RING_SHARE`; 0: no limit). Entries a member
    /// already holds beyond a lowered share stay until it overwrites them.
    pub fn set_share(&mut self, share: u8) {
        self.share = usize::from(share);
    }

    /// Look a ring-recorded request up.
    pub fn check(&mut self, pid: u16, client: u16, req_id: u32) -> RingCheck {
        // One pass: the entry of this key, and whether a key without the pid, or without the
        // client, would have matched another entry (what the ring-key rules guard against).
        let (mut found, mut other_pid, mut other_client) = (None, false, false);
        for e in self.ring.iter().flatten().filter(|e| e.req_id == req_id) {
            match (e.pid == pid, e.client == client) {
                (true, true) => found = found.or(Some(*e)),
                (false, true) => other_pid = true,
                (true, false) => other_client = true,
                (false, false) => {}
            }
        }
        self.cov.hit_if(other_pid, Rule::RingKeyedByPid);
        self.cov.hit_if(other_client, Rule::RingKeyedByClient);
        if let Some(e) = found {
            let (s, v) = self.replay(e);
            return RingCheck::Cached(s, v);
        }
        self.target = None;
        let mine = |e: &Entry| e.pid == pid && e.client == client;
        let held = self.ring.iter().flatten().filter(|e| mine(e)).count();
        if self.share != 0 && held >= self.share {
            // At its share: over its own oldest acknowledged entry, the first in ring order
            // from the write pointer.
            let n = self.ring.len();
            let oldest = (0..n)
                .map(|k| (self.wp + k) % n)
                .find(|&i| self.ring[i].is_some_and(|e| mine(&e) && e.acked));
            let Some(at) = oldest else {
                self.over_share += 1;
                self.cov.hit(Rule::RingShareQuota);
                return RingCheck::OverShare;
            };
            self.cov.hit_if(at != self.wp, Rule::RingShareOwnSlots);
            self.target = Some(at);
            return RingCheck::Execute;
        }
        match self.ring[self.wp] {
            Some(e) if !e.acked => {
                self.full += 1;
                self.cov.hit(Rule::RingFull);
                self.wp = (self.wp + 1) % self.ring.len();
                RingCheck::Full
            }
            _ => RingCheck::Execute,
        }
    }

    /// The recorded answer of `(pid, client, req_id)`, if the ring holds it, for a request the
    /// key check found stale (its epoch older than its RAS's): an attempt that executed before
    /// the epoch moved is answered again (counted as a replay), and nothing else of the ring
    /// changes (no write pointer, share or full verdict: the request executes nothing).
    pub fn stale_replay(&mut self, pid: u16, client: u16, req_id: u32) -> Option<(Status, u64)> {
        let e = self
            .ring
            .iter()
            .flatten()
            .find(|e| e.pid == pid && e.client == client && e.req_id == req_id)
            .copied()?;
        self.cov.hit(Rule::StaleReplay);
        Some(self.replay(e))
    }

    /// A request answered again from its entry: counted, its recorded status and value.
    fn replay(&mut self, e: Entry) -> (Status, u64) {
        self.replays += 1;
        self.cov.hit(Rule::RingReplays);
        (e.status, e.value)
    }

    /// Record the result of an executed atomic in the slot at the write pointer (or, for a
    /// member at its share, its oldest acknowledged entry: the pointer moves there first).
    pub fn record(&mut self, pid: u16, client: u16, req_id: u32, status: Status, value: u64) {
        self.executed += 1;
        self.record_offload(pid, client, req_id, status, value);
    }

    /// Record the result of an offload's write (a Clio-KV put or delete) in the same ring;
    /// not counted as an atomic.
    pub fn record_offload(
        &mut self,
        pid: u16,
        client: u16,
        req_id: u32,
        status: Status,
        value: u64,
    ) {
        let at = self.target.take().unwrap_or(self.wp);
        self.ring[at] = Some(Entry {
            pid,
            client,
            req_id,
            status,
            value,
            acked: false,
        });
        self.wp = (at + 1) % self.ring.len();
    }

    /// Record how an offload's write ended (a Clio-KV put or delete): its `arg0` with OK, or
    /// its error status with value 0, so a retry gets the same status back. A quota's
    /// refusal (QUOTA_EXCEEDED: the RAS holds its Clio-KV records) changed nothing and is not
    /// recorded: a retry runs again, as after RETRY_LATER, and a refused member's share of the
    /// ring is not spent on refusals.
    pub fn record_outcome(
        &mut self,
        pid: u16,
        client: u16,
        req_id: u32,
        outcome: Result<u64, Status>,
    ) {
        let (status, value) = match outcome {
            Ok(arg0) => (Status::Ok, arg0),
            Err(Status::QuotaExceeded) => {
                self.target = None;
                return;
            }
            Err(s) => (s, 0),
        };
        self.record_offload(pid, client, req_id, status, value);
    }

    /// The client got the result of `(pid, client, req_id)`: its slot may be reused.
    pub fn ack(&mut self, pid: u16, client: u16, req_id: u32) {
        if let Some(e) = self
            .ring
            .iter_mut()
            .flatten()
            .find(|e| e.pid == pid && e.client == client && e.req_id == req_id)
        {
            self.cov.hit_if(!e.acked, Rule::CnAckFrees);
            e.acked = true;
        }
    }

    /// A member left (or its lease ended): every slot it holds may be reused. With `client`
    /// `RING_PURGE_ALL` the RAS is torn down: every entry of `pid` is forgotten.
    pub fn release(&mut self, pid: u16, client: u16) {
        if client == clio_proto::ring::RING_PURGE_ALL {
            for s in self.ring.iter_mut() {
                if s.is_some_and(|e| e.pid == pid) {
                    *s = None;
                }
            }
            return;
        }
        let mut freed = false;
        for e in self.ring.iter_mut().flatten() {
            if e.pid == pid && e.client == client {
                freed |= !e.acked;
                e.acked = true;
            }
        }
        self.cov.hit_if(freed, Rule::ReleaseFrees);
    }

    /// Unacknowledged entries.
    pub fn pending(&self) -> usize {
        self.ring.iter().flatten().filter(|e| !e.acked).count()
    }
}

/// The semantics of an atomic on the old word value: `(new value to store, result returned)`.
/// `None` as the new value means the word is left unchanged.
pub fn atomic_apply(op: Opcode, old: u64, arg0: u64, arg1: u64) -> (Option<u64>, u64) {
    (op.atomic_new_value(old, arg0, arg1), old)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_replays_fills_and_frees() {
        let mut s = SyncUnit::default();
        for i in 0..IDEMPOTENCE_RING_ENTRIES as u32 {
            assert_eq!(s.check(1, 1, i), RingCheck::Execute);
            s.record(1, 1, i, Status::Ok, i as u64 * 10);
        }
        assert_eq!(s.check(1, 1, 5), RingCheck::Cached(Status::Ok, 50));
        // Slot 0 is unacknowledged: retry-later, and the pointer skips to slot 1.
        assert_eq!(s.check(1, 1, 999), RingCheck::Full);
        s.ack(1, 1, 1);
        assert_eq!(s.check(1, 1, 999), RingCheck::Execute);
        s.record(1, 1, 999, Status::Ok, 7);
        // The acknowledged entry 1 was overwritten; 0 is still there.
        assert_eq!(s.check(1, 1, 0), RingCheck::Cached(Status::Ok, 0));
        assert_eq!(s.check(1, 1, 1), RingCheck::Full, "1 is gone");
        assert_eq!(
            s.check(2, 1, 2),
            RingCheck::Full,
            "other pid, same id: not a replay"
        );
        assert_eq!(
            s.check(1, 2, 2),
            RingCheck::Full,
            "other member of the same RAS, same id: not a replay"
        );
    }

    #[test]
    fn a_dead_client_costs_one_retry_per_pass_and_release_frees_it() {
        let mut s = SyncUnit::default();
        // A dead client (pid 1, client 9) holds slot 0 and never acks.
        s.record(1, 9, 1, Status::Ok, 0);
        let mut retries = 0;
        for i in 0..3 * IDEMPOTENCE_RING_ENTRIES as u32 {
            loop {
                match s.check(2, 1, 100 + i) {
                    RingCheck::Execute => break,
                    RingCheck::Full => retries += 1,
                    other => panic!("{other:?}"),
                }
            }
            s.record(2, 1, 100 + i, Status::Ok, 0);
            s.ack(2, 1, 100 + i);
        }
        assert_eq!(retries, 3, "one retry-later per pass of the ring");
        s.release(1, 9);
        assert_eq!(s.pending(), 0);
    }

    #[test]
    fn a_purged_ras_leaves_nothing_for_the_next_owner_of_its_pid() {
        let mut s = SyncUnit::default();
        s.record(1, 1, 7, Status::Ok, 70);
        s.ack(1, 1, 7);
        s.record(1, 2, 8, Status::Ok, 80);
        s.record(2, 1, 7, Status::Ok, 99);
        s.release(1, 1);
        assert_eq!(
            s.check(1, 1, 7),
            RingCheck::Cached(Status::Ok, 70),
            "released: kept"
        );
        s.release(1, clio_proto::ring::RING_PURGE_ALL);
        assert_eq!(s.check(1, 1, 7), RingCheck::Execute, "purged: gone");
        assert_eq!(s.check(1, 2, 8), RingCheck::Execute);
        assert_eq!(
            s.check(2, 1, 7),
            RingCheck::Cached(Status::Ok, 99),
            "other RAS kept"
        );
        assert_eq!(s.pending(), 1);
    }

    #[test]
    fn a_member_at_its_share_evicts_only_its_own_results() {
        let mut s = SyncUnit::with_entries(8);
        s.set_share(3);
        // The victim (pid 2) records and acknowledges 2 results: slots 0 and 1.
        for i in 0..2 {
            assert_eq!(s.check(2, 1, i), RingCheck::Execute);
            s.record(2, 1, i, Status::Ok, 100 + u64::from(i));
            s.ack(2, 1, i);
        }
        // The flooder (pid 1) records 3 (its share) and never acknowledges: slots 2..5.
        for i in 0..3 {
            assert_eq!(s.check(1, 1, i), RingCheck::Execute);
            s.record(1, 1, i, Status::Ok, 0);
        }
        assert_eq!(
            s.check(1, 1, 99),
            RingCheck::OverShare,
            "all unacknowledged"
        );
        assert_eq!(s.write_pointer(), 5, "a refusal moves nothing");
        // Acknowledged, it goes on over its own results only, oldest first: the pointer moves
        // past the empty slots 5..8 and the victim's 0, 1 to its slot 2, then 3, then 4.
        for i in 0..3 {
            s.ack(1, 1, i);
        }
        for (k, id) in (200..206).enumerate() {
            assert_eq!(s.check(1, 1, id), RingCheck::Execute);
            s.record(1, 1, id, Status::Ok, 0);
            s.ack(1, 1, id);
            assert_eq!(s.slots()[2 + k % 3].map(|e| e.req_id), Some(id));
            assert_eq!(s.write_pointer(), 3 + k % 3);
        }
        // The victim's results are still there, and it records below its share as before.
        assert_eq!(s.check(2, 1, 0), RingCheck::Cached(Status::Ok, 100));
        assert_eq!(s.check(2, 1, 1), RingCheck::Cached(Status::Ok, 101));
        assert_eq!(s.check(2, 1, 7), RingCheck::Execute);
        s.record(2, 1, 7, Status::Ok, 7);
        assert_eq!(s.slots()[5].map(|e| e.pid), Some(2), "at the write pointer");
        assert_eq!(s.over_share, 1);
        assert_eq!(s.full, 0, "a member at its share is never turned away");
        // A share of 0 is no limit.
        s.set_share(0);
        assert_eq!(s.check(1, 1, 1000), RingCheck::Execute);
    }

    #[test]
    fn atomics() {
        assert_eq!(atomic_apply(Opcode::TestAndSet, 0, 0, 0), (Some(1), 0));
        assert_eq!(atomic_apply(Opcode::CompareAndSwap, 5, 5, 9), (Some(9), 5));
        assert_eq!(atomic_apply(Opcode::CompareAndSwap, 4, 5, 9), (None, 4));
        assert_eq!(
            atomic_apply(Opcode::FetchAdd, u64::MAX, 2, 0),
            (Some(1), u64::MAX)
        );
    }
}
