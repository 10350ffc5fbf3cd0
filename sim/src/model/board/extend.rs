//! The extend path's dispatch: the MAT hands extend opcodes here and this hands each to the
//! offload unit that serves it, with the caller's RAS as its memory (`model::offload`).

use super::{CBoard, Outgoing};
use crate::model::dram::Dram;
use crate::model::mem_access::{read_pieces, Notice, VirtualMemory};
use crate::model::offload::{pointer_chase, OffloadAnswer, OffloadMemory};
use clio_proto::frame::Route;
use clio_proto::layout::MemoryLayout;
use clio_proto::offload::ChaseLayout;
use clio_proto::pte::PERM_READ;
use clio_proto::{Header, Opcode, Status};

/// The caller's RAS, read through the same translation as `Read` (TLB, walker, page fault,
/// permissions).
struct CallerMemory<'a> {
    vm: &'a mut VirtualMemory,
    dram: &'a mut Dram,
    layout: &'a MemoryLayout,
    pid: u16,
    /// Slow-path ring room for fault notices when the request started.
    rx_free: u32,
    notices: &'a mut Vec<Notice>,
}

impl OffloadMemory for CallerMemory<'_> {
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), Status> {
        let room = self.rx_free.saturating_sub(self.notices.len() as u32);
        let pieces = self.vm.translate_range(
            self.dram,
            self.layout,
            self.pid,
            va,
            buf.len() as u64,
            PERM_READ,
            room,
            self.notices,
        )?;
        if read_pieces(self.dram, &pieces, buf) {
            Ok(())
        } else {
            Err(Status::Unmapped)
        }
    }
}

impl CBoard {
    /// Serve an extend opcode with its offload unit; one response packet.
    pub(super) fn extend(
        &mut self,
        route: &Route,
        h: &Header,
        notices: &mut Vec<Notice>,
        out: &mut Vec<Outgoing>,
    ) {
        if h.payload_len != 0 || h.pkt_count != 1 {
            return self.bad(out, route, h);
        }
        let mut mem = CallerMemory {
            vm: &mut self.vm,
            dram: &mut self.dram,
            layout: &self.layout,
            pid: h.pid,
            rx_free: self.ring.rx_free(),
            notices,
        };
        let answer: Result<OffloadAnswer, Status> = match h.opcode {
            Opcode::PointerChase => pointer_chase::chase(
                &mut mem,
                h.va,
                h.arg0,
                ChaseLayout::unpack(h.arg1),
                h.total_len,
            ),
            _ => Err(Status::Unsupported),
        };
        self.c.offload_requests += 1;
        match answer {
            Ok(a) => {
                let r = Header {
                    arg0: a.arg0,
                    arg1: a.arg1,
                    ..h.response_to(Status::Ok)
                };
                self.respond(out, route, r, &a.payload);
            }
            Err(s) => self.respond(out, route, h.response_to(s), &[]),
        }
    }
}
