//! Sync unit: atomic word operations and the idempotence table.
//!
//! The table remembers the results of ring-recorded requests (`Opcode::uses_idempotence_ring`:
//! TAS, Unlock, CAS, FAA; Append; Clio-KV's writes) so that a retry finds its result and is not
//! executed again. It has one **row per member**: client ids are handed out node-wide by the
//! slow path from `1..RING_MEMBERS`, and the slow path hands each row to the RAS of the member
//! it creates (`RING_OWNER`, emptying it) and takes it back, emptied again, when the member
//! leaves. A request's entry is `proto::consts::ring_way(req_id)` of its member's row:
//!
//! - the row is not its RAS's (another RAS's member, or nobody's): [`RingCheck::Stranger`],
//!   answered DENIED; nothing is read from or recorded into another RAS's row;
//! - the entry holds this request id: [`RingCheck::Cached`], its recorded answer;
//! - the member holds its share of unacknowledged results (`RING_SHARE`,
//!   `proto::quota::Quota::RingShare`; 0: the row), or the entry holds another of its
//!   unacknowledged results (`RING_WAYS` request ids apart): [`RingCheck::OverShare`],
//!   QUOTA_EXCEEDED naming the share, which only the member's own acknowledgements clear;
//! - otherwise [`RingCheck::Execute`], and the result is recorded into the entry.
//!
//! An entry is reusable once its member acknowledged the answer (CN ack); acknowledged entries
//! stay until the member's own later request with the same low bits replaces them, so a late
//! duplicate still finds its result. So a member's results are evicted only by its own
//! requests, a member that never acknowledges blocks only itself, and a departed member's row
//! holds nothing its client id's next holder (of any RAS) could be answered from.
use super::coverage::Coverage;
use clio_proto::consts::{ring_way, RING_MEMBERS, RING_WAYS};
use clio_proto::rules::Rule;
use clio_proto::{Opcode, Status};

/// One entry of a member's row: a recorded answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The member's request id.
    pub req_id: u32,
    /// The recorded status.
    pub status: Status,
    /// The recorded value (the old word of an atomic, HIT/MISS of a KV write).
    pub value: u64,
    /// The client acknowledged the answer (CN ack): the entry may be replaced.
    pub acked: bool,
}

/// One member's row: its RAS and its entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// The RAS the slow path handed the row to (0: nobody).
    pub owner: u16,
    /// The entries, at `ring_way(req_id)`.
    pub ways: [Option<Entry>; RING_WAYS],
}

impl Row {
    const EMPTY: Row = Row {
        owner: clio_proto::ring::RING_NO_OWNER,
        ways: [None; RING_WAYS],
    };

    /// Results not yet acknowledged.
    pub fn unacked(&self) -> usize {
        self.ways.iter().flatten().filter(|e| !e.acked).count()
    }
}

/// What to do with a non-idempotent request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RingCheck {
    /// Already executed: answer with this status and value.
    Cached(Status, u64),
    /// Execute it, then [`SyncUnit::record`] the result.
    Execute,
    /// The member holds its share of unacknowledged results, or the request's entry holds
    /// another of them: answer QUOTA_EXCEEDED (`Quota::RingShare`).
    OverShare,
    /// The client id's row is not the request's RAS's: answer DENIED.
    Stranger,
}

/// The sync unit's state (bounded: the table).
#[derive(Debug, Clone)]
pub struct SyncUnit {
    rows: Vec<Row>,
    /// Unacknowledged results one member may hold (0: its whole row).
    share: usize,
    /// Retries answered from the table.
    pub replays: u64,
    /// Requests refused because their entry held another unacknowledged result (below the
    /// share).
    pub full: u64,
    /// Requests refused because their member held its share of unacknowledged results.
    pub over_share: u64,
    /// Requests denied because their client id's row is not their RAS's.
    pub strangers: u64,
    /// Atomic operations executed.
    pub executed: u64,
    /// Rules decided here.
    pub cov: Coverage,
}

impl Default for SyncUnit {
    fn default() -> Self {
        SyncUnit {
            rows: vec![Row::EMPTY; RING_MEMBERS],
            share: 0,
            replays: 0,
            full: 0,
            over_share: 0,
            strangers: 0,
            executed: 0,
            cov: Coverage::default(),
        }
    }
}

impl SyncUnit {
    /// Every row, in client-id order.
    pub fn table(&self) -> &[Row] {
        &self.rows
    }

    /// The row of a client id (`None` beyond the table).
    pub fn row(&self, client: u16) -> Option<&Row> {
        self.rows.get(usize::from(client))
    }

    /// The entry request `req_id` of `client` records into.
    pub fn entry(&self, client: u16, req_id: u32) -> Option<Entry> {
        self.row(client).and_then(|r| r.ways[ring_way(req_id)])
    }

    /// Set the unacknowledged results one member may hold (`RING_SHARE`; 0: its whole row).
    pub fn set_share(&mut self, share: u8) {
        self.share = usize::from(share);
    }

    /// `RING_OWNER`: the row of `client` is emptied and handed to `pid` (0: nobody).
    pub fn set_owner(&mut self, client: u16, pid: u16) {
        if let Some(r) = self.rows.get_mut(usize::from(client)) {
            self.cov
                .hit_if(r.ways.iter().any(Option::is_some), Rule::ReleaseFrees);
            *r = Row {
                owner: pid,
                ..Row::EMPTY
            };
        }
    }

    /// The member's row when it is its RAS's.
    fn own_row(&mut self, pid: u16, client: u16) -> Option<&mut Row> {
        self.rows
            .get_mut(usize::from(client))
            .filter(|r| pid != clio_proto::ring::RING_NO_OWNER && r.owner == pid)
    }

    /// Look a ring-recorded request up.
    pub fn check(&mut self, pid: u16, client: u16, req_id: u32) -> RingCheck {
        let w = ring_way(req_id);
        // Another member of the RAS has this request id recorded (what keying by client
        // guards against).
        let other_member = self.rows.iter().enumerate().any(|(c, r)| {
            c != usize::from(client)
                && r.owner == pid
                && r.ways[w].is_some_and(|e| e.req_id == req_id)
        });
        self.cov.hit_if(other_member, Rule::RingKeyedByClient);
        let share = self.share;
        let Some(row) = self.own_row(pid, client) else {
            self.strangers += 1;
            self.cov.hit(Rule::RingKeyedByPid);
            return RingCheck::Stranger;
        };
        let unacked = row.unacked();
        match row.ways[w] {
            Some(e) if e.req_id == req_id => {
                let (s, v) = self.replay(e);
                RingCheck::Cached(s, v)
            }
            _ if share != 0 && unacked >= share => {
                self.over_share += 1;
                self.cov.hit(Rule::RingShareQuota);
                RingCheck::OverShare
            }
            Some(e) if !e.acked => {
                self.full += 1;
                self.cov.hit(Rule::RingFull);
                RingCheck::OverShare
            }
            _ => RingCheck::Execute,
        }
    }

    /// The recorded answer of `(pid, client, req_id)`, if its row is its RAS's and holds it,
    /// for a request the key check found stale (its epoch older than its RAS's): an attempt
    /// that executed before the epoch moved is answered again (counted as a replay), and
    /// nothing else changes (the request executes nothing).
    pub fn stale_replay(&mut self, pid: u16, client: u16, req_id: u32) -> Option<(Status, u64)> {
        let e = self.own_row(pid, client)?.ways[ring_way(req_id)].filter(|e| e.req_id == req_id)?;
        self.cov.hit(Rule::StaleReplay);
        Some(self.replay(e))
    }

    /// A request answered again from its entry: counted, its recorded status and value.
    fn replay(&mut self, e: Entry) -> (Status, u64) {
        self.replays += 1;
        self.cov.hit(Rule::RingReplays);
        (e.status, e.value)
    }

    /// Record the result of an executed atomic in its entry (after [`SyncUnit::check`]
    /// answered [`RingCheck::Execute`]).
    pub fn record(&mut self, pid: u16, client: u16, req_id: u32, status: Status, value: u64) {
        self.executed += 1;
        self.record_offload(pid, client, req_id, status, value);
    }

    /// Record the result of an offload's write (a Clio-KV put or delete) or an Append; not
    /// counted as an atomic. Nothing is recorded outside the RAS's own rows.
    pub fn record_offload(
        &mut self,
        pid: u16,
        client: u16,
        req_id: u32,
        status: Status,
        value: u64,
    ) {
        let Some(row) = self.own_row(pid, client) else {
            return;
        };
        let slot = &mut row.ways[ring_way(req_id)];
        let evicts = slot.is_some_and(|e| e.acked);
        *slot = Some(Entry {
            req_id,
            status,
            value,
            acked: false,
        });
        self.cov.hit_if(evicts, Rule::RingShareOwnSlots);
    }

    /// Record how an offload's write ended (a Clio-KV put or delete): its `arg0` with OK, or
    /// its error status with value 0, so a retry gets the same status back. A quota's
    /// refusal (QUOTA_EXCEEDED: the RAS holds its Clio-KV records) changed nothing and is not
    /// recorded: a retry runs again, as after RETRY_LATER.
    pub fn record_outcome(
        &mut self,
        pid: u16,
        client: u16,
        req_id: u32,
        outcome: Result<u64, Status>,
    ) {
        let (status, value) = match outcome {
            Ok(arg0) => (Status::Ok, arg0),
            Err(Status::QuotaExceeded) => return,
            Err(s) => (s, 0),
        };
        self.record_offload(pid, client, req_id, status, value);
    }

    /// The client got the result of `(pid, client, req_id)`: its entry may be replaced.
    pub fn ack(&mut self, pid: u16, client: u16, req_id: u32) {
        let mut freed = false;
        if let Some(e) = self
            .own_row(pid, client)
            .and_then(|r| r.ways[ring_way(req_id)].as_mut())
            .filter(|e| e.req_id == req_id)
        {
            freed = !e.acked;
            e.acked = true;
        }
        self.cov.hit_if(freed, Rule::CnAckFrees);
    }

    /// Unacknowledged results in the whole table.
    pub fn pending(&self) -> usize {
        self.rows.iter().map(Row::unacked).sum()
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
    fn a_row_replays_refuses_and_frees() {
        let mut s = SyncUnit::default();
        s.set_owner(3, 1);
        for i in 0..RING_WAYS as u32 {
            assert_eq!(s.check(1, 3, i), RingCheck::Execute);
            s.record(1, 3, i, Status::Ok, u64::from(i) * 10);
        }
        assert_eq!(s.check(1, 3, 5), RingCheck::Cached(Status::Ok, 50));
        // The next id whose entry is request 0's, unacknowledged: refused as at the share.
        let next = (1..)
            .find(|&i| ring_way(i) == ring_way(0) && i > 15)
            .unwrap();
        assert_eq!(s.check(1, 3, next), RingCheck::OverShare);
        assert_eq!((s.full, s.over_share), (1, 0));
        s.ack(1, 3, 0);
        assert_eq!(s.check(1, 3, next), RingCheck::Execute);
        s.record(1, 3, next, Status::Ok, 7);
        assert_eq!(s.check(1, 3, next), RingCheck::Cached(Status::Ok, 7));
        assert_eq!(s.check(1, 3, 0), RingCheck::OverShare, "0 was replaced");
        assert_eq!(s.check(2, 3, 1), RingCheck::Stranger, "another RAS");
        assert_eq!(s.check(1, 4, 1), RingCheck::Stranger, "nobody's row");
        assert_eq!(
            s.check(1, u16::MAX, 1),
            RingCheck::Stranger,
            "beyond the table"
        );
        s.set_owner(4, 1);
        assert_eq!(
            s.check(1, 4, 1),
            RingCheck::Execute,
            "another member of the same RAS, same id: not a replay"
        );
        assert_eq!(s.strangers, 3);
    }

    #[test]
    fn the_share_counts_unacknowledged_results() {
        let mut s = SyncUnit::default();
        s.set_owner(1, 9);
        s.set_share(2);
        for i in 0..2 {
            assert_eq!(s.check(9, 1, i), RingCheck::Execute);
            s.record(9, 1, i, Status::Ok, 0);
        }
        assert_eq!(s.check(9, 1, 2), RingCheck::OverShare);
        assert_eq!(
            s.check(9, 1, 1),
            RingCheck::Cached(Status::Ok, 0),
            "replays pass"
        );
        s.ack(9, 1, 0);
        assert_eq!(s.check(9, 1, 2), RingCheck::Execute);
        assert_eq!(s.over_share, 1);
    }

    #[test]
    fn a_member_evicts_only_its_own_results() {
        let mut s = SyncUnit::default();
        s.set_owner(1, 1);
        s.set_owner(2, 2);
        // The victim records and acknowledges one result.
        s.record(2, 2, 7, Status::Ok, 70);
        s.ack(2, 2, 7);
        // A flooder of another RAS records thousands, under its own client id and the
        // victim's.
        for i in 0..4 * RING_WAYS as u32 {
            if s.check(1, 1, i) == RingCheck::Execute {
                s.record(1, 1, i, Status::Ok, 0);
                s.ack(1, 1, i);
            }
            assert_eq!(s.check(1, 2, i), RingCheck::Stranger);
            s.record(1, 2, i, Status::Ok, 0);
        }
        assert_eq!(s.check(2, 2, 7), RingCheck::Cached(Status::Ok, 70));
    }

    #[test]
    fn a_row_handed_on_is_empty() {
        let mut s = SyncUnit::default();
        s.set_owner(5, 1);
        s.record(1, 5, 7, Status::Ok, 70);
        s.set_owner(5, clio_proto::ring::RING_NO_OWNER);
        assert_eq!(s.check(1, 5, 7), RingCheck::Stranger, "the member left");
        s.set_owner(5, 1);
        assert_eq!(
            s.check(1, 5, 7),
            RingCheck::Execute,
            "emptied: nothing replayed"
        );
        assert_eq!(s.pending(), 0);
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
