//! A client of etcd's v3 API through its JSON gateway (`/v3/kv/range`, `/v3/kv/txn`,
//! `/v3/watch`; etcd 3.4 and later): the three things a pool's configuration needs: read a
//! key with its revision, put it only if it is still at a revision (a transaction with one
//! compare), and watch it. Keys and values are bytes (base64 on the wire); revisions are
//! etcd's `mod_revision`.

use crate::http::{self, Body, HttpError};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{json, Value};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use thiserror::Error;

/// What a call to etcd can fail with.
#[derive(Debug, Error)]
pub enum EtcdError {
    /// The server could not be reached or broke the exchange.
    #[error("etcd at {0}")]
    Http(#[from] HttpError),
    /// The answer is not what the API documents.
    #[error("etcd answered something unexpected: {0}")]
    Answer(String),
}

/// A key's value and its modification revision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The value.
    pub value: Vec<u8>,
    /// The revision of the key's last change (etcd's `mod_revision`, > 0).
    pub revision: u64,
}

/// An etcd endpoint.
#[derive(Debug, Clone)]
pub struct Etcd {
    addr: SocketAddr,
    timeout: Duration,
}

fn num(v: &Value) -> Option<u64> {
    // The gateway writes 64-bit integers as strings.
    match v {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_u64(),
        _ => None,
    }
}

fn bad(what: &str, v: &Value) -> EtcdError {
    EtcdError::Answer(format!("{what}: {v}"))
}

/// The key-values of a range answer (`kvs`, absent when there are none).
fn key_values(v: &Value) -> Result<Vec<(Vec<u8>, KeyValue)>, EtcdError> {
    let Some(kvs) = v.get("kvs") else {
        return Ok(Vec::new());
    };
    let kvs = kvs.as_array().ok_or_else(|| bad("kvs", v))?;
    kvs.iter()
        .map(|kv| {
            let b64 = |field: &str| -> Result<Vec<u8>, EtcdError> {
                match kv.get(field) {
                    // An empty value is left out.
                    None => Ok(Vec::new()),
                    Some(Value::String(s)) => B64.decode(s).map_err(|_| bad(field, kv)),
                    Some(_) => Err(bad(field, kv)),
                }
            };
            let revision = kv
                .get("mod_revision")
                .and_then(num)
                .ok_or_else(|| bad("mod_revision", kv))?;
            Ok((
                b64("key")?,
                KeyValue {
                    value: b64("value")?,
                    revision,
                },
            ))
        })
        .collect()
}

/// The end of the range of keys that start with `prefix` (etcd's `range_end`): the prefix
/// with its last byte below 0xff incremented and what follows it dropped; all keys (`\0`)
/// when every byte is 0xff.
fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

impl Etcd {
    /// An endpoint (the client URL's host and port, e.g. `127.0.0.1:2379`).
    pub fn new(addr: SocketAddr) -> Etcd {
        Etcd {
            addr,
            timeout: Duration::from_secs(3),
        }
    }

    /// The endpoint's address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    fn call(&self, path: &str, body: Value) -> Result<Value, EtcdError> {
        let text = http::post(self.addr, path, &body.to_string(), self.timeout)?.read_all()?;
        serde_json::from_slice(&text).map_err(|e| {
            EtcdError::Answer(format!("{path}: {e}: {}", String::from_utf8_lossy(&text)))
        })
    }

    /// The value of `key` and its revision; `None` when absent.
    pub fn get(&self, key: &[u8]) -> Result<Option<KeyValue>, EtcdError> {
        let v = self.call("/v3/kv/range", json!({ "key": B64.encode(key) }))?;
        Ok(key_values(&v)?
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, kv)| kv))
    }

    /// Put `value` at `key` unconditionally; returns the new revision.
    pub fn put(&self, key: &[u8], value: &[u8]) -> Result<u64, EtcdError> {
        let v = self.call(
            "/v3/kv/put",
            json!({ "key": B64.encode(key), "value": B64.encode(value) }),
        )?;
        v.get("header")
            .and_then(|h| h.get("revision"))
            .and_then(num)
            .ok_or_else(|| bad("put header", &v))
    }

    /// Put `value` at `key` if the key's revision is still `revision` (`None`: if the key
    /// does not exist), in one transaction. True when it was stored.
    pub fn compare_and_put(
        &self,
        key: &[u8],
        revision: Option<u64>,
        value: &[u8],
    ) -> Result<bool, EtcdError> {
        let k = B64.encode(key);
        // An absent key has create_revision 0 in a compare.
        let compare = match revision {
            Some(r) => {
                json!({ "key": k, "target": "MOD", "result": "EQUAL", "mod_revision": r.to_string() })
            }
            None => {
                json!({ "key": k, "target": "CREATE", "result": "EQUAL", "create_revision": "0" })
            }
        };
        let v = self.call(
            "/v3/kv/txn",
            json!({
                "compare": [compare],
                "success": [{ "request_put": { "key": k, "value": B64.encode(value) } }],
            }),
        )?;
        // `succeeded` is left out when false.
        match v.get("succeeded") {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(bad("succeeded", &v)),
        }
    }

    /// Every key starting with `prefix`, with its value and revision, in key order.
    pub fn get_prefix(&self, prefix: &[u8]) -> Result<Vec<(Vec<u8>, KeyValue)>, EtcdError> {
        let v = self.call(
            "/v3/kv/range",
            json!({ "key": B64.encode(prefix), "range_end": B64.encode(prefix_end(prefix)) }),
        )?;
        key_values(&v)
    }

    /// Put `value` at `key`, tied to `lease` (the key goes when the lease ends).
    pub fn put_leased(&self, key: &[u8], value: &[u8], lease: u64) -> Result<(), EtcdError> {
        self.call(
            "/v3/kv/put",
            json!({ "key": B64.encode(key), "value": B64.encode(value), "lease": lease.to_string() }),
        )?;
        Ok(())
    }

    /// A new lease of `ttl` seconds; its id.
    pub fn grant(&self, ttl: u64) -> Result<u64, EtcdError> {
        let v = self.call("/v3/lease/grant", json!({ "TTL": ttl.to_string() }))?;
        v.get("ID")
            .and_then(num)
            .ok_or_else(|| bad("lease grant", &v))
    }

    /// Renew `lease`: the seconds it now has left, 0 when it had already ended.
    pub fn keep_alive(&self, lease: u64) -> Result<u64, EtcdError> {
        let v = self.call("/v3/lease/keepalive", json!({ "ID": lease.to_string() }))?;
        let r = v.get("result").ok_or_else(|| bad("keepalive", &v))?;
        // An ended lease comes back without a TTL.
        Ok(r.get("TTL").and_then(num).unwrap_or(0))
    }

    /// End `lease` now (its keys go with it).
    pub fn revoke(&self, lease: u64) -> Result<(), EtcdError> {
        self.call("/v3/lease/revoke", json!({ "ID": lease.to_string() }))?;
        Ok(())
    }

    /// Watch `key` from revision `from` (0: from now): the answer's stream, whose messages
    /// [`Watch::next`] reads.
    pub fn watch(&self, key: &[u8], from: u64) -> Result<Watch, EtcdError> {
        self.watch_range(key, None, from)
    }

    /// Watch every key starting with `prefix` from revision `from` (0: from now).
    pub fn watch_prefix(&self, prefix: &[u8], from: u64) -> Result<Watch, EtcdError> {
        self.watch_range(prefix, Some(prefix_end(prefix)), from)
    }

    fn watch_range(&self, key: &[u8], end: Option<Vec<u8>>, from: u64) -> Result<Watch, EtcdError> {
        let mut create = json!({ "key": B64.encode(key) });
        if let Some(end) = end {
            create["range_end"] = json!(B64.encode(end));
        }
        if from > 0 {
            create["start_revision"] = json!(from.to_string());
        }
        let body = json!({ "create_request": create }).to_string();
        let mut stream = http::post(self.addr, "/v3/watch", &body, self.timeout)?;
        stream.set_timeout(None)?;
        Ok(Watch {
            stream,
            pending: Vec::new(),
        })
    }
}

/// A watch's stream of changes.
pub struct Watch {
    stream: Body,
    pending: Vec<u8>,
}

impl Watch {
    /// Wait for the next change: the revision of the newest event in the next message that
    /// has events; `None` when the stream ended (etcd closed it).
    pub fn next(&mut self) -> Result<Option<u64>, EtcdError> {
        loop {
            let Some(msg) = self.stream.next_message(&mut self.pending)? else {
                return Ok(None);
            };
            let v: Value = serde_json::from_slice(&msg)
                .map_err(|e| EtcdError::Answer(format!("watch: {e}")))?;
            let result = v.get("result").ok_or_else(|| bad("watch message", &v))?;
            if let Some(events) = result.get("events").and_then(Value::as_array) {
                let newest = events
                    .iter()
                    .filter_map(|e| {
                        e.get("kv")
                            .and_then(|kv| kv.get("mod_revision"))
                            .and_then(num)
                    })
                    .max();
                if let Some(r) = newest {
                    return Ok(Some(r));
                }
            }
            if result.get("canceled") == Some(&Value::Bool(true)) {
                return Ok(None);
            }
        }
    }

    /// The connection, whose `shutdown` ends a [`Watch::next`] waiting on it.
    pub fn connection(&self) -> Result<TcpStream, EtcdError> {
        Ok(self.stream.connection()?)
    }
}
