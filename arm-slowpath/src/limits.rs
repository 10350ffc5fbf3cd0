//! The slow path's share of the node's quotas (`proto::quota`): RASes per source address,
//! memory per RAS, placement work per allocation, and the optional admission secret that
//! `Register` must present.
//!
//! The limits are configuration ([`Limits`], defaults from proto); [`SourceCounts`] is the
//! state behind the per-source limit: how many live RASes each source address registered.

use clio_proto::frame::{Encap, Route};
use clio_proto::quota::{default_ras_pages, DEFAULT_PLACEMENT_BUDGET, DEFAULT_RAS_PER_SOURCE};
use std::collections::HashMap;

/// The slow path's quotas.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Live RASes that one source address may have registered (`--max-ras-per-source`).
    pub ras_per_source: u32,
    /// Pages one RAS may hold allocated (`--max-ras-memory`); `None`: half the node's data
    /// memory ([`clio_proto::quota::DEFAULT_RAS_MEMORY_PERCENT`]).
    pub ras_pages: Option<u64>,
    /// Pages one allocation may hash against the shadow page table while it looks for an
    /// overflow-free range (`--placement-budget`).
    pub placement_budget: u64,
    /// When set, `Register` must carry this secret in its `arg1` (`--admission-secret`), or
    /// it is answered `Denied`. The operator hands it to the compute nodes it admits.
    pub admission_secret: Option<u64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            ras_per_source: DEFAULT_RAS_PER_SOURCE,
            ras_pages: None,
            placement_budget: DEFAULT_PLACEMENT_BUDGET,
            admission_secret: None,
        }
    }
}

impl Limits {
    /// No quota at all (tests and tools that drive one slow path as a single tenant).
    pub fn unlimited() -> Limits {
        Limits {
            ras_per_source: u32::MAX,
            ras_pages: Some(u64::MAX),
            placement_budget: u64::MAX,
            admission_secret: None,
        }
    }

    /// The pages one RAS may hold on a node with `data_pages` pages of data memory.
    pub fn ras_pages_of(&self, data_pages: u64) -> u64 {
        self.ras_pages
            .unwrap_or_else(|| default_ras_pages(data_pages))
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

/// Live RASes per source address.
#[derive(Debug, Default)]
pub struct SourceCounts {
    by_source: HashMap<Source, u32>,
    of_pid: HashMap<u16, Source>,
}

impl SourceCounts {
    /// RASes alive that `source` registered.
    pub fn count(&self, source: Source) -> u32 {
        self.by_source.get(&source).copied().unwrap_or(0)
    }

    /// `pid` was registered by `source`.
    pub fn add(&mut self, pid: u16, source: Source) {
        if let Some(old) = self.of_pid.insert(pid, source) {
            self.drop_one(old);
        }
        *self.by_source.entry(source).or_insert(0) += 1;
    }

    /// `pid` is gone: its source may register another.
    pub fn remove(&mut self, pid: u16) {
        if let Some(s) = self.of_pid.remove(&pid) {
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
        c.remove(1);
        c.remove(1);
        assert_eq!(c.count(Source::of(&a)), 1);
        c.remove(2);
        assert_eq!(c.count(Source::of(&a)), 0);
        assert!(c.by_source.is_empty());
    }
}
