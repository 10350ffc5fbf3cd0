//! The fast path's wiring: the top's `update`, which connects the blocks declared in
//! `fastpath_top.rs` (and muxes the shared DRAM port among them).

use super::*;

impl Logic for FastpathTop {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(
            self, clock, exec, ingest, la, order, wd, bw, rd, xmit, tlb, tr, ptw, sync, keys,
            routes, ext, xs, wa, spd, sptx, apl, pers, sq, stats, rseg, rxs
        );
        self.wbuf.read_clock.next = self.clock.val();
        self.wbuf.write_clock.next = self.clock.val();
        self.txbuf.read_clock.next = self.clock.val();
        self.txbuf.write_clock.next = self.clock.val();
        self.exec.reset.next = self.reset.val();
        self.ingest.reset.next = self.reset.val();
        self.tlb.reset.next = self.reset.val();
        self.tr.reset.next = self.reset.val();
        self.sync.reset.next = self.reset.val();
        self.keys.reset.next = self.reset.val();
        self.routes.reset.next = self.reset.val();
        self.ext.reset.next = self.reset.val();
        self.xs.reset.next = self.reset.val();
        self.la.reset.next = self.reset.val();

        // ---- The dispatch stage's decode (`Decode`): the header's fields, the match-action
        // table's rules and each class's format checks.
        self.dec.hdr.next = self.exec.header.val();
        self.dec.kv_en.next = self.ext.kv_en.val();

        // ---- The response header (`ResponseHeader`): the request's bytes 0..48 with status,
        // flags, payload_len, zero checksum and the class's fields; bytes 48..64 (key, client)
        // are zero. Append: arg0 = the old tail (0 when nothing was appended), arg1 = arg0 +
        // footprint; an offload's answer: its arg0 and arg1. Clio-KV's answer: total_len is the
        // value's length (0 without one); an error keeps the request's, as any error response,
        // and a put's or delete's OK answer replayed from the idempotence ring is the first
        // answer again: total_len 0 (rs_plen is 0). A read's answer: this packet's pkt_index
        // and the answer's pkt_count.
        RequestFieldsIn::join(&mut self.apl.req, &mut self.dec.fields);
        self.rhdr.request.next = self.exec.header.val();
        ResponseFields::join(&mut self.exec.rsp, &mut self.rhdr.exec);
        self.rhdr.args_on.next = self.exec.append.val() | self.xs.args_on.val();
        self.rhdr.arg1.next = self.exec.rsp_arg1.val();
        if self.xs.args_on.val() | self.xs.arg1_on.val() {
            self.rhdr.arg1.next = self.xs.arg1.val();
        }
        // A QUOTA_EXCEEDED answer names its quota in `arg1` (the ring share's, or the unit's).
        self.rhdr.arg1_on.next = self.exec.rsp_arg1_on.val() | self.xs.arg1_on.val();
        self.rhdr.value_len_on.next = self.ext.kv.val()
            & (self.xs.args_on.val()
                | (self.exec.rsp.arg0_on.val() & (self.exec.rsp.status.val() == self.st_ok.val())));
        RequestFieldsIn::join(&mut self.rseg.req, &mut self.dec.fields);
        SegUse::join(&mut self.exec.seg, &mut self.rseg.exec);
        self.hreq.next = self.rhdr.forwarded.val();

        // ---- The DRAM port (`DramPort`): the fast path's AXI master, shared by the executor's
        // reads and writes, the walk's bucket reads, the one-beat writer and the write-data
        // stage (each joined where its block is wired).
        self.m_axi_arvalid.next = self.dram.axi.arvalid.val();
        self.m_axi_araddr.next = self.dram.axi.araddr.val();
        self.m_axi_arlen.next = self.dram.axi.arlen.val();
        self.dram.axi.arready.next = self.m_axi_arready.val();
        self.dram.axi.rvalid.next = self.m_axi_rvalid.val();
        self.dram.axi.rdata.next = self.m_axi_rdata.val();
        self.dram.axi.rlast.next = self.m_axi_rlast.val();
        self.m_axi_rready.next = self.dram.axi.rready.val();
        self.m_axi_awvalid.next = self.dram.axi.awvalid.val();
        self.m_axi_awaddr.next = self.dram.axi.awaddr.val();
        self.m_axi_awlen.next = self.dram.axi.awlen.val();
        self.dram.axi.awready.next = self.m_axi_awready.val();
        self.m_axi_wvalid.next = self.dram.axi.wvalid.val();
        self.m_axi_wdata.next = self.dram.axi.wdata.val();
        self.m_axi_wstrb.next = self.dram.axi.wstrb.val();
        self.m_axi_wlast.next = self.dram.axi.wlast.val();
        self.dram.axi.wready.next = self.m_axi_wready.val();
        self.dram.axi.bvalid.next = self.m_axi_bvalid.val();
        self.m_axi_bready.next = self.dram.axi.bready.val();
        // R beats are taken by the read-data stage, or by a walk or an atomic (which start
        // only when that stage says no read's R beats are still to come, so the beats are
        // theirs; a write may go out then too: write-after-read).
        ReadBeatsIn::join(&mut self.rd.r, &mut self.dram.reads_r);
        self.dram.word_sample.next = self.exec.word.sample.val();
        self.dram.walk_clear.next = self.order.walk_clear.val();
        // The write-data stage is streaming (it owns W and the wbuf read port), and the slot it
        // gives back this cycle.
        self.w_busy.next = self.wd.w.own.val();
        self.w_release.next = self.wd.freed.val();
        self.rd.reset.next = self.reset.val();
        // The executor's responses, as jobs of the read-data stage.
        ReadJobIn::join(&mut self.rd.job, &mut self.exec.job);
        // The slow path's RX ring: the executor's REQUEST, or a fault's PAGE_MAPPED notice.
        self.sp_rx_valid.next = self.exec.sp_push.val() | self.tr.notice_valid.val();
        self.sp_rx_desc.next = self.spd.page_mapped.val();
        if self.exec.sp_push.val() {
            self.sp_rx_desc.next = self.spd.request.val();
        }
        // Its per-source share (`RxShare`): what each source holds (a REQUEST is its frame's
        // source's, a notice nobody's), the executor's frame's verdict.
        self.rxs.reset.next = self.reset.val();
        self.rxs.push.next =
            (self.exec.sp_push.val() | self.tr.notice_valid.val()) & self.sp_rx_ready.val();
        self.rxs.counted.next = self.exec.sp_push.val();
        self.rxs.source.next = self.routes.source.val();
        self.rxs.taken.next = self.sp_rx_taken.val();
        self.rxs.room.next = self.sp_rx_room.val();
        self.exec.rx_ok.next = self.rxs.ok.val();
        // ---- The persist handshake (`Persist`) of a durable write or Append, while the
        // executor is in Persist: the request's pieces, the tail word's PA, the board's port.
        self.pers.writes_done.next = self.order.clear.fence_clear.val();
        PersistPort::join(&mut self.pers.exec, &mut self.exec.persist);
        self.pers.tail_pa.next = self.apl.tail_word_pa.val();
        self.pers.persist_done.next = self.persist_done.val();
        self.pers.persist_error.next = self.persist_error.val();
        self.persist_valid.next = self.pers.persist_valid.val();
        self.persist_addr.next = self.pers.persist_addr.val();
        self.persist_len.next = self.pers.persist_len.val();
        self.sp_tx_ready.next = self.exec.sp_tx_ready.val();
        // An offload's access in its own RAS (Clio-KV's store) translates with the store's pid.
        self.t_pid.next = self.dec.fields.pid.val();
        if self.xs.own.val() {
            self.t_pid.next = self.ext.kv_pid.val();
        }
        // ---- The translate stage (`Translate`): the executor's pages; the TLB's lookup port
        // when it looks up (the look-ahead's otherwise), the TLB's updates from its page-fault
        // unit (or the slow path's, below), AR/R while it walks.
        self.tr.page_shift.next = self.cfg_page_shift.val();
        self.tr.bucket_mask.next = self.cfg_bucket_mask.val();
        self.tr.pid.next = self.t_pid.val();
        TranslateUse::join(&mut self.exec.tr, &mut self.tr.exec);
        TlbResultIn::join(&mut self.tr.tlb, &mut self.tlb.res);
        FreePageIn::join(&mut self.tr.fp, &mut self.sptx.free);
        // The bucket read waits for earlier page-table writes; its beats come when no read's
        // are due.
        AddrReq::join(&mut self.tr.ar, &mut self.dram.walk_ar);
        RBeats::join(&mut self.dram.idle_r, &mut self.tr.r);
        self.tr.notice_room.next = self.sp_rx_room.val() != 0;
        self.tr.notice_ready.next = self.sp_rx_ready.val();
        self.tr.pte_done.next = self.bw.done.val();
        self.tr.w_free.next = !self.w_busy.val();
        // The TLB's lookups: the translate stage's, Dispatch's (with the look-ahead's registers
        // of its slot; the translate stage is idle in Dispatch), or else the look-ahead's.
        TlbLookupIn::join(&mut self.tlb.xlate, &mut self.tr.lk);
        TlbLookupIn::join(&mut self.tlb.dispatch, &mut self.la.dlk);
        TlbLookupIn::join(&mut self.tlb.ahead, &mut self.la.lk);
        // The TLB's updates: the page-fault unit's inserts, the slow path's changes (the TLB
        // picks the slow path's when both come).
        TlbInsertIn::join(&mut self.tlb.walk, &mut self.tr.ti);
        TlbChangeIn::join(&mut self.tlb.slow, &mut self.sptx.up);
        // ---- A TX descriptor's actions (`SlowPathTx`), in SpTx: its kind, a TLB_INVALIDATE's
        // page, the PTE writer's decode of a PTE_WRITE, the free list's room.
        self.sptx.reset.next = self.reset.val();
        TxActUse::join(&mut self.exec.sptx, &mut self.sptx.exec);
        DescKindIn::join(&mut self.sptx.desc, &mut self.spd.kind);
        PteDecodedIn::join(&mut self.sptx.pte, &mut self.ptw.decoded);
        // ---- The PTE writer (`PteWriter`): a fault's PTE from the translate stage, a
        // PTE_WRITE decoded as its descriptor is taken (below).
        self.ptw.bucket_mask.next = self.cfg_bucket_mask.val();
        self.ptw.desc_take.next = self.exec.desc_take.val();
        PteDescIn::join(&mut self.ptw.desc, &mut self.spd.pte);
        FaultPteIn::join(&mut self.ptw.fault, &mut self.tr.pte);
        // Sync unit: its key is `ring_key`, a register (loaded as the frame or descriptor is
        // taken), so the CAM compare starts the cycle from flip-flops.
        RingUse::join(&mut self.exec.ring, &mut self.sync.port);
        // RING_OWNER: the row of the client in `ring_key` (since the descriptor was taken)
        // emptied and handed to its pid; RING_SHARE: the share.
        RingControlIn::join(&mut self.sync.ctl, &mut self.sptx.ring);
        // ---- The extend path (`Extend`): the request from the header, to the unit that starts
        // (Dispatch, below); the executor's side of its port (`OffloadService`): the unit's
        // accesses and answer while the executor serves it (`Offload`), the endings of its
        // accesses from the executor's states (a failed translation, the word's R beat in SData,
        // the block written in SWrite), its ring lookups through the sync unit.
        self.ext.clear.next = self.exec.unit.clear.val();
        UnitStart::join(&mut self.exec.start, &mut self.ext.start);
        RequestFieldsIn::join(&mut self.ext.req, &mut self.dec.fields);
        ServiceExec::join(&mut self.exec.unit, &mut self.xs.exec);
        self.xs.tr_status.next = self.tr.exec.status.val();
        UnitChannels::join(&mut self.ext.active, &mut self.xs.unit);
        self.ext.mem_data.next = self.m_axi_rdata.val();
        // Clio-KV's idempotence-ring verdict (the lookup two cycles before, in `Offload`).
        RingVerdictIn::join(&mut self.ext.once, &mut self.sync.port.verdict);
        // KV_CONFIG: the store (`SlowPathDesc::kv`), loaded in SpTx.
        KvLoadIn::join(&mut self.ext.cfg_at, &mut self.sptx.kv);
        KvConfigIn::join(&mut self.ext.cfg, &mut self.spd.kv);
        // The KV payload feeder reads the executor's slot while the write-data stage does not.
        self.ext.pay_free.next = !self.w_busy.val();
        self.ext.buf_data.next = self.wbuf.read_data.val();
        // Key table: writes from KEY_WRITE (lookups: the executor's next frame, below); the
        // route check's secret from ROUTE_KEY.
        KeyWriteIn::join(&mut self.keys.wr, &mut self.sptx.keys);
        RouteKeyIn::join(&mut self.routes.key, &mut self.sptx.routes);
        // ---- The word accesses' data path (`WordAccess`): the word read at `pa1` in SData,
        // written back from the ALU (SAlu) or Append's placement (its tail word), or an
        // offload's block.
        self.wa.r_data.next = self.m_axi_rdata.val();
        WordPort::join(&mut self.wa.exec, &mut self.exec.word);
        self.wa.cmp_word.next = self.dec.fields.arg0.val();
        self.wa.alu_new.next = self.sync.alu_new.val();
        self.wa.new_tail.next = self.apl.placed.new_tail.val();
        self.wa.tail_pa.next = self.apl.tail_word_pa.val();
        BlockWriteIn::join(&mut self.wa.block, &mut self.xs.block);
        // Append's placement: the tail word as it arrives in SData (below).
        PlacePort::join(&mut self.apl.exec, &mut self.exec.placer);
        self.apl.tail.next = self.wa.old.val();
        RequestFieldsIn::join(&mut self.sync.req, &mut self.dec.fields);
        self.sync.alu_old.next = self.wa.old.val();
        self.sync.alu_eq.next = self.wa.old_eq.val();
        // ---- Write-data stage (`WriteData`): streams the W beats of a write whose bursts the
        // executor has addressed, from the frame's wbuf slot, while the executor goes on. It
        // owns the W channel and the wbuf read port while busy; the executor's own one-beat
        // writes (PTE write-backs, atomics) override the W defaults below only when it is not.
        self.wd.reset.next = self.reset.val();
        WriteJobIn::join(&mut self.wd.job, &mut self.exec.write);
        self.wd.start_slot.next = self.sq.view.slot.val();
        self.wd.start_shift.next = self.apl.shift.val();
        self.wd.start_payload_len.next = bit_cast::<12, 32>(self.dec.fields.total_len.val());
        self.wd.buf_data.next = self.wbuf.read_data.val();
        WriteBeats::join(&mut self.wd.w, &mut self.dram.stream_w);
        // ---- The one-beat writer (`BeatWriter`): the PTE writer's beat (a fault's, while the
        // translate stage asks with `pte_write`; a slow-path PTE_WRITE in SpPte) and words or blocks (SWrite: an atomic's, an
        // Append's tail, an offload's block); it has AW and W while the write-data stage does
        // not stream.
        self.bw.reset.next = self.reset.val();
        self.bw.go.next =
            self.tr.pte_write.val() | self.exec.beat_pte.val() | self.exec.beat_word.val();
        self.bw.w_free.next = !self.w_busy.val();
        // An 8-byte word at its lane or the offload's block (`WordAccess`), or a PTE (a fault's
        // or a PTE_WRITE's) laid out by the PTE writer.
        self.bw.word_sel.next = self.exec.beat_word.val();
        BeatIn::join(&mut self.bw.word, &mut self.wa.wr);
        BeatIn::join(&mut self.bw.pte, &mut self.ptw.beat);
        AddrReq::join(&mut self.bw.aw, &mut self.dram.beat_aw);
        WriteBeats::join(&mut self.bw.w, &mut self.dram.beat_w);
        if self.w_busy.val() {
            self.wbuf.read_address.next = self.wd.buf_address.val();
        } else if self.ext.pay_fetch.val() {
            // The KV payload feeder's next block (the write-data stage is idle).
            self.wbuf.read_address.next = (bit_cast::<7, 2>(self.sq.view.slot.val()) << 5)
                | bit_cast::<7, 5>(self.ext.pay_block.val());
        } else {
            // Idle: block 0 of the executor's slot, the next one handed over (the RAM reads
            // a cycle ahead).
            self.wbuf.read_address.next = bit_cast::<7, 2>(self.sq.view.slot.val()) << 5;
        }
        // ---- Ingest stage (`crate::fastpath::ingest`): frames into the free wbuf slot,
        // realigned to DRAM lanes, with the ack layer's CRC check; header, route and verdict
        // kept per slot. A slot is released by the executor (`sq.clear`) or by the write-data
        // stage that streamed a write's data from it (`w_release`).
        self.ingest.rx_valid.next = self.rx_valid.val();
        self.ingest.rx_data.next = self.rx_data.val();
        self.ingest.rx_keep.next = self.rx_keep.val();
        self.ingest.rx_last.next = self.rx_last.val();
        self.ingest.rx_route.next = self.rx_route.val();
        self.rx_ready.next = self.ingest.rx_ready.val();
        self.wbuf.write_address.next = self.ingest.buf_address.val();
        self.wbuf.write_data.next = self.ingest.buf_data.val();
        self.wbuf.write_enable.next = self.ingest.buf_write.val();
        // ---- Statistics (`Stats`): the stages' events (NACKs and denied requests below, as
        // the executor meets them).
        self.stats.reset.next = self.reset.val();
        self.stats.rx.next = self.ingest.frame_in.val();
        self.stats.tx.next = self.xmit.sent.val();
        ExecEventsIn::join(&mut self.stats.exec, &mut self.exec.ev);
        TranslateEventsIn::join(&mut self.stats.tr, &mut self.tr.ev);
        self.stat_rx_pkts.next = self.stats.rx_pkts.val();
        self.stat_tx_pkts.next = self.stats.tx_pkts.val();
        self.stat_nacks.next = self.stats.nacks.val();
        self.stat_tlb_hits.next = self.stats.tlb_hits.val();
        self.stat_tlb_misses.next = self.stats.tlb_misses.val();
        self.stat_bucket_reads.next = self.stats.bucket_reads.val();
        self.stat_page_faults.next = self.stats.page_faults.val();
        self.stat_denied.next = self.stats.denied_reqs.val();
        // ---- The ordering rules (`Ordering`): what the executor's accesses wait for.
        self.order.reset.next = self.reset.val();
        self.order.w_busy.next = self.w_busy.val();
        DramEventsIn::join(&mut self.order.dram, &mut self.dram.order);

        // ---- Transmit stage (`Transmit`): the network TX port and the txbuf read port.
        self.xmit.reset.next = self.reset.val();
        self.xmit.tx_ready.next = self.tx_ready.val();
        self.tx_valid.next = self.xmit.tx_valid.val();
        self.tx_data.next = self.xmit.tx_data.val();
        self.tx_keep.next = self.xmit.tx_keep.val();
        self.tx_last.next = self.xmit.tx_last.val();
        self.tx_route.next = self.xmit.tx_route.val();
        self.txbuf.read_address.next = self.xmit.buf_address.val();
        self.xmit.buf_data.next = self.txbuf.read_data.val();
        // The read-data stage hands finished responses to the transmit stage; the next may
        // start in the cycle of the last beat (beat 0 is a register, beat 1 is read from the
        // other txbuf slot a cycle later).
        self.rd.xmit_free.next = self.xmit.free.val();
        TxLoadIn::join(&mut self.xmit.job, &mut self.rd.tx);
        self.txbuf.write_enable.next = self.rd.buf_write_enable.val();
        self.txbuf.write_address.next = self.rd.buf_write_address.val();
        self.txbuf.write_data.next = self.rd.buf_write_data.val();
        // Slow-path descriptor fields.
        self.spd.take.next = self.exec.desc_take.val();
        self.spd.desc.next = self.sp_tx_desc.val();
        self.spd.req_client.next = self.exec.client.val();
        self.spd.req_route.next = self.exec.route.val();
        self.spd.req_header.next = self.hreq.val();
        PageMappedIn::join(&mut self.spd.pm, &mut self.tr.notice);
        // ---- The executor (`Executor`): what it reads of the other blocks. (What it drives
        // is wired where each block is, above.)
        self.exec.cfg_page_shift.next = self.cfg_page_shift.val();
        self.exec.cfg_persist.next = self.cfg_persist.val();
        NextFrameIn::join(&mut self.exec.frame, &mut self.sq.out);
        KeyVerdictIn::join(&mut self.exec.keys, &mut self.keys.verdict);
        RouteVerdictIn::join(&mut self.exec.routes, &mut self.routes.verdict);
        self.exec.sp_tx_valid.next = self.sp_tx_valid.val();
        DescTakenIn::join(&mut self.exec.desc, &mut self.spd.taken);
        RequestFieldsIn::join(&mut self.exec.req, &mut self.dec.fields);
        // The packet's first byte, summed by the look-ahead as the header arrived.
        AheadUse::join(&mut self.exec.ahead, &mut self.la.slot);
        self.exec.h_durable.next = self.dec.durable.val();
        OrderClearIn::join(&mut self.exec.order, &mut self.order.clear);
        // Its AR and AW requests (a read's bursts or an atomic's word, never while a walk is
        // under way: it waits for its translation; a write's bursts, whose data follows from
        // the write-data stage), and a word's R beat.
        AddrReq::join(&mut self.exec.ar, &mut self.dram.exec_ar);
        AddrReq::join(&mut self.exec.aw, &mut self.dram.exec_aw);
        self.exec.r_word.next = self.dram.idle_r.valid.val();
        self.exec.w_busy.next = self.w_busy.val();
        self.exec.beat_done.next = self.bw.done.val();
        self.exec.alu_write.next = self.sync.alu_write.val();
        AppendPlacedIn::join(&mut self.exec.place, &mut self.apl.placed);
        self.exec.sp_rx_ready.next = self.sp_rx_ready.val();
        // A write burst ends: a page-table write (fault write-back, PTE_WRITE: the executor's
        // own one-beat writes for the translate stage / in SpPte) or a data write (write, atomic,
        // Append).
        self.order.w_page_table.next =
            (self.tr.pte_write.val() | self.exec.beat_pte.val()) & !self.w_busy.val();
        // ---- The executor's slots (`SlotQueue`): done with a request, it releases its slot
        // (unless the write-data stage took it); the next frame is the one after, whether it is
        // there, its fields, and its key lookup (`keys.ok` in Dispatch is this frame's: the slot
        // holds it until released).
        self.sq.reset.next = self.reset.val();
        self.sq.full.next = self.ingest.full.val();
        SlotFramesPort::join(&mut self.ingest.frames, &mut self.sq.frames);
        self.sq.w_busy.next = self.w_busy.val();
        self.sq.w_slot.next = self.wd.slot.val();
        QueueRelease::join(&mut self.exec.queue, &mut self.sq.exec);
        // The key check: every header's key and epoch as they arrive, kept per slot; Dispatch
        // reads the executor's slot's answers.
        HeaderBeatIn::join(&mut self.keys.hdr, &mut self.ingest.header);
        self.keys.sel.next = self.sq.view.slot.val();
        HeaderBeatIn::join(&mut self.routes.hdr, &mut self.ingest.header);
        self.routes.sel.next = self.sq.view.slot.val();
        // Slots freed this cycle go back to the ingest stage.
        self.ingest.freed.next = self.sq.clear.val() | self.w_release.val();
        // ---- The TLB look-ahead: the ingest slots, what is taken, and the lookup port when the
        // executor leaves it free.
        HeaderBeatIn::join(&mut self.la.hdr, &mut self.ingest.header);
        self.la.page_shift.next = self.cfg_page_shift.val();
        self.la.kv_en.next = self.ext.kv_en.val();
        self.la.headed.next = self.ingest.headed.val();
        self.la.freed.next = self.sq.clear.val() | self.w_release.val();
        SlotViewIn::join(&mut self.la.queue, &mut self.sq.view);
        self.la.tlb_update.next = self.tr.ti.valid.val() | self.sptx.up.valid.val();
        TlbResultIn::join(&mut self.la.res, &mut self.tlb.res);
        self.la.port_free.next = self.tlb.ahead_free.val();
        // The translations the executor starts this cycle: Dispatch's page is the look-ahead's
        // slot's, looked up in the start cycle; a miss walks with its hash, computed as the
        // header arrived.
        self.tr.start_looked.next = self.exec.ahead.lookup.val();
        self.tr.start_ahead.next = self.exec.ahead.lookup.val();
        PageHashIn::join(&mut self.tr.hashed, &mut self.la.use_hash);
    }
}
