//! The RX ring's per-source share (`clio_model::rx_share`, `clio_proto::ring::rx_share_admits`):
//! a request for the slow path is pushed only while its source holds fewer RX descriptors than
//! are free past the notices' reserve; else Dispatch answers RETRY_LATER. One source flooding
//! the slow path holds at most half the ring; another source that holds nothing finds room.
//!
//! * Every descriptor pushed (`push`: the RX port's handshake) leaves its source in `tags`, a
//!   LUT RAM indexed by the push count (`wr`): the executor's frame's bucket (`source`, from
//!   the route check's per-slot bucket) for a REQUEST (`counted`), nobody for a PAGE_MAPPED
//!   notice. The ring is a FIFO and `taken` is its consumer's count (the RX tail), so the
//!   descriptors still in it are those from `rd` to `wr`: one a cycle, while `rd` is behind
//!   `taken`, the oldest is read from `tags` and its source's count goes down (`held`). At
//!   most `MAX_RING_ENTRIES` descriptors are in the ring, so `tags` never overwrites one still
//!   counted.
//! * Each source's verdict (`okb`) is registered from its count and the ring's room, and the
//!   executor's frame's verdict (`ok`) is registered from those: a push is in `ok` three
//!   cycles later, and the executor reads `ok` in its second Dispatch cycle (a slow-path
//!   request waits one cycle there: `Dispatch::room_wait`), never sooner than three cycles
//!   after its previous push.

use crate::async_ram::AsyncRam;
use crate::spec::Spec;
use clio_proto::ring::{MAX_RING_ENTRIES, RX_RESERVED_FOR_NOTICES, RX_SOURCE_BUCKETS};
use rust_hdl::prelude::*;

// Sixteen buckets of 4 bits; a 256-deep record of the ring's descriptors; counts of up to
// 256 in 9 bits.
const _: () = assert!(RX_SOURCE_BUCKETS == 16 && MAX_RING_ENTRIES == 256);

/// The per-source share.
#[derive(LogicBlock, Default)]
pub struct RxShare {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: nothing pushed, nothing taken (as the ring's head and tail).
    pub reset: Signal<In, Bit>,
    /// A descriptor enters the RX ring this cycle (`sp_rx_valid & sp_rx_ready`).
    pub push: Signal<In, Bit>,
    /// It is the executor's REQUEST (of source `source`), not a notice.
    pub counted: Signal<In, Bit>,
    /// The source bucket of the executor's frame (`RouteCheck::source`).
    pub source: Signal<In, Bits<4>>,
    /// Descriptors the slow path has taken (the RX tail, mod 2^16).
    pub taken: Signal<In, Bits<16>>,
    /// Free RX slots (`sp_rx_room`).
    pub room: Signal<In, Bits<16>>,
    /// The executor's frame's source may push (its verdict of two cycles before).
    pub ok: Signal<Out, Bit>,
    tags: AsyncRam<Bits<5>, 8>,
    wr: DFF<Bits<16>>,
    rd: DFF<Bits<16>>,
    held: [DFF<Bits<9>>; 16],
    okb: [DFF<Bit>; 16],
    ok_q: DFF<Bit>,
    /// A REQUEST is pushed: its source holds one more.
    count_push: Signal<Local, Bit>,
    /// A descriptor is retired this cycle, and its tag (bit 4: counted, bits 0..4: source).
    retire: Signal<Local, Bit>,
    tag: Signal<Local, Bits<5>>,
    /// The room past the notices' reserve, and whether there is any.
    room_past: Signal<Local, Bits<9>>,
    room_any: Signal<Local, Bit>,
    /// The executor's frame's source's verdict.
    ok_sel: Signal<Local, Bit>,
    rx_reserved: Spec<16, { RX_RESERVED_FOR_NOTICES as u64 }>,
    /// A tag's "counted" bit.
    c_counted: Spec<5, 16>,
}

impl Logic for RxShare {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, wr, rd, ok_q);
        self.tags.clock.next = self.clock.val();
        for b in 0..16 {
            self.held[b].clock.next = self.clock.val();
            self.held[b].d.next = self.held[b].q.val();
            self.okb[b].clock.next = self.clock.val();
        }
        // The push's tag.
        self.tags.write_enable.next = self.push.val();
        self.tags.write_address.next = self.wr.q.val().get_bits::<8>(0);
        self.count_push.next = self.push.val() & self.counted.val();
        self.tags.write_data.next = bit_cast::<5, 4>(self.source.val());
        if self.count_push.val() {
            self.tags.write_data.next = bit_cast::<5, 4>(self.source.val()) | self.c_counted.val();
        }
        if self.push.val() {
            self.wr.d.next = self.wr.q.val() + 1;
        }
        // The oldest descriptor the slow path took and the share still counts.
        self.tags.read_address.next = self.rd.q.val().get_bits::<8>(0);
        self.tag.next = self.tags.read_data.val();
        self.retire.next = self.rd.q.val() != self.taken.val();
        if self.retire.val() {
            self.rd.d.next = self.rd.q.val() + 1;
        }
        for b in 0..16 {
            if self.count_push.val() & (self.source.val() == b.to_bits::<4>()) {
                self.held[b].d.next = self.held[b].q.val() + 1;
                if self.retire.val()
                    & self.tag.val().get_bit(4)
                    & (self.tag.val().get_bits::<4>(0) == b.to_bits::<4>())
                {
                    self.held[b].d.next = self.held[b].q.val();
                }
            } else if self.retire.val()
                & self.tag.val().get_bit(4)
                & (self.tag.val().get_bits::<4>(0) == b.to_bits::<4>())
            {
                self.held[b].d.next = self.held[b].q.val() - 1;
            }
        }
        // Each source's verdict: it holds fewer than are free past the reserve.
        self.room_any.next = self.room.val() > self.rx_reserved.val();
        // (The room is at most `MAX_RING_ENTRIES`: 9 bits.)
        self.room_past.next = bit_cast::<9, 16>(self.room.val() - self.rx_reserved.val());
        for b in 0..16 {
            self.okb[b].d.next =
                self.room_any.val() & (self.held[b].q.val() < self.room_past.val());
        }
        self.ok_sel.next = false;
        for b in 0..16 {
            if self.source.val() == b.to_bits::<4>() {
                self.ok_sel.next = self.okb[b].q.val();
            }
        }
        self.ok_q.d.next = self.ok_sel.val();
        self.ok.next = self.ok_q.q.val();
        if self.reset.val() {
            self.wr.d.next = 0.into();
            self.rd.d.next = 0.into();
            self.ok_q.d.next = false;
            for b in 0..16 {
                self.held[b].d.next = 0.into();
                self.okb[b].d.next = false;
            }
        }
    }
}

crate::impl_clocked!(RxShare);

#[cfg(test)]
mod tests;
