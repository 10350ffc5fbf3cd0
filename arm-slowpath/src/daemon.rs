//! The slow-path service: remote address spaces (register, join, unregister, leases, keys
//! programmed into the fast path's key table), `ralloc` with overflow-free PTE placement,
//! `rfree` with TLB shootdown, and the refill of the fast path's async free-page buffer with
//! frames cleared to zeros.
//!
//! [`SlowPath`] holds the state and its operations can be called directly (tests, the
//! allocation benchmark); [`SlowPath::poll`] serves them through a [`crate::RingWindow`].

use crate::fair_queue::FairQueue;
use crate::frame_memory::FrameMemory;
use crate::limits::{Limits, Source, SourceCounts};
use crate::meta_log::MetaLog;
use crate::phys_alloc::PhysAllocator;
use crate::ras::{Departure, KeySource, RasError, Registry};
use crate::reply_cache::ReplyCache;
use crate::shadow_pt::ShadowPageTable;
use crate::va_space::{Region, VaSpace};
use clio_proto::consts::{DEFAULT_LEASE_MS, FREE_PAGE_FIFO_DEPTH, VA_LIMIT};
use clio_proto::frame::Route;
use clio_proto::layout::MemoryLayout;
use clio_proto::persist::MetaRecord;
use clio_proto::pte::{Pte, PERM_READ, PERM_WRITE};
use clio_proto::quota::Quota;
use clio_proto::ring::Descriptor;
use clio_proto::route_cookie::RouteSecret;
use clio_proto::{Header, Opcode, Status};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::{Duration, Instant};
use thiserror::Error;
use tx::{TxLog, TxRefusal};

/// Why a slow-path operation was refused. Each maps to one wire [`Status`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum AllocError {
    /// Size zero or beyond the address space; or permissions empty.
    #[error("bad allocation request")]
    BadRequest,
    /// The PID is not registered.
    #[error("process {0} is not registered")]
    UnknownProcess(u16),
    /// Every physical page is already promised to an allocation, or the page table has no
    /// room after the retry budget, or no PID is left.
    #[error("out of physical memory or page-table room")]
    OutOfMemory,
    /// The process has no free virtual range of that size.
    #[error("out of virtual address space")]
    OutOfVirtualSpace,
    /// No allocation starts at this address.
    #[error("no allocation starts at {0:#x}")]
    NotAllocated(u64),
    /// No room for another RAS or another member.
    #[error(transparent)]
    TableFull(RasError),
    /// Persist on a node without a persistence domain (or the flush failed).
    #[error("the node has no persistence domain (start it with --memory-file)")]
    NotPersistent,
    /// The member is not (or no longer) part of the RAS.
    #[error("client {client} is not a member of process {pid}")]
    UnknownMember {
        /// RAS.
        pid: u16,
        /// Member.
        client: u16,
    },
    /// A write (a transaction's target, a log) to a read-only region.
    #[error("{0:#x} is read-only")]
    ReadOnly(u64),
    /// The transaction record was dropped (in doubt at recovery).
    #[error("the transaction was dropped")]
    Aborted,
    /// A quota refused the request (`proto::quota`).
    #[error("quota exceeded: {0}")]
    Quota(Quota),
    /// The node has an admission secret and the Register did not carry it.
    #[error("the node admits only compute nodes that present its admission secret")]
    AdmissionRefused,
    /// A SetEpoch older than the RAS's epoch (`clio_proto::epoch`); the RAS holds `0`.
    #[error("the remote address space holds the newer epoch {0}")]
    StaleEpoch(u16),
}

impl From<RasError> for AllocError {
    fn from(e: RasError) -> AllocError {
        match e {
            RasError::KeyTableFull | RasError::MembersFull | RasError::ClientIdsFull => {
                AllocError::TableFull(e)
            }
            RasError::UnknownRas(pid) => AllocError::UnknownProcess(pid),
            RasError::UnknownMember { pid, client } => AllocError::UnknownMember { pid, client },
            RasError::StaleEpoch { held, .. } => AllocError::StaleEpoch(held),
        }
    }
}

impl AllocError {
    /// The wire status for this error.
    pub fn status(self) -> Status {
        match self {
            AllocError::BadRequest => Status::BadRequest,
            AllocError::UnknownProcess(_) => Status::UnknownProcess,
            AllocError::OutOfMemory => Status::OutOfMemory,
            AllocError::OutOfVirtualSpace => Status::OutOfVirtualSpace,
            AllocError::NotAllocated(_) => Status::Unmapped,
            AllocError::TableFull(_) => Status::TableFull,
            AllocError::NotPersistent => Status::Unsupported,
            AllocError::UnknownMember { .. } => Status::UnknownProcess,
            AllocError::ReadOnly(_) => Status::Permission,
            AllocError::Aborted => Status::Aborted,
            AllocError::Quota(_) => Status::QuotaExceeded,
            AllocError::AdmissionRefused => Status::Denied,
            AllocError::StaleEpoch(_) => Status::Stale,
        }
    }

    /// The answer to `h` that reports this error: its status, for a quota the [`Quota`] in
    /// `arg1` (so the client can name the limit and its flag), for a stale epoch the RAS's
    /// epoch in `arg0`.
    pub fn answer(self, h: &Header) -> Header {
        let arg1 = match self {
            AllocError::Quota(q) => q as u64,
            _ => 0,
        };
        let arg0 = match self {
            AllocError::StaleEpoch(held) => held as u64,
            _ => h.arg0,
        };
        Header {
            arg0,
            arg1,
            ..h.response_to(self.status())
        }
    }
}

/// Counters of the slow path.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SlowPathStats {
    /// Slow-path requests received (alloc, free, register), including retried duplicates.
    pub requests: u64,
    /// Duplicate requests answered from the reply cache.
    pub duplicate_requests: u64,
    /// Remote address spaces created (Register).
    pub registrations: u64,
    /// Members that joined an existing RAS.
    pub joins: u64,
    /// RAS epochs raised by SetEpoch (`clio_proto::epoch`).
    pub epoch_raises: u64,
    /// Members that left (Unregister) or whose lease ended.
    pub departures: u64,
    /// Of those, members removed because their lease ended.
    pub lease_expiries: u64,
    /// Remote address spaces torn down (regions freed, key removed, PID retired).
    pub teardowns: u64,
    /// Passes over Clio-KV's store that freed the records of torn-down RASes
    /// (`daemon/kv_purge.rs`), the records they freed, and passes that met memory they could
    /// not read or write.
    pub kv_purges: u64,
    /// Records freed by those passes.
    pub kv_records_purged: u64,
    /// Passes that could not read or write the store.
    pub kv_purge_failures: u64,
    /// Frames cleared to zeros before entering the free-page buffer.
    pub frames_cleared: u64,
    /// Persist requests (`rpersist`) served.
    pub persists: u64,
    /// Transaction records applied (TxApply and recovery's roll-forward).
    pub tx_applied: u64,
    /// Metadata-log appends that failed (the memory file could not be written or flushed).
    pub log_failures: u64,
    /// Frames the DRAM mapping refused to clear (kept back, never handed out).
    pub clear_failures: u64,
    /// Successful allocations.
    pub allocs: u64,
    /// Candidate ranges rejected because a bucket would overflow (Figure 13's "retries").
    pub alloc_retries: u64,
    /// Allocations refused.
    pub alloc_failures: u64,
    /// Requests refused by a quota (`proto::quota`; the allocations among them are counted
    /// in `alloc_failures` too).
    pub quota_refusals: u64,
    /// Registrations refused for a missing or wrong admission secret.
    pub admission_refusals: u64,
    /// Requests answered RETRY_LATER because their RAS had `fair_queue::QUEUED_PER_RAS`
    /// requests waiting already.
    pub queue_refusals: u64,
    /// Successful frees.
    pub frees: u64,
    /// Frames pushed into the async free-page buffer.
    pub free_pages_pushed: u64,
    /// Page-fault notices received from the fast path.
    pub pages_mapped: u64,
    /// Fault notices for pages freed meanwhile (their frames were returned).
    pub orphan_notices: u64,
    /// Descriptors that failed to decode or were of a kind the ARM does not take.
    pub bad_descriptors: u64,
}

/// Result of a successful allocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocOutcome {
    /// First virtual address.
    pub va: u64,
    /// Pages allocated.
    pub pages: u64,
    /// Candidate ranges rejected before this one was placed.
    pub retries: u64,
    /// The PTEs to write: `(bucket, slot, pte)`.
    pub ptes: Vec<(u64, u32, Pte)>,
}

/// Result of a free.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FreeOutcome {
    /// Pages released.
    pub pages: u64,
    /// Frames returned to the allocator.
    pub frames_returned: u64,
    /// Slots to clear and translations to shoot down: `(bucket, slot, vpn)`.
    pub cleared: Vec<(u64, u32, u64)>,
}

/// How a slow path is set up.
#[derive(Debug)]
pub struct SlowPathConfig {
    /// Where RAS keys come from ([`KeySource::Os`] on every real node).
    pub keys: KeySource,
    /// Lease of a RAS member.
    pub lease: Duration,
    /// Quotas (`proto::quota`'s defaults unless the operator changed them).
    pub limits: Limits,
}

impl Default for SlowPathConfig {
    fn default() -> Self {
        SlowPathConfig {
            keys: KeySource::Os,
            lease: Duration::from_millis(DEFAULT_LEASE_MS),
            limits: Limits::default(),
        }
    }
}

/// How long one round of [`SlowPath::poll`] executes waiting requests before it looks at the
/// ring again (one request that takes longer still runs to its end, bounded by the placement
/// budget).
pub const EXECUTE_SLICE: Duration = Duration::from_millis(2);

/// Descriptors the taking of requests may add to the outbox while it holds answers the TX
/// ring cannot accept yet (an allocation's PTE writes behind a busy fast path). Taking goes
/// on up to this many (16 RX rings' worth), so the RX ring is not held full by the TX
/// ring's back-pressure; the bound keeps the outbox's memory bounded if the TX ring stays
/// full for good.
pub const TAKE_AHEAD: usize = 16 * clio_proto::ring::DEFAULT_RING_ENTRIES as usize;

/// The slow path's state.
#[derive(Debug)]
pub struct SlowPath {
    layout: MemoryLayout,
    pub(crate) procs: HashMap<u16, VaSpace>,
    pub(crate) registry: Registry,
    pub(crate) shadow: ShadowPageTable,
    pub(crate) frames: PhysAllocator,
    pub(crate) promised_pages: u64,
    /// Frames pushed into the fast path's free-page buffer and not yet reported mapped.
    pub(crate) in_buffer: BTreeSet<u64>,
    /// The metadata log in the memory file, when the node has one.
    pub(crate) log: Option<MetaLog>,
    /// Registered transaction logs, by (pid, va).
    pub(crate) tx_logs: HashMap<(u16, u64), TxLog>,
    replies: ReplyCache,
    /// Requests taken from the ring and waiting to execute, per RAS (`fair_queue.rs`).
    waiting: FairQueue,
    limits: Limits,
    /// Live RASes per source address (the per-source quota).
    sources: SourceCounts<u16>,
    /// Live members per source address that created them (Register or Join).
    member_sources: SourceCounts<(u16, u16)>,
    pub(crate) outbox: VecDeque<Descriptor>,
    /// Descriptors taking may still add while the outbox is not empty (`TAKE_AHEAD`, renewed
    /// whenever the outbox empties).
    take_ahead: usize,
    /// The pool epoch last read from `reg::POOL_EPOCH` (0: none yet).
    pool_epoch: u16,
    /// Clio-KV's store, once set up (`kv_store.rs`).
    pub(crate) kv_store: Option<kv_store::KvStore>,
    /// Torn-down RASes whose Clio-KV records are still to be freed (`kv_purge.rs`).
    pub(crate) kv_purge: kv_purge::KvPurge,
    /// Descriptors pushed to the TX ring since start (the purge's clock of the ring).
    pub(crate) tx_pushed: u64,
    /// The node's route-cookie secret (`clio_proto::route_cookie`), drawn at start and handed
    /// to the fast path in the first descriptor (`ROUTE_KEY`).
    pub(crate) route_secret: RouteSecret,
    stats: SlowPathStats,
}

impl SlowPath {
    /// A fresh slow path for a node of this layout, with OS-drawn keys and the default lease.
    pub fn new(layout: MemoryLayout) -> SlowPath {
        SlowPath::with_config(layout, SlowPathConfig::default())
    }

    /// A fresh slow path with an explicit configuration.
    pub fn with_config(layout: MemoryLayout, cfg: SlowPathConfig) -> SlowPath {
        let mut keys = cfg.keys;
        let route_secret = RouteSecret([keys.draw(), keys.draw()]);
        SlowPath {
            layout,
            procs: HashMap::new(),
            registry: Registry::new(keys, cfg.lease, cfg.limits.pids, cfg.limits.clients),
            shadow: ShadowPageTable::new(layout.bucket_bits),
            frames: PhysAllocator::new(layout.first_data_pfn, layout.data_pages),
            promised_pages: 0,
            in_buffer: BTreeSet::new(),
            log: None,
            tx_logs: HashMap::new(),
            replies: ReplyCache::default(),
            waiting: FairQueue::default(),
            limits: cfg.limits,
            sources: SourceCounts::default(),
            member_sources: SourceCounts::default(),
            // Before anything else: the fast path checks route cookies and members' shares of
            // the idempotence ring from its first descriptors on (nobody is admitted before
            // them, so nothing passes unchecked).
            outbox: VecDeque::from([
                Descriptor::RouteKey {
                    secret: route_secret.0,
                },
                Descriptor::RingShare {
                    share: cfg.limits.ring_share,
                },
            ]),
            take_ahead: TAKE_AHEAD,
            pool_epoch: clio_proto::epoch::UNFENCED,
            kv_store: None,
            kv_purge: kv_purge::KvPurge::default(),
            tx_pushed: 0,
            route_secret,
            stats: SlowPathStats::default(),
        }
    }

    /// Counters.
    pub fn stats(&self) -> SlowPathStats {
        self.stats
    }

    pub(crate) fn stats_mut(&mut self) -> &mut SlowPathStats {
        &mut self.stats
    }

    /// The registered transaction logs: `((pid, va), log)`.
    pub fn tx_logs(&self) -> impl Iterator<Item = ((u16, u64), &TxLog)> {
        self.tx_logs.iter().map(|(k, l)| (*k, l))
    }

    /// The memory layout served.
    pub fn layout(&self) -> &MemoryLayout {
        &self.layout
    }

    /// Fraction of data pages promised to allocations (the x axis of Figure 13).
    pub fn utilisation(&self) -> f64 {
        self.promised_pages as f64 / self.layout.data_pages as f64
    }

    /// The shadow page table.
    pub fn shadow(&self) -> &ShadowPageTable {
        &self.shadow
    }

    /// Frames neither mapped nor in the free-page buffer.
    pub fn free_frames(&self) -> u64 {
        self.frames.free_count()
    }

    /// The registry of remote address spaces.
    pub fn registry(&self) -> &Registry {
        &self.registry
    }

    /// A fresh slow path that logs its state into `log` (a memory file just formatted).
    pub fn with_log(layout: MemoryLayout, cfg: SlowPathConfig, log: MetaLog) -> SlowPath {
        let mut sp = SlowPath::with_config(layout, cfg);
        sp.log = Some(log);
        sp
    }

    /// The metadata log, if the node has one.
    pub fn meta_log(&self) -> Option<&MetaLog> {
        self.log.as_ref()
    }

    /// The whole durable state as log records (what a compaction writes).
    pub(crate) fn snapshot(&self) -> Vec<MetaRecord> {
        let mut v = Vec::new();
        for (pid, key, epoch, members) in self.registry.snapshot() {
            v.push(MetaRecord::RasCreate { pid, key });
            if epoch != clio_proto::epoch::UNFENCED {
                v.push(MetaRecord::RasEpoch { pid, epoch });
            }
            for (client, nonce) in members {
                v.push(MetaRecord::MemberAdd { pid, client, nonce });
            }
            if let Some(space) = self.procs.get(&pid) {
                for r in space.regions() {
                    v.push(MetaRecord::RegionAdd {
                        pid,
                        start_vpn: r.start_vpn,
                        pages: r.pages,
                        perms: r.perms,
                    });
                }
            }
        }
        for (&(pid, va), l) in &self.tx_logs {
            v.push(MetaRecord::TxLogAdd {
                pid,
                client: l.client,
                va,
                bytes: l.bytes,
            });
            if l.resolved > 0 {
                v.push(MetaRecord::TxResolved {
                    pid,
                    va,
                    seq: l.resolved,
                    applied: l.applied,
                });
            }
        }
        v.extend(
            self.in_buffer
                .iter()
                .map(|&pfn| MetaRecord::FramePushed { pfn }),
        );
        v
    }

    /// Append to the metadata log (compacting it when full) and make it durable, before the
    /// change takes effect outside the slow path. Replay is idempotent, so a compaction that
    /// already contains the change does no harm.
    pub(crate) fn persist_log(&mut self, recs: &[MetaRecord]) {
        let Some(mut log) = self.log.take() else {
            return;
        };
        if !log.append(recs) {
            let snap = self.snapshot();
            if !(log.compact(&snap) && log.append(recs)) {
                self.stats.log_failures += 1;
            }
        }
        self.log = Some(log);
    }

    /// Clear each freed slot first, then shoot the translation down: once the invalidation
    /// is applied no new access can find the page.
    fn push_clears(&mut self, pid: u16, o: &FreeOutcome) {
        for &(bucket, slot, vpn) in &o.cleared {
            self.outbox.push_back(Descriptor::PteWrite {
                bucket,
                slot,
                pte: Pte::default(),
            });
            self.outbox
                .push_back(Descriptor::TlbInvalidate { pid, vpn });
        }
    }

    /// Allocate `bytes` (rounded up to pages) for `pid`, placing every page's PTE so that no
    /// bucket overflows: a candidate range is hashed page by page against the shadow table,
    /// and on overflow the search resumes just past the page that did not fit.
    pub fn alloc(&mut self, pid: u16, bytes: u64, perms: u8) -> Result<AllocOutcome, AllocError> {
        let r = self.alloc_inner(pid, bytes, perms);
        match &r {
            Ok(o) => {
                let start_vpn = o.va >> self.layout.page_shift;
                let perms = o.ptes.first().map_or(perms, |p| p.2.perms);
                self.persist_log(&[MetaRecord::RegionAdd {
                    pid,
                    start_vpn,
                    pages: o.pages,
                    perms,
                }]);
                self.stats.allocs += 1;
                self.stats.alloc_retries += o.retries;
            }
            Err(e) => {
                self.stats.alloc_failures += 1;
                if matches!(e, AllocError::Quota(_)) {
                    self.stats.quota_refusals += 1;
                }
            }
        }
        r
    }

    /// [`SlowPath::alloc`] for a tenant, through the network: refused with
    /// [`Quota::MemoryPerRas`] when the RAS would hold more pages than its quota.
    pub fn alloc_for_tenant(
        &mut self,
        pid: u16,
        bytes: u64,
        perms: u8,
    ) -> Result<AllocOutcome, AllocError> {
        let held = self.procs.get(&pid).map_or(0, VaSpace::allocated_pages);
        let limit = self
            .limits
            .ras_pages_of(self.layout.data_pages, self.layout.page_size());
        let pages = bytes.div_ceil(self.layout.page_size());
        // More than the node could give at all is OUT_OF_MEMORY (no flag would help).
        let fits_node = self.promised_pages.saturating_add(pages) <= self.layout.data_pages;
        if fits_node && held.saturating_add(pages) > limit {
            self.stats.alloc_failures += 1;
            self.stats.quota_refusals += 1;
            return Err(AllocError::Quota(Quota::MemoryPerRas));
        }
        self.alloc(pid, bytes, perms)
    }

    fn alloc_inner(&mut self, pid: u16, bytes: u64, perms: u8) -> Result<AllocOutcome, AllocError> {
        let perms = perms & (PERM_READ | PERM_WRITE);
        if bytes == 0 || bytes >= VA_LIMIT || perms == 0 {
            return Err(AllocError::BadRequest);
        }
        let space = self
            .procs
            .get(&pid)
            .ok_or(AllocError::UnknownProcess(pid))?;
        let pages = bytes.div_ceil(self.layout.page_size());
        if pages > space.free_pages() {
            return Err(AllocError::OutOfVirtualSpace);
        }
        // No overcommit: every allocated page is guaranteed a frame when first touched.
        if self.promised_pages + pages > self.layout.data_pages {
            return Err(AllocError::OutOfMemory);
        }
        let mut from = 0;
        let mut retries = 0;
        // Pages hashed so far: bounded by the placement budget, so no allocation can hold the
        // slow path for long (a refusal names the quota; the node stays responsive).
        let mut probes: u64 = 0;
        let budget = self.limits.placement_budget;
        let mut need: HashMap<u64, u32> = HashMap::new();
        let start = loop {
            let start = space.find_free(pages, from).ok_or(if retries == 0 {
                AllocError::OutOfVirtualSpace
            } else {
                AllocError::OutOfMemory
            })?;
            need.clear();
            let mut overflow_at = None;
            for vpn in start..start + pages {
                probes += 1;
                if probes > budget {
                    return Err(AllocError::Quota(Quota::PlacementWork));
                }
                let b = self.shadow.bucket_of(pid, vpn);
                let n = need.entry(b).or_insert(0);
                *n += 1;
                if *n > self.shadow.free_slots(b) {
                    overflow_at = Some(vpn);
                    break;
                }
            }
            match overflow_at {
                None => break start,
                Some(vpn) => {
                    retries += 1;
                    from = vpn + 1;
                }
            }
        };
        let mut ptes = Vec::with_capacity(pages as usize);
        for vpn in start..start + pages {
            // Cannot fail: the loop above checked every bucket's room.
            let e = self
                .shadow
                .insert(pid, vpn, perms)
                .ok_or(AllocError::OutOfMemory)?;
            ptes.push((e.bucket, e.slot, Pte::allocated(pid, vpn, perms)));
        }
        if let Some(space) = self.procs.get_mut(&pid) {
            space.insert(Region {
                start_vpn: start,
                pages,
                perms,
            });
        }
        self.promised_pages += pages;
        Ok(AllocOutcome {
            va: start << self.layout.page_shift,
            pages,
            retries,
            ptes,
        })
    }

    /// Free the allocation of `pid` that starts at `va`: clear its PTEs, return its frames.
    pub fn free(&mut self, pid: u16, va: u64) -> Result<FreeOutcome, AllocError> {
        let space = self
            .procs
            .get_mut(&pid)
            .ok_or(AllocError::UnknownProcess(pid))?;
        if self.layout.page_offset(va) != 0 {
            return Err(AllocError::NotAllocated(va));
        }
        let region = space
            .remove(self.layout.vpn(va))
            .ok_or(AllocError::NotAllocated(va))?;
        let (lo, hi) = (
            region.start_vpn << self.layout.page_shift,
            region.end_vpn() << self.layout.page_shift,
        );
        self.tx_logs_remove(pid, |va, _| lo <= va && va < hi);
        self.persist_log(&[MetaRecord::RegionRemove {
            pid,
            start_vpn: region.start_vpn,
        }]);
        let mut out = FreeOutcome {
            pages: region.pages,
            frames_returned: 0,
            cleared: Vec::new(),
        };
        for vpn in region.start_vpn..region.end_vpn() {
            if let Some(e) = self.shadow.remove(pid, vpn) {
                if let Some(pfn) = e.pfn {
                    self.frames.free(pfn);
                    out.frames_returned += 1;
                }
                out.cleared.push((e.bucket, e.slot, vpn));
            }
        }
        self.promised_pages -= region.pages;
        self.stats.frees += 1;
        Ok(out)
    }

    /// The fast path mapped `pfn` for `(pid, vpn)` on a fault.
    pub fn page_mapped(&mut self, pid: u16, vpn: u64, pfn: u64) {
        self.stats.pages_mapped += 1;
        self.in_buffer.remove(&pfn);
        if !self.shadow.set_mapped(pid, vpn, pfn) {
            // Freed while the notice was in flight: the frame comes back to us.
            self.stats.orphan_notices += 1;
            self.frames.free(pfn);
        }
    }

    /// Queue free frames until the fast path's buffer is (or will be) full, each cleared to
    /// zeros first. A frame the memory refuses to clear is kept back (counted), never pushed.
    pub(crate) fn refill(&mut self, mem: &mut dyn FrameMemory) {
        while self.in_buffer.len() < FREE_PAGE_FIFO_DEPTH {
            let Some(pfn) = self.frames.alloc() else {
                break;
            };
            let page = self.layout.page_size();
            if !mem.zero(self.layout.phys_addr(pfn, 0), page) {
                self.stats.clear_failures += 1;
                self.frames.free(pfn);
                break;
            }
            self.stats.frames_cleared += 1;
            self.persist_log(&[MetaRecord::FramePushed { pfn }]);
            self.in_buffer.insert(pfn);
            self.stats.free_pages_pushed += 1;
            self.outbox.push_back(Descriptor::FreePage { pfn });
        }
    }

    /// Answers held in the reply cache (every member's share together).
    pub fn reply_cache_len(&self) -> usize {
        self.replies.len()
    }

    /// Flush the mapped pages of `[va, va + len)` of `pid` to the persistence domain. Pages not
    /// mapped yet hold nothing written (they read as zeros on first touch) and need no flush.
    pub fn persist(
        &mut self,
        pid: u16,
        va: u64,
        len: u64,
        mem: &mut dyn FrameMemory,
    ) -> Result<(), AllocError> {
        let end = va.checked_add(len).filter(|e| len > 0 && *e <= VA_LIMIT);
        let Some(end) = end else {
            return Err(AllocError::BadRequest);
        };
        if !mem.is_persistent() {
            return Err(AllocError::NotPersistent);
        }
        let space = self
            .procs
            .get(&pid)
            .ok_or(AllocError::UnknownProcess(pid))?;
        let page = self.layout.page_size();
        let mut at = va;
        while at < end {
            let vpn = self.layout.vpn(at);
            if space.lookup(vpn).is_none() {
                return Err(AllocError::NotAllocated(at));
            }
            let off = self.layout.page_offset(at);
            let n = (page - off).min(end - at);
            if let Some(pfn) = self.shadow.get(pid, vpn).and_then(|e| e.pfn) {
                if !mem.persist(self.layout.phys_addr(pfn, off), n) {
                    return Err(AllocError::NotPersistent);
                }
            }
            at += n;
        }
        self.stats.persists += 1;
        Ok(())
    }
}

mod execute;
mod intake;
mod kv_purge;
pub mod kv_store;
mod membership;
pub mod recovery;
#[cfg(test)]
mod tests;
pub mod tx;
