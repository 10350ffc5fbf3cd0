//! Clio-KV as one more [`KvStore`]: the memory node's own key-value offload (Clio section
//! 4.6; `proto::kv`, docs/offloads.md), reached through CLib's `kv_get` / `kv_put` /
//! `kv_delete`. Nothing to set up at the node: the store lives in the node's own address
//! space and keys are namespaced by the caller's RAS, so every CN that joins the set-up
//! process's RAS shares one store. Each operation is one request and one round trip; puts
//! and deletes run exactly once under retries (the node's idempotence ring).
//!
//! Limits: keys of 1..=[`KV_MAX_KEY`] bytes, values of at most [`KV_MAX_VALUE`] bytes (the
//! paper's 1 KiB; values over one packet's room are staged by CLib, still one round trip when
//! the write and the put arrive in order); a full store refuses new keys with
//! [`KvError::Full`].

use crate::store::{
    check_value, Cost, KvError, KvResult, KvStore, NodeLink, StoreFactory, StoreSpec,
};
use clio_clib::{Client, ClioError, Config};
use std::collections::BTreeMap;

pub use clio_proto::kv::{MAX_KEY as KV_MAX_KEY, MAX_STAGED_VALUE as KV_MAX_VALUE};

/// Name in specs and tables.
pub const NAME: &str = "clio-kv";

/// The spec CNs open the store with: how they reach the node and join the RAS whose
/// namespace holds the keys, and the largest value (refused when a packet cannot hold it).
pub fn spec(link: &NodeLink, max_value: usize) -> KvResult<StoreSpec> {
    if max_value > KV_MAX_VALUE {
        return Err(KvError::ValueTooLong {
            len: max_value,
            max: KV_MAX_VALUE,
        });
    }
    let mut fields = BTreeMap::new();
    link.to_fields(&mut fields);
    fields.insert("maxv".into(), max_value.to_string());
    Ok(StoreSpec {
        system: NAME.into(),
        fields,
    })
}

/// One CN's connection: a member of the shared RAS; handles share it.
pub struct ClioKvFactory {
    client: Client,
    max_value: usize,
}

impl ClioKvFactory {
    /// Open from a spec (joins the RAS: a new CN).
    pub fn from_spec(s: &StoreSpec, config: Config) -> KvResult<ClioKvFactory> {
        let max_value: usize = s.parse("maxv")?;
        if max_value > KV_MAX_VALUE {
            return Err(KvError::Spec(format!(
                "{NAME}: maxv {max_value} exceeds {KV_MAX_VALUE}"
            )));
        }
        Ok(ClioKvFactory {
            client: NodeLink::from_spec(s, config)?.join()?,
            max_value,
        })
    }
}

impl StoreFactory for ClioKvFactory {
    fn name(&self) -> &'static str {
        NAME
    }

    fn open(&self) -> KvResult<Box<dyn KvStore>> {
        Ok(Box::new(ClioKvHandle {
            c: self.client.clone(),
            max_value: self.max_value,
            rounds: 0,
        }))
    }
}

/// A handle (one thread).
struct ClioKvHandle {
    c: Client,
    max_value: usize,
    rounds: u64,
}

fn check_kv_key(key: &[u8]) -> KvResult<()> {
    if key.is_empty() || key.len() > KV_MAX_KEY {
        return Err(KvError::BadKey {
            len: key.len(),
            max: KV_MAX_KEY,
        });
    }
    Ok(())
}

impl KvStore for ClioKvHandle {
    fn get(&mut self, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        check_kv_key(key)?;
        self.rounds += 1;
        Ok(self.c.kv_get(key)?)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> KvResult<()> {
        check_kv_key(key)?;
        check_value(value, self.max_value)?;
        self.rounds += 1;
        match self.c.kv_put(key, value) {
            Ok(_) => Ok(()),
            Err(ClioError::KvStoreFull) => Err(KvError::Full(NAME)),
            Err(e) => Err(e.into()),
        }
    }

    fn delete(&mut self, key: &[u8]) -> KvResult<()> {
        check_kv_key(key)?;
        self.rounds += 1;
        self.c.kv_delete(key)?;
        Ok(())
    }

    fn cost(&mut self) -> KvResult<Cost> {
        Ok(Cost::of_node_client(&self.c, self.rounds))
    }
}
