//! The bursts in flight in one direction of the DRAM port, and whether a burst asked about may
//! overlap one of them: the per-address half of the ordering rules ([`super::ordering`]).
//!
//! One table holds the write bursts without their B response (added at the AW handshake,
//! retired at each B), another the read bursts with R beats still to come (added at the AR
//! handshake, retired at each last R beat). AXI answers each direction in order, so a table
//! is a ring of [`IN_FLIGHT_SLOTS`] slots with a count: the oldest burst is the one retired.
//!
//! A slot keeps the burst's first and last 64-byte lines modulo 2^[`IN_FLIGHT_LINE_BITS`]
//! (address bits 13..6): a circle of 256 lines, 16 KiB. No burst crosses a 4 KiB boundary (AXI4
//! forbids it, A3.4.1; the shared DRAM model counts any that does as a violation), and 4 KiB
//! blocks are 64-line arcs that tile the circle, so a burst's lines never wrap past 255: its
//! first line is at most its last, and arcs of the circle are plain intervals. The question is
//! an interval too: the burst's first line `q` and an upper bound `q_end` of its last, inside
//! the burst's own 4 KiB block (`q <= q_end <= q | 63`: the caller may round the end up to the
//! block's, never past it). Two bursts that overlap as byte ranges share a line, so their
//! intervals overlap on the circle: a slot `[s, e]` clashes with the question when
//! `q <= e && s <= q_end`, two compares of registers against the question, no subtraction.
//! The test never misses a real overlap; it can report one that is not (bursts 16 KiB apart,
//! modulo, or a question whose end was rounded up), which only makes a request wait.
//!
//! A slot's last line is its block's (`line | 63`) in the cycle after the burst takes it, and
//! the burst's own (`line + AxLEN`, summed from registers of the add) from then on: the sum is
//! not behind the AXI handshake and the burst's length, which come late in the cycle.
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
// compares are against 8 and 10, and the circle holds whole 4 KiB blocks (64 lines each), so a
// burst that crosses no 4 KiB boundary never wraps it.
const _: () = assert!(IN_FLIGHT_SLOTS == 8);
const _: () = assert!(IN_FLIGHT_LINE_BITS == 8 && (1 << IN_FLIGHT_LINE_BITS) % 64 == 0);

/// One direction's bursts in flight.
#[derive(LogicBlock)]
pub struct InFlight {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: nothing in flight.
    pub reset: Signal<In, Bit>,
    /// A burst is addressed this cycle (its AR / AW handshake).
    pub add: Signal<In, Bit>,
    /// Its first line (address bits 13..6).
    pub add_line: Signal<In, Bits<8>>,
    /// Its length less one (AxLEN; the burst crosses no 4 KiB boundary).
    pub add_len: Signal<In, Bits<8>>,
    /// The oldest burst completes this cycle (its B response, or its last R beat, taken).
    pub retire: Signal<In, Bit>,
    /// The burst asked about: its first line (address bits 13..6).
    pub ask_line: Signal<In, Bits<8>>,
    /// An upper bound of its last line in its own 4 KiB block (`ask_line <= ask_end <=
    /// ask_line | 63`).
    pub ask_end: Signal<In, Bits<8>>,
    /// The burst asked about may overlap one in flight, or more are in flight than the slots
    /// hold (combinational, from registers and `ask_*`).
    pub clash: Signal<Out, Bit>,
    /// The slots' first and last lines.
    line: [DFF<Bits<8>>; 8],
    end: [DFF<Bits<8>>; 8],
    /// The burst added last cycle: its slot (one-hot, zero if none), first line and length,
    /// from which its slot's end is made exact this cycle.
    last_slot: DFF<Bits<8>>,
    last_line: DFF<Bits<8>>,
    last_len: DFF<Bits<8>>,
    /// Its last line (`last_line + last_len`: no carry past bit 5, as the burst stays in its
    /// 4 KiB block).
    last_end: Signal<Local, Bits<8>>,
    /// The end of a 4 KiB block (`line | 63` is the last line of `line`'s block).
    block: Constant<Bits<8>>,
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
    /// Per slot: whether it overlaps the question.
    hit: [Signal<Local, Bit>; 8],
    any_hit: Signal<Local, Bit>,
}

impl Default for InFlight {
    fn default() -> Self {
        InFlight {
            clock: Default::default(),
            reset: Default::default(),
            add: Default::default(),
            add_line: Default::default(),
            add_len: Default::default(),
            retire: Default::default(),
            ask_line: Default::default(),
            ask_end: Default::default(),
            clash: Default::default(),
            line: Default::default(),
            end: Default::default(),
            last_slot: Default::default(),
            last_line: Default::default(),
            last_len: Default::default(),
            last_end: Default::default(),
            block: Constant::new(crate::fastpath::order_ask::BLOCK_LINE_MASK.to_bits()),
            head: Default::default(),
            tail: Default::default(),
            count: Default::default(),
            live: Default::default(),
            over: Default::default(),
            clear: Default::default(),
            ge8: Default::default(),
            ge10: Default::default(),
            hit: Default::default(),
            any_hit: Default::default(),
        }
    }
}

impl Logic for InFlight {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, head, tail, count, live, over, last_slot, last_line, last_len);
        // A slot's end is its block's last line when the burst takes the slot (no adder behind
        // the AXI handshake and the burst's length), and the burst's own last line from the next
        // cycle on (the sum of registers). Both bound the burst, so the test is safe in either.
        self.last_slot.d.next = 0.into();
        if self.add.val() {
            self.last_slot.d.next = self.head.q.val();
        }
        self.last_line.d.next = self.add_line.val();
        self.last_len.d.next = self.add_len.val();
        self.last_end.next = self.last_line.q.val() + self.last_len.q.val();
        for i in 0..8 {
            self.line[i].clock.next = self.clock.val();
            self.end[i].clock.next = self.clock.val();
            self.line[i].d.next = self.line[i].q.val();
            self.end[i].d.next = self.end[i].q.val();
            if self.last_slot.q.val().get_bit(i) {
                self.end[i].d.next = self.last_end.val();
            }
            if self.add.val() & self.head.q.val().get_bit(i) {
                self.line[i].d.next = self.add_line.val();
                self.end[i].d.next = self.add_line.val() | self.block.val();
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
            self.last_slot.d.next = 0.into();
        }
        // The question: an interval test per live slot.
        self.any_hit.next = false;
        for i in 0..8 {
            self.hit[i].next = self.live.q.val().get_bit(i)
                & (self.ask_line.val() <= self.end[i].q.val())
                & (self.line[i].q.val() <= self.ask_end.val());
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
