//! The sync unit's atomics, fences and CN acks (`Path::Sync` but Append): the idempotence
//! ring first for the ring-recorded opcodes, then the word's translation and the ALU.

use super::{CBoard, Outgoing};
use crate::model::sync_unit::{atomic_apply, RingCheck};
use clio_proto::consts::ATOMIC_BYTES;
use clio_proto::frame::Route;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::quota::Quota;
use clio_proto::ring::Descriptor;
use clio_proto::rules::Rule;
use clio_proto::{Header, Opcode, Status};

/// An atomic's format: an aligned word, no payload.
fn atomic_format_ok(h: &Header) -> bool {
    h.va.is_multiple_of(ATOMIC_BYTES) && h.payload_len == 0
}

impl CBoard {
    /// A request the key check found stale (its epoch older than its RAS's): STALE, nothing
    /// executed, except that an atomic in its format whose entry the idempotence ring holds
    /// (it executed before the epoch moved on; its answer may have been lost) is answered from
    /// the ring (the sync unit's order: format check, then the ring).
    pub(super) fn stale(&mut self, out: &mut Vec<Outgoing>, route: &Route, h: &Header) {
        let replay = if h.opcode.is_atomic() && atomic_format_ok(h) {
            self.sync.stale_replay(h.pid, h.client, h.req_id)
        } else {
            None
        };
        let r = match replay {
            Some((s, v)) => Header {
                arg0: v,
                ..h.response_to(s)
            },
            None => h.response_to(Status::Stale),
        };
        self.respond(out, route, r, &[]);
    }

    /// A request refused by `quota` (a member holding its share of the ring, all of it
    /// unacknowledged; a RAS holding its Clio-KV records): QUOTA_EXCEEDED naming the quota in
    /// `arg1`, nothing executed.
    pub(super) fn quota_refused(
        &mut self,
        out: &mut Vec<Outgoing>,
        route: &Route,
        h: &Header,
        quota: Quota,
    ) {
        let r = Header {
            arg1: quota as u64,
            ..h.response_to(Status::QuotaExceeded)
        };
        self.respond(out, route, r, &[]);
    }

    /// Serve a fence, a CN ack or an atomic.
    pub(super) fn sync_op(
        &mut self,
        route: &Route,
        h: &Header,
        notices: &mut Vec<Descriptor>,
        out: &mut Vec<Outgoing>,
    ) {
        match h.opcode {
            // The model executes requests one at a time, so every earlier request is complete.
            Opcode::Fence => {
                self.rules.fence();
                return self.respond(out, route, h.response_to(Status::Ok), &[]);
            }
            Opcode::CnAck => {
                self.sync.ack(h.pid, h.client, h.arg0 as u32);
                return self.respond(out, route, h.response_to(Status::Ok), &[]);
            }
            _ => {}
        }
        if !atomic_format_ok(h) {
            let misaligned = !h.va.is_multiple_of(ATOMIC_BYTES);
            self.rules.cov.hit_if(misaligned, Rule::AtomicAlignment);
            return self.bad(out, route, h);
        }
        let once = h.opcode.uses_idempotence_ring();
        if once {
            match self.sync.check(h.pid, h.client, h.req_id) {
                RingCheck::Cached(s, v) => {
                    return self.respond(
                        out,
                        route,
                        Header {
                            arg0: v,
                            ..h.response_to(s)
                        },
                        &[],
                    )
                }
                RingCheck::OverShare => return self.quota_refused(out, route, h, Quota::RingShare),
                RingCheck::Stranger => {
                    return self.respond(out, route, h.response_to(Status::Denied), &[])
                }
                RingCheck::Execute => {}
            }
        }
        let rx_free = self.ring.rx_free();
        let pa = match self.vm.translate(
            &mut self.dram,
            &self.layout,
            h.pid,
            h.va,
            PERM_READ | PERM_WRITE,
            rx_free,
            notices,
        ) {
            Ok(pa) => pa,
            Err(s) => return self.respond(out, route, h.response_to(s), &[]),
        };
        let mut w = [0u8; 8];
        if !self.dram.read(pa, &mut w) {
            return self.respond(out, route, h.response_to(Status::Unmapped), &[]);
        }
        let old = u64::from_le_bytes(w);
        let (new, result) = atomic_apply(h.opcode, old, h.arg0, h.arg1);
        self.rules.atomic(h.opcode, old, h.arg0, new);
        if let Some(v) = new {
            self.dram.write(pa, &v.to_le_bytes());
        }
        if once {
            self.sync
                .record(h.pid, h.client, h.req_id, Status::Ok, result);
        } else {
            self.sync.executed += 1;
        }
        self.respond(
            out,
            route,
            Header {
                arg0: result,
                ..h.response_to(Status::Ok)
            },
            &[],
        );
    }
}
