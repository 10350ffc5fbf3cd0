//! The CBoard model: one memory node, fast path stages in order, slow path behind the rings.

mod append;
mod atomics;
mod config;
mod extend;
mod frames;

use config::check_memory_file;
pub use config::{
    dram_file_for, BoardConfig, BoardError, Offloads, SlowPathMode, DEFAULT_KV_STORE_BYTES,
};

use super::ack_layer::{self, Verdict};
use super::dram::Dram;
use super::key_table::{KeyTable, Verdict as KeyVerdict};
use super::mem_access::{read_pieces, write_pieces, VirtualMemory};
use super::pt_walker::PtWalker;
use super::route_check::RouteCheck;
use super::rx_share::RxShare;
use super::sync_unit::SyncUnit;
use crate::slow_thread::SlowPathThread;
use clio_proto::consts::MAX_REQUEST_LEN;
use clio_proto::frame::Route;
use clio_proto::header::{
    check_read, check_write_segment, packet_count, read_response, segment, Packet,
};
use clio_proto::layout::MemoryLayout;
use clio_proto::opcode::{path_of, Path};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::ring::{daemon_state, reg, rx_source_bucket, Descriptor, RingLayout};
use clio_proto::route_cookie::RouteSecret;
use clio_proto::rules::Rule;
use clio_proto::{Header, Opcode, Status};
use clio_slowpath::MappedMemory;
use clio_slowpath::{
    KeySource, MappedMeta, MetaLog, Opened, RecoveryReport, RingWindow, SlowPath, SlowPathConfig,
    SlowPathStats,
};
pub(crate) use frames::SlowPathFrames;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Counters of the node (all stages).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Packets received.
    pub rx_packets: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// NACKs sent (integrity failures).
    pub nacks: u64,
    /// Packets dropped without answer (shorter than a header, or responses).
    pub dropped: u64,
    /// Requests answered with bad-request/unsupported.
    pub bad_requests: u64,
    /// Requests refused by the key check (wrong or missing key, unknown RAS).
    pub denied: u64,
    /// Requests refused by the route check (`RouteUnverified`: an answer larger than twice
    /// the request to an address its cookie does not prove).
    pub route_unverified: u64,
    /// Durable write packets acknowledged after their data was flushed.
    pub durable_writes: u64,
    /// Flushes (`msync`) that made durable writes durable; fewer than the writes when
    /// several waited together.
    pub durable_flushes: u64,
    /// TLB hits.
    pub tlb_hits: u64,
    /// TLB misses.
    pub tlb_misses: u64,
    /// Page-table buckets read (exactly one per TLB miss).
    pub bucket_reads: u64,
    /// First-touch faults served from the async buffer.
    pub page_faults: u64,
    /// Faults answered retry-later because the buffer was empty.
    pub fault_buffer_empty: u64,
    /// Accesses refused for permission.
    pub permission_denied: u64,
    /// Accesses to unallocated addresses.
    pub unmapped: u64,
    /// Requests forwarded to the slow path.
    pub slowpath_requests: u64,
    /// Slow-path requests refused because the RX ring was full.
    pub slowpath_busy: u64,
    /// Atomic operations executed.
    pub atomics: u64,
    /// Non-idempotent retries answered from the idempotence ring.
    pub idempotent_replays: u64,
    /// Non-idempotent requests refused because the ring was full.
    pub idempotence_ring_full: u64,
    /// Ring-recorded requests refused QUOTA_EXCEEDED: their member held its share of the
    /// ring, none of it acknowledged.
    pub idempotence_ring_over_share: u64,
    /// Malformed descriptors from the slow path.
    pub bad_descriptors: u64,
    /// RING_OWNER descriptors that took a row back (a member left or its lease ended).
    pub ring_releases: u64,
    /// Ring-recorded requests DENIED: their client id's row was not their RAS's.
    pub idempotence_ring_strangers: u64,
    /// Requests served by an offload unit (extend path).
    pub offload_requests: u64,
    /// DRAM bytes read.
    pub dram_read_bytes: u64,
    /// DRAM bytes written.
    pub dram_write_bytes: u64,
}

/// What every implementation of the node shares around its fast path: the DRAM, the ring
/// window and (in-process) the slow path, built from one configuration.
pub struct NodeParts {
    /// Memory layout.
    pub layout: MemoryLayout,
    /// DRAM model (page table cleared).
    pub dram: Dram,
    /// Ring window, initialised from the fast-path side (shared with a slow-path thread).
    pub ring: Arc<RingWindow>,
    /// The slow path when the node steps it ([`SlowPathMode::InProcess`]).
    pub slow: Option<SlowPath>,
    /// The slow path's thread ([`SlowPathMode::Thread`]); keep it as long as the node.
    pub slow_thread: Option<SlowPathThread>,
    /// What the in-process slow path recovered from the memory file, if it did.
    pub recovery: Option<RecoveryReport>,
}

impl NodeParts {
    /// Lay out and map DRAM, create and initialise the ring window, start an in-process slow
    /// path if configured.
    pub fn new(cfg: &BoardConfig) -> Result<NodeParts, BoardError> {
        let layout = MemoryLayout::new(cfg.dram_bytes, cfg.page_shift)?;
        let dram_file = match (&cfg.memory_file, &cfg.slowpath) {
            (Some(p), _) => Some(p.clone()),
            (None, SlowPathMode::External { ring_file }) => Some(dram_file_for(ring_file)),
            (None, SlowPathMode::InProcess | SlowPathMode::Thread | SlowPathMode::Absent) => None,
        };
        if let Some(p) = &cfg.memory_file {
            check_memory_file(p, cfg.dram_bytes, cfg.page_shift)?;
        }
        let threaded = cfg.slowpath == SlowPathMode::Thread;
        // A slow-path thread maps the node's DRAM a second time: the memory file, or a memfd.
        let mut shared_fd = None;
        let mut dram = match &dram_file {
            Some(p) => Dram::file(p, cfg.dram_bytes, cfg.memory_file.is_some()),
            None if threaded => Dram::shared(cfg.dram_bytes).map(|(d, f)| {
                shared_fd = Some(f);
                d
            }),
            None => Dram::anonymous(cfg.dram_bytes),
        }
        .map_err(|source| BoardError::Dram {
            bytes: cfg.dram_bytes,
            source,
        })?;
        // The memory file's metadata: formatted when new, recovered when it holds a node's
        // state, refused when it is foreign, of another version or geometry.
        let mut opened = None;
        if let Some(path) = &cfg.memory_file {
            let meta =
                MappedMeta::open(path, cfg.dram_bytes).map_err(|source| BoardError::Meta {
                    path: path.clone(),
                    source,
                })?;
            let (log, o) = MetaLog::open(Box::new(meta), cfg.dram_bytes, cfg.page_shift).map_err(
                |source| BoardError::Persist {
                    path: path.clone(),
                    source,
                },
            )?;
            opened = Some((log, o));
        }
        // A page table with nothing to recover is stale (a scratch DRAM file, or a formatted
        // memory file): clear it. (Old data in frames is cleared by the slow path before each
        // frame is handed out.)
        if !matches!(opened, Some((_, Opened::Recovered(_)))) && dram_file.is_some() {
            let zero = vec![0u8; layout.pt_bytes() as usize];
            dram.write(layout.pt_base, &zero);
        }
        let mut recovery = None;
        let rl =
            RingLayout::new(cfg.ring_entries).ok_or(BoardError::RingEntries(cfg.ring_entries))?;
        let (ring, mut slow) = match &cfg.slowpath {
            SlowPathMode::InProcess | SlowPathMode::Thread => {
                let keys = match cfg.key_seed {
                    Some(seed) => KeySource::seeded(seed),
                    None => KeySource::Os,
                };
                let scfg = SlowPathConfig {
                    keys,
                    lease: cfg.lease,
                    limits: cfg.limits,
                };
                let sp = match opened {
                    None => SlowPath::with_config(layout, scfg),
                    Some((log, Opened::Formatted)) => SlowPath::with_log(layout, scfg, log),
                    Some((log, Opened::Recovered(records))) => {
                        let (sp, rep) = SlowPath::recover(
                            layout,
                            scfg,
                            log,
                            &records,
                            &mut SlowPathFrames(&mut dram),
                            true,
                            std::time::Instant::now(),
                        );
                        recovery = Some(rep);
                        sp
                    }
                };
                (RingWindow::anonymous(rl)?, Some(sp))
            }
            // The daemon opens the metadata itself (this check only refused a bad file early).
            SlowPathMode::External { ring_file } => (RingWindow::create_file(ring_file, rl)?, None),
            SlowPathMode::Absent => (RingWindow::anonymous(rl)?, None),
        };
        // Clio-KV's store is the slow path's to set up (`clio_slowpath::daemon::kv_store`); an external
        // daemon does it itself (`--kv-store-bytes`).
        if let Some(sp) = slow.as_mut() {
            if cfg.offloads.serves(clio_proto::Opcode::KvGet) && cfg.kv_store_bytes > 0 {
                // A failure is announced to the fast path as the status KV requests get.
                let _ = sp.start_kv_store(
                    cfg.kv_store_bytes,
                    &mut SlowPathFrames(&mut dram),
                    std::time::Instant::now(),
                );
            }
        }
        ring.init_fast_path(cfg.dram_bytes, cfg.page_shift);
        let ring = Arc::new(ring);
        let mut slow_thread = None;
        if threaded {
            if let Some(sp) = slow.take() {
                let thread_err = BoardError::SlowPathThread;
                let mem = match (&shared_fd, &cfg.memory_file) {
                    (Some(f), _) => MappedMemory::from_file(f, 0, cfg.dram_bytes, false),
                    (None, Some(p)) => MappedMemory::open(p, 0, cfg.dram_bytes, true),
                    (None, None) => Err(std::io::Error::other("no shared DRAM to map")),
                }
                .map_err(thread_err)?;
                slow_thread =
                    Some(SlowPathThread::spawn(sp, ring.clone(), mem).map_err(thread_err)?);
            }
        }
        Ok(NodeParts {
            layout,
            dram,
            ring,
            slow,
            slow_thread,
            recovery,
        })
    }
}

/// A packet to send: the route of the request it answers, and its bytes.
pub type Outgoing = (Route, Vec<u8>);

/// The behavioural memory node.
pub struct CBoard {
    layout: MemoryLayout,
    dram: Dram,
    vm: VirtualMemory,
    keys: KeyTable,
    routes: RouteCheck,
    /// The source of every RX descriptor not yet taken (the per-source share).
    rx_share: RxShare,
    sync: SyncUnit,
    ring: Arc<RingWindow>,
    slow: Option<SlowPath>,
    slow_thread: Option<SlowPathThread>,
    /// Durable writes done but not yet flushed: their physical ranges and held responses.
    durable: Vec<(u64, u64)>,
    held: Vec<Outgoing>,
    recovery: Option<RecoveryReport>,
    /// The offloads served (`BoardConfig::offloads`).
    offloads: Offloads,
    /// Clio-KV's store as the slow path announced it (`KvConfig`; `board/extend.rs`).
    kv: extend::KvState,
    c: Counters,
    /// The board's rule counts (`coverage()` adds the units').
    rules: super::coverage::Tracker,
}

impl std::fmt::Debug for CBoard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CBoard")
            .field("layout", &self.layout)
            .field("counters", &self.counters())
            .finish()
    }
}

impl CBoard {
    /// Build a node: lay out DRAM, map it, initialise the rings, and (in-process) start the
    /// slow path and let it fill the free-page buffer.
    pub fn new(cfg: &BoardConfig) -> Result<CBoard, BoardError> {
        let NodeParts {
            layout,
            dram,
            ring,
            slow,
            slow_thread,
            recovery,
        } = NodeParts::new(cfg)?;
        let mut b = CBoard {
            layout,
            dram,
            vm: VirtualMemory::default(),
            keys: KeyTable::default(),
            routes: RouteCheck::default(),
            rx_share: RxShare::default(),
            sync: SyncUnit::default(),
            ring,
            slow,
            slow_thread,
            durable: Vec::new(),
            held: Vec::new(),
            recovery,
            offloads: cfg.offloads,
            kv: extend::KvState::NotConfigured,
            c: Counters::default(),
            rules: Default::default(),
        };
        let mut sink = Vec::new();
        b.service(&mut sink);
        b.wait_for_slow_path_thread(&mut sink);
        Ok(b)
    }

    /// With a slow-path thread: apply what it sends until the free-page buffer is full (or
    /// no frame is left), so the first requests find frames, as with an in-process slow path.
    /// Gives up after a few seconds (the requests then meet RETRY_LATER until it catches up).
    fn wait_for_slow_path_thread(&mut self, sink: &mut Vec<Outgoing>) {
        if self.slow_thread.is_none() {
            return;
        }
        let want = (clio_proto::consts::FREE_PAGE_FIFO_DEPTH as u64).min(self.layout.data_pages);
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while (self.vm.faults.level() as u64) < want && std::time::Instant::now() < deadline {
            if self.service(sink) == 0 {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }

    /// What the in-process slow path recovered from the memory file at start, if anything.
    pub fn recovery(&self) -> Option<RecoveryReport> {
        self.recovery
    }

    /// The memory layout.
    pub fn layout(&self) -> &MemoryLayout {
        &self.layout
    }

    /// How often each rule of the spec decided an answer (the board's counts and its units').
    pub fn coverage(&self) -> super::coverage::Coverage {
        let mut c = self.rules.cov.clone();
        c.add(&self.vm.cov);
        c.add(&self.sync.cov);
        c
    }

    /// All counters.
    pub fn counters(&self) -> Counters {
        let mut c = self.c;
        c.tlb_hits = self.vm.counters.tlb_hits;
        c.tlb_misses = self.vm.counters.tlb_misses;
        c.permission_denied = self.vm.counters.permission_denied;
        c.unmapped = self.vm.counters.unmapped;
        c.bucket_reads = self.vm.walker.bucket_reads;
        c.page_faults = self.vm.faults.faults;
        c.fault_buffer_empty = self.vm.faults.empty;
        c.denied = self.keys.denied;
        c.route_unverified = self.routes.refused;
        c.atomics = self.sync.executed;
        c.idempotent_replays = self.sync.replays;
        c.idempotence_ring_full = self.sync.full;
        c.idempotence_ring_over_share = self.sync.over_share;
        c.idempotence_ring_strangers = self.sync.strangers;
        c.dram_read_bytes = self.dram.read_bytes;
        c.dram_write_bytes = self.dram.write_bytes;
        c
    }

    /// The descriptor ring window shared with the slow path.
    pub fn ring_window(&self) -> Arc<RingWindow> {
        self.ring.clone()
    }

    /// The slow path's counters (in-process, or its thread's as of its last busy round;
    /// `None` when it runs as a separate process).
    pub fn slowpath_stats(&self) -> Option<SlowPathStats> {
        match (&self.slow, &self.slow_thread) {
            (Some(s), _) => Some(s.stats()),
            (None, Some(t)) => Some(t.stats()),
            (None, None) => None,
        }
    }

    /// Frames waiting in the async free-page buffer.
    pub fn free_page_buffer_level(&self) -> usize {
        self.vm.faults.level()
    }

    /// DRAM contents without counting traffic (memory and page-table images).
    pub fn peek(&self, pa: u64, n: usize) -> Option<&[u8]> {
        self.dram.peek(pa, n)
    }

    /// The page table as it is in DRAM.
    pub fn page_table_image(&self) -> &[u8] {
        self.dram
            .peek(self.layout.pt_base, self.layout.pt_bytes() as usize)
            .unwrap_or(&[])
    }

    /// Whether an external daemon has attached to the rings.
    pub fn daemon_running(&self) -> bool {
        self.ring.reg(reg::DAEMON_STATE).load(Ordering::Acquire) == daemon_state::RUNNING
    }

    /// Ask an external daemon to stop.
    pub fn request_daemon_stop(&self) {
        if self.slow.is_none() {
            self.ring
                .reg(reg::DAEMON_STATE)
                .store(daemon_state::STOP_REQUESTED, Ordering::Release);
        }
    }

    fn send(&mut self, out: &mut Vec<Outgoing>, route: &Route, bytes: Vec<u8>) {
        self.c.tx_packets += 1;
        out.push((*route, bytes));
    }

    fn respond(&mut self, out: &mut Vec<Outgoing>, route: &Route, h: Header, payload: &[u8]) {
        let bytes = h.to_packet(payload);
        self.send(out, route, bytes);
    }

    /// Serve one incoming packet; responses are appended to `out`.
    pub fn handle(&mut self, route: &Route, bytes: &[u8], out: &mut Vec<Outgoing>) {
        self.c.rx_packets += 1;
        // Ack layer.
        match ack_layer::verify(bytes) {
            Verdict::Pass => {}
            Verdict::Drop => {
                self.c.dropped += 1;
                return;
            }
            Verdict::Nack(nack) => {
                self.c.nacks += 1;
                self.rules.cov.hit(Rule::CrcChecked);
                self.send(out, route, nack);
                return;
            }
        }
        // MAT: the opcode picks the path; undefined or extend opcodes are answered here.
        let p = Packet::new_unchecked(bytes);
        let h = match Header::parse(&p) {
            Ok(h) => h,
            Err(_) => {
                self.c.bad_requests += 1;
                let status = if path_of(p.opcode_raw()) == Some(Path::Extend) {
                    Status::Unsupported
                } else {
                    Status::BadRequest
                };
                let e = ack_layer::error_response(bytes, status);
                self.send(out, route, e);
                return;
            }
        };
        let kv_off = clio_proto::kv::is_kv(h.opcode) && self.kv.is_off();
        if h.opcode.path() == Path::Extend && (!self.offloads.serves(h.opcode) || kv_off) {
            // No offload unit (or Clio-KV's not configured yet by the slow path's KV_CONFIG):
            // the MAT answers as for an extend opcode it does not know, before the key check
            // (as the RTL does).
            self.c.bad_requests += 1;
            let e = ack_layer::error_response(bytes, Status::Unsupported);
            self.send(out, route, e);
            return;
        }
        // Key check: before translation, the sync unit or the slow path see the request.
        match self.keys.admit(&h) {
            KeyVerdict::Admit => {}
            KeyVerdict::Denied => {
                self.rules.cov.hit(Rule::KeyChecked);
                return self.respond(out, route, h.response_to(Status::Denied), &[]);
            }
            KeyVerdict::Stale => {
                self.rules.cov.hit(Rule::EpochChecked);
                return self.stale(out, route, &h);
            }
        }
        // Route check: an answer larger than twice the request only to a proven address.
        if !self.routes.admit(&h, route) {
            self.rules.cov.hit(Rule::RouteCookieChecked);
            return self.respond(out, route, h.response_to(Status::RouteUnverified), &[]);
        }
        let mut notices = Vec::new();
        match h.opcode.path() {
            Path::VirtualMemory if h.opcode == Opcode::Read => {
                self.read(route, &h, &mut notices, out)
            }
            Path::VirtualMemory => self.write(route, &h, p.payload(), &mut notices, out),
            Path::Sync if h.opcode == Opcode::Append => {
                self.append(route, &h, p.payload(), &mut notices, out)
            }
            Path::Sync => self.sync_op(route, &h, &mut notices, out),
            Path::SlowPath => self.forward_to_slow_path(route, &h, out),
            Path::Extend => self.extend(route, &h, p.payload(), &mut notices, out),
        }
        for n in notices {
            // Room was checked before each fault was taken.
            if self.ring.push_rx(&n).is_err() {
                self.c.bad_descriptors += 1;
            } else {
                self.rx_share.pushed(None);
            }
        }
        if self.ring.rx_pending() > 0 {
            if self.slow.is_some() {
                self.service_rings(out);
            } else if let Some(t) = &self.slow_thread {
                t.wake();
            }
        }
    }

    fn bad(&mut self, out: &mut Vec<Outgoing>, route: &Route, h: &Header) {
        self.c.bad_requests += 1;
        self.respond(out, route, h.response_to(Status::BadRequest), &[]);
    }

    fn read(
        &mut self,
        route: &Route,
        h: &Header,
        notices: &mut Vec<Descriptor>,
        out: &mut Vec<Outgoing>,
    ) {
        if !check_read(h) {
            let c = &mut self.rules.cov;
            c.hit_if(h.total_len == 0, Rule::ReadNotEmpty);
            c.hit_if(h.total_len > MAX_REQUEST_LEN, Rule::ReadLengthBound);
            return self.bad(out, route, h);
        }
        let page = self.layout.page_size();
        self.rules.read(h.pid, h.va, h.total_len as u64, page);
        // One response packet per MAX_PAYLOAD bytes, each translated as it goes (page by page,
        // in order, as the RTL streams them): when packet i reaches a page that does not
        // translate, packets 0..i have gone out and one error packet with index i ends the
        // answer (protocol.md section 2).
        let rx_free = self.ring.rx_free();
        for i in 0..packet_count(h.total_len) {
            let Some((off, len)) = segment(h.total_len, i) else {
                break;
            };
            let pieces = match self.vm.translate_range(
                &mut self.dram,
                &self.layout,
                h.pid,
                h.va + off as u64,
                len as u64,
                PERM_READ,
                rx_free,
                notices,
            ) {
                Ok(p) => p,
                Err(s) => return self.respond(out, route, read_response(h, s, i), &[]),
            };
            let mut data = vec![0u8; len as usize];
            if !read_pieces(&mut self.dram, &pieces, &mut data) {
                return self.respond(out, route, read_response(h, Status::Unmapped, i), &[]);
            }
            self.respond(out, route, read_response(h, Status::Ok, i), &data);
        }
    }

    fn write(
        &mut self,
        route: &Route,
        h: &Header,
        payload: &[u8],
        notices: &mut Vec<Descriptor>,
        out: &mut Vec<Outgoing>,
    ) {
        if !check_write_segment(h) {
            return self.bad(out, route, h);
        }
        if h.durable && !self.dram.is_persistent() {
            // No persistence domain: refuse before writing anything.
            self.c.bad_requests += 1;
            self.rules.cov.hit(Rule::DurableNeedsDomain);
            return self.respond(out, route, h.response_to(Status::Unsupported), &[]);
        }
        let Some((off, len)) = segment(h.total_len, h.pkt_index) else {
            return self.bad(out, route, h);
        };
        let Some(va) = h.va.checked_add(off as u64) else {
            return self.bad(out, route, h);
        };
        let rx_free = self.ring.rx_free();
        let status = match self.vm.translate_range(
            &mut self.dram,
            &self.layout,
            h.pid,
            va,
            len as u64,
            PERM_WRITE,
            rx_free,
            notices,
        ) {
            Ok(pieces) if write_pieces(&mut self.dram, &pieces, payload) => {
                self.rules.write(h.pid, va, len as u64);
                if h.durable {
                    self.durable
                        .extend(pieces.iter().map(|&(pa, n)| (pa, n as u64)));
                }
                Status::Ok
            }
            Ok(_) => Status::Unmapped,
            Err(s) => s,
        };
        if h.durable && status == Status::Ok {
            // Acknowledged once flushed: at the next `service`, together with every other
            // durable write that arrived meanwhile.
            self.c.durable_writes += 1;
            let bytes = h.response_to(status).to_packet(&[]);
            self.held.push((*route, bytes));
            return;
        }
        self.respond(out, route, h.response_to(status), &[]);
    }

    fn forward_to_slow_path(&mut self, route: &Route, h: &Header, out: &mut Vec<Outgoing>) {
        // The share of the request's source: it holds fewer RX descriptors than are free
        // past the notices' reserve (which also asks for room past the reserve).
        let free = self.ring.rx_free();
        self.rx_share.taken_up_to(self.ring.rx_pending());
        let source = rx_source_bucket(route);
        if !self.rx_share.admits(source, free) {
            self.c.slowpath_busy += 1;
            self.rules.cov.hit(Rule::SlowPathRingRoom);
            return self.respond(out, route, h.response_to(Status::RetryLater), &[]);
        }
        match self.ring.push_rx(&Descriptor::Request {
            route: *route,
            header: *h,
        }) {
            Ok(()) => {
                self.rx_share.pushed(Some(source));
                self.c.slowpath_requests += 1;
            }
            Err(_) => {
                self.c.slowpath_busy += 1;
                self.rules.cov.hit(Rule::SlowPathRingRoom);
                self.respond(out, route, h.response_to(Status::RetryLater), &[]);
            }
        }
    }

    /// Whether a slow-path thread owes replies (the front end then services the rings
    /// again soon).
    pub fn awaits_slow_path(&self) -> bool {
        self.slow_thread
            .as_ref()
            .is_some_and(SlowPathThread::owes_replies)
    }

    /// Whether durable writes wait for their flush (the next [`CBoard::service`]): a front end
    /// takes every packet already queued first, so one flush serves them all.
    pub fn holds_responses(&self) -> bool {
        !self.held.is_empty()
    }

    /// Flush the ranges of waiting durable writes (merged into runs, one `msync` each),
    /// then release their acknowledgements.
    fn persist_held(&mut self, out: &mut Vec<Outgoing>) {
        if self.held.is_empty() {
            return;
        }
        self.durable.sort_unstable();
        let mut runs: Vec<(u64, u64)> = Vec::new();
        // msync costs what is dirty, not the span: ranges closer than 1 MiB share one call.
        for &(pa, n) in &self.durable {
            match runs.last_mut() {
                Some((_, e)) if pa <= *e + (1 << 20) => *e = (*e).max(pa + n),
                _ => runs.push((pa, pa + n)),
            }
        }
        self.durable.clear();
        let mut ok = true;
        for (s, e) in runs {
            ok &= self.dram.persist(s, e - s);
        }
        self.c.durable_flushes += 1;
        for (route, mut bytes) in self.held.drain(..) {
            if !ok {
                // The flush failed: the data is not known to be durable; say so.
                bytes = super::ack_layer::error_response(&bytes, Status::RetryLater);
            }
            self.c.tx_packets += 1;
            out.push((route, bytes));
        }
    }

    /// Let the slow path run (in-process) and apply everything it sent: PTE writes, TLB
    /// invalidations, free pages, and replies (appended to `out`); flush waiting durable
    /// writes and release their acknowledgements. Call it regularly when the slow path is
    /// external. Returns the number of descriptors applied.
    pub fn service(&mut self, out: &mut Vec<Outgoing>) -> usize {
        self.persist_held(out);
        self.service_rings(out)
    }

    /// The ring part of [`CBoard::service`] (also run inside `handle` for an in-process slow
    /// path, where durable acknowledgements keep waiting for the front end's `service`).
    fn service_rings(&mut self, out: &mut Vec<Outgoing>) -> usize {
        let mut applied = 0;
        loop {
            let mut work = 0;
            if let Some(sp) = self.slow.as_mut() {
                work = sp.poll(&self.ring, &mut SlowPathFrames(&mut self.dram));
            }
            let mut n = 0;
            while let Some(d) = self.ring.pop_tx() {
                n += 1;
                match d {
                    Ok(Descriptor::PteWrite { bucket, slot, pte }) => {
                        if !PtWalker::write_slot(
                            &mut self.dram,
                            &self.layout,
                            bucket,
                            slot as usize,
                            &pte,
                        ) {
                            self.c.bad_descriptors += 1;
                        }
                    }
                    Ok(Descriptor::TlbInvalidate { pid, vpn }) => {
                        let removed = self.vm.tlb.invalidate(pid, vpn);
                        self.rules.cov.hit_if(removed, Rule::TlbInvalidation);
                    }
                    Ok(Descriptor::FreePage { pfn }) => {
                        if !self.layout.is_data_pfn(pfn) || !self.vm.faults.push(pfn) {
                            self.c.bad_descriptors += 1;
                        }
                    }
                    Ok(Descriptor::Reply { route, header }) => {
                        self.respond(out, &route, header, &[])
                    }
                    Ok(Descriptor::KvConfig {
                        pid,
                        base,
                        buckets,
                        records,
                        status,
                    }) => self.kv_config(pid, base, buckets, records, status),
                    Ok(Descriptor::KeyWrite { pid, key, epoch }) => {
                        self.rules.key_write(pid, key);
                        if !self.keys.write(pid, key, epoch) {
                            self.c.bad_descriptors += 1;
                        }
                    }
                    Ok(Descriptor::RingOwner { pid, client }) => {
                        if pid == clio_proto::ring::RING_NO_OWNER {
                            self.c.ring_releases += 1;
                        }
                        self.sync.set_owner(client, pid)
                    }
                    Ok(Descriptor::RouteKey { secret }) => {
                        self.routes.set_secret(RouteSecret(secret))
                    }
                    Ok(Descriptor::RingShare { share }) => self.sync.set_share(share),
                    Ok(_) | Err(_) => self.c.bad_descriptors += 1,
                }
            }
            applied += n;
            // In-process, keep going until the slow path has nothing more to say and nothing
            // waiting: a poll runs queued requests for a slice of time only, and a request
            // left for the next poll would be answered by a later `service`, not by the
            // `handle` that brought it, however loaded the machine (the golden model answers
            // the same whatever the time). A poll that did nothing ends the loop too.
            let waiting = self.slow.as_ref().map_or(0, |sp| sp.waiting());
            if self.slow.is_none() || (n == 0 && (waiting == 0 || work == 0)) {
                break;
            }
        }
        applied
    }
}
