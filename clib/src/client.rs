//! The application-facing API (paper 3.1): one [`Client`] per process and memory node.

pub(crate) mod kv;
pub(crate) mod tx;

use crate::config::Config;
use crate::engine::{ChaseOutcome, Engine, OpSpec, Output, Stats};
use crate::error::{ClioError, Result};
use crate::transport::{RawEthernetTransport, Transport, UdpTransport, XdpTransport};
use clio_proto::consts::{ATOMIC_BYTES, VA_LIMIT};
use clio_proto::offload::{chase, ChaseLayout};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::Opcode;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

/// Read permission for [`Client::ralloc_with`].
pub const READ: u8 = PERM_READ;
/// Write permission for [`Client::ralloc_with`].
pub const WRITE: u8 = PERM_WRITE;

/// An asynchronous operation in flight; redeem it with [`Client::rpoll`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Handle(pub u64);

/// How to reach the memory node (the API is the same for all).
#[derive(Debug, Clone)]
pub enum TransportKind {
    /// IPv4/UDP to this address (no root).
    Udp(SocketAddr),
    /// Raw Ethernet on `iface` to the node's MAC (root or CAP_NET_RAW).
    RawEthernet {
        /// Local interface.
        iface: String,
        /// MAC address of the memory node.
        node_mac: [u8; 6],
    },
    /// Raw Ethernet over AF_XDP on one queue of `iface` to the node's MAC (root; Linux >= 5.9;
    /// the interface must have no other XDP program).
    Xdp {
        /// Local interface.
        iface: String,
        /// MAC address of the memory node.
        node_mac: [u8; 6],
        /// Receive queue of the interface to bind (0 on veth and single-queue devices).
        queue: u32,
    },
}

impl TransportKind {
    /// Open the transport.
    pub fn open(&self) -> Result<Box<dyn Transport>> {
        Ok(match self {
            TransportKind::Udp(a) => Box::new(UdpTransport::connect(*a)?),
            TransportKind::RawEthernet { iface, node_mac } => {
                Box::new(RawEthernetTransport::open(iface, *node_mac)?)
            }
            TransportKind::Xdp {
                iface,
                node_mac,
                queue,
            } => Box::new(XdpTransport::open(iface, *node_mac, *queue)?),
        })
    }
}

/// What another process needs to join a remote address space (besides the node's address):
/// its PID and key. Written `PID:KEY` with the key in hex (`Display` / `FromStr`), so it can be
/// passed on a command line or through a file; treat it like a password.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct Credentials {
    /// The remote address space.
    pub pid: u16,
    /// Its secret.
    pub key: u64,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the secret by accident.
        f.debug_struct("Credentials")
            .field("pid", &self.pid)
            .field("key", &"<secret>")
            .finish()
    }
}

impl std::fmt::Display for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{:016x}", self.pid, self.key)
    }
}

impl std::str::FromStr for Credentials {
    type Err = ClioError;
    fn from_str(s: &str) -> Result<Credentials> {
        let bad = ClioError::InvalidArgument("credentials are PID:KEY (decimal pid, hex key)");
        let (p, k) = s.trim().split_once(':').ok_or(bad.clone())?;
        let pid = p.parse::<u16>().map_err(|_| bad.clone())?;
        let key = u64::from_str_radix(k, 16).map_err(|_| bad.clone())?;
        if pid == 0 || key == 0 {
            return Err(bad);
        }
        Ok(Credentials { pid, key })
    }
}

/// One process's membership of a remote address space (RAS) on one memory node: the session
/// is connection-less. Cheap to clone and safe to share between threads; every clone is the
/// same member. The first process creates the RAS ([`Client::connect`]); processes on any CN
/// join it with its [`Credentials`] ([`Client::join`]) and then share its memory, locks and
/// atomics exactly as threads of one process do.
///
/// While a client lives, a background thread renews its lease (a heartbeat every quarter of
/// the node's lease). When the last clone is dropped the member leaves the RAS (bounded wait);
/// the last member to leave tears the RAS down and the node frees its memory. A process that
/// dies without leaving is removed when its lease ends.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
    /// Dropping it stops the heartbeat thread.
    stop_heartbeat: Mutex<Option<mpsc::Sender<()>>>,
    left: AtomicBool,
    lease_lost: AtomicBool,
    lease_ms: AtomicU64,
    /// Where this client stages Clio-KV values too long for one packet.
    kv_staging: kv::Staging,
}

/// How long a dropped client waits for its CN acks and its Unregister to be answered.
const GOODBYE_WAIT: Duration = Duration::from_millis(500);

impl Drop for Inner {
    fn drop(&mut self) {
        if let Ok(mut s) = self.stop_heartbeat.lock() {
            s.take();
        }
        self.engine.flush_acks(GOODBYE_WAIT);
        if !self.left.swap(true, Ordering::AcqRel) {
            let id = self.engine.submit(OpSpec::Unregister { destroy: false });
            let _ = self.engine.wait_until(id, Instant::now() + GOODBYE_WAIT);
        }
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("pid", &self.pid())
            .field("transport", &self.inner.engine.transport_name())
            .finish()
    }
}

fn check_range(va: u64, len: u64) -> Result<()> {
    if len == 0 {
        return Err(ClioError::InvalidArgument("zero-length access"));
    }
    match va.checked_add(len) {
        Some(end) if end <= VA_LIMIT => Ok(()),
        _ => Err(ClioError::InvalidArgument(
            "range exceeds the 48-bit remote address space",
        )),
    }
}

fn check_word(va: u64) -> Result<()> {
    if !va.is_multiple_of(ATOMIC_BYTES) {
        return Err(ClioError::InvalidArgument(
            "atomics need an 8-byte aligned address",
        ));
    }
    check_range(va, ATOMIC_BYTES)
}

impl Client {
    /// Connect over UDP with the default configuration and register.
    pub fn connect_udp(node: SocketAddr) -> Result<Client> {
        Client::connect(TransportKind::Udp(node).open()?, Config::default())
    }

    /// Create a new remote address space at the node behind `transport` and return its first
    /// member.
    pub fn connect(transport: Box<dyn Transport>, cfg: Config) -> Result<Client> {
        let heartbeat = cfg.heartbeat;
        let engine = Engine::new(transport, cfg);
        // The nonce makes a retried registration return the same answer instead of a new RAS.
        let nonce: u64 = rand::random();
        let id = engine.submit(OpSpec::Register { nonce });
        match engine.wait(id)? {
            Output::Member { pid, key, client } => engine.set_member(pid, key, client),
            _ => return Err(ClioError::BadRequest),
        }
        Client::start(engine, heartbeat)
    }

    /// Join the existing remote address space `creds` at the node behind `transport`: from
    /// then on this process shares its memory, locks and atomics with every other member.
    /// Fails with [`ClioError::Denied`] if the key is wrong or the RAS is gone.
    pub fn join(transport: Box<dyn Transport>, cfg: Config, creds: Credentials) -> Result<Client> {
        let heartbeat = cfg.heartbeat;
        let engine = Engine::new(transport, cfg);
        engine.set_member(creds.pid, creds.key, 0);
        let nonce: u64 = rand::random();
        let id = engine.submit(OpSpec::Join { nonce });
        match engine.wait(id)? {
            Output::Member { client, .. } => engine.set_member(creds.pid, creds.key, client),
            _ => return Err(ClioError::BadRequest),
        }
        Client::start(engine, heartbeat)
    }

    /// Join over UDP with the default configuration.
    pub fn join_udp(node: SocketAddr, creds: Credentials) -> Result<Client> {
        Client::join(TransportKind::Udp(node).open()?, Config::default(), creds)
    }

    fn start(engine: Engine, heartbeat: bool) -> Result<Client> {
        let c = Client {
            inner: Arc::new(Inner {
                engine,
                stop_heartbeat: Mutex::new(None),
                left: AtomicBool::new(false),
                lease_lost: AtomicBool::new(false),
                lease_ms: AtomicU64::new(0),
                kv_staging: kv::Staging::default(),
            }),
        };
        if heartbeat {
            // The first renewal also tells the node's lease, which sets the interval.
            c.heartbeat()?;
            let (tx, rx) = mpsc::channel::<()>();
            if let Ok(mut s) = c.inner.stop_heartbeat.lock() {
                *s = Some(tx);
            }
            let weak = Arc::downgrade(&c.inner);
            std::thread::Builder::new()
                .name("clio-heartbeat".into())
                .spawn(move || heartbeat_loop(weak, rx))
                .map_err(|e| ClioError::io("starting the heartbeat thread", e))?;
        }
        Ok(c)
    }

    /// Renew this member's lease now (the background thread does it every quarter lease);
    /// returns the node's lease.
    pub fn heartbeat(&self) -> Result<Duration> {
        let r = self.sync(OpSpec::Heartbeat);
        match r {
            Ok(Output::Value(ms)) => {
                self.inner.lease_ms.store(ms, Ordering::Relaxed);
                Ok(Duration::from_millis(ms))
            }
            Ok(_) => Err(ClioError::BadRequest),
            Err(e) => {
                if matches!(e, ClioError::UnknownProcess | ClioError::Denied) {
                    self.inner.lease_lost.store(true, Ordering::Relaxed);
                }
                Err(e)
            }
        }
    }

    /// Enter epoch `epoch` of a replicated pool (`clio_proto::epoch`, a wire epoch): every
    /// request built from now on carries it, and the node raises this RAS's epoch to it
    /// (`SetEpoch`), after which it refuses every request of the RAS that carries an older
    /// one with [`ClioError::Stale`] (this client's, or another member's). The same epoch
    /// again is Ok. [`ClioError::Stale`] if the RAS holds a newer epoch already (this
    /// client's view is out of date; the client keeps the epoch it had, as on any error); [`ClioError::InvalidArgument`] for 0 (a RAS never goes
    /// back to unfenced). Multi-node clients of a pool call it on each node of a new view
    /// before they act on the view (docs/replication.md, "Epochs").
    pub fn set_epoch(&self, epoch: u16) -> Result<()> {
        if epoch == clio_proto::epoch::UNFENCED {
            return Err(ClioError::InvalidArgument("epoch 0 is the unfenced state"));
        }
        let before = self.inner.engine.epoch();
        self.inner.engine.set_epoch(epoch);
        let r = match self.sync(OpSpec::SetEpoch { epoch }) {
            Ok(Output::Value(_)) => Ok(()),
            Ok(_) => Err(ClioError::BadRequest),
            Err(e) => Err(e),
        };
        if r.is_err() {
            self.inner.engine.set_epoch(before);
        }
        r
    }

    /// Carry `epoch` in every request built from now on without telling the node (a member
    /// that learned the view from another member's [`Client::set_epoch`]; 0: no epoch).
    pub fn use_epoch(&self, epoch: u16) {
        self.inner.engine.set_epoch(epoch);
    }

    /// The epoch this client's requests carry (0: none).
    pub fn epoch(&self) -> u16 {
        self.inner.engine.epoch()
    }

    /// Whether the node told this member that its lease ended or its RAS is gone (then every
    /// request fails with [`ClioError::Denied`], or the member must join again).
    pub fn lease_lost(&self) -> bool {
        self.inner.lease_lost.load(Ordering::Relaxed)
    }

    /// The node's lease of a member (known after the first heartbeat; zero before, or with
    /// heartbeats disabled).
    pub fn lease(&self) -> Duration {
        Duration::from_millis(self.inner.lease_ms.load(Ordering::Relaxed))
    }

    /// Leave the remote address space now (`destroy`: tear it down for every member at
    /// once). The last member to leave frees the RAS's memory, key and PID at the node.
    /// Later calls on this client fail; dropping it afterwards sends nothing more.
    pub fn unregister(&self, destroy: bool) -> Result<()> {
        if let Ok(mut s) = self.inner.stop_heartbeat.lock() {
            s.take();
        }
        // Every thread's operations, not only this thread's (`rrelease`).
        self.inner.engine.drain_all();
        self.inner.engine.flush_acks(GOODBYE_WAIT);
        if self.inner.left.swap(true, Ordering::AcqRel) {
            return Ok(());
        }
        match self.sync(OpSpec::Unregister { destroy }) {
            // A retry of an Unregister that tore the RAS down finds no key any more.
            Ok(_) | Err(ClioError::Denied) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// The credentials other processes need to [`Client::join`] this RAS.
    pub fn credentials(&self) -> Credentials {
        let (pid, key, _) = self.e().member();
        Credentials { pid, key }
    }

    /// The route cookie the node gave this host's address (`docs/protocol.md` section 7):
    /// every request carries it, and a hand-made request whose answer can exceed twice its
    /// size (a read of more than 64 bytes, a KV get) needs it too.
    pub fn route_cookie(&self) -> u32 {
        self.e().cookie()
    }

    /// This member's client id within its RAS (tags its idempotence-ring entries).
    pub fn client_id(&self) -> u16 {
        self.e().member().2
    }

    pub(crate) fn kv_staging(&self) -> &kv::Staging {
        &self.inner.kv_staging
    }

    pub(crate) fn e(&self) -> &Engine {
        &self.inner.engine
    }

    fn sync(&self, spec: OpSpec) -> Result<Output> {
        self.sync_op(spec)
    }

    /// Run one operation to completion (the crate's other modules, e.g. transactions).
    pub(crate) fn sync_op(&self, spec: OpSpec) -> Result<Output> {
        let id = self.e().submit(spec);
        self.e().wait(id)
    }

    /// The PID of the remote address space this client is a member of.
    pub fn pid(&self) -> u16 {
        self.e().pid()
    }

    /// Allocate `len` bytes of readable and writable remote memory; returns its address.
    pub fn ralloc(&self, len: u64) -> Result<u64> {
        self.ralloc_with(len, READ | WRITE)
    }

    /// Allocate with explicit permissions ([`READ`] | [`WRITE`]).
    pub fn ralloc_with(&self, len: u64, perms: u8) -> Result<u64> {
        let h = self.ralloc_async(len, perms)?;
        match self.rpoll_one(h)? {
            Output::Va(va) => Ok(va),
            _ => Err(ClioError::BadRequest),
        }
    }

    /// Start an allocation; [`Client::rpoll`] returns [`Output::Va`].
    pub fn ralloc_async(&self, len: u64, perms: u8) -> Result<Handle> {
        if len == 0 || len > VA_LIMIT {
            return Err(ClioError::InvalidArgument(
                "allocation size must be between 1 byte and 2^48",
            ));
        }
        if perms & !(READ | WRITE) != 0 || perms == 0 {
            return Err(ClioError::InvalidArgument(
                "permissions must be READ, WRITE or both",
            ));
        }
        Ok(Handle(self.e().submit(OpSpec::Alloc { len, perms })))
    }

    /// Free the allocation starting at `va`. Waits for earlier accesses to its range; later
    /// ones wait for it.
    pub fn rfree(&self, va: u64) -> Result<()> {
        let h = self.rfree_async(va)?;
        self.rpoll_one(h).map(|_| ())
    }

    /// Start freeing the allocation at `va`.
    pub fn rfree_async(&self, va: u64) -> Result<Handle> {
        check_range(va, 1)?;
        Ok(Handle(self.e().submit(OpSpec::Free { va })))
    }

    /// Size of the allocation at `va` made by this client (rounded up to the node's pages).
    pub fn allocation_len(&self, va: u64) -> Option<u64> {
        self.e().alloc_len(va)
    }

    /// Read `len` bytes at `va`.
    pub fn rread(&self, va: u64, len: usize) -> Result<Vec<u8>> {
        check_range(va, len as u64)?;
        match self.sync(OpSpec::Read { va, len })? {
            Output::Data(d) => Ok(d),
            _ => Err(ClioError::BadRequest),
        }
    }

    /// Read into `buf` (its length is the read length).
    pub fn rread_into(&self, va: u64, buf: &mut [u8]) -> Result<()> {
        let d = self.rread(va, buf.len())?;
        buf.copy_from_slice(&d);
        Ok(())
    }

    /// Start a read; [`Client::rpoll`] returns [`Output::Data`].
    pub fn rread_async(&self, va: u64, len: usize) -> Result<Handle> {
        check_range(va, len as u64)?;
        Ok(Handle(self.e().submit(OpSpec::Read { va, len })))
    }

    /// Start several reads at once (`(va, len)` each); their handles in order. The requests
    /// leave together, as far as the windows admit them: over UDP one system call, and one
    /// GSO message where they are of one size, where [`Client::rread_async`] one at a time
    /// costs a system call and a datagram's kernel path each. Nothing is sent when an
    /// argument is bad.
    pub fn rread_many_async(&self, reads: &[(u64, usize)]) -> Result<Vec<Handle>> {
        for &(va, len) in reads {
            check_range(va, len as u64)?;
        }
        let specs = reads.iter().map(|&(va, len)| OpSpec::Read { va, len });
        Ok(self
            .e()
            .submit_many(specs)
            .into_iter()
            .map(Handle)
            .collect())
    }

    /// Pointer chasing at the node (extend path, `proto::offload::chase`): from the node at
    /// `start`, follow the next pointers of `layout` until a node whose 8-byte key equals
    /// `key` (its `value_len` value bytes come back), a null pointer, or `layout.max_hops`
    /// nodes: one round trip instead of one per node. Errors: `Unsupported` from a node
    /// without offloads; `Unmapped`/`PermissionDenied` when a node is not readable in this
    /// RAS (the walk stops there).
    pub fn rchase(
        &self,
        start: u64,
        key: u64,
        layout: ChaseLayout,
        value_len: usize,
    ) -> Result<ChaseOutcome> {
        let h = self.rchase_async(start, key, layout, value_len)?;
        match self.rpoll_one(h)? {
            Output::Chase(c) => Ok(c),
            _ => Err(ClioError::BadRequest),
        }
    }

    /// Start a pointer chase (see [`Client::rchase`]); [`Client::rpoll`] returns
    /// [`Output::Chase`].
    pub fn rchase_async(
        &self,
        start: u64,
        key: u64,
        layout: ChaseLayout,
        value_len: usize,
    ) -> Result<Handle> {
        if !layout.is_valid() || start == 0 {
            return Err(ClioError::InvalidArgument(
                "chase layout: 8-byte aligned key and next offsets, offsets <= 4088, 1..=4096 hops",
            ));
        }
        if value_len == 0 || value_len > chase::MAX_VALUE as usize {
            return Err(ClioError::InvalidArgument(
                "chase value length: 1..=1024 bytes",
            ));
        }
        check_range(start, 8)?;
        Ok(Handle(self.e().submit(OpSpec::Chase {
            va: start,
            key,
            layout,
            len: value_len as u32,
        })))
    }

    /// Write `data` at `va`.
    pub fn rwrite(&self, va: u64, data: &[u8]) -> Result<()> {
        check_range(va, data.len() as u64)?;
        self.sync(OpSpec::Write {
            va,
            data: data.to_vec(),
            durable: false,
            ordered: true,
        })
        .map(|_| ())
    }

    /// Start a write (the data is copied; the buffer may be reused at once).
    pub fn rwrite_async(&self, va: u64, data: &[u8]) -> Result<Handle> {
        check_range(va, data.len() as u64)?;
        Ok(Handle(self.e().submit(OpSpec::Write {
            va,
            data: data.to_vec(),
            durable: false,
            ordered: true,
        })))
    }

    /// Write `data` at `va` and return once it is durable at the node (in its persistence
    /// domain: the `--memory-file`, flushed). A node without one answers
    /// [`ClioError::Unsupported`] and writes nothing. See docs/durability.md.
    pub fn rwrite_durable(&self, va: u64, data: &[u8]) -> Result<()> {
        let h = self.rwrite_durable_async(va, data)?;
        self.rpoll_one(h).map(|_| ())
    }

    /// Start a durable write; [`Client::rpoll`] completes it once the data is durable.
    pub fn rwrite_durable_async(&self, va: u64, data: &[u8]) -> Result<Handle> {
        check_range(va, data.len() as u64)?;
        Ok(Handle(self.e().submit(OpSpec::Write {
            va,
            data: data.to_vec(),
            durable: true,
            ordered: true,
        })))
    }

    /// Make `len` bytes at `va`, written earlier with plain writes, durable: waits for the
    /// earlier writes to that range, then for the node's flush.
    pub fn rpersist(&self, va: u64, len: u64) -> Result<()> {
        check_range(va, len)?;
        let len = u32::try_from(len)
            .map_err(|_| ClioError::InvalidArgument("rpersist covers at most 4 GiB at once"))?;
        self.sync(OpSpec::Persist { va, len }).map(|_| ())
    }

    /// Wait for every handle (in order) and return their results. The first failed
    /// operation's error is returned after all have been waited for.
    pub fn rpoll(&self, handles: &[Handle]) -> Result<Vec<Output>> {
        let mut out = Vec::with_capacity(handles.len());
        let mut first_err = None;
        for h in handles {
            match self.e().wait(h.0) {
                Ok(o) => out.push(o),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(out),
        }
    }

    /// Wait for one handle.
    pub fn rpoll_one(&self, h: Handle) -> Result<Output> {
        self.e().wait(h.0)
    }

    /// Make progress and return the result of `h` if it is complete (non-blocking poll).
    pub fn try_rpoll(&self, h: Handle) -> Option<Result<Output>> {
        self.e().try_take(h.0)
    }

    /// Deferred sends (off by default): while on, a request started by an `*_async` call is
    /// only queued, and the queue leaves in one batch (over UDP one system call, and one GSO
    /// message per run of equal-size requests) at the next call that waits or polls
    /// ([`Client::rpoll`], [`Client::try_rpoll`], any synchronous operation,
    /// [`Client::rrelease`]), at [`Client::rflush`], or once 32 requests wait. The model is
    /// io_uring's explicit submit: a loop that starts one read per completed read sends a
    /// batch per wake-up instead of one datagram per read. A thread that starts requests and
    /// then does not call into the client must call [`Client::rflush`], or they do not leave.
    /// Turning it off sends what is queued.
    pub fn set_deferred_sends(&self, on: bool) {
        self.e().set_deferred_sends(on)
    }

    /// Send the requests deferred sends queued (see [`Client::set_deferred_sends`]).
    pub fn rflush(&self) {
        self.e().flush()
    }

    /// Release: return once every operation the calling thread issued before this call has
    /// completed (with those of any thread sharing its lane: see `Stats::lanes`; threads on
    /// lanes of their own do not wait for each other). Results of asynchronous operations
    /// stay available to [`Client::rpoll`].
    pub fn rrelease(&self) {
        self.e().drain();
    }

    /// Release, then fence at the memory node: every earlier request is complete before any
    /// later one starts there.
    pub fn rfence(&self) -> Result<()> {
        self.rrelease();
        self.sync(OpSpec::Fence).map(|_| ())
    }

    fn atomic(&self, op: Opcode, va: u64, arg0: u64, arg1: u64) -> Result<u64> {
        check_word(va)?;
        match self.sync(OpSpec::Atomic { op, va, arg0, arg1 })? {
            Output::Value(v) => Ok(v),
            _ => Err(ClioError::BadRequest),
        }
    }

    /// Atomically add `delta` (wrapping) to the little-endian u64 at `va`; returns the old value.
    pub fn fetch_add(&self, va: u64, delta: u64) -> Result<u64> {
        self.atomic(Opcode::FetchAdd, va, delta, 0)
    }

    /// Start a fetch-add; [`Client::rpoll`] returns [`Output::Value`] (the old value).
    pub fn fetch_add_async(&self, va: u64, delta: u64) -> Result<Handle> {
        check_word(va)?;
        Ok(Handle(self.e().submit(OpSpec::Atomic {
            op: Opcode::FetchAdd,
            va,
            arg0: delta,
            arg1: 0,
        })))
    }

    /// If the u64 at `va` equals `expected`, store `new`; returns the old value either way.
    pub fn compare_and_swap(&self, va: u64, expected: u64, new: u64) -> Result<u64> {
        self.atomic(Opcode::CompareAndSwap, va, expected, new)
    }

    /// Test-and-set once: returns the old value (0 = the lock was free and is now ours).
    pub fn test_and_set(&self, va: u64) -> Result<u64> {
        self.atomic(Opcode::TestAndSet, va, 0, 0)
    }

    /// Append `record` (1..=1024 bytes) to the node-ordered log at `log_va` of `capacity`
    /// bytes (`clio_proto::replog`): the node reserves the tail and writes the framed record in
    /// one operation, exactly once however often the request is retried. Returns the record's
    /// offset in the log's data area. [`ClioError::LogFull`] if it does not fit (nothing
    /// written). `durable`: answered once record and tail are durable (a node without a
    /// persistence domain answers [`ClioError::Unsupported`]).
    pub fn rappend(&self, log_va: u64, capacity: u64, record: &[u8], durable: bool) -> Result<u64> {
        let h = self.rappend_async(log_va, capacity, record, durable)?;
        match self.rpoll_one(h)? {
            Output::Value(v) => Ok(v),
            _ => Err(ClioError::BadRequest),
        }
    }

    /// Start an append; [`Client::rpoll`] returns [`Output::Value`] (the record's offset).
    pub fn rappend_async(
        &self,
        log_va: u64,
        capacity: u64,
        record: &[u8],
        durable: bool,
    ) -> Result<Handle> {
        check_word(log_va)?;
        if record.is_empty() || record.len() > clio_proto::replog::MAX_RECORD as usize {
            return Err(ClioError::InvalidArgument(
                "an append record is 1..=1024 bytes",
            ));
        }
        check_range(log_va, capacity)?;
        Ok(Handle(self.e().submit(OpSpec::Append {
            va: log_va,
            cap: capacity,
            record: record.to_vec(),
            durable,
        })))
    }

    /// Acquire the lock word at `va` (8-byte aligned, 0 = free), spinning with backoff.
    pub fn rlock(&self, va: u64) -> Result<()> {
        let mut backoff = Duration::from_micros(2);
        loop {
            if self.test_and_set(va)? == 0 {
                return Ok(());
            }
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(Duration::from_micros(500));
        }
    }

    /// Release the lock word at `va`. Everything issued before (including asynchronous
    /// writes in the critical section) completes first.
    pub fn runlock(&self, va: u64) -> Result<()> {
        check_word(va)?;
        self.rrelease();
        self.sync(OpSpec::Atomic {
            op: Opcode::Unlock,
            va,
            arg0: 0,
            arg1: 0,
        })
        .map(|_| ())
    }

    /// Counters and window state.
    pub fn stats(&self) -> Stats {
        self.e().stats()
    }

    /// Forget the smallest/largest congestion window seen so far (to observe one phase).
    pub fn reset_window_extremes(&self) {
        self.e().reset_window_extremes()
    }

    /// Name of the transport in use.
    pub fn transport_name(&self) -> &'static str {
        self.e().transport_name()
    }
}

/// Renew the lease every quarter lease until the client is gone (the channel's sender dropped)
/// or the node says the membership is over.
fn heartbeat_loop(inner: Weak<Inner>, stop: mpsc::Receiver<()>) {
    loop {
        let interval = match inner.upgrade() {
            Some(i) => Duration::from_millis((i.lease_ms.load(Ordering::Relaxed) / 4).max(10)),
            None => return,
        };
        match stop.recv_timeout(interval) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
        let Some(i) = inner.upgrade() else { return };
        let c = Client { inner: i };
        if c.inner.left.load(Ordering::Acquire) {
            return;
        }
        if c.heartbeat().is_err() && c.lease_lost() {
            return;
        }
    }
}
