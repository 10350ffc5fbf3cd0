//! Page-fault unit: the asynchronous free-page buffer.
//!
//! The slow path keeps the FIFO full ahead of demand; a first touch pops a frame and makes
//! the PTE valid at once. An empty FIFO is answered with retry-later, never a stall.

use clio_proto::consts::FREE_PAGE_FIFO_DEPTH;
use std::collections::VecDeque;

/// The async buffer and the fault counters.
#[derive(Debug, Clone, Default)]
pub struct PageFaultUnit {
    fifo: VecDeque<u64>,
    /// Faults served from the buffer.
    pub faults: u64,
    /// Faults refused because the buffer was empty.
    pub empty: u64,
}

impl PageFaultUnit {
    /// Accept a frame from the slow path; false if the FIFO is full (a slow-path bug: it must
    /// never push more than the depth).
    pub fn push(&mut self, pfn: u64) -> bool {
        if self.fifo.len() >= FREE_PAGE_FIFO_DEPTH {
            return false;
        }
        self.fifo.push_back(pfn);
        true
    }

    /// Take a frame for a fault.
    pub fn pop(&mut self) -> Option<u64> {
        let p = self.fifo.pop_front();
        match p {
            Some(_) => self.faults += 1,
            None => self.empty += 1,
        }
        p
    }

    /// Frames waiting.
    pub fn level(&self) -> usize {
        self.fifo.len()
    }
}
