//! Clio-KV from the compute node: the key-value store that runs at the memory node as an
//! offload, in its own address space (`proto::kv`, docs/offloads.md). One request per
//! operation, one round trip: `kv_get`, `kv_put` (create or update), `kv_delete`.
//!
//! Keys are namespaced by this client's RAS: every member of the RAS (processes that joined
//! it, on any CN) sees the same keys; no other RAS can see or change them. Each operation is
//! atomic at the node (a get returns a whole committed value) and puts and deletes run
//! exactly once under retries (the node's idempotence ring, acknowledged by CLib).
//! Synchronous calls are linearizable; asynchronous ones in flight together are concurrent
//! (the node orders them as they arrive).

use crate::client::{Client, Handle};
use crate::engine::{OpSpec, Output};
use crate::error::{ClioError, Result};
use clio_proto::kv::{KvFormatError, KvRequest, MAX_KEY, MAX_VALUE};
use clio_proto::Opcode;

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
        KvFormatError::ValueLength(_) => "kv value: at most 956 bytes (proto::kv::MAX_VALUE)",
        KvFormatError::Framing(_) | KvFormatError::NotKv => "kv request",
    })
}

const _: () = assert!(
    MAX_KEY == 64 && MAX_VALUE == 956,
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
        })))
    }

    /// Start a get; [`Client::rpoll`] returns [`Output::Kv`] (`hit`, `value`).
    pub fn kv_get_async(&self, key: &[u8]) -> Result<Handle> {
        self.kv_submit(Opcode::KvGet, key, &[])
    }

    /// Start a put; [`Client::rpoll`] returns [`Output::Kv`] (`hit` = replaced).
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

    /// Set `key` to `value` (at most [`MAX_VALUE`] bytes), atomically, exactly once.
    /// [`ClioError::KvStoreFull`] when the key is new and the store has no free record
    /// (nothing changed).
    pub fn kv_put(&self, key: &[u8], value: &[u8]) -> Result<KvPutOutcome> {
        match self.kv_wait(self.kv_put_async(key, value)?) {
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
