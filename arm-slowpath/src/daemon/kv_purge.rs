//! Clio-KV's records die with their RAS (issue 40 d): the records of a torn-down RAS are
//! freed before its PID is handed out again, so its next owner finds none of them and the
//! store does not fill with the records of tenants that left.
//!
//! Records are keyed by `(owner pid, key)` in the store's own RAS (`proto::kv`), and the fast
//! path's unit walks and changes the chains on its own. The slow path frees a departed
//! tenant's records while the unit is paused, so the two never change a chain at once:
//!
//! 1. Teardown withdraws the RAS (its key is removed first: no request of it passes the key
//!    check any more) and holds its PID back (`pending`).
//! 2. A pass starts once the outbox is empty and `Limits::kv_purge_interval` has passed since
//!    the last: `KV_CONFIG` with status RETRY_LATER (the store paused; the unit answers every
//!    KV request that, touching nothing) goes out, and the pass remembers its place in the TX
//!    ring. The fast path takes descriptors only between requests, so once it has taken the
//!    pause no KV request is half way through the store.
//! 3. When the fast path has taken the pause (the TX ring's consumer is past it), the slow
//!    path walks every chain and unlinks the records of the pass's RASes onto the free list
//!    (`proto::kv`'s layout, as the unit's delete does: link, free-list head, live count;
//!    the RASes' counts are zeroed),
//!    then `KV_CONFIG` with status OK resumes the store and the PIDs go back to the free list.
//!
//! In-process (the model's default in tests, the cosimulation) the pass ends within the
//! service call that tore the RAS down. A pass pauses KV requests for the time of one walk of
//! the store; the interval bounds how often.

use super::SlowPath;
use crate::frame_memory::FrameMemory;
use clio_proto::kv::{RecordHeader, StoreLayout, RECORD_HEADER_BYTES, SB_FREE_HEAD, SB_LIVE};
use clio_proto::ring::Descriptor;
use clio_proto::Status;
use std::time::Instant;

/// The purge's state.
#[derive(Debug, Default)]
pub(crate) struct KvPurge {
    /// Torn-down RASes whose records may still be in the store (their PIDs held back).
    pending: Vec<u16>,
    /// A pass under way: its RASes, and how many descriptors had been pushed to the TX ring
    /// once its pause was (the fast path has taken the pause when it has consumed that many).
    pass: Option<(Vec<u16>, u64)>,
    /// When the last pass ended.
    last_end: Option<Instant>,
}

impl KvPurge {
    /// Torn-down RASes waiting for a pass or in one.
    pub(crate) fn held(&self) -> usize {
        self.pending.len() + self.pass.as_ref().map_or(0, |p| p.0.len())
    }
}

/// A store word or header through the store's translation (the shadow page table's frames).
struct StoreMemory<'a> {
    sp: &'a SlowPath,
    mem: &'a mut dyn FrameMemory,
    pid: u16,
}

impl StoreMemory<'_> {
    fn pa(&self, va: u64, n: u64) -> Option<u64> {
        let l = self.sp.layout();
        let vpn = l.vpn(va);
        // Store words and headers never cross a page (8-byte aligned words, 16-byte aligned
        // headers of 16 bytes).
        if l.vpn(va + n - 1) != vpn {
            return None;
        }
        let pfn = self.sp.shadow.get(self.pid, vpn)?.pfn?;
        Some(l.phys_addr(pfn, 0) + l.page_offset(va))
    }
    fn read(&self, va: u64, buf: &mut [u8]) -> Option<()> {
        let pa = self.pa(va, buf.len() as u64)?;
        self.mem.read(pa, buf).then_some(())
    }
    fn write(&mut self, va: u64, data: &[u8]) -> Option<()> {
        let pa = self.pa(va, data.len() as u64)?;
        self.mem.write(pa, data).then_some(())
    }
    fn word(&self, va: u64) -> Option<u64> {
        let mut b = [0u8; 8];
        self.read(va, &mut b)?;
        Some(u64::from_le_bytes(b))
    }
    fn set_word(&mut self, va: u64, v: u64) -> Option<()> {
        self.write(va, &v.to_le_bytes())
    }
}

impl SlowPath {
    /// Hold a torn-down RAS's PID until its Clio-KV records are freed (true), or say there is
    /// no store to purge (false: retire the PID at once).
    pub(crate) fn hold_for_kv_purge(&mut self, pid: u16) -> bool {
        match self.kv_store {
            Some(s) if s.pid != pid => {
                self.kv_purge.pending.push(pid);
                true
            }
            _ => false,
        }
    }

    /// Torn-down RASes whose PIDs wait for a pass over the store.
    pub fn kv_purge_held(&self) -> usize {
        self.kv_purge.held()
    }

    /// A pass has sent its pause and waits for the fast path to take it (poll again soon).
    pub fn kv_purge_waits(&self) -> bool {
        self.kv_purge.pass.is_some()
    }

    /// One step of the purge (module docs): start a pass, or finish the one whose pause the
    /// fast path has taken. `pushed` is how many descriptors went to the TX ring so far and
    /// `consumed` how many the fast path has taken. True when it did something.
    pub(crate) fn kv_purge_step(
        &mut self,
        pushed: u64,
        consumed: u64,
        mem: &mut dyn FrameMemory,
        now: Instant,
    ) -> bool {
        let Some(store) = self.kv_store else {
            return false;
        };
        let config = |status: Status| Descriptor::KvConfig {
            pid: store.pid,
            base: store.layout.base,
            buckets: store.layout.buckets,
            records: store.layout.records as u32,
            status: status as u8,
        };
        if let Some((pids, at)) = self.kv_purge.pass.take() {
            if consumed < at {
                self.kv_purge.pass = Some((pids, at));
                return false;
            }
            let freed = self.free_records_of(&pids, store.pid, &store.layout, mem);
            self.stats.kv_records_purged += freed.unwrap_or(0);
            if freed.is_none() {
                self.stats.kv_purge_failures += 1;
            }
            self.outbox.push_back(config(Status::Ok));
            for pid in pids {
                self.registry.release_pid(pid);
            }
            self.kv_purge.last_end = Some(now);
            self.stats.kv_purges += 1;
            return true;
        }
        let due = self
            .kv_purge
            .last_end
            .is_none_or(|t| now.duration_since(t) >= self.limits.kv_purge_interval);
        if self.kv_purge.pending.is_empty() || !self.outbox.is_empty() || !due {
            return false;
        }
        // The pause is the next descriptor out (the outbox is empty), so the fast path has
        // taken it once it has taken `pushed + 1`.
        self.outbox.push_back(config(Status::RetryLater));
        let pids = std::mem::take(&mut self.kv_purge.pending);
        self.kv_purge.pass = Some((pids, pushed + 1));
        true
    }

    /// Unlink every record owned by one of `pids` from its chain onto the free list; the
    /// records freed, or `None` when the store's memory could not be read or written (a
    /// corrupt link ends its chain's walk, as the unit's walk ends with an error).
    fn free_records_of(
        &mut self,
        pids: &[u16],
        store_pid: u16,
        l: &StoreLayout,
        mem: &mut dyn FrameMemory,
    ) -> Option<u64> {
        let mut m = StoreMemory {
            sp: self,
            mem,
            pid: store_pid,
        };
        let mut freed = 0u64;
        for bucket in 0..l.buckets {
            let mut link = l.head(bucket);
            // A chain is at most `records` long; a longer walk means a cycle.
            for _ in 0..=l.records {
                let at = m.word(link)?;
                if at == 0 || !l.is_record(at) {
                    break;
                }
                let mut b = [0u8; RECORD_HEADER_BYTES];
                m.read(at, &mut b)?;
                let Some(h) = RecordHeader::decode(&b) else {
                    break;
                };
                if !pids.contains(&h.owner) {
                    link = at; // `next` is the record's first word
                    continue;
                }
                // Unlink, then free: the record's header becomes a free-list entry.
                m.set_word(link, h.next)?;
                let head = m.word(l.base + SB_FREE_HEAD)?;
                let free = RecordHeader {
                    next: head,
                    owner: 0,
                    key_len: 0,
                    value_len: 0,
                };
                m.write(at, &free.encode())?;
                m.set_word(l.base + SB_FREE_HEAD, at)?;
                let live = m.word(l.base + SB_LIVE)?;
                m.set_word(l.base + SB_LIVE, live.saturating_sub(1))?;
                freed += 1;
            }
        }
        // Every record of theirs is gone: their counts start again from zero for the next
        // owners of their PIDs.
        for &pid in pids {
            m.set_word(l.count(pid), 0)?;
        }
        Some(freed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::daemon::SlowPathConfig;
    use crate::limits::Limits;
    use crate::ras::KeySource;
    use clio_proto::kv::SB_HIGH_WATER;
    use clio_proto::layout::MemoryLayout;
    use std::time::Duration;

    const INTERVAL: Duration = Duration::from_millis(100);

    /// Put a record of `owner` at slot `i`, first in bucket 0's chain (by hand, as a put
    /// leaves it).
    fn put(sp: &SlowPath, mem: &mut Vec<u8>, owner: u16, i: u64) {
        let s = sp.kv_store.unwrap();
        let l = s.layout;
        let mut m = StoreMemory {
            sp,
            mem,
            pid: s.pid,
        };
        let head = m.word(l.head(0)).unwrap();
        let h = RecordHeader {
            next: head,
            owner,
            key_len: 1,
            value_len: 0,
        };
        m.write(l.record(i), &h.encode()).unwrap();
        m.set_word(l.head(0), l.record(i)).unwrap();
        let live = m.word(l.base + SB_LIVE).unwrap();
        m.set_word(l.base + SB_LIVE, live + 1).unwrap();
        let count = m.word(l.count(owner)).unwrap();
        m.set_word(l.count(owner), count + 1).unwrap();
        m.set_word(l.base + SB_HIGH_WATER, i + 1).unwrap();
    }

    /// Bucket 0's chain: the owners, head first.
    fn chain(sp: &SlowPath, mem: &mut Vec<u8>) -> Vec<u16> {
        let s = sp.kv_store.unwrap();
        let m = StoreMemory {
            sp,
            mem,
            pid: s.pid,
        };
        let mut v = Vec::new();
        let mut at = m.word(s.layout.head(0)).unwrap();
        while at != 0 {
            let mut b = [0u8; RECORD_HEADER_BYTES];
            m.read(at, &mut b).unwrap();
            let h = RecordHeader::decode(&b).unwrap();
            v.push(h.owner);
            at = h.next;
        }
        v
    }

    /// A pass pauses the store, frees nothing until the fast path has taken the pause, then
    /// unlinks only the departed RAS's records (onto the free list, the live count lowered),
    /// resumes the store and gives the pid back; the next pass waits for the interval.
    #[test]
    fn a_pass_waits_for_its_pause_and_frees_only_the_departed() {
        let layout = MemoryLayout::new(64 << 20, 12).unwrap();
        let mut sp = SlowPath::with_config(
            layout,
            SlowPathConfig {
                keys: KeySource::seeded(3),
                limits: Limits {
                    pids: 4,
                    kv_purge_interval: INTERVAL,
                    ..Limits::default()
                },
                ..SlowPathConfig::default()
            },
        );
        let mut mem = vec![0u8; 64 << 20];
        let t0 = Instant::now();
        sp.start_kv_store(1 << 20, &mut mem, t0).unwrap();
        let (a, _, ca) = sp.register_at(1, t0).unwrap();
        let (b, _, cb) = sp.register_at(2, t0).unwrap();
        for (i, owner) in [a, b, a].into_iter().enumerate() {
            put(&sp, &mut mem, owner, i as u64);
        }
        assert_eq!(chain(&sp, &mut mem), [a, b, a]);
        sp.unregister(a, ca, false).unwrap();
        assert_eq!(sp.kv_purge_held(), 1);
        sp.outbox.clear();
        // The pass starts: the pause goes out; nothing is freed before the fast path took it.
        assert!(sp.kv_purge_step(100, 100, &mut mem, t0));
        let pause = sp.outbox.pop_front().unwrap();
        assert!(
            matches!(pause, Descriptor::KvConfig { status, .. } if status == Status::RetryLater as u8)
        );
        assert!(
            !sp.kv_purge_step(101, 100, &mut mem, t0),
            "the pause is not taken yet"
        );
        assert!(sp.kv_purge_waits());
        assert_eq!(chain(&sp, &mut mem), [a, b, a]);
        // Taken: A's records go, B's stays; the store resumes; A's pid is free again.
        assert!(sp.kv_purge_step(101, 101, &mut mem, t0));
        assert_eq!(chain(&sp, &mut mem), [b]);
        let s = sp.kv_store.unwrap();
        let m = StoreMemory {
            sp: &sp,
            mem: &mut mem,
            pid: s.pid,
        };
        assert_eq!(m.word(s.layout.base + SB_LIVE), Some(1));
        // A's count is zero for the next owner of its pid; B's is untouched.
        assert_eq!(m.word(s.layout.count(a)), Some(0));
        assert_eq!(m.word(s.layout.count(b)), Some(1));
        let free = m.word(s.layout.base + SB_FREE_HEAD).unwrap();
        assert!(free == s.layout.record(0) || free == s.layout.record(2));
        let resume = sp.outbox.pop_front().unwrap();
        assert!(
            matches!(resume, Descriptor::KvConfig { status, .. } if status == Status::Ok as u8)
        );
        assert_eq!(sp.kv_purge_held(), 0);
        assert_eq!(sp.stats().kv_records_purged, 2);
        // B leaves: its pass waits for the interval since the last one.
        sp.unregister(b, cb, false).unwrap();
        sp.outbox.clear();
        assert!(!sp.kv_purge_step(102, 102, &mut mem, t0 + INTERVAL / 2));
        assert!(sp.kv_purge_step(102, 102, &mut mem, t0 + INTERVAL));
        assert!(sp.kv_purge_step(103, 103, &mut mem, t0 + INTERVAL));
        assert!(chain(&sp, &mut mem).is_empty());
        // Both pids come back (FIFO, after the others).
        let pids: Vec<u16> = (0..3)
            .map(|n| sp.register_at(10 + n, t0).unwrap().0)
            .collect();
        assert!(pids.contains(&a) && pids.contains(&b), "{pids:?}");
    }
}

/// The time of one pass over a full default store (a measurement, not a check: `cargo test
/// --release -p clio-slowpath --lib time_a_pass -- --ignored --nocapture`; docs/perf.md).
#[cfg(test)]
mod timing {
    use super::*;
    use crate::daemon::SlowPathConfig;
    use crate::limits::Limits;
    use crate::ras::KeySource;
    use clio_proto::kv::SB_HIGH_WATER;
    use clio_proto::layout::MemoryLayout;

    #[test]
    #[ignore]
    fn time_a_pass_over_a_full_default_store() {
        let layout = MemoryLayout::new(256 << 20, 12).unwrap();
        let mut sp = SlowPath::with_config(
            layout,
            SlowPathConfig {
                keys: KeySource::seeded(3),
                limits: Limits::unlimited(),
                ..SlowPathConfig::default()
            },
        );
        let mut mem = vec![0u8; 256 << 20];
        let t0 = Instant::now();
        let s = sp
            .start_kv_store(clio_proto::kv::DEFAULT_STORE_BYTES, &mut mem, t0)
            .unwrap();
        let l = s.layout;
        let n = l.records - 1;
        {
            let mut m = StoreMemory {
                sp: &sp,
                mem: &mut mem,
                pid: s.pid,
            };
            for i in 0..n {
                let bucket = i % l.buckets;
                let head = m.word(l.head(bucket)).unwrap();
                let h = RecordHeader {
                    next: head,
                    owner: 2 + (i % 50) as u16,
                    key_len: 1,
                    value_len: 0,
                };
                m.write(l.record(i), &h.encode()).unwrap();
                m.set_word(l.head(bucket), l.record(i)).unwrap();
            }
            m.set_word(l.base + SB_LIVE, n).unwrap();
            m.set_word(l.base + SB_HIGH_WATER, n).unwrap();
        }
        let t = Instant::now();
        let freed = sp.free_records_of(&[2, 3], s.pid, &l, &mut mem).unwrap();
        eprintln!(
            "records {n}, buckets {}, freed {freed}, pass {:?}",
            l.buckets,
            t.elapsed()
        );
    }
}
