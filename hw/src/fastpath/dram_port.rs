//! The DRAM port's arbiter: the fast path's one AXI4 master port, shared by its clients.
//!
//! * **AR**: the executor's reads (a read's bursts, an atomic's or offload's word) and the
//!   translate stage's bucket reads (a page-table walk). The executor's request wins; it never
//!   asks while a walk is under way (it waits for its translation), so the priority only
//!   settles the idle default. A walk's read goes out only with `walk_clear` (every earlier
//!   page-table write has its B response, no read has beats still to come: `Ordering`), and the
//!   walk sees AR ready only then.
//! * **R**: the read-data stage takes the beats of the reads it queued (`reads_r`); while
//!   none are due (`reads_r.idle`) the beats are a walk's or a word access's, and R is ready for
//!   them while the walk is under way or the executor samples its word (`word_sample`).
//! * **AW**: the executor's bursts (a write's, an Append's) win over the one-beat writer's
//!   beat (a PTE write-back, an atomic's word, an offload's block); the executor never raises
//!   both in one cycle, so again the priority only settles the default.
//! * **W**: the one-beat writer's beat, else the write-data stage's bursts. The one-beat writer
//!   owns the channel only while the write-data stage does not stream (it waits on `w_free`),
//!   so a burst's beats are never split.
//! * **B**: always ready; the ordering rules count the responses.
//!
//! The arbiter is combinational: every client's `own` and request go straight to the port, the
//! port's readies straight back (each client keeps its own handshake state).

use crate::fastpath::links::{AddrReqIn, AxiMaster, DramEvents, RBeats, ReadBeats, WriteBeatsIn};
use rust_hdl::prelude::*;

/// The DRAM port's arbiter.
#[derive(LogicBlock, Default)]
pub struct DramPort {
    /// The fast path's AXI4 master port (the top's `m_axi_*`).
    pub axi: AxiMaster,
    /// The executor's reads on AR.
    pub exec_ar: AddrReqIn,
    /// A walk's bucket reads on AR (`own`: the walk is under way).
    pub walk_ar: AddrReqIn,
    /// A walk may read (`Ordering`'s `walk_clear`).
    pub walk_clear: Signal<In, Bit>,
    /// The R beats of the reads, to the read-data stage (`ReadData::r`): it takes them
    /// (`ready`), and says when none are still to come (`idle`: R then carries a walk's or a
    /// word access's beats).
    pub reads_r: ReadBeats,
    /// The executor samples a word access's R beat this cycle.
    pub word_sample: Signal<In, Bit>,
    /// The R beats while no read's are due: a walk's bucket or a word access's word.
    pub idle_r: RBeats,
    /// The executor's bursts on AW.
    pub exec_aw: AddrReqIn,
    /// The one-beat writer's beat on AW.
    pub beat_aw: AddrReqIn,
    /// The one-beat writer's beat on W.
    pub beat_w: WriteBeatsIn,
    /// The write-data stage's bursts on W (`own`: it streams).
    pub stream_w: WriteBeatsIn,
    /// What the ordering rules count (`Ordering::dram`): a write burst's last W beat taken, a
    /// B response taken (B is always ready), no read's R beats still to come.
    pub order: DramEvents,
}

impl Logic for DramPort {
    #[hdl_gen]
    fn update(&mut self) {
        // AR: the executor's request by default and when it owns the channel, else the walk's
        // while it is under way (held back until `walk_clear`).
        self.axi.arvalid.next = false;
        self.axi.araddr.next = self.exec_ar.addr.val();
        self.axi.arlen.next = self.exec_ar.len.val();
        if self.walk_ar.own.val() {
            self.axi.arvalid.next = self.walk_ar.valid.val() & self.walk_clear.val();
            self.axi.araddr.next = self.walk_ar.addr.val();
            self.axi.arlen.next = self.walk_ar.len.val();
        }
        if self.exec_ar.own.val() {
            self.axi.arvalid.next = self.exec_ar.valid.val();
            self.axi.araddr.next = self.exec_ar.addr.val();
            self.axi.arlen.next = self.exec_ar.len.val();
        }
        self.exec_ar.ready.next = self.axi.arready.val();
        self.walk_ar.ready.next = self.axi.arready.val() & self.walk_clear.val();
        // R: the reads' beats go to the read-data stage, the others to the walk or the word
        // access.
        self.reads_r.valid.next = self.axi.rvalid.val();
        self.reads_r.data.next = self.axi.rdata.val();
        self.idle_r.valid.next = self.axi.rvalid.val() & self.reads_r.idle.val();
        self.idle_r.data.next = self.axi.rdata.val();
        self.idle_r.last.next = self.axi.rlast.val();
        self.axi.rready.next = self.reads_r.ready.val()
            | ((self.walk_ar.own.val() | self.word_sample.val()) & self.reads_r.idle.val());
        // AW: the executor's bursts, else the one-beat writer's beat.
        self.axi.awvalid.next = false;
        self.axi.awaddr.next = self.beat_aw.addr.val();
        self.axi.awlen.next = self.beat_aw.len.val();
        if self.beat_aw.own.val() {
            self.axi.awvalid.next = self.beat_aw.valid.val();
        }
        if self.exec_aw.own.val() {
            self.axi.awvalid.next = self.exec_aw.valid.val();
            self.axi.awaddr.next = self.exec_aw.addr.val();
            self.axi.awlen.next = self.exec_aw.len.val();
        }
        self.exec_aw.ready.next = self.axi.awready.val();
        self.beat_aw.ready.next = self.axi.awready.val();
        // W: the one-beat writer's beat, else the write-data stage's bursts.
        self.axi.wvalid.next = self.stream_w.valid.val() & self.stream_w.own.val();
        self.axi.wdata.next = self.stream_w.data.val();
        self.axi.wstrb.next = self.stream_w.strb.val();
        self.axi.wlast.next = self.stream_w.last.val();
        if self.beat_w.own.val() {
            self.axi.wvalid.next = self.beat_w.valid.val();
            self.axi.wdata.next = self.beat_w.data.val();
            self.axi.wstrb.next = self.beat_w.strb.val();
            self.axi.wlast.next = self.beat_w.last.val();
        }
        self.stream_w.ready.next = self.axi.wready.val();
        self.beat_w.ready.next = self.axi.wready.val();
        self.order.w_done.next =
            self.axi.wvalid.val() & self.axi.wready.val() & self.axi.wlast.val();
        // B: always ready.
        self.axi.bready.next = true;
        self.order.b_done.next = self.axi.bvalid.val();
        self.order.reads_idle.next = self.reads_r.idle.val();
        // The bursts in flight (`Ordering`'s tables).
        self.order.ar_take.next = self.axi.arvalid.val() & self.axi.arready.val();
        self.order.ar_line.next = self.axi.araddr.val().get_bits::<8>(6);
        self.order.ar_len.next = self.axi.arlen.val();
        self.order.aw_take.next = self.axi.awvalid.val() & self.axi.awready.val();
        self.order.aw_line.next = self.axi.awaddr.val().get_bits::<8>(6);
        self.order.aw_len.next = self.axi.awlen.val();
        self.order.r_last.next =
            self.axi.rvalid.val() & self.axi.rready.val() & self.axi.rlast.val();
    }
}

#[cfg(test)]
mod tests;
