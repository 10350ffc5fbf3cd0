//! The links of the slow path's descriptors and notices: a TX descriptor's kind and fields to the
//! blocks that act on it (the slow-path TX block, the PTE writer, the extend port), the actions
//! the slow-path TX block hands on (a key, a route key, the ring's release and share, a free
//! frame, Clio-KV's configuration), and a fault's PTE and PAGE_MAPPED page from the translate
//! stage.
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use rust_hdl::prelude::*;

/// The held TX descriptor as the slow-path TX block acts on it: its kind and fields (mate
/// [`DescKind`]).
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
    /// The taken descriptor is a RING_OWNER.
    pub ring_owner: Signal<In, Bit>,
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
    /// KEY_WRITE's key, ROUTE_KEY's first half.
    pub key: Signal<In, Bits<64>>,
    /// KEY_WRITE's epoch.
    pub epoch: Signal<In, Bits<16>>,
    /// ROUTE_KEY's second half.
    pub secret1: Signal<In, Bits<64>>,
    /// RING_SHARE's share.
    pub share: Signal<In, Bits<8>>,
    /// FREE_PAGE's frame.
    pub pfn: Signal<In, Bits<40>>,
}

/// The held TX descriptor's kind and fields, decoded (mate [`DescKindIn`]).
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
    /// The taken descriptor is a RING_OWNER.
    pub ring_owner: Signal<Out, Bit>,
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
    /// KEY_WRITE's key, ROUTE_KEY's first half.
    pub key: Signal<Out, Bits<64>>,
    /// KEY_WRITE's epoch.
    pub epoch: Signal<Out, Bits<16>>,
    /// ROUTE_KEY's second half.
    pub secret1: Signal<Out, Bits<64>>,
    /// RING_SHARE's share.
    pub share: Signal<Out, Bits<8>>,
    /// FREE_PAGE's frame.
    pub pfn: Signal<Out, Bits<40>>,
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

/// A KEY_WRITE from the slow path: a RAS's key and epoch (zero key: removed) (mate [`KeyWriteIn`], the key check's `wr`).
#[derive(LogicInterface, Default)]
#[join = "KeyWriteIn"]
pub struct KeyWrite {
    /// A KEY_WRITE (one-cycle pulse).
    pub valid: Signal<Out, Bit>,
    /// The RAS.
    pub pid: Signal<Out, Bits<16>>,
    /// Its key (0 removes the RAS).
    pub key: Signal<Out, Bits<64>>,
    /// Its epoch (0: not fenced).
    pub epoch: Signal<Out, Bits<16>>,
}

/// The key check's side of [`KeyWrite`].
#[derive(LogicInterface, Default)]
#[join = "KeyWrite"]
pub struct KeyWriteIn {
    /// A KEY_WRITE (one-cycle pulse).
    pub valid: Signal<In, Bit>,
    /// The RAS.
    pub pid: Signal<In, Bits<16>>,
    /// Its key (0 removes the RAS).
    pub key: Signal<In, Bits<64>>,
    /// Its epoch (0: not fenced).
    pub epoch: Signal<In, Bits<16>>,
}

/// A ROUTE_KEY from the slow path: the route cookies' SipHash key (mate [`RouteKeyIn`], the route check's `key`).
#[derive(LogicInterface, Default)]
#[join = "RouteKeyIn"]
pub struct RouteKey {
    /// A ROUTE_KEY (one-cycle pulse).
    pub valid: Signal<Out, Bit>,
    /// The key's first half.
    pub key0: Signal<Out, Bits<64>>,
    /// The key's second half.
    pub key1: Signal<Out, Bits<64>>,
}

/// The route check's side of [`RouteKey`].
#[derive(LogicInterface, Default)]
#[join = "RouteKey"]
pub struct RouteKeyIn {
    /// A ROUTE_KEY (one-cycle pulse).
    pub valid: Signal<In, Bit>,
    /// The key's first half.
    pub key0: Signal<In, Bits<64>>,
    /// The key's second half.
    pub key1: Signal<In, Bits<64>>,
}

/// The slow path's changes to the idempotence table: a RING_OWNER of the ring key's client id (emptied and handed to the key's pid), a RING_SHARE (mate [`RingControlIn`], the sync unit's `ctl`).
#[derive(LogicInterface, Default)]
#[join = "RingControlIn"]
pub struct RingControl {
    /// A RING_OWNER (one-cycle pulse).
    pub owner: Signal<Out, Bit>,
    /// A RING_SHARE (one-cycle pulse).
    pub share_set: Signal<Out, Bit>,
    /// Entries one member may hold (0: no limit), with `share_set`.
    pub share: Signal<Out, Bits<8>>,
}

/// The sync unit's side of [`RingControl`].
#[derive(LogicInterface, Default)]
#[join = "RingControl"]
pub struct RingControlIn {
    /// A RING_OWNER (one-cycle pulse).
    pub owner: Signal<In, Bit>,
    /// A RING_SHARE (one-cycle pulse).
    pub share_set: Signal<In, Bit>,
    /// Entries one member may hold (0: no limit), with `share_set`.
    pub share: Signal<In, Bits<8>>,
}

/// A FREE_PAGE's frame for the page-fault unit's free list, and whether the list is full (mate [`FreePageIn`], the translate stage's `fp`).
#[derive(LogicInterface, Default)]
#[join = "FreePageIn"]
pub struct FreePage {
    /// A frame goes to the free list (one-cycle pulse; never while `full`).
    pub valid: Signal<Out, Bit>,
    /// The frame.
    pub pfn: Signal<Out, Bits<40>>,
    /// The free list is full.
    pub full: Signal<In, Bit>,
}

/// The translate stage's side of [`FreePage`].
#[derive(LogicInterface, Default)]
#[join = "FreePage"]
pub struct FreePageIn {
    /// A frame goes to the free list (one-cycle pulse; never while `full`).
    pub valid: Signal<In, Bit>,
    /// The frame.
    pub pfn: Signal<In, Bits<40>>,
    /// The free list is full.
    pub full: Signal<Out, Bit>,
}

/// A KV_CONFIG for the extend path: load the store's configuration (`KvConfig`) for the RAS `pid` (mate [`KvLoadIn`], the extend port's `cfg_at`).
#[derive(LogicInterface, Default)]
#[join = "KvLoadIn"]
pub struct KvLoad {
    /// A KV_CONFIG (one-cycle pulse).
    pub load: Signal<Out, Bit>,
    /// The store's RAS.
    pub pid: Signal<Out, Bits<16>>,
}

/// The extend port's side of [`KvLoad`].
#[derive(LogicInterface, Default)]
#[join = "KvLoad"]
pub struct KvLoadIn {
    /// A KV_CONFIG (one-cycle pulse).
    pub load: Signal<In, Bit>,
    /// The store's RAS.
    pub pid: Signal<In, Bits<16>>,
}
