//! The fast path's top: network RX/TX, DRAM AXI4 master and slow-path rings around the
//! stage blocks of `crate::fastpath` (and the TLB, key table and sync unit they share).
//!
//! Six stages run side by side, each moving one 512-bit beat per cycle: the ingest stage
//! receives frames into four `wbuf` slots (CRC checked as they stream, payload realigned to
//! DRAM lanes); the TLB look-ahead (`TranslateAhead`) translates the reads and writes waiting
//! there; the executor (`Executor`) takes them in order and runs each request's class (the
//! dispatch decode's checks; one or two pages through the translate stage: TLB, else walk +
//! page fault, or the page-fault unit straight from a TLB entry of an allocated page;
//! atomics; the offloads on the extend port; slow-path descriptors); the write-data stage
//! streams a write's W beats from its slot; the read-data stage takes a read's R beats and
//! builds every response in request order (a queue of 16 addressed reads and payload-less
//! responses, so later reads' addresses go out while it works and the DRAM latency is
//! hidden); the transmit stage sends finished responses from two `txbuf` slots. Writes do
//! not wait for their B responses: reads wait for the writes they could see, writes for
//! earlier reads' data. The behaviour is `sim::model::board::CBoard::handle` / `service`; see
//! `docs/hardware.md` for the pipeline, the ports, the cycle counts and the documented
//! differences. A read of up to `MAX_REQUEST_LEN` bytes is answered one packet per KiB
//! (`ReadSeg`), each packet translated, read and sent in turn.
//!
//! The blocks are grouped in five sides, each a sub-top of its own: the receive side
//! ([`Receive`]: ingest, slots, key and route checks, look-ahead), the core ([`Execute`]: the
//! executor and the blocks that serve its request), the memory side ([`Memory`]:
//! translation, TLB, PTE writer, ordering rules, write-data stage, one-beat writer), the
//! slow-path port ([`SlowPathPort`]) and the response side ([`Respond`]: read data,
//! transmit). This module holds the sides, the DRAM port's arbiter ([`DramPort`]) and the
//! statistics ([`Stats`]); `wiring.rs` joins each pair of sides by its link
//! (`crate::fastpath::links::sides`), the arbiter to its clients, and the flat external ports.
//!
//! The header is one beat (64 bytes): the payload starts at beat 1, so the RX and TX
//! realignment shifts by the VA's lane offset only. Every request but Register must carry its
//! RAS's key: every frame's pid, key and epoch are looked up in the key table as its header
//! arrives (`KeyCheck`, the answers kept per slot), and Dispatch answers DENIED, after
//! `Header::parse`'s checks and before anything executes, when the key does not open the pid,
//! and STALE when it does but the frame's epoch is older than the RAS's. Responses carry header
//! bytes 0..48 and zeros in 48..64 (never the key, nor an epoch).

use crate::fastpath::dram_port::DramPort;
use crate::fastpath::execute::Execute;
// Every interface between the sides (`fastpath::links::sides`), joined in `wiring.rs`.
use crate::fastpath::links::*;
use crate::fastpath::memory::Memory;
use crate::fastpath::piece_shift::PieceShift;
use crate::fastpath::receive::Receive;
use crate::fastpath::respond::Respond;
use crate::fastpath::slow_path_port::SlowPathPort;
use crate::fastpath::stats::Stats;
use clio_proto::consts::{BEAT_BYTES, DATAPATH_BITS, MAX_PAYLOAD};
use clio_proto::header::{HEADER_LEN, ROUTED_HEADER_LEN};
use clio_proto::replog;
use rust_hdl::prelude::*;

// Values the wiring compares with are `Spec` fields built from proto (see `crate::spec`); the
// executor and the stage blocks pin their own literals (the header fields each check reads
// from the header beat, for one). The top's literals:
// the header is one beat whose bytes 0..48 are the low 384 bits of the RX beat
// (`bit_cast::<384, 512>`);
const _: () = assert!(
    DATAPATH_BITS == 512 && BEAT_BYTES == 64 && HEADER_LEN == 64 && ROUTED_HEADER_LEN == 48,
    "one-beat header"
);
// a wbuf slot is 32 beats (`slot << 5`) and holds a packet's payload;
const _: () = assert!(MAX_PAYLOAD / BEAT_BYTES <= 32);
// Append's record length is the header's total_len in 12 bits (`bit_cast::<12, 32>`): the
// largest record's footprint fits.
const _: () = assert!(
    replog::MAX_RECORD as usize == MAX_PAYLOAD && replog::footprint(replog::MAX_RECORD) < 1 << 12
);

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
/// hit in the walk's result cycle), less the hit's own cycles. (A walker that hashed the page
/// itself, once the TLB's miss is known, would put the hash behind its AR queue, the page-fault
/// unit and the translation's `done` cycle: 25; docs/hardware.md has the history.)
pub const WALK_EXTRA_CYCLES: u64 = crate::hash_unit::HASH_LATENCY as u64 + 6;

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
    /// RX descriptors the slow path has taken since reset, mod 2^16 (the RX tail): the
    /// per-source share (`RxShare`) counts what each source still holds.
    pub sp_rx_taken: Signal<In, Bits<16>>,
    /// Slow-path TX descriptor valid.
    pub sp_tx_valid: Signal<In, Bit>,
    /// Slow-path TX ready.
    pub sp_tx_ready: Signal<Out, Bit>,
    /// Slow-path TX descriptor (REPLY, PTE_WRITE, TLB_INVALIDATE, FREE_PAGE, KEY_WRITE,
    /// RING_OWNER, KV_CONFIG).
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
    /// Requests refused by the key check: DENIED or STALE (the model's `denied`).
    pub stat_denied: Signal<Out, Bits<32>>,
    // The fields' order is the instances' order in the Verilog, which steers ABC's choice of
    // wide LUTs in the board synthesis: for the same logic the first order tried mapped to
    // 55,858 LUT and this one to 49,344 (docs/utilization.md).
    /// Statistics (`stat_*`): frames received, responses sent, NACKs, TLB hits and misses,
    /// bucket reads, page faults, requests refused by the key check (DENIED or STALE).
    stats: Stats,
    /// The pieces' size from the page size (`PieceShift`: at most 4 KiB, the AXI burst bound).
    pieces: PieceShift,
    /// The DRAM port's arbiter: AR, R, AW, W and B among the executor, the walk, the
    /// one-beat writer and the write-data stage.
    dram: DramPort,
    /// The response side (`Respond`): the read-data stage builds every response in request
    /// order (a read's from its R beats), the transmit stage sends it.
    pub(crate) resp: Respond,
    /// The slow-path port (`SlowPathPort`): the rings' descriptors and the RX ring's share.
    slow: SlowPathPort,
    /// The memory side (`Memory`): translation, the TLB, the PTE writer, the ordering rules,
    /// the write-data stage and the one-beat writer.
    pub(crate) mem: Memory,
    /// The core (`Execute`): the executor and the blocks that serve its request (decode,
    /// response header, word accesses, Append's placement, the sync unit, the persist
    /// handshake, the offload units).
    pub(crate) core: Execute,
    /// The receive side (`Receive`): frames into the four `wbuf` slots, their key and route
    /// checks, the TLB look-ahead, the executor's place among the slots.
    pub(crate) recv: Receive,
}

crate::impl_clocked!(FastpathTop);

mod wiring;

#[cfg(test)]
mod tests;
