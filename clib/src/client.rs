//! The application-facing API (paper 3.1): one [`Client`] per process and memory node.

use crate::config::Config;
use crate::engine::{Engine, OpSpec, Output, Stats};
use crate::error::{ClioError, Result};
use crate::transport::{RawEthernetTransport, Transport, UdpTransport};
use clio_proto::consts::{ATOMIC_BYTES, VA_LIMIT};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::Opcode;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

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
}

impl TransportKind {
    /// Open the transport.
    pub fn open(&self) -> Result<Box<dyn Transport>> {
        Ok(match self {
            TransportKind::Udp(a) => Box::new(UdpTransport::connect(*a)?),
            TransportKind::RawEthernet { iface, node_mac } => {
                Box::new(RawEthernetTransport::open(iface, *node_mac)?)
            }
        })
    }
}

/// A registered process's connection-less session with one memory node. Cheap to clone and
/// safe to share between threads; every clone is the same process (same PID).
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    engine: Engine,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.engine.flush_acks(Duration::from_millis(500));
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

    /// Register a new process at the node behind `transport` and return its client.
    pub fn connect(transport: Box<dyn Transport>, cfg: Config) -> Result<Client> {
        let engine = Engine::new(transport, cfg);
        // The nonce makes a retried registration return the same PID instead of a new one.
        let nonce: u64 = rand::random();
        let id = engine.submit(OpSpec::Register { nonce });
        let pid = match engine.wait(id)? {
            Output::Value(p) => p as u16,
            _ => return Err(ClioError::BadRequest),
        };
        engine.set_pid(pid);
        Ok(Client {
            inner: Arc::new(Inner { engine }),
        })
    }

    fn e(&self) -> &Engine {
        &self.inner.engine
    }

    fn sync(&self, spec: OpSpec) -> Result<Output> {
        let id = self.e().submit(spec);
        self.e().wait(id)
    }

    /// The global PID the memory node assigned to this process.
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

    /// Write `data` at `va`.
    pub fn rwrite(&self, va: u64, data: &[u8]) -> Result<()> {
        check_range(va, data.len() as u64)?;
        self.sync(OpSpec::Write {
            va,
            data: data.to_vec(),
        })
        .map(|_| ())
    }

    /// Start a write (the data is copied; the buffer may be reused at once).
    pub fn rwrite_async(&self, va: u64, data: &[u8]) -> Result<Handle> {
        check_range(va, data.len() as u64)?;
        Ok(Handle(self.e().submit(OpSpec::Write {
            va,
            data: data.to_vec(),
        })))
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

    /// Release: return once every operation issued before this call has completed.
    /// Results of asynchronous operations stay available to [`Client::rpoll`].
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
