//! The translate stage: one page of a request's range, VA to PA, for the executor. It owns the
//! page-table walker (with its hash unit) and the page-fault unit, and uses the TLB's lookup
//! port (the TLB itself is the top's: the look-ahead and the slow path's updates share it).
//!
//! The executor starts a translation with the page's first byte (`start_va`); `pid` and `need`
//! hold while it runs. The stage looks the page up in the TLB; a hit on a mapped page with the
//! permission is done at once (`only_hit`: the executor may take it in that cycle with
//! `hit_take` and go straight to its access); a miss walks the page's bucket (the walker owns
//! AR/R, `ar.own`; with the look-ahead's hash of the page when it has one, `start_ahead`), and
//! a walked page that is mapped and permitted is offered the same way (`only_hit` in the walk's
//! result cycle, two before `done`; the page-fault unit inserts it into the TLB the next
//! cycle); a first touch of an allocated page (found by the walk, or held by the TLB
//! from its PTE_WRITE) goes through the page-fault unit, whose PTE write-back (to the PTE
//! writer, `pte_load`, then the one-beat writer, `pte_write`) and PAGE_MAPPED notice
//! (`notice_*`) go out in parallel before the translation is done. The result is held for one
//! cycle with `done` (`status`, `pa`); a new `start` may come in that cycle.
//!
//! Cycles from `start` to `done`: a hit 5, `only_hit` in the fourth (the page of `va` is
//! registered first, `Page`, so the page shift is not in front of the TLB's compare); with
//! `start_looked` (the executor's Dispatch looked the page up itself in the start cycle, with
//! the look-ahead's registered page) 3, `only_hit` in the second; a walk the same plus the
//! walker's bucket read; a fault one more than either, plus the write-back and the notice.
//! Statuses as the model's `translate_range`: UNMAPPED (no PTE),
//! PERMISSION (the PTE lacks `need`), RETRY_LATER (a fault with no room for its notice, or no
//! free page), OK.

use crate::fastpath::links::{
    AddrReq, FaultPte, FreePageIn, PageHashIn, PageMapped, RBeatsIn, TlbInsert, TlbLookup,
    TlbResultIn, TranslateEvents, TranslatePort,
};
use crate::page_fault::PageFault;
use crate::pt_walker::{outcome, PtWalker};
use crate::spec::Spec;
use clio_proto::consts::VPN_BITS;
use clio_proto::pte::PFN_BITS;
use clio_proto::Status;
use rust_hdl::prelude::*;

// A TLB entry of an allocated page holds its PTE's location `bucket << 4 | slot` in the frame
// field (40 bits); a notice names a 36-bit vpn and a 40-bit frame.
const _: () =
    assert!(VPN_BITS == 36 && PFN_BITS == 40 && clio_proto::consts::BUCKET_SLOTS == 1 << 4);

/// The translate stage's steps.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum TranslateStep {
    /// Nothing under way.
    Idle,
    /// The page of `va` is registered (`vpn_q`), so the lookup's key leaves a flip-flop.
    Page,
    /// The TLB lookup goes out.
    Lookup,
    /// The TLB's pipeline.
    Wait,
    /// The TLB's answer: hit (done, or the page-fault unit for an allocated page) or walk.
    Result,
    /// A miss whose page the look-ahead hashes: waiting for its hash (`hashed.ok`).
    HashWait,
    /// The walker reads the bucket.
    Walk,
    /// The page-fault unit's answer.
    Fault,
    /// A fault's PTE write-back and PAGE_MAPPED notice.
    Side,
    /// The result is out (`done`) for this cycle.
    Done,
}

use crate::spec::StatusSpec as St;

/// The translate stage.
#[derive(LogicBlock, Default)]
pub struct Translate {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: nothing under way.
    pub reset: Signal<In, Bit>,
    /// log2 of the page size.
    pub page_shift: Signal<In, Bits<5>>,
    /// Bucket count - 1 (the page table is at physical address 0).
    pub bucket_mask: Signal<In, Bits<32>>,
    /// The executor's translations (`Executor::tr`, joined in the top).
    pub exec: TranslatePort,
    /// With `start`: the executor looked this page up in the TLB itself this cycle (Dispatch's
    /// first page: its lookup goes out before the dispatch checks decide, from the
    /// look-ahead's registers, so the checks are not in front of the TLB's compare). The stage
    /// issues no lookup and takes the TLB's answer two cycles later.
    pub start_looked: Signal<In, Bit>,
    /// With `start`: the TLB look-ahead hashes this page (pid and VPN of the executor's slot,
    /// hashed as its header arrived): a miss walks with that hash (`hashed.value`, once
    /// `hashed.ok`) instead of hashing again. It is ready 13 cycles after the header, so a
    /// walk of the request's first page starts about 4 cycles sooner.
    pub start_ahead: Signal<In, Bit>,
    /// The look-ahead's hash of the page, `proto::pt_hash(pid, vpn)` (`TranslateAhead::use_hash`),
    /// and whether it is ready.
    pub hashed: PageHashIn,
    /// The RAS: the request's pid, or the offload store's (held while translating, and in the
    /// cycle a walked page is taken with `hit_take`: the page-fault unit inserts it then).
    pub pid: Signal<In, Bits<16>>,
    /// The TLB lookup of the translation's page (`Tlb::xlate`: it wins the port).
    pub lk: TlbLookup,
    /// The TLB's lookup result (`Tlb::res`, joined in the top).
    pub tlb: TlbResultIn,
    /// The page-fault unit's TLB insert (a walked PTE, or a fault's new one; `Tlb::walk`).
    pub ti: TlbInsert,
    /// A free page for the page-fault unit (FREE_PAGE from the slow path, `SlowPathTx::free`),
    /// and whether its FIFO is full.
    pub fp: FreePageIn,
    /// The walker's bucket reads on AR, to the DRAM port (`own`: a walk is under way; the
    /// arbiter holds AR back for the ordering rules, and sends R beats only while no read's are
    /// due).
    pub ar: AddrReq,
    /// The R beats the walk reads.
    pub r: RBeatsIn,
    /// The slow path's RX ring has room for a PAGE_MAPPED notice (else a fault is not taken).
    pub notice_room: Signal<In, Bit>,
    /// The PAGE_MAPPED notice of a fault, until taken (`notice_ready`): the page and its new
    /// frame (`SlowPathDesc` encodes the descriptor).
    pub notice_valid: Signal<Out, Bit>,
    /// The mapped page, for the notice (`SlowPathDesc::pm`, joined in the top).
    pub notice: PageMapped,
    /// The notice is taken this cycle.
    pub notice_ready: Signal<In, Bit>,
    /// The fault's PTE, for the PTE writer (`PteWriter::fault`, joined in the top).
    pub pte: FaultPte,
    /// The PTE writer's write-back is wanted (held until `pte_done`).
    pub pte_write: Signal<Out, Bit>,
    /// The PTE writer's write-back is done.
    pub pte_done: Signal<In, Bit>,
    /// The W channel is free (the write-data stage is not streaming): the notice waits with the
    /// write-back.
    pub w_free: Signal<In, Bit>,
    /// Its events for the statistics (`Stats::tr`): a TLB hit, a miss (a walk), a page
    /// fault served (one-cycle pulses).
    pub ev: TranslateEvents,
    /// Where the stage is.
    step: DFF<TranslateStep>,
    /// The byte translated (its page, and the PA's offset in it).
    va: DFF<Bits<64>>,
    /// The translation's page is the look-ahead's (`start_ahead`).
    ahead: DFF<Bit>,
    /// The TLB generation of the lookup that missed (the walk's insert carries it).
    gen_q: DFF<Bits<16>>,
    /// The answer so far: the status, the PA.
    st: DFF<Bits<8>>,
    pa_q: DFF<Bits<64>>,
    /// The page of `va`, registered: the stage's own TLB lookup (in Lookup), the walker and the
    /// page-fault unit take it (two cycles or more after `va` was loaded), so the page shift is
    /// neither in front of the TLB's compare nor in front of the hash.
    vpn_q: DFF<Bits<36>>,
    /// The PAGE_MAPPED notice of the fault in `Side` (page, frame), and whether it is out.
    n_pid: DFF<Bits<16>>,
    n_vpn: DFF<Bits<36>>,
    n_pfn: DFF<Bits<40>>,
    notice_sent: DFF<Bit>,
    /// The offset mask of a page (page size - 1, as `!(!0 << shift)`: no carry chain), the page
    /// of `va` and `va`'s offset in it.
    poff_mask: Signal<Local, Bits<32>>,
    vpn: Signal<Local, Bits<64>>,
    poff: Signal<Local, Bits<64>>,
    /// The TLB's frame with `va`'s offset.
    tlb_pa: Signal<Local, Bits<64>>,
    /// The page-fault unit's frame (a walked or a faulted page) with `va`'s offset.
    pf_pa: Signal<Local, Bits<64>>,
    /// The walked PTE's frame with `va`'s offset.
    walk_pa: Signal<Local, Bits<64>>,
    /// The TLB's permissions hold `need`.
    tlb_perm_ok: Signal<Local, Bit>,
    /// The walk found a PTE, and its permissions hold `need`.
    walk_found: Signal<Local, Bit>,
    walk_perm_ok: Signal<Local, Bit>,
    /// The notice goes (or went) this cycle.
    notice_now: Signal<Local, Bit>,
    walker: PtWalker,
    pf: PageFault,
    st_ok: St<{ Status::Ok as u64 }>,
    st_permission: St<{ Status::Permission as u64 }>,
    st_unmapped: St<{ Status::Unmapped as u64 }>,
    st_retry_later: St<{ Status::RetryLater as u64 }>,
    outcome_hit: Spec<2, { outcome::HIT as u64 }>,
    outcome_fault: Spec<2, { outcome::FAULT as u64 }>,
    outcome_unmapped: Spec<2, { outcome::UNMAPPED as u64 }>,
}

impl Logic for Translate {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            step,
            va,
            ahead,
            gen_q,
            vpn_q,
            st,
            pa_q,
            n_pid,
            n_vpn,
            n_pfn,
            notice_sent
        );
        clock!(self, clock, walker, pf);
        self.walker.reset.next = self.reset.val();
        self.pf.reset.next = self.reset.val();
        // Geometry of the page under way.
        self.poff_mask.next = !((!bit_cast::<32, 1>(0.into())) << self.page_shift.val());
        self.vpn.next = self.va.q.val() >> self.page_shift.val();
        self.poff.next = self.va.q.val() & bit_cast::<64, 32>(self.poff_mask.val());
        self.vpn_q.d.next = bit_cast::<36, 64>(self.vpn.val());
        self.tlb_pa.next =
            (bit_cast::<64, 40>(self.tlb.pfn.val()) << self.page_shift.val()) | self.poff.val();
        self.walk_pa.next = (bit_cast::<64, 40>(self.walker.out_pfn.val())
            << self.page_shift.val())
            | self.poff.val();
        self.pf_pa.next =
            (bit_cast::<64, 40>(self.pf.out_pfn.val()) << self.page_shift.val()) | self.poff.val();
        self.tlb_perm_ok.next =
            (self.tlb.perms.val() & self.exec.need.val()) == self.exec.need.val();
        // Outputs.
        self.exec.done.next = self.step.q.val() == TranslateStep::Done;
        self.exec.status.next = self.st.q.val();
        self.exec.pa.next = self.pa_q.q.val();
        self.exec.only_hit.next = false;
        self.exec.hit_pa.next = self.tlb_pa.val();
        self.lk.valid.next = self.step.q.val() == TranslateStep::Lookup;
        self.lk.pid.next = self.pid.val();
        self.lk.vpn.next = self.vpn_q.q.val();
        self.ev.hit.next = false;
        self.ev.miss.next = false;
        self.ev.fault.next = false;
        self.notice_valid.next = false;
        self.notice.pid.next = self.n_pid.q.val();
        self.notice.vpn.next = self.n_vpn.q.val();
        self.notice.pfn.next = self.n_pfn.q.val();
        self.pte.load.next = false;
        self.pte.addr.next = self.pf.pw_addr.val();
        self.pte.data.next = self.pf.pw_data.val();
        self.pte_write.next = self.step.q.val() == TranslateStep::Side;
        // The walker: its request from the TLB's miss, AR/R while walking.
        self.ar.own.next = self.step.q.val() == TranslateStep::Walk;
        self.walker.pt_base.next = 0.into();
        self.walker.bucket_mask.next = self.bucket_mask.val();
        self.walker.req_valid.next = false;
        self.walker.req_pid.next = self.pid.val();
        self.walker.req_vpn.next = self.vpn_q.q.val();
        self.walker.req_write.next = self.exec.need.val().get_bit(1);
        self.walker.req_gen.next = self.tlb.gen.val();
        self.walker.req_hashed.next = false;
        self.walker.req_hash.next = self.hashed.value.val();
        self.walker.req_tag.next = 0.into();
        self.walker.ar_ready.next = self.ar.ready.val() & self.ar.own.val();
        self.walker.r_valid.next = self.r.valid.val() & self.ar.own.val();
        self.walker.r_data.next = self.r.data.val();
        self.walker.r_last.next = self.r.last.val();
        self.ar.valid.next = self.walker.ar_valid.val() & self.ar.own.val();
        self.ar.addr.next = bit_cast::<64, 40>(self.walker.ar_addr.val());
        self.ar.len.next = self.walker.ar_len.val();
        self.walk_found.next = self.walker.out_outcome.val() != self.outcome_unmapped.val();
        self.walk_perm_ok.next =
            (self.walker.out_perms.val() & self.exec.need.val()) == self.exec.need.val();
        // The page-fault unit: fed from the walker (or from the TLB's allocated entry).
        self.pf.pt_base.next = 0.into();
        self.pf.in_valid.next = false;
        self.pf.in_outcome.next = self.walker.out_outcome.val();
        self.pf.in_pid.next = self.walker.out_pid.val();
        self.pf.in_vpn.next = self.walker.out_vpn.val();
        self.pf.in_gen.next = self.walker.out_gen.val();
        self.pf.in_tag.next = self.walker.out_tag.val();
        self.pf.in_bucket.next = self.walker.out_bucket.val();
        self.pf.in_slot.next = self.walker.out_slot.val();
        self.pf.in_pfn.next = self.walker.out_pfn.val();
        self.pf.in_perms.next = self.walker.out_perms.val();
        self.pf.fp_valid.next = self.fp.valid.val();
        self.pf.fp_pfn.next = self.fp.pfn.val();
        self.fp.full.next = self.pf.fp_full.val();
        self.ti.valid.next = self.pf.ti_valid.val();
        self.ti.pid.next = self.pf.ti_pid.val();
        self.ti.vpn.next = self.pf.ti_vpn.val();
        self.ti.pfn.next = self.pf.ti_pfn.val();
        self.ti.perms.next = self.pf.ti_perms.val();
        self.ti.gen.next = self.pf.ti_gen.val();
        self.notice_now.next = self.notice_sent.q.val() | self.notice_ready.val();

        match self.step.q.val() {
            TranslateStep::Idle => {}
            TranslateStep::Page => {
                self.step.d.next = TranslateStep::Lookup;
            }
            TranslateStep::Lookup => {
                self.step.d.next = TranslateStep::Wait;
            }
            TranslateStep::Wait => {
                self.step.d.next = TranslateStep::Result;
            }
            TranslateStep::Result => {
                self.step.d.next = TranslateStep::Done;
                self.pa_q.d.next = self.tlb_pa.val();
                if self.tlb.hit.val() & self.tlb.alloc.val() {
                    // First touch of a page whose allocated PTE the TLB holds (inserted with
                    // its PTE_WRITE): the page-fault unit takes it now, no walk. Checks in the
                    // walk's order: permission, then room for the PAGE_MAPPED notice.
                    self.ev.hit.next = true;
                    if !self.tlb_perm_ok.val() {
                        self.st.d.next = self.st_permission.val();
                    } else if !self.notice_room.val() {
                        self.st.d.next = self.st_retry_later.val();
                    } else {
                        self.pf.in_valid.next = true;
                        self.pf.in_outcome.next = self.outcome_fault.val();
                        self.pf.in_pid.next = self.pid.val();
                        self.pf.in_vpn.next = self.vpn_q.q.val();
                        self.pf.in_gen.next = self.tlb.gen.val();
                        self.pf.in_tag.next = 0.into();
                        self.pf.in_bucket.next = bit_cast::<32, 40>(self.tlb.pfn.val() >> 4);
                        self.pf.in_slot.next = self.tlb.pfn.val().get_bits::<4>(0);
                        self.pf.in_pfn.next = 0.into();
                        self.pf.in_perms.next = self.tlb.perms.val();
                        self.step.d.next = TranslateStep::Fault;
                    }
                } else if self.tlb.hit.val() {
                    self.ev.hit.next = true;
                    if self.tlb_perm_ok.val() {
                        self.st.d.next = self.st_ok.val();
                        self.exec.only_hit.next = true;
                    } else {
                        self.st.d.next = self.st_permission.val();
                    }
                } else {
                    self.ev.miss.next = true;
                    self.gen_q.d.next = self.tlb.gen.val();
                    if self.ahead.q.val() {
                        // The look-ahead's hash of this page: walk with it when it is ready
                        // (the walker hashes nothing else meanwhile: one walk at a time).
                        self.step.d.next = TranslateStep::HashWait;
                        if self.hashed.ok.val() {
                            self.walker.req_valid.next = true;
                            self.walker.req_hashed.next = true;
                            self.step.d.next = TranslateStep::Walk;
                        }
                    } else {
                        self.walker.req_valid.next = true;
                        self.step.d.next = TranslateStep::Walk;
                    }
                }
            }
            TranslateStep::HashWait => {
                self.walker.req_gen.next = self.gen_q.q.val();
                if self.hashed.ok.val() {
                    self.walker.req_valid.next = true;
                    self.walker.req_hashed.next = true;
                    self.step.d.next = TranslateStep::Walk;
                }
            }
            TranslateStep::Walk => {
                if self.walker.out_valid.val() {
                    self.step.d.next = TranslateStep::Done;
                    if !self.walk_found.val() {
                        self.st.d.next = self.st_unmapped.val();
                    } else if !self.walk_perm_ok.val() {
                        self.st.d.next = self.st_permission.val();
                    } else if (self.walker.out_outcome.val() == self.outcome_fault.val())
                        & !self.notice_room.val()
                    {
                        // No room for the PAGE_MAPPED notice: the fault is not taken.
                        self.st.d.next = self.st_retry_later.val();
                    } else {
                        self.pf.in_valid.next = true;
                        self.step.d.next = TranslateStep::Fault;
                        if self.walker.out_outcome.val() == self.outcome_hit.val() {
                            // A valid PTE with the permission: the executor may take the page
                            // now, as a TLB hit (`only_hit`, two cycles before `done`); the
                            // page-fault unit still inserts it into the TLB next cycle.
                            self.exec.only_hit.next = true;
                            self.exec.hit_pa.next = self.walk_pa.val();
                        }
                    }
                }
            }
            TranslateStep::Fault => {
                self.st.d.next = self.pf.out_status.val();
                self.pa_q.d.next = self.pf_pa.val();
                self.n_pid.d.next = self.pf.pm_pid.val();
                self.n_vpn.d.next = self.pf.pm_vpn.val();
                self.n_pfn.d.next = self.pf.pm_pfn.val();
                self.notice_sent.d.next = false;
                if self.pf.out_faulted.val() {
                    self.pte.load.next = true;
                    self.ev.fault.next = true;
                    self.step.d.next = TranslateStep::Side;
                } else {
                    self.step.d.next = TranslateStep::Done;
                }
            }
            TranslateStep::Side => {
                // The W channel is the write-data stage's until it is done; then the PTE
                // write-back and the notice go out in parallel.
                if self.w_free.val() {
                    self.notice_valid.next = !self.notice_sent.q.val();
                    self.notice_sent.d.next = self.notice_now.val();
                    if self.pte_done.val() & self.notice_now.val() {
                        self.step.d.next = TranslateStep::Done;
                    }
                }
            }
            TranslateStep::Done => {
                self.step.d.next = TranslateStep::Idle;
            }
        }
        // The executor took the hit: nothing more.
        if self.exec.hit_take.val() {
            self.step.d.next = TranslateStep::Idle;
        }
        if self.exec.start.val() {
            self.va.d.next = self.exec.start_va.val();
            self.ahead.d.next = self.start_ahead.val();
            self.step.d.next = TranslateStep::Page;
            if self.start_looked.val() {
                // The executor's lookup of this page went out now: its answer is two cycles
                // away.
                self.step.d.next = TranslateStep::Wait;
            }
        }
        if self.reset.val() {
            self.step.d.next = TranslateStep::Idle;
        }
    }
}

crate::impl_clocked!(Translate);

#[cfg(test)]
mod tests;
