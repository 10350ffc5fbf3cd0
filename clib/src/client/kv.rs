//! Clio-KV from the compute node: the key-value store that runs at the memory node as an
//! offload, in its own address space (`proto::kv`, docs/offloads.md). One request per
//! operation, one round trip: `kv_get`, `kv_put` (create or update), `kv_delete`. A value too
//! long for the put's packet (over [`MAX_VALUE`], up to [`MAX_STAGED_VALUE`]) is staged: written
//! into a slot of this client's own RAS and named by a staged put sent right behind the write
//! (`Opcode::KvPutStaged`: the node checks the value's hash and answers RETRY_LATER, which the
//! engine retries, if the write has not landed yet), so it still costs one round trip when
//! the two arrive in order.
//!
//! Keys are namespaced by this client's RAS: every member of the RAS (processes that joined
//! it, on any CN) sees the same keys; no other RAS can see or change them. Each operation is
//! atomic at the node (a get returns a whole committed value) and puts and deletes run
//! exactly once under retries (the node's idempotence ring, acknowledged by CLib).
//! Synchronous calls are linearizable; asynchronous ones in flight together are concurrent
//! (the node orders them as they arrive).

use super::{Client, Handle};
use crate::engine::{OpSpec, Output};
use crate::error::{ClioError, Result};
use clio_proto::kv::{KvFormatError, KvRequest, KvStagedPut, MAX_KEY, MAX_STAGED_VALUE, MAX_VALUE};
use clio_proto::Opcode;
use std::sync::{Condvar, Mutex};

/// Staging slots per client: long puts in flight at once from its threads (more wait).
pub const STAGING_SLOTS: u64 = 32;

/// Where a client stages long values: [`STAGING_SLOTS`] slots of [`MAX_STAGED_VALUE`] bytes
/// in its own RAS, allocated at its first long put; a slot belongs to one put from its write
/// until its answer.
#[derive(Debug, Default)]
pub(crate) struct Staging {
    slots: Mutex<StagingSlots>,
    freed: Condvar,
}

#[derive(Debug, Default)]
struct StagingSlots {
    allocated: bool,
    free: Vec<u64>,
}

/// What a put did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvPutOutcome {
    /// The key was new.
    Created,
    /// An old value was replaced.
    Replaced,
}

fn invalid(e: KvFormatError) -> ClioError {
    ClioError::InvalidArgument(match e {
        KvFormatError::KeyLength(_) => "kv key: 1..=64 bytes (proto::kv::MAX_KEY)",
        KvFormatError::ValueLength(_) => {
            "kv value: at most 956 bytes in one request (kv_put stages up to 1024)"
        }
        KvFormatError::Framing(_) | KvFormatError::NotKv => "kv request",
    })
}

const _: () = assert!(
    MAX_KEY == 64 && MAX_VALUE == 956 && MAX_STAGED_VALUE == 1024,
    "update the messages above"
);

/// A node answer that is not the KV output it should be.
fn unexpected() -> ClioError {
    ClioError::BadRequest
}

impl Client {
    fn kv_submit(&self, op: Opcode, key: &[u8], value: &[u8]) -> Result<Handle> {
        let req = KvRequest::new(op, key, value).map_err(invalid)?;
        Ok(Handle(self.e().submit(OpSpec::Kv {
            op,
            payload: req.encode(),
            va: 0,
            arg1: 0,
        })))
    }

    /// A free staging slot (the region is allocated by the first long put).
    fn staging_slot(&self) -> Result<u64> {
        let st = self.kv_staging();
        let mut g = st.slots.lock().unwrap_or_else(|e| e.into_inner());
        if !g.allocated {
            let slot = MAX_STAGED_VALUE as u64;
            let base = self.ralloc(STAGING_SLOTS * slot)?;
            g.free = (0..STAGING_SLOTS).map(|i| base + i * slot).collect();
            g.allocated = true;
        }
        loop {
            if let Some(s) = g.free.pop() {
                return Ok(s);
            }
            g = st.freed.wait(g).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn release_staging_slot(&self, slot: u64) {
        let st = self.kv_staging();
        st.slots
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .free
            .push(slot);
        st.freed.notify_one();
    }

    /// A put of a value longer than one packet: the write to a staging slot and the staged
    /// put go out back to back; the slot is free again once both are answered.
    fn kv_put_staged(&self, key: &[u8], value: &[u8]) -> Result<(bool, Vec<u8>)> {
        KvStagedPut::new(key, 0, value).map_err(invalid)?;
        let slot = self.staging_slot()?;
        let result = (|| {
            let staged = KvStagedPut::new(key, slot, value).map_err(invalid)?;
            let write = Handle(self.e().submit(OpSpec::Write {
                va: slot,
                data: value.to_vec(),
                durable: false,
                ordered: false,
            }));
            let put = Handle(self.e().submit(OpSpec::Kv {
                op: Opcode::KvPutStaged,
                payload: staged.encode(),
                va: slot,
                arg1: staged.check,
            }));
            let written = self.rpoll_one(write);
            let put = self.kv_wait(put);
            written?;
            put
        })();
        self.release_staging_slot(slot);
        result
    }

    /// Start a get; [`Client::rpoll`] returns [`Output::Kv`] (`hit`, `value`).
    pub fn kv_get_async(&self, key: &[u8]) -> Result<Handle> {
        self.kv_submit(Opcode::KvGet, key, &[])
    }

    /// Start a put of a value of at most [`MAX_VALUE`] bytes (longer ones: [`Client::kv_put`]);
    /// [`Client::rpoll`] returns [`Output::Kv`] (`hit` = replaced).
    pub fn kv_put_async(&self, key: &[u8], value: &[u8]) -> Result<Handle> {
        self.kv_submit(Opcode::KvPut, key, value)
    }

    /// Start a delete; [`Client::rpoll`] returns [`Output::Kv`] (`hit` = removed).
    pub fn kv_delete_async(&self, key: &[u8]) -> Result<Handle> {
        self.kv_submit(Opcode::KvDelete, key, &[])
    }

    fn kv_wait(&self, h: Handle) -> Result<(bool, Vec<u8>)> {
        match self.rpoll_one(h)? {
            Output::Kv { hit, value } => Ok((hit, value)),
            _ => Err(unexpected()),
        }
    }

    /// The committed value of `key` in this RAS's namespace, or `None`. Errors:
    /// `InvalidArgument` (key of 0 or more than [`MAX_KEY`] bytes), `Unsupported` (a node
    /// without offloads), transport errors.
    pub fn kv_get(&self, key: &[u8]) -> Result<Option<Vec<u8>>> {
        let (hit, value) = self.kv_wait(self.kv_get_async(key)?)?;
        Ok(hit.then_some(value))
    }

    /// Set `key` to `value` (at most [`MAX_STAGED_VALUE`] bytes; over [`MAX_VALUE`] it is
    /// staged, see the module doc), atomically, exactly once. [`ClioError::KvStoreFull`] when
    /// the key is new and the store has no free record, [`ClioError::QuotaExceeded`] naming
    /// `Quota::KvRecords` when the key is new and this RAS holds its quota of the store's
    /// records (the node's `--max-ras-kv-records`; nothing changed either way).
    pub fn kv_put(&self, key: &[u8], value: &[u8]) -> Result<KvPutOutcome> {
        let done = if value.len() > MAX_VALUE {
            self.kv_put_staged(key, value)
        } else {
            self.kv_wait(self.kv_put_async(key, value)?)
        };
        match done {
            Ok((true, _)) => Ok(KvPutOutcome::Replaced),
            Ok((false, _)) => Ok(KvPutOutcome::Created),
            Err(ClioError::OutOfMemory) => Err(ClioError::KvStoreFull),
            Err(e) => Err(e),
        }
    }

    /// Remove `key`; whether it was there. Its record is freed for reuse.
    pub fn kv_delete(&self, key: &[u8]) -> Result<bool> {
        Ok(self.kv_wait(self.kv_delete_async(key)?)?.0)
    }
}
