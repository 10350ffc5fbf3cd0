//! Quotas on what tenants share at one node: every limit, its default, the status that
//! reports it and the operator's flag that raises it.
//!
//! A request refused by a quota is answered [`crate::Status::QuotaExceeded`] with the
//! [`Quota`] in the response's `arg1` (by the slow path, and by the fast path for
//! [`Quota::RingShare`]), so a client can name the limit and the flag
//! (`clio board --FLAG`, and the same flag of `clio-slowpath`). The defaults protect a shared
//! node out of the box: one source address, or one remote address space (RAS), cannot take
//! more than half of a shared table or of the memory.

use crate::consts::{KEY_TABLE_ENTRIES, RING_MEMBERS, RING_WAYS};

/// Which limit refused a request (the `arg1` of a [`crate::Status::QuotaExceeded`] answer).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Quota {
    /// Remote address spaces alive that were registered from one source address.
    RasPerSource = 1,
    /// Memory (pages) allocated by one RAS.
    MemoryPerRas = 2,
    /// Placement work one allocation may cost the slow path (pages hashed against the
    /// shadow page table while looking for an overflow-free range).
    PlacementWork = 3,
    /// Unacknowledged results (atomics, Append, Clio-KV writes) one member may hold in its row
    /// of the idempotence table (the fast path: model and RTL); at the share it is refused
    /// until it acknowledges one. Rows are per member, so this bounds only the member itself.
    RingShare = 4,
    /// Clio-KV records one RAS may hold (the fast path's Clio-KV unit, model and RTL: a put of
    /// a new key while the RAS's count is at the limit changes nothing and is not recorded in
    /// the idempotence ring; `proto::kv::SB_RAS_RECORDS`).
    KvRecords = 5,
    /// Members (client ids, each a row of the fast path's idempotence table) alive that were
    /// created from one source address, by Register or Join.
    MembersPerSource = 6,
}

impl Quota {
    /// Every quota.
    pub const ALL: [Quota; 6] = [
        Quota::RasPerSource,
        Quota::MemoryPerRas,
        Quota::PlacementWork,
        Quota::RingShare,
        Quota::KvRecords,
        Quota::MembersPerSource,
    ];

    /// Decode an `arg1`; `None` for values no quota has.
    pub fn from_u64(v: u64) -> Option<Quota> {
        Self::ALL.iter().copied().find(|q| *q as u64 == v)
    }

    /// The flag of `clio board` (and of `clio-slowpath`) that sets this limit.
    pub fn flag(self) -> &'static str {
        match self {
            Quota::RasPerSource => "--max-ras-per-source",
            Quota::MemoryPerRas => "--max-ras-memory",
            Quota::PlacementWork => "--placement-budget",
            Quota::RingShare => "--ring-share",
            Quota::KvRecords => "--max-ras-kv-records",
            Quota::MembersPerSource => "--max-members-per-source",
        }
    }

    /// What is limited, in words.
    pub fn describe(self) -> &'static str {
        match self {
            Quota::RasPerSource => "remote address spaces registered from one source address",
            Quota::MemoryPerRas => "memory allocated by one remote address space",
            Quota::PlacementWork => "placement work of one allocation",
            Quota::RingShare => {
                "unacknowledged results (atomics, Append, Clio-KV writes) held by one member"
            }
            Quota::KvRecords => "Clio-KV records held by one remote address space",
            Quota::MembersPerSource => "members (client ids) created from one source address",
        }
    }
}

impl core::fmt::Display for Quota {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{} (raise it with {})", self.describe(), self.flag())
    }
}

/// Default of [`Quota::RasPerSource`]: half of the PIDs (the key table's entries less the
/// never-valid PID 0), so one source can never fill the table.
pub const DEFAULT_RAS_PER_SOURCE: u32 = ((KEY_TABLE_ENTRIES - 1) / 2) as u32;

/// Default of [`Quota::MemoryPerRas`] in percent of the node's data memory.
pub const DEFAULT_RAS_MEMORY_PERCENT: u64 = 50;

/// Default of [`Quota::PlacementWork`]: pages hashed against the shadow page table for one
/// allocation. 2^22 bounds the worst single allocation to about a hundred milliseconds of
/// one core (docs/perf.md, "Isolation") while leaving every allocation up to 4 Mi pages (16
/// GiB of 4 KiB pages) room for retries; 0 would refuse every allocation.
pub const DEFAULT_PLACEMENT_BUDGET: u64 = 1 << 22;

/// Default of [`Quota::RingShare`]: the member's whole row. Each member's results live in
/// its own row, so the share protects nobody else; an operator may lower it to make clients
/// acknowledge sooner.
pub const DEFAULT_RING_SHARE: u8 = RING_WAYS as u8;

/// Default of [`Quota::MembersPerSource`]: half of the client ids (the idempotence table's
/// rows less row 0), so one host cannot keep every other from registering or joining.
pub const DEFAULT_MEMBERS_PER_SOURCE: u32 = ((RING_MEMBERS - 1) / 2) as u32;

/// Default of [`Quota::KvRecords`] in percent of the store's records.
pub const DEFAULT_KV_RECORDS_PERCENT: u64 = 50;

/// The default record limit of one RAS in a Clio-KV store of `records` slots (which holds at
/// most `records - 1` keys).
pub fn default_ras_kv_records(records: u64) -> u64 {
    (records * DEFAULT_KV_RECORDS_PERCENT / 100).max(1)
}

/// The default memory limit of one RAS on a node with `data_pages` pages of data memory.
pub fn default_ras_pages(data_pages: u64) -> u64 {
    (data_pages * DEFAULT_RAS_MEMORY_PERCENT / 100).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_flags_are_distinct() {
        for q in Quota::ALL {
            assert_eq!(Quota::from_u64(q as u64), Some(q));
        }
        assert_eq!(Quota::from_u64(0), None);
        let mut flags: Vec<_> = Quota::ALL.iter().map(|q| q.flag()).collect();
        flags.sort_unstable();
        flags.dedup();
        assert_eq!(flags.len(), Quota::ALL.len());
    }

    #[test]
    fn defaults_leave_the_other_half() {
        assert!(2 * DEFAULT_RAS_PER_SOURCE as usize <= KEY_TABLE_ENTRIES - 1);
        assert_eq!(default_ras_pages(1000), 500);
        assert_eq!(default_ras_pages(1), 1);
        assert_eq!(default_ras_kv_records(21), 10);
        assert_eq!(default_ras_kv_records(1), 1);
        const { assert!(DEFAULT_RING_SHARE as usize <= RING_WAYS && DEFAULT_RING_SHARE > 0) };
        const { assert!(2 * DEFAULT_MEMBERS_PER_SOURCE as usize <= RING_MEMBERS - 1) };
    }
}
