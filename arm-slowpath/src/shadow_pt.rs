//! Shadow of the hash page table, kept by the slow path.
//!
//! The fast path owns the real table in DRAM; the slow path mirrors which slots are used so
//! that it can place new PTEs without reading DRAM, and knows which frame each page holds so
//! that `rfree` can return frames.

use clio_proto::consts::BUCKET_SLOTS;
use clio_proto::pt_hash::bucket_index;
use std::collections::HashMap;

/// Where a page's PTE lives and what it maps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShadowEntry {
    /// Bucket index.
    pub bucket: u64,
    /// Slot in the bucket.
    pub slot: u32,
    /// Permissions.
    pub perms: u8,
    /// Frame, once the fast path has faulted the page in.
    pub pfn: Option<u64>,
}

/// The shadow table.
#[derive(Debug, Clone)]
pub struct ShadowPageTable {
    bucket_bits: u32,
    /// Occupancy bitmap per bucket (bit i = slot i used).
    used: Vec<u16>,
    entries: HashMap<(u16, u64), ShadowEntry>,
}

impl ShadowPageTable {
    /// An empty table of `1 << bucket_bits` buckets.
    pub fn new(bucket_bits: u32) -> ShadowPageTable {
        ShadowPageTable {
            bucket_bits,
            used: vec![0; 1usize << bucket_bits],
            entries: HashMap::new(),
        }
    }

    /// Bucket of `(pid, vpn)`.
    pub fn bucket_of(&self, pid: u16, vpn: u64) -> u64 {
        bucket_index(pid, vpn, self.bucket_bits)
    }

    /// Free slots in a bucket.
    pub fn free_slots(&self, bucket: u64) -> u32 {
        BUCKET_SLOTS as u32 - self.used[bucket as usize].count_ones()
    }

    /// Record a new PTE in the lowest free slot of its bucket; `None` if the bucket is full
    /// or the page already has an entry.
    pub fn insert(&mut self, pid: u16, vpn: u64, perms: u8) -> Option<ShadowEntry> {
        if self.entries.contains_key(&(pid, vpn)) {
            return None;
        }
        let bucket = self.bucket_of(pid, vpn);
        let bits = &mut self.used[bucket as usize];
        let slot = (!*bits).trailing_zeros();
        if slot as usize >= BUCKET_SLOTS {
            return None;
        }
        *bits |= 1 << slot;
        let e = ShadowEntry {
            bucket,
            slot,
            perms,
            pfn: None,
        };
        self.entries.insert((pid, vpn), e);
        Some(e)
    }

    /// Record an existing PTE at a known place (recovery from the page table); false if the
    /// slot is taken, out of range, or the page already has an entry.
    pub fn insert_at(&mut self, bucket: u64, slot: u32, pid: u16, vpn: u64, perms: u8) -> bool {
        let Some(bits) = self.used.get_mut(bucket as usize) else {
            return false;
        };
        if slot as usize >= BUCKET_SLOTS
            || *bits & (1 << slot) != 0
            || self.entries.contains_key(&(pid, vpn))
        {
            return false;
        }
        *bits |= 1 << slot;
        self.entries.insert(
            (pid, vpn),
            ShadowEntry {
                bucket,
                slot,
                perms,
                pfn: None,
            },
        );
        true
    }

    /// Remove a page's entry, freeing its slot.
    pub fn remove(&mut self, pid: u16, vpn: u64) -> Option<ShadowEntry> {
        let e = self.entries.remove(&(pid, vpn))?;
        self.used[e.bucket as usize] &= !(1 << e.slot);
        Some(e)
    }

    /// Look a page up.
    pub fn get(&self, pid: u16, vpn: u64) -> Option<&ShadowEntry> {
        self.entries.get(&(pid, vpn))
    }

    /// Record that the fast path mapped `pfn` for a page. Returns false if the page has no
    /// entry (it was freed while the fault notice was in flight).
    pub fn set_mapped(&mut self, pid: u16, vpn: u64, pfn: u64) -> bool {
        match self.entries.get_mut(&(pid, vpn)) {
            Some(e) => {
                e.pfn = Some(pfn);
                true
            }
            None => false,
        }
    }

    /// Number of used slots.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no slot is used.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Number of buckets.
    pub fn bucket_count(&self) -> u64 {
        self.used.len() as u64
    }
}
