//! C API over [`Client`]. The header is `clib/include/clio.h` (cbindgen output, checked by
//! the `c_header_matches_cbindgen` test). Functions return a [`ClioStatus`] (0 = success,
//! negative = error); `clio_last_error` gives the message of the calling thread's last error.
//! No function panics across the boundary: a panic becomes `CLIO_ERR_INTERNAL`.
//!
//! Pointer contract (C callers cannot see Rust's `unsafe`): a client pointer comes from
//! `clio_connect_udp` and is used until `clio_close`; buffers hold the stated length; NULL is
//! checked and rejected.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::client::tx::{admit, commit};
use crate::{
    ChaseLayout, ChaseOutcome, Client, ClioError, Config, Credentials, Handle, Output,
    TransportKind, TxLog,
};
use clio_proto::tx::TX_HEADER_BYTES;
use std::cell::RefCell;
use std::ffi::{c_char, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Result codes of the C API.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClioStatus {
    /// Success.
    ClioOk = 0,
    /// Permission denied (read-only region or another process's memory).
    ClioErrPermission = -1,
    /// Address not allocated.
    ClioErrUnmapped = -2,
    /// Memory node out of memory.
    ClioErrOutOfMemory = -3,
    /// No free remote virtual range of that size.
    ClioErrOutOfVirtualSpace = -4,
    /// The node rejected the request as malformed.
    ClioErrBadRequest = -5,
    /// Process not registered at the node.
    ClioErrUnknownProcess = -6,
    /// Operation not supported by the node.
    ClioErrUnsupported = -7,
    /// No response after the configured retries.
    ClioErrTimeout = -8,
    /// The node stayed busy.
    ClioErrBusy = -9,
    /// Bad argument (null pointer, zero length, misaligned atomic...).
    ClioErrInvalidArgument = -10,
    /// Unknown or already-polled handle.
    ClioErrUnknownHandle = -11,
    /// Network error.
    ClioErrTransport = -12,
    /// A bug in CLib (a caught panic).
    ClioErrInternal = -13,
    /// Wrong key, or the remote address space is gone; nothing executed.
    ClioErrDenied = -14,
    /// The node has no room for another remote address space (or member).
    ClioErrTableFull = -15,
    /// The transaction was dropped; none of its writes is visible.
    ClioErrAborted = -16,
    /// The log has no room for the record (nothing written).
    ClioErrLogFull = -17,
    /// Every replica of a region of a multi-node client is lost.
    ClioErrNodeLost = -18,
    /// The node's key-value store has no free record for a new key (nothing changed).
    ClioErrKvStoreFull = -19,
    /// A quota of the node refused the request (nothing executed; `clio_last_error` names the limit and its flag).
    ClioErrQuotaExceeded = -20,
    /// The node admits only compute nodes that present its admission secret at Register.
    ClioErrAdmissionRefused = -21,
    /// The node does not accept this host's route cookie (a NAT or an asymmetric route):
    /// answers larger than twice the request are refused.
    ClioErrRouteUnverified = -22,
    /// A multi-node client's pool configuration store (etcd) could not be read or changed.
    ClioErrConfigStore = -23,
    /// The node holds a newer epoch of the replicated pool than the request (its view changed).
    ClioErrStale = -24,
}

/// An opaque client (one registered process on one memory node).
///
/// Threads: every function that takes a `clio_client *` may be called by any number of
/// threads at once on the same client, except `clio_close`, which must be the last call on
/// it (no call may run beside it or follow it). A thread that keeps calling gets a socket
/// (lane) of its own from its 16th operation (up to 16 per client, then threads share them),
/// and nothing on the request path is shared with threads on other lanes, so one client
/// serves many threads about as fast as a client each. A thread's own operations keep its
/// order (conflicting asynchronous ones wait for the earlier); `clio_rrelease` waits for the
/// calling thread's operations (and those of any thread sharing its lane), not for other
/// threads'. A handle from `clio_rread_async` / `clio_rwrite_async` may be polled by any
/// thread, once. `clio_last_error` is per thread.
pub struct ClioClient {
    client: Client,
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

pub(crate) fn set_error(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

fn code(e: &ClioError) -> ClioStatus {
    match e {
        ClioError::Permission { .. } => ClioStatus::ClioErrPermission,
        ClioError::Unmapped { .. } => ClioStatus::ClioErrUnmapped,
        ClioError::OutOfMemory => ClioStatus::ClioErrOutOfMemory,
        ClioError::OutOfVirtualSpace => ClioStatus::ClioErrOutOfVirtualSpace,
        ClioError::BadRequest => ClioStatus::ClioErrBadRequest,
        ClioError::UnknownProcess => ClioStatus::ClioErrUnknownProcess,
        ClioError::Unsupported => ClioStatus::ClioErrUnsupported,
        ClioError::Timeout { .. } => ClioStatus::ClioErrTimeout,
        ClioError::Busy { .. } => ClioStatus::ClioErrBusy,
        ClioError::InvalidArgument(_) => ClioStatus::ClioErrInvalidArgument,
        ClioError::UnknownHandle(_) => ClioStatus::ClioErrUnknownHandle,
        ClioError::Transport(_) => ClioStatus::ClioErrTransport,
        ClioError::Denied => ClioStatus::ClioErrDenied,
        ClioError::TableFull => ClioStatus::ClioErrTableFull,
        ClioError::Aborted => ClioStatus::ClioErrAborted,
        ClioError::LogFull => ClioStatus::ClioErrLogFull,
        ClioError::KvStoreFull => ClioStatus::ClioErrKvStoreFull,
        ClioError::QuotaExceeded { .. } => ClioStatus::ClioErrQuotaExceeded,
        ClioError::AdmissionRefused => ClioStatus::ClioErrAdmissionRefused,
        ClioError::RouteUnverified { .. } => ClioStatus::ClioErrRouteUnverified,
        ClioError::ConfigStore(_) => ClioStatus::ClioErrConfigStore,
        ClioError::Stale => ClioStatus::ClioErrStale,
        ClioError::NodeLost { .. } => ClioStatus::ClioErrNodeLost,
        // Internal to rtx_commit, which resolves it; a malformed answer if it ever escapes.
        ClioError::Untouched { .. } => ClioStatus::ClioErrBadRequest,
    }
}

/// Run `f` on the client, turning errors and panics into status codes.
pub(crate) fn with(
    c: *mut ClioClient,
    f: impl FnOnce(&Client) -> Result<(), ClioError>,
) -> ClioStatus {
    guarded(c, |c| f(&c.client))
}

/// Run `f` on the object behind `p` (NULL refused), turning errors and panics into status
/// codes.
pub(crate) fn guarded<T>(p: *mut T, f: impl FnOnce(&T) -> Result<(), ClioError>) -> ClioStatus {
    // SAFETY: the caller passes a pointer from the matching open call that it has not closed.
    let Some(c) = (unsafe { p.as_ref() }) else {
        set_error("null client");
        return ClioStatus::ClioErrInvalidArgument;
    };
    match catch_unwind(AssertUnwindSafe(|| f(c))) {
        Ok(Ok(())) => ClioStatus::ClioOk,
        Ok(Err(e)) => {
            set_error(&e.to_string());
            code(&e)
        }
        Err(_) => {
            set_error("internal error (panic) in CLib");
            ClioStatus::ClioErrInternal
        }
    }
}

pub(crate) fn out<T>(p: *mut T, v: T) -> Result<(), ClioError> {
    // SAFETY: a non-null out-pointer must point to writable memory for a T (documented).
    match unsafe { p.as_mut() } {
        Some(r) => {
            *r = v;
            Ok(())
        }
        None => Err(ClioError::InvalidArgument("null output pointer")),
    }
}

pub(crate) fn bytes<'a>(buf: *const c_void, len: usize) -> Result<&'a [u8], ClioError> {
    if buf.is_null() {
        return Err(ClioError::InvalidArgument("null buffer"));
    }
    // SAFETY: the caller guarantees `buf` points to `len` readable bytes.
    Ok(unsafe { std::slice::from_raw_parts(buf as *const u8, len) })
}

pub(crate) fn bytes_mut<'a>(buf: *mut c_void, len: usize) -> Result<&'a mut [u8], ClioError> {
    if buf.is_null() {
        return Err(ClioError::InvalidArgument("null buffer"));
    }
    // SAFETY: the caller guarantees `buf` points to `len` writable bytes.
    Ok(unsafe { std::slice::from_raw_parts_mut(buf as *mut u8, len) })
}

pub(crate) fn c_str(p: *const c_char, what: &'static str) -> Result<String, ClioError> {
    if p.is_null() {
        return Err(ClioError::InvalidArgument(what));
    }
    // SAFETY: the caller passes a NUL-terminated string (documented on every function).
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

fn udp(addr: *const c_char) -> Result<TransportKind, ClioError> {
    let a = c_str(addr, "null address")?
        .parse()
        .map_err(|_| ClioError::InvalidArgument("address must be IP:PORT"))?;
    Ok(TransportKind::Udp(a))
}

fn raw(iface: *const c_char, mac: *const u8) -> Result<TransportKind, ClioError> {
    let iface = c_str(iface, "null interface name")?;
    let m = bytes(mac as *const c_void, 6)?;
    let mut node_mac = [0u8; 6];
    node_mac.copy_from_slice(m);
    Ok(TransportKind::RawEthernet { iface, node_mac })
}

fn xdp(iface: *const c_char, mac: *const u8, queue: u32) -> Result<TransportKind, ClioError> {
    match raw(iface, mac)? {
        TransportKind::RawEthernet { iface, node_mac } => Ok(TransportKind::Xdp {
            iface,
            node_mac,
            queue,
        }),
        _ => Err(ClioError::InvalidArgument("interface")),
    }
}

/// Open a client: `make` builds it; NULL and `clio_last_error` on failure or panic.
fn open_client(make: impl FnOnce() -> Result<Client, ClioError>) -> *mut ClioClient {
    open_boxed(|| make().map(|client| ClioClient { client }))
}

/// Box what `make` builds for C; NULL and `clio_last_error` on failure or panic.
pub(crate) fn open_boxed<T>(make: impl FnOnce() -> Result<T, ClioError>) -> *mut T {
    match catch_unwind(AssertUnwindSafe(make)) {
        Ok(Ok(v)) => Box::into_raw(Box::new(v)),
        Ok(Err(e)) => {
            set_error(&e.to_string());
            std::ptr::null_mut()
        }
        Err(_) => {
            set_error("internal error (panic) in CLib");
            std::ptr::null_mut()
        }
    }
}

/// Connect over UDP to the memory node at `addr` ("IP:PORT", NUL-terminated) and create a new
/// remote address space with this process as its first member. Returns NULL on failure (see
/// `clio_last_error`).
#[no_mangle]
pub extern "C" fn clio_connect_udp(addr: *const c_char) -> *mut ClioClient {
    open_client(|| Client::connect(udp(addr)?.open()?, Config::default()))
}

/// Join the existing remote address space (`pid`, `key`) at the node `addr` ("IP:PORT",
/// NUL-terminated) over UDP: this process then shares its memory, locks and atomics. NULL on
/// failure (`CLIO_ERR_DENIED`'s message for a wrong key or a RAS that is gone).
#[no_mangle]
pub extern "C" fn clio_join_udp(addr: *const c_char, pid: u16, key: u64) -> *mut ClioClient {
    open_client(|| {
        Client::join(
            udp(addr)?.open()?,
            Config::default(),
            Credentials { pid, key },
        )
    })
}

/// Connect over raw Ethernet on interface `iface` (NUL-terminated) to the node whose MAC is
/// the 6 bytes at `node_mac`, creating a new remote address space (needs root or
/// CAP_NET_RAW). NULL on failure.
#[no_mangle]
pub extern "C" fn clio_connect_raw(iface: *const c_char, node_mac: *const u8) -> *mut ClioClient {
    open_client(|| Client::connect(raw(iface, node_mac)?.open()?, Config::default()))
}

/// Join the remote address space (`pid`, `key`) over raw Ethernet (see `clio_connect_raw`).
#[no_mangle]
pub extern "C" fn clio_join_raw(
    iface: *const c_char,
    node_mac: *const u8,
    pid: u16,
    key: u64,
) -> *mut ClioClient {
    open_client(|| {
        Client::join(
            raw(iface, node_mac)?.open()?,
            Config::default(),
            Credentials { pid, key },
        )
    })
}

/// Connect over AF_XDP (kernel bypass: raw Ethernet frames through a UMEM shared with the
/// kernel) on receive queue `queue` of interface `iface` (NUL-terminated) to the node whose
/// MAC is the 6 bytes at `node_mac`, creating a new remote address space. Needs root (or
/// CAP_NET_RAW, CAP_BPF and CAP_NET_ADMIN), Linux >= 5.9 and an interface with no other XDP
/// program. NULL on failure (`clio_last_error` says why, e.g. no AF_XDP in the kernel).
#[no_mangle]
pub extern "C" fn clio_connect_xdp(
    iface: *const c_char,
    node_mac: *const u8,
    queue: u32,
) -> *mut ClioClient {
    open_client(|| Client::connect(xdp(iface, node_mac, queue)?.open()?, Config::default()))
}

/// Join the remote address space (`pid`, `key`) over AF_XDP (see `clio_connect_xdp`).
#[no_mangle]
pub extern "C" fn clio_join_xdp(
    iface: *const c_char,
    node_mac: *const u8,
    queue: u32,
    pid: u16,
    key: u64,
) -> *mut ClioClient {
    open_client(|| {
        Client::join(
            xdp(iface, node_mac, queue)?.open()?,
            Config::default(),
            Credentials { pid, key },
        )
    })
}

/// The secret key of the client's remote address space (0 for a NULL client): give it, with
/// `clio_pid`, to the processes that should join. Treat it like a password.
#[no_mangle]
pub extern "C" fn clio_key(c: *const ClioClient) -> u64 {
    // SAFETY: as in `with`.
    unsafe { c.as_ref() }.map_or(0, |c| c.client.credentials().key)
}

/// Write `len` bytes from `buf` at `va` and return once they are durable at the node
/// (`CLIO_ERR_UNSUPPORTED` from a node without a persistence domain; nothing written then).
#[no_mangle]
pub extern "C" fn clio_rwrite_durable(
    c: *mut ClioClient,
    va: u64,
    buf: *const c_void,
    len: usize,
) -> ClioStatus {
    with(c, |cl| cl.rwrite_durable(va, bytes(buf, len)?))
}

/// Make `len` bytes at `va`, written earlier, durable at the node.
#[no_mangle]
pub extern "C" fn clio_rpersist(c: *mut ClioClient, va: u64, len: u64) -> ClioStatus {
    with(c, |cl| cl.rpersist(va, len))
}

/// An opaque transaction log with the writes of the transaction being built in it.
pub struct ClioTxLog {
    log: TxLog,
    entries: Vec<(u64, Vec<u8>)>,
    record_bytes: usize,
}

fn new_log(log: TxLog, out_log: *mut *mut ClioTxLog) -> Result<(), ClioError> {
    let b = Box::new(ClioTxLog {
        log,
        entries: Vec::new(),
        record_bytes: TX_HEADER_BYTES,
    });
    out(out_log, Box::into_raw(b))
}

fn with_log(
    c: *mut ClioClient,
    log: *mut ClioTxLog,
    f: impl FnOnce(&Client, &mut ClioTxLog) -> Result<(), ClioError>,
) -> ClioStatus {
    with(c, |cl| {
        // SAFETY: the caller passes a log from clio_rtx_log / clio_rtx_log_open that it has
        // not closed, and uses it from one thread at a time.
        let l = unsafe { log.as_mut() }.ok_or(ClioError::InvalidArgument("null log"))?;
        f(cl, l)
    })
}

/// Allocate a transaction log of `bytes` and register it with the node; `*log` receives the
/// handle (close it with `clio_rtx_log_close`). Needs a node with a persistence domain.
#[no_mangle]
pub extern "C" fn clio_rtx_log(
    c: *mut ClioClient,
    bytes: u64,
    log: *mut *mut ClioTxLog,
) -> ClioStatus {
    with(c, |cl| new_log(cl.rtx_log(bytes)?, log))
}

/// Re-open the transaction log at `va` (`bytes` long) after a restart.
#[no_mangle]
pub extern "C" fn clio_rtx_log_open(
    c: *mut ClioClient,
    va: u64,
    bytes: u64,
    log: *mut *mut ClioTxLog,
) -> ClioStatus {
    with(c, |cl| new_log(cl.rtx_log_open(va, bytes)?, log))
}

/// The remote address of a log (keep it to re-open the log); 0 for NULL.
#[no_mangle]
pub extern "C" fn clio_rtx_log_va(log: *const ClioTxLog) -> u64 {
    // SAFETY: NULL or a live log handle (documented).
    unsafe { log.as_ref() }.map_or(0, |l| l.log.va())
}

/// Free a log handle (the region stays allocated at the node). NULL is ignored.
#[no_mangle]
pub extern "C" fn clio_rtx_log_close(log: *mut ClioTxLog) {
    if !log.is_null() {
        // SAFETY: `log` came from clio_rtx_log / clio_rtx_log_open and is closed once.
        drop(unsafe { Box::from_raw(log) });
    }
}

/// Begin a transaction in `log`, discarding writes of one not committed.
#[no_mangle]
pub extern "C" fn clio_rtx_begin(c: *mut ClioClient, log: *mut ClioTxLog) -> ClioStatus {
    with_log(c, log, |_, l| {
        l.entries.clear();
        l.record_bytes = TX_HEADER_BYTES;
        Ok(())
    })
}

/// Add a write of `len` bytes from `buf` at `va` to the transaction in `log`.
#[no_mangle]
pub extern "C" fn clio_rtx_write(
    c: *mut ClioClient,
    log: *mut ClioTxLog,
    va: u64,
    buf: *const c_void,
    len: usize,
) -> ClioStatus {
    with_log(c, log, |_, l| {
        let data = bytes(buf, len)?;
        l.record_bytes = admit(l.entries.len(), l.record_bytes, l.log.bytes(), va, data)?;
        l.entries.push((va, data.to_vec()));
        Ok(())
    })
}

/// Commit the transaction in `log`: all its writes visible and durable, or none
/// (`CLIO_ERR_ABORTED`, or an error before the record was durable). The log is empty after.
#[no_mangle]
pub extern "C" fn clio_rtx_commit(c: *mut ClioClient, log: *mut ClioTxLog) -> ClioStatus {
    with_log(c, log, |cl, l| {
        let entries = std::mem::take(&mut l.entries);
        l.record_bytes = TX_HEADER_BYTES;
        commit(cl, &mut l.log, &entries)
    })
}

/// Leave the remote address space now (`destroy` != 0: tear it down for every member). The
/// last member to leave frees its memory at the node. `clio_close` leaves too.
#[no_mangle]
pub extern "C" fn clio_unregister(c: *mut ClioClient, destroy: i32) -> ClioStatus {
    with(c, |cl| cl.unregister(destroy != 0))
}

/// Close a client: waits briefly for outstanding acknowledgements and leaves the remote
/// address space (the last member out frees it). NULL is ignored.
#[no_mangle]
pub extern "C" fn clio_close(c: *mut ClioClient) {
    if !c.is_null() {
        // SAFETY: `c` came from clio_connect_udp and is closed once.
        drop(unsafe { Box::from_raw(c) });
    }
}

/// Message of the calling thread's last error (valid until its next CLib call).
#[no_mangle]
pub extern "C" fn clio_last_error() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// The PID of the client's remote address space (0 for a NULL client).
#[no_mangle]
pub extern "C" fn clio_pid(c: *const ClioClient) -> u16 {
    // SAFETY: as in `with`.
    unsafe { c.as_ref() }.map_or(0, |c| c.client.pid())
}

/// Allocate `len` bytes of read-write remote memory; the address goes to `*va`.
#[no_mangle]
pub extern "C" fn clio_ralloc(c: *mut ClioClient, len: u64, va: *mut u64) -> ClioStatus {
    with(c, |cl| out(va, cl.ralloc(len)?))
}

/// Free the allocation at `va`.
#[no_mangle]
pub extern "C" fn clio_rfree(c: *mut ClioClient, va: u64) -> ClioStatus {
    with(c, |cl| cl.rfree(va))
}

/// Read `len` bytes at `va` into `buf`.
#[no_mangle]
pub extern "C" fn clio_rread(
    c: *mut ClioClient,
    va: u64,
    buf: *mut c_void,
    len: usize,
) -> ClioStatus {
    with(c, |cl| cl.rread_into(va, bytes_mut(buf, len)?))
}

/// Pointer chasing at the node (see `Client::rchase`): from the node at `start`, follow the
/// 8-byte next pointer at `next_off` until the 8-byte key at `key_off` equals `key` (then the
/// `len` bytes at `value_off` go to `buf` and the node's address to `*node`), a null pointer
/// (`*node` = 0, `*next` = 0) or `max_hops` nodes (`*node` = 0, `*next` = where to go on).
/// `*hops` = nodes visited. `node`, `next` and `hops` may be NULL. `CLIO_ERR_UNSUPPORTED`
/// from a node without offloads.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub extern "C" fn clio_rchase(
    c: *mut ClioClient,
    start: u64,
    key: u64,
    key_off: u16,
    next_off: u16,
    value_off: u16,
    max_hops: u16,
    buf: *mut c_void,
    len: usize,
    node: *mut u64,
    next: *mut u64,
    hops: *mut u64,
) -> ClioStatus {
    let layout = ChaseLayout {
        key_offset: key_off,
        next_offset: next_off,
        value_offset: value_off,
        max_hops,
    };
    with(c, |cl| {
        let dst = bytes_mut(buf, len)?;
        let (n, x, h) = match cl.rchase(start, key, layout, len)? {
            ChaseOutcome::Found { value, node, hops } => {
                dst.copy_from_slice(&value);
                (node, 0, hops)
            }
            ChaseOutcome::NotFound { hops } => (0, 0, hops),
            ChaseOutcome::HopLimit { next } => (0, next, max_hops as u64),
        };
        for (p, v) in [(node, n), (next, x), (hops, h)] {
            if !p.is_null() {
                // SAFETY: the caller passes NULL or a pointer to a writable u64 (documented).
                unsafe { p.write(v) };
            }
        }
        Ok(())
    })
}

/// Write `len` bytes from `buf` at `va`.
#[no_mangle]
pub extern "C" fn clio_rwrite(
    c: *mut ClioClient,
    va: u64,
    buf: *const c_void,
    len: usize,
) -> ClioStatus {
    with(c, |cl| cl.rwrite(va, bytes(buf, len)?))
}

/// Start reading `len` bytes at `va`; the handle goes to `*handle` (data comes with `clio_rpoll`).
#[no_mangle]
pub extern "C" fn clio_rread_async(
    c: *mut ClioClient,
    va: u64,
    len: usize,
    handle: *mut u64,
) -> ClioStatus {
    with(c, |cl| out(handle, cl.rread_async(va, len)?.0))
}

/// Start writing `len` bytes from `buf` at `va` (copied: `buf` may be reused at once).
#[no_mangle]
pub extern "C" fn clio_rwrite_async(
    c: *mut ClioClient,
    va: u64,
    buf: *const c_void,
    len: usize,
    handle: *mut u64,
) -> ClioStatus {
    with(c, |cl| {
        out(handle, cl.rwrite_async(va, bytes(buf, len)?)?.0)
    })
}

/// Wait for `handle`. A read's data is copied to `buf` (up to `len` bytes; `buf` may be
/// NULL for other operations); an atomic's old value or an allocation's address goes to
/// `*value` if `value` is not NULL.
#[no_mangle]
pub extern "C" fn clio_rpoll(
    c: *mut ClioClient,
    handle: u64,
    buf: *mut c_void,
    len: usize,
    value: *mut u64,
) -> ClioStatus {
    with(c, |cl| {
        match cl.rpoll_one(Handle(handle))? {
            Output::Data(d) => {
                let n = d.len().min(len);
                if n > 0 {
                    bytes_mut(buf, n)?.copy_from_slice(&d[..n]);
                }
            }
            Output::Value(v) | Output::Va(v) if !value.is_null() => out(value, v)?,
            _ => {}
        }
        Ok(())
    })
}

/// Wait until every operation issued before this call has completed.
#[no_mangle]
pub extern "C" fn clio_rrelease(c: *mut ClioClient) -> ClioStatus {
    with(c, |cl| {
        cl.rrelease();
        Ok(())
    })
}

/// Deferred sends on (`on` != 0) or off: while on, requests started by `clio_*_async` leave
/// together at the next call that waits (`clio_rpoll`, a synchronous call, `clio_rrelease`),
/// at `clio_rflush`, or once 32 wait (see `Client::set_deferred_sends`).
#[no_mangle]
pub extern "C" fn clio_set_deferred_sends(c: *mut ClioClient, on: i32) -> ClioStatus {
    with(c, |cl| {
        cl.set_deferred_sends(on != 0);
        Ok(())
    })
}

/// Send the requests deferred sends queued.
#[no_mangle]
pub extern "C" fn clio_rflush(c: *mut ClioClient) -> ClioStatus {
    with(c, |cl| {
        cl.rflush();
        Ok(())
    })
}

/// Enter epoch `epoch` of a replicated pool (1..=65535, docs/protocol.md section 7 "Epochs"):
/// every request from now on carries it and the node raises the RAS's epoch to it, after which
/// it refuses requests of the RAS with an older one (`CLIO_ERR_STALE`). `CLIO_ERR_STALE` if the
/// RAS holds a newer epoch (the client keeps its epoch); `CLIO_ERR_INVALID_ARGUMENT` for 0.
#[no_mangle]
pub extern "C" fn clio_set_epoch(c: *mut ClioClient, epoch: u16) -> ClioStatus {
    with(c, |cl| cl.set_epoch(epoch))
}

/// The epoch the client's requests carry (0: none, or a NULL client).
#[no_mangle]
pub extern "C" fn clio_epoch(c: *const ClioClient) -> u16 {
    // SAFETY: as in `with`.
    unsafe { c.as_ref() }.map_or(0, |c| c.client.epoch())
}

/// Release, then fence at the memory node.
#[no_mangle]
pub extern "C" fn clio_rfence(c: *mut ClioClient) -> ClioStatus {
    with(c, |cl| cl.rfence())
}

/// Acquire the lock word at `va` (8-byte aligned; 0 = free).
#[no_mangle]
pub extern "C" fn clio_rlock(c: *mut ClioClient, va: u64) -> ClioStatus {
    with(c, |cl| cl.rlock(va))
}

/// Release the lock word at `va` after everything issued before.
#[no_mangle]
pub extern "C" fn clio_runlock(c: *mut ClioClient, va: u64) -> ClioStatus {
    with(c, |cl| cl.runlock(va))
}

/// Atomically add `delta` to the u64 at `va`; the old value goes to `*old`.
#[no_mangle]
pub extern "C" fn clio_fetch_add(
    c: *mut ClioClient,
    va: u64,
    delta: u64,
    old: *mut u64,
) -> ClioStatus {
    with(c, |cl| out(old, cl.fetch_add(va, delta)?))
}

/// If the u64 at `va` equals `expected`, store `desired`; the old value goes to `*old`.
#[no_mangle]
pub extern "C" fn clio_compare_and_swap(
    c: *mut ClioClient,
    va: u64,
    expected: u64,
    desired: u64,
    old: *mut u64,
) -> ClioStatus {
    with(c, |cl| {
        out(old, cl.compare_and_swap(va, expected, desired)?)
    })
}
