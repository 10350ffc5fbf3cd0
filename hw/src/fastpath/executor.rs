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
//!   (`dispatch_lookup`) and the translate stage started; atomics and Append ask the
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
//! own: its AR and AW requests (`ar_*`, `aw_*`, with `ar_own` / `aw_own` in the states that
//! issue them) are muxed onto the DRAM port by the top, with the walker's and the one-beat
//! writer's. The behaviour is `sim::model::board::CBoard::handle`; `docs/hardware.md` has the
//! state diagram and the cycle counts.
//!
//! [`SlotQueue`]: crate::fastpath::slot_queue::SlotQueue
//! [`Dispatch`]: crate::fastpath::dispatch::Dispatch
//! [`DispatchClass`]: crate::fastpath::dispatch_class::DispatchClass
//! [`ReadSeg`]: crate::read_seg::ReadSeg

use crate::fastpath::dispatch::Dispatch;
use crate::fastpath::dispatch_class::DispatchClass;
use crate::spec::Spec;
use clio_proto::consts::{ATOMIC_BYTES, BEAT_BYTES, DATAPATH_BITS, MAX_PAYLOAD, VA_BITS, VA_LIMIT};
use clio_proto::header::{field, FLAG_RESPONSE, HEADER_LEN};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::replog;
use clio_proto::ring::RX_RESERVED_FOR_NOTICES;
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

// The opcode is the header's byte 1 (`cls.opcode`, bits 8..16 of the next header).
const _: () = assert!(field::OPCODE == 1);

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
    /// Idempotence-ring lookup result.
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
    /// log2 of the page size.
    pub cfg_page_shift: Signal<In, Bits<5>>,
    /// The board has a persistence domain (else a durable write or Append is UNSUPPORTED).
    pub cfg_persist: Signal<In, Bit>,

    // ---- Taking work.
    /// The next frame is in its slot (`SlotQueue::next_*`): its ack-layer verdict (bit 0
    /// drop, bit 1 NACK), header bytes 0..48, client, idempotence-ring key, route and lane.
    pub next_full: Signal<In, Bit>,
    pub next_verdict: Signal<In, Bits<2>>,
    pub next_hdr: Signal<In, Bits<384>>,
    pub next_client: Signal<In, Bits<16>>,
    pub next_ring_key: Signal<In, Bits<64>>,
    pub next_route: Signal<In, Bits<256>>,
    pub next_lane: Signal<In, Bits<6>>,
    /// The executor takes the next frame this cycle (`SlotQueue::take`).
    pub take: Signal<Out, Bit>,
    /// The executor is done with its request this cycle: its slot is released unless the
    /// write-data stage took it (`SlotQueue::done`).
    pub done: Signal<Out, Bit>,
    /// The key table's zero sweep after reset is done (nothing is taken before), and its
    /// verdict on the frame taken (in Dispatch: the key opens the pid's RAS).
    pub keys_ready: Signal<In, Bit>,
    pub key_ok: Signal<In, Bit>,
    /// A slow-path TX descriptor waits; the executor takes it from `Idle` (`sp_tx_ready`,
    /// `desc_take`) and acts on it in `SpTx` (`sp_tx_act`).
    pub sp_tx_valid: Signal<In, Bit>,
    pub sp_tx_ready: Signal<Out, Bit>,
    pub desc_take: Signal<Out, Bit>,
    pub sp_tx_act: Signal<Out, Bit>,
    /// The descriptor's member (`SlowPathDesc::take_member`, a RING_RELEASE's key).
    pub desc_member: Signal<In, Bits<32>>,
    /// Its actions (`SlowPathTx`): a PTE_WRITE's beat to write, a REPLY to send.
    pub desc_to_pte: Signal<In, Bit>,
    pub desc_reply: Signal<In, Bit>,
    /// A REPLY's route, header, status and flags (`SlowPathDesc`).
    pub desc_route: Signal<In, Bits<256>>,
    pub desc_header: Signal<In, Bits<384>>,
    pub desc_reply_status: Signal<In, Bits<8>>,
    pub desc_reply_flags: Signal<In, Bits<8>>,
    /// A NACK is sent, a request is denied by the key check (`Stats`).
    pub stat_nack: Signal<Out, Bit>,
    pub stat_denied: Signal<Out, Bit>,

    // ---- The dispatch stage's decode of `header` (`Decode`).
    /// The header's `va`, a write packet's first byte (`data_va`), `payload_len`,
    /// `FLAG_DURABLE`.
    pub h_va: Signal<In, Bits<64>>,
    pub data_va: Signal<In, Bits<64>>,
    pub h_plen: Signal<In, Bits<16>>,
    pub h_durable: Signal<In, Bit>,
    /// The class checks (`parse_ok`, `chase_ok`, `append_ok`, `atomic_ok`: the look-ahead's
    /// per-slot copies, decoded as the header arrived, so Dispatch's decision starts from
    /// flip-flops; the opcode's branch and rules are `cls`'s, registered as the frame is
    /// taken).
    pub parse_ok: Signal<In, Bit>,
    pub chase_ok: Signal<In, Bit>,
    pub append_ok: Signal<In, Bit>,
    pub atomic_ok: Signal<In, Bit>,

    // ---- The look-ahead's registers of the executor's slot (`TranslateAhead::use_*`, `ok`,
    // `pa`).
    pub ahead_rw: Signal<In, Bit>,
    pub ahead_ok: Signal<In, Bit>,
    pub ahead_pa: Signal<In, Bits<64>>,
    pub ahead_read_ok: Signal<In, Bit>,
    pub ahead_write_ok: Signal<In, Bit>,
    pub ahead_write_in_va: Signal<In, Bit>,
    /// A read's first packet's length, `min(total_len, MAX_PAYLOAD)` (`use_len`, a register).
    pub ahead_len: Signal<In, Bits<12>>,
    /// Dispatch looks its frame's page up in the TLB this cycle (a read or write the
    /// look-ahead has not translated).
    pub dispatch_lookup: Signal<Out, Bit>,
    /// A look-ahead translation is taken in Dispatch (a TLB hit for the statistics).
    pub ahead_hit: Signal<Out, Bit>,

    // ---- A read's packets (`ReadSeg`).
    /// The answer's packet count (`ReadSeg::count`), registered in Dispatch (`seg_total`).
    pub seg_count: Signal<In, Bits<16>>,
    pub seg_next_va: Signal<In, Bits<64>>,
    pub seg_next_len: Signal<In, Bits<12>>,
    /// `ReadSeg`'s controls: a request is dispatched (its next packet is 1) / the answer moves
    /// on to its next packet.
    pub seg_load: Signal<Out, Bit>,
    pub seg_step: Signal<Out, Bit>,

    // ---- The translate stage (`Translate`).
    /// Start a translation of `tr_va`'s page; take the stage's only-page hit.
    pub tr_start: Signal<Out, Bit>,
    pub tr_va: Signal<Out, Bits<64>>,
    pub tr_hit_take: Signal<Out, Bit>,
    pub tr_only_hit: Signal<In, Bit>,
    pub tr_hit_pa: Signal<In, Bits<64>>,
    pub tr_done: Signal<In, Bit>,
    pub tr_status: Signal<In, Bits<8>>,
    pub tr_pa: Signal<In, Bits<64>>,

    // ---- The ordering rules (`Ordering`): a read, a write, an atomic's word may go out; every
    // write has its B response.
    pub read_clear: Signal<In, Bit>,
    pub write_clear: Signal<In, Bit>,
    pub atomic_clear: Signal<In, Bit>,
    pub fence_clear: Signal<In, Bit>,

    // ---- DRAM: the executor's read and write addresses (the top muxes them onto the port
    // while `ar_own` / `aw_own`), the R beats of its word reads.
    pub ar_own: Signal<Out, Bit>,
    pub ar_valid: Signal<Out, Bit>,
    pub ar_addr: Signal<Out, Bits<64>>,
    pub ar_len: Signal<Out, Bits<8>>,
    pub ar_ready: Signal<In, Bit>,
    pub aw_own: Signal<Out, Bit>,
    pub aw_valid: Signal<Out, Bit>,
    pub aw_addr: Signal<Out, Bits<64>>,
    pub aw_len: Signal<Out, Bits<8>>,
    pub aw_ready: Signal<In, Bit>,
    pub r_valid: Signal<In, Bit>,
    /// No read's R beats are still to come (the R beats are a word access's).
    pub r_idle: Signal<In, Bit>,
    /// A word access's R beat is awaited (`SData`): sampled by `WordAccess`, R ready.
    pub word_sample: Signal<Out, Bit>,
    /// The write-data stage streams (it owns W); it takes the executor's write this cycle
    /// (`pass`).
    pub w_busy: Signal<In, Bit>,
    pub pass: Signal<Out, Bit>,
    /// The one-beat writer writes a PTE_WRITE's PTE (`SpPte`) or the executor's word or
    /// block (`SWrite`); its beat is done.
    pub beat_pte: Signal<Out, Bit>,
    pub beat_word: Signal<Out, Bit>,
    pub beat_done: Signal<In, Bit>,

    // ---- The sync unit (idempotence ring, ALU).
    pub ring_lookup: Signal<Out, Bit>,
    pub ring_ack: Signal<Out, Bit>,
    pub ring_skip: Signal<Out, Bit>,
    pub ring_record: Signal<Out, Bit>,
    pub ring_rec_status: Signal<Out, Bits<8>>,
    pub ring_rec_value: Signal<Out, Bits<64>>,
    /// The second word recorded with it: Append's new tail (its answer's `arg1`), else 0.
    pub ring_rec_arg1: Signal<Out, Bits<64>>,
    pub ring_hit: Signal<In, Bit>,
    pub ring_full: Signal<In, Bit>,
    pub ring_status: Signal<In, Bits<8>>,
    pub ring_value: Signal<In, Bits<64>>,
    /// The lookup's recorded second word (a replayed Append's `arg1`).
    pub ring_arg1: Signal<In, Bits<64>>,
    /// The ALU's operation writes its word back.
    pub alu_write: Signal<In, Bit>,
    /// The word read (`WordAccess::old`); load the ALU's answer or Append's new tail as the
    /// word to write back.
    pub word_old: Signal<In, Bits<64>>,
    pub alu_load: Signal<Out, Bit>,
    pub tail_load: Signal<Out, Bit>,

    // ---- Append's placement (`AppendPlace`).
    pub place_load: Signal<Out, Bit>,
    pub place_log_full: Signal<In, Bit>,
    pub place_past_va: Signal<In, Bit>,
    pub place_record_va: Signal<In, Bits<64>>,
    pub place_footprint: Signal<In, Bits<12>>,
    pub place_old_tail: Signal<In, Bits<64>>,
    /// The tail after the record (`old_tail + footprint`).
    pub place_new_tail: Signal<In, Bits<64>>,

    // ---- The persist handshake (`Persist`): run in `Persist`; done, failed.
    pub persist_run: Signal<Out, Bit>,
    pub persist_done: Signal<In, Bit>,
    pub persist_failed: Signal<In, Bit>,

    // ---- The extend path (`Extend`, `OffloadService`).
    pub chase_ready: Signal<In, Bit>,
    pub kv_ready: Signal<In, Bit>,
    pub chase_start: Signal<Out, Bit>,
    pub kv_start: Signal<Out, Bit>,
    /// A new frame or descriptor is taken: the units and the service forget the last.
    pub unit_clear: Signal<Out, Bit>,
    /// The executor serves the unit (`Offload`); the unit's access failed its translation;
    /// its word's R beat arrives; its block is written.
    pub serving: Signal<Out, Bit>,
    pub unit_tr_fail: Signal<Out, Bit>,
    pub unit_word_in: Signal<Out, Bit>,
    pub unit_block_done: Signal<Out, Bit>,
    /// The service's state and requests (`OffloadService`'s outputs of the same names).
    pub unit_accessing: Signal<In, Bit>,
    pub unit_writing: Signal<In, Bit>,
    pub unit_access: Signal<In, Bit>,
    pub unit_access_va: Signal<In, Bits<64>>,
    pub unit_access_write: Signal<In, Bit>,
    pub unit_ring_lookup: Signal<In, Bit>,
    pub unit_ring_skip: Signal<In, Bit>,
    pub unit_ring_record: Signal<In, Bit>,
    pub unit_ring_status: Signal<In, Bits<8>>,
    pub unit_ring_value: Signal<In, Bits<64>>,
    pub unit_ans_valid: Signal<In, Bit>,
    pub unit_ans_status: Signal<In, Bits<8>>,
    pub unit_ans_arg0: Signal<In, Bits<64>>,
    pub unit_ans_replay: Signal<In, Bit>,
    pub unit_ans_read: Signal<In, Bit>,
    pub unit_ans_read_va: Signal<In, Bits<64>>,
    pub unit_ans_read_len: Signal<In, Bits<12>>,

    // ---- The slow path's RX ring: push the REQUEST descriptor (`SlowPush`).
    pub sp_rx_room: Signal<In, Bits<16>>,
    pub sp_rx_ready: Signal<In, Bit>,
    pub sp_push: Signal<Out, Bit>,

    // ---- The read-data stage's job: the response (a read's, or payload-less: `job_only`).
    pub job_valid: Signal<Out, Bit>,
    pub job_only: Signal<Out, Bit>,
    pub job_len: Signal<Out, Bits<12>>,
    pub job_hdr: Signal<Out, Bits<384>>,
    pub job_ready: Signal<In, Bit>,
    /// The response header built from the registers below (`ResponseHeader::response`), and
    /// the same with status OK and no payload (`response_ok`, a write's answer).
    pub resp_hdr: Signal<In, Bits<384>>,
    pub resp_ok_hdr: Signal<In, Bits<384>>,

    // ---- The request's registers, for the blocks that use them.
    pub header: Signal<Out, Bits<384>>,
    pub route: Signal<Out, Bits<256>>,
    pub client: Signal<Out, Bits<16>>,
    pub sync_key: Signal<Out, Bits<64>>,
    pub lane: Signal<Out, Bits<6>>,
    pub acc_len: Signal<Out, Bits<12>>,
    pub acc_need: Signal<Out, Bits<2>>,
    pub acc_two: Signal<Out, Bit>,
    pub acc_n1: Signal<Out, Bits<12>>,
    pub acc_pa1: Signal<Out, Bits<64>>,
    pub acc_pa2: Signal<Out, Bits<64>>,
    /// Beats the access spans (`(lane + len + 63) / 64`).
    pub acc_beats: Signal<Out, Bits<12>>,
    pub rsp_status: Signal<Out, Bits<8>>,
    pub rsp_flags: Signal<Out, Bits<8>>,
    pub rsp_plen: Signal<Out, Bits<16>>,
    pub rsp_use_arg0: Signal<Out, Bit>,
    pub rsp_arg0: Signal<Out, Bits<64>>,
    /// An Append's `arg1` (the top sends it when `append`).
    pub rsp_arg1: Signal<Out, Bits<64>>,
    pub append: Signal<Out, Bit>,
    pub seg_on: Signal<Out, Bit>,
    pub seg_index: Signal<Out, Bits<16>>,
    /// The answer's packet count (`pkt_count` of its responses).
    pub seg_total: Signal<Out, Bits<16>>,

    // ---- Registers.
    /// The executor's state.
    state: DFF<State>,
    /// The request's header bytes 0..48 (or a REPLY descriptor's header).
    hdr: DFF<Bits<384>>,
    /// The taken frame's opcode class and rules, registered with `hdr` (Dispatch's branch).
    cls: DispatchClass,
    /// Dispatch's decision on the taken frame (combinational, from registers).
    dsp: Dispatch,
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
    /// The response's length in bytes, header beat included.
    rs_len: DFF<Bits<12>>,
    /// The request uses the idempotence ring (`Opcode::uses_idempotence_ring`).
    once: DFF<Bit>,
    /// The executor's request's client (the RAS member).
    hcli: DFF<Bits<16>>,
    /// The idempotence ring's key for the sync unit: `{pid, client, req_id}` (pid at bits
    /// 48..64, client 32..48, req_id 0..32; a CN_ACK's `arg0` as its req_id), registered as
    /// the frame is taken, or a RING_RELEASE's member as its descriptor is, so the sync unit's
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
    /// The RX ring has room for a REQUEST beyond the notices' reserve (`sp_rx_room >
    /// RX_RESERVED_FOR_NOTICES`), registered: it reflects every descriptor pushed up to the
    /// cycle before, and a push (a REQUEST, or the executor's own page fault's notice) is
    /// always two cycles or more before the next Dispatch.
    room_ok: DFF<Bit>,
    /// Bytes from `vaq` to the end of its page, registered (`vaq` holds still while a
    /// translation runs: the earliest use is the translate stage's answer, three cycles after
    /// `vaq` is loaded with the translation's start), so the page-size arithmetic is not in
    /// front of the piece decisions: `(!vaq & pmask) + 1`, one carry chain.
    page_rem: DFF<Bits<32>>,
    /// The VA of the page after `vaq`'s (`(vaq | pmask) + 1`, i.e. `vaq + page_rem`): a
    /// straddling range's second piece, registered like `page_rem` (used at the first
    /// piece's answer, three cycles or more after `vaq` is loaded).
    va_next: DFF<Bits<64>>,
    /// The page-offset mask (`!(ones << page_shift)`), registered from the configuration.
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
    /// RX ring slots kept for PAGE_MAPPED notices (`RX_RESERVED_FOR_NOTICES`): a REQUEST
    /// needs more room than that.
    rx_reserved: Spec<16, { RX_RESERVED_FOR_NOTICES as u64 }>,
}

impl Logic for Executor {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            hdr,
            route_q,
            o,
            vaq,
            len,
            need,
            two,
            n1,
            piece,
            pa1,
            pa2,
            rs_status,
            rs_flags,
            rs_plen,
            rs_use_arg0,
            rs_arg0,
            rs_arg1,
            rs_len,
            once,
            hcli,
            ring_key,
            durable,
            ap,
            rd_seg,
            rd_i,
            rd_n,
            rd_more,
            room_ok,
            page_rem,
            va_next,
            pmask,
            one_page
        );
        clock!(self, clock, cls);
        // ---- The request's registers, out.
        self.header.next = self.hdr.q.val();
        self.route.next = self.route_q.q.val();
        self.client.next = self.hcli.q.val();
        self.sync_key.next = self.ring_key.q.val();
        self.lane.next = self.o.q.val();
        self.acc_len.next = self.len.q.val();
        self.acc_need.next = self.need.q.val();
        self.acc_two.next = self.two.q.val();
        self.acc_n1.next = self.n1.q.val();
        self.acc_pa1.next = self.pa1.q.val();
        self.acc_pa2.next = self.pa2.q.val();
        self.rsp_status.next = self.rs_status.q.val();
        self.rsp_flags.next = self.rs_flags.q.val();
        self.rsp_plen.next = self.rs_plen.q.val();
        self.rsp_use_arg0.next = self.rs_use_arg0.q.val();
        self.rsp_arg0.next = self.rs_arg0.q.val();
        self.rsp_arg1.next = self.rs_arg1.q.val();
        self.append.next = self.ap.q.val();
        self.seg_on.next = self.rd_seg.q.val();
        self.seg_index.next = self.rd_i.q.val();
        self.seg_total.next = self.rd_n.q.val();
        self.room_ok.d.next = self.sp_rx_room.val() > self.rx_reserved.val();

        // ---- Geometry of the current access.
        self.pmask.d.next = !(self.ones.val() << self.cfg_page_shift.val());
        self.page_rem.d.next = bit_cast::<32, 64>(!self.vaq.q.val() & self.pmask.q.val()) + 1;
        self.va_next.d.next = (self.vaq.q.val() | self.pmask.q.val()) + 1;
        self.one_page.d.next = (self.len.q.val() == 0)
            | (bit_cast::<32, 12>(self.len.q.val() - 1)
                <= bit_cast::<32, 64>(!self.vaq.q.val() & self.pmask.q.val()));
        self.kt.next = (bit_cast::<12, 6>(self.o.q.val()) + self.len.q.val() + 63) >> 6;
        if self.two.q.val() {
            self.k1.next = (bit_cast::<12, 6>(self.o.q.val()) + self.n1.q.val()) >> 6;
        } else {
            self.k1.next = self.kt.val();
        }
        self.acc_beats.next = self.kt.val();

        // ---- What the state says to the other blocks.
        self.x_only.next = self.state.q.val() == State::Resp;
        self.persist_run.next = self.state.q.val() == State::Persist;
        self.sp_tx_act.next = self.state.q.val() == State::SpTx;
        self.seg_load.next = self.state.q.val() == State::Dispatch;
        self.seg_step.next = false;
        self.serving.next = self.state.q.val() == State::Offload;
        self.word_sample.next = self.state.q.val() == State::SData;
        self.beat_pte.next = self.state.q.val() == State::SpPte;
        self.beat_word.next = self.state.q.val() == State::SWrite;
        self.sp_push.next = self.state.q.val() == State::SlowPush;
        self.dispatch_lookup.next =
            (self.state.q.val() == State::Dispatch) & self.ahead_rw.val() & !self.ahead_ok.val();
        // The unit's access failed its translation; its word's R beat arrives; its block is
        // written.
        self.unit_tr_fail.next = (self.state.q.val() == State::Translate)
            & self.tr_done.val()
            & (self.tr_status.val() != self.st_ok.val());
        self.u_word_in.next = (self.state.q.val() == State::SData)
            & self.unit_accessing.val()
            & self.r_valid.val()
            & self.r_idle.val();
        self.u_block_done.next = (self.state.q.val() == State::SWrite)
            & !self.w_busy.val()
            & self.beat_done.val()
            & self.unit_writing.val();
        self.unit_word_in.next = self.u_word_in.val();
        self.unit_block_done.next = self.u_block_done.val();

        // ---- Dispatch's decision (applied in Dispatch).
        self.dsp.is_read.next = self.cls.is_read.val();
        self.dsp.is_write.next = self.cls.is_write.val();
        self.dsp.is_slow.next = self.cls.is_slow.val();
        self.dsp.is_fence.next = self.cls.is_fence.val();
        self.dsp.is_cn_ack.next = self.cls.is_cn_ack.val();
        self.dsp.is_kv.next = self.cls.is_kv.val();
        self.dsp.is_chase.next = self.cls.is_chase.val();
        self.dsp.is_append.next = self.cls.is_append.val();
        self.dsp.is_extend.next = self.cls.is_extend.val();
        self.dsp.needs_key.next = self.cls.needs_key.val();
        self.dsp.parse_ok.next = self.parse_ok.val();
        self.dsp.read_ok.next = self.ahead_read_ok.val();
        self.dsp.write_ok.next = self.ahead_write_ok.val();
        self.dsp.write_in_va.next = self.ahead_write_in_va.val();
        self.dsp.append_ok.next = self.append_ok.val();
        self.dsp.chase_ok.next = self.chase_ok.val();
        self.dsp.atomic_ok.next = self.atomic_ok.val();
        self.dsp.ahead_ok.next = self.ahead_ok.val();
        self.dsp.key_ok.next = self.key_ok.val();
        self.dsp.durable.next = self.h_durable.val();
        self.dsp.persist.next = self.cfg_persist.val();
        self.dsp.room_ok.next = self.room_ok.q.val();
        self.dsp.fence_clear.next = self.fence_clear.val();
        self.dsp.kv_ready.next = self.kv_ready.val();
        self.dsp.chase_ready.next = self.chase_ready.val();

        // ---- Defaults.
        self.cls.load.next = false;
        self.cls.opcode.next = self.next_hdr.val().get_bits::<8>(8);
        self.ar_own.next = false;
        self.ar_valid.next = false;
        self.ar_addr.next = self.pa1.q.val() & !bit_cast::<64, 6>(0x3F.into());
        self.ar_len.next = 0.into();
        self.aw_own.next = false;
        self.aw_valid.next = false;
        self.aw_addr.next = 0.into();
        self.aw_len.next = 0.into();
        self.job_valid.next = false;
        self.job_only.next = self.x_only.val();
        self.job_len.next = self.rs_len.q.val();
        if self.x_only.val() {
            self.job_len.next = self.header_len.val();
        }
        self.job_hdr.next = self.resp_hdr.val();
        self.tr_start.next = false;
        self.tr_va.next = self.vaq.q.val();
        self.tr_hit_take.next = false;
        self.ring_lookup.next = false;
        self.ring_ack.next = false;
        self.ring_skip.next = false;
        self.ring_record.next = false;
        self.ring_rec_status.next = self.st_ok.val();
        self.ring_rec_value.next = self.word_old.val();
        self.ring_rec_arg1.next = 0.into();
        self.alu_load.next = false;
        self.tail_load.next = false;
        self.place_load.next = false;
        self.chase_start.next = false;
        self.kv_start.next = false;
        self.unit_clear.next = false;
        self.stat_nack.next = false;
        self.stat_denied.next = false;
        self.sp_tx_ready.next = false;
        self.desc_take.next = false;
        self.x_take.next = false;
        self.x_done.next = false;
        self.x_free.next = false;
        self.rd_hand.next = false;
        self.wr_hand.next = false;
        self.hit_go.next = false;
        self.hit_pa.next = self.ahead_pa.val();
        self.hit_len.next = self.len.q.val();
        self.hit_need.next = self.need.q.val();

        match self.state.q.val() {
            State::Idle => {
                // Ready does not wait for valid: every output comes from registers, so the
                // cosimulation can sample them without settling the inputs first. Nothing is
                // taken until the key table's zero sweep after reset is done. The frame or
                // descriptor is taken below (`x_free`).
                self.sp_tx_ready.next = self.keys_ready.val();
                self.x_free.next = true;
            }
            State::Dispatch => {
                // The decision is `dsp`'s (wired above, module `dispatch`); here it is applied.
                self.piece.d.next = false;
                self.once.d.next = self.cls.uses_ring.val();
                self.rs_status.d.next = self.dsp.status.val();
                self.stat_denied.next = self.dsp.denied.val();
                self.ring_ack.next = self.dsp.ring_ack.val();
                self.kv_start.next = self.dsp.kv_start.val();
                self.chase_start.next = self.dsp.chase_start.val();
                self.state.d.next = State::Resp;
                if self.dsp.to_translate.val() {
                    // (A read's `data_va` is its `va`.)
                    self.tr_start.next = true;
                    self.tr_va.next = self.data_va.val();
                    self.state.d.next = State::Translate;
                }
                if self.dsp.to_slow_push.val() {
                    self.state.d.next = State::SlowPush;
                }
                if self.dsp.to_offload.val() {
                    self.state.d.next = State::Offload;
                }
                if self.dsp.to_sync_check.val() {
                    self.ring_lookup.next = true;
                    self.state.d.next = State::SyncCheck;
                }
                if self.dsp.fence_wait.val() {
                    // A FENCE waits for every earlier write's B response.
                    self.state.d.next = State::Dispatch;
                }
                if self.dsp.branch_read.val() {
                    // READ: answered one packet per KiB, packet 0 first (each packet of the
                    // answer is a read of its own bytes: RData goes on with the next,
                    // translating as it reaches each page).
                    self.vaq.d.next = self.h_va.val();
                    self.o.d.next = self.h_va.val().get_bits::<6>(0);
                    self.len.d.next = self.ahead_len.val();
                    self.need.d.next = self.need_read.val();
                    self.rd_i.d.next = 0.into();
                    self.rd_n.d.next = self.seg_count.val();
                    self.rd_more.d.next = self.seg_count.val() > 1;
                }
                if self.dsp.read_go.val() {
                    self.rd_seg.d.next = true;
                    self.rs_len.d.next = self.ahead_len.val() + self.header_len.val();
                    self.rs_plen.d.next = bit_cast::<16, 12>(self.ahead_len.val());
                }
                if self.dsp.branch_write.val() {
                    // The packet's first byte (`Decode::data_va`: exact once the checks hold,
                    // the only case it is used).
                    self.vaq.d.next = self.data_va.val();
                    self.len.d.next = bit_cast::<12, 16>(self.h_plen.val());
                    self.need.d.next = self.need_write.val();
                    self.durable.d.next = self.h_durable.val();
                }
                if self.dsp.branch_word.val() {
                    // An atomic's word, or an Append's tail word (read and written as one).
                    self.vaq.d.next = self.h_va.val();
                    self.len.d.next = self.atomic_bytes.val();
                    self.need.d.next = self.need_atomic.val();
                }
                if self.dsp.branch_append.val() {
                    self.durable.d.next = self.h_durable.val();
                }
                self.ap.d.next = self.dsp.append_go.val();
                if self.dsp.hit.val() {
                    // Translated ahead: the first page is mapped, permitted and holds the
                    // packet's first bytes, so straight to the access (`hit_go`).
                    self.hit_go.next = true;
                    self.hit_pa.next = self.ahead_pa.val();
                    self.hit_len.next = bit_cast::<12, 16>(self.h_plen.val());
                    self.hit_need.next = self.need_write.val();
                    if self.dsp.branch_read.val() {
                        self.hit_len.next = self.ahead_len.val();
                        self.hit_need.next = self.need_read.val();
                    }
                }
            }
            State::SyncCheck => {
                self.rs_use_arg0.d.next = true;
                self.rs_status.d.next = self.ring_status.val();
                self.rs_arg0.d.next = self.ring_value.val();
                // (A replayed Append's `arg1` is the new tail it recorded.)
                self.rs_arg1.d.next = self.ring_arg1.val();
                if self.once.q.val() & self.ring_hit.val() {
                    self.state.d.next = State::Resp;
                } else if self.once.q.val() & self.ring_full.val() {
                    // The slot at the write pointer is unacknowledged: retry later, and the
                    // pointer moves past it so the next attempt takes the next slot.
                    self.ring_skip.next = true;
                    self.rs_use_arg0.d.next = false;
                    self.rs_status.d.next = self.st_retry_later.val();
                    self.state.d.next = State::Resp;
                } else if self.h_va.val().get_bits::<16>(48) != 0 {
                    // Beyond the 48-bit VA space no PTE can match.
                    self.rs_use_arg0.d.next = false;
                    self.rs_status.d.next = self.st_unmapped.val();
                    self.state.d.next = State::Resp;
                } else {
                    self.rs_use_arg0.d.next = false;
                    self.tr_start.next = true;
                    self.state.d.next = State::Translate;
                }
                if self.ap.q.val() & !(self.once.q.val() & self.ring_hit.val()) {
                    // An Append answers arg0 = 0 unless it appended (or is replayed).
                    self.rs_arg0.d.next = 0.into();
                    self.rs_arg1.d.next = bit_cast::<64, 12>(self.place_footprint.val());
                }
            }
            State::Translate => {
                if self.tr_only_hit.val()
                    & !self.piece.q.val()
                    & !self.unit_accessing.val()
                    & self.one_page.q.val()
                {
                    // A request's only page (not an offload's access), mapped and permitted
                    // in the TLB: on to the access now (`hit_go`).
                    self.hit_go.next = true;
                    self.hit_pa.next = self.tr_hit_pa.val();
                    self.hit_len.next = self.len.q.val();
                    self.hit_need.next = self.need.q.val();
                }
                if self.tr_done.val() {
                    if self.piece.q.val() {
                        self.pa2.d.next = self.tr_pa.val();
                    } else {
                        self.pa1.d.next = self.tr_pa.val();
                    }
                    // Second page of a straddling range, or the access.
                    if !self.piece.q.val() {
                        self.n1.d.next = self.len.q.val();
                        self.two.d.next = false;
                        if !self.one_page.q.val() {
                            self.n1.d.next = bit_cast::<12, 32>(self.page_rem.q.val());
                            self.two.d.next = true;
                        }
                    }
                    if (self.tr_status.val() != self.st_ok.val()) & self.unit_accessing.val() {
                        // An offload's access failed: the unit is told (`xs.tr_fail`), and
                        // answers.
                        self.state.d.next = State::Offload;
                    } else if self.tr_status.val() != self.st_ok.val() {
                        self.rs_status.d.next = self.tr_status.val();
                        self.rs_plen.d.next = 0.into();
                        self.rs_len.d.next = self.header_len.val();
                        self.state.d.next = State::Resp;
                    } else if !self.piece.q.val() & !self.one_page.q.val() {
                        self.piece.d.next = true;
                        self.tr_va.next = self.va_next.q.val();
                        self.tr_start.next = true;
                        self.state.d.next = State::Translate;
                    } else {
                        self.piece.d.next = false;
                        if self.unit_writing.val() {
                            // An offload's block write: AW and W as an atomic's write-back (its
                            // request's first access was a read, after every earlier read).
                            self.state.d.next = State::SWrite;
                        } else if self.unit_accessing.val() {
                            self.state.d.next = State::SAddr;
                        } else if self.need.q.val() == self.need_read.val() {
                            self.state.d.next = State::RAddr;
                        } else if self.need.q.val() == self.need_write.val() {
                            self.state.d.next = State::WAddr;
                        } else {
                            self.state.d.next = State::SAddr;
                        }
                    }
                }
            }
            State::WAddr => {
                // The bursts' addresses; their data follows from the write-data stage. Not
                // before every earlier read has its data (write-after-read order: AXI does not
                // order a later write against an earlier read).
                self.aw_own.next = true;
                self.aw_valid.next = self.write_clear.val();
                if self.piece.q.val() {
                    self.aw_addr.next = self.pa2.q.val() & !bit_cast::<64, 6>(0x3F.into());
                    self.aw_len.next = bit_cast::<8, 12>(self.kt.val() - self.k1.val() - 1);
                } else {
                    self.aw_addr.next = self.pa1.q.val() & !bit_cast::<64, 6>(0x3F.into());
                    self.aw_len.next = bit_cast::<8, 12>(self.k1.val() - 1);
                }
                if self.aw_ready.val() & self.write_clear.val() {
                    if self.two.q.val() & !self.piece.q.val() {
                        self.piece.d.next = true;
                    } else {
                        // WData unless the hand-over below happens now.
                        self.wr_hand.next = true;
                        self.state.d.next = State::WData;
                    }
                }
            }
            State::WData => {
                // Waits here while the write-data stage streams an earlier write.
                self.wr_hand.next = true;
            }
            State::Persist => {
                // A durable write: once its data is in DRAM, the board makes each page piece
                // durable (and an Append's tail word after its record): the persist handshake.
                if self.persist_done.val() {
                    self.state.d.next = State::Resp;
                    if self.persist_failed.val() {
                        // Not known durable: the client retries the write.
                        self.rs_status.d.next = self.st_retry_later.val();
                    }
                }
            }
            State::RAddr => {
                // After every earlier data write has its B response (read-after-write order).
                self.ar_own.next = true;
                self.ar_valid.next = self.read_clear.val();
                if self.piece.q.val() {
                    self.ar_addr.next = self.pa2.q.val() & !bit_cast::<64, 6>(0x3F.into());
                    self.ar_len.next = bit_cast::<8, 12>(self.kt.val() - self.k1.val() - 1);
                } else {
                    self.ar_len.next = bit_cast::<8, 12>(self.k1.val() - 1);
                }
                if self.ar_ready.val() & self.read_clear.val() {
                    if self.two.q.val() & !self.piece.q.val() {
                        self.piece.d.next = true;
                    } else {
                        // RData unless the hand-over below happens now.
                        self.rd_hand.next = true;
                        self.state.d.next = State::RData;
                    }
                }
            }
            State::RData => {
                // Waits here while the read-data stage and its queue are both full (they wait
                // for the transmit stage).
                self.rd_hand.next = true;
            }
            State::SAddr => {
                self.ar_own.next = true;
                self.ar_valid.next = self.atomic_clear.val();
                if self.ar_ready.val() & self.atomic_clear.val() {
                    self.state.d.next = State::SData;
                }
            }
            State::SData => {
                // The word is registered each cycle here (`wa.sample`): the one of the cycle
                // the R beat arrives is what SAlu (an atomic) or ALoad (Append's tail) reads.
                if self.u_word_in.val() {
                    // An offload's word: its block goes to the unit now (`xs.word_in`).
                    self.state.d.next = State::Offload;
                } else if self.r_valid.val() & self.r_idle.val() & self.ap.q.val() {
                    self.state.d.next = State::ALoad;
                } else if self.r_valid.val() & self.r_idle.val() {
                    self.state.d.next = State::SAlu;
                }
            }
            State::SAlu => {
                self.rs_status.d.next = self.st_ok.val();
                self.rs_use_arg0.d.next = true;
                self.rs_arg0.d.next = self.word_old.val();
                self.alu_load.next = true;
                self.ring_record.next = self.once.q.val();
                if self.alu_write.val() {
                    self.state.d.next = State::SWrite;
                } else {
                    self.state.d.next = State::Resp;
                }
            }
            State::ALoad => {
                // The registered tail word into the placement's sums; placed next cycle.
                self.place_load.next = true;
                self.state.d.next = State::APlace;
            }
            State::APlace => {
                // Placed, the record's range is translated with write permission (one or two
                // pages) like a write's.
                self.state.d.next = State::Resp;
                if self.place_log_full.val() {
                    self.rs_status.d.next = self.st_log_full.val();
                } else if self.place_past_va.val() {
                    self.rs_status.d.next = self.st_bad_request.val();
                } else {
                    self.vaq.d.next = self.place_record_va.val();
                    self.tr_va.next = self.place_record_va.val();
                    self.o.d.next = self.place_record_va.val().get_bits::<6>(0);
                    self.len.d.next = self.place_footprint.val();
                    self.need.d.next = self.need_write.val();
                    self.piece.d.next = false;
                    self.tr_start.next = true;
                    self.state.d.next = State::Translate;
                }
            }
            State::SWrite => {
                // The W channel is the write-data stage's until it is done.
                // The word (or the offload's block) goes out through the one-beat writer.
                if !self.w_busy.val() {
                    if self.u_block_done.val() {
                        // The offload's block is written: the unit is told.
                        self.state.d.next = State::Offload;
                    } else if self.beat_done.val() & self.ap.q.val() {
                        self.ring_record.next = self.once.q.val();
                        self.ring_rec_value.next = self.place_old_tail.val();
                        self.ring_rec_arg1.next = self.place_new_tail.val();
                        self.rs_status.d.next = self.st_ok.val();
                        self.rs_arg0.d.next = self.place_old_tail.val();
                        self.rs_arg1.d.next = self.place_new_tail.val();
                        if self.durable.q.val() {
                            self.state.d.next = State::Persist;
                        } else {
                            self.state.d.next = State::Resp;
                        }
                    } else if self.beat_done.val() {
                        self.state.d.next = State::Resp;
                    }
                }
            }
            State::Offload => {
                // Serve the offload unit (`OffloadService`): its access (a word read, or
                // Clio-KV's block write) goes through the translation of the request's RAS, or
                // the store's (`xs.own`), like a Read's (a Write's permission for a write); its
                // answer, a cycle after the unit gives it, is the response, with a payload read
                // like a Read's when it asks for one.
                // Clio-KV's put or delete asks the idempotence ring under the caller's
                // (pid, client, req_id): looked up now, the verdict to the unit next cycle,
                // the write pointer moved past an unacknowledged slot.
                self.ring_lookup.next = self.unit_ring_lookup.val();
                self.ring_skip.next = self.unit_ring_skip.val();
                if self.unit_access.val() {
                    self.vaq.d.next = self.unit_access_va.val();
                    self.tr_va.next = self.unit_access_va.val();
                    // An 8-byte aligned word, read as an atomic's.
                    self.len.d.next = self.atomic_bytes.val();
                    self.need.d.next = self.need_read.val();
                    if self.unit_access_write.val() {
                        // A 64-byte block (aligned: one page), kept with its strobes.
                        self.len.d.next = self.block_bytes.val();
                        self.need.d.next = self.need_write.val();
                    }
                    self.piece.d.next = false;
                    self.tr_start.next = true;
                    self.state.d.next = State::Translate;
                }
                if self.unit_ans_valid.val() {
                    // A Clio-KV put or delete that executed records its answer (errors too,
                    // with value 0); a replay is the request's header with the recorded status
                    // and arg0, nothing else.
                    self.ring_record.next = self.unit_ring_record.val();
                    self.ring_rec_status.next = self.unit_ring_status.val();
                    self.ring_rec_value.next = self.unit_ring_value.val();
                    self.rs_status.d.next = self.unit_ans_status.val();
                    self.rs_plen.d.next = 0.into();
                    self.rs_arg0.d.next = self.unit_ans_arg0.val();
                    self.rs_use_arg0.d.next = self.unit_ans_replay.val();
                    self.state.d.next = State::Resp;
                    if self.unit_ans_read.val() {
                        self.vaq.d.next = self.unit_ans_read_va.val();
                        self.tr_va.next = self.unit_ans_read_va.val();
                        self.o.d.next = self.unit_ans_read_va.val().get_bits::<6>(0);
                        self.len.d.next = self.unit_ans_read_len.val();
                        self.need.d.next = self.need_read.val();
                        self.piece.d.next = false;
                        self.rs_len.d.next = self.unit_ans_read_len.val() + self.header_len.val();
                        self.rs_plen.d.next = bit_cast::<16, 12>(self.unit_ans_read_len.val());
                        self.tr_start.next = true;
                        self.state.d.next = State::Translate;
                    }
                }
            }
            State::Resp => {
                // Payload-less response: its header beat goes to the read-data stage like a
                // read's job (below), and the executor goes on.
                self.rd_hand.next = true;
            }
            State::SlowPush => {
                // REQUEST (`sp_push`: `SlowPathDesc::request`): kind, the member (client, u16
                // LE at byte 2), route, header bytes 0..48 (never the key).
                if self.sp_rx_ready.val() {
                    self.state.d.next = State::Drain;
                }
            }
            State::SpTx => {
                // The descriptor's actions are `sptx`'s (wired above); the executor waits for a
                // PTE_WRITE's beat, or sends a REPLY's header as a payload-less response along
                // its route.
                self.state.d.next = State::Drain;
                if self.desc_to_pte.val() {
                    self.state.d.next = State::SpPte;
                }
                if self.desc_reply.val() {
                    self.route_q.d.next = self.desc_route.val();
                    self.hdr.d.next = self.desc_header.val();
                    self.rs_status.d.next = self.desc_reply_status.val();
                    self.rs_flags.d.next = self.desc_reply_flags.val();
                    self.rs_plen.d.next = 0.into();
                    self.rs_use_arg0.d.next = false;
                    self.state.d.next = State::Resp;
                }
            }
            State::SpPte => {
                // The W channel is the write-data stage's until it is done.
                // The PTE goes out through the one-beat writer (as a fault's write-back does).
                if self.beat_done.val() {
                    self.state.d.next = State::Drain;
                }
            }
            State::Drain => {
                // Writes still in flight need not finish here: every DRAM read (walk, read,
                // atomic) waits for all B responses first, so it sees them.
                self.x_done.next = true;
                self.x_free.next = true;
                self.state.d.next = State::Idle;
            }
        }
        // ---- A translated request's only page hit (the translate stage's `only_hit`, or Dispatch
        // with the look-ahead's translation): straight on to its access, the work of the
        // translation's `done` cycle done here.
        if self.hit_go.val() {
            // (From Translate: the translate stage's hit, taken now.)
            self.tr_hit_take.next = self.state.q.val() == State::Translate;
            self.pa1.d.next = self.hit_pa.val();
            self.n1.d.next = self.hit_len.val();
            self.two.d.next = false;
            if self.hit_need.val() == self.need_read.val() {
                self.state.d.next = State::RAddr;
            } else if self.hit_need.val() == self.need_write.val() {
                self.state.d.next = State::WAddr;
            } else {
                self.state.d.next = State::SAddr;
            }
        }
        // ---- Hand-overs from the executor: RData, or RAddr in the cycle its last address
        // goes out; WData, or WAddr likewise. A read or write that finds its next stage free
        // spends no cycle waiting in RData / WData.
        if self.rd_hand.val() {
            // Hand the response (a read's job, or a payload-less one) to the read-data stage;
            // it takes it straight in or queues it while it works on another (a read's beats
            // wait in DRAM meanwhile), so the executor goes on with the next request and the
            // next read's address goes out early enough to hide the DRAM latency. This waits
            // only while the stage's queue is full (it waits for the transmit stage).
            // A read's answer goes on with its next packet.
            self.job_valid.next = true;
            if self.job_ready.val() {
                self.x_done.next = true;
                self.x_free.next = true;
                self.state.d.next = State::Idle;
            }
            if self.x_done.val() & self.rd_seg.q.val() & self.rd_more.q.val() & !self.x_only.val() {
                self.seg_step.next = true;
                self.rd_i.d.next = self.rd_i.q.val() + 1;
                self.rd_more.d.next = bit_cast::<17, 16>(self.rd_i.q.val()) + 2
                    < bit_cast::<17, 16>(self.rd_n.q.val());
                self.vaq.d.next = self.seg_next_va.val();
                self.tr_va.next = self.seg_next_va.val();
                self.len.d.next = self.seg_next_len.val();
                self.rs_len.d.next = self.seg_next_len.val() + self.header_len.val();
                self.rs_plen.d.next = bit_cast::<16, 12>(self.seg_next_len.val());
                self.piece.d.next = false;
                self.x_free.next = false;
                self.tr_start.next = true;
                self.state.d.next = State::Translate;
            }
        }
        // Hand the data beats to the write-data stage once it is free; the slot goes
        // with them, and the response follows at once (later reads wait for the B).
        self.w_pass.next = self.wr_hand.val() & !self.w_busy.val();
        if self.w_pass.val() {
            self.rs_status.d.next = self.st_ok.val();
            if self.ap.q.val() {
                self.tail_load.next = true;
                self.state.d.next = State::SWrite;
            } else if self.durable.q.val() {
                self.state.d.next = State::Persist;
            } else {
                // A plain write's OK answer (header only) goes to the read-data stage in the
                // same cycle when it takes it, and the executor takes the next frame.
                self.state.d.next = State::Resp;
                self.job_valid.next = true;
                self.job_only.next = true;
                self.job_len.next = self.header_len.val();
                self.job_hdr.next = self.resp_ok_hdr.val();
                if self.job_ready.val() {
                    self.x_free.next = true;
                    self.state.d.next = State::Idle;
                }
            }
        }
        // ---- Take the next frame or descriptor (`x_free`: idle, or finishing a request with
        // nothing after it). A descriptor is taken from Idle only (its `sp_tx_ready` comes
        // from registers): a finishing request that sees one waiting goes to Idle first.
        if self.x_free.val() {
            self.rs_flags.d.next = self.flags_response.val();
            self.rs_plen.d.next = 0.into();
            self.rs_use_arg0.d.next = false;
            self.ap.d.next = false;
            self.unit_clear.next = true;
            self.rd_seg.d.next = false;
            self.rs_len.d.next = self.header_len.val();
            if self.keys_ready.val() & self.sp_tx_valid.val() {
                if self.state.q.val() == State::Idle {
                    self.desc_take.next = true;
                    self.ring_key.d.next = bit_cast::<64, 32>(self.desc_member.val()) << 32;
                    self.state.d.next = State::SpTx;
                }
            } else if self.keys_ready.val() & self.next_full.val() {
                // Take the received frame: its header, route and offset, and act on the
                // ack layer's verdict (drop, NACK, or dispatch next cycle). Its key is
                // looked up this cycle (above), for Dispatch.
                self.x_take.next = true;
                self.hdr.d.next = self.next_hdr.val();
                self.cls.load.next = true;
                self.hcli.d.next = self.next_client.val();
                self.ring_key.d.next = self.next_ring_key.val();
                self.route_q.d.next = self.next_route.val();
                self.o.d.next = self.next_lane.val();
                if self.next_verdict.val().get_bit(0) {
                    self.state.d.next = State::Drain;
                } else if self.next_verdict.val().get_bit(1) {
                    self.stat_nack.next = true;
                    self.rs_status.d.next = self.st_nack.val();
                    self.state.d.next = State::Resp;
                } else {
                    self.state.d.next = State::Dispatch;
                }
            }
        }
        self.take.next = self.x_take.val();
        self.done.next = self.x_done.val();
        self.pass.next = self.w_pass.val();
        // A TLB hit for the statistics: a look-ahead translation taken in Dispatch.
        self.ahead_hit.next = self.hit_go.val() & (self.state.q.val() == State::Dispatch);
        if self.reset.val() {
            self.state.d.next = State::Idle;
        }
    }
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

#[cfg(test)]
mod tests;
