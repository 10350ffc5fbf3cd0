//! What the executor does with a slow-path TX descriptor, in the one cycle it acts on it
//! (`act`: its SpTx state), from the held descriptor's kind ([`SlowPathDesc`]'s flags, one per
//! kind, none for an unknown kind) and the PTE writer's decode of a PTE_WRITE:
//!
//! * PTE_WRITE inside the page table (`pte_ok`): the PTE goes out through the one-beat writer
//!   (`to_pte`: the executor waits for it in SpPte) and the TLB follows the PTE (inserted when
//!   used, as an allocated-unmapped page when not valid; invalidated when cleared). A PTE_WRITE
//!   outside the table is ignored.
//! * TLB_INVALIDATE: the TLB drops `(pid, vpn)`, when the vpn fits in `VPN_BITS` (else it names
//!   no page and nothing happens).
//! * FREE_PAGE: the frame goes to the page-fault unit's free list (`free`, unless the list
//!   is full: `free.full`).
//! * KEY_WRITE, KV_CONFIG, RING_OWNER, ROUTE_KEY, RING_SHARE: one pulse each, with the
//!   descriptor's fields, to the key table (`keys`), the extend path (`kv`), the sync unit
//!   (`ring.owner`), the route check (`routes`) and the sync unit's share (`ring.share_set`).
//! * REPLY: `reply` (the executor sends its header as a payload-less response).
//!
//! The TLB update is registered (`up_*`, valid the cycle after `act` for one cycle): the
//! descriptor's decode and the choice between its kinds are not in front of the TLB's update
//! compare. The translate stage is idle then (the executor takes a descriptor only when idle),
//! so its own inserts never meet this one.
//!
//! [`SlowPathDesc`]: crate::fastpath::slow_path_desc::SlowPathDesc

use crate::fastpath::links::{
    DescKindIn, FreePage, KeyWrite, KvLoad, PteDecodedIn, RingControl, RouteKey, TlbChange,
    TxActPort,
};
use rust_hdl::prelude::*;

/// The TX descriptor's actions.
#[derive(LogicBlock, Default)]
pub struct SlowPathTx {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (no TLB update pending).
    pub reset: Signal<In, Bit>,
    /// The executor acting on the held descriptor this cycle (`act`), and the two actions
    /// that are the executor's: a PTE_WRITE's beat (`to_pte`), a REPLY sent as a payload-less
    /// response (`reply`, a one-cycle pulse) (`Executor::sptx`).
    pub exec: TxActPort,
    /// The held descriptor's kind and invalidation fields (`SlowPathDesc::kind`, joined in the top).
    pub desc: DescKindIn,
    /// The PTE writer's decode of a PTE_WRITE (`PteWriter::decoded`, joined in the top).
    pub pte: PteDecodedIn,
    // This cycle's other actions (with `exec.act`), each a one-cycle pulse with its fields:
    /// A FREE_PAGE's frame to the page-fault unit's free list (`Translate::fp`; not when it
    /// is full).
    pub free: FreePage,
    /// A KEY_WRITE to the key table (`KeyCheck::wr`).
    pub keys: KeyWrite,
    /// A KV_CONFIG to the extend path (`Extend::cfg_at`).
    pub kv: KvLoad,
    /// A RING_OWNER or RING_SHARE to the sync unit (`SyncUnit::ctl`).
    pub ring: RingControl,
    /// A ROUTE_KEY to the route check (`RouteCheck::key`).
    pub routes: RouteKey,
    /// The TLB change, the cycle after `act` (`Tlb::slow`): insert or invalidate the entry.
    pub up: TlbChange,
    /// The registered update: pending, invalidation, and the entry (pid, vpn, frame,
    /// permissions, allocated-unmapped).
    r_valid: DFF<Bit>,
    r_inval: DFF<Bit>,
    r_pid: DFF<Bits<16>>,
    r_vpn: DFF<Bits<36>>,
    r_pfn: DFF<Bits<40>>,
    r_perms: DFF<Bits<2>>,
    r_alloc: DFF<Bit>,
}

impl Logic for SlowPathTx {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, r_valid, r_inval, r_pid, r_vpn, r_pfn, r_perms, r_alloc);
        self.r_valid.d.next = false;
        self.exec.to_pte.next = false;
        self.free.valid.next = false;
        self.free.pfn.next = self.desc.pfn.val();
        self.keys.valid.next = false;
        self.keys.pid.next = self.desc.pid.val();
        self.keys.key.next = self.desc.key.val();
        self.keys.epoch.next = self.desc.epoch.val();
        self.kv.load.next = false;
        self.kv.pid.next = self.desc.pid.val();
        self.ring.owner.next = false;
        self.ring.share_set.next = false;
        self.ring.share.next = self.desc.share.val();
        self.routes.valid.next = false;
        self.routes.key0.next = self.desc.key.val();
        self.routes.key1.next = self.desc.secret1.val();
        self.exec.reply.next = false;
        if self.exec.act.val() {
            if self.desc.pte_write.val() {
                if self.pte.ok.val() {
                    self.exec.to_pte.next = true;
                    self.r_valid.d.next = true;
                    self.r_inval.d.next = self.pte.inval.val();
                    self.r_pid.d.next = self.pte.pid.val();
                    self.r_vpn.d.next = self.pte.vpn.val();
                    self.r_pfn.d.next = self.pte.pfn.val();
                    self.r_perms.d.next = self.pte.perms.val();
                    self.r_alloc.d.next = self.pte.alloc.val();
                }
            } else if self.desc.tlb_invalidate.val() {
                if self.desc.vpn_fits.val() {
                    self.r_valid.d.next = true;
                    self.r_inval.d.next = true;
                    self.r_pid.d.next = self.desc.pid.val();
                    self.r_vpn.d.next = self.desc.vpn.val();
                }
            } else if self.desc.free_page.val() {
                self.free.valid.next = !self.free.full.val();
            } else if self.desc.key_write.val() {
                self.keys.valid.next = true;
            } else if self.desc.kv_config.val() {
                self.kv.load.next = true;
            } else if self.desc.ring_owner.val() {
                self.ring.owner.next = true;
            } else if self.desc.route_key.val() {
                self.routes.valid.next = true;
            } else if self.desc.ring_share.val() {
                self.ring.share_set.next = true;
            } else if self.desc.reply.val() {
                self.exec.reply.next = true;
            }
        }
        if self.reset.val() {
            self.r_valid.d.next = false;
        }
        self.up.valid.next = self.r_valid.q.val();
        self.up.inval.next = self.r_inval.q.val();
        self.up.pid.next = self.r_pid.q.val();
        self.up.vpn.next = self.r_vpn.q.val();
        self.up.pfn.next = self.r_pfn.q.val();
        self.up.perms.next = self.r_perms.q.val();
        self.up.alloc.next = self.r_alloc.q.val();
    }
}

crate::impl_clocked!(SlowPathTx);

#[cfg(test)]
mod tests;
