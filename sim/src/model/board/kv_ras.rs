//! Clio-KV's own address space: the node registers a RAS for the store through the slow
//! path exactly as a compute node would (Register, then Alloc of the store's region, then a
//! Heartbeat every quarter lease), with the requests put on the RX ring by the node itself
//! under an internal route whose replies the node keeps. It then touches every page of the
//! region (first-touch faults, as a CN's first write would take) and formats the table, so
//! that no KV request ever meets a page fault half-way. Until then KV requests are answered
//! `RetryLater`; if the slow path refuses (no memory) they are answered with its status.
//!
//! Started when the node starts (`CBoard::new`); with an in-process slow path it is ready
//! before the node serves its first packet, with an external one as soon as the daemon has
//! answered. The key of the store's RAS never leaves the node, so no compute node can
//! address the store's memory with one-sided requests.

use super::{CBoard, Outgoing};
use crate::model::mem_access::Notice;
use crate::model::offload::clio_kv;
use clio_proto::frame::Route;
use clio_proto::kv::StoreLayout;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::ring::Descriptor;
use clio_proto::{Header, Opcode, Status};
use std::time::{Duration, Instant};

/// The route of the node's own slow-path requests: UDP from port 0 of 0.0.0.0 (no datagram
/// comes from there) and a locally administered MAC of its own. Replies to it are kept, never
/// sent; they are matched by request id (random per start), opcode and pid too.
pub(super) fn internal_route() -> Route {
    Route {
        peer_mac: [0x02, 0, 0, 0x4B, 0x56, 0x01],
        ..Route::default()
    }
}

/// The store's membership in its own RAS.
#[derive(Debug, Clone, Copy)]
pub(super) struct Member {
    pub pid: u16,
    key: u64,
    client: u16,
}

/// Where the store's own RAS is in its life.
#[derive(Debug, Clone, Copy)]
pub(super) enum KvRas {
    /// Offloads are off.
    Off,
    /// Register sent (request id).
    Registering(u32),
    /// Alloc of the region sent.
    Allocating(Member, u32),
    /// Touching the region's pages (the next page's address), then formatting.
    Preparing(Member, StoreLayout, u64),
    /// Serving.
    Ready(Ready),
    /// The slow path refused (or later tore the RAS down): KV requests get this status.
    Failed(Status),
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Ready {
    pub member: Member,
    pub layout: StoreLayout,
    lease: Duration,
    next_heartbeat: Instant,
    heartbeat_pending: Option<u32>,
}

impl CBoard {
    /// Start registering the store's RAS (offloads on).
    pub(super) fn kv_start(&mut self, bytes: u64, lease: Duration) {
        self.kv_bytes = bytes;
        self.kv_lease = lease;
        let nonce = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64)
            ^ (std::process::id() as u64) << 32;
        self.kv_req = (nonce ^ nonce >> 32) as u32;
        let id = self.kv_send(Header {
            arg0: nonce,
            ..Header::request(Opcode::Register, 0, 0, 0)
        });
        self.kv = match id {
            Some(id) => KvRas::Registering(id),
            None => KvRas::Failed(Status::RetryLater),
        };
    }

    /// Put one of the node's own requests on the RX ring; its request id.
    fn kv_send(&mut self, h: Header) -> Option<u32> {
        let id = self.kv_req;
        self.kv_req = self.kv_req.wrapping_add(1);
        let d = Descriptor::Request {
            route: internal_route(),
            header: Header { req_id: id, ..h },
        };
        self.ring.push_rx(&d).ok().map(|()| id)
    }

    fn kv_send_as(&mut self, m: Member, op: Opcode, arg0: u64, arg1: u64) -> Option<u32> {
        self.kv_send(
            Header {
                arg0,
                arg1,
                ..Header::request(op, m.pid, 0, 0)
            }
            .with_credentials(m.key, m.client),
        )
    }

    /// A slow-path reply to the internal route.
    pub(super) fn kv_reply(&mut self, h: Header) {
        let ok = h.status == Status::Ok;
        self.kv = match self.kv {
            KvRas::Registering(id) if h.req_id == id && h.opcode == Opcode::Register => {
                if !ok {
                    KvRas::Failed(h.status)
                } else {
                    let m = Member {
                        pid: h.pid,
                        key: h.arg0,
                        client: h.arg1 as u16,
                    };
                    match self.kv_send_as(m, Opcode::Alloc, self.kv_bytes, PERM_READ_WRITE) {
                        Some(id) => KvRas::Allocating(m, id),
                        None => KvRas::Failed(Status::RetryLater),
                    }
                }
            }
            KvRas::Allocating(m, id)
                if h.req_id == id && h.opcode == Opcode::Alloc && h.pid == m.pid =>
            {
                match StoreLayout::fit(h.va, self.kv_bytes) {
                    Some(l) if ok => KvRas::Preparing(m, l, l.base),
                    _ if ok => KvRas::Failed(Status::OutOfMemory),
                    _ => KvRas::Failed(h.status),
                }
            }
            KvRas::Ready(mut r)
                if r.heartbeat_pending == Some(h.req_id)
                    && h.opcode == Opcode::Heartbeat
                    && h.pid == r.member.pid =>
            {
                r.heartbeat_pending = None;
                if ok {
                    if h.arg0 > 0 {
                        r.lease = Duration::from_millis(h.arg0);
                    }
                    KvRas::Ready(r)
                } else {
                    // The RAS is gone (its lease ended while the node was not serviced).
                    KvRas::Failed(h.status)
                }
            }
            other => other, // not ours (stale): ignore
        };
    }

    /// Move the store's set-up on (touch pages, format) and send a heartbeat when one is
    /// due. Returns whether anything was put on the RX ring.
    pub(super) fn kv_progress(&mut self) -> bool {
        match self.kv {
            KvRas::Preparing(m, l, next) => {
                let mut notices = Vec::new();
                let status = self.kv_prepare(m, l, next, &mut notices);
                let pushed = !notices.is_empty();
                for n in notices {
                    if self.ring.push_rx(&n).is_err() {
                        self.c.bad_descriptors += 1;
                    }
                }
                if let Err(s) = status {
                    if s != Status::RetryLater {
                        self.kv = KvRas::Failed(s);
                    }
                }
                pushed
            }
            KvRas::Ready(mut r) if r.heartbeat_pending.is_none() => {
                let now = Instant::now();
                if now < r.next_heartbeat {
                    return false;
                }
                r.next_heartbeat = now + r.lease / 4;
                r.heartbeat_pending = self.kv_send_as(r.member, Opcode::Heartbeat, 0, 0);
                self.kv = KvRas::Ready(r);
                r.heartbeat_pending.is_some()
            }
            _ => false,
        }
    }

    /// Touch the pages from `next` on, then format; `RetryLater` when the free-page buffer
    /// ran dry (the state then says where to go on).
    fn kv_prepare(
        &mut self,
        m: Member,
        l: StoreLayout,
        mut next: u64,
        notices: &mut Vec<Notice>,
    ) -> Result<(), Status> {
        let page = self.layout.page_size();
        let end = l.base + l.bytes();
        while next < end {
            let rx_free = self.ring.rx_free();
            let r = self.vm.translate(
                &mut self.dram,
                &self.layout,
                m.pid,
                next,
                PERM_READ_WRITE as u8,
                rx_free.saturating_sub(notices.len() as u32),
                notices,
            );
            if let Err(s) = r {
                self.kv = KvRas::Preparing(m, l, next);
                return Err(s);
            }
            next = (next / page + 1) * page;
        }
        clio_kv::format(&mut self.ras_memory(m.pid, notices), &l)?;
        self.kv = KvRas::Ready(Ready {
            member: m,
            layout: l,
            lease: self.kv_lease,
            next_heartbeat: Instant::now() + self.kv_lease / 4,
            heartbeat_pending: None,
        });
        Ok(())
    }

    /// The store, if it is serving; else the status a KV request gets.
    pub(super) fn kv_ready(&mut self, out: &mut Vec<Outgoing>) -> Result<Ready, Status> {
        if self.slow.is_some() && !matches!(self.kv, KvRas::Ready(_) | KvRas::Failed(_)) {
            self.service_rings(out);
        }
        match self.kv {
            KvRas::Ready(r) => Ok(r),
            KvRas::Failed(s) => Err(s),
            KvRas::Off => Err(Status::Unsupported),
            _ => {
                self.kv_progress();
                Err(Status::RetryLater)
            }
        }
    }
}

const PERM_READ_WRITE: u64 = (PERM_READ | PERM_WRITE) as u64;
