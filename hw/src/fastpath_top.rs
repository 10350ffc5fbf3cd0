//! The fast path's top: network RX/TX, DRAM AXI4 master and slow-path rings around the
//! stage blocks of `crate::fastpath` (and the TLB, key table and sync unit they share).
//!
//! Six stages run side by side, each moving one 512-bit beat per cycle: the ingest stage
//! receives frames into four `wbuf` slots (CRC checked as they stream, payload realigned to
//! DRAM lanes); the TLB look-ahead ([`TranslateAhead`]) translates the reads and writes
//! waiting there; the executor takes them in order and runs each request's class (the
//! dispatch decode's checks, [`Decode`]; one or two pages through the translate stage,
//! [`Translate`]: TLB, else walk + page fault, or the page-fault unit straight from a TLB
//! entry of an allocated page; atomics; the offloads on the extend port, [`Extend`];
//! slow-path descriptors); the write-data
//! stage streams a write's W beats from its slot; the read-data stage ([`ReadData`]) takes a
//! read's R beats and builds every response in request order (a queue of 16 addressed reads
//! and payload-less responses, so later reads' addresses go out while it works and the DRAM
//! latency is hidden); the transmit stage ([`Transmit`]) sends finished responses from two `txbuf`
//! slots. Writes do not wait for their B responses: reads wait for the writes they could
//! see, writes for earlier reads' data. The behaviour is `sim::model::board::CBoard::handle` / `service`; see
//! `docs/hardware.md` for the pipeline, the ports, the cycle counts and the documented
//! differences. A read of up to `MAX_REQUEST_LEN` bytes is answered one packet per KiB
//! ([`ReadSeg`]), each packet translated, read and sent in turn.
//!
//! The header is one beat (64 bytes): the payload starts at beat 1, so the RX and TX
//! realignment shifts by the VA's lane offset only. Every request but Register must carry its
//! RAS's key: the executor looks the pid up in the key table ([`KeyTable`]) as it takes the
//! frame, and Dispatch answers DENIED, after `Header::parse`'s checks and before anything
//! executes, when the key does not open the pid. Responses carry header bytes 0..48 and zeros
//! in 48..64 (never the key).

use crate::fastpath::append_place::AppendPlace;
use crate::fastpath::beat_writer::BeatWriter;
use crate::fastpath::decode::Decode;
use crate::fastpath::extend::Extend;
use crate::fastpath::ingest::Ingest;
use crate::fastpath::offload_service::OffloadService;
use crate::fastpath::ordering::Ordering;
use crate::fastpath::persist::Persist;
use crate::fastpath::pte_writer::PteWriter;
use crate::fastpath::read_data::ReadData;
use crate::fastpath::response_header::ResponseHeader;
use crate::fastpath::slot_queue::SlotQueue;
use crate::fastpath::slow_path_desc::SlowPathDesc;
use crate::fastpath::slow_path_tx::SlowPathTx;
use crate::fastpath::stats::Stats;
use crate::fastpath::translate::Translate;
use crate::fastpath::translate_ahead::TranslateAhead;
use crate::fastpath::transmit::Transmit;
use crate::fastpath::word_access::WordAccess;
use crate::fastpath::write_data::WriteData;
use crate::key_table::KeyTable;
use crate::read_seg::ReadSeg;
use crate::spec::Spec;
use crate::sync_unit::SyncUnit;
use crate::tlb::Tlb;
use clio_proto::consts::{
    ATOMIC_BYTES, BEAT_BYTES, BUCKET_BYTES, BUCKET_SLOTS, DATAPATH_BITS, MAX_PAYLOAD,
    MAX_PAYLOAD_SHIFT, PTE_BYTES, VA_BITS, VA_LIMIT,
};
use clio_proto::header::{FLAG_RESPONSE, HEADER_LEN, ROUTED_HEADER_LEN};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::replog;
use clio_proto::ring::RX_RESERVED_FOR_NOTICES;
use clio_proto::{Opcode, Status};
use rust_hdl::prelude::*;

// Every value the kernel compares with or assigns (statuses, opcodes, descriptor kinds,
// lengths, PTE masks) is a `Spec` field of `FastpathTop` built from proto (see `crate::spec`).
// Bit positions and shift amounts must be literals in a rust-hdl kernel: each literal used
// below is pinned to proto by one of these asserts (byte k of a beat or descriptor is bits
// 8k..8k+8; the header's fields are read by `Decode`, which pins its own).
const _: () = assert!(
    DATAPATH_BITS == 512 && BEAT_BYTES == 64,
    "beats of 64 bytes (>> 6)"
);
// Payload segmentation: `<< 10`, `>> 10` multiply and divide by MAX_PAYLOAD.
const _: () = assert!(MAX_PAYLOAD == 1 << MAX_PAYLOAD_SHIFT && MAX_PAYLOAD_SHIFT == 10);
// The VA space: bits 48.. of a VA must be zero (`get_bits::<16>(48)`).
const _: () = assert!(VA_BITS == 48 && VA_LIMIT == 1 << 48);
// Atomics: an 8-byte word, aligned (`get_bits::<3>(0) == 0`), strobes `0xFF << lane`.
const _: () = assert!(ATOMIC_BYTES == 8);
// Page table: bucket * 256 + slot * 16 (`<< 8`, `<< 4`), a slot index of 4 bits (the TLB's
// `bucket << 4 | slot` location of an allocated PTE), a PTE written as 16 strobed bytes at
// `addr[5:4] * 16` of its beat.
const _: () = assert!(BUCKET_BYTES == 1 << 8 && PTE_BYTES == 1 << 4 && BUCKET_SLOTS == 1 << 4);
const _: () = assert!(
    HEADER_LEN == 64 && ROUTED_HEADER_LEN == 48,
    "one-beat header"
);
// Append (`proto::replog`; the placement's own literals are pinned in `AppendPlace`): the tail
// word is read at the log's VA itself, and the largest record is one packet (one wbuf slot)
// whose footprint fits the 12-bit access length `len`.
const _: () = assert!(
    replog::TAIL_OFFSET == 0
        && replog::MAX_RECORD as usize == MAX_PAYLOAD
        && replog::footprint(replog::MAX_RECORD) < 1 << 12
);

/// Statuses a response carries (`proto::Status`).
type St<const V: u64> = Spec<8, V>;
/// Opcodes the executor branches on (`proto::Opcode`).
type Op<const V: u64> = Spec<8, V>;
/// Access permissions needed, as the PTE's `READ | WRITE << 1` (`proto::pte::PERM_*`).
type Need<const V: u64> = Spec<2, V>;

/// Extra cycles of a first-touch page fault over a TLB hit, when the TLB holds the page's
/// allocated PTE (inserted with its PTE_WRITE): the page-fault unit, the PTE write-back /
/// PAGE_MAPPED cycle, and the translate stage's `done` cycle, which a hit on a request's only
/// page skips (measured by
/// `page_fault_latency_is_constant`).
pub const FAULT_OVER_HIT_CYCLES: u64 = 3;
/// Extra cycles of a first-touch page fault over a TLB miss whose walk finds a valid PTE, when
/// the allocated PTE is no longer in the TLB: the page-fault unit's answer, the fault's
/// write-back and notice, and the translation's `done` cycle, all of which the walk of a valid
/// PTE skips (its page is offered as `only_hit` in the walk's result cycle).
pub const FAULT_EXTRA_CYCLES: u64 = 3;
/// Extra cycles of a TLB miss over a TLB hit with the testbench's DRAM (read latency 5), for
/// a request's first page (a one-beat read), the `done` cycle included (a hit on a request's
/// only page skips it): the walk starts as the look-ahead's hash of the page comes out,
/// [`crate::hash_unit::HASH_LATENCY`] + 1 cycles after the header; then 6 more (the walker's
/// AR register, the bucket read, the slot compare, the executor taking the walked page as a
/// hit in the walk's result cycle), less the hit's own cycles. (Hashed by the walker itself,
/// once the TLB's miss is known, behind its AR queue, the page-fault unit and the translation's
/// `done` cycle, as every walk was before stop 31: 25.)
pub const WALK_EXTRA_CYCLES: u64 = crate::hash_unit::HASH_LATENCY as u64 + 6;

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

/// The fast path.
#[derive(LogicBlock, Default)]
pub struct FastpathTop {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// log2 of the page size.
    pub cfg_page_shift: Signal<In, Bits<5>>,
    /// Bucket count - 1 (the page table is at physical address 0).
    pub cfg_bucket_mask: Signal<In, Bits<32>>,
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
    /// TX beat valid.
    pub tx_valid: Signal<Out, Bit>,
    /// TX ready.
    pub tx_ready: Signal<In, Bit>,
    /// TX beat.
    pub tx_data: Signal<Out, Bits<512>>,
    /// TX byte enables.
    pub tx_keep: Signal<Out, Bits<64>>,
    /// TX last beat.
    pub tx_last: Signal<Out, Bit>,
    /// TX route (the request's).
    pub tx_route: Signal<Out, Bits<256>>,
    /// AXI AR address.
    pub m_axi_araddr: Signal<Out, Bits<64>>,
    /// AXI AR length - 1.
    pub m_axi_arlen: Signal<Out, Bits<8>>,
    /// AXI AR valid.
    pub m_axi_arvalid: Signal<Out, Bit>,
    /// AXI AR ready.
    pub m_axi_arready: Signal<In, Bit>,
    /// AXI R data.
    pub m_axi_rdata: Signal<In, Bits<512>>,
    /// AXI R last.
    pub m_axi_rlast: Signal<In, Bit>,
    /// AXI R valid.
    pub m_axi_rvalid: Signal<In, Bit>,
    /// AXI R ready (always 1).
    pub m_axi_rready: Signal<Out, Bit>,
    /// AXI AW address.
    pub m_axi_awaddr: Signal<Out, Bits<64>>,
    /// AXI AW length - 1.
    pub m_axi_awlen: Signal<Out, Bits<8>>,
    /// AXI AW valid.
    pub m_axi_awvalid: Signal<Out, Bit>,
    /// AXI AW ready.
    pub m_axi_awready: Signal<In, Bit>,
    /// AXI W data.
    pub m_axi_wdata: Signal<Out, Bits<512>>,
    /// AXI W strobes.
    pub m_axi_wstrb: Signal<Out, Bits<64>>,
    /// AXI W last.
    pub m_axi_wlast: Signal<Out, Bit>,
    /// AXI W valid.
    pub m_axi_wvalid: Signal<Out, Bit>,
    /// AXI W ready.
    pub m_axi_wready: Signal<In, Bit>,
    /// AXI B valid.
    pub m_axi_bvalid: Signal<In, Bit>,
    /// AXI B ready (always 1).
    pub m_axi_bready: Signal<Out, Bit>,
    /// The board has a persistence domain behind the DRAM port: a durable write
    /// (`FLAG_DURABLE`) is acknowledged only after its B responses and the persist handshake
    /// for its bytes. Tied low, durable writes are answered UNSUPPORTED and write nothing.
    pub cfg_persist: Signal<In, Bit>,
    /// Persist request: make `persist_len` bytes at physical address `persist_addr` durable.
    /// Raised after every B response of the write is in, held with the range until
    /// `persist_done`; one request per page piece of the packet.
    pub persist_valid: Signal<Out, Bit>,
    /// Persist request: first byte (physical, byte exact).
    pub persist_addr: Signal<Out, Bits<64>>,
    /// Persist request: length in bytes (1..=1024).
    pub persist_len: Signal<Out, Bits<12>>,
    /// The range of the held persist request is durable (one cycle; ends the request).
    pub persist_done: Signal<In, Bit>,
    /// With `persist_done`: the flush failed, the data is not known durable; the write is
    /// answered RETRY_LATER (the client sends it again).
    pub persist_error: Signal<In, Bit>,
    /// Slow-path RX descriptor valid (REQUEST, PAGE_MAPPED).
    pub sp_rx_valid: Signal<Out, Bit>,
    /// Slow-path RX ready.
    pub sp_rx_ready: Signal<In, Bit>,
    /// Slow-path RX descriptor (`proto::ring::Descriptor::encode`, byte k at bits 8k..).
    pub sp_rx_desc: Signal<Out, Bits<1024>>,
    /// Free RX ring slots (accounting for every descriptor accepted so far).
    pub sp_rx_room: Signal<In, Bits<16>>,
    /// Slow-path TX descriptor valid.
    pub sp_tx_valid: Signal<In, Bit>,
    /// Slow-path TX ready.
    pub sp_tx_ready: Signal<Out, Bit>,
    /// Slow-path TX descriptor (REPLY, PTE_WRITE, TLB_INVALIDATE, FREE_PAGE, KEY_WRITE,
    /// RING_RELEASE, KV_CONFIG).
    pub sp_tx_desc: Signal<In, Bits<1024>>,
    /// Frames received.
    pub stat_rx_pkts: Signal<Out, Bits<32>>,
    /// Packets sent.
    pub stat_tx_pkts: Signal<Out, Bits<32>>,
    /// NACKs sent.
    pub stat_nacks: Signal<Out, Bits<32>>,
    /// TLB hits.
    pub stat_tlb_hits: Signal<Out, Bits<32>>,
    /// TLB misses.
    pub stat_tlb_misses: Signal<Out, Bits<32>>,
    /// Buckets read.
    pub stat_bucket_reads: Signal<Out, Bits<32>>,
    /// Page faults served.
    pub stat_page_faults: Signal<Out, Bits<32>>,
    /// Requests denied by the key check.
    pub stat_denied: Signal<Out, Bits<32>>,
    /// The ingest stage: frames into the four `wbuf` slots (`crate::fastpath::ingest`).
    ingest: Ingest,
    /// TLB lookups for the reads and writes waiting in the ingest slots, while the executor
    /// works: a request whose page is translated ahead goes from Dispatch to its access.
    la: TranslateAhead,
    /// The executor looks the TLB up this cycle (the look-ahead gets the port otherwise).
    x_lk: Signal<Local, Bit>,
    /// Dispatch looks its frame's page up this cycle: a read or write the look-ahead has not
    /// translated, with the look-ahead's registers of its slot (`use_pid`, `use_vpn`), before
    /// the checks decide whether the translate stage starts (`start_looked`): the checks are not
    /// in front of the TLB's compare. A lookup for a request the checks refuse only touches the
    /// TLB's LRU order.
    x_dlk: Signal<Local, Bit>,
    /// The RAS keys (KEY_WRITE from the slow path), looked up as the executor takes a frame.
    keys: KeyTable,
    /// The dispatch stage's decode: the header's fields, the match-action table's rules and
    /// each class's format checks.
    dec: Decode,
    tlb: Tlb,
    /// The translate stage: one page of the executor's request, VA to PA (TLB lookup, walk,
    /// page fault with its write-back and notice).
    tr: Translate,
    /// The executor starts a translation this cycle (`tr.start`), of `t_va`'s page (from
    /// Dispatch, its page was looked up already: `x_dlk`).
    t_start: Signal<Local, Bit>,
    t_va: Signal<Local, Bits<64>>,
    /// The PTE writer: a fault's PTE or a slow-path PTE_WRITE, as the one-beat writer's beat.
    ptw: PteWriter,
    sync: SyncUnit,
    /// The extend path: the offload units (pointer chaser, Clio-KV) on the offload port
    /// bundle, Clio-KV's store and its payload feeder.
    ext: Extend,
    /// The executor's side of the offload port: the unit's accesses handed to the translate
    /// stage and their endings, its ring lookups, its answer registered and decided.
    xs: OffloadService,
    /// The pid the translation uses.
    t_pid: Signal<Local, Bits<16>>,
    /// Received payloads, DRAM-aligned: four slots of 32 blocks (address bits 5..7 = slot).
    wbuf: RAM<Bits<512>, 7>,
    /// Response beats 1.. (beat 0 is built apart): two slots of 32 beats.
    txbuf: RAM<Bits<512>, 6>,
    /// The executor's place in the ingest slots: its slot (taken in order) and whether it
    /// holds it, the slot it releases, the next frame and its fields.
    sq: SlotQueue,
    /// The executor takes the next frame this cycle.
    x_take: Signal<Local, Bit>,
    /// The executor finishes its request this cycle.
    x_done: Signal<Local, Bit>,
    /// The executor is free to take the next frame this cycle: it is idle, or it finishes its
    /// request and would go idle next cycle (so a frame is taken with no idle cycle between).
    x_free: Signal<Local, Bit>,
    /// The executor hands its response to the read-data stage this cycle if it can: a read's
    /// job (RData, or RAddr as its last address goes out) or a payload-less response (Resp).
    rd_hand: Signal<Local, Bit>,
    /// The executor hands a write's data to the write-data stage this cycle if it can (WData,
    /// or WAddr as its last address goes out).
    wr_hand: Signal<Local, Bit>,
    /// The write-data stage takes the executor's write (and its slot) this cycle.
    w_pass: Signal<Local, Bit>,
    /// The request's only page is translated (the translate stage's `only_hit`, or the look-ahead's in
    /// Dispatch): on to its access this cycle, at `hit_pa` for `hit_len` bytes, the access
    /// chosen by `hit_need` (read, write, or both: an atomic's).
    hit_go: Signal<Local, Bit>,
    hit_pa: Signal<Local, Bits<64>>,
    hit_len: Signal<Local, Bits<12>>,
    hit_need: Signal<Local, Bits<2>>,
    /// VA of a read's or write packet's first byte, from the header.
    d_va: Signal<Local, Bits<64>>,
    /// The write-data stage: streams a write's W beats from its slot while the executor goes
    /// on (it owns the W channel and the wbuf read port while busy).
    wd: WriteData,
    /// The executor's one-beat writes (PTE write-backs, atomics' words, offload blocks).
    bw: BeatWriter,
    /// The write-data stage is streaming (`WriteData::busy`).
    w_busy: Signal<Local, Bit>,
    /// The slot the write-data stage gives back this cycle (`WriteData::freed`).
    w_release: Signal<Local, Bits<4>>,
    /// The read-data stage: builds every response in request order (a read's from its R
    /// beats) and hands it to the transmit stage.
    rd: ReadData,
    /// The executor's response (a read, or a payload-less response from `Resp`) is
    /// payload-less (it is in `Resp`).
    x_only: Signal<Local, Bit>,
    /// The length of the executor's response (`rs_len`, or the header alone in `Resp`).
    x_len: Signal<Local, Bits<12>>,
    /// No read has R beats still to come (`ReadData::reads_idle`).
    r_idle: Signal<Local, Bit>,
    /// No DRAM write waits for its B response.
    /// The ordering rules between DRAM accesses (read-after-write, walk-after-PTE-write,
    /// atomics, write-after-read, fence): when each kind of access may go out.
    order: Ordering,
    /// The transmit stage: sends the finished responses from their txbuf slots.
    xmit: Transmit,
    /// A read's answer, one packet per KiB: the packet under way (`rd_i`) and the next.
    rseg: ReadSeg,
    /// The executor's request is a Read past its checks: its responses carry `pkt_index` =
    /// `rd_i` and `pkt_count` = the answer's packets (an error packet ends the answer).
    rd_seg: DFF<Bit>,
    /// The read answer's packet under way (`pkt_index`).
    rd_i: DFF<Bits<16>>,
    /// The response header builder (and the REQUEST descriptor's header).
    rhdr: ResponseHeader,
    /// The executor's state.
    state: DFF<State>,
    /// The request's header bytes 0..48 (or a REPLY descriptor's header).
    hdr: DFF<Bits<384>>,
    /// The request's route (the response goes back along it).
    route: DFF<Bits<256>>,
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
    /// The response's length in bytes, header beat included.
    rs_len: DFF<Bits<12>>,
    /// The request uses the idempotence ring (`Opcode::uses_idempotence_ring`).
    once: DFF<Bit>,
    /// The word accesses' data path (`WordAccess`): an atomic's or Append's tail word read at
    /// its lane and registered as its R beat arrives (SData; the ALU in SAlu or the placement's
    /// sums in ALoad read it the next cycle), the word written back at its lane (SWrite), or
    /// an offload's block.
    wa: WordAccess,
    /// The slow-path descriptors: the TX descriptor taken, decoded; the REQUEST encoded.
    spd: SlowPathDesc,
    /// A TX descriptor's actions in SpTx (`SlowPathTx`): the PTE_WRITE's beat and TLB
    /// update (applied the cycle after), the free frame, the key, Clio-KV's configuration,
    /// the ring release, the REPLY.
    sptx: SlowPathTx,
    /// Statistics (`stat_*`): frames received, responses sent, NACKs, TLB hits and misses,
    /// bucket reads, page faults, requests denied by the key check.
    stats: Stats,
    /// The executor's request's client (the RAS member).
    hcli: DFF<Bits<16>>,
    /// The idempotence ring's key for the sync unit: the executor's request's `{pid, client,
    /// req_id}` (pid at bits 48..64, client 32..48, req_id 0..32; a CN_ACK's `arg0` as its
    /// req_id), registered as the frame is taken, or a RING_RELEASE's member as its descriptor
    /// is (`SlotQueue::next_ring_key`, `SlowPathDesc::take_member`).
    ring_key: DFF<Bits<64>>,
    /// The executor's request is an Append past its format checks: the response carries
    /// `arg0` = `rs_arg0` (the old tail, 0 when nothing was appended) and `arg1` = `arg0` +
    /// the record's footprint.
    ap: DFF<Bit>,
    /// The persist handshake of a durable write or Append (the executor's Persist state).
    pers: Persist,
    /// Append's placement on the tail word (`replog::place`): loaded from `wa.old` the cycle
    /// after the word arrives (ALoad), decided the next cycle (APlace); it keeps the old tail,
    /// the new one and the
    /// tail word's PA for the write-back, and the record's realignment from its slot.
    apl: AppendPlace,
    /// The executor's write carries `FLAG_DURABLE`: acknowledged after the persist handshake.
    durable: DFF<Bit>,
    /// The header's `FLAG_DURABLE` bit.
    h_durable: Signal<Local, Bit>,
    // Decoded fields (combinational).
    opcode: Signal<Local, Bits<8>>,
    h_pid: Signal<Local, Bits<16>>,
    h_idx: Signal<Local, Bits<16>>,
    h_cnt: Signal<Local, Bits<16>>,
    h_plen: Signal<Local, Bits<16>>,
    h_va: Signal<Local, Bits<64>>,
    h_tlen: Signal<Local, Bits<32>>,
    h_arg0: Signal<Local, Bits<64>>,
    h_arg1: Signal<Local, Bits<64>>,
    psize: Signal<Local, Bits<32>>,
    /// Bytes from `vaq` to the end of its page, registered (`vaq` holds still while a
    /// translation runs: the earliest use is the TLB's answer, two cycles after `vaq` is
    /// loaded), so the page-size arithmetic is not in front of the piece decisions.
    page_rem: DFF<Bits<32>>,
    kt: Signal<Local, Bits<12>>,
    k1: Signal<Local, Bits<12>>,
    hr: Signal<Local, Bits<384>>,
    hreq: Signal<Local, Bits<384>>,
    // ---- Values from proto (localparams; see `crate::spec`).
    st_ok: St<{ Status::Ok as u64 }>,
    st_nack: St<{ Status::Nack as u64 }>,
    st_unmapped: St<{ Status::Unmapped as u64 }>,
    st_retry_later: St<{ Status::RetryLater as u64 }>,
    st_bad_request: St<{ Status::BadRequest as u64 }>,
    st_unsupported: St<{ Status::Unsupported as u64 }>,
    st_denied: St<{ Status::Denied as u64 }>,
    st_log_full: St<{ Status::LogFull as u64 }>,
    /// A response's flags byte (`FLAG_RESPONSE`).
    flags_response: Spec<8, { FLAG_RESPONSE as u64 }>,
    op_read: Op<{ Opcode::Read as u64 }>,
    op_write: Op<{ Opcode::Write as u64 }>,
    op_fence: Op<{ Opcode::Fence as u64 }>,
    op_cn_ack: Op<{ Opcode::CnAck as u64 }>,
    op_append: Op<{ Opcode::Append as u64 }>,
    op_pointer_chase: Op<{ Opcode::PointerChase as u64 }>,
    need_read: Need<{ PERM_READ as u64 }>,
    need_write: Need<{ PERM_WRITE as u64 }>,
    need_atomic: Need<{ (PERM_READ | PERM_WRITE) as u64 }>,
    /// The response header beat's length (`HEADER_LEN`), in the 12-bit response lengths.
    header_len: Spec<12, { HEADER_LEN as u64 }>,
    /// An atomic's word (`ATOMIC_BYTES`).
    atomic_bytes: Spec<12, ATOMIC_BYTES>,
    /// RX ring slots kept for PAGE_MAPPED notices (`RX_RESERVED_FOR_NOTICES`): a REQUEST
    /// needs more room than that.
    rx_reserved: Spec<16, { RX_RESERVED_FOR_NOTICES as u64 }>,
}

impl Logic for FastpathTop {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            hdr,
            route,
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
            rs_len,
            once,
            hcli,
            ring_key,
            durable,
            ap,
            rd_seg,
            rd_i,
            page_rem
        );
        clock!(
            self, clock, ingest, la, order, wd, bw, rd, xmit, tlb, tr, ptw, sync, keys, ext, xs,
            wa, spd, sptx, apl, pers, sq, stats
        );
        self.wbuf.read_clock.next = self.clock.val();
        self.wbuf.write_clock.next = self.clock.val();
        self.txbuf.read_clock.next = self.clock.val();
        self.txbuf.write_clock.next = self.clock.val();
        self.ingest.reset.next = self.reset.val();
        self.tlb.reset.next = self.reset.val();
        self.tr.reset.next = self.reset.val();
        self.sync.reset.next = self.reset.val();
        self.keys.reset.next = self.reset.val();
        self.ext.reset.next = self.reset.val();
        self.xs.reset.next = self.reset.val();
        self.la.reset.next = self.reset.val();

        // ---- The dispatch stage's decode (`Decode`): the header's fields, the match-action
        // table's rules and each class's format checks.
        self.dec.hdr.next = self.hdr.q.val();
        self.dec.kv_en.next = self.ext.kv_en.val();
        self.opcode.next = self.dec.opcode.val();
        self.h_pid.next = self.dec.pid.val();
        self.h_idx.next = self.dec.pkt_index.val();
        self.h_cnt.next = self.dec.pkt_count.val();
        self.h_plen.next = self.dec.payload_len.val();
        self.h_va.next = self.dec.va.val();
        self.h_tlen.next = self.dec.total_len.val();
        self.h_arg0.next = self.dec.arg0.val();
        self.h_arg1.next = self.dec.arg1.val();
        self.h_durable.next = self.dec.durable.val();

        // ---- The response header (`ResponseHeader`): the request's bytes 0..48 with status,
        // flags, payload_len, zero checksum and the class's fields; bytes 48..64 (key, client)
        // are zero. Append: arg0 = the old tail (0 when nothing was appended), arg1 = arg0 +
        // footprint; an offload's answer: its arg0 and arg1. Clio-KV's answer: total_len is the
        // value's length (0 without one); an error keeps the request's, as any error response,
        // and a put's or delete's OK answer replayed from the idempotence ring is the first
        // answer again: total_len 0 (rs_plen is 0). A read's answer: this packet's pkt_index
        // and the answer's pkt_count.
        self.apl.va.next = self.h_va.val();
        self.apl.capacity.next = self.h_arg0.val();
        self.apl.len.next = bit_cast::<12, 32>(self.h_tlen.val());
        self.rhdr.request.next = self.hdr.q.val();
        self.rhdr.status.next = self.rs_status.q.val();
        self.rhdr.flags.next = self.rs_flags.q.val();
        self.rhdr.payload_len.next = self.rs_plen.q.val();
        self.rhdr.arg0_on.next = self.rs_use_arg0.q.val();
        self.rhdr.args_on.next = self.ap.q.val() | self.xs.args_on.val();
        self.rhdr.arg0.next = self.rs_arg0.q.val();
        self.rhdr.arg1.next = self.rs_arg0.q.val() + bit_cast::<64, 12>(self.apl.footprint.val());
        if self.xs.args_on.val() {
            self.rhdr.arg1.next = self.xs.arg1.val();
        }
        self.rhdr.value_len_on.next = self.ext.kv.val()
            & (self.xs.args_on.val()
                | (self.rs_use_arg0.q.val() & (self.rs_status.q.val() == self.st_ok.val())));
        self.rseg.va.next = self.h_va.val();
        self.rseg.total.next = self.h_tlen.val();
        self.rseg.idx.next = self.rd_i.q.val();
        self.rhdr.seg_on.next = self.rd_seg.q.val();
        self.rhdr.pkt_index.next = self.rd_i.q.val();
        self.rhdr.pkt_count.next = self.rseg.count.val();
        self.hr.next = self.rhdr.response.val();
        self.hreq.next = self.rhdr.forwarded.val();

        // ---- Geometry of the current request.
        self.psize.next = bit_cast::<32, 1>(1.into()) << self.cfg_page_shift.val();
        self.page_rem.d.next = self.psize.val()
            - bit_cast::<32, 64>(self.vaq.q.val() & (bit_cast::<64, 32>(self.psize.val()) - 1));
        self.kt.next = (bit_cast::<12, 6>(self.o.q.val()) + self.len.q.val() + 63) >> 6;
        if self.two.q.val() {
            self.k1.next = (bit_cast::<12, 6>(self.o.q.val()) + self.n1.q.val()) >> 6;
        } else {
            self.k1.next = self.kt.val();
        }

        // ---- Defaults.
        self.m_axi_arvalid.next = false;
        self.m_axi_araddr.next = self.pa1.q.val() & !bit_cast::<64, 6>(0x3F.into());
        self.m_axi_arlen.next = 0.into();
        // No read's R beats are still to come (none queued, none being received): the R channel
        // is free for a walk or an atomic, and a write may go out (write-after-read).
        self.r_idle.next = self.rd.reads_idle.val();
        // The write-data stage is streaming (it owns W and the wbuf read port), and the slot it
        // gives back this cycle.
        self.w_busy.next = self.wd.busy.val();
        self.w_release.next = self.wd.freed.val();
        // The executor's response as a job of the read-data stage; a payload-less one is the
        // header beat alone.
        self.x_only.next = self.state.q.val() == State::Resp;
        self.x_len.next = self.rs_len.q.val();
        if self.x_only.val() {
            self.x_len.next = self.header_len.val();
        }
        self.rd.reset.next = self.reset.val();
        self.rd.job_valid.next = false;
        self.rd.job_only.next = self.x_only.val();
        self.rd.job_o.next = self.o.q.val();
        self.rd.job_kt.next = self.kt.val();
        self.rd.job_len.next = self.x_len.val();
        self.rd.job_hdr.next = self.hr.val();
        self.rd.job_route.next = self.route.q.val();
        self.rd.r_valid.next = self.m_axi_rvalid.val();
        self.rd.r_data.next = self.m_axi_rdata.val();
        self.m_axi_awvalid.next = false;
        self.m_axi_awaddr.next = 0.into();
        self.m_axi_awlen.next = 0.into();
        self.m_axi_wdata.next = self.wbuf.read_data.val();
        self.m_axi_bready.next = true;
        self.sp_rx_valid.next = false;
        self.sp_rx_desc.next = self.spd.page_mapped.val();
        // ---- The persist handshake (`Persist`) of a durable write or Append, while the
        // executor is in Persist: the request's pieces, the tail word's PA, the board's port.
        self.pers.run.next = self.state.q.val() == State::Persist;
        self.pers.writes_done.next = self.order.fence_clear.val();
        self.pers.pa1.next = self.pa1.q.val();
        self.pers.n1.next = self.n1.q.val();
        self.pers.two.next = self.two.q.val();
        self.pers.pa2.next = self.pa2.q.val();
        self.pers.len.next = self.len.q.val();
        self.pers.append.next = self.ap.q.val();
        self.pers.tail_pa.next = self.apl.tail_word_pa.val();
        self.pers.persist_done.next = self.persist_done.val();
        self.pers.persist_error.next = self.persist_error.val();
        self.persist_valid.next = self.pers.persist_valid.val();
        self.persist_addr.next = self.pers.persist_addr.val();
        self.persist_len.next = self.pers.persist_len.val();
        self.sp_tx_ready.next = false;
        // A fault's PAGE_MAPPED notice (its descriptor is the default above).
        if self.tr.notice_valid.val() {
            self.sp_rx_valid.next = true;
        }
        // An offload's access in its own RAS (Clio-KV's store) translates with the store's pid.
        self.t_pid.next = self.h_pid.val();
        if self.xs.own.val() {
            self.t_pid.next = self.ext.kv_pid.val();
        }
        self.d_va.next = self.dec.data_va.val();
        // ---- The translate stage (`Translate`): the executor's pages; the TLB's lookup port
        // when it looks up (the look-ahead's otherwise), the TLB's updates from its page-fault
        // unit (or the slow path's, below), AR/R while it walks.
        self.t_start.next = false;
        self.t_va.next = self.vaq.q.val();
        self.tr.page_shift.next = self.cfg_page_shift.val();
        self.tr.bucket_mask.next = self.cfg_bucket_mask.val();
        self.tr.pid.next = self.t_pid.val();
        self.tr.need.next = self.need.q.val();
        self.tr.hit_take.next = false;
        self.tr.res_hit.next = self.tlb.res_hit.val();
        self.tr.res_alloc.next = self.tlb.res_alloc.val();
        self.tr.res_perms.next = self.tlb.res_perms.val();
        self.tr.res_pfn.next = self.tlb.res_pfn.val();
        self.tr.res_gen.next = self.tlb.res_gen.val();
        self.tr.fp_valid.next = self.sptx.free_page.val();
        self.tr.fp_pfn.next = self.spd.pfn.val();
        // The bucket read waits for earlier page-table writes; its beats come when no read's
        // are due.
        self.tr.ar_ready.next = self.m_axi_arready.val() & self.order.walk_clear.val();
        self.tr.r_valid.next = self.m_axi_rvalid.val() & self.r_idle.val();
        self.tr.r_data.next = self.m_axi_rdata.val();
        self.tr.r_last.next = self.m_axi_rlast.val();
        self.tr.notice_room.next = self.sp_rx_room.val() != 0;
        if self.tr.walking.val() {
            self.m_axi_arvalid.next = self.tr.ar_valid.val() & self.order.walk_clear.val();
            self.m_axi_araddr.next = bit_cast::<64, 40>(self.tr.ar_addr.val());
            self.m_axi_arlen.next = self.tr.ar_len.val();
        }
        self.tr.notice_ready.next = self.sp_rx_ready.val();
        self.tr.pte_done.next = self.bw.done.val();
        self.tr.w_free.next = !self.w_busy.val();
        self.x_dlk.next =
            (self.state.q.val() == State::Dispatch) & self.la.use_rw.val() & !self.la.ok.val();
        self.x_lk.next = self.tr.lk_valid.val() | self.x_dlk.val();
        self.tlb.lk_pid.next = self.tr.lk_pid.val();
        self.tlb.lk_vpn.next = self.tr.lk_vpn.val();
        if self.x_dlk.val() {
            // (The translate stage is idle in Dispatch: it never looks up in the same cycle.)
            self.tlb.lk_pid.next = self.la.use_pid.val();
            self.tlb.lk_vpn.next = self.la.use_vpn.val();
        }
        self.tlb.up_valid.next = self.tr.ti_valid.val();
        self.tlb.up_inval.next = false;
        self.tlb.up_pid.next = self.tr.ti_pid.val();
        self.tlb.up_vpn.next = self.tr.ti_vpn.val();
        self.tlb.up_pfn.next = self.tr.ti_pfn.val();
        self.tlb.up_perms.next = self.tr.ti_perms.val();
        self.tlb.up_gen.next = self.tr.ti_gen.val();
        self.tlb.up_alloc.next = false;
        // ---- A TX descriptor's actions (`SlowPathTx`), in SpTx: its kind, a TLB_INVALIDATE's
        // page, the PTE writer's decode of a PTE_WRITE, the free list's room.
        self.sptx.reset.next = self.reset.val();
        self.sptx.act.next = self.state.q.val() == State::SpTx;
        self.sptx.kind_pte_write.next = self.spd.pte_write.val();
        self.sptx.kind_tlb_invalidate.next = self.spd.tlb_invalidate.val();
        self.sptx.kind_free_page.next = self.spd.free_page.val();
        self.sptx.kind_key_write.next = self.spd.key_write.val();
        self.sptx.kind_kv_config.next = self.spd.kv_config.val();
        self.sptx.kind_ring_release.next = self.spd.ring_release.val();
        self.sptx.kind_reply.next = self.spd.reply.val();
        self.sptx.inval_pid.next = self.spd.pid.val();
        self.sptx.inval_vpn.next = self.spd.vpn.val();
        self.sptx.inval_vpn_fits.next = self.spd.vpn_fits.val();
        self.sptx.pte_ok.next = self.ptw.desc_ok.val();
        self.sptx.pte_inval.next = self.ptw.tu_inval.val();
        self.sptx.pte_pid.next = self.ptw.tu_pid.val();
        self.sptx.pte_vpn.next = self.ptw.tu_vpn.val();
        self.sptx.pte_pfn.next = self.ptw.tu_pfn.val();
        self.sptx.pte_perms.next = self.ptw.tu_perms.val();
        self.sptx.pte_alloc.next = self.ptw.tu_alloc.val();
        self.sptx.fp_full.next = self.tr.fp_full.val();
        // Its TLB update (PTE_WRITE's insert or invalidation, TLB_INVALIDATE), the cycle after
        // SpTx. Its generation is the TLB's now: only the slow path invalidates, one
        // descriptor at a time.
        if self.sptx.up_valid.val() {
            self.tlb.up_valid.next = true;
            self.tlb.up_inval.next = self.sptx.up_inval.val();
            self.tlb.up_pid.next = self.sptx.up_pid.val();
            self.tlb.up_vpn.next = self.sptx.up_vpn.val();
            self.tlb.up_pfn.next = self.sptx.up_pfn.val();
            self.tlb.up_perms.next = self.sptx.up_perms.val();
            self.tlb.up_gen.next = self.tlb.gen.val();
            self.tlb.up_alloc.next = self.sptx.up_alloc.val();
        }
        // ---- The PTE writer (`PteWriter`): a fault's PTE from the translate stage, a
        // PTE_WRITE decoded as its descriptor is taken (below).
        self.ptw.bucket_mask.next = self.cfg_bucket_mask.val();
        self.ptw.desc_take.next = false;
        self.ptw.desc_bucket.next = self.spd.take_bucket.val();
        self.ptw.desc_slot.next = self.spd.take_slot.val();
        self.ptw.desc_word0.next = self.spd.take_pte_word0.val();
        self.ptw.desc_pfn.next = self.spd.take_pte_pfn.val();
        self.ptw.fault_load.next = self.tr.pte_load.val();
        self.ptw.fault_addr.next = self.tr.pte_addr.val();
        self.ptw.fault_data.next = self.tr.pte_data.val();
        // Sync unit: its key is `ring_key`, a register (loaded as the frame or descriptor is
        // taken), so the CAM compare starts the cycle from flip-flops.
        self.sync.k_pid.next = self.ring_key.q.val().get_bits::<16>(48);
        self.sync.k_client.next = self.ring_key.q.val().get_bits::<16>(32);
        self.sync.k_req.next = self.ring_key.q.val().get_bits::<32>(0);
        self.sync.lk_valid.next = false;
        self.sync.ack_valid.next = false;
        // RING_RELEASE: every entry of the member in `ring_key` (since the descriptor was
        // taken) is acknowledged.
        self.sync.rel_valid.next = self.sptx.ring_release.val();
        self.sync.skip_valid.next = false;
        self.sync.rec_valid.next = false;
        self.sync.rec_status.next = self.st_ok.val();
        // ---- The extend path (`Extend`): the request from the header, to the unit that starts
        // (Dispatch, below); the executor's side of its port (`OffloadService`): the unit's
        // accesses and answer while the executor serves it (`Offload`), the endings of its
        // accesses from the executor's states (a failed translation, the word's R beat in SData,
        // the block written in SWrite), its ring lookups through the sync unit.
        self.ext.clear.next = false;
        self.ext.chase_start.next = false;
        self.ext.kv_start.next = false;
        self.ext.req_op.next = self.opcode.val();
        self.ext.req_pid.next = self.h_pid.val();
        self.ext.req_va.next = self.h_va.val();
        self.ext.req_arg0.next = self.h_arg0.val();
        self.ext.req_arg1.next = self.h_arg1.val();
        self.ext.req_len.next = self.h_tlen.val();
        self.ext.req_pay_len.next = self.h_plen.val();
        self.ext.req_pkt_count.next = self.h_cnt.val();
        self.ext.req_pkt_index.next = self.h_idx.val();
        self.xs.clear.next = false;
        self.xs.serving.next = self.state.q.val() == State::Offload;
        self.xs.tr_fail.next = (self.state.q.val() == State::Translate)
            & self.tr.done.val()
            & (self.tr.status.val() != self.st_ok.val());
        self.xs.tr_status.next = self.tr.status.val();
        self.xs.word_in.next = (self.state.q.val() == State::SData)
            & self.xs.accessing.val()
            & self.m_axi_rvalid.val()
            & self.r_idle.val();
        self.xs.block_done.next = (self.state.q.val() == State::SWrite)
            & !self.w_busy.val()
            & self.bw.done.val()
            & self.xs.writing.val();
        self.xs.u_mem_valid.next = self.ext.mem_valid.val();
        self.xs.u_mem_write.next = self.ext.mem_write.val();
        self.xs.u_mem_own.next = self.ext.mem_own.val();
        self.xs.u_mem_va.next = self.ext.mem_va.val();
        self.xs.u_mem_wdata.next = self.ext.mem_wdata.val();
        self.xs.u_mem_wstrb.next = self.ext.mem_wstrb.val();
        self.ext.mem_ready.next = self.xs.u_mem_ready.val();
        self.ext.mem_done.next = self.xs.u_mem_done.val();
        self.ext.mem_status.next = self.xs.u_mem_status.val();
        self.ext.mem_data.next = self.m_axi_rdata.val();
        self.xs.u_rsp_valid.next = self.ext.rsp_valid.val();
        self.xs.u_rsp_status.next = self.ext.rsp_status.val();
        self.xs.u_rsp_arg0.next = self.ext.rsp_arg0.val();
        self.xs.u_rsp_arg1.next = self.ext.rsp_arg1.val();
        self.xs.u_rsp_read.next = self.ext.rsp_read.val();
        self.xs.u_rsp_read_own.next = self.ext.rsp_read_own.val();
        self.xs.u_rsp_read_va.next = self.ext.rsp_read_va.val();
        self.xs.u_rsp_read_len.next = self.ext.rsp_read_len.val();
        self.xs.u_rsp_record.next = self.ext.rsp_record.val();
        self.xs.u_rsp_replay.next = self.ext.rsp_replay.val();
        self.ext.rsp_ready.next = self.xs.u_rsp_ready.val();
        self.xs.u_once_valid.next = self.ext.once_valid.val();
        self.xs.ring_hit.next = self.sync.hit.val();
        self.xs.ring_full.next = self.sync.full.val();
        // Clio-KV's idempotence-ring verdict (the lookup a cycle before, in `Offload`).
        self.ext.once_done.next = self.xs.u_once_done.val();
        self.ext.once_hit.next = self.sync.hit.val();
        self.ext.once_full.next = self.sync.full.val();
        self.ext.once_status.next = self.sync.status.val();
        self.ext.once_value.next = self.sync.value.val();
        // KV_CONFIG's body: pid @88 (704), status @90 (720), base @96 (768), buckets @104
        // (832), records @112 (896); taken in SpTx.
        self.ext.cfg_load.next = self.sptx.kv_config.val();
        self.ext.cfg_pid.next = self.spd.pid.val();
        self.ext.cfg_status.next = self.spd.kv_status.val();
        self.ext.cfg_base.next = self.spd.kv_base.val();
        self.ext.cfg_buckets.next = self.spd.kv_buckets.val();
        self.ext.cfg_records.next = self.spd.kv_records.val();
        // The KV payload feeder reads the executor's slot while the write-data stage does not.
        self.ext.pay_free.next = !self.w_busy.val();
        self.ext.buf_data.next = self.wbuf.read_data.val();
        // Key table: writes from KEY_WRITE (lookups: the executor's next frame, below); pid
        // u16 @88, key u64 @96 (0 removes the RAS).
        self.keys.wr_valid.next = self.sptx.key_write.val();
        self.keys.wr_pid.next = self.spd.pid.val();
        self.keys.wr_key.next = self.spd.key.val();
        // ---- The word accesses' data path (`WordAccess`): the word read at `pa1` in SData,
        // written back from the ALU (SAlu) or Append's placement (its tail word), or an
        // offload's block.
        self.wa.pa.next = self.pa1.q.val();
        self.wa.r_data.next = self.m_axi_rdata.val();
        self.wa.sample.next = self.state.q.val() == State::SData;
        self.wa.alu_load.next = false;
        self.wa.alu_new.next = self.sync.alu_new.val();
        self.wa.tail_load.next = false;
        self.wa.new_tail.next = self.apl.new_tail.val();
        self.wa.tail.next = self.ap.q.val();
        self.wa.tail_pa.next = self.apl.tail_word_pa.val();
        self.wa.block.next = self.xs.writing.val();
        self.wa.block_data.next = self.xs.wdata.val();
        self.wa.block_strb.next = self.xs.wstrb.val();
        self.sync.rec_value.next = self.wa.old.val();
        // Append's placement: the tail word as it arrives in SData (below).
        self.apl.load.next = false;
        self.apl.tail.next = self.wa.old.val();
        self.apl.tail_pa.next = self.pa1.q.val();
        self.apl.slot_word.next = self.o.q.val().get_bits::<3>(3);
        self.sync.alu_op.next = self.opcode.val();
        self.sync.alu_old.next = self.wa.old.val();
        self.sync.alu_arg0.next = self.h_arg0.val();
        self.sync.alu_arg1.next = self.h_arg1.val();
        // ---- Write-data stage (`WriteData`): streams the W beats of a write whose bursts the
        // executor has addressed, from the frame's wbuf slot, while the executor goes on. It
        // owns the W channel and the wbuf read port while busy; the executor's own one-beat
        // writes (PTE write-backs, atomics) override the W defaults below only when it is not.
        self.wd.reset.next = self.reset.val();
        self.wd.start.next = false;
        self.wd.start_slot.next = self.sq.slot.val();
        self.wd.start_two.next = self.two.q.val();
        self.wd.start_o.next = self.o.q.val();
        self.wd.start_n1.next = self.n1.q.val();
        self.wd.start_len.next = self.len.q.val();
        self.wd.start_append.next = self.ap.q.val();
        self.wd.start_shift.next = self.apl.shift.val();
        self.wd.start_payload_len.next = bit_cast::<12, 32>(self.h_tlen.val());
        self.wd.buf_data.next = self.wbuf.read_data.val();
        self.wd.w_ready.next = self.m_axi_wready.val();
        self.m_axi_wvalid.next = self.wd.w_valid.val();
        self.m_axi_wdata.next = self.wd.w_data.val();
        self.m_axi_wstrb.next = self.wd.w_strb.val();
        self.m_axi_wlast.next = self.wd.w_last.val();
        // ---- The one-beat writer (`BeatWriter`): the PTE writer's beat (a fault's, while the
        // translate stage asks with `pte_write`; a slow-path PTE_WRITE in SpPte) and words or blocks (SWrite: an atomic's, an
        // Append's tail, an offload's block); it has AW and W while the write-data stage does
        // not stream.
        self.bw.reset.next = self.reset.val();
        self.bw.go.next = self.tr.pte_write.val()
            | (self.state.q.val() == State::SpPte)
            | (self.state.q.val() == State::SWrite);
        self.bw.w_free.next = !self.w_busy.val();
        self.bw.aw_ready.next = self.m_axi_awready.val();
        self.bw.w_ready.next = self.m_axi_wready.val();
        if self.state.q.val() == State::SWrite {
            // An 8-byte word at its lane, or the offload's block (`WordAccess`).
            self.bw.addr.next = self.wa.wr_addr.val();
            self.bw.data.next = self.wa.wr_data.val();
            self.bw.strb.next = self.wa.wr_strb.val();
        } else {
            // A PTE (a fault's or a PTE_WRITE's), laid out by the PTE writer.
            self.bw.addr.next = self.ptw.beat_addr.val();
            self.bw.data.next = self.ptw.beat_data.val();
            self.bw.strb.next = self.ptw.beat_strb.val();
        }
        if self.bw.active.val() {
            self.m_axi_awvalid.next = self.bw.aw_valid.val();
            self.m_axi_awaddr.next = self.bw.aw_addr.val();
            self.m_axi_awlen.next = 0.into();
            self.m_axi_wvalid.next = self.bw.w_valid.val();
            self.m_axi_wdata.next = self.bw.w_data.val();
            self.m_axi_wstrb.next = self.bw.w_strb.val();
            self.m_axi_wlast.next = true;
        }
        if self.wd.busy.val() {
            self.wbuf.read_address.next = self.wd.buf_address.val();
        } else if self.ext.pay_fetch.val() {
            // The KV payload feeder's next block (the write-data stage is idle).
            self.wbuf.read_address.next = (bit_cast::<7, 2>(self.sq.slot.val()) << 5)
                | bit_cast::<7, 5>(self.ext.pay_block.val());
        } else {
            // Idle: block 0 of the executor's slot, the next one handed over (the RAM reads
            // a cycle ahead).
            self.wbuf.read_address.next = bit_cast::<7, 2>(self.sq.slot.val()) << 5;
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
        self.stats.nack.next = false;
        self.stats.denied.next = false;
        self.stats.miss.next = self.tr.ev_miss.val();
        self.stats.fault.next = self.tr.ev_fault.val();
        self.stat_rx_pkts.next = self.stats.rx_pkts.val();
        self.stat_tx_pkts.next = self.stats.tx_pkts.val();
        self.stat_nacks.next = self.stats.nacks.val();
        self.stat_tlb_hits.next = self.stats.tlb_hits.val();
        self.stat_tlb_misses.next = self.stats.tlb_misses.val();
        self.stat_bucket_reads.next = self.stats.bucket_reads.val();
        self.stat_page_faults.next = self.stats.page_faults.val();
        self.stat_denied.next = self.stats.denied_reqs.val();
        self.x_done.next = false;
        self.x_free.next = false;
        self.rd_hand.next = false;
        self.wr_hand.next = false;
        self.hit_go.next = false;
        self.hit_pa.next = self.la.pa.val();
        self.hit_len.next = self.len.q.val();
        self.hit_need.next = self.need.q.val();
        // ---- The ordering rules (`Ordering`): what the executor's accesses wait for.
        self.order.reset.next = self.reset.val();
        self.order.w_busy.next = self.w_busy.val();
        self.order.reads_idle.next = self.r_idle.val();
        self.order.b_valid.next = self.m_axi_bvalid.val();

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
        self.xmit.load.next = self.rd.load.val();
        self.xmit.load_slot.next = self.rd.load_slot.val();
        self.xmit.load_len.next = self.rd.load_len.val();
        self.xmit.load_route.next = self.rd.load_route.val();
        self.xmit.load_beat0.next = self.rd.load_beat0.val();
        self.txbuf.write_enable.next = self.rd.buf_write_enable.val();
        self.txbuf.write_address.next = self.rd.buf_write_address.val();
        self.txbuf.write_data.next = self.rd.buf_write_data.val();
        // R beats are taken by the read-data stage, or by a walk or an atomic (which start
        // only when that stage is idle, so the beats are theirs).
        self.m_axi_rready.next = self.rd.r_ready.val()
            | ((self.tr.walking.val() | (self.state.q.val() == State::SData)) & self.r_idle.val());
        // Slow-path descriptor fields.
        self.spd.take.next = false;
        self.spd.desc.next = self.sp_tx_desc.val();
        self.spd.req_client.next = self.hcli.q.val();
        self.spd.req_route.next = self.route.q.val();
        self.spd.req_header.next = self.hreq.val();
        self.spd.pm_pid.next = self.tr.notice_pid.val();
        self.spd.pm_vpn.next = self.tr.notice_vpn.val();
        self.spd.pm_pfn.next = self.tr.notice_pfn.val();
        // Outstanding DRAM writes (B responses pending).

        match self.state.q.val() {
            State::Idle => {
                // Ready does not wait for valid: every output comes from registers, so the
                // cosimulation can sample them without settling the inputs first. Nothing is
                // taken until the key table's zero sweep after reset is done. The frame or
                // descriptor is taken below (`x_free`).
                self.sp_tx_ready.next = self.keys.ready.val();
                self.x_free.next = true;
            }
            State::Dispatch => {
                self.piece.d.next = false;
                self.rs_status.d.next = self.st_bad_request.val();
                self.state.d.next = State::Resp;
                self.once.d.next = self.dec.ring.val();
                if !self.dec.parse_ok.val() {
                    if self.dec.extend.val() {
                        self.rs_status.d.next = self.st_unsupported.val();
                    }
                } else if self.dec.needs_key.val() & !self.keys.ok.val() {
                    // The key does not open the pid's RAS (wrong or missing key, no such RAS,
                    // pid 0 or beyond the table): nothing executes.
                    self.rs_status.d.next = self.st_denied.val();
                    self.stats.denied.next = true;
                } else if self.opcode.val() == self.op_read.val() {
                    // (The read and write checks come from the look-ahead's registers of the
                    // slot, decoded as its header arrived: `Decode`'s `read_ok`, `write_ok`,
                    // `write_in_va` of the same bytes, off this cycle's path.)
                    // READ (`header::check_read`): one packet, no payload, 1..=MAX_REQUEST_LEN
                    // bytes inside the VA space; answered one packet per KiB, packet 0 first
                    // (each packet of the answer is a read of its own bytes: RData goes on
                    // with the next, translating as it reaches each page).
                    self.vaq.d.next = self.h_va.val();
                    self.o.d.next = self.h_va.val().get_bits::<6>(0);
                    self.len.d.next = self.rseg.first_len.val();
                    self.need.d.next = self.need_read.val();
                    self.rd_i.d.next = 0.into();
                    if self.la.use_read_ok.val() {
                        self.rd_seg.d.next = true;
                        self.rs_status.d.next = self.st_ok.val();
                        self.rs_len.d.next = self.rseg.first_len.val() + self.header_len.val();
                        self.rs_plen.d.next = bit_cast::<16, 12>(self.rseg.first_len.val());
                        if self.la.ok.val() {
                            // Translated ahead: its first packet's page is mapped and
                            // readable, so straight to the access (`hit_go`).
                            self.hit_go.next = true;
                            self.hit_pa.next = self.la.pa.val();
                            self.hit_len.next = self.rseg.first_len.val();
                            self.hit_need.next = self.need_read.val();
                        } else {
                            self.t_start.next = true;
                            self.t_va.next = self.d_va.val();
                            self.state.d.next = State::Translate;
                        }
                    }
                } else if self.opcode.val() == self.op_write.val() {
                    // The packet's first byte (`Decode::data_va`: exact once the checks hold,
                    // the only case it is used).
                    self.vaq.d.next = self.d_va.val();
                    self.len.d.next = bit_cast::<12, 16>(self.h_plen.val());
                    self.need.d.next = self.need_write.val();
                    self.durable.d.next = self.h_durable.val();
                    if self.la.use_write_ok.val() {
                        // check_write_segment holds. A durable write without a persistence
                        // domain is refused before anything is written (never acknowledged
                        // as durable when it is not).
                        if self.h_durable.val() & !self.cfg_persist.val() {
                            self.rs_status.d.next = self.st_unsupported.val();
                        } else if self.la.use_write_in_va.val() & self.la.ok.val() {
                            // Translated ahead: mapped, writable, within the page (`hit_go`).
                            self.hit_go.next = true;
                            self.hit_pa.next = self.la.pa.val();
                            self.hit_len.next = bit_cast::<12, 16>(self.h_plen.val());
                            self.hit_need.next = self.need_write.val();
                        } else if self.la.use_write_in_va.val() {
                            self.t_start.next = true;
                            self.t_va.next = self.d_va.val();
                            self.state.d.next = State::Translate;
                        }
                    }
                } else if self.dec.slow.val() {
                    if self.sp_rx_room.val() > self.rx_reserved.val() {
                        self.state.d.next = State::SlowPush;
                    } else {
                        self.rs_status.d.next = self.st_retry_later.val();
                    }
                } else if self.opcode.val() == self.op_fence.val() {
                    // FENCE: answered once every earlier write has its B response (earlier
                    // requests are otherwise complete: the executor takes one at a time).
                    self.rs_status.d.next = self.st_ok.val();
                    if !self.order.fence_clear.val() {
                        self.state.d.next = State::Dispatch;
                    }
                } else if self.opcode.val() == self.op_cn_ack.val() {
                    // CN_ACK: frees the entry (pid, client, arg0: `sync.k_req` above).
                    self.sync.ack_valid.next = true;
                    self.rs_status.d.next = self.st_ok.val();
                } else if self.dec.kv.val() {
                    // KvGet/KvPut/KvDelete (enabled by `ext.kv_en`, else not parsed): the unit
                    // checks the framing; its payload beats come from the slot (one packet of
                    // at most MAX_PAYLOAD bytes, `parse_ok`; at lane 0 since a KV request's va
                    // is 0).
                    if self.ext.kv_ready.val() {
                        self.ext.kv_start.next = true;
                        self.state.d.next = State::Offload;
                    }
                } else if self.opcode.val() == self.op_pointer_chase.val() {
                    // POINTER_CHASE: one packet, no payload; the unit checks the rest.
                    if self.dec.chase_ok.val() & self.ext.chase_ready.val() {
                        self.ext.chase_start.next = true;
                        self.state.d.next = State::Offload;
                    }
                } else if self.opcode.val() == self.op_append.val() {
                    // APPEND: one packet of 1..=MAX_RECORD bytes to the log at an 8-byte
                    // aligned va; first the ring, then the tail word (read and write).
                    self.vaq.d.next = self.h_va.val();
                    // The tail word is read and written as an atomic's word.
                    self.len.d.next = self.atomic_bytes.val();
                    self.need.d.next = self.need_atomic.val();
                    self.durable.d.next = self.h_durable.val();
                    if self.dec.append_ok.val() {
                        if self.h_durable.val() & !self.cfg_persist.val() {
                            self.rs_status.d.next = self.st_unsupported.val();
                        } else {
                            self.ap.d.next = true;
                            self.sync.lk_valid.next = true;
                            self.state.d.next = State::SyncCheck;
                        }
                    }
                } else {
                    // TAS / UNLOCK / CAS / FAA on an aligned word.
                    self.vaq.d.next = self.h_va.val();
                    self.len.d.next = self.atomic_bytes.val();
                    self.need.d.next = self.need_atomic.val();
                    if self.dec.atomic_ok.val() {
                        self.sync.lk_valid.next = true;
                        self.state.d.next = State::SyncCheck;
                    }
                }
            }
            State::SyncCheck => {
                self.rs_use_arg0.d.next = true;
                self.rs_status.d.next = self.sync.status.val();
                self.rs_arg0.d.next = self.sync.value.val();
                if self.once.q.val() & self.sync.hit.val() {
                    self.state.d.next = State::Resp;
                } else if self.once.q.val() & self.sync.full.val() {
                    // The slot at the write pointer is unacknowledged: retry later, and the
                    // pointer moves past it so the next attempt takes the next slot.
                    self.sync.skip_valid.next = true;
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
                    self.t_start.next = true;
                    self.state.d.next = State::Translate;
                }
                if self.ap.q.val() & !(self.once.q.val() & self.sync.hit.val()) {
                    // An Append answers arg0 = 0 unless it appended (or is replayed).
                    self.rs_arg0.d.next = 0.into();
                }
            }
            State::Translate => {
                if self.tr.only_hit.val()
                    & !self.piece.q.val()
                    & !self.xs.accessing.val()
                    & (bit_cast::<32, 12>(self.len.q.val()) <= self.page_rem.q.val())
                {
                    // A request's only page (not an offload's access), mapped and permitted
                    // in the TLB: on to the access now (`hit_go`).
                    self.hit_go.next = true;
                    self.hit_pa.next = self.tr.hit_pa.val();
                    self.hit_len.next = self.len.q.val();
                    self.hit_need.next = self.need.q.val();
                }
                if self.tr.done.val() {
                    if self.piece.q.val() {
                        self.pa2.d.next = self.tr.pa.val();
                    } else {
                        self.pa1.d.next = self.tr.pa.val();
                    }
                    // Second page of a straddling range, or the access.
                    if !self.piece.q.val() {
                        self.n1.d.next = self.len.q.val();
                        self.two.d.next = false;
                        if bit_cast::<32, 12>(self.len.q.val()) > self.page_rem.q.val() {
                            self.n1.d.next = bit_cast::<12, 32>(self.page_rem.q.val());
                            self.two.d.next = true;
                        }
                    }
                    if (self.tr.status.val() != self.st_ok.val()) & self.xs.accessing.val() {
                        // An offload's access failed: the unit is told (`xs.tr_fail`), and
                        // answers.
                        self.state.d.next = State::Offload;
                    } else if self.tr.status.val() != self.st_ok.val() {
                        self.rs_status.d.next = self.tr.status.val();
                        self.rs_plen.d.next = 0.into();
                        self.rs_len.d.next = self.header_len.val();
                        self.state.d.next = State::Resp;
                    } else if !self.piece.q.val()
                        & (bit_cast::<32, 12>(self.len.q.val()) > self.page_rem.q.val())
                    {
                        self.piece.d.next = true;
                        self.t_va.next =
                            self.vaq.q.val() + bit_cast::<64, 32>(self.page_rem.q.val());
                        self.t_start.next = true;
                        self.state.d.next = State::Translate;
                    } else {
                        self.piece.d.next = false;
                        if self.xs.writing.val() {
                            // An offload's block write: AW and W as an atomic's write-back (its
                            // request's first access was a read, after every earlier read).
                            self.state.d.next = State::SWrite;
                        } else if self.xs.accessing.val() {
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
                self.m_axi_awvalid.next = self.order.write_clear.val();
                if self.piece.q.val() {
                    self.m_axi_awaddr.next = self.pa2.q.val() & !bit_cast::<64, 6>(0x3F.into());
                    self.m_axi_awlen.next = bit_cast::<8, 12>(self.kt.val() - self.k1.val() - 1);
                } else {
                    self.m_axi_awaddr.next = self.pa1.q.val() & !bit_cast::<64, 6>(0x3F.into());
                    self.m_axi_awlen.next = bit_cast::<8, 12>(self.k1.val() - 1);
                }
                if self.m_axi_awready.val() & self.order.write_clear.val() {
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
                if self.pers.done.val() {
                    self.state.d.next = State::Resp;
                    if self.pers.failed.val() {
                        // Not known durable: the client retries the write.
                        self.rs_status.d.next = self.st_retry_later.val();
                    }
                }
            }
            State::RAddr => {
                // After every earlier data write has its B response (read-after-write order).
                self.m_axi_arvalid.next = self.order.read_clear.val();
                if self.piece.q.val() {
                    self.m_axi_araddr.next = self.pa2.q.val() & !bit_cast::<64, 6>(0x3F.into());
                    self.m_axi_arlen.next = bit_cast::<8, 12>(self.kt.val() - self.k1.val() - 1);
                } else {
                    self.m_axi_arlen.next = bit_cast::<8, 12>(self.k1.val() - 1);
                }
                if self.m_axi_arready.val() & self.order.read_clear.val() {
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
                self.m_axi_arvalid.next = self.order.atomic_clear.val();
                if self.m_axi_arready.val() & self.order.atomic_clear.val() {
                    self.state.d.next = State::SData;
                }
            }
            State::SData => {
                // The word is registered each cycle here (`wa.sample`): the one of the cycle
                // the R beat arrives is what SAlu (an atomic) or ALoad (Append's tail) reads.
                if self.xs.word_in.val() {
                    // An offload's word: its block goes to the unit now (`xs.word_in`).
                    self.state.d.next = State::Offload;
                } else if self.m_axi_rvalid.val() & self.r_idle.val() & self.ap.q.val() {
                    self.state.d.next = State::ALoad;
                } else if self.m_axi_rvalid.val() & self.r_idle.val() {
                    self.state.d.next = State::SAlu;
                }
            }
            State::SAlu => {
                self.rs_status.d.next = self.st_ok.val();
                self.rs_use_arg0.d.next = true;
                self.rs_arg0.d.next = self.wa.old.val();
                self.wa.alu_load.next = true;
                self.sync.rec_valid.next = self.once.q.val();
                if self.sync.alu_write.val() {
                    self.state.d.next = State::SWrite;
                } else {
                    self.state.d.next = State::Resp;
                }
            }
            State::ALoad => {
                // The registered tail word into the placement's sums; placed next cycle.
                self.apl.load.next = true;
                self.state.d.next = State::APlace;
            }
            State::APlace => {
                // Placed, the record's range is translated with write permission (one or two
                // pages) like a write's.
                self.state.d.next = State::Resp;
                if self.apl.log_full.val() {
                    self.rs_status.d.next = self.st_log_full.val();
                } else if self.apl.past_va.val() {
                    self.rs_status.d.next = self.st_bad_request.val();
                } else {
                    self.vaq.d.next = self.apl.record_va.val();
                    self.t_va.next = self.apl.record_va.val();
                    self.o.d.next = self.apl.record_va.val().get_bits::<6>(0);
                    self.len.d.next = self.apl.footprint.val();
                    self.need.d.next = self.need_write.val();
                    self.piece.d.next = false;
                    self.t_start.next = true;
                    self.state.d.next = State::Translate;
                }
            }
            State::SWrite => {
                // The W channel is the write-data stage's until it is done.
                // The word (or the offload's block) goes out through the one-beat writer.
                if !self.w_busy.val() {
                    if self.xs.block_done.val() {
                        // The offload's block is written: the unit is told.
                        self.state.d.next = State::Offload;
                    } else if self.bw.done.val() & self.ap.q.val() {
                        self.sync.rec_valid.next = self.once.q.val();
                        self.sync.rec_value.next = self.apl.old_tail.val();
                        self.rs_status.d.next = self.st_ok.val();
                        self.rs_arg0.d.next = self.apl.old_tail.val();
                        if self.durable.q.val() {
                            self.state.d.next = State::Persist;
                        } else {
                            self.state.d.next = State::Resp;
                        }
                    } else if self.bw.done.val() {
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
                self.sync.lk_valid.next = self.xs.ring_lookup.val();
                self.sync.skip_valid.next = self.xs.ring_skip.val();
                if self.xs.access.val() {
                    self.vaq.d.next = self.xs.access_va.val();
                    self.t_va.next = self.xs.access_va.val();
                    // An 8-byte aligned word, read as an atomic's.
                    self.len.d.next = self.atomic_bytes.val();
                    self.need.d.next = self.need_read.val();
                    if self.xs.access_write.val() {
                        // A 64-byte block (aligned: one page), kept with its strobes.
                        self.len.d.next = 64.into();
                        self.need.d.next = self.need_write.val();
                    }
                    self.piece.d.next = false;
                    self.t_start.next = true;
                    self.state.d.next = State::Translate;
                }
                if self.xs.ans_valid.val() {
                    // A Clio-KV put or delete that executed records its answer (errors too,
                    // with value 0); a replay is the request's header with the recorded status
                    // and arg0, nothing else.
                    self.sync.rec_valid.next = self.xs.ring_record.val();
                    self.sync.rec_status.next = self.xs.ring_status.val();
                    self.sync.rec_value.next = self.xs.ring_value.val();
                    self.rs_status.d.next = self.xs.ans_status.val();
                    self.rs_plen.d.next = 0.into();
                    self.rs_arg0.d.next = self.xs.ans_arg0.val();
                    self.rs_use_arg0.d.next = self.xs.ans_replay.val();
                    self.state.d.next = State::Resp;
                    if self.xs.ans_read.val() {
                        self.vaq.d.next = self.xs.ans_read_va.val();
                        self.t_va.next = self.xs.ans_read_va.val();
                        self.o.d.next = self.xs.ans_read_va.val().get_bits::<6>(0);
                        self.len.d.next = self.xs.ans_read_len.val();
                        self.need.d.next = self.need_read.val();
                        self.piece.d.next = false;
                        self.rs_len.d.next = self.xs.ans_read_len.val() + self.header_len.val();
                        self.rs_plen.d.next = bit_cast::<16, 12>(self.xs.ans_read_len.val());
                        self.t_start.next = true;
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
                self.sp_rx_valid.next = true;
                // REQUEST: kind, the member (client, u16 LE at byte 2), route, header bytes
                // 0..48 (never the key).
                self.sp_rx_desc.next = self.spd.request.val();
                if self.sp_rx_ready.val() {
                    self.state.d.next = State::Drain;
                }
            }
            State::SpTx => {
                // The descriptor's actions are `sptx`'s (wired above); the executor waits for a
                // PTE_WRITE's beat, or sends a REPLY's header as a payload-less response along
                // its route.
                self.state.d.next = State::Drain;
                if self.sptx.to_pte.val() {
                    self.state.d.next = State::SpPte;
                }
                if self.sptx.reply.val() {
                    self.route.d.next = self.spd.route.val();
                    self.hdr.d.next = self.spd.header.val();
                    self.rs_status.d.next = self.spd.reply_status.val();
                    self.rs_flags.d.next = self.spd.reply_flags.val();
                    self.rs_plen.d.next = 0.into();
                    self.rs_use_arg0.d.next = false;
                    self.state.d.next = State::Resp;
                }
            }
            State::SpPte => {
                // The W channel is the write-data stage's until it is done.
                // The PTE goes out through the one-beat writer (as a fault's write-back does).
                if self.bw.done.val() {
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
            self.tr.hit_take.next = self.state.q.val() == State::Translate;
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
            self.rd.job_valid.next = true;
            if self.rd.job_ready.val() {
                self.x_done.next = true;
                self.x_free.next = true;
                self.state.d.next = State::Idle;
            }
            if self.x_done.val() & self.rd_seg.q.val() & self.rseg.more.val() & !self.x_only.val() {
                self.rd_i.d.next = self.rd_i.q.val() + 1;
                self.vaq.d.next = self.rseg.next_va.val();
                self.t_va.next = self.rseg.next_va.val();
                self.len.d.next = self.rseg.next_len.val();
                self.rs_len.d.next = self.rseg.next_len.val() + self.header_len.val();
                self.rs_plen.d.next = bit_cast::<16, 12>(self.rseg.next_len.val());
                self.piece.d.next = false;
                self.x_free.next = false;
                self.t_start.next = true;
                self.state.d.next = State::Translate;
            }
        }
        // Hand the data beats to the write-data stage once it is free; the slot goes
        // with them, and the response follows at once (later reads wait for the B).
        self.w_pass.next = self.wr_hand.val() & !self.w_busy.val();
        if self.w_pass.val() {
            self.wd.start.next = true;
            self.rs_status.d.next = self.st_ok.val();
            if self.ap.q.val() {
                self.wa.tail_load.next = true;
                self.state.d.next = State::SWrite;
            } else if self.durable.q.val() {
                self.state.d.next = State::Persist;
            } else {
                // A plain write's OK answer (header only) goes to the read-data stage in the
                // same cycle when it takes it, and the executor takes the next frame.
                self.state.d.next = State::Resp;
                self.rd.job_valid.next = true;
                self.rd.job_only.next = true;
                self.rd.job_len.next = self.header_len.val();
                self.rd.job_hdr.next = self.rhdr.response_ok.val();
                if self.rd.job_ready.val() {
                    self.x_free.next = true;
                    self.state.d.next = State::Idle;
                }
            }
        }
        // A write burst ends: a page-table write (fault write-back, PTE_WRITE: the executor's
        // own one-beat writes for the translate stage / in SpPte) or a data write (write, atomic,
        // Append).
        self.order.w_done.next =
            self.m_axi_wvalid.val() & self.m_axi_wready.val() & self.m_axi_wlast.val();
        self.order.w_page_table.next =
            (self.tr.pte_write.val() | (self.state.q.val() == State::SpPte)) & !self.w_busy.val();
        // ---- The executor's slots (`SlotQueue`): done with a request, it releases its slot
        // (unless the write-data stage took it); the next frame is the one after, whether it is
        // there, its fields, and its key lookup (`keys.ok` in Dispatch is this frame's: the slot
        // holds it until released).
        self.sq.reset.next = self.reset.val();
        self.sq.full.next = self.ingest.full.val();
        for k in 0..4 {
            self.sq.verdict[k].next = self.ingest.verdict[k].val();
            self.sq.hdr[k].next = self.ingest.hdr[k].val();
            self.sq.key[k].next = self.ingest.key[k].val();
            self.sq.client[k].next = self.ingest.client[k].val();
            self.sq.route[k].next = self.ingest.route[k].val();
            self.sq.lane[k].next = self.ingest.lane[k].val();
        }
        self.sq.w_busy.next = self.w_busy.val();
        self.sq.w_slot.next = self.wd.slot.val();
        self.sq.done.next = self.x_done.val();
        self.sq.pass.next = self.w_pass.val();
        self.keys.lk_pid.next = self.sq.next_pid.val();
        self.keys.lk_key.next = self.sq.next_key.val();
        self.x_take.next = false;
        // ---- Take the next frame or descriptor (`x_free`: idle, or finishing a request with
        // nothing after it). A descriptor is taken from Idle only (its `sp_tx_ready` comes
        // from registers): a finishing request that sees one waiting goes to Idle first.
        if self.x_free.val() {
            self.rs_flags.d.next = self.flags_response.val();
            self.rs_plen.d.next = 0.into();
            self.rs_use_arg0.d.next = false;
            self.ap.d.next = false;
            self.ext.clear.next = true;
            self.xs.clear.next = true;
            self.rd_seg.d.next = false;
            self.rs_len.d.next = self.header_len.val();
            if self.keys.ready.val() & self.sp_tx_valid.val() {
                if self.state.q.val() == State::Idle {
                    self.spd.take.next = true;
                    self.ptw.desc_take.next = true;
                    self.ring_key.d.next = bit_cast::<64, 32>(self.spd.take_member.val()) << 32;
                    self.state.d.next = State::SpTx;
                }
            } else if self.keys.ready.val() & self.sq.next_full.val() {
                // Take the received frame: its header, route and offset, and act on the
                // ack layer's verdict (drop, NACK, or dispatch next cycle). Its key is
                // looked up this cycle (above), for Dispatch.
                self.x_take.next = true;
                self.hdr.d.next = self.sq.next_hdr.val();
                self.hcli.d.next = self.sq.next_client.val();
                self.ring_key.d.next = self.sq.next_ring_key.val();
                self.route.d.next = self.sq.next_route.val();
                self.o.d.next = self.sq.next_lane.val();
                if self.sq.next_verdict.val().get_bit(0) {
                    self.state.d.next = State::Drain;
                } else if self.sq.next_verdict.val().get_bit(1) {
                    self.stats.nack.next = true;
                    self.rs_status.d.next = self.st_nack.val();
                    self.state.d.next = State::Resp;
                } else {
                    self.state.d.next = State::Dispatch;
                }
            }
        }
        self.sq.take.next = self.x_take.val();
        // Slots freed this cycle go back to the ingest stage.
        self.ingest.freed.next = self.sq.clear.val() | self.w_release.val();
        // ---- The TLB look-ahead: the ingest slots, what is taken, and the lookup port when the
        // executor leaves it free.
        self.la.hdr_in.next = self.ingest.header_in.val();
        self.la.hdr_slot.next = self.ingest.header_slot.val();
        self.la.hdr_data.next = bit_cast::<384, 512>(self.rx_data.val());
        self.la.page_shift.next = self.cfg_page_shift.val();
        self.la.headed.next = self.ingest.headed.val();
        self.la.freed.next = self.sq.clear.val() | self.w_release.val();
        self.la.taken.next = self.sq.taken.val();
        self.la.head.next = self.sq.head.val();
        self.la.use_slot.next = self.sq.slot.val();
        self.la.tlb_update.next = self.tlb.up_valid.val();
        self.la.res_hit.next = self.tlb.res_hit.val();
        self.la.res_alloc.next = self.tlb.res_alloc.val();
        self.la.res_perms.next = self.tlb.res_perms.val();
        self.la.res_pfn.next = self.tlb.res_pfn.val();
        self.la.port_free.next = !self.x_lk.val();
        self.tlb.lk_valid.next = self.x_lk.val() | self.la.lk_valid.val();
        if !self.x_lk.val() {
            self.tlb.lk_pid.next = self.la.lk_pid.val();
            self.tlb.lk_vpn.next = self.la.lk_vpn.val();
        }
        // The translations the executor starts this cycle.
        self.tr.start.next = self.t_start.val();
        self.tr.start_looked.next = self.x_dlk.val();
        // Dispatch's page is the look-ahead's slot's: a miss walks with its hash, computed as
        // the header arrived.
        self.tr.start_ahead.next = self.x_dlk.val();
        self.tr.ahead_ok.next = self.la.use_hash_ok.val();
        self.tr.ahead_hash.next = self.la.use_hash.val();
        self.tr.start_va.next = self.t_va.val();
        // A TLB hit: the translate stage's, or a look-ahead translation taken in Dispatch.
        self.stats.hit.next =
            self.tr.ev_hit.val() | (self.hit_go.val() & (self.state.q.val() == State::Dispatch));
        if self.reset.val() {
            self.state.d.next = State::Idle;
        }
    }
}

crate::impl_clocked!(FastpathTop);

#[cfg(test)]
mod tests;
