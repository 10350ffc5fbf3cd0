//! The fast path's wiring: the top's `update`, which joins its sides (the sub-tops declared
//! in `fastpath_top.rs`) by their links (`crate::fastpath::links::sides`), connects the
//! DRAM port's arbiter to its clients and passes the flat external ports through.

use super::*;

impl Logic for FastpathTop {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, recv, core, mem, slow, resp, stats);
        self.recv.reset.next = self.reset.val();
        self.core.reset.next = self.reset.val();
        self.mem.reset.next = self.reset.val();
        self.slow.reset.next = self.reset.val();
        self.resp.reset.next = self.reset.val();
        self.stats.reset.next = self.reset.val();
        // ---- The sides, each pair by its link.
        CoreRecv::join(&mut self.core.recv, &mut self.recv.core);
        MemRecv::join(&mut self.mem.recv, &mut self.recv.mem);
        SlowRecv::join(&mut self.slow.recv, &mut self.recv.slow);
        CoreMem::join(&mut self.core.mem, &mut self.mem.core);
        CoreSlow::join(&mut self.core.slow, &mut self.slow.core);
        MemSlow::join(&mut self.mem.slow, &mut self.slow.mem);
        ReadJobIn::join(&mut self.resp.job, &mut self.core.job);
        // ---- The DRAM port (`DramPort`): its AXI master is the fast path's; R beats go to the
        // response side, or to a walk or a word access (which start only when no read's R
        // beats are still to come).
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
        AddrReq::join(&mut self.core.ar, &mut self.dram.exec_ar);
        AddrReq::join(&mut self.core.aw, &mut self.dram.exec_aw);
        self.core.r_word.next = self.dram.idle_r.valid.val();
        self.core.r_data.next = self.m_axi_rdata.val();
        self.dram.word_sample.next = self.core.word_sample.val();
        AddrReq::join(&mut self.mem.walk_ar, &mut self.dram.walk_ar);
        RBeats::join(&mut self.dram.idle_r, &mut self.mem.walk_r);
        AddrReq::join(&mut self.mem.beat_aw, &mut self.dram.beat_aw);
        WriteBeats::join(&mut self.mem.beat_w, &mut self.dram.beat_w);
        WriteBeats::join(&mut self.mem.stream_w, &mut self.dram.stream_w);
        DramEventsIn::join(&mut self.mem.dram, &mut self.dram.order);
        self.dram.walk_clear.next = self.mem.walk_clear.val();
        ReadBeatsIn::join(&mut self.resp.r, &mut self.dram.reads_r);
        // ---- The network ports.
        self.recv.rx_valid.next = self.rx_valid.val();
        self.recv.rx_data.next = self.rx_data.val();
        self.recv.rx_keep.next = self.rx_keep.val();
        self.recv.rx_last.next = self.rx_last.val();
        self.recv.rx_route.next = self.rx_route.val();
        self.rx_ready.next = self.recv.rx_ready.val();
        self.resp.tx_ready.next = self.tx_ready.val();
        self.tx_valid.next = self.resp.tx_valid.val();
        self.tx_data.next = self.resp.tx_data.val();
        self.tx_keep.next = self.resp.tx_keep.val();
        self.tx_last.next = self.resp.tx_last.val();
        self.tx_route.next = self.resp.tx_route.val();
        // ---- The configuration and the persist handshake.
        self.pieces.page_shift.next = self.cfg_page_shift.val();
        self.recv.page_shift.next = self.cfg_page_shift.val();
        self.recv.piece_shift.next = self.pieces.piece_shift.val();
        self.core.piece_shift.next = self.pieces.piece_shift.val();
        self.mem.page_shift.next = self.cfg_page_shift.val();
        self.mem.bucket_mask.next = self.cfg_bucket_mask.val();
        self.core.cfg_persist.next = self.cfg_persist.val();
        self.persist_valid.next = self.core.persist_valid.val();
        self.persist_addr.next = self.core.persist_addr.val();
        self.persist_len.next = self.core.persist_len.val();
        self.core.persist_done.next = self.persist_done.val();
        self.core.persist_error.next = self.persist_error.val();
        // ---- The slow-path rings.
        self.sp_rx_valid.next = self.slow.sp_rx_valid.val();
        self.sp_rx_desc.next = self.slow.sp_rx_desc.val();
        self.slow.sp_rx_ready.next = self.sp_rx_ready.val();
        self.slow.sp_rx_room.next = self.sp_rx_room.val();
        self.slow.sp_rx_taken.next = self.sp_rx_taken.val();
        self.slow.sp_tx_valid.next = self.sp_tx_valid.val();
        self.slow.sp_tx_desc.next = self.sp_tx_desc.val();
        self.sp_tx_ready.next = self.slow.sp_tx_ready.val();
        // ---- Statistics (`Stats`).
        self.stats.rx.next = self.recv.frame_in.val();
        self.stats.tx.next = self.resp.sent.val();
        ExecEventsIn::join(&mut self.stats.exec, &mut self.core.ev);
        TranslateEventsIn::join(&mut self.stats.tr, &mut self.mem.ev);
        self.stat_rx_pkts.next = self.stats.rx_pkts.val();
        self.stat_tx_pkts.next = self.stats.tx_pkts.val();
        self.stat_nacks.next = self.stats.nacks.val();
        self.stat_tlb_hits.next = self.stats.tlb_hits.val();
        self.stat_tlb_misses.next = self.stats.tlb_misses.val();
        self.stat_bucket_reads.next = self.stats.bucket_reads.val();
        self.stat_page_faults.next = self.stats.page_faults.val();
        self.stat_denied.next = self.stats.denied_reqs.val();
    }
}
