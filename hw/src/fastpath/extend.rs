//! The extend path behind the dispatch stage: the offload units (the pointer chaser and
//! Clio-KV) on the one port bundle of `crate::offload`, Clio-KV's store configuration, and the
//! feeder that hands a KV request's payload from its ingest slot to the unit.
//!
//! The executor starts a unit (`start.chase` or `start.kv`, when its `start.*_ready`) with the
//! request's header fields and then serves the active unit through the bundle: its memory
//! port (`mem_*`: word reads and Clio-KV's block writes, translated by the executor), its
//! answer (`rsp_*`), Clio-KV's idempotence-ring lookups (`once_*`, the verdict `once`). The bundle's outputs are
//! the active unit's (`kv`: Clio-KV, else the chaser); `mem_ready` / `rsp_ready` go to it alone.
//! A new frame (`clear`) makes neither the request's unit.
//!
//! The payload feeder reads the slot's blocks (`pay_fetch`, block `pay_block`; the RAM answers
//! on `buf_data` a cycle later) while the wbuf read port is free (`pay_free`: the write-data
//! stage is not streaming) and offers them to Clio-KV as `pay_*` beats, one held until taken.
//!
//! Clio-KV's store comes from the slow path's KV_CONFIG (`cfg_at.load`): the unit is enabled from
//! then on (`kv_en`, else its opcodes are answered UNSUPPORTED by the match-action table), and
//! `kv_pid` is the RAS its own accesses use. KV requests get `cfg_status` until it is OK
//! (RETRY_LATER from reset).

use crate::fastpath::links::{KvConfigIn, KvLoadIn, RequestFieldsIn, RingVerdictIn, UnitStartIn};
use crate::offload::clio_kv::ClioKv;
use crate::offload::pointer_chase::PointerChase;
use crate::offload::UnitChannels;
use crate::spec::Spec;
use clio_proto::consts::{BEAT_BYTES, MAX_PAYLOAD};
use clio_proto::Status;
use rust_hdl::prelude::*;

// A payload of at most MAX_PAYLOAD bytes is at most 16 beats: block counts of 5 bits (`+ 63 >> 6`).
const _: () = assert!(BEAT_BYTES == 64 && MAX_PAYLOAD / BEAT_BYTES <= 16);

/// The extend path's port.
#[derive(LogicBlock, Default)]
pub struct Extend {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no store, no request.
    pub reset: Signal<In, Bit>,
    /// The active unit's memory, response and ring channels, as the executor's offload
    /// service sees them (its `unit`, joined in the top).
    pub active: UnitChannels,
    /// The executor takes a new frame: no unit has the request.
    pub clear: Signal<In, Bit>,
    /// Start the pointer chaser / Clio-KV with the request (only when its `*_ready`), from
    /// the executor's Dispatch (`Executor::start`).
    pub start: UnitStartIn,
    /// The request's header fields (`Decode::fields`), to the unit that starts.
    pub req: RequestFieldsIn,
    /// The request's unit is Clio-KV (else the chaser).
    pub kv: Signal<Out, Bit>,
    /// The wbuf read port is free this cycle; the feeder reads block `pay_block` of the slot
    /// (`pay_fetch`), which arrives on `buf_data` the next cycle.
    pub pay_free: Signal<In, Bit>,
    /// The feeder reads block `pay_block` of the slot this cycle.
    pub pay_fetch: Signal<Out, Bit>,
    /// The block the feeder reads (counted from the slot's block 0).
    pub pay_block: Signal<Out, Bits<5>>,
    /// The wbuf's read data: the block fetched the cycle before.
    pub buf_data: Signal<In, Bits<512>>,
    /// The 64-byte block that holds the word read, with `mem_done`.
    pub mem_data: Signal<In, Bits<512>>,
    /// Clio-KV's idempotence-ring verdict (`SyncUnit`'s `port.verdict`, the lookup two
    /// cycles before): the key found (a retry) with its recorded status and `arg0`, no free
    /// slot, the caller at its share with none of it acknowledged.
    pub once: RingVerdictIn,
    /// KV_CONFIG from the slow path (`SlowPathTx::kv`): load the store's RAS (`cfg_at.pid`) and
    /// its status and `StoreLayout` (`cfg`).
    pub cfg_at: KvLoadIn,
    /// The KV_CONFIG descriptor's store (`SlowPathDesc::kv`, joined in the top).
    pub cfg: KvConfigIn,
    /// Clio-KV is enabled (a KV_CONFIG came), and its store's RAS.
    pub kv_en: Signal<Out, Bit>,
    /// The store's RAS pid (from KV_CONFIG).
    pub kv_pid: Signal<Out, Bits<16>>,
    chase: PointerChase,
    clio_kv: ClioKv,
    /// The request's unit is Clio-KV.
    xk: DFF<Bit>,
    /// The store (from KV_CONFIG): enabled, RAS, status, base, buckets, records.
    cfg_en: DFF<Bit>,
    store_pid: DFF<Bits<16>>,
    store_status: DFF<Bits<8>>,
    store_base: DFF<Bits<64>>,
    store_buckets: DFF<Bits<64>>,
    store_records: DFF<Bits<32>>,
    /// The payload feeder: blocks left to fetch, the next one, a fetch in flight (the RAM
    /// answers a cycle later), and the beat offered to Clio-KV.
    left: DFF<Bits<5>>,
    block: DFF<Bits<5>>,
    pending: DFF<Bit>,
    beat_valid: DFF<Bit>,
    beat_data: DFF<Bits<512>>,
    beat_last: DFF<Bit>,
    /// A block is fetched this cycle.
    fetch: Signal<Local, Bit>,
    st_retry_later: Spec<8, { Status::RetryLater as u64 }>,
}

impl Logic for Extend {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            xk,
            cfg_en,
            store_pid,
            store_status,
            store_base,
            store_buckets,
            store_records,
            left,
            block,
            pending,
            beat_valid,
            beat_data,
            beat_last
        );
        clock!(self, clock, chase, clio_kv);
        self.chase.reset.next = self.reset.val();
        self.clio_kv.reset.next = self.reset.val();
        // The request, to whichever unit starts.
        self.chase.port.req_valid.next = self.start.chase.val();
        self.chase.port.req_va.next = self.req.va.val();
        self.chase.port.req_arg0.next = self.req.arg0.val();
        self.chase.port.req_arg1.next = self.req.arg1.val();
        self.chase.port.req_len.next = self.req.total_len.val();
        self.clio_kv.port.req_valid.next = self.start.kv.val();
        self.clio_kv.kv_port.req_op.next = self.req.opcode.val();
        self.clio_kv.kv_port.req_pid.next = self.req.pid.val();
        self.clio_kv.port.req_va.next = self.req.va.val();
        self.clio_kv.port.req_arg0.next = self.req.arg0.val();
        self.clio_kv.port.req_arg1.next = self.req.arg1.val();
        self.clio_kv.port.req_len.next = self.req.total_len.val();
        self.clio_kv.kv_port.req_pay_len.next = self.req.payload_len.val();
        self.clio_kv.kv_port.req_pkt_count.next = self.req.pkt_count.val();
        self.clio_kv.kv_port.req_pkt_index.next = self.req.pkt_index.val();
        self.start.chase_ready.next = self.chase.port.req_ready.val();
        self.start.kv_ready.next = self.clio_kv.port.req_ready.val();
        self.kv.next = self.xk.q.val();
        // The executor serves the active unit only.
        self.chase.port.mem_ready.next = self.active.mem_ready.val() & !self.xk.q.val();
        self.chase.port.rsp_ready.next = self.active.rsp_ready.val() & !self.xk.q.val();
        self.clio_kv.port.mem_ready.next = self.active.mem_ready.val() & self.xk.q.val();
        self.clio_kv.port.rsp_ready.next = self.active.rsp_ready.val() & self.xk.q.val();
        self.chase.port.mem_done.next = self.active.mem_done.val();
        self.chase.port.mem_status.next = self.active.mem_status.val();
        self.chase.port.mem_data.next = self.mem_data.val();
        self.clio_kv.port.mem_done.next = self.active.mem_done.val();
        self.clio_kv.port.mem_status.next = self.active.mem_status.val();
        self.clio_kv.port.mem_data.next = self.mem_data.val();
        self.clio_kv.kv_port.once_done.next = self.active.once_done.val();
        self.clio_kv.kv_port.once_hit.next = self.once.hit.val();
        self.clio_kv.kv_port.once_stranger.next = self.once.stranger.val();
        self.clio_kv.kv_port.once_quota.next = self.once.quota.val();
        self.clio_kv.kv_port.once_status.next = self.once.status.val();
        self.clio_kv.kv_port.once_value.next = self.once.value.val();
        self.clio_kv.kv_port.cfg_base.next = self.store_base.q.val();
        self.clio_kv.kv_port.cfg_buckets.next = self.store_buckets.q.val();
        self.clio_kv.kv_port.cfg_records.next = self.store_records.q.val();
        self.clio_kv.kv_port.cfg_status.next = self.store_status.q.val();
        self.clio_kv.kv_port.pay_valid.next = self.beat_valid.q.val();
        self.clio_kv.kv_port.pay_data.next = self.beat_data.q.val();
        self.clio_kv.kv_port.pay_last.next = self.beat_last.q.val();
        self.active.once_valid.next = self.clio_kv.kv_port.once_valid.val() & self.xk.q.val();
        if self.xk.q.val() {
            self.active.mem_valid.next = self.clio_kv.port.mem_valid.val();
            self.active.mem_write.next = self.clio_kv.port.mem_write.val();
            self.active.mem_own.next = self.clio_kv.port.mem_own.val();
            self.active.mem_va.next = self.clio_kv.port.mem_va.val();
            self.active.mem_wdata.next = self.clio_kv.port.mem_wdata.val();
            self.active.mem_wstrb.next = self.clio_kv.port.mem_wstrb.val();
            self.active.rsp_valid.next = self.clio_kv.port.rsp_valid.val();
            self.active.rsp_status.next = self.clio_kv.port.rsp_status.val();
            self.active.rsp_arg0.next = self.clio_kv.port.rsp_arg0.val();
            self.active.rsp_arg1.next = self.clio_kv.port.rsp_arg1.val();
            self.active.rsp_read.next = self.clio_kv.port.rsp_read.val();
            self.active.rsp_read_own.next = self.clio_kv.port.rsp_read_own.val();
            self.active.rsp_read_va.next = self.clio_kv.port.rsp_read_va.val();
            self.active.rsp_read_len.next = self.clio_kv.port.rsp_read_len.val();
            self.active.rsp_record.next = self.clio_kv.kv_port.rsp_record.val();
            self.active.rsp_replay.next = self.clio_kv.kv_port.rsp_replay.val();
        } else {
            self.active.mem_valid.next = self.chase.port.mem_valid.val();
            self.active.mem_write.next = self.chase.port.mem_write.val();
            self.active.mem_own.next = self.chase.port.mem_own.val();
            self.active.mem_va.next = self.chase.port.mem_va.val();
            self.active.mem_wdata.next = self.chase.port.mem_wdata.val();
            self.active.mem_wstrb.next = self.chase.port.mem_wstrb.val();
            self.active.rsp_valid.next = self.chase.port.rsp_valid.val();
            self.active.rsp_status.next = self.chase.port.rsp_status.val();
            self.active.rsp_arg0.next = self.chase.port.rsp_arg0.val();
            self.active.rsp_arg1.next = self.chase.port.rsp_arg1.val();
            self.active.rsp_read.next = self.chase.port.rsp_read.val();
            self.active.rsp_read_own.next = self.chase.port.rsp_read_own.val();
            self.active.rsp_read_va.next = self.chase.port.rsp_read_va.val();
            self.active.rsp_read_len.next = self.chase.port.rsp_read_len.val();
            self.active.rsp_record.next = false;
            self.active.rsp_replay.next = false;
        }
        // The payload feeder: the beat offered is held until taken; the next block is fetched
        // when the port is free and the held beat is gone by the time it arrives.
        if self.beat_valid.q.val() & self.clio_kv.port.pay_ready.val() {
            self.beat_valid.d.next = false;
        }
        self.fetch.next = (self.left.q.val() != 0)
            & !self.pending.q.val()
            & self.pay_free.val()
            & (!self.beat_valid.q.val() | self.clio_kv.port.pay_ready.val());
        self.pending.d.next = self.fetch.val();
        self.pay_fetch.next = self.fetch.val();
        self.pay_block.next = self.block.q.val();
        if self.fetch.val() {
            self.left.d.next = self.left.q.val() - 1;
            self.block.d.next = self.block.q.val() + 1;
        }
        if self.pending.q.val() {
            self.beat_valid.d.next = true;
            self.beat_data.d.next = self.buf_data.val();
            self.beat_last.d.next = self.left.q.val() == 0;
        }
        // Which unit has the request.
        if self.clear.val() {
            self.xk.d.next = false;
        }
        if self.start.chase.val() {
            self.xk.d.next = false;
        }
        if self.start.kv.val() {
            self.xk.d.next = true;
            self.left.d.next = bit_cast::<5, 16>((self.req.payload_len.val() + 63) >> 6);
            self.block.d.next = 0.into();
        }
        // The store.
        self.kv_en.next = self.cfg_en.q.val();
        self.kv_pid.next = self.store_pid.q.val();
        if self.cfg_at.load.val() {
            self.cfg_en.d.next = true;
            self.store_pid.d.next = self.cfg_at.pid.val();
            self.store_status.d.next = self.cfg.status.val();
            self.store_base.d.next = self.cfg.base.val();
            self.store_buckets.d.next = self.cfg.buckets.val();
            self.store_records.d.next = self.cfg.records.val();
        }
        if self.reset.val() {
            self.xk.d.next = false;
            self.cfg_en.d.next = false;
            self.store_status.d.next = self.st_retry_later.val();
            self.left.d.next = 0.into();
            self.pending.d.next = false;
            self.beat_valid.d.next = false;
        }
    }
}

crate::impl_clocked!(Extend);

#[cfg(test)]
mod tests;
