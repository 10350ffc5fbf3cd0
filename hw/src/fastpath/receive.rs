//! The receive side: frames from the network RX port into the four `wbuf` slots and
//! everything known of them before the executor takes them. The ingest stage ([`Ingest`])
//! writes each frame into a free slot (CRC checked as it streams, payload realigned to DRAM
//! lanes); as each header arrives the key check ([`KeyCheck`]) and the route check
//! ([`RouteCheck`]) keep their verdicts per slot and the TLB look-ahead ([`TranslateAhead`])
//! translates the reads and writes waiting there; the slot queue ([`SlotQueue`]) is the
//! executor's place among the slots: the next frame, and the slots it and the write-data
//! stage give back.
//!
//! Its ports are one link per side it meets ([`RecvCore`], [`RecvMem`], [`RecvSlow`]) and the RX
//! stream. The `wbuf` read port is the write-data stage's while it streams (`w_busy`), else Clio-KV's
//! payload feeder's when it fetches, else it reads block 0 of the executor's slot (the RAM
//! reads a cycle ahead, so the next frame's first block is there when it is handed over).

use crate::fastpath::ingest::Ingest;
use crate::fastpath::key_check::KeyCheck;
use crate::fastpath::links::*;
use crate::fastpath::route_check::RouteCheck;
use crate::fastpath::slot_queue::SlotQueue;
use crate::fastpath::translate_ahead::TranslateAhead;
use rust_hdl::prelude::*;

/// The ingest stage, the slots and their checks, the TLB look-ahead.
#[derive(LogicBlock, Default)]
pub struct Receive {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// RX beat valid.
    pub rx_valid: Signal<In, Bit>,
    /// RX ready.
    pub rx_ready: Signal<Out, Bit>,
    /// RX beat.
    pub rx_data: Signal<In, Bits<512>>,
    /// RX byte enables.
    pub rx_keep: Signal<In, Bits<64>>,
    /// RX last beat of the frame.
    pub rx_last: Signal<In, Bit>,
    /// The frame's route (with the first beat).
    pub rx_route: Signal<In, Bits<256>>,
    /// A frame was received whole this cycle (for the statistics).
    pub frame_in: Signal<Out, Bit>,
    /// log2 of the page size.
    pub page_shift: Signal<In, Bits<5>>,
    /// log2 of a piece's largest size (`PieceShift`).
    pub piece_shift: Signal<In, Bits<5>>,
    /// The core: the next frame and the verdicts to the executor, the `wbuf` read port to
    /// Clio-KV's payload feeder.
    pub core: RecvCore,
    /// The memory side: the write-data stage's slots and `wbuf` reads, the TLB port.
    pub mem: RecvMem,
    /// The slow-path port: KEY_WRITE, ROUTE_KEY, the frame's source.
    pub slow: RecvSlow,
    pub(crate) ingest: Ingest,
    sq: SlotQueue,
    pub(crate) keys_chk: KeyCheck,
    routes_chk: RouteCheck,
    la: TranslateAhead,
    /// Received payloads, DRAM-aligned: four slots of 32 blocks (address bits 5..7 = slot).
    wbuf: RAM<Bits<512>, 7>,
}

crate::impl_clocked!(Receive);

impl Logic for Receive {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, ingest, sq, keys_chk, routes_chk, la);
        self.wbuf.read_clock.next = self.clock.val();
        self.wbuf.write_clock.next = self.clock.val();
        self.ingest.reset.next = self.reset.val();
        self.sq.reset.next = self.reset.val();
        self.keys_chk.reset.next = self.reset.val();
        self.routes_chk.reset.next = self.reset.val();
        self.la.reset.next = self.reset.val();
        // ---- The ingest stage: frames into the free slot, realigned to DRAM lanes; a slot is
        // freed by the executor (`sq.clear`) or by the write-data stage that streamed a
        // write's data from it (`w_release`).
        self.ingest.rx_valid.next = self.rx_valid.val();
        self.ingest.rx_data.next = self.rx_data.val();
        self.ingest.rx_keep.next = self.rx_keep.val();
        self.ingest.rx_last.next = self.rx_last.val();
        self.ingest.rx_route.next = self.rx_route.val();
        self.rx_ready.next = self.ingest.rx_ready.val();
        self.frame_in.next = self.ingest.frame_in.val();
        self.wbuf.write_address.next = self.ingest.buf_address.val();
        self.wbuf.write_data.next = self.ingest.buf_data.val();
        self.wbuf.write_enable.next = self.ingest.buf_write.val();
        self.ingest.freed.next = self.sq.clear.val() | self.mem.w_release.val();
        // ---- The slot queue: the executor's slot, its next frame, the slots given back.
        self.sq.full.next = self.ingest.full.val();
        SlotFramesPort::join(&mut self.ingest.frames, &mut self.sq.frames);
        self.sq.w_busy.next = self.mem.w_busy.val();
        self.sq.w_slot.next = self.mem.w_slot.val();
        QueueReleaseIn::link(&mut self.core.queue, &mut self.sq.exec);
        NextFrame::link(&mut self.core.frame, &mut self.sq.out);
        self.mem.slot.next = self.sq.view.slot.val();
        // ---- The key and route checks: every header as it arrives, kept per slot; Dispatch
        // reads the executor's slot's verdicts.
        HeaderBeatIn::join(&mut self.keys_chk.hdr, &mut self.ingest.header);
        self.keys_chk.sel.next = self.sq.view.slot.val();
        KeyWriteIn::link(&mut self.slow.key_wr, &mut self.keys_chk.wr);
        KeyVerdict::link(&mut self.core.keys, &mut self.keys_chk.verdict);
        HeaderBeatIn::join(&mut self.routes_chk.hdr, &mut self.ingest.header);
        self.routes_chk.sel.next = self.sq.view.slot.val();
        RouteKeyIn::link(&mut self.slow.route_key, &mut self.routes_chk.key);
        RouteVerdict::link(&mut self.core.routes, &mut self.routes_chk.verdict);
        self.slow.source.next = self.routes_chk.source.val();
        // ---- The TLB look-ahead: the slots' headers, what is taken, and the TLB's lookup
        // port when the executor leaves it free.
        HeaderBeatIn::join(&mut self.la.hdr, &mut self.ingest.header);
        self.la.page_shift.next = self.page_shift.val();
        self.la.piece_shift.next = self.piece_shift.val();
        self.la.kv_en.next = self.core.kv_en.val();
        self.la.headed.next = self.ingest.headed.val();
        self.la.freed.next = self.sq.clear.val() | self.mem.w_release.val();
        SlotViewIn::join(&mut self.la.queue, &mut self.sq.view);
        self.la.tlb_update.next = self.mem.tlb_update.val();
        TlbResultIn::link(&mut self.mem.tlb_res, &mut self.la.res);
        self.la.port_free.next = self.mem.tlb_free.val();
        TlbLookup::link(&mut self.mem.tlb_ahead, &mut self.la.lk);
        TlbLookup::link(&mut self.mem.tlb_dispatch, &mut self.la.dlk);
        AheadSlot::link(&mut self.core.ahead, &mut self.la.slot);
        PageHash::link(&mut self.mem.hash, &mut self.la.use_hash);
        // ---- The `wbuf` read port.
        self.core.buf_data.next = self.wbuf.read_data.val();
        self.mem.buf_data.next = self.wbuf.read_data.val();
        if self.mem.w_busy.val() {
            self.wbuf.read_address.next = self.mem.w_address.val();
        } else if self.core.pay_fetch.val() {
            self.wbuf.read_address.next = (bit_cast::<7, 2>(self.sq.view.slot.val()) << 5)
                | bit_cast::<7, 5>(self.core.pay_block.val());
        } else {
            self.wbuf.read_address.next = bit_cast::<7, 2>(self.sq.view.slot.val()) << 5;
        }
    }
}

#[cfg(test)]
mod tests;
