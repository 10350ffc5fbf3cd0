//! The persist handshake of a durable write (`FLAG_DURABLE`), out of the executor: once every
//! DRAM write has its B response (`writes_done`, the ordering rules' `fence_clear`), one persist
//! request per page piece of the packet, in order (`persist_valid` with the piece's physical
//! range, held until `persist_done`), then, for a durable Append, the tail word's 8 bytes. A
//! failed flush (`persist_error` with its `persist_done`) does not stop the others; the write is
//! answered RETRY_LATER (`failed`), the client sends it again.
//!
//! The executor holds `run` while it is in its `Persist` state, with the request's pieces
//! (`pa1` and `n1` bytes; with `two`, `len - n1` bytes at `pa2`) and, for an Append, the tail
//! word's PA; `done` (one cycle, with `failed`) ends it. Dropping `run` forgets everything.
//!
//! Cycles: one to see `writes_done` (the first request goes out the cycle after), then each
//! request is held until its `persist_done`, the next raised the cycle after.

use crate::fastpath::links::PersistPort;
use crate::spec::Spec;
use clio_proto::consts::ATOMIC_BYTES;
use rust_hdl::prelude::*;

/// The handshake's steps.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum Step {
    /// Waiting for every DRAM write's B response.
    Drain,
    /// A persist request is out.
    Ask,
}

/// The persist handshake.
#[derive(LogicBlock, Default)]
pub struct Persist {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The executor's durable access (`Executor::persist`, joined in the top).
    pub exec: PersistPort,
    /// Every DRAM write has its B response and none is streaming.
    pub writes_done: Signal<In, Bit>,
    /// The PA of the Append's tail word.
    pub tail_pa: Signal<In, Bits<64>>,
    /// The board's persist port.
    pub persist_valid: Signal<Out, Bit>,
    /// The persist request's physical address.
    pub persist_addr: Signal<Out, Bits<64>>,
    /// The persist request's length in bytes.
    pub persist_len: Signal<Out, Bits<12>>,
    /// The board answers the request that is out.
    pub persist_done: Signal<In, Bit>,
    /// The answered request failed (with `persist_done`).
    pub persist_error: Signal<In, Bit>,
    /// Where the handshake is.
    step: DFF<Step>,
    /// The second piece's request is the one out.
    second: DFF<Bit>,
    /// The tail word's request is the one out.
    on_tail: DFF<Bit>,
    /// A request so far was answered with an error.
    err: DFF<Bit>,
    /// The request out now is the last.
    last: Signal<Local, Bit>,
    /// The tail word's bytes.
    word_bytes: Spec<12, ATOMIC_BYTES>,
}

impl Logic for Persist {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, step, second, on_tail, err);
        self.persist_valid.next = false;
        // n1: the bytes on the first page (all of them for a one-page packet).
        self.persist_addr.next = self.exec.pa1.val();
        self.persist_len.next = self.exec.n1.val();
        if self.on_tail.q.val() {
            self.persist_addr.next = self.tail_pa.val();
            self.persist_len.next = self.word_bytes.val();
        } else if self.second.q.val() {
            self.persist_addr.next = self.exec.pa2.val();
            self.persist_len.next = self.exec.len.val() - self.exec.n1.val();
        }
        self.last.next = self.on_tail.q.val()
            | (!self.exec.append.val() & (self.second.q.val() | !self.exec.two.val()));
        self.exec.done.next = false;
        self.exec.failed.next = self.err.q.val() | self.persist_error.val();
        match self.step.q.val() {
            Step::Drain => {
                if self.writes_done.val() {
                    self.step.d.next = Step::Ask;
                }
            }
            Step::Ask => {
                self.persist_valid.next = self.exec.run.val();
                if self.persist_done.val() & self.exec.run.val() {
                    self.err.d.next = self.err.q.val() | self.persist_error.val();
                    if self.last.val() {
                        // Answered: back to the start (the executor leaves Persist).
                        self.exec.done.next = true;
                        self.step.d.next = Step::Drain;
                        self.second.d.next = false;
                        self.on_tail.d.next = false;
                        self.err.d.next = false;
                    } else if self.exec.two.val() & !self.second.q.val() {
                        self.second.d.next = true;
                    } else {
                        self.on_tail.d.next = true;
                    }
                }
            }
        }
        if !self.exec.run.val() {
            self.step.d.next = Step::Drain;
            self.second.d.next = false;
            self.on_tail.d.next = false;
            self.err.d.next = false;
        }
    }
}

crate::impl_clocked!(Persist);

#[cfg(test)]
mod tests;
