//! Transactions (`clio_proto::tx`): registering a member's transaction logs and applying the
//! committed redo records in them, live ([`clio_proto::Opcode::TxApply`]) and at recovery.
//!
//! The slow path applies a record because it saves round trips: a commit is the durable write
//! of the record plus one `TxApply`, whatever the number of writes in it (applying from the CN
//! would add a round of writes and a durable "applied" mark). The applied sequence number of
//! each log lives in the node's metadata log, not in the client's memory, so a client cannot
//! make the node apply a record twice.
//!
//! Everything in a log is the client's: the record is parsed with every length checked, and
//! every target must lie in the RAS's own regions, be writable and have a frame *before* any
//! byte is written, so a refused record changes nothing.

use super::{AllocError, SlowPath};
use crate::frame_memory::FrameMemory;
use clio_proto::persist::MetaRecord;
use clio_proto::pte::PERM_WRITE;
use clio_proto::tx::{self, TxRecord, TX_HEADER_BYTES, TX_MAX_LOGS_PER_RAS, TX_MAX_RECORD_BYTES};

/// A registered transaction log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxLog {
    /// The member that writes it.
    pub client: u16,
    /// Bytes of its region.
    pub bytes: u64,
    /// Highest sequence number resolved (0: none yet).
    pub resolved: u64,
    /// Whether that one was applied (false: dropped).
    pub applied: bool,
}

/// Why a record cannot be applied now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxRefusal {
    /// A request error (its wire status).
    Error(AllocError),
    /// The page of this address has no frame yet: the client touches it and retries.
    Untouched(u64),
}

impl From<AllocError> for TxRefusal {
    fn from(e: AllocError) -> TxRefusal {
        TxRefusal::Error(e)
    }
}

/// Outcome of a roll-forward at recovery.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RollForward {
    /// Committed records applied.
    pub applied: u64,
    /// Committed records that could not be applied (dropped).
    pub dropped: u64,
    /// Logs whose record was torn or absent, or already resolved.
    pub nothing: u64,
}

impl SlowPath {
    /// Register `[va, va + bytes)` of `pid` as a transaction log of member `client`, or
    /// re-open it (same member, same size): the log's resolved sequence number, above which
    /// the member numbers its next record. The region must be the RAS's and writable, and the
    /// node must have a persistence domain. A region registered anew may still hold a record
    /// of an earlier registration: its sequence number counts as resolved (dropped), so it is
    /// never applied now.
    pub fn tx_log_add(
        &mut self,
        pid: u16,
        client: u16,
        va: u64,
        bytes: u64,
        mem: &dyn FrameMemory,
    ) -> Result<u64, AllocError> {
        if !mem.is_persistent() {
            return Err(AllocError::NotPersistent);
        }
        if bytes < TX_HEADER_BYTES as u64 || va.checked_add(bytes).is_none() {
            return Err(AllocError::BadRequest);
        }
        self.check_writable(pid, va, bytes)?;
        if let Some(l) = self.tx_logs.get(&(pid, va)) {
            // A retry of the same registration (or the same member again): nothing to do.
            return if l.client == client && l.bytes == bytes {
                Ok(l.resolved)
            } else {
                Err(AllocError::BadRequest)
            };
        }
        if self.tx_logs.keys().filter(|(p, _)| *p == pid).count() >= TX_MAX_LOGS_PER_RAS {
            return Err(AllocError::TableFull(crate::ras::RasError::MembersFull));
        }
        let overlaps = self
            .tx_logs
            .iter()
            .any(|(&(p, v), l)| p == pid && va < v + l.bytes && v < va + bytes);
        if overlaps {
            return Err(AllocError::BadRequest);
        }
        // The sequence number of whatever the region holds (sealed or torn alike).
        let old_seq = self
            .read_va(pid, va, TX_HEADER_BYTES, mem)
            .filter(|head| tx::declared_len(head).is_some())
            .map_or(0, |head| {
                let mut seq = [0u8; 8];
                seq.copy_from_slice(&head[8..16]);
                u64::from_le_bytes(seq)
            });
        let mut recs = vec![MetaRecord::TxLogAdd {
            pid,
            client,
            va,
            bytes,
        }];
        if old_seq > 0 {
            recs.push(MetaRecord::TxResolved {
                pid,
                va,
                seq: old_seq,
                applied: false,
            });
        }
        self.persist_log(&recs);
        self.tx_logs.insert(
            (pid, va),
            TxLog {
                client,
                bytes,
                resolved: old_seq,
                applied: false,
            },
        );
        Ok(old_seq)
    }

    /// Every page of `[va, va + len)` lies in a writable region of `pid`.
    fn check_writable(&self, pid: u16, va: u64, len: u64) -> Result<(), AllocError> {
        let space = self
            .procs
            .get(&pid)
            .ok_or(AllocError::UnknownProcess(pid))?;
        let end = va.checked_add(len).ok_or(AllocError::BadRequest)?;
        let mut vpn = self.layout().vpn(va);
        while vpn << self.layout().page_shift < end {
            let r = space
                .lookup(vpn)
                .ok_or(AllocError::NotAllocated(vpn << self.layout().page_shift))?;
            if r.perms & PERM_WRITE == 0 {
                return Err(AllocError::ReadOnly(vpn << self.layout().page_shift));
            }
            vpn = r.end_vpn();
        }
        Ok(())
    }

    /// The physical chunks of `[va, va + len)` of `pid`: `(pa, len)` per page, or the address
    /// of the first page that has no frame.
    fn phys_chunks(&self, pid: u16, va: u64, len: u64) -> Result<Vec<(u64, u64)>, u64> {
        let page = self.layout().page_size();
        let mut v = Vec::new();
        let mut at = va;
        let end = va + len;
        while at < end {
            let vpn = self.layout().vpn(at);
            let off = self.layout().page_offset(at);
            let n = (page - off).min(end - at);
            match self.shadow.get(pid, vpn).and_then(|e| e.pfn) {
                Some(pfn) => v.push((self.layout().phys_addr(pfn, off), n)),
                None => return Err(at - off),
            }
            at += n;
        }
        Ok(v)
    }

    /// `n` bytes at `va` of `pid` from DRAM; `None` if a page has no frame.
    fn read_va(&self, pid: u16, va: u64, n: usize, mem: &dyn FrameMemory) -> Option<Vec<u8>> {
        let mut buf = vec![0u8; n];
        let mut done = 0usize;
        for (pa, len) in self.phys_chunks(pid, va, n as u64).ok()? {
            let len = len as usize;
            if !mem.read(pa, &mut buf[done..done + len]) {
                return None;
            }
            done += len;
        }
        Some(buf)
    }

    /// Read the record at the head of the log `(pid, va)` from DRAM.
    fn read_record(&self, pid: u16, va: u64, bytes: u64, mem: &dyn FrameMemory) -> Option<Vec<u8>> {
        let head = self.read_va(pid, va, TX_HEADER_BYTES, mem)?;
        let total = tx::declared_len(&head)?;
        if total as u64 > bytes || total > TX_MAX_RECORD_BYTES {
            return None;
        }
        self.read_va(pid, va, total, mem)
    }

    /// Check every target of `rec` (writable region of `pid`, page mapped) and return the
    /// physical chunks of each entry, or why not. Nothing is written.
    fn plan(&self, pid: u16, rec: &TxRecord<'_>) -> Result<Vec<Vec<(u64, u64)>>, TxRefusal> {
        let mut plan = Vec::with_capacity(rec.entries.len());
        for e in &rec.entries {
            self.check_writable(pid, e.va, e.data.len() as u64)?;
            plan.push(
                self.phys_chunks(pid, e.va, e.data.len() as u64)
                    .map_err(TxRefusal::Untouched)?,
            );
        }
        Ok(plan)
    }

    /// Write the planned entries, flush them, and record the log's new applied sequence.
    fn write_planned(
        &mut self,
        pid: u16,
        va: u64,
        rec: &TxRecord<'_>,
        plan: &[Vec<(u64, u64)>],
        mem: &mut dyn FrameMemory,
    ) -> Result<(), AllocError> {
        for (e, chunks) in rec.entries.iter().zip(plan) {
            let mut done = 0usize;
            for &(pa, n) in chunks {
                let n = n as usize;
                if !mem.write(pa, &e.data[done..done + n]) {
                    return Err(AllocError::NotPersistent);
                }
                done += n;
            }
        }
        for &(pa, n) in plan.iter().flatten() {
            if !mem.persist(pa, n) {
                return Err(AllocError::NotPersistent);
            }
        }
        self.resolve(pid, va, rec.seq, true);
        self.stats_mut().tx_applied += 1;
        Ok(())
    }

    fn resolve(&mut self, pid: u16, va: u64, seq: u64, applied: bool) {
        self.persist_log(&[MetaRecord::TxResolved {
            pid,
            va,
            seq,
            applied,
        }]);
        if let Some(l) = self.tx_logs.get_mut(&(pid, va)) {
            l.resolved = seq;
            l.applied = applied;
        }
    }

    /// Serve `TxApply` of the log at `va` of `pid`: the sequence number applied.
    pub fn tx_apply(
        &mut self,
        pid: u16,
        va: u64,
        mem: &mut dyn FrameMemory,
    ) -> Result<u64, TxRefusal> {
        let log = *self.tx_logs.get(&(pid, va)).ok_or(AllocError::BadRequest)?;
        let bytes = self
            .read_record(pid, va, log.bytes, mem)
            .ok_or(AllocError::BadRequest)?;
        let rec = tx::parse(&bytes).map_err(|_| AllocError::BadRequest)?;
        if rec.seq <= log.resolved {
            // A retry, or a record recovery already resolved.
            return if rec.seq == log.resolved && !log.applied {
                Err(AllocError::Aborted.into())
            } else {
                Ok(rec.seq)
            };
        }
        let plan = self.plan(pid, &rec)?;
        self.write_planned(pid, va, &rec, &plan, mem)?;
        Ok(rec.seq)
    }

    /// Forget the logs of `pid` (every one, or those of `client`, or the one inside a freed
    /// range `[lo, hi)`): a record not applied by then is never applied.
    pub(crate) fn tx_logs_remove(&mut self, pid: u16, which: impl Fn(u64, &TxLog) -> bool) {
        let gone: Vec<u64> = self
            .tx_logs
            .iter()
            .filter(|(&(p, v), l)| p == pid && which(v, l))
            .map(|(&(_, v), _)| v)
            .collect();
        for va in gone {
            self.persist_log(&[MetaRecord::TxLogRemove { pid, va }]);
            self.tx_logs.remove(&(pid, va));
        }
    }

    /// Recovery's last step: apply every committed record above its log's resolved sequence
    /// (a commit that was in flight when the node stopped), or drop it if a target is no
    /// longer writable or has no frame. Torn records are ignored (never committed).
    pub fn tx_roll_forward(&mut self, mem: &mut dyn FrameMemory) -> RollForward {
        let mut out = RollForward::default();
        let mut logs: Vec<((u16, u64), TxLog)> =
            self.tx_logs.iter().map(|(k, l)| (*k, *l)).collect();
        logs.sort_by_key(|(k, _)| *k);
        for ((pid, va), log) in logs {
            let rec_bytes = self.read_record(pid, va, log.bytes, mem);
            let rec = rec_bytes.as_deref().and_then(|b| tx::parse(b).ok());
            match rec {
                Some(rec) if rec.seq > log.resolved => {
                    let applied = match self.plan(pid, &rec) {
                        Ok(plan) => self.write_planned(pid, va, &rec, &plan, mem).is_ok(),
                        Err(_) => false,
                    };
                    if applied {
                        out.applied += 1;
                    } else {
                        self.resolve(pid, va, rec.seq, false);
                        out.dropped += 1;
                    }
                }
                _ => out.nothing += 1,
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::SlowPathConfig;
    use crate::frame_memory::{clear_range, read_range, write_range};
    use crate::meta_log::{MetaLog, Opened};
    use clio_proto::layout::MemoryLayout;
    use clio_proto::persist::META_BYTES;
    use clio_proto::pte::PERM_READ;
    use clio_proto::tx::{encode, TxEntry};
    use std::time::{Duration, Instant};

    const DRAM: u64 = 64 << 20;
    const SHIFT: u32 = 16;
    const PAGE: u64 = 1 << SHIFT;

    /// DRAM with a persistence domain (tests): flushes succeed and are counted.
    struct PMem {
        bytes: Vec<u8>,
        flushes: u64,
    }

    impl FrameMemory for PMem {
        fn zero(&mut self, pa: u64, len: u64) -> bool {
            clear_range(&mut self.bytes, pa, len)
        }
        fn persist(&mut self, pa: u64, len: u64) -> bool {
            self.flushes += 1;
            pa + len <= self.bytes.len() as u64
        }
        fn is_persistent(&self) -> bool {
            true
        }
        fn read(&self, pa: u64, buf: &mut [u8]) -> bool {
            read_range(&self.bytes, pa, buf)
        }
        fn write(&mut self, pa: u64, data: &[u8]) -> bool {
            write_range(&mut self.bytes, pa, data)
        }
    }

    fn layout() -> MemoryLayout {
        MemoryLayout::new(DRAM, SHIFT).unwrap()
    }

    fn cfg() -> SlowPathConfig {
        SlowPathConfig {
            keys: crate::KeySource::seeded(5),
            lease: Duration::from_secs(10),
            ..SlowPathConfig::default()
        }
    }

    struct Node {
        sp: SlowPath,
        mem: PMem,
    }

    impl Node {
        fn new() -> Node {
            let (log, _) =
                MetaLog::open(Box::new(vec![0u8; META_BYTES as usize]), DRAM, SHIFT).unwrap();
            Node {
                sp: SlowPath::with_log(layout(), cfg(), log),
                mem: PMem {
                    bytes: vec![0u8; DRAM as usize],
                    flushes: 0,
                },
            }
        }

        /// A region of `pages` pages of `pid`, the first `touched` of them mapped, with its
        /// PTEs in the page table (what the fast path does with the PTE writes and faults).
        fn region(&mut self, pid: u16, pages: u64, perms: u8, touched: u64) -> u64 {
            let o = self.sp.alloc(pid, pages * PAGE, perms).unwrap();
            for (i, &(bucket, slot, mut pte)) in o.ptes.iter().enumerate() {
                if (i as u64) < touched {
                    self.sp.refill(&mut self.mem);
                    let pfn = *self.sp.in_buffer.iter().next().unwrap();
                    self.sp.page_mapped(pid, pte.vpn, pfn);
                    pte.valid = true;
                    pte.pfn = pfn;
                }
                let at = layout().bucket_addr(bucket) as usize
                    + slot as usize * clio_proto::consts::PTE_BYTES;
                self.mem.bytes[at..at + clio_proto::consts::PTE_BYTES]
                    .copy_from_slice(&pte.to_bytes());
            }
            o.va
        }

        fn pa(&self, pid: u16, va: u64) -> usize {
            let pfn = self.sp.shadow.get(pid, va >> SHIFT).unwrap().pfn.unwrap();
            layout().phys_addr(pfn, va & (PAGE - 1)) as usize
        }

        /// What the client's durable write of a record does: bytes at `va` of `pid`.
        fn put(&mut self, pid: u16, va: u64, bytes: &[u8]) {
            for (i, b) in bytes.iter().enumerate() {
                let pa = self.pa(pid, va + i as u64);
                self.mem.bytes[pa] = *b;
            }
        }

        fn get(&self, pid: u16, va: u64, n: usize) -> Vec<u8> {
            (0..n)
                .map(|i| self.mem.bytes[self.pa(pid, va + i as u64)])
                .collect()
        }
    }

    fn rec(seq: u64, writes: &[(u64, &[u8])]) -> Vec<u8> {
        let e: Vec<TxEntry<'_>> = writes
            .iter()
            .map(|&(va, data)| TxEntry { va, data })
            .collect();
        encode(seq, &e)
    }

    #[test]
    fn a_record_is_applied_whole_once_and_durably() {
        let now = Instant::now();
        let mut n = Node::new();
        let (pid, _, client) = n.sp.register_at(1, now).unwrap();
        let log = n.region(pid, 1, PERM_READ | PERM_WRITE, 1);
        let data = n.region(pid, 3, PERM_READ | PERM_WRITE, 3);
        assert_eq!(n.sp.tx_log_add(pid, client, log, PAGE, &n.mem), Ok(0));
        // Two writes, one of them across a page boundary.
        let (a, b) = (data + 100, data + PAGE - 3);
        n.put(pid, log, &rec(1, &[(a, b"first"), (b, b"across")]));
        let flushes = n.mem.flushes;
        assert_eq!(n.sp.tx_apply(pid, log, &mut n.mem), Ok(1));
        assert_eq!(n.get(pid, a, 5), b"first");
        assert_eq!(n.get(pid, b, 6), b"across");
        assert!(n.mem.flushes >= flushes + 3, "every chunk flushed");
        // A retry answers Ok without writing again.
        n.put(pid, a, b"xxxxx");
        assert_eq!(n.sp.tx_apply(pid, log, &mut n.mem), Ok(1));
        assert_eq!(n.get(pid, a, 5), b"xxxxx", "applied twice");
        // Re-registering the same log (a client restart) tells where to number from.
        assert_eq!(n.sp.tx_log_add(pid, client, log, PAGE, &n.mem), Ok(1));
        n.put(pid, log, &rec(2, &[(a, b"second")]));
        assert_eq!(n.sp.tx_apply(pid, log, &mut n.mem), Ok(2));
        assert_eq!(n.get(pid, a, 6), b"second");
        assert_eq!(n.sp.stats().tx_applied, 2);
    }

    #[test]
    fn hostile_or_broken_records_write_nothing() {
        let now = Instant::now();
        let mut n = Node::new();
        let (pid, _, client) = n.sp.register_at(1, now).unwrap();
        let (other, _, _) = n.sp.register_at(2, now).unwrap();
        let log = n.region(pid, 1, PERM_READ | PERM_WRITE, 1);
        let mine = n.region(pid, 2, PERM_READ | PERM_WRITE, 1);
        let ro = n.region(pid, 1, PERM_READ, 1);
        // The other RAS's region sits at an address this RAS has not allocated.
        n.region(other, 8, PERM_READ | PERM_WRITE, 0);
        let theirs = n.region(other, 1, PERM_READ | PERM_WRITE, 1);
        n.sp.tx_log_add(pid, client, log, PAGE, &n.mem).unwrap();
        let before = n.mem.bytes.clone();
        let ok: &[u8] = b"fine";
        let cases: Vec<(Vec<u8>, TxRefusal)> = vec![
            // Another RAS's address: addresses are per RAS, so here it is unallocated.
            (
                rec(1, &[(mine, ok), (theirs + 8, b"steal")]),
                AllocError::NotAllocated(theirs).into(),
            ),
            (
                rec(1, &[(mine, ok), (ro, b"nope")]),
                AllocError::ReadOnly(ro).into(),
            ),
            // Running past the end of a region into the read-only one after it.
            (
                rec(1, &[(mine, ok), (mine + 2 * PAGE - 2, b"past the end")]),
                AllocError::ReadOnly(ro).into(),
            ),
            // The region's second page was never touched: the client must touch it.
            (
                rec(1, &[(mine, ok), (mine + PAGE + 5, b"later")]),
                TxRefusal::Untouched(mine + PAGE),
            ),
        ];
        for (i, (r, want)) in cases.into_iter().enumerate() {
            n.put(pid, log, &r);
            let snapshot_log = n.get(pid, log, r.len());
            assert_eq!(n.sp.tx_apply(pid, log, &mut n.mem), Err(want), "case {i}");
            // Nothing but the record itself changed.
            n.put(pid, log, &vec![0u8; r.len()]);
            assert_eq!(n.mem.bytes, before, "case {i} wrote something");
            n.put(pid, log, &snapshot_log);
            n.put(pid, log, &vec![0u8; r.len()]);
        }
        // A torn record, a record bigger than the log, an unregistered log, another
        // member's log: refused.
        let mut torn = rec(1, &[(mine, ok)]);
        let last = torn.len() - 1;
        torn[last] ^= 1;
        n.put(pid, log, &torn);
        assert_eq!(
            n.sp.tx_apply(pid, log, &mut n.mem),
            Err(AllocError::BadRequest.into())
        );
        assert_eq!(
            n.sp.tx_apply(pid, mine, &mut n.mem),
            Err(AllocError::BadRequest.into())
        );
        assert_eq!(
            n.sp.tx_log_add(pid, client + 1, log, PAGE, &n.mem),
            Err(AllocError::BadRequest),
            "someone else's log"
        );
        assert_eq!(
            n.sp.tx_log_add(pid, client, log + 8, 64, &n.mem),
            Err(AllocError::BadRequest),
            "overlapping logs"
        );
        assert_eq!(
            n.sp.tx_log_add(pid, client, ro, 64, &n.mem),
            Err(AllocError::ReadOnly(ro))
        );
        let mut volatile = vec![0u8; 64];
        assert_eq!(
            n.sp.tx_log_add(pid, client, mine, 64, &mut volatile),
            Err(AllocError::NotPersistent)
        );
        assert_eq!(n.sp.stats().tx_applied, 0);
    }

    #[test]
    fn recovery_applies_committed_records_drops_torn_ones_and_never_reapplies() {
        let now = Instant::now();
        let mut n = Node::new();
        let (pid, _, client) = n.sp.register_at(1, now).unwrap();
        let logs: Vec<u64> = (0..3)
            .map(|_| n.region(pid, 1, PERM_READ | PERM_WRITE, 1))
            .collect();
        let data = n.region(pid, 1, PERM_READ | PERM_WRITE, 1);
        for &l in &logs {
            n.sp.tx_log_add(pid, client, l, PAGE, &n.mem).unwrap();
        }
        // log 0: applied before the crash, then its target overwritten by a plain write.
        n.put(pid, logs[0], &rec(1, &[(data, b"AAAA")]));
        n.sp.tx_apply(pid, logs[0], &mut n.mem).unwrap();
        n.put(pid, data, b"newer");
        // log 1: committed (durable), never applied: the node crashed first.
        n.put(pid, logs[1], &rec(1, &[(data + 64, b"BBBB")]));
        // log 2: torn by the crash.
        let mut torn = rec(1, &[(data + 128, b"CCCC")]);
        torn.truncate(torn.len() - 6); // the last 2 of "CCCC" never reached memory
        n.put(pid, logs[2], &torn);
        // Restart: log and DRAM as they are.
        let mut store = n.sp.log.take().unwrap().into_store();
        let (log, records) = match MetaLog::open(Box::new(store.bytes().to_vec()), DRAM, SHIFT) {
            Ok((log, Opened::Recovered(r))) => (log, r),
            _ => panic!("no log to recover"),
        };
        let mut mem = n.mem;
        let (sp, rep) = SlowPath::recover(layout(), cfg(), log, &records, &mut mem, true, now);
        assert_eq!((rep.tx_logs, rep.tx_applied, rep.tx_dropped), (3, 1, 0));
        let mut n = Node { sp, mem };
        assert_eq!(n.get(pid, data, 5), b"newer", "an applied record came back");
        assert_eq!(n.get(pid, data + 64, 4), b"BBBB", "the committed record");
        assert_eq!(n.get(pid, data + 128, 4), [0u8; 4], "the torn record");
        // The client's retried TxApply of the rolled-forward record: Ok, not applied again.
        n.put(pid, data + 64, b"bbbb");
        assert_eq!(n.sp.tx_apply(pid, logs[1], &mut n.mem), Ok(1));
        assert_eq!(n.get(pid, data + 64, 4), b"bbbb");
        // The member leaves: its logs end; whoever registers the region again numbers above
        // what it holds, so the old record is never applied.
        n.sp.unregister(pid, client, false).unwrap();
        assert_eq!(n.sp.tx_logs().count(), 0);
    }
}
