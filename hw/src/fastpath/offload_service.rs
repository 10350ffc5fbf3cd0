//! The executor's side of the offload port bundle (`crate::offload`), out of the executor:
//! what it does for the active unit of [`super::extend::Extend`] while it serves it (its
//! `Offload` state, `serving`), and what it remembers of the unit's accesses and answer.
//!
//! - **Memory port.** A unit's access (`unit.mem_valid`, taken while `serving`) inside the 48-bit
//!   VA space is handed to the executor to translate (`access`, one cycle, at `access_va`): a
//!   word read (read permission) or, with `unit.mem_write`, a 64-byte block write (write
//!   permission; the block and strobes are kept in `block`). From then until the
//!   answer, `accessing` says the translation is the unit's, `writing` that it is a block
//!   write, `own` that it is in the store's RAS (`Extend::kv_pid`). An access past the VA space
//!   is answered BAD_REQUEST without a translation (the model's `translate_range`). The access
//!   ends with `unit.mem_done` and its status: a failed translation (`tr_fail`, with `tr_status`),
//!   the written block (`block_done`) or a bad VA the cycle after; the read word OK in the
//!   cycle its R beat arrives (`word_in`; the unit takes the block from the R channel itself).
//! - **Idempotence table.** Clio-KV's lookup (`unit.once_valid`) goes to the sync unit once
//!   (`ring_lookup`) and its verdict to the unit three cycles later
//!   (`sync_unit::RING_VERDICT_LATENCY`, `unit.once_done`; the unit reads the verdict itself).
//! - **Answer.** The unit's answer is taken while `serving` and registered: the executor acts
//!   on it the next cycle (`ans_valid`, one cycle) with everything it needs decided: its status
//!   (BAD_REQUEST when a payload read would end past the VA space), whether a payload read
//!   follows (`ans_read`: OK and inside, of `ans_read_len` bytes at `ans_read_va`, in the
//!   store's RAS when the unit says so: `own`; if its translation fails, `tr_fail`, the
//!   response carries its status and no arguments), whether the response carries the unit's `arg0`
//!   alone (`ans_replay`: a replayed put or delete) or both its arguments (`args_on`, with
//!   `arg1`, kept until the next frame), and the sync unit's record (`ring_record`). The range
//!   check's sum and wide compares are registered with the answer (`a_terms`, with
//!   `a_ok_read`: an OK answer that asks a read); its rule (one LUT) and the status select come
//!   after the register, so neither the unit's outputs nor the sum are in front of the
//!   executor's state decision. Cost: one cycle per offload request.
//!
//! `clear` (the executor takes a new frame) forgets the access and the answer.

use crate::fastpath::links::{BlockWrite, ServiceLink};
use crate::offload::UnitService;
use crate::spec::Spec;
use crate::va_end::{VaEndRule, VaEndTerms, VA_END_TERMS};
use clio_proto::consts::VA_BITS;
use clio_proto::Status;
use rust_hdl::prelude::*;

// An access VA is inside the VA space when its bits 48..64 are zero (`get_bits::<16>(48)`).
const _: () = assert!(VA_BITS == 48);

/// The executor's side of the offload port (module doc).
#[derive(LogicBlock, Default)]
pub struct OffloadService {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no access, no answer.
    pub reset: Signal<In, Bit>,
    /// The link with the executor (`Executor::unit`, joined in the top).
    pub exec: ServiceLink,
    /// The failed translation's status (with `tr_fail`).
    pub tr_status: Signal<In, Bits<8>>,
    /// The active unit's channels (`Extend`'s `active`, joined in the top).
    pub unit: UnitService,
    /// The translation under way is in the store's RAS.
    pub own: Signal<Out, Bit>,
    /// The block write under way (`exec.writing`), the block and its byte strobes, for the
    /// word-access path (`WordAccess::block`).
    pub block: BlockWrite,
    /// The response carries the answer's `arg0` and `arg1` (an OK answer, not a replay).
    pub args_on: Signal<Out, Bit>,
    /// The answer's `arg1`, kept until the next frame.
    pub arg1: Signal<Out, Bits<64>>,
    /// The response carries the answer's `arg1` alone (a QUOTA_EXCEEDED answer: its quota).
    pub arg1_on: Signal<Out, Bit>,
    /// The translation under way is the unit's access.
    xw: DFF<Bit>,
    /// It is a block write, of `xwd` with strobes `xws`.
    xwr: DFF<Bit>,
    xwd: DFF<Bits<512>>,
    xws: DFF<Bits<64>>,
    /// The access (or the answer's read) is in the store's RAS.
    xown: DFF<Bit>,
    /// The access ends now (`unit.mem_done`, one cycle), with this status.
    xm_valid: DFF<Bit>,
    xm_status: DFF<Bits<8>>,
    /// The ring lookup was made last cycle: its verdict is the unit's now.
    xring: DFF<Bit>,
    /// The lookup is in the sync unit's second cycle (the cycle after `xring`).
    xring2: DFF<Bit>,
    /// The lookup's verdict is the unit's this cycle (the cycle after `xring2`).
    xring3: DFF<Bit>,
    /// The registered answer (`ans_*`), its record for the ring, and the arguments it leaves.
    a_valid: DFF<Bit>,
    a_status: DFF<Bits<8>>,
    a_arg0: DFF<Bits<64>>,
    a_replay: DFF<Bit>,
    /// The answer is OK and asks a payload read (whether inside the VA space: `a_terms`).
    a_ok_read: DFF<Bit>,
    /// The payload read's range-check terms.
    a_terms: DFF<Bits<VA_END_TERMS>>,
    a_read_va: DFF<Bits<64>>,
    a_read_len: DFF<Bits<12>>,
    a_record: DFF<Bit>,
    a_record_status: DFF<Bits<8>>,
    xa: DFF<Bit>,
    x_arg1: DFF<Bits<64>>,
    /// The answer is QUOTA_EXCEEDED (`arg1_on`).
    x_quota: DFF<Bit>,
    /// The answer's payload read ends inside the VA space (its length is below 2^12): the
    /// terms from the unit's outputs, the rule from the registered terms.
    rd_terms: VaEndTerms<12, 13>,
    rd_rule: VaEndRule,
    /// The registered answer asks a read that would end past the VA space.
    bad_read: Signal<Local, Bit>,
    /// The unit's answer is taken this cycle / is OK.
    take: Signal<Local, Bit>,
    ok: Signal<Local, Bit>,
    st_ok: Spec<8, { Status::Ok as u64 }>,
    st_bad_request: Spec<8, { Status::BadRequest as u64 }>,
    st_quota: Spec<8, { Status::QuotaExceeded as u64 }>,
}

impl Logic for OffloadService {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            xw,
            xwr,
            xwd,
            xws,
            xown,
            xm_valid,
            xm_status,
            xring,
            xring2,
            xring3,
            a_valid,
            a_status,
            a_arg0,
            a_replay,
            a_ok_read,
            a_terms,
            a_read_va,
            a_read_len,
            a_record,
            a_record_status,
            xa,
            x_arg1,
            x_quota
        );
        // ---- Memory port: an access is taken while serving (not in the answer's cycle).
        self.unit.mem_ready.next = self.exec.serving.val() & !self.a_valid.q.val();
        self.exec.access.next = false;
        self.exec.access_va.next = self.unit.mem_va.val();
        self.exec.access_write.next = self.unit.mem_write.val();
        self.xm_valid.d.next = false;
        if self.exec.serving.val() & !self.a_valid.q.val() & self.unit.mem_valid.val() {
            if self.unit.mem_va.val().get_bits::<16>(48) != 0 {
                self.xm_valid.d.next = true;
                self.xm_status.d.next = self.st_bad_request.val();
            } else {
                self.exec.access.next = true;
                self.xw.d.next = true;
                self.xwr.d.next = self.unit.mem_write.val();
                self.xown.d.next = self.unit.mem_own.val();
                self.xwd.d.next = self.unit.mem_wdata.val();
                self.xws.d.next = self.unit.mem_wstrb.val();
            }
        }
        if self.exec.tr_fail.val() & self.xw.q.val() {
            self.xm_valid.d.next = true;
            self.xm_status.d.next = self.tr_status.val();
        }
        if self.exec.block_done.val() {
            self.xm_valid.d.next = true;
            self.xm_status.d.next = self.st_ok.val();
        }
        self.unit.mem_done.next = self.xm_valid.q.val() | self.exec.word_in.val();
        self.unit.mem_status.next = self.xm_status.q.val();
        if self.exec.word_in.val() {
            self.unit.mem_status.next = self.st_ok.val();
        }
        self.exec.accessing.next = self.xw.q.val();
        self.exec.writing.next = self.xwr.q.val();
        self.own.next = self.xown.q.val();
        self.block.valid.next = self.xwr.q.val();
        self.block.data.next = self.xwd.q.val();
        self.block.strb.next = self.xws.q.val();
        // ---- Idempotence ring: one lookup per request, its verdict the next cycle.
        self.exec.ring_lookup.next = false;
        self.xring.d.next = false;
        self.xring2.d.next = self.xring.q.val();
        self.xring3.d.next = self.xring2.q.val();
        if self.exec.serving.val()
            & self.unit.once_valid.val()
            & !self.xring.q.val()
            & !self.xring2.q.val()
            & !self.xring3.q.val()
        {
            self.exec.ring_lookup.next = true;
            self.xring.d.next = true;
        }
        self.unit.once_done.next = self.xring3.q.val();
        // ---- The answer: taken while serving, decided and registered.
        self.unit.rsp_ready.next = self.exec.serving.val() & !self.a_valid.q.val();
        self.take.next =
            self.unit.rsp_valid.val() & self.exec.serving.val() & !self.a_valid.q.val();
        self.rd_terms.va.next = self.unit.rsp_read_va.val();
        self.rd_terms.n.next = self.unit.rsp_read_len.val();
        self.rd_terms.n2.next = 0.into();
        self.rd_rule.terms.next = self.a_terms.q.val();
        self.bad_read.next = self.a_ok_read.q.val() & !self.rd_rule.in_va.val();
        self.ok.next = self.unit.rsp_status.val() == self.st_ok.val();
        self.a_valid.d.next = self.take.val();
        if self.take.val() {
            self.a_status.d.next = self.unit.rsp_status.val();
            self.a_ok_read.d.next = self.ok.val() & self.unit.rsp_read.val();
            self.a_terms.d.next = self.rd_terms.terms.val();
            self.a_arg0.d.next = self.unit.rsp_arg0.val();
            self.a_replay.d.next = self.unit.rsp_replay.val();
            self.a_read_va.d.next = self.unit.rsp_read_va.val();
            self.a_read_len.d.next = self.unit.rsp_read_len.val();
            // A put or delete that executed records its answer (errors too: arg0 is 0 then).
            self.a_record.d.next = self.unit.rsp_record.val();
            self.a_record_status.d.next = self.unit.rsp_status.val();
            self.xa.d.next = self.ok.val() & !self.unit.rsp_replay.val();
            self.x_arg1.d.next = self.unit.rsp_arg1.val();
            self.x_quota.d.next = self.unit.rsp_status.val() == self.st_quota.val();
            self.xw.d.next = false;
            self.xwr.d.next = false;
            self.xown.d.next = self.unit.rsp_read_own.val();
        }
        self.exec.ans_valid.next = self.a_valid.q.val();
        self.exec.ans_status.next = self.a_status.q.val();
        if self.bad_read.val() {
            self.exec.ans_status.next = self.st_bad_request.val();
        }
        self.exec.ans_arg0.next = self.a_arg0.q.val();
        self.exec.ans_replay.next = self.a_replay.q.val();
        self.exec.ans_read.next = self.a_ok_read.q.val() & self.rd_rule.in_va.val();
        self.exec.ans_read_va.next = self.a_read_va.q.val();
        self.exec.ans_read_len.next = self.a_read_len.q.val();
        self.exec.ring_record.next = self.a_valid.q.val() & self.a_record.q.val();
        self.exec.ring_status.next = self.a_record_status.q.val();
        self.exec.ring_value.next = self.a_arg0.q.val();
        self.args_on.next = self.xa.q.val() & !self.bad_read.val();
        if self.exec.tr_fail.val() & !self.xw.q.val() {
            // The answer's payload read failed: its status is the response's, alone.
            self.xa.d.next = false;
        }
        self.arg1.next = self.x_arg1.q.val();
        self.arg1_on.next = self.x_quota.q.val();
        if self.exec.clear.val() | self.reset.val() {
            self.xw.d.next = false;
            self.xwr.d.next = false;
            self.xown.d.next = false;
            self.xm_valid.d.next = false;
            self.xring.d.next = false;
            self.xring2.d.next = false;
            self.xring3.d.next = false;
            self.a_valid.d.next = false;
            self.xa.d.next = false;
            self.x_quota.d.next = false;
        }
    }
}

crate::impl_clocked!(OffloadService);

#[cfg(test)]
mod tests;
