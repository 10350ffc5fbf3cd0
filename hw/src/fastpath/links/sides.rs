//! The links between the fast path's sides, the sub-tops the top joins: the receive side
//! ([`crate::fastpath::receive::Receive`]), the core ([`crate::fastpath::execute::Execute`]: the
//! executor and the blocks that serve its request), the memory side
//! ([`crate::fastpath::memory::Memory`]: translation, TLB, PTE writer, ordering rules, the
//! write-data stage and the one-beat writer) and the slow-path port
//! ([`crate::fastpath::slow_path_port::SlowPathPort`]: the rings' descriptors and the RX
//! ring's share). Each is a bundle of the block links of `links/` (and of the few single
//! signals between the sides), declared once with its mate; the top joins each pair with one
//! line. A block link that crosses sides is added here, to both structs, and linked inside the
//! two sides.
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use super::*;
use rust_hdl::prelude::*;

/// The receive side's link with the core (mate [`CoreRecv`]).
#[derive(LogicInterface, Default)]
#[join = "CoreRecv"]
pub struct RecvCore {
    /// The next frame, to the executor.
    pub frame: NextFrame,
    /// The executor takes, finishes or passes on its frame.
    pub queue: QueueReleaseIn,
    /// The key check's verdict on the executor's frame.
    pub keys: KeyVerdict,
    /// The route check's verdict on the executor's frame.
    pub routes: RouteVerdict,
    /// The look-ahead's registers of the executor's slot.
    pub ahead: AheadSlot,
    /// Clio-KV's payload feeder reads block `pay_block` of the executor's slot this cycle.
    pub pay_fetch: Signal<In, Bit>,
    /// The block the feeder reads.
    pub pay_block: Signal<In, Bits<5>>,
    /// The `wbuf` read data: the block addressed the cycle before.
    pub buf_data: Signal<Out, Bits<512>>,
    /// Clio-KV is configured.
    pub kv_en: Signal<In, Bit>,
}

/// The core's link with the receive side (mate [`RecvCore`]).
#[derive(LogicInterface, Default)]
#[join = "RecvCore"]
pub struct CoreRecv {
    /// The next frame, to the executor.
    pub frame: NextFrameIn,
    /// The executor takes, finishes or passes on its frame.
    pub queue: QueueRelease,
    /// The key check's verdict on the executor's frame.
    pub keys: KeyVerdictIn,
    /// The route check's verdict on the executor's frame.
    pub routes: RouteVerdictIn,
    /// The look-ahead's registers of the executor's slot.
    pub ahead: AheadUse,
    /// Clio-KV's payload feeder reads block `pay_block` of the executor's slot this cycle.
    pub pay_fetch: Signal<Out, Bit>,
    /// The block the feeder reads.
    pub pay_block: Signal<Out, Bits<5>>,
    /// The `wbuf` read data: the block addressed the cycle before.
    pub buf_data: Signal<In, Bits<512>>,
    /// Clio-KV is configured.
    pub kv_en: Signal<Out, Bit>,
}

/// The receive side's link with the memory side (mate [`MemRecv`]): the write-data stage's
/// slot and `wbuf` reads, the look-ahead's TLB port.
#[derive(LogicInterface, Default)]
#[join = "MemRecv"]
pub struct RecvMem {
    /// The write-data stage is streaming: it owns the `wbuf` read port and holds its slot.
    pub w_busy: Signal<In, Bit>,
    /// The slot the write-data stage holds.
    pub w_slot: Signal<In, Bits<2>>,
    /// The slot the write-data stage gives back this cycle (bit k = slot k).
    pub w_release: Signal<In, Bits<4>>,
    /// The write-data stage's `wbuf` read address (while `w_busy`).
    pub w_address: Signal<In, Bits<7>>,
    /// The `wbuf` read data: the block addressed the cycle before.
    pub buf_data: Signal<Out, Bits<512>>,
    /// The executor's slot (the one a write it hands over streams from).
    pub slot: Signal<Out, Bits<2>>,
    /// The page's hash, computed as the header arrived, for a walk.
    pub hash: PageHash,
    /// The look-ahead's own TLB lookups.
    pub tlb_ahead: TlbLookup,
    /// Dispatch's TLB lookup, with the look-ahead's registers of its slot.
    pub tlb_dispatch: TlbLookup,
    /// The TLB's lookup result.
    pub tlb_res: TlbResultIn,
    /// The TLB's lookup port is the look-ahead's this cycle.
    pub tlb_free: Signal<In, Bit>,
    /// The TLB changes this cycle (an insert or the slow path's change).
    pub tlb_update: Signal<In, Bit>,
}

/// The memory side's link with the receive side (mate [`RecvMem`]).
#[derive(LogicInterface, Default)]
#[join = "RecvMem"]
pub struct MemRecv {
    /// The write-data stage is streaming: it owns the `wbuf` read port and holds its slot.
    pub w_busy: Signal<Out, Bit>,
    /// The slot the write-data stage holds.
    pub w_slot: Signal<Out, Bits<2>>,
    /// The slot the write-data stage gives back this cycle (bit k = slot k).
    pub w_release: Signal<Out, Bits<4>>,
    /// The write-data stage's `wbuf` read address (while `w_busy`).
    pub w_address: Signal<Out, Bits<7>>,
    /// The `wbuf` read data: the block addressed the cycle before.
    pub buf_data: Signal<In, Bits<512>>,
    /// The executor's slot (the one a write it hands over streams from).
    pub slot: Signal<In, Bits<2>>,
    /// The page's hash, computed as the header arrived, for a walk.
    pub hash: PageHashIn,
    /// The look-ahead's own TLB lookups.
    pub tlb_ahead: TlbLookupIn,
    /// Dispatch's TLB lookup, with the look-ahead's registers of its slot.
    pub tlb_dispatch: TlbLookupIn,
    /// The TLB's lookup result.
    pub tlb_res: TlbResult,
    /// The TLB's lookup port is the look-ahead's this cycle.
    pub tlb_free: Signal<Out, Bit>,
    /// The TLB changes this cycle (an insert or the slow path's change).
    pub tlb_update: Signal<Out, Bit>,
}

/// The receive side's link with the slow-path port (mate [`SlowRecv`]).
#[derive(LogicInterface, Default)]
#[join = "SlowRecv"]
pub struct RecvSlow {
    /// KEY_WRITE from the slow path.
    pub key_wr: KeyWriteIn,
    /// ROUTE_KEY from the slow path.
    pub route_key: RouteKeyIn,
    /// The executor's frame's source (for the RX ring's per-source share).
    pub source: Signal<Out, Bits<4>>,
}

/// The slow-path port's link with the receive side (mate [`RecvSlow`]).
#[derive(LogicInterface, Default)]
#[join = "RecvSlow"]
pub struct SlowRecv {
    /// KEY_WRITE from the slow path.
    pub key_wr: KeyWrite,
    /// ROUTE_KEY from the slow path.
    pub route_key: RouteKey,
    /// The executor's frame's source (for the RX ring's per-source share).
    pub source: Signal<In, Bits<4>>,
}

/// The core's link with the memory side (mate [`MemCore`]): the executor's translations,
/// ordering, write jobs and one-beat writes.
#[derive(LogicInterface, Default)]
#[join = "MemCore"]
pub struct CoreMem {
    /// The executor's pages, to the translate stage.
    pub tr: TranslateUse,
    /// The ordering rules' clearances.
    pub order: OrderClearIn,
    /// A write whose bursts the executor has addressed, for the write-data stage.
    pub write: WriteJob,
    /// A word or an offload's block, for the one-beat writer.
    pub word: Beat,
    /// The executor writes a PTE (a slow-path PTE_WRITE, in SpPte) with the one-beat writer.
    pub beat_pte: Signal<Out, Bit>,
    /// The executor writes a word or block with the one-beat writer.
    pub beat_word: Signal<Out, Bit>,
    /// The pid the translation uses (Clio-KV's store's for an offload's own access).
    pub pid: Signal<Out, Bits<16>>,
    /// The executor starts a translation of Dispatch's page this cycle (looked up ahead).
    pub lookup: Signal<Out, Bit>,
    /// An Append record's realignment from its slot, for the write-data stage.
    pub shift: Signal<Out, Bits<4>>,
    /// The request's payload length, for the write-data stage.
    pub payload_len: Signal<Out, Bits<12>>,
    /// The executor takes a slow-path TX descriptor this cycle (the PTE writer decodes it).
    pub desc_take: Signal<Out, Bit>,
    /// The write-data stage is streaming.
    pub w_busy: Signal<In, Bit>,
    /// The one-beat writer's write is done.
    pub beat_done: Signal<In, Bit>,
}

/// The memory side's link with the core (mate [`CoreMem`]).
#[derive(LogicInterface, Default)]
#[join = "CoreMem"]
pub struct MemCore {
    /// The executor's pages, to the translate stage.
    pub tr: TranslatePort,
    /// The ordering rules' clearances.
    pub order: OrderClear,
    /// A write whose bursts the executor has addressed, for the write-data stage.
    pub write: WriteJobIn,
    /// A word or an offload's block, for the one-beat writer.
    pub word: BeatIn,
    /// The executor writes a PTE (a slow-path PTE_WRITE, in SpPte) with the one-beat writer.
    pub beat_pte: Signal<In, Bit>,
    /// The executor writes a word or block with the one-beat writer.
    pub beat_word: Signal<In, Bit>,
    /// The pid the translation uses (Clio-KV's store's for an offload's own access).
    pub pid: Signal<In, Bits<16>>,
    /// The executor starts a translation of Dispatch's page this cycle (looked up ahead).
    pub lookup: Signal<In, Bit>,
    /// An Append record's realignment from its slot, for the write-data stage.
    pub shift: Signal<In, Bits<4>>,
    /// The request's payload length, for the write-data stage.
    pub payload_len: Signal<In, Bits<12>>,
    /// The executor takes a slow-path TX descriptor this cycle (the PTE writer decodes it).
    pub desc_take: Signal<In, Bit>,
    /// The write-data stage is streaming.
    pub w_busy: Signal<Out, Bit>,
    /// The one-beat writer's write is done.
    pub beat_done: Signal<Out, Bit>,
}

/// The core's link with the slow-path port (mate [`SlowCore`]): descriptors taken and acted
/// on, REQUESTs pushed.
#[derive(LogicInterface, Default)]
#[join = "SlowCore"]
pub struct CoreSlow {
    /// The TX descriptor being taken, decoded.
    pub desc: DescTakenIn,
    /// A TX descriptor's actions in SpTx.
    pub sptx: TxActUse,
    /// RING_OWNER / RING_SHARE, to the sync unit.
    pub ring: RingControlIn,
    /// KV_CONFIG's load pulse, to the extend path.
    pub kv_at: KvLoadIn,
    /// KV_CONFIG's store, to the extend path.
    pub kv: KvConfigIn,
    /// A TX descriptor is waiting.
    pub tx_valid: Signal<In, Bit>,
    /// The executor takes the TX descriptor (the ring's ready).
    pub tx_ready: Signal<Out, Bit>,
    /// The executor takes a TX descriptor this cycle.
    pub take: Signal<Out, Bit>,
    /// The RX ring takes a descriptor this cycle if one is offered.
    pub rx_ready: Signal<In, Bit>,
    /// The executor's frame's source may push a REQUEST (the RX ring's share).
    pub rx_ok: Signal<In, Bit>,
    /// The executor pushes a REQUEST this cycle.
    pub push: Signal<Out, Bit>,
    /// The REQUEST's client id.
    pub client: Signal<Out, Bits<16>>,
    /// The REQUEST's route.
    pub route: Signal<Out, Bits<256>>,
    /// The REQUEST's header.
    pub header: Signal<Out, Bits<384>>,
}

/// The slow-path port's link with the core (mate [`CoreSlow`]).
#[derive(LogicInterface, Default)]
#[join = "CoreSlow"]
pub struct SlowCore {
    /// The TX descriptor being taken, decoded.
    pub desc: DescTaken,
    /// A TX descriptor's actions in SpTx.
    pub sptx: TxActPort,
    /// RING_OWNER / RING_SHARE, to the sync unit.
    pub ring: RingControl,
    /// KV_CONFIG's load pulse, to the extend path.
    pub kv_at: KvLoad,
    /// KV_CONFIG's store, to the extend path.
    pub kv: KvConfig,
    /// A TX descriptor is waiting.
    pub tx_valid: Signal<Out, Bit>,
    /// The executor takes the TX descriptor (the ring's ready).
    pub tx_ready: Signal<In, Bit>,
    /// The executor takes a TX descriptor this cycle.
    pub take: Signal<In, Bit>,
    /// The RX ring takes a descriptor this cycle if one is offered.
    pub rx_ready: Signal<Out, Bit>,
    /// The executor's frame's source may push a REQUEST (the RX ring's share).
    pub rx_ok: Signal<Out, Bit>,
    /// The executor pushes a REQUEST this cycle.
    pub push: Signal<In, Bit>,
    /// The REQUEST's client id.
    pub client: Signal<In, Bits<16>>,
    /// The REQUEST's route.
    pub route: Signal<In, Bits<256>>,
    /// The REQUEST's header.
    pub header: Signal<In, Bits<384>>,
}

/// The memory side's link with the slow-path port (mate [`SlowMem`]): the TLB's and the page
/// tables' changes from the slow path, the page-fault notices to it.
#[derive(LogicInterface, Default)]
#[join = "SlowMem"]
pub struct MemSlow {
    /// FREE_PAGE: a frame for the page-fault unit's free list.
    pub fp: FreePageIn,
    /// The slow path's TLB inserts and invalidations.
    pub up: TlbChangeIn,
    /// A PTE_WRITE's fields, for the PTE writer.
    pub pte: PteDescIn,
    /// The PTE writer's decode of the PTE_WRITE.
    pub decoded: PteDecoded,
    /// A fault's PAGE_MAPPED notice offered this cycle.
    pub notice_valid: Signal<Out, Bit>,
    /// The notice's fields.
    pub notice: PageMapped,
    /// The RX ring has room.
    pub room: Signal<In, Bit>,
    /// The RX ring takes a descriptor this cycle if one is offered.
    pub ready: Signal<In, Bit>,
}

/// The slow-path port's link with the memory side (mate [`MemSlow`]).
#[derive(LogicInterface, Default)]
#[join = "MemSlow"]
pub struct SlowMem {
    /// FREE_PAGE: a frame for the page-fault unit's free list.
    pub fp: FreePage,
    /// The slow path's TLB inserts and invalidations.
    pub up: TlbChange,
    /// A PTE_WRITE's fields, for the PTE writer.
    pub pte: PteDesc,
    /// The PTE writer's decode of the PTE_WRITE.
    pub decoded: PteDecodedIn,
    /// A fault's PAGE_MAPPED notice offered this cycle.
    pub notice_valid: Signal<In, Bit>,
    /// The notice's fields.
    pub notice: PageMappedIn,
    /// The RX ring has room.
    pub room: Signal<Out, Bit>,
    /// The RX ring takes a descriptor this cycle if one is offered.
    pub ready: Signal<Out, Bit>,
}
