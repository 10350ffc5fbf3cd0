//! The executor: the fast path's sequencer. It takes the next received frame (in order, from
//! the ingest slots: [`SlotQueue`]) or a slow-path TX descriptor, and runs the request's
//! class through its state register, one request at a time, while the other stages work on
//! earlier and later ones:
//!
//! - **Take** (`Idle`, or the last cycle of a request: `x_free`): a descriptor (from `Idle`
//!   only) or a frame, acting on the ack layer's verdict (drop, NACK, or on to `Dispatch`).
//! - **Dispatch** (the decision is [`Dispatch`]'s, on the class [`DispatchClass`] registered
//!   as the frame was taken): `Header::parse`'s checks (`parse_ok`, kept per slot by the
//!   look-ahead), the key check, and the opcode's class: a read or write translated ahead by the
//!   look-ahead goes straight to its access (`hit_go`), else its page is looked up
//!   (`ahead.lookup`) and the translate stage started; atomics and Append ask the
//!   idempotence ring (`SyncCheck`); the offloads are started on the extend port
//!   (`Offload`); slow-path opcodes are pushed as REQUEST descriptors (`SlowPush`); FENCE
//!   waits for every earlier write's B response.
//! - **Translate**: one or two pages (a range that straddles a page is two pieces, `two`,
//!   `n1` bytes on the first); a failure is the response's status.
//! - **Accesses**: a read's bursts (`RAddr`, after the read-after-write rule) handed with its
//!   response to the read-data stage (`RData`); a write's bursts (`WAddr`, after the
//!   write-after-read rule), its data handed to the write-data stage (`WData`, `pass`) and its
//!   OK answer to the read-data stage in the same cycle; an atomic's or Append's word (`SAddr`,
//!   `SData`; the ALU in `SAlu`, the placement in `ALoad` / `APlace`; the write-back in
//!   `SWrite`); a durable write's persist handshake (`Persist`).
//! - **Offload**: the unit's word reads and block writes translated and served, its answer
//!   the response (with a payload read like a Read's).
//! - **Slow path**: a TX descriptor's actions (`SpTx`, `SlowPathTx`), a PTE_WRITE's beat
//!   (`SpPte`); a REQUEST pushed (`SlowPush`); then `Drain` and `Idle`.
//! - **Hand-overs**: a response (a read's job, or a payload-less one: `Resp`) goes to the
//!   read-data stage as soon as it takes it, and the executor takes the next frame in the same
//!   cycle (`x_free`); a read longer than a packet goes on with its next packet while
//!   another follows (`rd_more`, registered from [`ReadSeg`]'s count).
//!
//! The executor owns the request's registers (header, route, the access's geometry and PAs,
//! the response's fields) and gives them to the blocks that need them; it drives no bus of its
//! own: its AR and AW requests (`ar`, `aw`, with `own` in the states that issue them) meet the
//! walker's and the one-beat writer's in the DRAM port's arbiter
//! ([`crate::fastpath::dram_port::DramPort`]). The behaviour is `sim::model::board::CBoard::handle`; `docs/hardware.md` has the
//! state diagram and the cycle counts.
//!
//! [`SlotQueue`]: crate::fastpath::slot_queue::SlotQueue
//! [`Dispatch`]: crate::fastpath::dispatch::Dispatch
//! [`DispatchClass`]: crate::fastpath::dispatch_class::DispatchClass
//! [`ReadSeg`]: crate::read_seg::ReadSeg

use crate::fastpath::dispatch::Dispatch;
use crate::fastpath::dispatch_class::DispatchClass;
use crate::fastpath::links::{
    AddrReq, AheadUse, AppendPlacedIn, DescTakenIn, ExecEvents, KeyVerdictIn, NextFrameIn,
    OrderClearIn, PersistUse, PlaceUse, QueueRelease, ReadJob, RequestFieldsIn, ResponseFields,
    RingUse, RouteVerdictIn, SegUse, ServiceExec, TranslateUse, TxActUse, UnitStart, WordUse,
    WriteJob,
};
use crate::fastpath::order_ask::OrderAsk;
use crate::spec::Spec;
use clio_proto::consts::{ATOMIC_BYTES, BEAT_BYTES, DATAPATH_BITS, MAX_PAYLOAD, VA_BITS, VA_LIMIT};
use clio_proto::header::{field, FLAG_RESPONSE, HEADER_LEN};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::replog;
use clio_proto::Status;
use rust_hdl::prelude::*;

// Bit positions and shift amounts are literals in the kernel; each is pinned to proto here.
// Beats of 64 bytes: a lane is the VA's bits 0..6, a beat count is `(lane + len + 63) >> 6`,
// an AXI address is aligned by clearing bits 0..6.
const _: () = assert!(
    DATAPATH_BITS == 512 && BEAT_BYTES == 64,
    "beats of 64 bytes (>> 6)"
);
// The VA space: bits 48.. of a VA must be zero (`get_bits::<16>(48)`).
const _: () = assert!(VA_BITS == 48 && VA_LIMIT == 1 << 48);
// Append (`proto::replog`; the placement's own literals are pinned in `AppendPlace`): the tail
// word is read at the log's VA itself (`vaq = va`, an atomic's word), and the largest record
// is one packet whose footprint fits the 12-bit access length `len`.
const _: () = assert!(
    replog::TAIL_OFFSET == 0
        && replog::MAX_RECORD as usize == MAX_PAYLOAD
        && replog::footprint(replog::MAX_RECORD) < 1 << 12
);

// The opcode is the header's byte 1 (`cls.opcode`, bits 8..16 of the next header), the
// total length its bytes 24..28 (`cls.total_len_field`, bits 192..224).
const _: () =
    assert!(field::OPCODE == 1 && field::TOTAL_LEN.start == 24 && field::TOTAL_LEN.end == 28);

use crate::spec::StatusSpec as St;
/// Access permissions needed, as the PTE's `READ | WRITE << 1` (`proto::pte::PERM_*`).
type Need<const V: u64> = Spec<2, V>;
/// Controller states.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum State {
    /// Waiting for a received frame (its header is loaded and the ack layer's verdict acted
    /// on: drop, NACK or dispatch) or a slow-path descriptor.
    Idle,
    /// Header checks, key check and opcode dispatch.
    Dispatch,
    /// Idempotence-ring lookup: its result is in (`hit`), the member's count is summed.
    SyncWait,
    /// Idempotence-ring lookup: the count is compared with the member's share; the verdict
    /// next cycle.
    SyncShare,
    /// Idempotence-ring lookup result and verdict (`full`, `quota`).
    SyncCheck,
    /// A page of the request's range is translated (`Translate`, the translate stage); its
    /// result (`tr.done`) decides the second page or the access.
    Translate,
    /// Write: address of a piece.
    WAddr,
    /// Write: data beats of a piece.
    WData,
    /// Read: addresses of the pieces (data may already arrive).
    RAddr,
    /// Read: hand it to the read-data stage.
    RData,
    /// Atomic: read the word.
    SAddr,
    /// Atomic: the word arrives (registered by `wa`).
    SData,
    /// Atomic: the ALU on the registered word; the answer and the ring's record.
    SAlu,
    /// Append: the tail word (registered by `wa` as it arrived) goes into the placement's
    /// sums.
    ALoad,
    /// Append: the tail word read is placed (`replog::place`): LOG_FULL, BAD_REQUEST, or the
    /// record's range is translated.
    APlace,
    /// Atomic: write it back. Append: write the new tail word (after the record's beats, which
    /// are with the write-data stage) and record the old tail in the idempotence ring. An
    /// offload's (Clio-KV's) block write: its block with its strobes.
    SWrite,
    /// Payload-less response: handed to the read-data stage (or its queue) as a header-only
    /// job.
    Resp,
    /// Push a REQUEST descriptor to the slow path.
    SlowPush,
    /// A slow-path TX descriptor.
    SpTx,
    /// PTE_WRITE from the slow path.
    SpPte,
    /// Wait for outstanding DRAM writes.
    Drain,
    /// Durable write (or Append): the persist handshake (`Persist`, the block): every DRAM
    /// write's B response, then one persist request per page piece (and an Append's tail
    /// word), each until `persist_done`.
    Persist,
    /// An offload unit has the request: its word reads are served (translated from here like
    /// a Read's, read in SAddr/SData) until it answers.
    Offload,
}

/// The executor (module doc).
#[derive(LogicBlock, Default)]
pub struct Executor {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: `Idle`.
    pub reset: Signal<In, Bit>,
    /// log2 of a piece's largest size: the page, at most 4 KiB (`PieceShift`). An access is
    /// cut at each such boundary (one AXI burst per piece, none across 4 KiB), each piece
    /// translated.
    pub cfg_piece_shift: Signal<In, Bits<5>>,
    /// The board has a persistence domain (else a durable write or Append is UNSUPPORTED).
    pub cfg_persist: Signal<In, Bit>,

    // ---- Taking work.
    /// The slot queue's next frame (`SlotQueue::out`, joined in the top).
    pub frame: NextFrameIn,
    /// The slot queue's frames (`SlotQueue::exec`, joined in the top).
    pub queue: QueueRelease,
    /// The key check's verdict for its slot (`KeyCheck::verdict`).
    pub keys: KeyVerdictIn,
    /// The route check's verdict for its slot (`RouteCheck::verdict`).
    pub routes: RouteVerdictIn,
    /// A slow-path TX descriptor waits; the executor takes it from `Idle` (`sp_tx_ready`,
    /// `desc_take`) and acts on it in `SpTx` (`sptx.act`).
    pub sp_tx_valid: Signal<In, Bit>,
    /// Ready for a TX descriptor (in `Idle`, once `keys_ready`).
    pub sp_tx_ready: Signal<Out, Bit>,
    /// The TX descriptor is taken this cycle (`SlowPathDesc::take`).
    pub desc_take: Signal<Out, Bit>,
    /// The descriptor being taken (`SlowPathDesc::taken`, joined in the top).
    pub desc: DescTakenIn,
    /// Acting on it in `SpTx`, and its actions: a PTE_WRITE's beat to write, a REPLY to send
    /// (`SlowPathTx::exec`).
    pub sptx: TxActUse,
    /// Its events for the statistics (`Stats::exec`): a NACK sent, a request refused by the
    /// key check (DENIED or STALE), a look-ahead translation taken in Dispatch.
    pub ev: ExecEvents,

    // ---- The dispatch stage's decode of `header` (`Decode`).
    /// The header's fields (`Decode::fields`): its `va` and `payload_len`.
    pub req: RequestFieldsIn,
    /// The look-ahead's results for the slot taken (`TranslateAhead::slot`, joined in the top).
    pub ahead: AheadUse,
    /// The header's `FLAG_DURABLE`.
    pub h_durable: Signal<In, Bit>,

    // ---- The look-ahead's registers of the executor's slot (`ok`, `pa`; Dispatch's own
    // lookup: `ahead.lookup`).

    // ---- A read's packets (`ReadSeg`).
    /// The read segmenter (`ReadSeg::exec`, joined in the top).
    pub seg: SegUse,

    // ---- The translate stage (`Translate`).
    /// The translate stage (`Translate::exec`, joined in the top).
    pub tr: TranslateUse,

    // ---- The ordering rules (`Ordering`): a read, a write, an atomic's word may go out; every
    // write has its B response.
    /// The ordering rules' verdicts (`Ordering::clear`, joined in the top).
    pub order: OrderClearIn,

    // ---- DRAM: the executor's read and write requests (the DRAM port's arbiter gives it AR
    // while `ar.own`, AW while `aw.own`), the R beats of its word reads.
    /// AR (`RAddr`, `SAddr`): valid once the ordering rule allows (`read_clear`,
    /// `atomic_clear`); the piece's (or the word's) PA, 64-byte aligned; the burst length
    /// less one.
    pub ar: AddrReq,
    /// AW (`WAddr`): valid once `write_clear`; the piece's PA, 64-byte aligned; the burst
    /// length less one.
    pub aw: AddrReq,
    /// An R beat while no read's beats are due: a word access's (`DramPort::idle_r`).
    pub r_word: Signal<In, Bit>,
    /// The write-data stage streams (it owns W); it takes the executor's write this cycle
    /// (`pass`).
    pub w_busy: Signal<In, Bit>,
    /// The one-beat writer writes a PTE_WRITE's PTE (`SpPte`) or the executor's word or
    /// block (`SWrite`); its beat is done.
    pub beat_pte: Signal<Out, Bit>,
    /// The one-beat writer writes the executor's word or block (`SWrite`).
    pub beat_word: Signal<Out, Bit>,
    /// The one-beat writer's write is done.
    pub beat_done: Signal<In, Bit>,

    // ---- The sync unit (idempotence ring, ALU).
    /// The idempotence ring (`SyncUnit::port`, joined in the top).
    pub ring: RingUse,
    /// The ALU's operation writes its word back.
    pub alu_write: Signal<In, Bit>,
    /// A word's read-modify-write in the word-access path (`WordAccess::exec`).
    pub word: WordUse,

    // ---- Append's placement (`AppendPlace`).
    /// Append's placement as the tail word arrives (`AppendPlace::exec`).
    pub placer: PlaceUse,
    /// Append's placement (`AppendPlace::placed`, joined in the top).
    pub place: AppendPlacedIn,

    // ---- The persist handshake (`Persist`): run in `Persist`; done, failed.
    /// A durable access's persist handshake (`Persist::exec`).
    pub persist: PersistUse,

    // ---- The extend path (`Extend`, `OffloadService`).
    /// Start an offload unit with the request (Dispatch), when it can take one
    /// (`Extend::start`).
    pub start: UnitStart,
    /// The link with the offload service (`OffloadService::exec`, joined in the top).
    pub unit: ServiceExec,

    // ---- The slow path's RX ring: push the REQUEST descriptor (`SlowPush`).
    /// The frame's source may push a REQUEST into the RX ring (`RxShare::ok`: it holds fewer
    /// descriptors than are free past the notices' reserve), read in Dispatch's second cycle.
    pub rx_ok: Signal<In, Bit>,
    /// The RX ring takes the descriptor.
    pub sp_rx_ready: Signal<In, Bit>,
    /// The REQUEST descriptor is offered (`SlowPush`, until `sp_rx_ready`).
    pub sp_push: Signal<Out, Bit>,

    // ---- The read-data stage's job: the response (a read's, or payload-less: `job_only`).
    /// Its responses, as jobs of the read-data stage (`ReadData::job`).
    pub job: ReadJob,

    // ---- The request's registers, for the blocks that use them.
    /// The request's header bytes 0..48 (or a REPLY descriptor's).
    pub header: Signal<Out, Bits<384>>,
    /// The request's route (the response goes back along it).
    pub route: Signal<Out, Bits<256>>,
    /// The request's client (the RAS member).
    pub client: Signal<Out, Bits<16>>,
    /// A write's data, handed to the write-data stage (`WriteData::job`).
    pub write: WriteJob,
    /// The response's fields (`ResponseHeader::exec`, joined in the top).
    pub rsp: ResponseFields,
    /// An Append's `arg1` (the top sends it when `append`), or the quota of a QUOTA_EXCEEDED
    /// answer (with `rsp_arg1_on`).
    pub rsp_arg1: Signal<Out, Bits<64>>,
    /// The response carries `rsp_arg1` as its `arg1` (a refusal for the member's share of the
    /// idempotence ring: `Quota::RingShare`).
    pub rsp_arg1_on: Signal<Out, Bit>,
    /// The request is an Append past its format checks (its response carries `arg0` and `arg1`).
    pub append: Signal<Out, Bit>,

    // ---- Registers.
    /// The executor's state.
    state: DFF<State>,
    /// The request's header bytes 0..48 (or a REPLY descriptor's header).
    hdr: DFF<Bits<384>>,
    /// The taken frame's opcode class and rules, registered with `hdr` (Dispatch's branch).
    cls: DispatchClass,
    /// Dispatch's decision on the taken frame (combinational, from registers).
    dsp: Dispatch,
    /// The burst asked about to the ordering rules' tables (`order.ask_line`, `ask_end`).
    oq: OrderAsk,
    /// The request's route (the response goes back along it).
    route_q: DFF<Bits<256>>,
    /// The lane of the access's first byte in its 64-byte beat (the payload's realignment).
    o: DFF<Bits<6>>,
    /// The VA of the access's first byte (the request's, an Append record's, an offload's word).
    vaq: DFF<Bits<64>>,
    /// The access's length in bytes (one packet's at most, or an atomic's word).
    len: DFF<Bits<12>>,
    /// The permissions the access needs (`need_read`, `need_write`, both for an atomic).
    need: DFF<Bits<2>>,
    /// The access straddles a page: two pieces (`n1` bytes on the first page).
    two: DFF<Bit>,
    /// Bytes of the access on its first page.
    n1: DFF<Bits<12>>,
    /// The second piece (page) is under way.
    piece: DFF<Bit>,
    /// The PA of the first piece's first byte.
    pa1: DFF<Bits<64>>,
    /// The PA of the second piece's first byte (the second page's start).
    pa2: DFF<Bits<64>>,
    /// The response's status.
    rs_status: DFF<Bits<8>>,
    /// The response's flags byte (`FLAG_RESPONSE`, or a REPLY's).
    rs_flags: DFF<Bits<8>>,
    /// The response's `payload_len`.
    rs_plen: DFF<Bits<16>>,
    /// The response carries `rs_arg0` as `arg0` (an atomic's old value, a replay).
    rs_use_arg0: DFF<Bit>,
    /// The response's `arg0`.
    rs_arg0: DFF<Bits<64>>,
    /// An Append's `arg1`, `rs_arg0 + footprint` (the new tail: the placement's, or the one a
    /// replay finds recorded in the ring; the footprint alone when `arg0` is 0), set with
    /// `rs_arg0`: a register, so no 64-bit sum is in front of the response header's mux.
    rs_arg1: DFF<Bits<64>>,
    /// The response carries `rs_arg1` although it is not an Append's (`rsp_arg1_on`).
    rs_arg1_on: DFF<Bit>,
    /// The response's length in bytes, header beat included.
    rs_len: DFF<Bits<12>>,
    /// The request uses the idempotence ring (`Opcode::uses_idempotence_ring`).
    once: DFF<Bit>,
    /// A stale atomic looking for its ring entry (`Dispatch::stale_replay`): answered from the
    /// ring, or STALE.
    stale: DFF<Bit>,
    /// The executor's request's client (the RAS member).
    hcli: DFF<Bits<16>>,
    /// The idempotence ring's key for the sync unit: `{pid, client, req_id}` (pid at bits
    /// 48..64, client 32..48, req_id 0..32; a CN_ACK's `arg0` as its req_id), registered as
    /// the frame is taken, or a RING_OWNER's member as its descriptor is, so the sync unit's
    /// CAM compare starts the cycle from flip-flops.
    ring_key: DFF<Bits<64>>,
    /// The executor's write or Append carries `FLAG_DURABLE`.
    durable: DFF<Bit>,
    /// The request is an Append past its format checks: the response carries `arg0` = the
    /// old tail (0 when nothing was appended) and `arg1` = `arg0` + the record's footprint.
    ap: DFF<Bit>,
    /// The request is a Read past its checks: its responses carry `pkt_index` = `rd_i` and
    /// `pkt_count` = the answer's packets (an error packet ends the answer).
    rd_seg: DFF<Bit>,
    /// The read answer's packet under way (`pkt_index`).
    rd_i: DFF<Bits<16>>,
    /// The read answer's packet count, registered in Dispatch from `ReadSeg::count` (its
    /// responses' `pkt_count`): the count's sum is not in front of the response header.
    rd_n: DFF<Bits<16>>,
    /// Another packet of the answer follows the one under way (`rd_i + 1 < rd_n`), registered
    /// as `rd_i` moves (in Dispatch from the count, at each hand-over from the registered
    /// count): the executor's "finished, take the next frame" decision reads a flip-flop, not
    /// the count's sum and compare.
    rd_more: DFF<Bit>,
    /// The executor was in Dispatch the cycle before: a slow-path request's share verdict
    /// (`rx_ok`) is its own from its second Dispatch cycle on (`RxShare`'s latency).
    again: DFF<Bit>,
    /// Bytes from `vaq` to the end of its page, registered (`vaq` holds still while a
    /// translation runs: the earliest use is the translate stage's answer, three cycles after
    /// `vaq` is loaded with the translation's start), so the page-size arithmetic is not in
    /// front of the piece decisions: `(!vaq & pmask) + 1`, one carry chain.
    page_rem: DFF<Bits<32>>,
    /// The VA of the page after `vaq`'s (`(vaq | pmask) + 1`, i.e. `vaq + page_rem`): a
    /// straddling range's second piece, registered like `page_rem` (used at the first
    /// piece's answer, three cycles or more after `vaq` is loaded).
    va_next: DFF<Bits<64>>,
    /// The piece-offset mask (`!(ones << piece_shift)`), registered from the configuration.
    pmask: DFF<Bits<64>>,
    /// The access fits on `vaq`'s page (`len <= page_rem`, as `len - 1 <= !vaq & pmask`),
    /// registered from `vaq` and `len` like `page_rem`: the piece decisions read a flip-flop.
    one_page: DFF<Bit>,

    // ---- This cycle's decisions (combinational).
    /// Beats of the whole access, and of its first piece.
    kt: Signal<Local, Bits<12>>,
    k1: Signal<Local, Bits<12>>,
    /// The executor is free to take the next frame this cycle: it is idle, or it finishes its
    /// request and would go idle next cycle (so a frame is taken with no idle cycle between).
    x_free: Signal<Local, Bit>,
    /// The executor takes the next frame this cycle (`take`).
    x_take: Signal<Local, Bit>,
    /// The executor finishes its request this cycle (`done`).
    x_done: Signal<Local, Bit>,
    /// The write-data stage takes the executor's write (and its slot) this cycle (`pass`).
    w_pass: Signal<Local, Bit>,
    /// The unit's word's R beat arrives (`unit_word_in`); its block is written
    /// (`unit_block_done`).
    u_word_in: Signal<Local, Bit>,
    u_block_done: Signal<Local, Bit>,
    /// The executor hands its response to the read-data stage this cycle if it can: a read's
    /// job (RData, or RAddr as its last address goes out) or a payload-less response (Resp).
    rd_hand: Signal<Local, Bit>,
    /// The executor hands a write's data to the write-data stage this cycle if it can (WData,
    /// or WAddr as its last address goes out).
    wr_hand: Signal<Local, Bit>,
    /// The request's only page is translated (the translate stage's `only_hit`, or the
    /// look-ahead's in Dispatch): on to its access this cycle, at `hit_pa` for `hit_len`
    /// bytes, the access chosen by `hit_need` (read, write, or both: an atomic's).
    hit_go: Signal<Local, Bit>,
    hit_pa: Signal<Local, Bits<64>>,
    hit_len: Signal<Local, Bits<12>>,
    /// Dispatch's request length in bytes (a read's first packet, a write's payload), for the
    /// question it asks the ordering rules' tables ahead of `RAddr` / `WAddr`.
    ask_bytes: Signal<Local, Bits<12>>,
    hit_need: Signal<Local, Bits<2>>,
    /// The response is payload-less (`Resp`).
    x_only: Signal<Local, Bit>,

    /// 64 ones (the page-offset mask is `!(ones << page_shift)`).
    ones: Spec<64, { u64::MAX }>,
    // ---- Values from proto (localparams; see `crate::spec`).
    st_ok: St<{ Status::Ok as u64 }>,
    st_nack: St<{ Status::Nack as u64 }>,
    st_unmapped: St<{ Status::Unmapped as u64 }>,
    st_retry_later: St<{ Status::RetryLater as u64 }>,
    st_denied: St<{ Status::Denied as u64 }>,
    st_quota_exceeded: St<{ Status::QuotaExceeded as u64 }>,
    st_stale: St<{ Status::Stale as u64 }>,
    /// `arg1` of a refusal for the member's share of the idempotence ring.
    quota_ring_share: Spec<64, { clio_proto::quota::Quota::RingShare as u64 }>,
    st_bad_request: St<{ Status::BadRequest as u64 }>,
    st_log_full: St<{ Status::LogFull as u64 }>,
    /// A response's flags byte (`FLAG_RESPONSE`).
    flags_response: Spec<8, { FLAG_RESPONSE as u64 }>,
    need_read: Need<{ PERM_READ as u64 }>,
    need_write: Need<{ PERM_WRITE as u64 }>,
    need_atomic: Need<{ (PERM_READ | PERM_WRITE) as u64 }>,
    /// The response header beat's length (`HEADER_LEN`), in the 12-bit response lengths.
    header_len: Spec<12, { HEADER_LEN as u64 }>,
    /// An atomic's word (`ATOMIC_BYTES`).
    atomic_bytes: Spec<12, ATOMIC_BYTES>,
    /// An offload's block write (one beat, `BEAT_BYTES`).
    block_bytes: Spec<12, { BEAT_BYTES as u64 }>,
}

#[cfg(test)]
impl Executor {
    /// The executor is idle (testbenches).
    pub(crate) fn is_idle(&self) -> bool {
        self.state.q.val() == State::Idle
    }

    /// The executor's state (testbenches' diagnostics).
    pub(crate) fn state(&self) -> State {
        self.state.q.val()
    }
}

crate::impl_clocked!(Executor);

mod update;

#[cfg(test)]
mod tests;
