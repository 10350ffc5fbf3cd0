//! The links of the slow path's descriptors and notices: a TX descriptor's kind and fields to the
//! blocks that act on it (the slow-path TX block, the PTE writer, the extend port), and a fault's
//! PTE and PAGE_MAPPED page from the translate stage.
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use rust_hdl::prelude::*;

/// The held TX descriptor as the slow-path TX block acts on it: its kind and the
/// invalidation's fields (mate [`DescKind`]).
#[derive(LogicInterface, Default)]
#[join = "DescKind"]
pub struct DescKindIn {
    /// The taken descriptor's kind.
    pub pte_write: Signal<In, Bit>,
    /// The taken descriptor is a TLB_INVALIDATE.
    pub tlb_invalidate: Signal<In, Bit>,
    /// The taken descriptor is a FREE_PAGE.
    pub free_page: Signal<In, Bit>,
    /// The taken descriptor is a KEY_WRITE.
    pub key_write: Signal<In, Bit>,
    /// The taken descriptor is a KV_CONFIG.
    pub kv_config: Signal<In, Bit>,
    /// The taken descriptor is a RING_RELEASE.
    pub ring_release: Signal<In, Bit>,
    /// The taken descriptor is a ROUTE_KEY.
    pub route_key: Signal<In, Bit>,
    /// The taken descriptor is a RING_SHARE.
    pub ring_share: Signal<In, Bit>,
    /// The taken descriptor is a REPLY.
    pub reply: Signal<In, Bit>,
    /// Its fields (module doc).
    pub pid: Signal<In, Bits<16>>,
    /// TLB_INVALIDATE's virtual page number (its low `VPN_BITS` bits).
    pub vpn: Signal<In, Bits<36>>,
    /// TLB_INVALIDATE's vpn has no bits beyond `VPN_BITS` (else it can match nothing).
    pub vpn_fits: Signal<In, Bit>,
}

/// The held TX descriptor's kind and the fields an invalidation needs, decoded (mate
/// [`DescKindIn`]).
#[derive(LogicInterface, Default)]
#[join = "DescKindIn"]
pub struct DescKind {
    /// The taken descriptor's kind.
    pub pte_write: Signal<Out, Bit>,
    /// The taken descriptor is a TLB_INVALIDATE.
    pub tlb_invalidate: Signal<Out, Bit>,
    /// The taken descriptor is a FREE_PAGE.
    pub free_page: Signal<Out, Bit>,
    /// The taken descriptor is a KEY_WRITE.
    pub key_write: Signal<Out, Bit>,
    /// The taken descriptor is a KV_CONFIG.
    pub kv_config: Signal<Out, Bit>,
    /// The taken descriptor is a RING_RELEASE.
    pub ring_release: Signal<Out, Bit>,
    /// The taken descriptor is a ROUTE_KEY.
    pub route_key: Signal<Out, Bit>,
    /// The taken descriptor is a RING_SHARE.
    pub ring_share: Signal<Out, Bit>,
    /// The taken descriptor is a REPLY.
    pub reply: Signal<Out, Bit>,
    /// Its fields (module doc).
    pub pid: Signal<Out, Bits<16>>,
    /// TLB_INVALIDATE's virtual page number (its low `VPN_BITS` bits).
    pub vpn: Signal<Out, Bits<36>>,
    /// TLB_INVALIDATE's vpn has no bits beyond `VPN_BITS` (else it can match nothing).
    pub vpn_fits: Signal<Out, Bit>,
}

/// A PTE_WRITE descriptor's PTE as the slow-path TX block acts on it (mate [`PteDecoded`]).
#[derive(LogicInterface, Default)]
#[join = "PteDecoded"]
pub struct PteDecodedIn {
    /// The PTE_WRITE taken names a slot inside the table.
    pub ok: Signal<In, Bit>,
    /// The TLB's update for the PTE_WRITE taken: invalidate (not used), pid, vpn, permissions,
    /// allocated-unmapped, and the frame (the PTE's, or its location when not valid).
    pub inval: Signal<In, Bit>,
    /// The TLB update's pid.
    pub pid: Signal<In, Bits<16>>,
    /// The TLB update's virtual page number.
    pub vpn: Signal<In, Bits<36>>,
    /// The TLB update's frame: the PTE's pfn, or its location `bucket << 4 | slot` when not valid.
    pub pfn: Signal<In, Bits<40>>,
    /// The TLB update's permissions (bit 0 read, bit 1 write).
    pub perms: Signal<In, Bits<2>>,
    /// The TLB update's page is allocated but not mapped (the PTE is not valid).
    pub alloc: Signal<In, Bit>,
}

/// The PTE writer's decode of a PTE_WRITE descriptor: valid, and the TLB update it makes
/// (mate [`PteDecodedIn`]).
#[derive(LogicInterface, Default)]
#[join = "PteDecodedIn"]
pub struct PteDecoded {
    /// The PTE_WRITE taken names a slot inside the table.
    pub ok: Signal<Out, Bit>,
    /// The TLB's update for the PTE_WRITE taken: invalidate (not used), pid, vpn, permissions,
    /// allocated-unmapped, and the frame (the PTE's, or its location when not valid).
    pub inval: Signal<Out, Bit>,
    /// The TLB update's pid.
    pub pid: Signal<Out, Bits<16>>,
    /// The TLB update's virtual page number.
    pub vpn: Signal<Out, Bits<36>>,
    /// The TLB update's frame: the PTE's pfn, or its location `bucket << 4 | slot` when not valid.
    pub pfn: Signal<Out, Bits<40>>,
    /// The TLB update's permissions (bit 0 read, bit 1 write).
    pub perms: Signal<Out, Bits<2>>,
    /// The TLB update's page is allocated but not mapped (the PTE is not valid).
    pub alloc: Signal<Out, Bit>,
}

/// A PTE_WRITE descriptor's fields as the PTE writer takes them (mate [`PteDesc`]).
#[derive(LogicInterface, Default)]
#[join = "PteDesc"]
pub struct PteDescIn {
    /// The descriptor being taken (`desc`), read as a PTE_WRITE: bucket, slot, PTE word 0 and
    /// word 1's pfn.
    pub bucket: Signal<In, Bits<64>>,
    /// The PTE_WRITE's slot in the bucket.
    pub slot: Signal<In, Bits<32>>,
    /// The PTE_WRITE's PTE word 0.
    pub word0: Signal<In, Bits<64>>,
    /// The PTE_WRITE's frame number (word 1's pfn).
    pub pfn: Signal<In, Bits<40>>,
}

/// The PTE_WRITE fields of the descriptor being taken: bucket, slot, PTE word 0 and frame
/// (mate [`PteDescIn`]).
#[derive(LogicInterface, Default)]
#[join = "PteDescIn"]
pub struct PteDesc {
    /// The descriptor being taken (`desc`), read as a PTE_WRITE: bucket, slot, PTE word 0 and
    /// word 1's pfn.
    pub bucket: Signal<Out, Bits<64>>,
    /// The PTE_WRITE's slot in the bucket.
    pub slot: Signal<Out, Bits<32>>,
    /// The PTE_WRITE's PTE word 0.
    pub word0: Signal<Out, Bits<64>>,
    /// The PTE_WRITE's frame number (word 1's pfn).
    pub pfn: Signal<Out, Bits<40>>,
}

/// A KV_CONFIG descriptor's store as the extend port latches it (mate [`KvConfig`]).
#[derive(LogicInterface, Default)]
#[join = "KvConfig"]
pub struct KvConfigIn {
    /// KV_CONFIG's status (OK when ready, else the status KV requests get).
    pub status: Signal<In, Bits<8>>,
    /// KV_CONFIG's store base (`StoreLayout::base`).
    pub base: Signal<In, Bits<64>>,
    /// KV_CONFIG's bucket count (`StoreLayout::buckets`).
    pub buckets: Signal<In, Bits<64>>,
    /// KV_CONFIG's record count (`StoreLayout::records`).
    pub records: Signal<In, Bits<32>>,
}

/// The store a KV_CONFIG descriptor announces: its status, base, buckets and records (mate
/// [`KvConfigIn`]).
#[derive(LogicInterface, Default)]
#[join = "KvConfigIn"]
pub struct KvConfig {
    /// KV_CONFIG's status (OK when ready, else the status KV requests get).
    pub status: Signal<Out, Bits<8>>,
    /// KV_CONFIG's store base (`StoreLayout::base`).
    pub base: Signal<Out, Bits<64>>,
    /// KV_CONFIG's bucket count (`StoreLayout::buckets`).
    pub buckets: Signal<Out, Bits<64>>,
    /// KV_CONFIG's record count (`StoreLayout::records`).
    pub records: Signal<Out, Bits<32>>,
}

/// A PAGE_MAPPED notice's page as the descriptor encoder takes it (mate [`PageMapped`]).
#[derive(LogicInterface, Default)]
#[join = "PageMapped"]
pub struct PageMappedIn {
    /// The notice's pid.
    pub pid: Signal<In, Bits<16>>,
    /// The notice's virtual page number.
    pub vpn: Signal<In, Bits<36>>,
    /// The notice's new frame number.
    pub pfn: Signal<In, Bits<40>>,
}

/// The page a fault mapped, for the slow path's PAGE_MAPPED notice: pid, page and frame (mate
/// [`PageMappedIn`]).
#[derive(LogicInterface, Default)]
#[join = "PageMappedIn"]
pub struct PageMapped {
    /// The notice's pid.
    pub pid: Signal<Out, Bits<16>>,
    /// The notice's virtual page number.
    pub vpn: Signal<Out, Bits<36>>,
    /// The notice's new frame number.
    pub pfn: Signal<Out, Bits<40>>,
}

/// A page fault's PTE as the PTE writer takes it (mate [`FaultPte`]).
#[derive(LogicInterface, Default)]
#[join = "FaultPte"]
pub struct FaultPteIn {
    /// A fault's PTE for the PTE writer (one cycle): its address and its 16 bytes.
    pub load: Signal<In, Bit>,
    /// The fault's PTE address (bytes).
    pub addr: Signal<In, Bits<40>>,
    /// The fault's PTE, 16 bytes.
    pub data: Signal<In, Bits<128>>,
}

/// The PTE a page fault writes: load it, its address and its word (mate [`FaultPteIn`]).
#[derive(LogicInterface, Default)]
#[join = "FaultPteIn"]
pub struct FaultPte {
    /// A fault's PTE for the PTE writer (one cycle): its address and its 16 bytes.
    pub load: Signal<Out, Bit>,
    /// The fault's PTE address (bytes).
    pub addr: Signal<Out, Bits<40>>,
    /// The fault's PTE, 16 bytes.
    pub data: Signal<Out, Bits<128>>,
}

/// The executor acting on a held TX descriptor (`SpTx`) and what the descriptor's actions
/// ask of it (mate [`TxActPort`], `SlowPathTx`'s side).
#[derive(LogicInterface, Default)]
#[join = "TxActPort"]
pub struct TxActUse {
    /// The executor acts on the held descriptor this cycle.
    pub act: Signal<Out, Bit>,
    /// A PTE_WRITE whose beat the executor writes (`SpPte`).
    pub to_pte: Signal<In, Bit>,
    /// A REPLY the executor sends as a payload-less response.
    pub reply: Signal<In, Bit>,
}

/// `SlowPathTx`'s side of [`TxActUse`].
#[derive(LogicInterface, Default)]
#[join = "TxActUse"]
pub struct TxActPort {
    /// The executor acts on the held descriptor this cycle.
    pub act: Signal<In, Bit>,
    /// A PTE_WRITE whose beat the executor writes (`SpPte`).
    pub to_pte: Signal<Out, Bit>,
    /// A REPLY the executor sends as a payload-less response.
    pub reply: Signal<Out, Bit>,
}
