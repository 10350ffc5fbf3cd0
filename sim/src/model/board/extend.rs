//! The extend path's dispatch: the MAT hands extend opcodes here and this hands each to the
//! offload unit that serves it, with a RAS as its memory (`model::offload`): the caller's
//! for the pointer chaser, the store's own for Clio-KV (set up by the slow path,
//! `clio_slowpath::daemon::kv_store`, and announced with the `KvConfig` descriptor).

use super::{CBoard, Outgoing};
use crate::model::coverage::Coverage;
use crate::model::dram::Dram;
use crate::model::mem_access::{read_pieces, write_pieces, Notice, VirtualMemory};
use crate::model::offload::clio_kv::{self, Once};
use crate::model::offload::{pointer_chase, OffloadAnswer, OffloadMemory};
use crate::model::sync_unit::RingCheck;
use clio_proto::frame::Route;
use clio_proto::kv::{value_check, KvRequest, KvStagedPut, StoreLayout};
use clio_proto::layout::MemoryLayout;
use clio_proto::offload::{chase, ChaseLayout};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::quota::Quota;
use clio_proto::rules::Rule;
use clio_proto::{Header, Opcode, Status};

/// Clio-KV's store as the fast path knows it: from the slow path's `KvConfig` descriptor.
#[derive(Debug, Clone, Copy)]
pub(super) enum KvState {
    /// No `KvConfig` yet: the unit is off and KV opcodes are answered UNSUPPORTED, as the
    /// RTL's dispatch does before it is configured.
    NotConfigured,
    /// Serving: the store's RAS and layout.
    Ready(u16, StoreLayout),
    /// The slow path could not set the store up: KV requests get this status.
    Failed(Status),
}

impl KvState {
    /// No `KvConfig` yet: the unit is off (its opcodes are answered as unknown ones).
    pub(super) fn is_off(&self) -> bool {
        matches!(self, KvState::NotConfigured)
    }
}

/// One RAS, read and written through the same translation as `Read` and `Write` (TLB,
/// walker, page fault, permissions).
pub(super) struct RasMemory<'a> {
    vm: &'a mut VirtualMemory,
    dram: &'a mut Dram,
    layout: &'a MemoryLayout,
    pid: u16,
    /// Slow-path ring room for fault notices when the request started.
    rx_free: u32,
    notices: &'a mut Vec<Notice>,
}

impl RasMemory<'_> {
    fn pieces(&mut self, va: u64, len: usize, perm: u8) -> Result<Vec<(u64, usize)>, Status> {
        let room = self.rx_free.saturating_sub(self.notices.len() as u32);
        self.vm.translate_range(
            self.dram,
            self.layout,
            self.pid,
            va,
            len as u64,
            perm,
            room,
            self.notices,
        )
    }
}

impl OffloadMemory for RasMemory<'_> {
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), Status> {
        let pieces = self.pieces(va, buf.len(), PERM_READ)?;
        if read_pieces(self.dram, &pieces, buf) {
            Ok(())
        } else {
            Err(Status::Unmapped)
        }
    }

    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), Status> {
        let pieces = self.pieces(va, data.len(), PERM_WRITE)?;
        if write_pieces(self.dram, &pieces, data) {
            Ok(())
        } else {
            Err(Status::Unmapped)
        }
    }
}

impl CBoard {
    /// Apply the slow path's `KvConfig` descriptor (a layout that does not hold together is
    /// refused as a bad descriptor; the store stays as it was).
    pub(super) fn kv_config(
        &mut self,
        pid: u16,
        base: u64,
        buckets: u64,
        records: u32,
        status: u8,
    ) {
        self.kv = match Status::from_u8(status) {
            Some(Status::Ok) if buckets.is_power_of_two() && records > 0 => KvState::Ready(
                pid,
                StoreLayout {
                    base,
                    buckets,
                    records: records as u64,
                },
            ),
            Some(s) if s != Status::Ok => KvState::Failed(s),
            _ => {
                self.c.bad_descriptors += 1;
                return;
            }
        };
    }

    /// The store's RAS and layout if it is serving; else the status a KV request gets.
    fn kv_ready(&self) -> Result<(u16, StoreLayout), Status> {
        match self.kv {
            KvState::Ready(pid, l) => Ok((pid, l)),
            KvState::Failed(s) => Err(s),
            KvState::NotConfigured => Err(Status::Unsupported),
        }
    }

    /// The memory of RAS `pid` as an offload sees it.
    pub(super) fn ras_memory<'a>(
        &'a mut self,
        pid: u16,
        notices: &'a mut Vec<Notice>,
    ) -> RasMemory<'a> {
        RasMemory {
            rx_free: self.ring.rx_free(),
            vm: &mut self.vm,
            dram: &mut self.dram,
            layout: &self.layout,
            pid,
            notices,
        }
    }

    /// Serve an extend opcode with its offload unit; one response packet.
    pub(super) fn extend(
        &mut self,
        route: &Route,
        h: &Header,
        payload: &[u8],
        notices: &mut Vec<Notice>,
        out: &mut Vec<Outgoing>,
    ) {
        if h.opcode == Opcode::PointerChase {
            if h.payload_len != 0 || h.pkt_count != 1 {
                self.rules
                    .cov
                    .hit_if(h.payload_len != 0, Rule::ChaseNoPayload);
                return self.bad(out, route, h);
            }
            let layout = ChaseLayout::unpack(h.arg1);
            let c = &mut self.rules.cov;
            c.hit_if(h.va == 0, Rule::ChaseStartNonZero);
            c.hit_if(h.total_len > chase::MAX_VALUE, Rule::ChaseValueBound);
            c.hit_if(
                !layout.is_valid() || (h.va != 0 && !h.va.is_multiple_of(8)),
                Rule::ChaseLayout,
            );
            let answer = pointer_chase::chase(
                &mut self.ras_memory(h.pid, notices),
                h.va,
                h.arg0,
                layout,
                h.total_len,
            );
            let at_bound = |a: &OffloadAnswer| {
                a.arg0 == layout.max_hops as u64 && a.arg1 != 0 && a.payload.is_empty()
            };
            let stopped = answer.as_ref().is_ok_and(at_bound);
            self.rules.cov.hit_if(stopped, Rule::ChaseHopBound);
            return self.offload_answer(out, route, h, answer);
        }
        if !clio_proto::kv::is_kv(h.opcode) {
            self.c.bad_requests += 1;
            return self.respond(out, route, h.response_to(Status::Unsupported), &[]);
        }
        if h.opcode == Opcode::KvPutStaged {
            return self.kv_put_staged(route, h, payload, notices, out);
        }
        let req = match KvRequest::decode(h, payload) {
            Ok(req) => req,
            Err(e) => {
                self.rules.kv_format(&e);
                return self.bad(out, route, h);
            }
        };
        let (store_pid, l) = match self.kv_ready() {
            Ok(r) => r,
            Err(s) => return self.respond(out, route, h.response_to(s), &[]),
        };
        // Exactly once: a put or delete records its answer in the idempotence ring under
        // the caller's (pid, client, req_id); a retry gets that answer, never a second run.
        let mut cov = Coverage::default();
        let mut mem = RasMemory {
            rx_free: self.ring.rx_free(),
            vm: &mut self.vm,
            dram: &mut self.dram,
            layout: &self.layout,
            pid: store_pid,
            notices,
        };
        let (pid, client, id) = (h.pid, h.client, h.req_id);
        let ran = clio_kv::decide_once(
            &mut mem,
            &l,
            &mut self.sync,
            h.opcode,
            pid,
            client,
            id,
            req,
            &mut cov,
        );
        let answer = match ran {
            Once::Replayed(s, v) => return self.replayed(out, route, h, s, v),
            Once::OverShare => return self.quota_refused(out, route, h, Quota::RingShare),
            Once::Stranger => {
                return self.respond(out, route, h.response_to(Status::Denied), &[]);
            }
            Once::Ran(d) => d.and_then(|d| clio_kv::answer_of(&mut mem, d)),
        };
        self.rules.cov.add(&cov);
        self.offload_answer(out, route, h, answer);
    }

    /// A retry answered from the idempotence ring: the first answer again. An OK put or delete
    /// answer carries no value (`total_len` 0, as `offload_answer` sets it); an error answer is
    /// the request's header with the status, as it was.
    fn replayed(&mut self, out: &mut Vec<Outgoing>, route: &Route, h: &Header, s: Status, v: u64) {
        let mut r = Header {
            arg0: v,
            ..h.response_to(s)
        };
        if s == Status::Ok {
            r.total_len = 0;
        }
        self.respond(out, route, r, &[]);
    }

    /// The idempotence table's verdict on a KV write: a retry is answered from it, a member
    /// over its share (or whose entry holds another of its results) QUOTA_EXCEEDED, a client
    /// id not of the RAS DENIED (all: true, answered); false = execute it.
    fn answered_from_ring(&mut self, route: &Route, h: &Header, out: &mut Vec<Outgoing>) -> bool {
        match self.sync.check(h.pid, h.client, h.req_id) {
            RingCheck::Cached(s, v) => {
                self.replayed(out, route, h, s, v);
                true
            }
            RingCheck::OverShare => {
                self.quota_refused(out, route, h, Quota::RingShare);
                true
            }
            RingCheck::Stranger => {
                self.respond(out, route, h.response_to(Status::Denied), &[]);
                true
            }
            RingCheck::Execute => false,
        }
    }

    /// A staged put: the key from the packet, the value from the caller's RAS (read through
    /// the caller's translation, so it reaches nothing the caller could not read). The ring is
    /// asked first (a retry after the value's slot was reused is answered from it); a value
    /// whose check does not match has not landed yet: RETRY_LATER, nothing recorded or changed.
    fn kv_put_staged(
        &mut self,
        route: &Route,
        h: &Header,
        payload: &[u8],
        notices: &mut Vec<Notice>,
        out: &mut Vec<Outgoing>,
    ) {
        let p = match KvStagedPut::decode(h, payload) {
            Ok(p) => p,
            Err(e) => {
                self.rules.kv_format(&e);
                return self.bad(out, route, h);
            }
        };
        let (store_pid, l) = match self.kv_ready() {
            Ok(r) => r,
            Err(s) => return self.respond(out, route, h.response_to(s), &[]),
        };
        if self.answered_from_ring(route, h, out) {
            return;
        }
        let mut value = vec![0u8; p.len];
        if let Err(s) = self.ras_memory(h.pid, notices).read(p.va, &mut value) {
            self.c.bad_requests += 1;
            return self.respond(out, route, h.response_to(s), &[]);
        }
        if value_check(&value) != p.check {
            return self.respond(out, route, h.response_to(Status::RetryLater), &[]);
        }
        let req = KvRequest {
            key: p.key,
            value: &value,
        };
        let mut cov = Coverage::default();
        let mut mem = self.ras_memory(store_pid, notices);
        let answer = clio_kv::serve(&mut mem, &l, Opcode::KvPut, h.pid, req, &mut cov);
        self.rules.cov.add(&cov);
        let outcome = answer.as_ref().map(|a| a.arg0).map_err(|s| *s);
        self.sync.record_outcome(h.pid, h.client, h.req_id, outcome);
        self.offload_answer(out, route, h, answer);
    }

    fn offload_answer(
        &mut self,
        out: &mut Vec<Outgoing>,
        route: &Route,
        h: &Header,
        answer: Result<OffloadAnswer, Status>,
    ) {
        self.c.offload_requests += 1;
        match answer {
            Ok(a) => {
                let mut r = Header {
                    arg0: a.arg0,
                    arg1: a.arg1,
                    ..h.response_to(Status::Ok)
                };
                if clio_proto::kv::is_kv(h.opcode) {
                    r.total_len = a.payload.len() as u32; // the value, or nothing
                }
                self.respond(out, route, r, &a.payload);
            }
            Err(s) => match clio_kv::refusal_quota(s) {
                Some(q) => self.quota_refused(out, route, h, q),
                None => self.respond(out, route, h.response_to(s), &[]),
            },
        }
    }
}
