//! A minimal wire-level client over a model node, shared by the model's behaviour tests.
#![allow(dead_code)]

use clio_proto::frame::Route;
use clio_proto::header::{packet_count, parse_verified, segment};
use clio_proto::route_cookie::cookie_of_answer;
use clio_proto::{Header, Opcode, Status};
use clio_sim::{BoardConfig, CBoard, SlowPathMode};

pub const PAGE_SHIFT: u32 = 16; // 64 KiB pages
pub const PAGE: u64 = 1 << PAGE_SHIFT;

/// A minimal wire-level client over a node (the real client is CLib; this one sends exactly
/// the packets a test wants, in any order, and checks every response's checksum).
pub struct Wire {
    pub node: CBoard,
    pub m: Member,
    next_id: u32,
}

/// A RAS membership as the node handed it out: the credentials every request presents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Member {
    pub pid: u16,
    pub key: u64,
    pub client: u16,
    /// The route cookie of this wire's address (`clio_proto::route_cookie`), from the
    /// answer to Register or Join.
    pub cookie: u32,
}

/// A node of `dram_bytes` with 64 KiB pages and this member lease.
pub fn node_with(dram_bytes: u64, lease: std::time::Duration) -> CBoard {
    CBoard::new(&BoardConfig {
        dram_bytes,
        page_shift: PAGE_SHIFT,
        lease,
        offloads: clio_sim::Offloads::None,    // as `node()`
        limits: clio_sim::Limits::unlimited(), // as `node()`
        ..BoardConfig::default()
    })
    .unwrap()
}

/// A node for the tests of the core paths: no offloads, so the slow path builds no Clio-KV
/// store (its own RAS would take a PID, a key-table entry and 16 MiB from every count here;
/// `conformance_config` and the KV tests have one). No quotas either: these tests let one
/// tenant fill the node's memory and pid table (the quotas have tests of their own:
/// `arm-slowpath/tests/isolation.rs`, `tests/isolation.rs`).
pub fn node() -> CBoard {
    CBoard::new(&node_config()).unwrap()
}

/// The configuration of [`node`].
pub fn node_config() -> BoardConfig {
    BoardConfig {
        dram_bytes: 64 << 20,
        page_shift: PAGE_SHIFT,
        memory_file: None,
        slowpath: SlowPathMode::InProcess,
        ring_entries: 256,
        offloads: clio_sim::Offloads::None,
        limits: clio_sim::Limits::unlimited(),
        ..BoardConfig::default()
    }
}

impl Wire {
    pub fn new(node: CBoard) -> Wire {
        Wire {
            node,
            m: Member::default(),
            next_id: 1,
        }
    }
    /// A request of the current member (its pid, key and client id).
    pub fn request(&self, op: Opcode, id: u32, va: u64) -> Header {
        Header::request(op, self.m.pid, id, va)
            .with_credentials(self.m.key, self.m.client)
            .with_cookie(self.m.cookie)
    }
    pub fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }
    pub fn send_raw(&mut self, bytes: &[u8]) -> Vec<(Header, Vec<u8>)> {
        self.send_from(&Route::default(), bytes)
    }
    /// Send from `route` (another source address than this wire's own, `Route::default()`).
    pub fn send_from(&mut self, route: &Route, bytes: &[u8]) -> Vec<(Header, Vec<u8>)> {
        let mut out = Vec::new();
        self.node.handle(route, bytes, &mut out);
        out.iter()
            .map(|(_, b)| {
                parse_verified(b)
                    .map(|(h, p)| (h, p.to_vec()))
                    .expect("node sends valid packets")
            })
            .collect()
    }
    pub fn call(&mut self, h: Header) -> Header {
        let r = self.send_raw(&h.to_packet(&[]));
        assert_eq!(r.len(), 1, "one response to {h:?}");
        assert!(r[0].0.response && r[0].0.req_id == h.req_id);
        r[0].0
    }
    /// Join the RAS of `m` as a new member (the Join carries `m`'s pid and key).
    pub fn join(&mut self, m: Member, nonce: u64) -> Result<Member, Status> {
        let mut h = Header::request(Opcode::Join, m.pid, self.id(), 0).with_credentials(m.key, 0);
        h.arg0 = nonce;
        let r = self.call(h);
        if r.status != Status::Ok {
            return Err(r.status);
        }
        self.m = Member {
            client: r.arg1 as u16,
            cookie: cookie_of_answer(r.arg1),
            ..m
        };
        Ok(self.m)
    }
    /// Leave the RAS (`destroy`: tear it down for everyone).
    pub fn unregister(&mut self, destroy: bool) -> Status {
        let id = self.id();
        let mut h = self.request(Opcode::Unregister, id, 0);
        h.arg0 = destroy as u64;
        self.call(h).status
    }
    /// Acknowledge a ring-recorded result.
    pub fn ack(&mut self, req_id: u32) -> Status {
        let id = self.id();
        let mut h = self.request(Opcode::CnAck, id, 0);
        h.arg0 = req_id as u64;
        self.call(h).status
    }
    pub fn register(&mut self, nonce: u64) -> Member {
        let mut h = Header::request(Opcode::Register, 0, self.id(), 0);
        h.arg0 = nonce;
        let r = self.call(h);
        assert_eq!(r.status, Status::Ok);
        assert_eq!((r.key, r.client), (0, 0), "responses never carry a key");
        self.m = Member {
            pid: r.pid,
            key: r.arg0,
            client: r.arg1 as u16,
            cookie: cookie_of_answer(r.arg1),
        };
        self.m
    }
    pub fn alloc(&mut self, bytes: u64, perms: u8) -> Result<u64, Status> {
        let id = self.id();
        let mut h = self.request(Opcode::Alloc, id, 0);
        h.arg0 = bytes;
        h.arg1 = perms as u64;
        let r = self.call(h);
        if r.status == Status::Ok {
            Ok(r.va)
        } else {
            Err(r.status)
        }
    }
    pub fn write_packets(&mut self, va: u64, data: &[u8]) -> (u32, Vec<Vec<u8>>) {
        let id = self.id();
        let total = data.len() as u32;
        let n = packet_count(total);
        let pkts = (0..n)
            .map(|i| {
                let (off, len) = segment(total, i).unwrap();
                let h = Header {
                    pkt_index: i,
                    pkt_count: n,
                    total_len: total,
                    ..self.request(Opcode::Write, id, va)
                };
                h.to_packet(&data[off as usize..off as usize + len as usize])
            })
            .collect();
        (id, pkts)
    }
    pub fn write(&mut self, va: u64, data: &[u8]) -> Status {
        let (_, pkts) = self.write_packets(va, data);
        let mut status = Status::Ok;
        for p in pkts {
            for (h, _) in self.send_raw(&p) {
                if h.status != Status::Ok {
                    status = h.status;
                }
            }
        }
        status
    }
    pub fn read(&mut self, va: u64, len: u32) -> Result<Vec<u8>, Status> {
        let id = self.id();
        let h = Header {
            total_len: len,
            ..self.request(Opcode::Read, id, va)
        };
        let r = self.send_raw(&h.to_packet(&[]));
        // One packet per KiB; an error packet ends the answer (protocol.md section 2).
        if let Some((e, _)) = r.iter().find(|(h, _)| h.status != Status::Ok) {
            return Err(e.status);
        }
        let mut data = vec![0u8; len as usize];
        assert_eq!(r.len(), packet_count(len) as usize);
        for (h, p) in r {
            let (off, l) = segment(len, h.pkt_index).unwrap();
            assert_eq!(l as usize, p.len());
            data[off as usize..off as usize + p.len()].copy_from_slice(&p);
        }
        Ok(data)
    }
    pub fn atomic(&mut self, op: Opcode, va: u64, a0: u64, a1: u64, id: u32) -> Header {
        let h = Header {
            arg0: a0,
            arg1: a1,
            ..self.request(op, id, va)
        };
        self.call(h)
    }
    pub fn dram(&self) -> Vec<u8> {
        self.node.peek(0, 64 << 20).unwrap().to_vec()
    }
}

pub fn pattern(n: usize, seed: u8) -> Vec<u8> {
    (0..n)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}
