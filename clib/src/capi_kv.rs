//! C API of Clio-KV (the memory node's key-value offload; see `Client::kv_get`). Same
//! conventions as [`crate::capi`]: status codes, `clio_last_error`, NULL checked, no panic
//! across the boundary. Keys are 1..=64 bytes, values at most 1024 (`proto::kv::MAX_STAGED_VALUE`;
//! over 956 they are staged, see `Client::kv_put`).
#![allow(clippy::not_unsafe_ptr_arg_deref)]

use crate::capi::{bytes, bytes_mut, with, ClioClient, ClioStatus};
use crate::{ClioError, KvPutOutcome};
use std::ffi::c_void;

/// Write `v` to `p` unless `p` is NULL.
fn maybe_out<T>(p: *mut T, v: T) {
    if !p.is_null() {
        // SAFETY: the caller passes NULL or a pointer to a writable T (documented).
        unsafe { p.write(v) };
    }
}

/// Set `key` (`key_len` bytes) to `value` (`value_len` bytes; `value` may be NULL when
/// `value_len` is 0) in this client's RAS namespace, atomically and exactly once.
/// `*replaced` (may be NULL) = 1 if an old value was replaced, 0 if the key was created.
/// `CLIO_ERR_KV_STORE_FULL` when the key is new and the store is full (nothing changed),
/// `CLIO_ERR_INVALID_ARGUMENT` for a bad key or value length, `CLIO_ERR_UNSUPPORTED` from
/// a node without offloads.
///
/// # Safety
/// `key` points to `key_len` readable bytes, `value` to `value_len` readable bytes,
/// `replaced` is NULL or writable; `c` comes from `clio_connect_udp` and is not closed.
#[no_mangle]
pub extern "C" fn clio_kv_put(
    c: *mut ClioClient,
    key: *const c_void,
    key_len: usize,
    value: *const c_void,
    value_len: usize,
    replaced: *mut i32,
) -> ClioStatus {
    with(c, |cl| {
        let k = bytes(key, key_len)?;
        let v = if value_len == 0 {
            &[][..]
        } else {
            bytes(value, value_len)?
        };
        let r = cl.kv_put(k, v)?;
        maybe_out(replaced, (r == KvPutOutcome::Replaced) as i32);
        Ok(())
    })
}

/// Get `key`'s committed value into `buf` (`buf_len` bytes). `*found` = 1 and `*value_len`
/// = its length if the key has a value, else `*found` = 0 and `*value_len` = 0 (both
/// required). A value longer than `buf_len` is `CLIO_ERR_INVALID_ARGUMENT` with
/// `*value_len` = the length needed and nothing copied (1024 bytes always suffice).
///
/// # Safety
/// `key` points to `key_len` readable bytes, `buf` to `buf_len` writable bytes (NULL when
/// `buf_len` is 0), `value_len` and `found` are writable; `c` as for `clio_kv_put`.
#[no_mangle]
pub extern "C" fn clio_kv_get(
    c: *mut ClioClient,
    key: *const c_void,
    key_len: usize,
    buf: *mut c_void,
    buf_len: usize,
    value_len: *mut usize,
    found: *mut i32,
) -> ClioStatus {
    with(c, |cl| {
        if value_len.is_null() || found.is_null() {
            return Err(ClioError::InvalidArgument("null value_len or found"));
        }
        let k = bytes(key, key_len)?;
        let value = cl.kv_get(k)?;
        maybe_out(found, value.is_some() as i32);
        let value = value.unwrap_or_default();
        maybe_out(value_len, value.len());
        if value.len() > buf_len {
            return Err(ClioError::InvalidArgument(
                "kv value longer than the buffer",
            ));
        }
        if !value.is_empty() {
            let dst = bytes_mut(buf, buf_len)?;
            assert!(value.len() <= dst.len(), "checked above");
            dst[..value.len()].copy_from_slice(&value);
        }
        Ok(())
    })
}

/// Remove `key`; `*removed` (may be NULL) = 1 if it had a value, 0 if not.
///
/// # Safety
/// `key` points to `key_len` readable bytes, `removed` is NULL or writable; `c` as for
/// `clio_kv_put`.
#[no_mangle]
pub extern "C" fn clio_kv_delete(
    c: *mut ClioClient,
    key: *const c_void,
    key_len: usize,
    removed: *mut i32,
) -> ClioStatus {
    with(c, |cl| {
        let r = cl.kv_delete(bytes(key, key_len)?)?;
        maybe_out(removed, r as i32);
        Ok(())
    })
}
