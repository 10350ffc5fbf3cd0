//! Seeded random request streams for model-vs-RTL conformance.
//!
//! The stream is generated against a live node (the model), so it can use the addresses the
//! node hands out; replaying the same packets into another implementation must give
//! byte-identical responses and memory images.

use crate::model::board::Outgoing;
use crate::node::MemoryNode;
use clio_proto::frame::Route;
use clio_proto::header::{packet_count, parse_verified, segment};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::{Header, Opcode, Status};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The classes of requests a stream mixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// Write of 16 B .. 4 KiB, possibly across a page boundary.
    Write,
    /// Read of 16 B .. 4 KiB.
    Read,
    /// Atomic (FAA, CAS, TAS/unlock), sometimes duplicated.
    Atomic,
    /// Access to another process's address or an unallocated one.
    Foreign,
    /// A corrupted packet.
    Corrupt,
    /// Fence.
    Fence,
    /// Alloc or free.
    AllocFree,
}

struct Proc {
    pid: u16,
    regions: Vec<(u64, u64, u8)>,
}

/// A stream generator bound to a reference node.
pub struct Stream {
    rng: StdRng,
    procs: Vec<Proc>,
    next_id: u32,
    page: u64,
    /// Every packet sent, in order, with its route.
    pub sent: Vec<(Route, Vec<u8>)>,
}

fn route(pid_slot: usize) -> Route {
    Route {
        peer_port: 40000 + pid_slot as u16,
        local_port: clio_proto::consts::DEFAULT_UDP_PORT,
        ..Route::default()
    }
}

impl Stream {
    /// A stream with `seed` against a node of page size `page`.
    pub fn new(seed: u64, page: u64) -> Stream {
        Stream {
            rng: StdRng::seed_from_u64(seed),
            procs: Vec::new(),
            next_id: 1,
            page,
            sent: Vec::new(),
        }
    }

    fn send(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        bytes: Vec<u8>,
        out: &mut Vec<Outgoing>,
    ) -> Vec<Header> {
        let r = route(slot);
        let start = out.len();
        node.handle(&r, &bytes, out);
        node.service(out);
        self.sent.push((r, bytes));
        out[start..]
            .iter()
            .filter_map(|(_, b)| parse_verified(b).ok().map(|(h, _)| h))
            .collect()
    }

    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }

    /// Register `n` processes and give each a few regions (one read-only).
    pub fn setup(&mut self, node: &mut dyn MemoryNode, n: usize, out: &mut Vec<Outgoing>) {
        for slot in 0..n {
            let id = self.id();
            let h = Header {
                arg0: 1000 + slot as u64,
                ..Header::request(Opcode::Register, 0, id, 0)
            };
            let pid = self
                .send(node, slot, h.to_packet(&[]), out)
                .first()
                .map(|r| r.pid)
                .unwrap_or(0);
            self.procs.push(Proc {
                pid,
                regions: Vec::new(),
            });
            for (pages, perms) in [
                (4u64, PERM_READ | PERM_WRITE),
                (2, PERM_READ | PERM_WRITE),
                (1, PERM_READ),
            ] {
                self.alloc(node, slot, pages, perms, out);
            }
        }
    }

    fn alloc(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        pages: u64,
        perms: u8,
        out: &mut Vec<Outgoing>,
    ) {
        let id = self.id();
        let pid = self.procs[slot].pid;
        let h = Header {
            arg0: pages * self.page,
            arg1: perms as u64,
            ..Header::request(Opcode::Alloc, pid, id, 0)
        };
        if let Some(r) = self.send(node, slot, h.to_packet(&[]), out).first() {
            if r.status == Status::Ok {
                self.procs[slot]
                    .regions
                    .push((r.va, pages * self.page, perms));
            }
        }
    }

    fn pick(&mut self, slot: usize, len: u64) -> Option<(u64, u8)> {
        let regions = &self.procs[slot].regions;
        if regions.is_empty() {
            return None;
        }
        let (va, size, perms) = regions[self.rng.gen_range(0..regions.len())];
        let len = len.min(size);
        // Bias towards page boundaries so that straddling packets are common.
        let off = if self.rng.gen_bool(0.3) {
            let b = self
                .rng
                .gen_range(1..=size / self.page)
                .min(size / self.page)
                * self.page;
            b.saturating_sub(self.rng.gen_range(0..len.max(1)))
                .min(size - len)
        } else {
            self.rng.gen_range(0..=size - len)
        };
        Some((va + off, perms))
    }

    /// Generate and send one request of a random class.
    pub fn step(&mut self, node: &mut dyn MemoryNode, out: &mut Vec<Outgoing>) -> Class {
        let slot = self.rng.gen_range(0..self.procs.len());
        let pid = self.procs[slot].pid;
        let class = match self.rng.gen_range(0..100) {
            0..=34 => Class::Write,
            35..=64 => Class::Read,
            65..=79 => Class::Atomic,
            80..=86 => Class::Foreign,
            87..=91 => Class::Corrupt,
            92..=94 => Class::Fence,
            _ => Class::AllocFree,
        };
        let id = self.id();
        let len = [16u64, 64, 100, 512, 1024, 1500, 4096][self.rng.gen_range(0..7)];
        match class {
            Class::Write | Class::Corrupt => {
                let Some((va, _)) = self.pick(slot, len) else {
                    return class;
                };
                let data: Vec<u8> = (0..len).map(|_| self.rng.gen()).collect();
                let n = packet_count(len as u32);
                let mut pkts: Vec<Vec<u8>> = (0..n)
                    .map(|i| {
                        let (o, l) = segment(len as u32, i).unwrap_or((0, 0));
                        Header {
                            pkt_index: i,
                            pkt_count: n,
                            total_len: len as u32,
                            ..Header::request(Opcode::Write, pid, id, va)
                        }
                        .to_packet(&data[o as usize..o as usize + l as usize])
                    })
                    .collect();
                if class == Class::Corrupt {
                    let p = self.rng.gen_range(0..pkts.len());
                    let b = self.rng.gen_range(0..pkts[p].len());
                    pkts[p][b] ^= 1 << self.rng.gen_range(0..8);
                }
                if pkts.len() > 1 && self.rng.gen_bool(0.5) {
                    pkts.reverse();
                }
                for p in pkts {
                    self.send(node, slot, p, out);
                }
            }
            Class::Read => {
                let Some((va, _)) = self.pick(slot, len) else {
                    return class;
                };
                let h = Header {
                    total_len: len as u32,
                    ..Header::request(Opcode::Read, pid, id, va)
                };
                self.send(node, slot, h.to_packet(&[]), out);
            }
            Class::Atomic => {
                let Some((va, _)) = self.pick(slot, 8) else {
                    return class;
                };
                let va = va & !7;
                let op = [
                    Opcode::FetchAdd,
                    Opcode::CompareAndSwap,
                    Opcode::TestAndSet,
                    Opcode::Unlock,
                ][self.rng.gen_range(0..4)];
                let h = Header {
                    arg0: self.rng.gen_range(0..4),
                    arg1: self.rng.gen(),
                    ..Header::request(op, pid, id, va)
                };
                let p = h.to_packet(&[]);
                let resp = self.send(node, slot, p.clone(), out);
                if self.rng.gen_bool(0.3) {
                    self.send(node, slot, p, out); // a duplicate: must replay, not re-execute
                }
                if op != Opcode::Unlock
                    && resp.first().is_some_and(|r| r.status == Status::Ok)
                    && self.rng.gen_bool(0.9)
                {
                    let ack_id = self.id();
                    let a = Header {
                        arg0: id as u64,
                        ..Header::request(Opcode::CnAck, pid, ack_id, 0)
                    };
                    self.send(node, slot, a.to_packet(&[]), out);
                }
            }
            Class::Foreign => {
                let other = (slot + 1) % self.procs.len();
                let target = self
                    .pick(other, 16)
                    .map(|(va, _)| va)
                    .unwrap_or(self.page * 1000);
                let h = if self.rng.gen_bool(0.5) {
                    Header {
                        total_len: 16,
                        ..Header::request(Opcode::Read, pid, id, target)
                    }
                    .to_packet(&[])
                } else {
                    Header {
                        total_len: 3,
                        ..Header::request(Opcode::Write, pid, id, target)
                    }
                    .to_packet(b"bad")
                };
                self.send(node, slot, h, out);
            }
            Class::Fence => {
                self.send(
                    node,
                    slot,
                    Header::request(Opcode::Fence, pid, id, 0).to_packet(&[]),
                    out,
                );
            }
            Class::AllocFree => {
                if self.procs[slot].regions.len() > 4 && self.rng.gen_bool(0.5) {
                    let i = self.rng.gen_range(3..self.procs[slot].regions.len());
                    let (va, _, _) = self.procs[slot].regions.remove(i);
                    let h = Header {
                        va,
                        ..Header::request(Opcode::Free, pid, id, 0)
                    };
                    self.send(node, slot, h.to_packet(&[]), out);
                } else {
                    let pages = self.rng.gen_range(1..4);
                    self.alloc(node, slot, pages, PERM_READ | PERM_WRITE, out);
                }
            }
        }
        class
    }
}

/// Replay packets into a node; all responses in order.
pub fn replay(node: &mut dyn MemoryNode, sent: &[(Route, Vec<u8>)]) -> Vec<Outgoing> {
    let mut out = Vec::new();
    for (r, b) in sent {
        node.handle(r, b, &mut out);
        node.service(&mut out);
    }
    out
}
