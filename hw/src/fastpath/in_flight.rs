//! The bursts in flight in one direction of the DRAM port, and whether a burst asked about may
//! overlap one of them: the per-address half of the ordering rules ([`super::ordering`]).
//!
//! One table holds the write bursts without their B response (added at the AW handshake,
//! retired at each B), another the read bursts with R beats still to come (added at the AR
//! handshake, retired at each last R beat). AXI answers each direction in order, so a table
//! is a ring of [`IN_FLIGHT_SLOTS`] slots with a count: the oldest burst is the one retired.
//!
//! A slot keeps the burst's first 64-byte line modulo 2^[`IN_FLIGHT_LINE_BITS`] (address bits
//! 13..6) and its length less one (AxLEN). Two bursts that overlap as byte ranges also overlap
//! as arcs of that circle of lines, so the test never misses a real overlap; it can report one
//! that is not (bursts 16 KiB apart, modulo), which only makes a request wait. For a burst asked
//! about at line `q` with length `lq` and a slot at line `s` with length `ls`, with
//! `d = q - s` modulo 256: they overlap iff `d <= ls` (the burst starts inside the slot's) or
//! `lq != 0 && d >= 256 - lq` (the slot's starts inside the burst, `s - q = 256 - d <= lq`).
//!
//! More bursts in flight than slots (the ring wrapped over a live slot): `clash` holds until the
//! count is back within the slots, so an untracked burst is never passed. Which slots are live
//! is registered from the next count and oldest slot (a thermometer of the count rotated to the
//! oldest slot), so `clash` is a compare of registers.

use rust_hdl::prelude::*;

/// Slots of a table: bursts in flight one direction can track before `clash` holds.
pub const IN_FLIGHT_SLOTS: usize = 8;

/// Bits of the 64-byte line number a slot keeps (the circle the overlap test works on).
pub const IN_FLIGHT_LINE_BITS: usize = 8;

// The ring's slot index is 3 bits, the thermometer 8 (one per slot), and the arc test needs a
// burst no longer than the circle (AxLEN is 8 bits: at most 256 lines, the whole circle).
const _: () = assert!(IN_FLIGHT_SLOTS == 8);
const _: () = assert!(IN_FLIGHT_LINE_BITS == 8);

/// One direction's bursts in flight.
#[derive(LogicBlock, Default)]
pub struct InFlight {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: nothing in flight.
    pub reset: Signal<In, Bit>,
    /// A burst is addressed this cycle (its AR / AW handshake).
    pub add: Signal<In, Bit>,
    /// Its first line (address bits 13..6).
    pub add_line: Signal<In, Bits<8>>,
    /// Its length less one (AxLEN).
    pub add_len: Signal<In, Bits<8>>,
    /// The oldest burst completes this cycle (its B response, or its last R beat, taken).
    pub retire: Signal<In, Bit>,
    /// The burst asked about: its first line (address bits 13..6).
    pub ask_line: Signal<In, Bits<8>>,
    /// Its length less one.
    pub ask_len: Signal<In, Bits<8>>,
    /// The burst asked about may overlap one in flight, or more are in flight than the slots
    /// hold (combinational, from registers and `ask_*`).
    pub clash: Signal<Out, Bit>,
    /// The slots' lines and lengths.
    line: [DFF<Bits<8>>; 8],
    len: [DFF<Bits<8>>; 8],
    /// The slot the next burst takes (one-hot) and the oldest slot in flight (index).
    head: DFF<Bits<8>>,
    tail: DFF<Bits<3>>,
    /// Bursts in flight (never 128: the fast path's queues are far smaller).
    count: DFF<Bits<8>>,
    /// The slots holding a burst in flight; more in flight than slots.
    live: DFF<Bits<8>>,
    over: DFF<Bit>,
    /// The next count and oldest slot; the thermometer of the next count (one bit per burst in
    /// flight, all eight when more), doubled for the rotation.
    count_next: Signal<Local, Bits<8>>,
    tail_next: Signal<Local, Bits<3>>,
    therm: Signal<Local, Bits<8>>,
    therm2: Signal<Local, Bits<16>>,
    /// Per slot: `ask_line - line`, and whether it overlaps.
    dist: [Signal<Local, Bits<8>>; 8],
    hit: [Signal<Local, Bit>; 8],
    /// `256 - ask_len` (modulo 256) and `ask_len != 0`.
    neg_len: Signal<Local, Bits<8>>,
    ask_some: Signal<Local, Bit>,
    any_hit: Signal<Local, Bit>,
}

impl Logic for InFlight {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, head, tail, count, live, over);
        for i in 0..8 {
            self.line[i].clock.next = self.clock.val();
            self.len[i].clock.next = self.clock.val();
            self.line[i].d.next = self.line[i].q.val();
            self.len[i].d.next = self.len[i].q.val();
            if self.add.val() & self.head.q.val().get_bit(i) {
                self.line[i].d.next = self.add_line.val();
                self.len[i].d.next = self.add_len.val();
            }
        }
        // The ring: the head steps on an add, the tail on a retire.
        if self.add.val() {
            self.head.d.next = (self.head.q.val() << 1) | (self.head.q.val() >> 7);
        }
        self.count_next.next = self.count.q.val();
        if self.add.val() & !self.retire.val() {
            self.count_next.next = self.count.q.val() + 1;
        }
        if !self.add.val() & self.retire.val() {
            self.count_next.next = self.count.q.val() - 1;
        }
        self.tail_next.next = self.tail.q.val();
        if self.retire.val() {
            self.tail_next.next = self.tail.q.val() + 1;
        }
        self.count.d.next = self.count_next.val();
        self.tail.d.next = self.tail_next.val();
        // Live slots: the count's thermometer rotated left to the oldest slot.
        self.therm.next =
            (bit_cast::<8, 1>(1.into()) << self.count_next.val().get_bits::<3>(0)) - 1;
        if self.count_next.val() >= 8 {
            self.therm.next = 0xFF.into();
        }
        self.therm2.next =
            bit_cast::<16, 8>(self.therm.val()) | (bit_cast::<16, 8>(self.therm.val()) << 8);
        self.live.d.next = bit_cast::<8, 16>((self.therm2.val() << self.tail_next.val()) >> 8);
        self.over.d.next = self.count_next.val() > 8;
        if self.reset.val() {
            self.head.d.next = 1.into();
            self.tail.d.next = 0.into();
            self.count.d.next = 0.into();
            self.live.d.next = 0.into();
            self.over.d.next = false;
        }
        // The question: an arc test per live slot.
        self.neg_len.next = !self.ask_len.val() + 1;
        self.ask_some.next = self.ask_len.val() != 0;
        self.any_hit.next = false;
        for i in 0..8 {
            self.dist[i].next = self.ask_line.val() - self.line[i].q.val();
            self.hit[i].next = self.live.q.val().get_bit(i)
                & ((self.dist[i].val() <= self.len[i].q.val())
                    | (self.ask_some.val() & (self.dist[i].val() >= self.neg_len.val())));
            if self.hit[i].val() {
                self.any_hit.next = true;
            }
        }
        self.clash.next = self.over.q.val() | self.any_hit.val();
    }
}

crate::impl_clocked!(InFlight);

#[cfg(test)]
mod tests;
