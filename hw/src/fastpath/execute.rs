//! The core of the fast path: the executor ([`Executor`]) and the blocks that serve the
//! request it holds. The dispatch stage's decode ([`Decode`]: the header's fields, the
//! match-action rules, each class's checks); the response header ([`ResponseHeader`]) and a
//! long read's packets ([`ReadSeg`]); the word accesses' data path ([`WordAccess`]), Append's
//! placement ([`AppendPlace`]) and the sync unit ([`SyncUnit`]: the idempotence table, the
//! atomics' ALU); a durable write's persist handshake ([`Persist`]); the offload units on the
//! extend port ([`Extend`]) and the executor's side of that port ([`OffloadService`]).
//!
//! Its ports are one link per side it meets ([`CoreRecv`], [`CoreMem`], [`CoreSlow`]), the
//! executor's DRAM requests (AR, AW, the word's R beat), its responses to the response side
//! ([`ReadJob`]), the persist handshake and its events. Where two blocks here answer one
//! field it holds the mux: the translation's pid (Clio-KV's store's for an offload's own
//! access) and the response header's `arg1` (an offload's answer brings its own).

use crate::fastpath::append_place::AppendPlace;
use crate::fastpath::decode::Decode;
use crate::fastpath::executor::Executor;
use crate::fastpath::extend::Extend;
use crate::fastpath::links::*;
use crate::fastpath::offload_service::OffloadService;
use crate::fastpath::persist::Persist;
use crate::fastpath::response_header::ResponseHeader;
use crate::fastpath::word_access::WordAccess;
use crate::offload::UnitChannels;
use crate::read_seg::ReadSeg;
use crate::spec::StatusSpec as St;
use crate::sync_unit::SyncUnit;
use clio_proto::Status;
use rust_hdl::prelude::*;

/// The executor and the blocks that serve its request.
#[derive(LogicBlock, Default)]
pub struct Execute {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// log2 of a piece's largest size (`PieceShift`: the page, at most 4 KiB).
    pub piece_shift: Signal<In, Bits<5>>,
    /// The board has a persistence domain behind the DRAM port (`FastpathTop::cfg_persist`).
    pub cfg_persist: Signal<In, Bit>,
    /// Persist request valid (`FastpathTop::persist_valid`).
    pub persist_valid: Signal<Out, Bit>,
    /// Persist request: first byte (physical).
    pub persist_addr: Signal<Out, Bits<64>>,
    /// Persist request: length in bytes.
    pub persist_len: Signal<Out, Bits<12>>,
    /// The held persist request's range is durable.
    pub persist_done: Signal<In, Bit>,
    /// With `persist_done`: the flush failed.
    pub persist_error: Signal<In, Bit>,
    /// AXI R data (a word access's or an offload's block, in the beat's cycle).
    pub r_data: Signal<In, Bits<512>>,
    /// An R beat is there for a word access (no read's beats are due).
    pub r_word: Signal<In, Bit>,
    /// A word access samples its R beat this cycle.
    pub word_sample: Signal<Out, Bit>,
    /// The executor's AR requests.
    pub ar: AddrReq,
    /// The executor's AW requests.
    pub aw: AddrReq,
    /// The executor's responses, to the response side.
    pub job: ReadJob,
    /// The executor's events, for the statistics.
    pub ev: ExecEvents,
    /// The receive side: the next frame, its verdicts, the `wbuf` read port.
    pub recv: CoreRecv,
    /// The memory side: translations, ordering, write jobs, one-beat writes.
    pub mem: CoreMem,
    /// The slow-path port: descriptors taken and acted on, REQUESTs pushed.
    pub slow: CoreSlow,
    pub(crate) exec: Executor,
    dec: Decode,
    rhdr: ResponseHeader,
    rseg: ReadSeg,
    wa: WordAccess,
    apl: AppendPlace,
    sync: SyncUnit,
    pers: Persist,
    xs: OffloadService,
    ext: Extend,
    // ---- Values from proto (localparams; see `crate::spec`).
    st_ok: St<{ Status::Ok as u64 }>,
}

crate::impl_clocked!(Execute);

impl Logic for Execute {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, exec, sync, ext, xs, wa, apl, pers, rseg);
        self.exec.reset.next = self.reset.val();
        self.sync.reset.next = self.reset.val();
        self.ext.reset.next = self.reset.val();
        self.xs.reset.next = self.reset.val();
        self.exec.cfg_piece_shift.next = self.piece_shift.val();
        self.exec.cfg_persist.next = self.cfg_persist.val();
        // ---- The receive side: the executor's frames and verdicts; the `wbuf` read port for
        // Clio-KV's payload feeder while the write-data stage does not stream.
        NextFrameIn::link(&mut self.recv.frame, &mut self.exec.frame);
        QueueRelease::link(&mut self.recv.queue, &mut self.exec.queue);
        KeyVerdictIn::link(&mut self.recv.keys, &mut self.exec.keys);
        RouteVerdictIn::link(&mut self.recv.routes, &mut self.exec.routes);
        AheadUse::link(&mut self.recv.ahead, &mut self.exec.ahead);
        self.recv.kv_en.next = self.ext.kv_en.val();
        self.recv.pay_fetch.next = self.ext.pay_fetch.val();
        self.recv.pay_block.next = self.ext.pay_block.val();
        self.ext.buf_data.next = self.recv.buf_data.val();
        self.ext.pay_free.next = !self.mem.w_busy.val();
        // ---- The DRAM port and the response side.
        AddrReq::link(&mut self.ar, &mut self.exec.ar);
        AddrReq::link(&mut self.aw, &mut self.exec.aw);
        self.exec.r_word.next = self.r_word.val();
        self.word_sample.next = self.exec.word.sample.val();
        ReadJob::link(&mut self.job, &mut self.exec.job);
        ExecEvents::link(&mut self.ev, &mut self.exec.ev);
        // ---- The memory side: the executor's pages (an offload's access in Clio-KV's store
        // translates with the store's pid), its ordering, write jobs and one-beat writes.
        TranslateUse::link(&mut self.mem.tr, &mut self.exec.tr);
        self.mem.pid.next = self.dec.fields.pid.val();
        if self.xs.own.val() {
            self.mem.pid.next = self.ext.kv_pid.val();
        }
        // (`exec.ahead` is linked to `recv.ahead`: its signals are read there.)
        self.mem.lookup.next = self.recv.ahead.lookup.val();
        self.xs.tr_status.next = self.mem.tr.status.val();
        OrderClearIn::link(&mut self.mem.order, &mut self.exec.order);
        WriteJob::link(&mut self.mem.write, &mut self.exec.write);
        self.mem.shift.next = self.apl.shift.val();
        self.mem.payload_len.next = bit_cast::<12, 32>(self.dec.fields.total_len.val());
        self.exec.w_busy.next = self.mem.w_busy.val();
        Beat::link(&mut self.mem.word, &mut self.wa.wr);
        self.mem.beat_pte.next = self.exec.beat_pte.val();
        self.mem.beat_word.next = self.exec.beat_word.val();
        self.exec.beat_done.next = self.mem.beat_done.val();
        self.mem.desc_take.next = self.exec.desc_take.val();
        // ---- The slow-path port: the TX descriptor taken and acted on, the REQUEST pushed
        // (its header is the response header's forwarded copy).
        self.exec.sp_tx_valid.next = self.slow.tx_valid.val();
        self.slow.tx_ready.next = self.exec.sp_tx_ready.val();
        self.slow.take.next = self.exec.desc_take.val();
        DescTakenIn::link(&mut self.slow.desc, &mut self.exec.desc);
        TxActUse::link(&mut self.slow.sptx, &mut self.exec.sptx);
        RingControlIn::link(&mut self.slow.ring, &mut self.sync.ctl);
        KvLoadIn::link(&mut self.slow.kv_at, &mut self.ext.cfg_at);
        KvConfigIn::link(&mut self.slow.kv, &mut self.ext.cfg);
        self.exec.sp_rx_ready.next = self.slow.rx_ready.val();
        self.exec.rx_ok.next = self.slow.rx_ok.val();
        self.slow.push.next = self.exec.sp_push.val();
        self.slow.client.next = self.exec.client.val();
        self.slow.route.next = self.exec.route.val();
        self.slow.header.next = self.rhdr.forwarded.val();
        // ---- The dispatch stage's decode and the request's fields, to every block that
        // reads them.
        self.dec.hdr.next = self.exec.header.val();
        self.dec.kv_en.next = self.ext.kv_en.val();
        self.exec.h_durable.next = self.dec.durable.val();
        RequestFieldsIn::join(&mut self.exec.req, &mut self.dec.fields);
        RequestFieldsIn::join(&mut self.apl.req, &mut self.dec.fields);
        RequestFieldsIn::join(&mut self.rseg.req, &mut self.dec.fields);
        RequestFieldsIn::join(&mut self.ext.req, &mut self.dec.fields);
        RequestFieldsIn::join(&mut self.sync.req, &mut self.dec.fields);
        // ---- The response header: Append's and an offload's answers carry arguments (an
        // offload's `arg1` its own; a QUOTA_EXCEEDED answer names its quota there); Clio-KV's
        // OK answer its value's length. A read's packets (`ReadSeg`).
        self.rhdr.request.next = self.exec.header.val();
        ResponseFields::join(&mut self.exec.rsp, &mut self.rhdr.exec);
        self.rhdr.args_on.next = self.exec.append.val() | self.xs.args_on.val();
        self.rhdr.arg1.next = self.exec.rsp_arg1.val();
        if self.xs.args_on.val() | self.xs.arg1_on.val() {
            self.rhdr.arg1.next = self.xs.arg1.val();
        }
        self.rhdr.arg1_on.next = self.exec.rsp_arg1_on.val() | self.xs.arg1_on.val();
        self.rhdr.value_len_on.next = self.ext.kv.val()
            & (self.xs.args_on.val()
                | (self.exec.rsp.arg0_on.val() & (self.exec.rsp.status.val() == self.st_ok.val())));
        SegUse::join(&mut self.exec.seg, &mut self.rseg.exec);
        // ---- The word accesses (the word read in SData, written back from the ALU or
        // Append's placement, or an offload's block), Append's placement and the sync unit.
        self.wa.r_data.next = self.r_data.val();
        WordPort::join(&mut self.wa.exec, &mut self.exec.word);
        self.wa.cmp_word.next = self.dec.fields.arg0.val();
        self.wa.alu_new.next = self.sync.alu_new.val();
        self.wa.new_tail.next = self.apl.placed.new_tail.val();
        self.wa.tail_pa.next = self.apl.tail_word_pa.val();
        BlockWriteIn::join(&mut self.wa.block, &mut self.xs.block);
        PlacePort::join(&mut self.apl.exec, &mut self.exec.placer);
        self.apl.tail.next = self.wa.old.val();
        AppendPlacedIn::join(&mut self.exec.place, &mut self.apl.placed);
        RingUse::join(&mut self.exec.ring, &mut self.sync.port);
        self.sync.alu_old.next = self.wa.old.val();
        self.sync.alu_eq.next = self.wa.old_eq.val();
        self.exec.alu_write.next = self.sync.alu_write.val();
        // ---- The extend path (the offload units) and the executor's side of its port.
        self.ext.clear.next = self.exec.unit.clear.val();
        UnitStart::join(&mut self.exec.start, &mut self.ext.start);
        ServiceExec::join(&mut self.exec.unit, &mut self.xs.exec);
        UnitChannels::join(&mut self.ext.active, &mut self.xs.unit);
        self.ext.mem_data.next = self.r_data.val();
        RingVerdictIn::join(&mut self.ext.once, &mut self.sync.port.verdict);
        // ---- The persist handshake of a durable write or Append.
        self.pers.writes_done.next = self.mem.order.fence_clear.val();
        PersistPort::join(&mut self.pers.exec, &mut self.exec.persist);
        self.pers.tail_pa.next = self.apl.tail_word_pa.val();
        self.pers.persist_done.next = self.persist_done.val();
        self.pers.persist_error.next = self.persist_error.val();
        self.persist_valid.next = self.pers.persist_valid.val();
        self.persist_addr.next = self.pers.persist_addr.val();
        self.persist_len.next = self.pers.persist_len.val();
    }
}

#[cfg(test)]
mod tests;
