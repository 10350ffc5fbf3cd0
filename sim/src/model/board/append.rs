//! The sync unit's Append (`Opcode::Append`, `proto::replog`): reserve the tail of a
//! node-ordered log and write the framed record in one operation, exactly once under retries.

use super::{CBoard, Outgoing};
use crate::model::sync_unit::RingCheck;
use clio_proto::consts::ATOMIC_BYTES;
use clio_proto::frame::Route;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::quota::Quota;
use clio_proto::replog::{self, TAIL_OFFSET};
use clio_proto::ring::Descriptor;
use clio_proto::rules::Rule;
use clio_proto::{Header, Status};

impl CBoard {
    /// Serve an Append: the checks, the ring, the tail and the record. Nothing is written
    /// unless the whole record and the new tail can be.
    pub(super) fn append(
        &mut self,
        route: &Route,
        h: &Header,
        payload: &[u8],
        notices: &mut Vec<Descriptor>,
        out: &mut Vec<Outgoing>,
    ) {
        if !h.va.is_multiple_of(ATOMIC_BYTES)
            || h.pkt_count != 1
            || h.total_len == 0
            || h.total_len > replog::MAX_RECORD
            || h.payload_len as u32 != h.total_len
        {
            let c = &mut self.rules.cov;
            c.hit_if(!h.va.is_multiple_of(ATOMIC_BYTES), Rule::AppendAlignment);
            c.hit_if(h.payload_len as u32 != h.total_len, Rule::AppendLength);
            return self.bad(out, route, h);
        }
        if h.durable && !self.dram.is_persistent() {
            self.c.bad_requests += 1;
            return self.respond(out, route, h.response_to(Status::Unsupported), &[]);
        }
        let (status, tail) = match self.sync.check(h.pid, h.client, h.req_id) {
            RingCheck::Cached(s, v) => (s, v),
            RingCheck::OverShare => (Status::QuotaExceeded, 0),
            RingCheck::Stranger => (Status::Denied, 0),
            RingCheck::Execute => match self.append_execute(h, payload, notices) {
                Ok(at) => {
                    self.rules.cov.hit(Rule::AppendFootprint);
                    self.sync.record(h.pid, h.client, h.req_id, Status::Ok, at);
                    (Status::Ok, at)
                }
                Err(s) => {
                    self.rules
                        .cov
                        .hit_if(s == Status::LogFull, Rule::AppendCapacity);
                    (s, 0)
                }
            },
        };
        let arg1 = if status == Status::QuotaExceeded {
            Quota::RingShare as u64
        } else {
            tail + replog::footprint(h.total_len)
        };
        let r = Header {
            arg0: tail,
            arg1,
            ..h.response_to(status)
        };
        if h.durable && status == Status::Ok {
            // Held until the next flush, like a durable write; a replayed answer too, since
            // the first attempt's flush may not have happened yet.
            self.c.durable_writes += 1;
            self.held.push((*route, r.to_packet(&[])));
            return;
        }
        self.respond(out, route, r, &[]);
    }

    /// Returns the record's offset in the log's data area (the tail it reserved).
    fn append_execute(
        &mut self,
        h: &Header,
        payload: &[u8],
        notices: &mut Vec<Descriptor>,
    ) -> Result<u64, Status> {
        let rx_free = self.ring.rx_free();
        let tail_va = h.va.checked_add(TAIL_OFFSET).ok_or(Status::BadRequest)?;
        let tail_pa = self.vm.translate(
            &mut self.dram,
            &self.layout,
            h.pid,
            tail_va,
            PERM_READ | PERM_WRITE,
            rx_free,
            notices,
        )?;
        let mut w = [0u8; 8];
        if !self.dram.read(tail_pa, &mut w) {
            return Err(Status::Unmapped);
        }
        let tail = u64::from_le_bytes(w);
        let at = replog::place(h.arg0, tail, h.total_len).ok_or(Status::LogFull)?;
        let rec_va = h.va.checked_add(at).ok_or(Status::LogFull)?;
        let len = replog::footprint(h.total_len);
        let rx_free = rx_free.saturating_sub(notices.len() as u32);
        let pieces = self.vm.translate_range(
            &mut self.dram,
            &self.layout,
            h.pid,
            rec_va,
            len,
            PERM_WRITE,
            rx_free,
            notices,
        )?;
        let mut rec = Vec::with_capacity(len as usize);
        rec.extend_from_slice(&replog::frame(h.total_len));
        rec.extend_from_slice(payload);
        rec.resize(len as usize, 0);
        if !super::write_pieces(&mut self.dram, &pieces, &rec) {
            return Err(Status::Unmapped);
        }
        let new_tail = tail + len;
        self.dram.write(tail_pa, &new_tail.to_le_bytes());
        if h.durable {
            self.durable
                .extend(pieces.iter().map(|&(pa, n)| (pa, n as u64)));
            self.durable.push((tail_pa, 8));
        }
        Ok(tail)
    }
}
