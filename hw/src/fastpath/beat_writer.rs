//! The executor's one-beat DRAM writes, as one unit: a PTE write-back (a page fault's, or a
//! slow-path PTE_WRITE: Clio's `PageTableWriter`), an atomic's or Append tail's word, an
//! offload's block. Each is one AW with burst length 1 and one strobed W beat; the two
//! handshakes may complete in either order or together.
//!
//! The executor holds `go` with the beat (`addr`, `data`, `strb` of `word` or `pte`, as
//! `word_sel` picks) for as long as it wants the
//! write; the unit drives AW and W until each is taken, remembers which were, and says `done`
//! in the cycle the second one is taken (or any later cycle while `go` stays high: the write is
//! never sent twice, however long the executor waits for something else, such as the PAGE_MAPPED
//! notice that goes out in parallel with a fault's write-back). Dropping `go` forgets: the next
//! `go` is a new write. While the write-data stage streams a write (`w_free` low) the W channel
//! is not the unit's, and it waits (AW waits too, so the two stay in order with the stage's).

use crate::fastpath::links::{AddrReq, BeatIn, WriteBeats};
use rust_hdl::prelude::*;

/// One-beat writer.
#[derive(LogicBlock, Default)]
pub struct BeatWriter {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: nothing sent.
    pub reset: Signal<In, Bit>,
    /// The executor wants this write (held until `done`, then dropped before the next).
    pub go: Signal<In, Bit>,
    /// The write is the word-access path's beat (`word`), not the PTE writer's (`pte`).
    pub word_sel: Signal<In, Bit>,
    /// An atomic's or Append tail's word, or an offload's block (`WordAccess::wr`).
    pub word: BeatIn,
    /// A PTE write-back (`PteWriter::beat`).
    pub pte: BeatIn,
    /// The W channel is free (the write-data stage is not streaming).
    pub w_free: Signal<In, Bit>,
    /// AW (burst length 1) to the DRAM port: `own` while the unit drives AW and W (the
    /// arbiter gives it the channels); the address is the beat's block, `addr & !63`.
    pub aw: AddrReq,
    /// The one W beat (last) to the DRAM port: the selected beat's data and strobes.
    pub w: WriteBeats,
    /// Both handshakes are done (this cycle or earlier, for this `go`).
    pub done: Signal<Out, Bit>,
    /// AW taken, W taken (for this `go`).
    aw_sent: DFF<Bit>,
    w_sent: DFF<Bit>,
    /// The selected beat's byte address.
    addr: Signal<Local, Bits<64>>,
    /// AW / W taken this cycle or before.
    aw_now: Signal<Local, Bit>,
    w_now: Signal<Local, Bit>,
}

impl Logic for BeatWriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, aw_sent, w_sent);
        self.aw.own.next = self.go.val() & self.w_free.val();
        self.w.own.next = self.aw.own.val();
        self.aw.valid.next = self.aw.own.val() & !self.aw_sent.q.val();
        self.addr.next = self.pte.addr.val();
        self.w.data.next = self.pte.data.val();
        self.w.strb.next = self.pte.strb.val();
        if self.word_sel.val() {
            self.addr.next = self.word.addr.val();
            self.w.data.next = self.word.data.val();
            self.w.strb.next = self.word.strb.val();
        }
        self.aw.addr.next = self.addr.val() & !bit_cast::<64, 6>(0x3F.into());
        self.w.valid.next = self.aw.own.val() & !self.w_sent.q.val();
        self.w.last.next = true;
        self.aw.len.next = 0.into();
        self.aw_now.next = self.aw_sent.q.val() | (self.aw.valid.val() & self.aw.ready.val());
        self.w_now.next = self.w_sent.q.val() | (self.w.valid.val() & self.w.ready.val());
        self.done.next = self.aw_now.val() & self.w_now.val();
        self.aw_sent.d.next = self.go.val() & self.aw_now.val();
        self.w_sent.d.next = self.go.val() & self.w_now.val();
        if self.reset.val() {
            self.aw_sent.d.next = false;
            self.w_sent.d.next = false;
        }
    }
}

crate::impl_clocked!(BeatWriter);

#[cfg(test)]
mod tests;
