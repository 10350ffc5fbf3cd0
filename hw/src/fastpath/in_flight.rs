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
//! is a register kept per slot: set when a burst takes the slot, cleared when the slot's burst
//! retires, unless more than the slots are in flight (then the oldest slot already holds a
//! younger burst, and every slot stays live). Each bit's next value is one LUT of registers and
//! the two handshakes, so the AXI handshakes in front (`add`, `retire`) add one level, not an
//! adder and a rotation.

use rust_hdl::prelude::*;

/// Slots of a table: bursts in flight one direction can track before `clash` holds.
pub const IN_FLIGHT_SLOTS: usize = 8;

/// Bits of the 64-byte line number a slot keeps (the circle the overlap test works on).
pub const IN_FLIGHT_LINE_BITS: usize = 8;

// The ring's one-hot head and tail and the live vector are 8 bits (one per slot), the overflow
// compares are against 8 and 10, and the arc test needs a burst no longer than the circle
// (AxLEN is 8 bits: at most 256 lines, the whole circle).
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
    /// The slot the next burst takes and the oldest slot in flight (both one-hot).
    head: DFF<Bits<8>>,
    tail: DFF<Bits<8>>,
    /// Bursts in flight (never 128: the fast path's queues are far smaller).
    count: DFF<Bits<8>>,
    /// The slots holding a burst in flight; more in flight than slots (`count > 8`).
    live: DFF<Bits<8>>,
    over: DFF<Bit>,
    /// The slot cleared this cycle (the oldest, on a retire, unless over), one-hot.
    clear: Signal<Local, Bits<8>>,
    /// The count's compares the next `over` chooses from: `count >= 8`, `count >= 10`.
    ge8: Signal<Local, Bit>,
    ge10: Signal<Local, Bit>,
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
        if self.retire.val() {
            self.tail.d.next = (self.tail.q.val() << 1) | (self.tail.q.val() >> 7);
        }
        self.count.d.next = self.count.q.val();
        if self.add.val() & !self.retire.val() {
            self.count.d.next = self.count.q.val() + 1;
        }
        if !self.add.val() & self.retire.val() {
            self.count.d.next = self.count.q.val() - 1;
        }
        // Over next cycle: `count + add - retire > 8`, chosen from compares of the register.
        self.ge8.next = self.count.q.val() >= 8;
        self.ge10.next = self.count.q.val() >= 10;
        self.over.d.next = self.over.q.val();
        if self.add.val() & !self.retire.val() {
            self.over.d.next = self.ge8.val();
        }
        if !self.add.val() & self.retire.val() {
            self.over.d.next = self.ge10.val();
        }
        // Live slots: the retired burst's slot is cleared (unless over: the ring wrapped and
        // that slot holds a younger burst), the added burst's set; a slot both retired and
        // taken in one cycle (a full ring) holds the new burst.
        self.clear.next = 0.into();
        if self.retire.val() & !self.over.q.val() {
            self.clear.next = self.tail.q.val();
        }
        self.live.d.next = self.live.q.val() & !self.clear.val();
        if self.add.val() {
            self.live.d.next = (self.live.q.val() & !self.clear.val()) | self.head.q.val();
        }
        if self.reset.val() {
            self.head.d.next = 1.into();
            self.tail.d.next = 1.into();
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
