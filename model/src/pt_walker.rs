//! Hash page-table walker: on a TLB miss, read the ONE bucket that can hold `(pid, vpn)` in a
//! single burst and compare tags.

use super::dram::Dram;
use clio_proto::consts::{BUCKET_BYTES, PTE_BYTES};
use clio_proto::layout::MemoryLayout;
use clio_proto::pt_hash::bucket_index;
use clio_proto::pte::{bucket_lookup, BucketLookup, Pte};

/// Outcome of a walk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Walk {
    /// The slot holding the PTE.
    Found {
        /// Bucket index.
        bucket: u64,
        /// Slot in the bucket.
        slot: usize,
        /// The entry.
        pte: Pte,
    },
    /// No entry: the address is not allocated to this process.
    Missing,
}

/// The walker and its counter.
#[derive(Debug, Default, Clone)]
pub struct PtWalker {
    /// Buckets read (one per TLB miss).
    pub bucket_reads: u64,
}

impl PtWalker {
    /// Walk for `(pid, vpn)`: exactly one bucket read.
    pub fn walk(&mut self, dram: &mut Dram, layout: &MemoryLayout, pid: u16, vpn: u64) -> Walk {
        let bucket = bucket_index(pid, vpn, layout.bucket_bits);
        let mut img = [0u8; BUCKET_BYTES];
        self.bucket_reads += 1;
        if !dram.read(layout.bucket_addr(bucket), &mut img) {
            return Walk::Missing;
        }
        match bucket_lookup(&img, pid, vpn) {
            BucketLookup::Found(slot, pte) => Walk::Found { bucket, slot, pte },
            BucketLookup::Missing => Walk::Missing,
        }
    }

    /// Write one slot back (page-fault write-back, or a slow-path PTE write).
    pub fn write_slot(
        dram: &mut Dram,
        layout: &MemoryLayout,
        bucket: u64,
        slot: usize,
        pte: &Pte,
    ) -> bool {
        slot < clio_proto::consts::BUCKET_SLOTS
            && bucket < layout.bucket_count()
            && dram.write(
                layout.bucket_addr(bucket) + (slot * PTE_BYTES) as u64,
                &pte.to_bytes(),
            )
    }
}
