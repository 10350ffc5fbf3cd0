//! C API over [`MultiClient`] (one address space over several memory nodes, replication,
//! fail-over; docs/replication.md). Same conventions as [`crate::capi`]: status codes,
//! `clio_last_error`, NULL checked, no panic across the boundary.
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::capi::{bytes, bytes_mut, c_str, guarded, open_boxed, out, ClioStatus};
use crate::{ClioError, MultiClient, MultiConfig, NodeSpec};
use std::ffi::c_char;

/// An opaque client over several memory nodes.
pub struct ClioMulti {
    m: MultiClient,
}

fn specs(
    addrs: *const *const c_char,
    capacities: *const u64,
    n: usize,
) -> Result<Vec<NodeSpec>, ClioError> {
    if addrs.is_null() || capacities.is_null() || n == 0 {
        return Err(ClioError::InvalidArgument(
            "addresses and capacities of at least one node",
        ));
    }
    // SAFETY: the caller passes `n` address pointers and `n` capacities.
    let (a, c) = unsafe {
        (
            std::slice::from_raw_parts(addrs, n),
            std::slice::from_raw_parts(capacities, n),
        )
    };
    a.iter()
        .zip(c)
        .map(|(&p, &capacity)| {
            let addr = c_str(p, "null address")?
                .parse()
                .map_err(|_| ClioError::InvalidArgument("address must be IP:PORT"))?;
            Ok(NodeSpec { addr, capacity })
        })
        .collect()
}

/// Connect to `n` memory nodes over UDP (`addrs[i]` "IP:PORT", NUL-terminated; this client
/// places at most `capacities[i]` bytes on node `i`) and create a remote address space at
/// each. `durable` != 0: replicated writes are acknowledged once durable on every replica
/// (nodes with `--memory-file`). NULL on failure (see `clio_last_error`).
#[no_mangle]
pub extern "C" fn clio_multi_connect_udp(
    addrs: *const *const c_char,
    capacities: *const u64,
    n: usize,
    durable: i32,
) -> *mut ClioMulti {
    let make = || {
        let cfg = MultiConfig {
            durable: durable != 0,
            ..MultiConfig::default()
        };
        MultiClient::connect_udp(&specs(addrs, capacities, n)?, cfg)
    };
    open_boxed(|| make().map(|m| ClioMulti { m }))
}

/// Close the client (leaves every node's remote address space). NULL is ignored.
#[no_mangle]
pub extern "C" fn clio_multi_close(m: *mut ClioMulti) {
    if !m.is_null() {
        // SAFETY: `m` came from clio_multi_connect_udp and is not used after this call.
        drop(unsafe { Box::from_raw(m) });
    }
}

/// Allocate `len` bytes on `replicas` (1 to 3) nodes; `*addr` receives its global address.
#[no_mangle]
pub extern "C" fn clio_multi_ralloc(
    m: *mut ClioMulti,
    len: u64,
    replicas: u32,
    addr: *mut u64,
) -> ClioStatus {
    guarded(m, |c| out(addr, c.m.ralloc(len, replicas as usize)?))
}

/// Free the region at `addr` on every replica.
#[no_mangle]
pub extern "C" fn clio_multi_rfree(m: *mut ClioMulti, addr: u64) -> ClioStatus {
    guarded(m, |c| c.m.rfree(addr))
}

/// Give every region that lost a replica a new one on another live node now (the client
/// also does this by itself in the background); `*added` (if not NULL) receives the number
/// of replicas added.
#[no_mangle]
pub extern "C" fn clio_multi_heal(m: *mut ClioMulti, added: *mut u64) -> ClioStatus {
    guarded(m, |c| {
        let r = c.m.heal()?;
        if !added.is_null() {
            // SAFETY: `added` is not NULL and points to a u64 the caller owns.
            unsafe { *added = r.replicas_added };
        }
        Ok(())
    })
}

/// Put node `node` (its index in the connect call's lists) back in service after it was
/// declared dead: a fresh address space there, used for new replicas and allocations.
#[no_mangle]
pub extern "C" fn clio_multi_readmit(m: *mut ClioMulti, node: usize) -> ClioStatus {
    guarded(m, |c| c.m.readmit(node))
}

/// Read `len` bytes at `addr` into `buf`.
#[no_mangle]
pub extern "C" fn clio_multi_rread(
    m: *mut ClioMulti,
    addr: u64,
    buf: *mut std::ffi::c_void,
    len: usize,
) -> ClioStatus {
    guarded(m, |c| {
        let d = c.m.rread(addr, len)?;
        bytes_mut(buf, len)?.copy_from_slice(&d);
        Ok(())
    })
}

/// Write `len` bytes from `buf` at `addr`; returns once every replica has them.
#[no_mangle]
pub extern "C" fn clio_multi_rwrite(
    m: *mut ClioMulti,
    addr: u64,
    buf: *const std::ffi::c_void,
    len: usize,
) -> ClioStatus {
    guarded(m, |c| c.m.rwrite(addr, bytes(buf, len)?))
}

/// Add `delta` to the u64 at `addr` (8-byte aligned); `*old` (if not NULL) gets the old value.
#[no_mangle]
pub extern "C" fn clio_multi_fetch_add(
    m: *mut ClioMulti,
    addr: u64,
    delta: u64,
    old: *mut u64,
) -> ClioStatus {
    guarded(m, |c| {
        let v = c.m.fetch_add(addr, delta)?;
        if old.is_null() {
            Ok(())
        } else {
            out(old, v)
        }
    })
}

/// If the u64 at `addr` equals `expected`, store `new`; `*old` gets the old value.
#[no_mangle]
pub extern "C" fn clio_multi_compare_and_swap(
    m: *mut ClioMulti,
    addr: u64,
    expected: u64,
    new: u64,
    old: *mut u64,
) -> ClioStatus {
    guarded(m, |c| out(old, c.m.compare_and_swap(addr, expected, new)?))
}

/// Acquire the lock word at `addr`.
#[no_mangle]
pub extern "C" fn clio_multi_rlock(m: *mut ClioMulti, addr: u64) -> ClioStatus {
    guarded(m, |c| c.m.rlock(addr))
}

/// Release the lock word at `addr`.
#[no_mangle]
pub extern "C" fn clio_multi_runlock(m: *mut ClioMulti, addr: u64) -> ClioStatus {
    guarded(m, |c| c.m.runlock(addr))
}
