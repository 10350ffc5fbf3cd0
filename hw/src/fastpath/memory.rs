//! The memory side: everything between the executor's accesses and the DRAM port's clients.
//! The translate stage ([`Translate`]: TLB lookup, walk, page fault with its write-back and
//! PAGE_MAPPED notice) with the TLB ([`Tlb`]) and the PTE writer ([`PteWriter`]); the
//! ordering rules between DRAM accesses ([`Ordering`]); the write-data stage ([`WriteData`])
//! that streams a write's W beats from its `wbuf` slot; and the one-beat writer
//! ([`BeatWriter`]: PTEs, atomics' words, offload blocks).
//!
//! Its ports are one link per side it meets ([`MemCore`], [`MemRecv`], [`MemSlow`]), the
//! DRAM port's client ports (the walk's AR and R, the one-beat writer's AW and W, the
//! write-data stage's W, the ordering rules' DRAM events) and the translation's
//! configuration. The write-data stage owns the W channel while it streams (`w_busy`): the
//! one-beat writer and the translate stage's PTE write-back wait for it.

use crate::fastpath::beat_writer::BeatWriter;
use crate::fastpath::links::*;
use crate::fastpath::ordering::Ordering;
use crate::fastpath::pte_writer::PteWriter;
use crate::fastpath::translate::Translate;
use crate::fastpath::write_data::WriteData;
use crate::tlb::Tlb;
use rust_hdl::prelude::*;

/// Translation, the TLB, the PTE writer, the ordering rules and the DRAM writers.
#[derive(LogicBlock, Default)]
pub struct Memory {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// log2 of the page size.
    pub page_shift: Signal<In, Bits<5>>,
    /// Bucket count - 1 (the page table is at physical address 0).
    pub bucket_mask: Signal<In, Bits<32>>,
    /// The core: the executor's translations, ordering, write jobs and one-beat writes.
    pub core: MemCore,
    /// The receive side: the write-data stage's slots and `wbuf` reads, the TLB port.
    pub recv: MemRecv,
    /// The slow-path port: FREE_PAGE, the TLB's and the page tables' changes, the notices.
    pub slow: MemSlow,
    /// The translate stage's events, for the statistics.
    pub ev: TranslateEvents,
    /// The walk's bucket reads (AR).
    pub walk_ar: AddrReq,
    /// The walk's R beats (when no read's are due).
    pub walk_r: RBeatsIn,
    /// The one-beat writer's AW.
    pub beat_aw: AddrReq,
    /// The one-beat writer's W.
    pub beat_w: WriteBeats,
    /// The write-data stage's W.
    pub stream_w: WriteBeats,
    /// The DRAM port's events, for the ordering rules.
    pub dram: DramEventsIn,
    /// No page-table write is in flight: a walk's bucket read may go.
    pub walk_clear: Signal<Out, Bit>,
    pub(crate) tr: Translate,
    tlb: Tlb,
    ptw: PteWriter,
    pub(crate) order: Ordering,
    pub(crate) wd: WriteData,
    bw: BeatWriter,
    /// The write-data stage is streaming (`WriteData::w`'s `own`, read on `stream_w`).
    w_busy: Signal<Local, Bit>,
}

crate::impl_clocked!(Memory);

impl Logic for Memory {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, tr, tlb, ptw, order, wd, bw);
        self.tr.reset.next = self.reset.val();
        self.tlb.reset.next = self.reset.val();
        self.order.reset.next = self.reset.val();
        self.wd.reset.next = self.reset.val();
        self.bw.reset.next = self.reset.val();
        // ---- The write-data stage: a write's W beats from its slot, while the executor goes
        // on; it owns the W channel and the `wbuf` read port while busy.
        // (`wd.w` is linked to `stream_w`: its signals are read there.)
        self.w_busy.next = self.stream_w.own.val();
        WriteJobIn::link(&mut self.core.write, &mut self.wd.job);
        self.wd.start_slot.next = self.recv.slot.val();
        self.wd.start_shift.next = self.core.shift.val();
        self.wd.start_payload_len.next = self.core.payload_len.val();
        self.wd.buf_data.next = self.recv.buf_data.val();
        WriteBeats::link(&mut self.stream_w, &mut self.wd.w);
        self.recv.w_busy.next = self.w_busy.val();
        self.recv.w_slot.next = self.wd.slot.val();
        self.recv.w_release.next = self.wd.freed.val();
        self.recv.w_address.next = self.wd.buf_address.val();
        self.core.w_busy.next = self.w_busy.val();
        // ---- The ordering rules: a write burst ends as a page-table write (a fault's
        // write-back, a PTE_WRITE) or a data write.
        self.order.w_busy.next = self.w_busy.val();
        DramEventsIn::link(&mut self.dram, &mut self.order.dram);
        self.order.w_page_table.next =
            (self.tr.pte_write.val() | self.core.beat_pte.val()) & !self.w_busy.val();
        OrderClear::link(&mut self.core.order, &mut self.order.clear);
        self.walk_clear.next = self.order.walk_clear.val();
        // ---- The one-beat writer: the PTE writer's beat (a fault's, while the translate
        // stage asks with `pte_write`; a PTE_WRITE in SpPte) or the executor's word or block,
        // while the write-data stage does not stream.
        self.bw.go.next =
            self.tr.pte_write.val() | self.core.beat_pte.val() | self.core.beat_word.val();
        self.bw.w_free.next = !self.w_busy.val();
        self.bw.word_sel.next = self.core.beat_word.val();
        BeatIn::link(&mut self.core.word, &mut self.bw.word);
        BeatIn::join(&mut self.bw.pte, &mut self.ptw.beat);
        AddrReq::link(&mut self.beat_aw, &mut self.bw.aw);
        WriteBeats::link(&mut self.beat_w, &mut self.bw.w);
        self.core.beat_done.next = self.bw.done.val();
        // ---- The translate stage: the executor's pages; a miss walks with the hash the
        // look-ahead computed as the header arrived; a fault's PTE goes to the PTE writer and
        // its notice to the slow path.
        self.tr.pid.next = self.core.pid.val();
        self.tr.page_shift.next = self.page_shift.val();
        self.tr.bucket_mask.next = self.bucket_mask.val();
        TranslatePort::link(&mut self.core.tr, &mut self.tr.exec);
        self.tr.start_looked.next = self.core.lookup.val();
        self.tr.start_ahead.next = self.core.lookup.val();
        PageHashIn::link(&mut self.recv.hash, &mut self.tr.hashed);
        TlbResultIn::join(&mut self.tr.tlb, &mut self.tlb.res);
        AddrReq::link(&mut self.walk_ar, &mut self.tr.ar);
        RBeatsIn::link(&mut self.walk_r, &mut self.tr.r);
        FreePageIn::link(&mut self.slow.fp, &mut self.tr.fp);
        self.tr.notice_room.next = self.slow.room.val();
        self.tr.notice_ready.next = self.slow.ready.val();
        self.slow.notice_valid.next = self.tr.notice_valid.val();
        PageMapped::link(&mut self.slow.notice, &mut self.tr.notice);
        self.tr.pte_done.next = self.bw.done.val();
        self.tr.w_free.next = !self.w_busy.val();
        TranslateEvents::link(&mut self.ev, &mut self.tr.ev);
        // ---- The TLB: lookups from the translate stage, Dispatch and the look-ahead (in
        // that order of precedence); updates from the page-fault unit and the slow path.
        TlbLookupIn::join(&mut self.tlb.xlate, &mut self.tr.lk);
        TlbLookupIn::link(&mut self.recv.tlb_dispatch, &mut self.tlb.dispatch);
        TlbLookupIn::link(&mut self.recv.tlb_ahead, &mut self.tlb.ahead);
        // The result goes to the translate stage (joined) and to the look-ahead.
        self.recv.tlb_res.hit.next = self.tlb.res.hit.val();
        self.recv.tlb_res.alloc.next = self.tlb.res.alloc.val();
        self.recv.tlb_res.perms.next = self.tlb.res.perms.val();
        self.recv.tlb_res.pfn.next = self.tlb.res.pfn.val();
        self.recv.tlb_res.gen.next = self.tlb.res.gen.val();
        self.recv.tlb_free.next = self.tlb.ahead_free.val();
        self.recv.tlb_update.next = self.tr.ti.valid.val() | self.slow.up.valid.val();
        TlbInsertIn::join(&mut self.tlb.walk, &mut self.tr.ti);
        TlbChangeIn::link(&mut self.slow.up, &mut self.tlb.slow);
        // ---- The PTE writer: a fault's PTE, or a PTE_WRITE decoded as it is taken.
        self.ptw.bucket_mask.next = self.bucket_mask.val();
        self.ptw.desc_take.next = self.core.desc_take.val();
        PteDescIn::link(&mut self.slow.pte, &mut self.ptw.desc);
        FaultPteIn::join(&mut self.ptw.fault, &mut self.tr.pte);
        PteDecoded::link(&mut self.slow.decoded, &mut self.ptw.decoded);
    }
}

#[cfg(test)]
mod tests;
