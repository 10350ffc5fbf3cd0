//! The interface every store implements ([`KvStore`], one handle per client thread), the
//! factory a compute node (CN) opens handles from ([`StoreFactory`]), typed errors, and the
//! pieces the stores share: how a CN reaches the memory node (optionally through CLib's fault
//! injector) and how a store is described to another process ([`StoreSpec`]).

use clio_clib::transport::{FaultConfig, FaultyTransport, Transport, UdpTransport};
use clio_clib::{Client, ClioError, Config, Credentials};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::Duration;
use thiserror::Error;

/// Everything a store operation can fail with.
#[derive(Debug, Error)]
pub enum KvError {
    /// The memory node (through CLib) refused or did not answer.
    #[error("memory node: {0}")]
    Clio(#[from] ClioError),
    /// An empty key, or one longer than the store accepts.
    #[error("key of {len} bytes not accepted (1..={max} bytes)")]
    BadKey {
        /// Its length.
        len: usize,
        /// The store's limit.
        max: usize,
    },
    /// A value longer than the store was created for.
    #[error("value of {len} bytes exceeds the store's limit of {max}")]
    ValueTooLong {
        /// Its length.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// Bytes from the network or remote memory failed a check (length, checksum, format).
    #[error("corrupt data from {from}: {detail}")]
    Corrupt {
        /// Where they came from.
        from: &'static str,
        /// What was wrong.
        detail: String,
    },
    /// The store has no room (table full, out of buffers).
    #[error("store full: {0}")]
    Full(&'static str),
    /// An operation kept losing races (or seeing in-flight states) and gave up.
    #[error("{what}: gave up after {attempts} attempts")]
    Contention {
        /// The step that kept failing.
        what: &'static str,
        /// Attempts made.
        attempts: u32,
    },
    /// A server (coordinator, metadata server, memcached) did not answer in time.
    #[error("{peer} did not answer after {tries} tries")]
    Timeout {
        /// Who.
        peer: &'static str,
        /// Sends made.
        tries: u32,
    },
    /// A server answered with an error.
    #[error("{peer} refused: {detail}")]
    Refused {
        /// Who.
        peer: &'static str,
        /// Its message.
        detail: String,
    },
    /// A socket or process failed.
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    /// A store description (command line, spec string) is malformed.
    #[error("bad store description: {0}")]
    Spec(String),
}

/// Result alias.
pub type KvResult<T> = Result<T, KvError>;

/// Network cost counted so far (cumulative; the bench takes differences).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Cost {
    /// Wire requests to the memory node (CLib's `Stats::requests`; for pDPM-Central those of
    /// the coordinator, which is the one talking to the node). First attempts only.
    pub node_requests: u64,
    /// Request messages to a server process (coordinator, metadata server, memcached), first
    /// attempts only.
    pub rpc_requests: u64,
    /// Sequential round trips the store waited for (each wait on the node or a server is one,
    /// whatever number of requests it covered).
    pub round_trips: u64,
    /// Retransmissions so far (CLib's to the node, and this handle's to a server): evidence
    /// that faults were met and survived.
    pub retransmits: u64,
}

impl Cost {
    /// The cost of a store that talks only to the node through `c`: CLib's requests and
    /// retransmissions, and the `round_trips` the store counted.
    pub fn of_node_client(c: &Client, round_trips: u64) -> Cost {
        let s = c.stats();
        Cost {
            node_requests: s.requests,
            rpc_requests: 0,
            round_trips,
            retransmits: s.retransmits,
        }
    }
}

/// A key-value store handle. One per client thread; handles of one [`StoreFactory`] share the
/// compute node's connection(s).
pub trait KvStore: Send {
    /// The value of `key`, or `None` if it has none.
    fn get(&mut self, key: &[u8]) -> KvResult<Option<Vec<u8>>>;
    /// Set `key` to `value` (atomically: readers see the old or the new value, whole).
    fn put(&mut self, key: &[u8], value: &[u8]) -> KvResult<()>;
    /// Remove `key`'s value (a no-op if it has none).
    fn delete(&mut self, key: &[u8]) -> KvResult<()>;
    /// Network cost so far. Node requests are those of the whole CN (all handles of the
    /// factory) for stores over CLib; round trips are this handle's.
    fn cost(&mut self) -> KvResult<Cost>;
}

/// Opens handles of one store on one compute node.
pub trait StoreFactory: Send + Sync {
    /// Short name (`pdpm-direct`, ...).
    fn name(&self) -> &'static str;
    /// A new handle (for one thread).
    fn open(&self) -> KvResult<Box<dyn KvStore>>;
}

/// Largest key any store accepts (memcached's limit is 250).
pub const MAX_KEY: usize = 200;

pub(crate) fn check_key(key: &[u8]) -> KvResult<()> {
    if key.is_empty() || key.len() > MAX_KEY {
        return Err(KvError::BadKey {
            len: key.len(),
            max: MAX_KEY,
        });
    }
    Ok(())
}

pub(crate) fn check_value(value: &[u8], max: usize) -> KvResult<()> {
    if value.len() > max {
        return Err(KvError::ValueTooLong {
            len: value.len(),
            max,
        });
    }
    Ok(())
}

/// 64-bit FNV-1a (key placement; YCSB's scrambling hash).
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// How a compute node reaches the memory node: its address, the remote address space's
/// credentials, CLib's configuration, and optionally CLib's fault injector.
#[derive(Debug, Clone)]
pub struct NodeLink {
    /// The memory node (UDP).
    pub node: SocketAddr,
    /// The remote address space all CNs of the store share.
    pub creds: Credentials,
    /// CLib configuration.
    pub config: Config,
    /// Faults injected on this CN's link (seeded), if any.
    pub faults: Option<FaultConfig>,
}

impl NodeLink {
    /// Join the store's remote address space as a new member (a new socket: one CN).
    pub fn join(&self) -> KvResult<Client> {
        let udp = UdpTransport::connect(self.node)?;
        let t: Box<dyn Transport> = match self.faults {
            Some(f) => Box::new(FaultyTransport::new(udp, f)),
            None => Box::new(udp),
        };
        Ok(Client::join(t, self.config.clone(), self.creds)?)
    }

    /// The same link with the fault seed changed (each CN gets its own fault sequence).
    pub fn reseeded(&self, salt: u64) -> NodeLink {
        let mut l = self.clone();
        if let Some(f) = &mut l.faults {
            f.seed = f
                .seed
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                .wrapping_add(salt);
        }
        l
    }

    /// Fields for a [`StoreSpec`] (`node`, `creds`, and `faults` if any).
    pub fn to_fields(&self, f: &mut BTreeMap<String, String>) {
        f.insert("node".into(), self.node.to_string());
        f.insert("creds".into(), self.creds.to_string());
        if let Some(x) = &self.faults {
            f.insert("faults".into(), fault_string(x));
        }
    }

    /// Read back what [`NodeLink::to_fields`] wrote; CLib's configuration is `config`.
    pub fn from_spec(spec: &StoreSpec, config: Config) -> KvResult<NodeLink> {
        Ok(NodeLink {
            node: spec.parse("node")?,
            creds: spec
                .get("creds")?
                .parse()
                .map_err(|e| KvError::Spec(format!("creds: {e}")))?,
            config,
            faults: match spec.fields.get("faults") {
                Some(s) => Some(parse_faults(s)?),
                None => None,
            },
        })
    }
}

/// `drop/dup/reorder/corrupt/seed`.
pub fn fault_string(f: &FaultConfig) -> String {
    format!(
        "{}/{}/{}/{}/{}",
        f.drop, f.duplicate, f.reorder, f.corrupt, f.seed
    )
}

/// Parse [`fault_string`]'s format.
pub fn parse_faults(s: &str) -> KvResult<FaultConfig> {
    let p: Vec<&str> = s.split('/').collect();
    let bad = || KvError::Spec(format!("faults `{s}`: want drop/dup/reorder/corrupt/seed"));
    if p.len() != 5 {
        return Err(bad());
    }
    let prob = |x: &str| -> KvResult<f64> {
        let v: f64 = x.parse().map_err(|_| bad())?;
        if (0.0..=0.5).contains(&v) {
            Ok(v)
        } else {
            Err(bad())
        }
    };
    Ok(FaultConfig {
        drop: prob(p[0])?,
        duplicate: prob(p[1])?,
        reorder: prob(p[2])?,
        corrupt: prob(p[3])?,
        seed: p[4].parse().map_err(|_| bad())?,
    })
}

/// CLib settings for a loopback node: a shorter minimum RTO than the LAN default, so that a
/// loss costs about a millisecond, and a generous retry count for fault-injection runs.
pub fn loopback_config() -> Config {
    Config {
        min_rto: Duration::from_millis(1),
        initial_rto: Duration::from_millis(5),
        max_rto: Duration::from_millis(100),
        max_retries: 40,
        ..Config::default()
    }
}

/// A store described as text so that another process (a YCSB worker, a test's child) can
/// open it: `system;key=value;key=value` (values contain no `;`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreSpec {
    /// Which store.
    pub system: String,
    /// Its parameters.
    pub fields: BTreeMap<String, String>,
}

impl StoreSpec {
    /// A field, or an error naming it.
    pub fn get(&self, k: &str) -> KvResult<&str> {
        self.fields
            .get(k)
            .map(String::as_str)
            .ok_or_else(|| KvError::Spec(format!("{}: missing `{k}`", self.system)))
    }

    /// A field parsed.
    pub fn parse<T: std::str::FromStr>(&self, k: &str) -> KvResult<T> {
        let v = self.get(k)?;
        v.parse()
            .map_err(|_| KvError::Spec(format!("{}: bad `{k}` = `{v}`", self.system)))
    }
}

impl std::fmt::Display for StoreSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.system)?;
        for (k, v) in &self.fields {
            write!(f, ";{k}={v}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for StoreSpec {
    type Err = KvError;
    fn from_str(s: &str) -> KvResult<StoreSpec> {
        let mut parts = s.trim().split(';');
        let system = parts
            .next()
            .filter(|x| !x.is_empty())
            .ok_or_else(|| KvError::Spec("empty spec".into()))?
            .to_string();
        let mut fields = BTreeMap::new();
        for p in parts {
            let (k, v) = p
                .split_once('=')
                .ok_or_else(|| KvError::Spec(format!("`{p}` is not key=value")))?;
            fields.insert(k.to_string(), v.to_string());
        }
        Ok(StoreSpec { system, fields })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_round_trips_and_rejects_garbage() {
        let mut fields = BTreeMap::new();
        fields.insert("node".into(), "127.0.0.1:5".into());
        fields.insert("cap".into(), "10".into());
        let s = StoreSpec {
            system: "pdpm-direct".into(),
            fields,
        };
        let back: StoreSpec = s.to_string().parse().unwrap();
        assert_eq!(back, s);
        assert_eq!(back.parse::<u64>("cap").unwrap(), 10);
        assert!(back.parse::<u64>("node").is_err());
        assert!(back.get("nope").is_err());
        assert!("".parse::<StoreSpec>().is_err());
        assert!("x;novalue".parse::<StoreSpec>().is_err());
        assert!(parse_faults("0.1/0/0/0/7").is_ok());
        assert!(parse_faults("0.9/0/0/0/7").is_err());
        assert!(parse_faults("0.1/0/0").is_err());
    }
}
