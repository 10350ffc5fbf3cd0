//! One client over several memory nodes (docs/replication.md): one remote address space
//! spread over N nodes, with a PID and key per node, capacity-aware placement, a congestion
//! and incast window per node (each node is served by its own [`Client`] engine), operations
//! routed by address, and regions replicated on 2 or 3 nodes through the backups'
//! node-ordered logs ([`clio_proto::replog`], `Opcode::Append`), with fail-over.
//!
//! Addresses are global: [`MultiClient::ralloc`] returns an address in this client's own
//! address space, which a table maps to `(node, va)` for every replica of the region.

mod follow;
mod heal;
mod node_list;
mod pool;
mod replica;
mod space;
mod space_heal;
mod space_record;
mod step;

use step::Failed;

use node_list::{Node, NodeList};

pub use heal::HealReport;

pub use pool::{
    ConfigStore, LeasedEntry, LocalStore, OnChange, Pool, StoreError, View, WatchGuard,
};

use crate::{Client, ClioError, Config, Credentials, Result, Stats};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock, Weak};
use std::time::Duration;

/// A memory node to use: where it is and how many bytes it may hold (what `clio board
/// --memory` gave it, or any smaller share for this client).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeSpec {
    /// UDP address of the node.
    pub addr: SocketAddr,
    /// Bytes this client may place there.
    pub capacity: u64,
}

/// Tunables of a [`MultiClient`].
#[derive(Debug, Clone)]
pub struct MultiConfig {
    /// The engine of each node. Its `retry_budget()` bounds how long a dead node goes
    /// unnoticed (the fail-over detection time).
    pub node: Config,
    /// Bytes of the node-ordered log this client keeps at each node that is a backup.
    pub log_bytes: u64,
    /// Replicated writes and log records are acknowledged only once durable on every replica
    /// (`FLAG_DURABLE`; needs nodes with a persistence domain, `clio board --memory-file`).
    /// Off: once in every replica's DRAM.
    pub durable: bool,
    /// Bytes a new replica is filled with per step of re-replication
    /// ([`MultiClient::heal`]); each step holds the region's lock, so smaller steps delay
    /// the region's writers less and take longer in all.
    pub heal_chunk: u64,
    /// Heal in the background: a thread of the client's re-replicates regions that lost a
    /// replica (and tops them up again on a readmitted node) as soon as a node is dropped or
    /// readmitted, and retries every second while a region is short. Off: the application
    /// calls [`MultiClient::heal`] itself.
    pub auto_heal: bool,
    /// A pool client's presence in the pool's store (`/clio/pools/<name>/clients/<id>` =
    /// the epoch it follows) is kept under a lease of this long, renewed meanwhile: gone this
    /// long after the client's process dies (`clio pool show` lists the clients).
    pub presence_lease: Duration,
    /// The shared space this client writes with the pool's other clients of the same name
    /// (`Some`: needs a pool; docs/replication.md "Several writers"). `None`: the client's
    /// regions are its own, in address spaces of its own.
    pub space: Option<String>,
}

impl Default for MultiConfig {
    fn default() -> Self {
        MultiConfig {
            node: Config {
                // Detection in at most 9 x 50 ms = 450 ms (docs/replication.md).
                max_retries: 8,
                max_rto: Duration::from_millis(50),
                // Regions and logs are small: track dependencies per 4 KiB, not per 4 MiB,
                // so a log's writes to different pages go out together.
                track_shift: 12,
                ..Config::default()
            },
            log_bytes: 1 << 20,
            durable: false,
            heal_chunk: 64 << 10,
            auto_heal: true,
            presence_lease: Duration::from_secs(5),
            space: None,
        }
    }
}

impl MultiConfig {
    /// Longest time an operation waits on a node that died before the client gives up on
    /// it and fails over (the engine's retry budget).
    pub fn detection_bound(&self) -> Duration {
        self.node.retry_budget()
    }
}

/// Serialises the operations on one replicated region (so its backups' logs hold its
/// records in the order the primary executed them) and marks a primary whose log still
/// holds records of it (after a fail-over).
#[derive(Default)]
struct RegionSync {
    lock: Mutex<()>,
    stale: AtomicBool,
    /// A step of a new replica's fill waits for `lock` (`heal.rs`): operations let it go
    /// first. The lock is not fair, and a thread that writes the region without pause would
    /// otherwise take it again every time and hold the fill off for good.
    fill_waiting: AtomicBool,
}

impl RegionSync {
    /// Take the region's lock for an operation (after a fill step that waits for it).
    fn enter(&self) -> MutexGuard<'_, ()> {
        while self.fill_waiting.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        lock(&self.lock)
    }

    /// Take the region's lock for a fill step, ahead of the operations that come after.
    fn enter_for_fill(&self) -> MutexGuard<'_, ()> {
        self.fill_waiting.store(true, Ordering::Release);
        let g = lock(&self.lock);
        self.fill_waiting.store(false, Ordering::Release);
        g
    }
}

#[derive(Clone)]
struct Region {
    len: u64,
    /// `(node, va)` of every live replica; the first is the primary.
    replicas: Vec<(usize, u64)>,
    /// Replicas being filled by re-replication (`heal.rs`): they get every write's records
    /// like a backup, but are neither read nor promoted until their copy is complete.
    joining: Vec<(usize, u64)>,
    /// Replicas asked for at allocation (what re-replication restores).
    target: usize,
    sync: Arc<RegionSync>,
}

impl Region {
    /// Every replica that receives records: the backups and the joining ones.
    fn record_targets(&self) -> impl Iterator<Item = &(usize, u64)> {
        self.replicas[1..].iter().chain(self.joining.iter())
    }
}

/// Counters of a [`MultiClient`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MultiStats {
    /// Nodes declared dead.
    pub failed_nodes: u64,
    /// Regions whose primary moved to a backup.
    pub promotions: u64,
    /// Logs applied (by compaction or promotion).
    pub log_applies: u64,
    /// Records applied from logs.
    pub records_applied: u64,
    /// Time spent applying logs, microseconds.
    pub apply_micros: u64,
    /// Replicas added by re-replication ([`MultiClient::heal`]).
    pub replicas_added: u64,
    /// Bytes copied into them.
    pub bytes_copied: u64,
    /// Nodes put back in service ([`MultiClient::readmit`], or a view that readmitted them).
    pub readmitted: u64,
    /// Nodes announced in the pool after this client connected, and added to it.
    pub nodes_added: u64,
    /// `Stale` answers met (a node held a newer epoch of the pool than this client's view):
    /// each made the client read the view again.
    pub stale_answers: u64,
    /// A shared space's region locks taken at a primary (an operation that found its lock
    /// kept from the one before takes none).
    pub locks_taken: u64,
    /// Locks of a shared space taken over from a writer that was gone.
    pub locks_broken: u64,
    /// Regions made equal on every replica after their lock was taken over.
    pub repairs: u64,
}

struct Inner {
    nodes: NodeList,
    regions: RwLock<BTreeMap<u64, Region>>,
    next: AtomicU64,
    cfg: MultiConfig,
    failover: Mutex<()>,
    stats: Mutex<MultiStats>,
    /// The pool whose view this client follows (`pool.rs`); `None`: it decides alone.
    pool: Option<Pool>,
    /// The epoch of the newest view adopted (0 without a pool).
    epoch: AtomicU64,
    /// The watches on the pool's view (and its node entries), ended when the client is
    /// dropped.
    watch: Mutex<Vec<Box<dyn WatchGuard>>>,
    /// The nodes came from the pool's entries (`connect_pool`): a node whose entry goes is
    /// taken out, and one that announces itself again is readmitted.
    follow: bool,
    /// One re-replication at a time (`heal.rs`).
    healing: Mutex<()>,
    /// One look at the pool's node entries at a time (`follow.rs`: the entries' watch and the
    /// healer's rounds both look), so a node announced once is connected once.
    refreshing: Mutex<()>,
    /// This client's presence entry in the pool's store (`presence_lease`), and its id.
    presence: Mutex<Option<Box<dyn LeasedEntry>>>,
    id: String,
    /// This client's token in a shared space's lock words (`space::token_of(id)`).
    token: u64,
    /// The store revision of the shared space's record whose table this client holds.
    space_rev: AtomicU64,
    /// The region locks this writer of a shared space keeps between operations: region
    /// base -> (primary, lock word there, end of the last operation, the view's epoch when
    /// taken) (`space.rs`).
    held: Mutex<std::collections::HashMap<u64, (usize, u64, std::time::Instant, u64)>>,
    /// Wakes the background healer: set when a node is dropped or readmitted.
    heal_due: Arc<(Mutex<bool>, std::sync::Condvar)>,
}

/// A client over several memory nodes (cheap to clone, shared by threads).
#[derive(Clone)]
pub struct MultiClient {
    inner: Arc<Inner>,
    /// Shared by the application's handles only; this client's own threads (healer, lock
    /// keeper, watch callbacks) make handles without it. When the last application handle
    /// goes the client leaves at once (`Inner::leave`), although one of its threads may still
    /// hold `inner` for a moment.
    _app: Option<Arc<Leave>>,
}

/// Makes the client leave when the application's last handle is dropped.
struct Leave(Arc<Inner>);

impl Drop for Leave {
    fn drop(&mut self) {
        self.0.leave();
    }
}

impl Inner {
    /// Leave the pool: give back every region lock kept (another writer would otherwise wait
    /// until this one's presence entry is gone and then take it over: a new view, a repair),
    /// end the presence entry and the watches. Runs when the last application handle goes
    /// and again (then with nothing left to do) when `Inner` itself is dropped.
    fn leave(&self) {
        let held: Vec<_> = lock(&self.held).drain().map(|(_, v)| v).collect();
        for (i, word, _, _) in held {
            if let Some(c) = self.nodes.get(i).and_then(|n| n.engine().ok()) {
                let _ = c.compare_and_swap(word, self.token, 0);
            }
        }
        drop(lock(&self.presence).take());
        drop(std::mem::take(&mut *lock(&self.watch)));
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.leave();
    }
}

impl MultiClient {
    /// A handle for one of this client's own threads: it does not keep the client in the
    /// pool (see `_app`).
    fn internal(inner: Arc<Inner>) -> MultiClient {
        MultiClient { inner, _app: None }
    }
}

/// First global address handed out (page 0 stays unmapped, as on a node).
const GLOBAL_BASE: u64 = 1 << 32;
/// Alignment of global regions (and a guard gap between them).
const GLOBAL_ALIGN: u64 = 1 << 21;

/// Global address space a `len`-byte region takes: whole alignment units and a guard gap.
fn global_span(len: u64) -> u64 {
    len.div_ceil(GLOBAL_ALIGN) * GLOBAL_ALIGN + GLOBAL_ALIGN
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Register a remote address space at the node at `addr`.
fn connect_node(addr: SocketAddr, cfg: &MultiConfig) -> Result<Client> {
    let t = Box::new(crate::transport::UdpTransport::connect(addr)?);
    Client::connect(t, cfg.node.clone())
}

/// A pool client's id in its presence entry: this process's id and a random tag (several
/// clients in one process are told apart).
fn client_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let tag = std::collections::hash_map::RandomState::new()
        .build_hasher()
        .finish();
    format!("pid{}-{:08x}", std::process::id(), tag as u32)
}

/// Errors that mean "this node is gone" rather than "this request is wrong".
fn node_failed(e: &ClioError) -> bool {
    matches!(
        e,
        ClioError::Timeout { .. }
            | ClioError::Transport(_)
            | ClioError::UnknownProcess
            | ClioError::Denied
    )
}

impl MultiClient {
    /// Register a remote address space at every node (each hands out its own PID and key).
    /// The client decides alone which nodes are dead (one process; see
    /// [`MultiClient::connect_udp_pool`] for clients that agree).
    pub fn connect_udp(nodes: &[NodeSpec], cfg: MultiConfig) -> Result<MultiClient> {
        Self::connect(nodes, cfg, None, false)
    }

    fn connect(
        nodes: &[NodeSpec],
        cfg: MultiConfig,
        pool: Option<Pool>,
        follow: bool,
    ) -> Result<MultiClient> {
        if nodes.is_empty() {
            return Err(ClioError::InvalidArgument(
                "a multi-node client needs a node",
            ));
        }
        let view = match &pool {
            Some(p) => Some(pool::read_view(p)?.0),
            None => None,
        };
        // A writer of a shared space joins the space's address space at each node.
        let space = match (&pool, &cfg.space) {
            (Some(p), Some(name)) => match p.store.read(&p.space_key(name))? {
                Some((b, _)) => Some(space_record::SpaceRecord::decode(&b)?),
                None => None,
            },
            (None, Some(_)) => {
                return Err(ClioError::InvalidArgument(
                    "a shared space needs a pool (connect_udp_pool or connect_pool)",
                ))
            }
            _ => None,
        };
        let mut v = Vec::with_capacity(nodes.len());
        let mut unreachable_nodes = Vec::new();
        for n in nodes {
            let out = view.as_ref().is_some_and(|w| w.out.contains(&n.addr));
            let client = if out {
                None
            } else {
                let opened = match &cfg.space {
                    Some(_) => space::open_node(
                        n.addr,
                        &cfg,
                        space.as_ref(),
                        view.as_ref().map_or(0, |w| w.epoch),
                    ),
                    None => connect_node(n.addr, &cfg),
                };
                match opened {
                    Ok(c) => Some(Arc::new(c)),
                    // In a pool, a node that does not answer is taken out (below) rather than
                    // failing the connect: the others serve.
                    Err(e) if pool.is_some() && node_failed(&e) => {
                        unreachable_nodes.push(v.len());
                        None
                    }
                    Err(e) => return Err(e),
                }
            };
            v.push(Node::new(n.addr, n.capacity, client, out));
        }
        let id = client_id();
        let inner = Arc::new(Inner {
            nodes: NodeList::new(v)?,
            regions: RwLock::new(BTreeMap::new()),
            next: AtomicU64::new(GLOBAL_BASE),
            cfg,
            failover: Mutex::new(()),
            stats: Mutex::new(MultiStats::default()),
            epoch: AtomicU64::new(view.as_ref().map_or(0, |w| w.epoch)),
            pool,
            watch: Mutex::new(Vec::new()),
            follow,
            healing: Mutex::new(()),
            refreshing: Mutex::new(()),
            presence: Mutex::new(None),
            token: space::token_of(&id),
            space_rev: AtomicU64::new(0),
            held: Mutex::new(std::collections::HashMap::new()),
            id,
            heal_due: Arc::new((Mutex::new(false), std::sync::Condvar::new())),
        });
        // The application's first handle: a construction that fails below leaves at once too.
        let m = MultiClient {
            _app: Some(Arc::new(Leave(inner.clone()))),
            inner,
        };
        if m.inner.cfg.auto_heal {
            heal::spawn_healer(Arc::downgrade(&m.inner), m.inner.heal_due.clone())?;
        }
        if let Some(p) = &m.inner.pool {
            // A view that cannot be read now is read again at the next change or at this
            // client's next failure.
            let guard = p
                .store
                .watch(&p.view_key(), m.on_change(MultiClient::refresh_view))?;
            lock(&m.inner.watch).push(guard);
            let entry = p.store.put_leased(
                &format!("{}{}", p.clients_prefix(), m.inner.id),
                Pool::client_entry(m.epoch()).as_bytes(),
                m.inner.cfg.presence_lease,
            )?;
            *lock(&m.inner.presence) = Some(entry);
            // A view stored between the read above and the watch's start.
            m.refresh_view()?;
            for i in unreachable_nodes {
                m.fail_node(i)?;
            }
        }
        if m.shared() {
            space::spawn_lock_keeper(Arc::downgrade(&m.inner))?;
            m.refresh_space()?;
            let (p, key) = m.space_pool()?;
            let guard = p
                .store
                .watch(&key, m.on_change(MultiClient::refresh_space))?;
            lock(&m.inner.watch).push(guard);
            // A change stored between the read above and the watch's start.
            m.refresh_space()?;
        }
        Ok(m)
    }

    /// The global identity: every node's address with this client's PID and key there.
    pub fn credentials(&self) -> Vec<(SocketAddr, Credentials)> {
        self.inner
            .nodes
            .iter()
            .filter_map(|(_, n)| Some((n.addr, n.engine().ok()?.credentials())))
            .collect()
    }

    /// This client's token in a shared space's lock words (a region's, at its primary, and a
    /// log's apply lock) while it holds them: derived from [`MultiClient::client_id`], so a
    /// waiter can tell from the pool's presence entries whether the holder is still there.
    pub fn lock_token(&self) -> u64 {
        self.inner.token
    }

    /// Number of nodes (dead ones included).
    pub fn nodes(&self) -> usize {
        self.inner.nodes.len()
    }

    /// The address of node `i` (the order of the node list given at connect; with
    /// [`MultiClient::connect_pool`], the announced nodes in address order).
    pub fn node_addr(&self, i: usize) -> Option<SocketAddr> {
        self.inner.nodes.get(i).map(|n| n.addr)
    }

    /// Whether node `i` was declared dead.
    pub fn node_dead(&self, i: usize) -> bool {
        self.inner
            .nodes
            .get(i)
            .is_some_and(|n| n.dead.load(Ordering::Acquire))
    }

    /// Bytes this client placed on each node.
    pub fn placed(&self) -> Vec<u64> {
        self.inner
            .nodes
            .iter()
            .map(|(_, n)| n.used.load(Ordering::Relaxed))
            .collect()
    }

    /// The engine counters of each node (its own window and RTT estimator; zeros for a node
    /// out of service from the start).
    pub fn node_stats(&self) -> Vec<Stats> {
        self.inner
            .nodes
            .iter()
            .map(|(_, n)| n.engine().map(|c| c.stats()).unwrap_or_default())
            .collect()
    }

    /// Fail-over and log counters.
    pub fn stats(&self) -> MultiStats {
        *lock(&self.inner.stats)
    }

    /// The nodes holding the region at `addr`, primary first.
    pub fn replicas_of(&self, addr: u64) -> Option<Vec<usize>> {
        let regions = self.inner.regions.read().unwrap_or_else(|p| p.into_inner());
        regions
            .get(&addr)
            .map(|r| r.replicas.iter().map(|&(n, _)| n).collect())
    }

    /// Where each live replica of the region at `addr` is: its node's address and its address
    /// in this client's address space there (primary first). In a shared space each replica's
    /// lock word follows its bytes, at the next multiple of 8.
    pub fn placement(&self, addr: u64) -> Option<Vec<(SocketAddr, u64)>> {
        let regions = self.inner.regions.read().unwrap_or_else(|p| p.into_inner());
        regions.get(&addr).map(|r| {
            r.replicas
                .iter()
                .map(|&(n, va)| (self.inner.nodes.at(n).addr, va))
                .collect()
        })
    }

    /// Allocate `len` bytes replicated on `replicas` (1 to 3) distinct nodes. Placement is
    /// capacity-aware: the live nodes with the most room left (capacity minus what this
    /// client placed there) first; a node that answers OutOfMemory is skipped. Returns the
    /// region's global address.
    pub fn ralloc(&self, len: u64, replicas: usize) -> Result<u64> {
        if len == 0 || !(1..=3).contains(&replicas) {
            return Err(ClioError::InvalidArgument(
                "ralloc: len > 0 and 1..=3 replicas",
            ));
        }
        let inner = &self.inner;
        let mut order: Vec<usize> = (0..inner.nodes.len())
            .filter(|&i| !inner.nodes.at(i).dead.load(Ordering::Acquire))
            .collect();
        let room = |i: usize| {
            let n = inner.nodes.at(i);
            n.capacity.saturating_sub(n.used.load(Ordering::Relaxed))
        };
        order.sort_by_key(|&i| (std::cmp::Reverse(room(i)), i));
        let mut got: Vec<(usize, u64)> = Vec::new();
        let mut last_err = ClioError::OutOfMemory;
        for i in order {
            if got.len() == replicas {
                break;
            }
            if room(i) < len {
                continue;
            }
            let bytes = space::replica_bytes(len, self.shared());
            match inner.engine(i).and_then(|c| c.ralloc(bytes)) {
                Ok(va) => {
                    inner.nodes.at(i).used.fetch_add(len, Ordering::Relaxed);
                    got.push((i, va));
                }
                Err(e) => {
                    if node_failed(&e) {
                        self.fail_node(i)?;
                    }
                    last_err = e;
                }
            }
        }
        if got.len() < replicas {
            for &(i, va) in &got {
                inner.nodes.at(i).used.fetch_sub(len, Ordering::Relaxed);
                // Best effort: a node that fails here is found dead by the next operation.
                let _ = inner.engine(i).and_then(|c| c.rfree(va));
            }
            return Err(last_err);
        }
        if self.shared() {
            return self.publish_region(len, replicas, &got).inspect_err(|_| {
                for &(i, va) in &got {
                    inner.nodes.at(i).used.fetch_sub(len, Ordering::Relaxed);
                    // Best effort, as above.
                    let _ = inner.engine(i).and_then(|c| c.rfree(va));
                }
            });
        }
        let span = global_span(len);
        let addr = inner.next.fetch_add(span, Ordering::Relaxed);
        let region = Region {
            len,
            replicas: got,
            joining: Vec::new(),
            target: replicas,
            sync: Arc::new(RegionSync::default()),
        };
        inner
            .regions
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(addr, region);
        Ok(addr)
    }

    /// Free the region at `addr` on every live replica.
    pub fn rfree(&self, addr: u64) -> Result<()> {
        let r = if self.shared() {
            self.unpublish_region(addr)?
        } else {
            self.inner
                .regions
                .write()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&addr)
                .ok_or(ClioError::Unmapped { va: addr })?
        };
        for (i, va) in r.replicas.into_iter().chain(r.joining) {
            let n = self.inner.nodes.at(i);
            n.used.fetch_sub(r.len, Ordering::Relaxed);
            match self.inner.engine(i).and_then(|c| c.rfree(va)) {
                Ok(()) => {}
                Err(e) if node_failed(&e) => self.fail_node(i)?,
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// The region holding `[addr, addr + len)`: its base and a snapshot. A writer of a
    /// shared space that does not know the address reads the space's record again (another
    /// writer allocated it).
    fn locate(&self, addr: u64, len: u64) -> Result<(u64, Region)> {
        match self.locate_known(addr, len) {
            Err(ClioError::Unmapped { .. }) if self.shared() => {
                self.refresh_space()?;
                self.locate_known(addr, len)
            }
            other => other,
        }
    }

    fn locate_known(&self, addr: u64, len: u64) -> Result<(u64, Region)> {
        let regions = self.inner.regions.read().unwrap_or_else(|p| p.into_inner());
        let (&base, r) = regions
            .range(..=addr)
            .next_back()
            .ok_or(ClioError::Unmapped { va: addr })?;
        let end = addr
            .checked_add(len)
            .ok_or(ClioError::Unmapped { va: addr })?;
        if end > base + r.len {
            return Err(ClioError::Unmapped { va: addr });
        }
        if r.replicas.is_empty() {
            return Err(ClioError::NodeLost { addr: base });
        }
        Ok((base, r.clone()))
    }

    /// Drop node `i`: remove it from every region; regions whose primary it was move to their
    /// first backup, marked stale until its log is applied (by the next operation on the
    /// region, under the region's lock, before anything else reaches it).
    fn drop_node(&self, i: usize) {
        let _g = lock(&self.inner.failover);
        if self.inner.nodes.at(i).dead.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut promotions = 0;
        let mut regions = self
            .inner
            .regions
            .write()
            .unwrap_or_else(|p| p.into_inner());
        for r in regions.values_mut() {
            r.joining.retain(|&(n, _)| n != i);
            let Some(pos) = r.replicas.iter().position(|&(n, _)| n == i) else {
                continue;
            };
            r.replicas.remove(pos);
            if pos == 0 && !r.replicas.is_empty() {
                r.sync.stale.store(true, Ordering::Release);
                promotions += 1;
            }
        }
        let mut s = lock(&self.inner.stats);
        s.failed_nodes += 1;
        s.promotions += promotions;
        drop(s);
        self.wake_healer();
    }

    /// Read `len` bytes at `addr` (from the region's primary).
    pub fn rread(&self, addr: u64, len: usize) -> Result<Vec<u8>> {
        let mut stale = 0;
        loop {
            let (base, r) = self.locate(addr, len as u64)?;
            if r.sync.stale.load(Ordering::Acquire) {
                // Promoted under the region's locks, as before any operation.
                self.replicated(addr, len as u64, |_, _, _| Ok(()))?;
                continue;
            }
            let (p, va) = r.replicas[0];
            match self
                .inner
                .engine(p)
                .and_then(|c| c.rread(va + (addr - base), len))
            {
                Err(e) if node_failed(&e) => self.fail_node(p)?,
                Err(ClioError::Stale) => self.after_stale(&mut stale)?,
                other => return other,
            }
        }
    }

    /// Write `data` at `addr`: at the primary and, for a replicated region, as records in
    /// every backup's log; returns once every replica has it (durably with
    /// [`MultiConfig::durable`]). A write whose records would take more than half a backup's
    /// log goes in pieces of that size, one after another (each piece a replicated write;
    /// the pieces are not one atomic write, as no write larger than a packet is).
    pub fn rwrite(&self, addr: u64, data: &[u8]) -> Result<()> {
        // The whole range first: a write that leaves its region writes nothing.
        self.locate(addr, data.len() as u64)?;
        let piece = self.write_piece();
        for (k, chunk) in data.chunks(piece).enumerate() {
            self.replicated(
                addr + (k * piece) as u64,
                chunk.len() as u64,
                |me, r, off| me.write_all(r, off, chunk),
            )?;
        }
        Ok(())
    }

    /// The most bytes one replicated write carries: records of half a log, so that a write
    /// always fits in an applied log (a larger one would meet `LogFull` for ever).
    fn write_piece(&self) -> usize {
        use clio_proto::replog::{footprint, LOG_HEAD, MAX_REPL_DATA, REPL_HEADER};
        let record = footprint((REPL_HEADER + MAX_REPL_DATA) as u32);
        let records = (self.inner.cfg.log_bytes.saturating_sub(LOG_HEAD) / 2 / record).max(1);
        records as usize * MAX_REPL_DATA
    }

    /// Atomically add `delta` to the word at `addr`; returns the old value.
    pub fn fetch_add(&self, addr: u64, delta: u64) -> Result<u64> {
        self.atomic(clio_proto::Opcode::FetchAdd, addr, delta, 0)
    }

    /// If the word at `addr` equals `expected`, store `new`; returns the old value.
    pub fn compare_and_swap(&self, addr: u64, expected: u64, new: u64) -> Result<u64> {
        self.atomic(clio_proto::Opcode::CompareAndSwap, addr, expected, new)
    }

    /// Test-and-set the word at `addr`; returns the old value (0: the lock is now ours).
    pub fn test_and_set(&self, addr: u64) -> Result<u64> {
        self.atomic(clio_proto::Opcode::TestAndSet, addr, 0, 0)
    }

    /// Acquire the lock word at `addr`, spinning with backoff.
    pub fn rlock(&self, addr: u64) -> Result<()> {
        let mut backoff = Duration::from_micros(2);
        while self.test_and_set(addr)? != 0 {
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_micros(500));
        }
        Ok(())
    }

    /// Release the lock word at `addr`.
    pub fn runlock(&self, addr: u64) -> Result<()> {
        self.atomic(clio_proto::Opcode::Unlock, addr, 0, 0)
            .map(|_| ())
    }
}
