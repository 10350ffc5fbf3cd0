//! The slow path's share of the node's quotas (`proto::quota`): RASes and members per source
//! address, memory per RAS, placement work per allocation, and the optional admission secret
//! that `Register` must present.
//!
//! The limits are configuration ([`Limits`], defaults from proto); [`SourceCounts`] is the
//! state behind the per-source limits: how many live RASes (or members) each source address
//! created.

use clio_proto::consts::RING_WAYS;
use clio_proto::frame::{Encap, Route};
use clio_proto::quota::{
    default_ras_kv_records, default_ras_pages, DEFAULT_MEMBERS_PER_SOURCE,
    DEFAULT_PLACEMENT_BUDGET, DEFAULT_RAS_PER_SOURCE, DEFAULT_RING_SHARE,
};
use std::collections::HashMap;
use std::path::PathBuf;

/// The quota flags of `clio board` and `clio-slowpath` (one definition for both).
#[derive(clap::Args, Debug, Clone)]
pub struct LimitArgs {
    /// Remote address spaces that one source (a host's IPv4 address, whatever its ports; a
    /// raw-Ethernet station's MAC) may hold at a time. The default, half of the 4,095 PIDs,
    /// keeps one host from filling the node's key table. Register beyond it is answered
    /// QUOTA_EXCEEDED.
    #[arg(long, default_value_t = DEFAULT_RAS_PER_SOURCE)]
    pub max_ras_per_source: u32,
    /// Members (processes that registered or joined; each holds one of the node's 1,023
    /// client ids, a row of the fast path's idempotence table) that one source may hold at a
    /// time. The default, half of them, keeps one host from taking every client id. Register
    /// or Join beyond it is answered QUOTA_EXCEEDED.
    #[arg(long, default_value_t = DEFAULT_MEMBERS_PER_SOURCE)]
    pub max_members_per_source: u32,
    /// Memory that one remote address space may hold allocated (K/M/G suffixes; default:
    /// half the node's data memory). An Alloc beyond it is answered QUOTA_EXCEEDED.
    #[arg(long, value_parser = parse_size)]
    pub max_ras_memory: Option<u64>,
    /// Pages one allocation may hash against the shadow page table while it looks for a
    /// range where no bucket overflows. Bounds the slow path's time for one request (about a
    /// tenth of a second at the default, docs/perf.md); an allocation that needs more is answered
    /// QUOTA_EXCEEDED instead of holding everyone else's allocations up.
    #[arg(long, default_value_t = DEFAULT_PLACEMENT_BUDGET)]
    pub placement_budget: u64,
    /// Unacknowledged results (the recorded answers of atomics, Append and Clio-KV writes)
    /// that one member may hold in its row of the idempotence table, of the row's 16. Every
    /// member has its own row, so no member can refuse or evict another's; the default is
    /// the whole row, and a lower share makes clients acknowledge sooner. A member at its
    /// share is answered QUOTA_EXCEEDED (CLib retries while its own acknowledgements catch
    /// up). 0: the whole row.
    #[arg(long, default_value_t = DEFAULT_RING_SHARE,
          value_parser = clap::value_parser!(u8).range(0..=RING_WAYS as i64))]
    pub ring_share: u8,
    /// Clio-KV records (keys) that one remote address space may hold in the node's store
    /// (default: half of the store's records; its size is `clio board --kv-store-size`,
    /// `clio-slowpath --kv-store-bytes`). A put of a new key beyond
    /// it is answered QUOTA_EXCEEDED; replacing a value and deleting always work. 0: no limit
    /// (one tenant may fill the store).
    #[arg(long)]
    pub max_ras_kv_records: Option<u64>,
    /// Admit only compute nodes that present a secret at Register: the file holds it (a
    /// 64-bit number, hex with 0x or decimal, not 0). Hand the same value to the compute
    /// nodes (CLib reads CLIO_ADMISSION_SECRET, or `Config::admission_secret`). Without it
    /// anyone who can reach the node may register.
    #[arg(long, value_name = "PATH")]
    pub admission_secret_file: Option<PathBuf>,
}

impl LimitArgs {
    /// The limits these flags give (reads the secret file).
    pub fn limits(&self) -> Result<Limits, String> {
        let admission_secret = match &self.admission_secret_file {
            None => None,
            Some(p) => {
                let t = std::fs::read_to_string(p)
                    .map_err(|e| format!("reading the admission secret {}: {e}", p.display()))?;
                Some(parse_secret(t.trim()).map_err(|e| format!("{}: {e}", p.display()))?)
            }
        };
        Ok(Limits {
            ras_per_source: self.max_ras_per_source,
            members_per_source: self.max_members_per_source,
            ras_bytes: self.max_ras_memory,
            placement_budget: self.placement_budget,
            ring_share: self.ring_share,
            ras_kv_records: self.max_ras_kv_records,
            admission_secret,
            pids: ALL_PIDS,
            clients: ALL_CLIENTS,
            kv_purge_interval: DEFAULT_KV_PURGE_INTERVAL,
        })
    }
}

/// Parse an admission secret: a non-zero 64-bit number, `0x` hex or decimal.
pub fn parse_secret(s: &str) -> Result<u64, String> {
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16),
        None => s.parse(),
    }
    .map_err(|_| format!("{s:?} is not a 64-bit number (hex with 0x, or decimal)"))?;
    if v == 0 {
        return Err(
            "the admission secret must not be 0 (0 is what a Register without one carries)".into(),
        );
    }
    Ok(v)
}

/// Parse a size with an optional binary suffix (`4096`, `64K`, `16M`, `4G`, `1T`).
pub fn parse_size(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a size (examples: 4096, 64M, 4G)"))?;
    let shift = match suffix.trim().to_ascii_uppercase().as_str() {
        "" | "B" => 0,
        "K" | "KB" | "KIB" => 10,
        "M" | "MB" | "MIB" => 20,
        "G" | "GB" | "GIB" => 30,
        "T" | "TB" | "TIB" => 40,
        other => {
            return Err(format!(
                "unknown size suffix {other:?} in {s:?} (use K, M, G or T)"
            ))
        }
    };
    n.checked_mul(1u64 << shift)
        .ok_or_else(|| format!("{s:?} is too large"))
}

/// The slow path's quotas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Live RASes that one source address may have registered (`--max-ras-per-source`).
    pub ras_per_source: u32,
    /// Live members that one source address may have created (`--max-members-per-source`).
    pub members_per_source: u32,
    /// Bytes one RAS may hold allocated (`--max-ras-memory`); `None`: half the node's data
    /// memory ([`clio_proto::quota::DEFAULT_RAS_MEMORY_PERCENT`]).
    pub ras_bytes: Option<u64>,
    /// Pages one allocation may hash against the shadow page table while it looks for an
    /// overflow-free range (`--placement-budget`).
    pub placement_budget: u64,
    /// Unacknowledged results one member may hold (`--ring-share`; 0: its whole row), sent
    /// to the fast path in a `RING_SHARE` descriptor at start.
    pub ring_share: u8,
    /// Clio-KV records one RAS may hold (`--max-ras-kv-records`; 0: no limit), written into
    /// the store's superblock as it is formatted; `None`: half of the store's records
    /// ([`clio_proto::quota::DEFAULT_KV_RECORDS_PERCENT`]).
    pub ras_kv_records: Option<u64>,
    /// When set, `Register` must carry this secret in its `arg1` (`--admission-secret`), or
    /// it is answered `Denied`. The operator hands it to the compute nodes it admits.
    pub admission_secret: Option<u64>,
    /// PIDs the registry hands out: `1..=pids` ([`ALL_PIDS`] by default). Fewer make a
    /// departed RAS's pid come back sooner (FIFO): the conformance streams use a handful, so
    /// that the next owner of a pid meets the purge of its last owner's state within a stream.
    pub pids: u16,
    /// Client ids the registry hands out: `1..=clients` ([`ALL_CLIENTS`] by default; fewer
    /// make a departed member's client id, and so its row, come back sooner).
    pub clients: u16,
    /// Least time between two passes that free the Clio-KV records of torn-down RASes
    /// (`daemon/kv_purge.rs`): a pass answers every KV request RETRY_LATER while it walks the
    /// store, so this bounds the share of the store's time that tenants cycling Register and
    /// Unregister can take from everyone's KV requests ([`DEFAULT_KV_PURGE_INTERVAL`]; zero:
    /// every teardown purges at once, as the conformance streams need to be deterministic).
    pub kv_purge_interval: std::time::Duration,
}

/// Default of [`Limits::kv_purge_interval`]: a pass every 100 ms at most. A pass of the
/// default 16 MiB store takes about a millisecond of the slow path (docs/perf.md), so KV
/// requests are paused at most about 1% of the time however fast tenants come and go, and a
/// torn-down RAS's pid is held back for at most about 100 ms.
pub const DEFAULT_KV_PURGE_INTERVAL: std::time::Duration = std::time::Duration::from_millis(100);

/// Every PID the key table has (`1..KEY_TABLE_ENTRIES`: entry 0 is never valid).
pub const ALL_PIDS: u16 = (clio_proto::consts::KEY_TABLE_ENTRIES - 1) as u16;
/// Every client id the idempotence table has rows for (`1..RING_MEMBERS`: 0 is nobody's).
pub const ALL_CLIENTS: u16 = (clio_proto::consts::RING_MEMBERS - 1) as u16;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ras_per_source: DEFAULT_RAS_PER_SOURCE,
            members_per_source: DEFAULT_MEMBERS_PER_SOURCE,
            ras_bytes: None,
            placement_budget: DEFAULT_PLACEMENT_BUDGET,
            ring_share: DEFAULT_RING_SHARE,
            ras_kv_records: None,
            admission_secret: None,
            pids: ALL_PIDS,
            clients: ALL_CLIENTS,
            kv_purge_interval: DEFAULT_KV_PURGE_INTERVAL,
        }
    }
}

impl Limits {
    /// No quota at all (tests and tools that drive one slow path as a single tenant).
    pub fn unlimited() -> Limits {
        Limits {
            ras_per_source: u32::MAX,
            members_per_source: u32::MAX,
            ras_bytes: Some(u64::MAX),
            placement_budget: u64::MAX,
            ring_share: 0,
            ras_kv_records: Some(0),
            admission_secret: None,
            pids: ALL_PIDS,
            clients: ALL_CLIENTS,
            kv_purge_interval: std::time::Duration::ZERO,
        }
    }

    /// The Clio-KV records one RAS may hold in a store of `records` slots (0: no limit).
    pub fn ras_kv_records_of(&self, records: u64) -> u64 {
        self.ras_kv_records
            .unwrap_or_else(|| default_ras_kv_records(records))
    }

    /// The pages one RAS may hold on a node with `data_pages` pages of `page_size` bytes.
    pub fn ras_pages_of(&self, data_pages: u64, page_size: u64) -> u64 {
        match self.ras_bytes {
            Some(b) => b / page_size,
            None => default_ras_pages(data_pages),
        }
    }
}

/// Who sent a request, for the per-source quota: the IPv4 address of a UDP sender (its
/// ports are not told apart: a host's processes share its quota), the MAC of a raw one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// An IPv4 host.
    Ip(std::net::Ipv4Addr),
    /// A raw-Ethernet station.
    Mac([u8; 6]),
}

impl Source {
    /// The source of a request that arrived on `route`.
    pub fn of(route: &Route) -> Source {
        match route.encap {
            Encap::Udp => Source::Ip(route.peer_ip),
            Encap::RawEthernet => Source::Mac(route.peer_mac),
        }
    }
}

/// Live things (RASes by PID, members by `(pid, client)`) per source address that created
/// them.
#[derive(Debug)]
pub struct SourceCounts<K> {
    by_source: HashMap<Source, u32>,
    of: HashMap<K, Source>,
}

impl<K> Default for SourceCounts<K> {
    fn default() -> Self {
        SourceCounts {
            by_source: HashMap::new(),
            of: HashMap::new(),
        }
    }
}

impl<K: std::hash::Hash + Eq> SourceCounts<K> {
    /// Live things that `source` created.
    pub fn count(&self, source: Source) -> u32 {
        self.by_source.get(&source).copied().unwrap_or(0)
    }

    /// `k` was created by `source`.
    pub fn add(&mut self, k: K, source: Source) {
        if let Some(old) = self.of.insert(k, source) {
            self.drop_one(old);
        }
        *self.by_source.entry(source).or_insert(0) += 1;
    }

    /// `k` is gone: its source may create another.
    pub fn remove(&mut self, k: &K) {
        if let Some(s) = self.of.remove(k) {
            self.drop_one(s);
        }
    }

    fn drop_one(&mut self, s: Source) {
        if let Some(n) = self.by_source.get_mut(&s) {
            *n -= 1;
            if *n == 0 {
                self.by_source.remove(&s);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, SocketAddrV4};

    #[test]
    fn every_quota_names_a_flag_these_args_have() {
        use clap::Args;
        let cmd = LimitArgs::augment_args(clap::Command::new("t"));
        let longs: Vec<String> = cmd
            .get_arguments()
            .filter_map(|a| a.get_long().map(|l| format!("--{l}")))
            .collect();
        for q in clio_proto::quota::Quota::ALL {
            assert!(
                longs.iter().any(|l| l == q.flag()),
                "{} not in {longs:?}",
                q.flag()
            );
        }
    }

    #[test]
    fn secrets_and_sizes_parse() {
        assert_eq!(parse_secret("0x5EC2E7"), Ok(0x5EC2E7));
        assert_eq!(parse_secret("42"), Ok(42));
        assert!(parse_secret("0").is_err() && parse_secret("zz").is_err());
        assert_eq!(parse_size("64M"), Ok(64 << 20));
        assert!(parse_size("1X").is_err());
    }

    #[test]
    fn a_hosts_ports_share_its_count_and_teardown_returns_it() {
        let a = Route::udp(
            SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 1000),
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 48850),
        );
        let b = Route::udp(
            SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 2000),
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 48850),
        );
        assert_eq!(Source::of(&a), Source::of(&b));
        let mut c = SourceCounts::default();
        c.add(1, Source::of(&a));
        c.add(2, Source::of(&b));
        assert_eq!(c.count(Source::of(&a)), 2);
        c.remove(&1);
        c.remove(&1);
        assert_eq!(c.count(Source::of(&a)), 1);
        c.remove(&2);
        assert_eq!(c.count(Source::of(&a)), 0);
        assert!(c.by_source.is_empty());
    }
}
