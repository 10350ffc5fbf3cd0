//! pDPM-Central (Tsai et al., ATC '20, section 4.2): a coordinator process sits on the data
//! path. Compute nodes send it requests (UDP on loopback here, HERD-style RPC in the paper);
//! it keeps every entry's location, serialises accesses with a local reader/writer lock per
//! entry, and does the one-sided accesses to the memory node.
//!
//! * get: CN -> coordinator; the coordinator read-locks the entry, reads it from the node,
//!   unlocks, answers. Two round trips as the CN sees them (CN-coordinator, coordinator-node).
//! * put: the coordinator writes the value out of place into a free buffer (no lock needed:
//!   nobody else can see that buffer), then write-locks the entry, switches its location,
//!   unlocks and recycles the old buffer. Two round trips.
//! * delete: the entry's location is cleared and its buffer recycled (no node access).
//!
//! What differs from the paper: metadata is kept in the coordinator's memory, not flushed to
//! its local persistent memory; no replication or crash recovery (the paper omits them too).
//! Requests are retried by the CN and deduplicated by the coordinator (see [`crate::rpc`]), so
//! a duplicated put is applied once.

use crate::pdpm_direct::poisoned;
use crate::rpc::{self, put_blob, Reader, RpcClient};
use crate::store::{
    check_key, check_value, parse_faults, Cost, KvError, KvResult, KvStore, NodeLink, StoreFactory,
    StoreSpec, MAX_KEY,
};
use clio_clib::transport::FaultConfig;
use clio_clib::Client;
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

/// Name in specs and tables.
pub const NAME: &str = "pdpm-central";
const PEER: &str = "pdpm-central coordinator";

const GET: u8 = 1;
const PUT: u8 = 2;
const DEL: u8 = 3;
const STATS: u8 = 4;
const OK: u8 = 0x80;
const VALUE: u8 = 0x81;

thread_local! {
    /// Node round trips made by this handler thread (per-request accounting).
    static ROUNDS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Buffers allocated from the node at a time.
const CHUNK_BUFFERS: u64 = 256;

/// The coordinator's command line (the `clio-kv-coordinator` binary; `clio bench ycsb` runs
/// the same code as a child process).
pub type CoordinatorArgs = rpc::ServerArgs;

#[derive(Default)]
struct Entry {
    /// Buffer holding the value; `None`: no value.
    at: Option<(u64, usize)>,
}

struct Coordinator {
    c: Client,
    buf_bytes: u64,
    max_value: usize,
    entries: RwLock<HashMap<Vec<u8>, Arc<RwLock<Entry>>>>,
    free: Mutex<Vec<u64>>,
    round_trips: AtomicU64,
}

impl Coordinator {
    fn alloc(&self) -> KvResult<u64> {
        let mut f = self.free.lock().map_err(poisoned)?;
        if let Some(b) = f.pop() {
            return Ok(b);
        }
        self.round();
        let base = self.c.ralloc(self.buf_bytes * CHUNK_BUFFERS)?;
        f.extend((1..CHUNK_BUFFERS).map(|i| base + i * self.buf_bytes));
        Ok(base)
    }

    fn recycle(&self, b: u64) {
        if let Ok(mut f) = self.free.lock() {
            f.push(b);
        }
    }

    fn entry(&self, key: &[u8], create: bool) -> KvResult<Option<Arc<RwLock<Entry>>>> {
        if let Some(e) = self.entries.read().map_err(poisoned)?.get(key) {
            return Ok(Some(e.clone()));
        }
        if !create {
            return Ok(None);
        }
        let mut m = self.entries.write().map_err(poisoned)?;
        Ok(Some(m.entry(key.to_vec()).or_default().clone()))
    }

    fn get(&self, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        let Some(e) = self.entry(key, false)? else {
            return Ok(None);
        };
        let g = e.read().map_err(poisoned)?;
        match g.at {
            None => Ok(None),
            Some((_, 0)) => Ok(Some(Vec::new())),
            Some((va, len)) => {
                self.round();
                let d = self.c.rread(va, len)?;
                if d.len() != len {
                    return Err(KvError::Corrupt {
                        from: "memory node",
                        detail: "short read".into(),
                    });
                }
                Ok(Some(d))
            }
        }
    }

    fn put(&self, key: &[u8], value: &[u8]) -> KvResult<()> {
        let b = self.alloc()?;
        if !value.is_empty() {
            self.round();
            if let Err(e) = self.c.rwrite(b, value) {
                self.recycle(b);
                return Err(e.into());
            }
        }
        let e = self.entry(key, true)?.ok_or(KvError::Full(NAME))?;
        let old = e.write().map_err(poisoned)?.at.replace((b, value.len()));
        if let Some((o, _)) = old {
            self.recycle(o);
        }
        Ok(())
    }

    fn delete(&self, key: &[u8]) -> KvResult<()> {
        if let Some(e) = self.entry(key, false)? {
            if let Some((o, _)) = e.write().map_err(poisoned)?.at.take() {
                self.recycle(o);
            }
        }
        Ok(())
    }

    /// Serve one request; the answer's last byte is the number of node round trips it took
    /// (so each CN counts its own).
    fn handle(&self, kind: u8, body: &[u8]) -> KvResult<(u8, Vec<u8>)> {
        let before = ROUNDS.with(|r| r.get());
        let (k, mut out) = self.serve(kind, body)?;
        let used = ROUNDS.with(|r| r.get()).wrapping_sub(before);
        out.push(used.min(255) as u8);
        Ok((k, out))
    }

    fn round(&self) {
        self.round_trips.fetch_add(1, Ordering::Relaxed);
        ROUNDS.with(|r| r.set(r.get() + 1));
    }

    fn serve(&self, kind: u8, body: &[u8]) -> KvResult<(u8, Vec<u8>)> {
        let mut r = Reader::new(body, PEER);
        match kind {
            GET => {
                let key = r.blob(MAX_KEY)?;
                check_key(key)?;
                let mut out = Vec::new();
                match self.get(key)? {
                    Some(v) => {
                        out.push(1);
                        put_blob(&mut out, &v);
                    }
                    None => out.push(0),
                }
                Ok((VALUE, out))
            }
            PUT => {
                let key = r.blob(MAX_KEY)?;
                let value = r.blob(self.max_value)?;
                check_key(key)?;
                self.put(key, value)?;
                Ok((OK, Vec::new()))
            }
            DEL => {
                let key = r.blob(MAX_KEY)?;
                check_key(key)?;
                self.delete(key)?;
                Ok((OK, Vec::new()))
            }
            STATS => {
                let s = self.c.stats();
                let mut out = s.requests.to_le_bytes().to_vec();
                out.extend_from_slice(&self.round_trips.load(Ordering::Relaxed).to_le_bytes());
                out.extend_from_slice(&s.retransmits.to_le_bytes());
                Ok((OK, out))
            }
            k => Err(KvError::Corrupt {
                from: "a compute node",
                detail: format!("unknown request kind {k}"),
            }),
        }
    }
}

/// Run a coordinator until `stop` is set: join the RAS, bind, print `listening ADDR`, serve.
pub fn run_coordinator(a: &CoordinatorArgs, stop: Arc<AtomicBool>) -> KvResult<()> {
    let max_value = a.max_value;
    a.run(stop, |c| {
        let coord = Coordinator {
            c,
            buf_bytes: (max_value as u64).div_ceil(64).max(1) * 64,
            max_value,
            entries: RwLock::default(),
            free: Mutex::default(),
            round_trips: AtomicU64::new(0),
        };
        move |kind, body: &[u8]| coord.handle(kind, body)
    })
}

/// CNs' side: every handle is its own RPC client (own socket) of the coordinator.
pub struct CentralFactory {
    addr: SocketAddr,
    max_value: usize,
    faults: Option<FaultConfig>,
    handles: AtomicU64,
}

impl CentralFactory {
    /// Talk to the coordinator at `addr` (faults on the CN-coordinator link if given).
    pub fn new(addr: SocketAddr, max_value: usize, faults: Option<FaultConfig>) -> CentralFactory {
        CentralFactory {
            addr,
            max_value,
            faults,
            handles: AtomicU64::new(0),
        }
    }

    /// Open from a spec.
    pub fn from_spec(s: &StoreSpec) -> KvResult<CentralFactory> {
        let faults = match s.fields.get("faults") {
            Some(f) => Some(parse_faults(f)?),
            None => None,
        };
        Ok(CentralFactory::new(
            s.parse("addr")?,
            s.parse("maxv")?,
            faults,
        ))
    }
}

/// The spec for a coordinator at `addr`.
pub fn spec(addr: SocketAddr, max_value: usize, faults: Option<&FaultConfig>) -> StoreSpec {
    let mut f = BTreeMap::new();
    f.insert("addr".into(), addr.to_string());
    f.insert("maxv".into(), max_value.to_string());
    if let Some(x) = faults {
        f.insert("faults".into(), crate::store::fault_string(x));
    }
    StoreSpec {
        system: NAME.into(),
        fields: f,
    }
}

/// Coordinator arguments for `link`'s RAS (the fault seed is changed for the coordinator).
pub fn coordinator_args(link: &NodeLink, max_value: usize) -> Vec<String> {
    rpc::ServerArgs::for_link(link, max_value, 0xC00D)
}

impl StoreFactory for CentralFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn open(&self) -> KvResult<Box<dyn KvStore>> {
        let n = self.handles.fetch_add(1, Ordering::Relaxed);
        let faults = self.faults.map(|mut f| {
            f.seed = f.seed.wrapping_add(n.wrapping_mul(0x9E37_79B9));
            f
        });
        Ok(Box::new(Central {
            rpc: RpcClient::connect(self.addr, PEER, faults)?,
            max_value: self.max_value,
            node_rounds: 0,
        }))
    }
}

/// One thread's handle.
pub struct Central {
    rpc: RpcClient,
    max_value: usize,
    /// Node round trips the coordinator made for this handle's requests.
    node_rounds: u64,
}

impl Central {
    /// One request; strips the answer's node-round-trip count and adds it up.
    fn call(&mut self, kind: u8, body: Vec<u8>) -> KvResult<(u8, Vec<u8>)> {
        let (k, mut b) = self.rpc.call(kind, body)?;
        if k == OK || k == VALUE {
            let n = b.pop().ok_or(KvError::Corrupt {
                from: PEER,
                detail: "answer without its round-trip count".into(),
            })?;
            self.node_rounds += u64::from(n);
        }
        Ok((k, b))
    }

    fn ok(&mut self, kind: u8, body: Vec<u8>) -> KvResult<Vec<u8>> {
        match self.call(kind, body)? {
            (OK, b) => Ok(b),
            (k, b) => Err(rpc::refused(PEER, k, &b)),
        }
    }
}

impl KvStore for Central {
    fn get(&mut self, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        check_key(key)?;
        let mut body = Vec::new();
        put_blob(&mut body, key);
        match self.call(GET, body)? {
            (VALUE, b) => {
                let mut r = Reader::new(&b, PEER);
                match r.bytes(1)?[0] {
                    0 => Ok(None),
                    1 => Ok(Some(r.blob(self.max_value)?.to_vec())),
                    x => Err(KvError::Corrupt {
                        from: PEER,
                        detail: format!("presence byte {x}"),
                    }),
                }
            }
            (k, b) => Err(rpc::refused(PEER, k, &b)),
        }
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> KvResult<()> {
        check_key(key)?;
        check_value(value, self.max_value)?;
        let mut body = Vec::with_capacity(key.len() + value.len() + 8);
        put_blob(&mut body, key);
        put_blob(&mut body, value);
        self.ok(PUT, body).map(|_| ())
    }

    fn delete(&mut self, key: &[u8]) -> KvResult<()> {
        check_key(key)?;
        let mut body = Vec::new();
        put_blob(&mut body, key);
        self.ok(DEL, body).map(|_| ())
    }

    fn cost(&mut self) -> KvResult<Cost> {
        let b = self.ok(STATS, Vec::new())?;
        let mut r = Reader::new(&b, PEER);
        let (node_requests, _, node_retx) = (r.u64()?, r.u64()?, r.u64()?);
        // The stats request itself is not part of the workload.
        let rpcs = self.rpc.requests - 1;
        self.rpc.requests = rpcs;
        Ok(Cost {
            node_requests,
            rpc_requests: rpcs,
            round_trips: rpcs + self.node_rounds,
            retransmits: node_retx + self.rpc.retransmits,
        })
    }
}
