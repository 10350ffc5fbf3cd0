//! Clio-KV's store, set up by the slow path (the paper's "the slow path registers offloads":
//! the offload gets its own RAS, and the fast path learns where the store is).
//!
//! At start the slow path registers a RAS of its own (a secret nonce, a key that never leaves
//! the node, so no compute node can address the store with one-sided requests), allocates the
//! store's region in it, maps every page at once (a frame cleared to zeros and a valid PTE
//! each, so that no KV request ever meets a page fault half-way), writes the superblock
//! (`proto::kv`: an empty store is a superblock on zeroed pages), and then sends the
//! `KvConfig` TX descriptor that enables the fast path's Clio-KV unit. The PTE and key writes
//! are queued before it, so the fast path has them when the first KV request arrives. The
//! store's membership never expires: the slow path renews it before leases are checked.
//!
//! The same code serves the behavioural model, the RTL cosimulation and the board's ARM
//! daemon, so all three hold the store at the same place. A failure (no memory, no PID) is
//! sent as the `KvConfig` status, which every KV request then gets.
//!
//! The store lives as long as the slow path: a restart builds a new, empty one. (With a memory
//! file the previous store's RAS is recovered like any other and torn down when its lease
//! ends, which returns its frames.)

use super::{AllocError, SlowPath};
use crate::frame_memory::FrameMemory;
use clio_proto::kv::{empty_superblock, StoreLayout, SUPERBLOCK_BYTES};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::ring::Descriptor;
use clio_proto::Status;
use std::time::Instant;

/// The store's place: its RAS, its membership and its layout in that RAS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvStore {
    /// The store's own RAS.
    pub pid: u16,
    /// The slow path's membership in it (renewed, never expires).
    pub client: u16,
    /// Where the store's structures are.
    pub layout: StoreLayout,
}

impl SlowPath {
    /// Set up Clio-KV's store of `bytes` (see the module docs) and queue the `KvConfig`
    /// descriptor that enables the fast path's unit: OK with the layout, or the failure's
    /// status. Call once, before serving.
    pub fn start_kv_store(
        &mut self,
        bytes: u64,
        mem: &mut dyn FrameMemory,
        now: Instant,
    ) -> Result<KvStore, AllocError> {
        let r = self.build_kv_store(bytes, mem, now);
        let d = match &r {
            Ok(s) => Descriptor::KvConfig {
                pid: s.pid,
                base: s.layout.base,
                buckets: s.layout.buckets,
                records: s.layout.records as u32,
                status: Status::Ok as u8,
            },
            Err(e) => Descriptor::KvConfig {
                pid: 0,
                base: 0,
                buckets: 0,
                records: 0,
                status: e.status() as u8,
            },
        };
        self.outbox.push_back(d);
        if let Ok(s) = r {
            self.kv_store = Some(s);
        }
        r
    }

    /// The store, once [`SlowPath::start_kv_store`] succeeded.
    pub fn kv_store(&self) -> Option<KvStore> {
        self.kv_store
    }

    fn build_kv_store(
        &mut self,
        bytes: u64,
        mem: &mut dyn FrameMemory,
        now: Instant,
    ) -> Result<KvStore, AllocError> {
        let nonce = self.registry.draw_nonce();
        let (pid, _key, client) = self.register_at(nonce, now)?;
        let built = self.populate_kv_store(pid, bytes, mem);
        if built.is_err() {
            // Nothing is left behind: the RAS and whatever it got are torn down.
            let _ = self.unregister(pid, client, true);
        }
        built.map(|layout| KvStore {
            pid,
            client,
            layout,
        })
    }

    /// Allocate, map and format the store's region in RAS `pid`.
    fn populate_kv_store(
        &mut self,
        pid: u16,
        bytes: u64,
        mem: &mut dyn FrameMemory,
    ) -> Result<StoreLayout, AllocError> {
        let o = self.alloc(pid, bytes, PERM_READ | PERM_WRITE)?;
        let layout = StoreLayout::fit(o.va, bytes).ok_or(AllocError::BadRequest)?;
        let page = self.layout().page_size();
        let mut superblock_pa = None;
        for &(bucket, slot, mut pte) in &o.ptes {
            // The frame is promised to this allocation (no overcommit), so one is free unless
            // the free-page buffer holds the last ones; then the page is left to fault.
            let Some(pfn) = self.frames.alloc() else {
                self.outbox
                    .push_back(Descriptor::PteWrite { bucket, slot, pte });
                continue;
            };
            let pa = self.layout().phys_addr(pfn, 0);
            if !mem.zero(pa, page) {
                self.frames.free(pfn);
                self.stats_mut().clear_failures += 1;
                return Err(AllocError::OutOfMemory);
            }
            self.stats_mut().frames_cleared += 1;
            self.shadow.set_mapped(pid, pte.vpn, pfn);
            pte.valid = true;
            pte.pfn = pfn;
            self.outbox
                .push_back(Descriptor::PteWrite { bucket, slot, pte });
            if pte.vpn == self.layout().vpn(layout.base) {
                superblock_pa = Some(pa + self.layout().page_offset(layout.base));
            }
        }
        // An empty store: the superblock's magic and per-RAS record limit on zeroed pages
        // (free head, high water, live count and every RAS's count are zero). Flushed when
        // the node has a persistence domain.
        let pa = superblock_pa.ok_or(AllocError::OutOfMemory)?;
        let sb = empty_superblock(self.limits.ras_kv_records_of(layout.records));
        if !mem.write(pa, &sb) {
            return Err(AllocError::OutOfMemory);
        }
        if mem.is_persistent() {
            mem.persist(pa, SUPERBLOCK_BYTES);
        }
        Ok(layout)
    }

    /// Keep the store's membership alive (before leases are checked).
    pub(crate) fn renew_kv_store(&mut self, now: Instant) {
        if let Some(s) = self.kv_store {
            let _ = self.registry.renew(s.pid, s.client, now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::SlowPathConfig;
    use crate::ras::KeySource;
    use clio_proto::kv::{SB_RAS_RECORDS, STORE_MAGIC};
    use clio_proto::layout::MemoryLayout;
    use clio_proto::{Header, Opcode};
    use std::time::Duration;

    fn node(dram: u64) -> (SlowPath, Vec<u8>) {
        let layout = MemoryLayout::new(dram, 12).unwrap();
        let cfg = SlowPathConfig {
            keys: KeySource::seeded(7),
            lease: Duration::from_millis(100),
            ..SlowPathConfig::default()
        };
        let mut sp = SlowPath::with_config(layout, cfg);
        sp.outbox.clear(); // ROUTE_KEY, RING_SHARE
        (sp, vec![0xA5; dram as usize])
    }

    #[test]
    fn the_store_is_mapped_formatted_and_announced_last() {
        let (mut sp, mut mem) = node(64 << 20);
        let t0 = Instant::now();
        let s = sp.start_kv_store(1 << 20, &mut mem, t0).unwrap();
        assert_eq!(sp.kv_store(), Some(s));
        assert_eq!(s.layout, StoreLayout::fit(s.layout.base, 1 << 20).unwrap());
        let out: Vec<Descriptor> = sp.outbox.drain(..).collect();
        // The key first, then every page's PTE mapped, then the configuration.
        assert!(
            matches!(out[0], Descriptor::KeyWrite { pid, key, epoch: 0 } if pid == s.pid && key != 0)
        );
        let pages = (1u64 << 20) / 4096;
        let ptes: Vec<_> = out
            .iter()
            .filter_map(|d| match d {
                Descriptor::PteWrite { pte, .. } => Some(*pte),
                _ => None,
            })
            .collect();
        assert_eq!(ptes.len() as u64, pages);
        assert!(ptes.iter().all(|p| p.valid && p.used && p.pid == s.pid));
        assert_eq!(
            out.last(),
            Some(&Descriptor::KvConfig {
                pid: s.pid,
                base: s.layout.base,
                buckets: s.layout.buckets,
                records: s.layout.records as u32,
                status: Status::Ok as u8,
            })
        );
        // Every mapped frame was cleared; the superblock holds the magic and the per-RAS
        // record limit (the default: half the records).
        let ml = *sp.layout();
        for p in &ptes {
            let pa = ml.phys_addr(p.pfn, 0) as usize;
            let frame = &mut mem[pa..pa + 4096];
            if p.vpn == ml.vpn(s.layout.base) {
                let o = ml.page_offset(s.layout.base) as usize;
                assert_eq!(frame[o..o + 8], STORE_MAGIC.to_le_bytes());
                let q = o + SB_RAS_RECORDS as usize;
                let limit = clio_proto::quota::default_ras_kv_records(s.layout.records);
                assert_eq!(frame[q..q + 8], limit.to_le_bytes());
                frame[q..q + 8].fill(0);
                assert!(frame[o + 8..].iter().all(|&b| b == 0));
            } else {
                assert!(frame.iter().all(|&b| b == 0), "frame of vpn {}", p.vpn);
            }
        }
        // The membership outlives any lease.
        sp.expire_leases(t0 + Duration::from_secs(3600));
        assert_eq!(sp.registry().members(s.pid), 1);
    }

    #[test]
    fn a_store_that_does_not_fit_is_announced_as_failed_and_leaves_nothing() {
        let (mut sp, mut mem) = node(4 << 20);
        let e = sp
            .start_kv_store(64 << 20, &mut mem, Instant::now())
            .unwrap_err();
        assert_eq!(e, AllocError::OutOfMemory);
        assert_eq!(sp.kv_store(), None);
        assert!(sp.registry().is_empty(), "the RAS is torn down");
        let out: Vec<Descriptor> = sp.outbox.drain(..).collect();
        assert!(out.contains(&Descriptor::KvConfig {
            pid: 0,
            base: 0,
            buckets: 0,
            records: 0,
            status: Status::OutOfMemory as u8,
        }));
        // A later allocation gets the whole memory: nothing stayed promised.
        let pid = sp.register(1).unwrap();
        assert!(sp.alloc(pid, 2 << 20, PERM_READ).is_ok());
    }

    /// The attacker: a compute node that registers (any nonce) never gets the store's RAS,
    /// key or membership.
    #[test]
    fn a_compute_node_cannot_join_the_store_by_registering() {
        let (mut sp, mut mem) = node(64 << 20);
        let now = Instant::now();
        let s = sp.start_kv_store(1 << 20, &mut mem, now).unwrap();
        let store_key = sp.registry().key(s.pid);
        for nonce in [0, 1, u64::MAX, u64::from_le_bytes(*b"CLIOKV01")] {
            let (pid, key, _) = sp.register_at(nonce, now).unwrap();
            assert_ne!(pid, s.pid);
            assert_ne!(Some(key), store_key);
        }
        // Nor by sending Register through the ring with a header naming the store's pid.
        let h = Header {
            arg0: 99,
            ..Header::request(Opcode::Register, s.pid, 0, 0)
        };
        sp.handle_at(
            Descriptor::Request {
                route: Default::default(),
                header: h,
            },
            now,
            &mut mem,
        );
        match sp.outbox.pop_back() {
            Some(Descriptor::Reply { header, .. }) => assert_ne!(header.pid, s.pid),
            other => panic!("no reply: {other:?}"),
        }
        assert_eq!(sp.registry().members(s.pid), 1);
    }
}
