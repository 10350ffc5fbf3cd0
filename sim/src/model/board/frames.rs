//! The node's DRAM as the slow path sees it ([`clio_slowpath::FrameMemory`]): frames cleared
//! and transaction records applied directly in the model's memory, outside the fast path's
//! traffic counters (on the board the ARM does this over its own port).

use crate::model::dram::Dram;
use clio_slowpath::frame_memory::{clear_range, read_range, write_range};
use clio_slowpath::FrameMemory;

/// A borrow of the DRAM model, handed to the in-process slow path.
pub(crate) struct SlowPathFrames<'a>(pub &'a mut Dram);

impl FrameMemory for SlowPathFrames<'_> {
    fn zero(&mut self, pa: u64, len: u64) -> bool {
        clear_range(self.0.as_mut(), pa, len)
    }
    fn persist(&mut self, pa: u64, len: u64) -> bool {
        self.0.persist(pa, len)
    }
    fn is_persistent(&self) -> bool {
        self.0.is_persistent()
    }
    fn read(&self, pa: u64, buf: &mut [u8]) -> bool {
        read_range(self.0.as_ref(), pa, buf)
    }
    fn write(&mut self, pa: u64, data: &[u8]) -> bool {
        write_range(self.0.as_mut(), pa, data)
    }
}
