//! Directed corners for the ordering rules between DRAM accesses: writes and reads of the same
//! bytes back to back, so that the replay (bursts of packets into the RTL) puts each read
//! behind a write still in flight over its bytes, and each write behind a read still in flight.
//!
//! The RTL keeps the two orders per address (`hw/src/fastpath/ordering.rs`, `InFlight`); on the
//! strict DRAM (`DramTiming::adversarial`) a read that passes such a write reads the old bytes,
//! and a write that passes such a read changes what the read returns. These corners give
//! `order.read_after_write` and `order.write_after_read` cases at every burst length class.

use super::corners::Corner;
use super::{Outgoing, Stream};
use crate::MemoryNode;
use clio_proto::{Header, Opcode};

/// The corners' names, in the order each case sends them.
pub const ORDER_WRITE: &str = "write of bytes about to be read";
/// See [`ORDER_WRITE`].
pub const ORDER_READ_AFTER_WRITE: &str = "read just after a write of its bytes";
/// See [`ORDER_WRITE`].
pub const ORDER_WRITE_AFTER_READ: &str = "write just after a read of its bytes";

/// Lengths of the cases: within a beat, a whole beat, across beats, a packet's worth.
pub const ORDER_LENGTHS: [usize; 4] = [16, 64, 200, 1000];

/// Writes per case: each but the first right after a read of the same bytes, so that however
/// the replay cuts the stream into bursts, most reads have a write behind them in the same
/// burst.
pub const ORDER_ROUNDS: usize = 3;

/// The pattern written by round `k` of case `i`.
pub fn order_pattern(i: usize, k: usize) -> u8 {
    0x80 + 0x10 * k as u8 + i as u8
}

impl Stream {
    /// For each of [`ORDER_LENGTHS`], at its own place in process 0's region `va`, back to
    /// back: [`ORDER_ROUNDS`] times a write of the round's pattern and a read of the same
    /// bytes (each corner returned: each read must give its round's pattern).
    pub(super) fn order_corners(
        &mut self,
        node: &mut dyn MemoryNode,
        va: u64,
        got: &mut Vec<Corner>,
        out: &mut Vec<Outgoing>,
    ) {
        for (i, &len) in ORDER_LENGTHS.iter().enumerate() {
            // A quarter page in, 1 KiB apart, each start at another offset within its beat.
            let at = va + self.page / 4 + i as u64 * 1024 + (i as u64 * 24) % 64;
            for k in 0..2 * ORDER_ROUNDS {
                let (name, op, fill) = match (k % 2, k) {
                    (0, 0) => (ORDER_WRITE, Opcode::Write, Some(order_pattern(i, 0))),
                    (0, _) => (
                        ORDER_WRITE_AFTER_READ,
                        Opcode::Write,
                        Some(order_pattern(i, k / 2)),
                    ),
                    _ => (ORDER_READ_AFTER_WRITE, Opcode::Read, None),
                };
                let id = self.id();
                let h = Header {
                    pkt_index: 0,
                    pkt_count: 1,
                    total_len: len as u32,
                    ..self.req(0, 0, op, id, at)
                };
                let payload = fill.map(|f| vec![f; len]).unwrap_or_default();
                got.push(self.corner(node, 0, 0, name, h.to_packet(&payload), out));
            }
        }
    }
}
