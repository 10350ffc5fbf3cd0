//! Dispatch's decision: what the executor does with the frame it took, from flip-flops only
//! (the frame's class, `DispatchClass`; the look-ahead's per-slot checks and translation; the
//! key check's verdict; the stages' readiness). Combinational: the executor applies it in its
//! Dispatch state (the state register, the response's status, the access's registers, the
//! starts it gives the stages).
//!
//! The order is the protocol's: a frame that fails `Header::parse` is BAD_REQUEST (UNSUPPORTED
//! for an extend opcode without its unit); a request whose opcode needs its RAS's key and
//! does not carry it is DENIED and nothing executes; one that carries it with an epoch older
//! than its RAS's (`epoch_ok` low) is STALE and nothing executes (both counted as `denied`,
//! the model's one refusal counter), except that a stale atomic in its format goes to the
//! idempotence ring first (`stale_replay`): an earlier attempt that executed is answered
//! from it, else STALE (the epoch is checked before the ring, so a retransmission whose
//! first attempt executed is not refused as if nothing had); a request whose answer can exceed twice
//! its size (`needs_route`) waits for the route check's verdict (`route_wait`) and is
//! ROUTE_UNVERIFIED without its address's cookie, nothing executed; then one branch per class:
//!
//! * READ: `check_read` holds -> OK, straight to the access when translated ahead (`hit`),
//!   else translated (`to_translate`); else BAD_REQUEST.
//! * WRITE: `check_write_segment` holds -> a durable write without a persistence domain is
//!   UNSUPPORTED (refused before anything is written); a segment inside the VA space goes to
//!   its access or its translation; else BAD_REQUEST.
//! * A slow-path opcode: pushed as a REQUEST while its source holds fewer RX ring descriptors
//!   than are free past the notices' reserve (`RxShare`), else RETRY_LATER; the verdict for
//!   this frame's source is the one of its second Dispatch cycle (`room_wait` in the first).
//! * FENCE: OK once every earlier write has its B response (`fence_wait` until then).
//! * CN_ACK: OK, the ring entry is freed (`ring_ack`).
//! * Clio-KV / POINTER_CHASE: to the offload unit when it is ready (and, for the chase, its
//!   format holds); else BAD_REQUEST.
//! * APPEND: format check, then the durable check as a write's, then the idempotence ring.
//! * An atomic (TAS / UNLOCK / CAS / FAA): format check, then the idempotence ring.

use clio_proto::Status;
use rust_hdl::prelude::*;

use crate::spec::StatusSpec as St;

/// Dispatch's decision.
#[derive(LogicBlock, Default)]
pub struct Dispatch {
    /// The frame's class (`DispatchClass`): one branch bit at most, and the rules.
    pub is_read: Signal<In, Bit>,
    /// The frame is a WRITE.
    pub is_write: Signal<In, Bit>,
    /// The frame has a slow-path opcode.
    pub is_slow: Signal<In, Bit>,
    /// The frame is a FENCE.
    pub is_fence: Signal<In, Bit>,
    /// The frame is a CN_ACK.
    pub is_cn_ack: Signal<In, Bit>,
    /// The frame has a Clio-KV opcode.
    pub is_kv: Signal<In, Bit>,
    /// The frame is a POINTER_CHASE.
    pub is_chase: Signal<In, Bit>,
    /// The frame is an APPEND.
    pub is_append: Signal<In, Bit>,
    /// The opcode is an extend-path one (a parse failure answers UNSUPPORTED).
    pub is_extend: Signal<In, Bit>,
    /// The opcode needs its RAS's key.
    pub needs_key: Signal<In, Bit>,
    /// The opcode uses the idempotence ring (an atomic, or APPEND).
    pub uses_ring: Signal<In, Bit>,
    /// The format checks kept per slot by the look-ahead (`TranslateAhead::use_*`): parse,
    /// read, write segment, write inside the VA space, Append's, the chase's, an atomic's.
    pub parse_ok: Signal<In, Bit>,
    /// `check_read` holds.
    pub read_ok: Signal<In, Bit>,
    /// `check_write_segment` holds.
    pub write_ok: Signal<In, Bit>,
    /// The write segment ends inside the VA space.
    pub write_in_va: Signal<In, Bit>,
    /// Append's format check holds.
    pub append_ok: Signal<In, Bit>,
    /// The pointer chase's format check holds.
    pub chase_ok: Signal<In, Bit>,
    /// An atomic's format check holds.
    pub atomic_ok: Signal<In, Bit>,
    /// The look-ahead translated the frame's first page (mapped, permitted, within the page).
    pub ahead_ok: Signal<In, Bit>,
    /// The key check's verdict (the key opens the pid's RAS).
    pub key_ok: Signal<In, Bit>,
    /// The key check's epoch verdict (the request's epoch is not older than its RAS's; read
    /// only where `key_ok`).
    pub epoch_ok: Signal<In, Bit>,
    /// The request's answer can exceed twice its size (`RouteCheck::need`).
    pub needs_route: Signal<In, Bit>,
    /// The route check's verdict (its cookie proves its source address), once `route_done`.
    pub route_ok: Signal<In, Bit>,
    /// The route check has decided.
    pub route_done: Signal<In, Bit>,
    /// The header's `FLAG_DURABLE`, and the board has a persistence domain.
    pub durable: Signal<In, Bit>,
    /// The board has a persistence domain.
    pub persist: Signal<In, Bit>,
    /// The frame's source may push a REQUEST into the slow path's RX ring (`RxShare::ok`),
    /// once `room_fresh`.
    pub room_ok: Signal<In, Bit>,
    /// `room_ok` is this frame's: the executor's second cycle in Dispatch.
    pub room_fresh: Signal<In, Bit>,
    /// Every earlier write has its B response (the fence's rule).
    pub fence_clear: Signal<In, Bit>,
    /// The offload units can take a request.
    pub kv_ready: Signal<In, Bit>,
    /// The pointer-chase unit can take a request.
    pub chase_ready: Signal<In, Bit>,
    /// The response's status (when the request is answered from here, or the answer's start).
    pub status: Signal<Out, Bits<8>>,
    /// Refused by the key check, DENIED or STALE (counted together, as the model's `denied`).
    pub denied: Signal<Out, Bit>,
    /// A STALE atomic in its format: its ring entry is looked up (`to_sync_check`), and the
    /// sync check answers from it if it is there, else STALE; nothing executes.
    pub stale_replay: Signal<Out, Bit>,
    /// The branch taken (past the parse, key and epoch checks): its access's registers are loaded
    /// (`branch_word`: an Append's tail word or an atomic's word).
    pub branch_read: Signal<Out, Bit>,
    /// A WRITE is past the checks.
    pub branch_write: Signal<Out, Bit>,
    /// An Append or an atomic is past the checks: its word's registers are loaded.
    pub branch_word: Signal<Out, Bit>,
    /// An APPEND is past the checks.
    pub branch_append: Signal<Out, Bit>,
    /// A read whose checks hold: its answer's segmentation starts.
    pub read_go: Signal<Out, Bit>,
    /// Straight to the access with the look-ahead's translation.
    pub hit: Signal<Out, Bit>,
    /// The next state, when not `Resp`: translate the first page, push to the slow path,
    /// hand to an offload unit, ask the idempotence ring, or stay in Dispatch (a fence waits:
    /// `fence_wait`; `wait` is a Verilog keyword).
    pub to_translate: Signal<Out, Bit>,
    /// Push the request to the slow path as a REQUEST.
    pub to_slow_push: Signal<Out, Bit>,
    /// Hand the request to an offload unit.
    pub to_offload: Signal<Out, Bit>,
    /// Ask the idempotence ring (an Append or an atomic).
    pub to_sync_check: Signal<Out, Bit>,
    /// A FENCE waits in Dispatch for earlier writes' B responses.
    pub fence_wait: Signal<Out, Bit>,
    /// A request that needs its route cookie checked waits in Dispatch for the verdict.
    pub route_wait: Signal<Out, Bit>,
    /// A slow-path request waits a cycle in Dispatch for its source's share (`room_fresh`).
    pub room_wait: Signal<Out, Bit>,
    /// Refused by the route check (RouteUnverified).
    pub unverified: Signal<Out, Bit>,
    /// The stages' starts: a CN_ACK frees its ring entry, an Append goes to the ring (its
    /// tail word next), a Clio-KV request or a pointer chase goes to its unit.
    pub ring_ack: Signal<Out, Bit>,
    /// An Append goes to the idempotence ring, its tail word next.
    pub append_go: Signal<Out, Bit>,
    /// A Clio-KV request goes to its unit.
    pub kv_start: Signal<Out, Bit>,
    /// A pointer chase goes to its unit.
    pub chase_start: Signal<Out, Bit>,
    /// Past the parse, key, epoch and route checks.
    checked: Signal<Local, Bit>,
    /// The key check refuses: a wrong key (DENIED), or the right key with an older epoch
    /// (STALE).
    k_refuse: Signal<Local, Bit>,
    /// An atomic in its format: refused as STALE, it looks for its ring entry first.
    stale_ring: Signal<Local, Bit>,
    /// A durable write or Append without a persistence domain.
    no_persist: Signal<Local, Bit>,
    st_ok: St<{ Status::Ok as u64 }>,
    st_retry_later: St<{ Status::RetryLater as u64 }>,
    st_bad_request: St<{ Status::BadRequest as u64 }>,
    st_unsupported: St<{ Status::Unsupported as u64 }>,
    st_denied: St<{ Status::Denied as u64 }>,
    st_stale: St<{ Status::Stale as u64 }>,
    st_route_unverified: St<{ Status::RouteUnverified as u64 }>,
    /// The request needs the route check and its verdict is not in yet, or refuses it.
    r_wait: Signal<Local, Bit>,
    r_refuse: Signal<Local, Bit>,
}

impl Logic for Dispatch {
    #[hdl_gen]
    fn update(&mut self) {
        self.r_wait.next = self.needs_route.val() & !self.route_done.val();
        self.r_refuse.next = self.needs_route.val() & self.route_done.val() & !self.route_ok.val();
        self.k_refuse.next = self.needs_key.val() & !(self.key_ok.val() & self.epoch_ok.val());
        self.stale_ring.next = self.uses_ring.val() & !self.is_append.val() & self.atomic_ok.val();
        self.checked.next =
            self.parse_ok.val() & !self.k_refuse.val() & !self.r_wait.val() & !self.r_refuse.val();
        self.no_persist.next = self.durable.val() & !self.persist.val();
        self.branch_read.next = self.checked.val() & self.is_read.val();
        self.branch_write.next = self.checked.val() & self.is_write.val();
        self.branch_append.next = self.checked.val() & self.is_append.val();
        self.branch_word.next = self.checked.val()
            & !(self.is_read.val()
                | self.is_write.val()
                | self.is_slow.val()
                | self.is_fence.val()
                | self.is_cn_ack.val()
                | self.is_kv.val()
                | self.is_chase.val());
        self.ring_ack.next = self.checked.val() & self.is_cn_ack.val();
        self.read_go.next = self.branch_read.val() & self.read_ok.val();

        self.status.next = self.st_bad_request.val();
        self.denied.next = false;
        self.stale_replay.next = false;
        self.hit.next = false;
        self.to_translate.next = false;
        self.to_slow_push.next = false;
        self.to_offload.next = false;
        self.to_sync_check.next = false;
        self.fence_wait.next = false;
        self.route_wait.next = false;
        self.room_wait.next = false;
        self.unverified.next = false;
        self.append_go.next = false;
        self.kv_start.next = false;
        self.chase_start.next = false;
        if !self.parse_ok.val() {
            if self.is_extend.val() {
                self.status.next = self.st_unsupported.val();
            }
        } else if self.k_refuse.val() {
            // A wrong key is DENIED whatever its epoch; the right one with an older epoch
            // is STALE. Nothing executes either way (`checked` is low).
            if self.key_ok.val() {
                self.status.next = self.st_stale.val();
                if self.stale_ring.val() {
                    self.stale_replay.next = true;
                    self.to_sync_check.next = true;
                }
            } else {
                self.status.next = self.st_denied.val();
            }
            self.denied.next = true;
        } else if self.r_wait.val() {
            self.route_wait.next = true;
        } else if self.r_refuse.val() {
            self.status.next = self.st_route_unverified.val();
            self.unverified.next = true;
        } else if self.is_read.val() {
            if self.read_ok.val() {
                self.status.next = self.st_ok.val();
                self.hit.next = self.ahead_ok.val();
                self.to_translate.next = !self.ahead_ok.val();
            }
        } else if self.is_write.val() {
            if self.write_ok.val() {
                if self.no_persist.val() {
                    self.status.next = self.st_unsupported.val();
                } else if self.write_in_va.val() {
                    self.hit.next = self.ahead_ok.val();
                    self.to_translate.next = !self.ahead_ok.val();
                }
            }
        } else if self.is_slow.val() {
            if !self.room_fresh.val() {
                self.room_wait.next = true;
            } else if self.room_ok.val() {
                self.to_slow_push.next = true;
            } else {
                self.status.next = self.st_retry_later.val();
            }
        } else if self.is_fence.val() {
            self.status.next = self.st_ok.val();
            self.fence_wait.next = !self.fence_clear.val();
        } else if self.is_cn_ack.val() {
            self.status.next = self.st_ok.val();
        } else if self.is_kv.val() {
            self.kv_start.next = self.kv_ready.val();
            self.to_offload.next = self.kv_ready.val();
        } else if self.is_chase.val() {
            self.chase_start.next = self.chase_ok.val() & self.chase_ready.val();
            self.to_offload.next = self.chase_ok.val() & self.chase_ready.val();
        } else if self.is_append.val() {
            if self.append_ok.val() {
                if self.no_persist.val() {
                    self.status.next = self.st_unsupported.val();
                } else {
                    self.append_go.next = true;
                    self.to_sync_check.next = true;
                }
            }
        } else if self.atomic_ok.val() {
            self.to_sync_check.next = true;
        }
    }
}

#[cfg(test)]
mod tests;
