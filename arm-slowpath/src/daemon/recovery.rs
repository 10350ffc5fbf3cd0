//! Rebuilding the slow path after a stop or crash: the metadata log says which remote address
//! spaces, keys, members and regions exist; the page table in DRAM says which pages were
//! placed where and which frames they hold. Recovery trusts the log for *what* exists and the
//! page table for *where* it is, and repairs the page table where the two disagree (a crash
//! can fall between a logged change and the PTE writes that carry it out). Last, committed
//! transaction records that were not applied yet are rolled forward ([`super::tx`]).

use super::tx::TxLog;
use super::{SlowPath, SlowPathConfig};
use crate::frame_memory::FrameMemory;
use crate::meta_log::MetaLog;
use crate::va_space::{Region, VaSpace};
use clio_proto::consts::{BUCKET_SLOTS, PTE_BYTES, VA_LIMIT};
use clio_proto::layout::MemoryLayout;
use clio_proto::persist::MetaRecord;
use clio_proto::pte::Pte;
use clio_proto::ring::Descriptor;
use std::collections::{BTreeMap, BTreeSet};
use std::time::Instant;

/// What recovery found and did (for the operator and the tests).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoveryReport {
    /// Log records read.
    pub records: u64,
    /// Remote address spaces restored (with their keys).
    pub spaces: u64,
    /// Members restored (with fresh leases).
    pub members: u64,
    /// Regions restored.
    pub regions: u64,
    /// Pages found mapped to a frame.
    pub mapped_pages: u64,
    /// PTEs written again because the log has their region but the table did not.
    pub ptes_rewritten: u64,
    /// PTEs cleared because no logged region owns them (a free or teardown cut short).
    pub ptes_cleared: u64,
    /// Frames the fast path's free-page buffer still holds (a daemon restart while the fast
    /// path ran on); zero after a restart of the whole node.
    pub frames_in_buffer: u64,
    /// Region pages whose bucket had no room left for their PTE (never expected: placement
    /// was checked when they were allocated); such regions are dropped.
    pub unplaceable_pages: u64,
    /// Transaction logs restored.
    pub tx_logs: u64,
    /// Committed transaction records applied by the roll-forward (their commit was in
    /// flight when the node stopped).
    pub tx_applied: u64,
    /// Committed records dropped because a target was no longer writable or had no frame.
    pub tx_dropped: u64,
}

#[derive(Default)]
struct Space {
    key: u64,
    epoch: u16,
    members: BTreeMap<u16, u64>,
    regions: BTreeMap<u64, Region>,
    tx_logs: BTreeMap<u64, TxLog>,
}

fn replay(records: &[MetaRecord]) -> (BTreeMap<u16, Space>, BTreeSet<u64>) {
    let mut spaces: BTreeMap<u16, Space> = BTreeMap::new();
    let mut pushed = BTreeSet::new();
    for r in records {
        match *r {
            MetaRecord::RasCreate { pid, key } => {
                spaces.insert(
                    pid,
                    Space {
                        key,
                        ..Space::default()
                    },
                );
            }
            MetaRecord::RasRetire { pid } => {
                spaces.remove(&pid);
            }
            MetaRecord::RasEpoch { pid, epoch } => {
                if let Some(s) = spaces.get_mut(&pid) {
                    s.epoch = epoch;
                }
            }
            MetaRecord::MemberAdd { pid, client, nonce } => {
                if let Some(s) = spaces.get_mut(&pid) {
                    s.members.insert(client, nonce);
                }
            }
            MetaRecord::MemberRemove { pid, client } => {
                if let Some(s) = spaces.get_mut(&pid) {
                    s.members.remove(&client);
                }
            }
            MetaRecord::RegionAdd {
                pid,
                start_vpn,
                pages,
                perms,
            } => {
                if let Some(s) = spaces.get_mut(&pid) {
                    s.regions.insert(
                        start_vpn,
                        Region {
                            start_vpn,
                            pages,
                            perms,
                        },
                    );
                }
            }
            MetaRecord::RegionRemove { pid, start_vpn } => {
                if let Some(s) = spaces.get_mut(&pid) {
                    s.regions.remove(&start_vpn);
                }
            }
            MetaRecord::FramePushed { pfn } => {
                pushed.insert(pfn);
            }
            MetaRecord::TxLogAdd {
                pid,
                client,
                va,
                bytes,
            } => {
                if let Some(s) = spaces.get_mut(&pid) {
                    s.tx_logs.insert(
                        va,
                        TxLog {
                            client,
                            bytes,
                            resolved: 0,
                            applied: false,
                        },
                    );
                }
            }
            MetaRecord::TxResolved {
                pid,
                va,
                seq,
                applied,
            } => {
                if let Some(l) = spaces.get_mut(&pid).and_then(|s| s.tx_logs.get_mut(&va)) {
                    l.resolved = seq;
                    l.applied = applied;
                }
            }
            MetaRecord::TxLogRemove { pid, va } => {
                if let Some(s) = spaces.get_mut(&pid) {
                    s.tx_logs.remove(&va);
                }
            }
        }
    }
    (spaces, pushed)
}

fn region_of(s: &Space, vpn: u64) -> Option<&Region> {
    s.regions
        .range(..=vpn)
        .next_back()
        .map(|(_, r)| r)
        .filter(|r| vpn < r.end_vpn())
}

impl SlowPath {
    /// Rebuild a slow path from its log's `records` and the node's DRAM `mem` (the page table
    /// is read from it; committed transaction records are applied in it). `fast_path_fresh`: the fast path was reset since the log
    /// was written (a restart of the whole node: its free-page buffer, key table and TLB are
    /// empty); false when only the daemon restarted. The repairs (key-table entries, PTE
    /// writes and clears) wait in the outbox, ahead of anything else; the log is compacted to
    /// the recovered state.
    pub fn recover(
        layout: MemoryLayout,
        cfg: SlowPathConfig,
        mut log: MetaLog,
        records: &[MetaRecord],
        mem: &mut dyn FrameMemory,
        fast_path_fresh: bool,
        now: Instant,
    ) -> (SlowPath, RecoveryReport) {
        let mut rep = RecoveryReport {
            records: records.len() as u64,
            ..RecoveryReport::default()
        };
        let (spaces, mut pushed) = replay(records);
        let mut page_table = vec![0u8; layout.pt_bytes() as usize];
        if !mem.read(layout.pt_base, &mut page_table) {
            // Not readable: every page is treated as unmapped (PTEs are placed again).
            page_table.clear();
        }
        let mut sp = SlowPath::with_config(layout, cfg);
        // Spaces, keys and members; the key table is volatile: program it again.
        for (&pid, s) in &spaces {
            sp.registry.restore_space(pid, s.key, s.epoch);
            sp.outbox.push_back(Descriptor::KeyWrite {
                pid,
                key: s.key,
                epoch: s.epoch,
            });
            for (&client, &nonce) in &s.members {
                sp.registry.restore_member(pid, client, nonce, now);
                // The idempotence table is volatile too: the member's row, emptied, is its
                // RAS's again (a result recorded before the restart is not replayed after it).
                sp.outbox.push_back(Descriptor::RingOwner { pid, client });
                rep.members += 1;
            }
            let mut va = VaSpace::new(VA_LIMIT >> layout.page_shift);
            for r in s.regions.values() {
                va.insert(*r);
                sp.promised_pages += r.pages;
                rep.regions += 1;
            }
            sp.procs.insert(pid, va);
            for (&at, l) in &s.tx_logs {
                sp.tx_logs.insert((pid, at), *l);
                rep.tx_logs += 1;
            }
            rep.spaces += 1;
        }
        if !fast_path_fresh {
            // A departed member's row handed back to nobody may have been lost with the
            // daemon: every row no restored member holds is emptied and nobody's.
            for client in sp.registry.free_clients() {
                sp.outbox.push_back(Descriptor::RingOwner {
                    pid: clio_proto::ring::RING_NO_OWNER,
                    client,
                });
            }
        }
        // The page table: keep what a logged region owns, clear the rest.
        let buckets = layout.bucket_count();
        for bucket in 0..buckets {
            let base = (layout.bucket_addr(bucket) - layout.pt_base) as usize;
            for slot in 0..BUCKET_SLOTS {
                let at = base + slot * PTE_BYTES;
                let Some(b) = page_table.get(at..at + PTE_BYTES) else {
                    continue;
                };
                let mut raw = [0u8; PTE_BYTES];
                raw.copy_from_slice(b);
                let pte = Pte::from_bytes(&raw);
                if !pte.used {
                    continue;
                }
                let owned = spaces
                    .get(&pte.pid)
                    .and_then(|s| region_of(s, pte.vpn))
                    .is_some_and(|r| r.perms == pte.perms);
                let placed = owned
                    && sp
                        .shadow
                        .insert_at(bucket, slot as u32, pte.pid, pte.vpn, pte.perms);
                if !placed {
                    rep.ptes_cleared += 1;
                    sp.outbox.push_back(Descriptor::PteWrite {
                        bucket,
                        slot: slot as u32,
                        pte: Pte::default(),
                    });
                    continue;
                }
                if !pte.valid {
                    continue;
                }
                if layout.is_data_pfn(pte.pfn) && sp.frames.take(pte.pfn) {
                    sp.shadow.set_mapped(pte.pid, pte.vpn, pte.pfn);
                    pushed.remove(&pte.pfn);
                    rep.mapped_pages += 1;
                } else {
                    // A frame that is not a data frame, or that another page holds: the
                    // table is damaged here. Keep the page allocated but unmapped (it reads
                    // zeros again) rather than let two pages share a frame.
                    rep.ptes_rewritten += 1;
                    sp.outbox.push_back(Descriptor::PteWrite {
                        bucket,
                        slot: slot as u32,
                        pte: Pte::allocated(pte.pid, pte.vpn, pte.perms),
                    });
                }
            }
        }
        // Pages of logged regions that have no PTE yet (a crash between the log and the PTE
        // writes): place them now.
        for (&pid, s) in &spaces {
            for r in s.regions.values() {
                for vpn in r.start_vpn..r.end_vpn() {
                    if sp.shadow.get(pid, vpn).is_some() {
                        continue;
                    }
                    match sp.shadow.insert(pid, vpn, r.perms) {
                        Some(e) => {
                            rep.ptes_rewritten += 1;
                            sp.outbox.push_back(Descriptor::PteWrite {
                                bucket: e.bucket,
                                slot: e.slot,
                                pte: Pte::allocated(pid, vpn, r.perms),
                            });
                        }
                        None => rep.unplaceable_pages += 1,
                    }
                }
            }
        }
        // Frames handed to the free-page buffer and not mapped: after a node restart the
        // buffer is empty and they are free; after a daemon restart the buffer still holds
        // them and the fast path will report them as it maps them.
        if !fast_path_fresh {
            for pfn in pushed {
                if sp.frames.take(pfn) {
                    sp.in_buffer.insert(pfn);
                }
            }
            rep.frames_in_buffer = sp.in_buffer.len() as u64;
        }
        let snapshot = sp.snapshot();
        let _ = log.compact(&snapshot);
        sp.log = Some(log);
        let rolled = sp.tx_roll_forward(mem);
        rep.tx_applied = rolled.applied;
        rep.tx_dropped = rolled.dropped;
        (sp, rep)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta_log::Opened;
    use clio_proto::persist::META_BYTES;
    use clio_proto::pte::{PERM_READ, PERM_WRITE};
    use std::time::Duration;

    const DRAM: u64 = 64 << 20;

    fn layout() -> MemoryLayout {
        MemoryLayout::new(DRAM, 16).unwrap()
    }

    fn cfg() -> SlowPathConfig {
        SlowPathConfig {
            keys: crate::KeySource::seeded(3),
            lease: Duration::from_secs(10),
            ..SlowPathConfig::default()
        }
    }

    /// Apply the PTE writes a slow path sent to a page-table image (what the fast path does).
    fn apply(sp: &mut SlowPath, table: &mut [u8]) {
        for d in sp.outbox.drain(..) {
            if let Descriptor::PteWrite { bucket, slot, pte } = d {
                let at = (layout().bucket_addr(bucket) - layout().pt_base) as usize
                    + slot as usize * PTE_BYTES;
                table[at..at + PTE_BYTES].copy_from_slice(&pte.to_bytes());
            }
        }
    }

    fn reopen(sp: &mut SlowPath) -> (MetaLog, Vec<MetaRecord>) {
        let mut store = sp.log.take().unwrap().into_store();
        let bytes = store.bytes().to_vec();
        match MetaLog::open(Box::new(bytes), DRAM, 16).unwrap() {
            (log, Opened::Recovered(r)) => (log, r),
            (_, Opened::Formatted) => panic!("the log was empty"),
        }
    }

    #[test]
    fn the_state_comes_back_and_the_table_is_repaired() {
        let now = Instant::now();
        let (log, _) = MetaLog::open(Box::new(vec![0u8; META_BYTES as usize]), DRAM, 16).unwrap();
        let mut sp = SlowPath::with_log(layout(), cfg(), log);
        let mut table = vec![0u8; layout().pt_bytes() as usize];
        let mut mem = vec![0u8; DRAM as usize];
        let (pid, key, c1) = sp.register_at(1, now).unwrap();
        let c2 = sp.join_at(pid, 2, now).unwrap();
        let keep = sp.alloc(pid, 3 << 16, PERM_READ | PERM_WRITE).unwrap();
        let gone = sp.alloc(pid, 2 << 16, PERM_READ).unwrap();
        // What `execute` does with an allocation: its PTE writes.
        for o in [&keep, &gone] {
            for &(bucket, slot, pte) in &o.ptes {
                sp.outbox
                    .push_back(Descriptor::PteWrite { bucket, slot, pte });
            }
        }
        sp.refill(&mut mem);
        // Two pages of `keep` are faulted in with frames from the buffer.
        let frames: Vec<u64> = sp.in_buffer.iter().copied().take(2).collect();
        for (i, pfn) in frames.iter().enumerate() {
            let vpn = (keep.va >> 16) + i as u64;
            let e = *sp.shadow.get(pid, vpn).unwrap();
            let mut pte = Pte::allocated(pid, vpn, PERM_READ | PERM_WRITE);
            pte.valid = true;
            pte.pfn = *pfn;
            sp.outbox.push_back(Descriptor::PteWrite {
                bucket: e.bucket,
                slot: e.slot,
                pte,
            });
            sp.page_mapped(pid, vpn, *pfn);
        }
        sp.free(pid, gone.va).unwrap();
        apply(&mut sp, &mut table);
        // A crash now: the free of `gone` was logged, but its PTEs were never cleared (the
        // descriptors above did not include the clears: `free` returned them to the caller).
        let (free_before, promised_before) = (sp.free_frames(), sp.promised_pages);
        // And a region allocated and logged whose PTE writes never reached the table.
        let lost = sp.alloc(pid, 1 << 16, PERM_READ | PERM_WRITE).unwrap();
        // The RAS was fenced at epoch 9 (raised twice: the log keeps the last).
        assert_eq!(sp.set_epoch(pid, 8), Ok(8));
        assert_eq!(sp.set_epoch(pid, 9), Ok(9));
        sp.outbox.clear();
        let (log, records) = reopen(&mut sp);
        let (mut r, rep) = SlowPath::recover(layout(), cfg(), log, &records, &mut table, true, now);
        assert_eq!(rep.spaces, 1);
        assert_eq!(rep.members, 2);
        assert_eq!(rep.regions, 2, "keep and lost; gone was freed");
        assert_eq!(rep.mapped_pages, 2);
        assert_eq!(rep.ptes_cleared, 2, "the freed region's stale PTEs");
        assert_eq!(rep.ptes_rewritten, 1, "the lost region's PTE");
        assert_eq!(r.registry.key(pid), Some(key));
        assert_eq!(r.registry.members(pid), 2);
        assert_eq!(r.registry.epoch(pid), Some(9));
        assert!(
            r.outbox
                .contains(&Descriptor::KeyWrite { pid, key, epoch: 9 }),
            "the fence survives the restart"
        );
        for (i, pfn) in frames.iter().enumerate() {
            let vpn = (keep.va >> 16) + i as u64;
            assert_eq!(r.shadow.get(pid, vpn).unwrap().pfn, Some(*pfn));
        }
        assert!(r.shadow.get(pid, lost.va >> 16).is_some());
        // After a node restart the buffer is empty: only the two mapped frames are in use.
        assert_eq!(r.free_frames(), free_before + 30);
        assert_eq!(r.promised_pages, promised_before + 1);
        // A retried Join (same nonce) gets the same client id; a new member gets a new one.
        assert_eq!(r.join_at(pid, 2, now).unwrap(), c2);
        let c3 = r.join_at(pid, 3, now).unwrap();
        assert!(c3 != c1 && c3 != c2);
        // Allocation goes on without clashing with what was recovered.
        let more = r.alloc(pid, 4 << 16, PERM_READ).unwrap();
        assert!(more.va >= lost.va + (1 << 16) || more.va + (4 << 16) <= keep.va);
        // And the compacted log recovers the same again.
        for &(bucket, slot, pte) in &more.ptes {
            r.outbox
                .push_back(Descriptor::PteWrite { bucket, slot, pte });
        }
        apply(&mut r, &mut table);
        let (log, records) = reopen(&mut r);
        let (r2, rep2) = SlowPath::recover(layout(), cfg(), log, &records, &mut table, true, now);
        assert_eq!(
            (rep2.regions, rep2.ptes_cleared, rep2.ptes_rewritten),
            (3, 0, 0)
        );
        assert_eq!(r2.registry.members(pid), 3);
    }

    #[test]
    fn a_daemon_restart_keeps_the_frames_the_buffer_still_holds() {
        let now = Instant::now();
        let (log, _) = MetaLog::open(Box::new(vec![0u8; META_BYTES as usize]), DRAM, 16).unwrap();
        let mut sp = SlowPath::with_log(layout(), cfg(), log);
        let mut table = vec![0u8; layout().pt_bytes() as usize];
        let mut mem = vec![0u8; DRAM as usize];
        sp.register_at(1, now).unwrap();
        sp.refill(&mut mem);
        let buffered: Vec<u64> = sp.in_buffer.iter().copied().collect();
        let free = sp.free_frames();
        let (log, records) = reopen(&mut sp);
        let (r, rep) = SlowPath::recover(layout(), cfg(), log, &records, &mut table, false, now);
        assert_eq!(rep.frames_in_buffer, buffered.len() as u64);
        assert_eq!(
            r.free_frames(),
            free,
            "no frame of the buffer is handed out twice"
        );
        assert_eq!(r.in_buffer.iter().copied().collect::<Vec<_>>(), buffered);
    }
}
