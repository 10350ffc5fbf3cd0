//! Physical frame allocator.
//!
//! Frames are in one of three states: free (here), reserved (pushed into the fast path's
//! async free-page buffer, not yet used) or mapped (taken by a page fault). The allocator
//! hands out the lowest free frame first so that a sparse DRAM model stays compact.

use std::collections::BTreeSet;

/// The set of free data frames.
#[derive(Debug, Clone)]
pub struct PhysAllocator {
    free: BTreeSet<u64>,
    first: u64,
    count: u64,
}

impl PhysAllocator {
    /// All frames `first..first + count` free.
    pub fn new(first: u64, count: u64) -> PhysAllocator {
        PhysAllocator {
            free: (first..first + count).collect(),
            first,
            count,
        }
    }

    /// Take a free frame.
    pub fn alloc(&mut self) -> Option<u64> {
        self.free.pop_first()
    }

    /// Return a frame. Returns false (and changes nothing) for a frame outside the managed
    /// range or one that is already free: a double free is a bug report, not a corruption.
    pub fn free(&mut self, pfn: u64) -> bool {
        if pfn < self.first || pfn >= self.first + self.count {
            return false;
        }
        self.free.insert(pfn)
    }

    /// Take a specific free frame (recovery: the page table says it is in use); false if it
    /// is not free.
    pub fn take(&mut self, pfn: u64) -> bool {
        self.free.remove(&pfn)
    }

    /// Number of free frames.
    pub fn free_count(&self) -> u64 {
        self.free.len() as u64
    }

    /// Number of managed frames.
    pub fn total(&self) -> u64 {
        self.count
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alloc_free_conserves_frames() {
        let mut a = PhysAllocator::new(10, 4);
        let got: Vec<_> = std::iter::from_fn(|| a.alloc()).collect();
        assert_eq!(got, vec![10, 11, 12, 13]);
        assert!(a.free(12));
        assert!(!a.free(12), "double free is refused");
        assert!(!a.free(9) && !a.free(14), "foreign frames are refused");
        assert_eq!(a.alloc(), Some(12));
        assert_eq!(a.free_count(), 0);
    }
}
