//! One request from the network, executed: the slow-path opcode's operation and its answer
//! (the status of its error, and what the answer carries: the new PID and key, a member's
//! client id, an allocation's address, the lease, the RAS's epoch).

use super::*;
use crate::frame_memory::FrameMemory;

impl SlowPath {
    pub(super) fn execute(
        &mut self,
        route: &Route,
        h: &Header,
        now: Instant,
        mem: &mut dyn FrameMemory,
    ) -> Header {
        match h.opcode {
            Opcode::Persist => match self.persist(h.pid, h.va, h.total_len as u64, mem) {
                Ok(()) => h.response_to(Status::Ok),
                Err(e) => e.answer(h),
            },
            Opcode::TxLog => {
                match self.tx_log_add(h.pid, h.client, h.va, h.total_len as u64, mem) {
                    Ok(resolved) => Header {
                        arg0: resolved,
                        ..h.response_to(Status::Ok)
                    },
                    Err(e) => e.answer(h),
                }
            }
            Opcode::TxApply => match self.tx_apply(h.pid, h.va, mem) {
                Ok(seq) => Header {
                    arg0: seq,
                    ..h.response_to(Status::Ok)
                },
                Err(TxRefusal::Error(e)) => h.response_to(e.status()),
                Err(TxRefusal::Untouched(page)) => Header {
                    arg0: page,
                    arg1: 1,
                    ..h.response_to(Status::RetryLater)
                },
            },
            Opcode::Register => match self.register_from(h.arg0, h.arg1, Source::of(route), now) {
                Ok((pid, key, client)) => Header {
                    pid,
                    arg0: key,
                    arg1: client as u64,
                    ..h.response_to(Status::Ok)
                },
                Err(e) => e.answer(h),
            },
            Opcode::Join => match self.join_from(h.pid, h.arg0, Source::of(route), now) {
                Ok(client) => Header {
                    arg1: client as u64,
                    ..h.response_to(Status::Ok)
                },
                Err(e) => e.answer(h),
            },
            Opcode::Unregister => match self.unregister(h.pid, h.client, h.arg0 == 1) {
                Ok(()) => h.response_to(Status::Ok),
                Err(e) => e.answer(h),
            },
            Opcode::Heartbeat => match self.registry.renew(h.pid, h.client, now) {
                Ok(()) => Header {
                    arg0: self.registry.lease().as_millis() as u64,
                    ..h.response_to(Status::Ok)
                },
                Err(e) => h.response_to(AllocError::from(e).status()),
            },
            Opcode::SetEpoch => match self.set_epoch(h.pid, h.arg0) {
                Ok(epoch) => Header {
                    arg0: epoch as u64,
                    ..h.response_to(Status::Ok)
                },
                Err(e) => e.answer(h),
            },
            Opcode::Alloc => match self.alloc_for_tenant(h.pid, h.arg0, h.arg1 as u8) {
                Ok(o) => {
                    for &(bucket, slot, pte) in &o.ptes {
                        self.outbox
                            .push_back(Descriptor::PteWrite { bucket, slot, pte });
                    }
                    Header {
                        va: o.va,
                        arg0: o.pages << self.layout.page_shift,
                        ..h.response_to(Status::Ok)
                    }
                }
                Err(e) => e.answer(h),
            },
            Opcode::Free => match self.free(h.pid, h.va) {
                Ok(o) => {
                    self.push_clears(h.pid, &o);
                    Header {
                        arg0: o.pages << self.layout.page_shift,
                        ..h.response_to(Status::Ok)
                    }
                }
                Err(e) => e.answer(h),
            },
            _ => h.response_to(Status::BadRequest),
        }
    }
}
