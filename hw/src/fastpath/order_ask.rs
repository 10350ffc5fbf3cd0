//! The burst the executor asks the ordering rules' tables about ([`InFlight`]): its first 64-byte
//! line and an upper bound of its last, inside its 4 KiB block.
//!
//! The tables test intervals (`q <= e && s <= q_end`, [`InFlight`]), so the question's end must
//! come from registers or from as little logic as its first line: a sum on the late path would
//! make the compare as deep as the subtraction the interval test removed. So:
//! * In `RAddr` / `WAddr` the question is the piece under way: its first line from `pa1` or `pa2`,
//!   its end registered (`end1`, `end2`) from those registers and the access's length the cycle
//!   before, `min(line + ((len >> 5) | 1), line | 63)`: a piece of at most `len` bytes spans at
//!   most `(len >> 5) | 1` lines after its first, and ends in its own 4 KiB block (the pieces are
//!   cut at 4 KiB, [`PieceShift`](super::piece_shift::PieceShift)).
//! * The registered end is `exact` when the registers it came from are the ones asked about now:
//!   the executor was already addressing the access the cycle before (pa and length are held
//!   there), or went on to it then from Dispatch with the look-ahead's hit (`hit_go`: `end1` was
//!   computed from the look-ahead's PA and the request's length). Otherwise, in an access's first
//!   cycle, and in Dispatch (where the first line is the look-ahead's PA, out of its LUT RAM in
//!   that cycle), the end is rounded up to the end of the line's 4 KiB block, `line | 63`: never
//!   short of the burst's, and no adder. (A hit in Translate starts rounded too: the translate
//!   stage's PA is logic after the walker, too late for a sum into `end1` in the same cycle.)
//!
//! A rounded end only makes a request wait for a write (or read) in flight later in the same
//! 4 KiB block; the executor asks again each cycle, and the next question is exact.
//!
//! [`InFlight`]: super::in_flight::InFlight

use crate::fastpath::piece_shift::AXI_BOUNDARY_SHIFT;
use clio_proto::consts::BEAT_BYTES;
use rust_hdl::prelude::*;

/// Lines in a 4 KiB block less one: the low bits of a line that stay inside its block.
pub const BLOCK_LINE_MASK: u64 = (1 << (AXI_BOUNDARY_SHIFT - LINE_SHIFT)) - 1;
/// log2 of a line (a DRAM beat) in bytes.
const LINE_SHIFT: u64 = BEAT_BYTES.trailing_zeros() as u64;
// The kernel keeps the block's two high line bits and sums the low six (`get_bits::<6>`,
// `0xC0`, 63): 4 KiB blocks of 64-byte lines.
const _: () = assert!(BLOCK_LINE_MASK == 63 && LINE_SHIFT == 6);
// A piece's span bound, `(len >> 5) | 1`, plus a line's low six bits fits the 8-bit sum.
const _: () = assert!((4095 >> 5) + 63 < 256);

/// The question to the ordering rules' tables.
#[derive(LogicBlock)]
pub struct OrderAsk {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The executor is in Dispatch: the question is the access a look-ahead hit goes on to.
    pub dispatch: Signal<In, Bit>,
    /// The executor is in `RAddr` or `WAddr`: the question is the piece under way.
    pub addressing: Signal<In, Bit>,
    /// The executor goes on to an access this cycle with a translated hit (`hit_go`); in
    /// Dispatch, at `ahead_line` for `bytes`.
    pub hit_go: Signal<In, Bit>,
    /// The look-ahead's PA line (address bits 13..6) for the request in Dispatch.
    pub ahead_line: Signal<In, Bits<8>>,
    /// The first piece's first line (`pa1`).
    pub line1: Signal<In, Bits<8>>,
    /// The second piece's first line (`pa2`).
    pub line2: Signal<In, Bits<8>>,
    /// The second piece is under way.
    pub piece: Signal<In, Bit>,
    /// The access's length in bytes, a bound of each piece's (in Dispatch the request's, which
    /// the length register takes this cycle).
    pub bytes: Signal<In, Bits<12>>,
    /// The burst asked about: its first line.
    pub ask_line: Signal<Out, Bits<8>>,
    /// An upper bound of its last line, inside its 4 KiB block.
    pub ask_end: Signal<Out, Bits<8>>,
    /// The ends of the first and second pieces, from last cycle's registers.
    end1: DFF<Bits<8>>,
    end2: DFF<Bits<8>>,
    /// `end1` / `end2` answer this cycle's question.
    exact: DFF<Bit>,
    /// Lines after a piece's first, at most: `(bytes >> 5) | 1`.
    span: Signal<Local, Bits<8>>,
    /// The line `end1` is computed from (the look-ahead's in Dispatch), and the low six bits'
    /// sums.
    src1: Signal<Local, Bits<8>>,
    lo1: Signal<Local, Bits<8>>,
    lo2: Signal<Local, Bits<8>>,
    /// The first line asked about, and the end's line within its 4 KiB block.
    line: Signal<Local, Bits<8>>,
    low: Signal<Local, Bits<8>>,
    block: Constant<Bits<8>>,
}

impl Default for OrderAsk {
    fn default() -> Self {
        OrderAsk {
            clock: Default::default(),
            dispatch: Default::default(),
            addressing: Default::default(),
            hit_go: Default::default(),
            ahead_line: Default::default(),
            line1: Default::default(),
            line2: Default::default(),
            piece: Default::default(),
            bytes: Default::default(),
            ask_line: Default::default(),
            ask_end: Default::default(),
            end1: Default::default(),
            end2: Default::default(),
            exact: Default::default(),
            span: Default::default(),
            src1: Default::default(),
            lo1: Default::default(),
            lo2: Default::default(),
            line: Default::default(),
            low: Default::default(),
            block: Constant::new(BLOCK_LINE_MASK.to_bits()),
        }
    }
}

impl Logic for OrderAsk {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, end1, end2, exact);
        // The ends for next cycle: of the access a hit goes on to (Dispatch, Translate), else of
        // the first piece as held; and of the second piece.
        self.span.next = bit_cast::<8, 12>((self.bytes.val() >> 5) | 1);
        self.src1.next = self.line1.val();
        if self.dispatch.val() {
            self.src1.next = self.ahead_line.val();
        }
        self.lo1.next = bit_cast::<8, 6>(self.src1.val().get_bits::<6>(0)) + self.span.val();
        self.end1.d.next = self.src1.val() | self.block.val();
        if self.lo1.val() <= self.block.val() {
            self.end1.d.next = (self.src1.val() & !self.block.val()) | self.lo1.val();
        }
        self.lo2.next = bit_cast::<8, 6>(self.line2.val().get_bits::<6>(0)) + self.span.val();
        self.end2.d.next = self.line2.val() | self.block.val();
        if self.lo2.val() <= self.block.val() {
            self.end2.d.next = (self.line2.val() & !self.block.val()) | self.lo2.val();
        }
        self.exact.d.next = self.addressing.val() | (self.hit_go.val() & self.dispatch.val());
        // The question. The end's block bits are the first line's (both lie in one 4 KiB
        // block), so each bit of either output is one select of registers (or of the LUT RAM's
        // line in Dispatch).
        self.line.next = self.line1.val();
        if self.piece.val() {
            self.line.next = self.line2.val();
        }
        if self.dispatch.val() {
            self.line.next = self.ahead_line.val();
        }
        self.low.next = self.block.val();
        if self.exact.q.val() & !self.dispatch.val() {
            self.low.next = self.end1.q.val() & self.block.val();
            if self.piece.val() {
                self.low.next = self.end2.q.val() & self.block.val();
            }
        }
        self.ask_line.next = self.line.val();
        self.ask_end.next = (self.line.val() & !self.block.val()) | self.low.val();
    }
}

crate::impl_clocked!(OrderAsk);

#[cfg(test)]
mod tests;
