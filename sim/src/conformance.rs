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
use clio_proto::route_cookie::cookie_of_answer;
use clio_proto::{Header, Opcode, Status};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

mod corners;
mod offload_classes;
pub(crate) mod order_corners;
mod references;
pub use corners::Corner;
pub use references::{references, Reference, REFERENCE_DRAM};

/// The classes of requests a stream mixes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Class {
    /// Write of 16 B .. 4 KiB, possibly across a page boundary; some carry `FLAG_DURABLE`
    /// (acknowledged once flushed where the node has a persistence domain, UNSUPPORTED where
    /// it has none).
    Write,
    /// Read of 1 B .. 1 page + 3000 B (one request, one response packet per KiB), often
    /// across pages; now and then one that runs off its region's end, so the answer stops
    /// with an error packet where the next page does not translate.
    Read,
    /// Atomic (FAA, CAS, TAS, Unlock) by one member of the RAS, sometimes duplicated,
    /// sometimes with another member's request id (members are told apart by client id).
    Atomic,
    /// Append (`proto::replog`) to one of the process's logs (a new one has its tail word
    /// zeroed by a write first), by one member, sometimes duplicated, sometimes durable,
    /// sometimes malformed (misaligned, lying length, a capacity too small or near 2^64); logs
    /// may straddle pages and run past their region, and their tails come round every lane.
    Append,
    /// Pointer chase (`proto::offload::chase`) over a list the process just wrote: a key
    /// that matches some node or none, hop bounds, cycles, values that run past a node (and a
    /// page), next pointers into another RAS, nowhere, or unaligned; malformed requests (bad
    /// layouts and lengths, a payload, start 0, near 2^48 or 2^64).
    Chase,
    /// Clio-KV (`proto::kv`) by one member: get, put (values of 1 B .. `MAX_VALUE`), delete
    /// and staged put (the value written into the caller's region first; now and then with a
    /// check that does not match) over a small key space shared by the stream's processes
    /// (each owner sees only its own keys), so hits, misses, updates and a full store all
    /// occur; puts and deletes sometimes duplicated (answered from the idempotence ring) and
    /// acknowledged; malformed requests now and then (empty or 65-byte keys, lying lengths,
    /// a value on a get, operand fields set, two packets).
    Kv,
    /// Access to another process's address or an unallocated one.
    Foreign,
    /// A corrupted packet.
    Corrupt,
    /// Fence.
    Fence,
    /// Alloc or free.
    AllocFree,
    /// A request with a valid CRC whose key does not open its pid: a wrong key, no key,
    /// another RAS's pid with this RAS's key, a pid beyond the key table, or the key of a RAS
    /// that was torn down. Must be denied with nothing executed. Or the right key with an
    /// epoch older than its RAS's (`proto::epoch`): STALE with nothing executed.
    Forged,
    /// A request whose answer can exceed twice its size (a Read of 65 B .. 4 KiB, a KvGet)
    /// with a wrong route cookie, none, or this host's cookie from another source address
    /// (an attacker aiming the answer at a victim); and a 64-byte Read from another address
    /// without a cookie (no larger than twice the request: answered). The first are
    /// ROUTE_UNVERIFIED with nothing executed.
    Spoofed,
    /// Another member joins the RAS (up to three members), or a member heartbeats, or raises
    /// the RAS's epoch (SetEpoch; now and then to an older epoch than the RAS's, refused).
    Join,
    /// A member leaves (its ring slots are released), or the RAS is torn down (its regions
    /// freed, its key removed: its later requests are denied) and a new process registers
    /// in its place.
    Unregister,
}

struct Proc {
    pid: u16,
    key: u64,
    /// Members' client ids; the first registered the RAS.
    clients: Vec<u16>,
    regions: Vec<(u64, u64, u8)>,
    /// The last ring-recorded request: (member index, req id), for colliding ids.
    last_atomic: Option<(usize, u32)>,
    /// Logs appended to: (va, capacity).
    logs: Vec<(u64, u64)>,
    /// The RAS's epoch (`proto::epoch`), which its requests carry.
    epoch: u16,
}

/// A stream generator bound to a reference node.
pub struct Stream {
    rng: StdRng,
    procs: Vec<Proc>,
    /// RASes torn down: (pid, key), for forged requests with a key that no longer opens.
    gone: Vec<(u16, u64)>,
    next_id: u32,
    next_nonce: u64,
    page: u64,
    /// The route cookie of the stream's source address (every route has the same IPv4
    /// address), from the answers to Register and Join.
    cookie: u32,
    ack_probability: f64,
    durable_probability: f64,
    /// Every packet sent, in order, with its route.
    pub sent: Vec<(Route, Vec<u8>)>,
}

/// The node configuration of the conformance runs (RTL against model): 64 KiB pages, a fixed
/// key seed (both nodes hand out the same RAS keys, and the stream carries the keys the model
/// handed out), and leases that outlast the run (the RTL replay takes minutes of wall time; a
/// lease ending in one node and not the other would tear a RAS down in one of them only), and
/// a Clio-KV store of 22 records, so that the streams fill it (a RAS may hold 11, half), 8 PIDs
/// (`Limits::pids`), so that a torn-down RAS's pid comes back to a new owner within a stream
/// (at most four RASes live at once: three processes and Clio-KV's store), 16 client ids
/// (`Limits::clients`; at most 13 members live: three per process and the store's), so that
/// a departed member's row comes back to another member within a stream, and a share of 4
/// unacknowledged results per member (`Limits::ring_share`), below the row's 16, so that the
/// share refuses what the row alone would not.
pub fn conformance_config(dram_bytes: u64) -> crate::BoardConfig {
    crate::BoardConfig {
        dram_bytes,
        page_shift: 16,
        key_seed: Some(0xC110_5EED),
        lease: std::time::Duration::from_secs(24 * 3600),
        kv_store_bytes: CONFORMANCE_KV_STORE_BYTES,
        limits: crate::Limits {
            pids: CONFORMANCE_PIDS,
            clients: CONFORMANCE_CLIENTS,
            ring_share: CONFORMANCE_RING_SHARE,
            // A torn-down RAS's Clio-KV records are freed within the request that tore it
            // down, in both nodes alike (a pass deferred by time would fall elsewhere in the
            // stream in the slower RTL replay).
            kv_purge_interval: std::time::Duration::ZERO,
            ..crate::Limits::default()
        },
        ..crate::BoardConfig::default()
    }
}

/// Clio-KV store of [`conformance_config`]: superblock and count table, then 24 KiB: 22
/// records in 32 buckets.
pub const CONFORMANCE_KV_STORE_BYTES: u64 = clio_proto::kv::HEADS_OFFSET + (24 << 10);

/// PIDs of [`conformance_config`].
pub const CONFORMANCE_PIDS: u16 = 8;
/// Client ids of [`conformance_config`].
pub const CONFORMANCE_CLIENTS: u16 = 16;
/// Unacknowledged results a member may hold in [`conformance_config`].
pub const CONFORMANCE_RING_SHARE: u8 = 4;

fn route(pid_slot: usize, member: usize) -> Route {
    Route {
        peer_port: 40000 + pid_slot as u16 + 1000 * member as u16,
        local_port: clio_proto::consts::DEFAULT_UDP_PORT,
        ..Route::default()
    }
}

impl Stream {
    /// A stream with `seed` against a node of page size `page`. The node must draw RAS keys
    /// deterministically (`BoardConfig::key_seed`) and so must every node it is replayed into,
    /// with the same seed: the packets carry the keys the reference node handed out.
    pub fn new(seed: u64, page: u64) -> Stream {
        Stream {
            rng: StdRng::seed_from_u64(seed),
            procs: Vec::new(),
            gone: Vec::new(),
            next_id: 1,
            next_nonce: 1000,
            page,
            cookie: 0,
            ack_probability: 0.9,
            durable_probability: 0.2,
            sent: Vec::new(),
        }
    }

    /// How often a ring-recorded result is acknowledged (CN ack; default 0.9). Lower values
    /// leave more unacknowledged slots, so the ring's skip policy runs more often.
    pub fn with_ack_probability(mut self, p: f64) -> Stream {
        self.ack_probability = p;
        self
    }

    /// How often a write is durable (`FLAG_DURABLE`; default 0.2).
    pub fn with_durable_probability(mut self, p: f64) -> Stream {
        self.durable_probability = p;
        self
    }

    fn send_as(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        member: usize,
        bytes: Vec<u8>,
        out: &mut Vec<Outgoing>,
    ) -> Vec<Header> {
        self.send_from(node, route(slot, member), bytes, out)
    }

    /// Send `bytes` along `r` (a member's route, or another source address); the answers'
    /// headers.
    fn send_from(
        &mut self,
        node: &mut dyn MemoryNode,
        r: Route,
        bytes: Vec<u8>,
        out: &mut Vec<Outgoing>,
    ) -> Vec<Header> {
        let start = out.len();
        node.handle(&r, &bytes, out);
        node.service(out);
        self.sent.push((r, bytes));
        out[start..]
            .iter()
            .filter_map(|(_, b)| parse_verified(b).ok().map(|(h, _)| h))
            .collect()
    }

    fn send(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        bytes: Vec<u8>,
        out: &mut Vec<Outgoing>,
    ) -> Vec<Header> {
        self.send_as(node, slot, 0, bytes, out)
    }

    fn id(&mut self) -> u32 {
        self.next_id += 1;
        self.next_id
    }

    fn nonce(&mut self) -> u64 {
        self.next_nonce += 1;
        self.next_nonce
    }

    /// A request of process `slot`'s member `member` with its credentials.
    fn req(&self, slot: usize, member: usize, op: Opcode, id: u32, va: u64) -> Header {
        let p = &self.procs[slot];
        Header::request(op, p.pid, id, va)
            .with_credentials(p.key, p.clients[member])
            .with_cookie(self.cookie)
            .with_epoch(p.epoch)
    }

    /// Give `h` (built by a request codec, such as `proto::kv`'s) what `c`, a request of
    /// [`Stream::req`], presents: pid, key, client, cookie and epoch.
    fn present_as(h: &mut Header, c: &Header) {
        (h.pid, h.key, h.client, h.cookie, h.epoch) = (c.pid, c.key, c.client, c.cookie, c.epoch);
    }

    /// Register a process (a new RAS) and give it a few regions (one read-only); it takes
    /// `slot` (a new one when `slot == procs.len()`).
    fn register(&mut self, node: &mut dyn MemoryNode, slot: usize, out: &mut Vec<Outgoing>) {
        let id = self.id();
        let h = Header {
            arg0: self.nonce(),
            ..Header::request(Opcode::Register, 0, id, 0)
        };
        let r = self.send(node, slot, h.to_packet(&[]), out);
        let (pid, key, client) = r
            .first()
            .filter(|r| r.status == Status::Ok)
            .map(|r| (r.pid, r.arg0, r.arg1 as u16))
            .unwrap_or((0, 0, 0));
        if let Some(r) = r.first().filter(|r| r.status == Status::Ok) {
            self.cookie = cookie_of_answer(r.arg1);
        }
        let p = Proc {
            pid,
            key,
            clients: vec![client],
            regions: Vec::new(),
            last_atomic: None,
            logs: Vec::new(),
            epoch: clio_proto::epoch::UNFENCED,
        };
        if slot == self.procs.len() {
            self.procs.push(p);
        } else {
            self.procs[slot] = p;
        }
        for (pages, perms) in [
            (4u64, PERM_READ | PERM_WRITE),
            (2, PERM_READ | PERM_WRITE),
            (1, PERM_READ),
        ] {
            self.alloc(node, slot, pages, perms, out);
        }
    }

    /// Register `n` processes and give each a few regions (one read-only).
    pub fn setup(&mut self, node: &mut dyn MemoryNode, n: usize, out: &mut Vec<Outgoing>) {
        for _ in 0..n {
            let slot = self.procs.len();
            self.register(node, slot, out);
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
        let h = Header {
            arg0: pages * self.page,
            arg1: perms as u64,
            ..self.req(slot, 0, Opcode::Alloc, id, 0)
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

    /// CLib acknowledges every ring-recorded result (CN ack of request `id`); now and then it
    /// does not (a lost ack, a dead client), so a member's busy entries and its share are
    /// exercised too.
    fn maybe_ack(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        member: usize,
        id: u32,
        resp: &[Header],
        out: &mut Vec<Outgoing>,
    ) {
        // Any answer, as CLib acknowledges (an error a write ended with is recorded too); an
        // ack left out stands for one lost for good.
        if !resp.is_empty() && self.rng.gen_bool(self.ack_probability) {
            self.ack(node, slot, member, id, out);
        }
    }

    /// CN ack of request `id` by process `slot`'s member `member`.
    fn ack(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        member: usize,
        id: u32,
        out: &mut Vec<Outgoing>,
    ) {
        let ack_id = self.id();
        let a = Header {
            arg0: id as u64,
            ..self.req(slot, member, Opcode::CnAck, ack_id, 0)
        };
        self.send_as(node, slot, member, a.to_packet(&[]), out);
    }

    /// A one-packet write of `bytes` at `va` by process `slot`'s member `member`.
    fn write_small(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        member: usize,
        va: u64,
        bytes: &[u8],
        out: &mut Vec<Outgoing>,
    ) {
        let wid = self.id();
        let w = Header {
            pkt_index: 0,
            pkt_count: 1,
            total_len: bytes.len() as u32,
            ..self.req(slot, member, Opcode::Write, wid, va)
        };
        self.send_as(node, slot, member, w.to_packet(bytes), out);
    }

    /// Generate and send one request of a random class.
    pub fn step(&mut self, node: &mut dyn MemoryNode, out: &mut Vec<Outgoing>) -> Class {
        let slot = self.rng.gen_range(0..self.procs.len());
        let class = match self.rng.gen_range(0..100) {
            0..=25 => Class::Write,
            26..=31 => Class::Kv,
            32..=54 => Class::Read,
            55..=58 => Class::Chase,
            59..=68 => Class::Atomic,
            69..=73 => Class::Append,
            74..=78 => Class::Foreign,
            79..=82 => Class::Corrupt,
            83..=84 => Class::Fence,
            85..=89 => Class::AllocFree,
            90..=92 => Class::Forged,
            93..=94 => Class::Spoofed,
            95..=98 => Class::Join,
            _ => Class::Unregister,
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
                let mut base = self.req(slot, 0, Opcode::Write, id, va);
                base.durable = self.rng.gen_bool(self.durable_probability);
                let mut pkts: Vec<Vec<u8>> = (0..n)
                    .map(|i| {
                        let (o, l) = segment(len as u32, i).unwrap_or((0, 0));
                        Header {
                            pkt_index: i,
                            pkt_count: n,
                            total_len: len as u32,
                            ..base
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
                let len = [1u64, 16, 100, 1024, 1025, 4096, 20_000, self.page + 3000]
                    [self.rng.gen_range(0..8)];
                let Some((mut va, _)) = self.pick(slot, len) else {
                    return class;
                };
                let len = if self.rng.gen_bool(0.15) {
                    // Run off the end of the region: into the next one or an unmapped page.
                    let (start, size, _) = *self.procs[slot]
                        .regions
                        .iter()
                        .find(|r| r.0 <= va && va < r.0 + r.1)
                        .unwrap_or(&(va, len, 0));
                    va = start + size - self.rng.gen_range(1..=size.min(3000));
                    len.max(2048)
                } else {
                    len
                };
                let h = Header {
                    total_len: len as u32,
                    ..self.req(slot, 0, Opcode::Read, id, va)
                };
                self.send(node, slot, h.to_packet(&[]), out);
            }
            Class::Atomic => {
                let Some((va, _)) = self.pick(slot, 8) else {
                    return class;
                };
                let va = va & !7;
                let members = self.procs[slot].clients.len();
                let member = self.rng.gen_range(0..members);
                // Another member's last request id now and then: not a replay of its entry.
                let id = match self.procs[slot].last_atomic {
                    Some((m, other)) if m != member && self.rng.gen_bool(0.4) => other,
                    _ => id,
                };
                self.procs[slot].last_atomic = Some((member, id));
                let op = [
                    Opcode::FetchAdd,
                    Opcode::CompareAndSwap,
                    Opcode::TestAndSet,
                    Opcode::Unlock,
                ][self.rng.gen_range(0..4)];
                let h = Header {
                    arg0: self.rng.gen_range(0..4),
                    arg1: self.rng.gen(),
                    ..self.req(slot, member, op, id, va)
                };
                let p = h.to_packet(&[]);
                let resp = self.send_as(node, slot, member, p.clone(), out);
                if self.rng.gen_bool(0.3) {
                    // a duplicate: must replay, not re-execute
                    self.send_as(node, slot, member, p, out);
                }
                let epoch = self.procs[slot].epoch;
                if epoch != clio_proto::epoch::UNFENCED && self.rng.gen_bool(0.2) {
                    // The same request again with an older epoch (a retry that went out before
                    // its sender learnt the view): answered from the ring if it executed,
                    // STALE otherwise; never executed.
                    let stale = Header {
                        epoch: epoch.wrapping_sub(self.rng.gen_range(1..=2)),
                        ..h
                    };
                    self.send_as(node, slot, member, stale.to_packet(&[]), out);
                }
                if op.needs_cn_ack() {
                    self.maybe_ack(node, slot, member, id, &resp, out);
                }
            }
            Class::Append => {
                let known = self.procs[slot].logs.len();
                let (va, cap) = if known > 0 && self.rng.gen_bool(0.85) {
                    self.procs[slot].logs[self.rng.gen_range(0..known)]
                } else {
                    let cap = [256u64, 1100, 3000, 9000][self.rng.gen_range(0..4)];
                    let Some((va, _)) = self.pick(slot, cap) else {
                        return class;
                    };
                    let va = va & !7;
                    self.write_small(node, slot, 0, va, &[0u8; 8], out);
                    self.procs[slot].logs.push((va, cap));
                    (va, cap)
                };
                let members = self.procs[slot].clients.len();
                let member = self.rng.gen_range(0..members);
                self.procs[slot].last_atomic = Some((member, id));
                let len = [1u32, 5, 8, 13, 56, 100, 511, 1000, 1024][self.rng.gen_range(0..9)];
                let payload: Vec<u8> = (0..len).map(|_| self.rng.gen()).collect();
                let mut h = Header {
                    pkt_index: 0,
                    pkt_count: 1,
                    total_len: len,
                    arg0: cap,
                    ..self.req(slot, member, Opcode::Append, id, va)
                };
                h.durable = self.rng.gen_bool(self.durable_probability);
                match self.rng.gen_range(0..24) {
                    0 => h.va |= 4,
                    1 => h.total_len = len + 1,
                    2 => h.arg0 = u64::MAX - self.rng.gen_range(0..64),
                    3 => h.arg0 = self.rng.gen_range(0..200),
                    4 => h.pkt_count = 2,
                    _ => {}
                }
                let p = h.to_packet(&payload);
                let resp = self.send_as(node, slot, member, p.clone(), out);
                if self.rng.gen_bool(0.3) {
                    // a duplicate: answered from the ring, appends nothing
                    self.send_as(node, slot, member, p, out);
                }
                self.maybe_ack(node, slot, member, id, &resp, out);
            }
            Class::Chase => self.chase(node, slot, id, out),
            Class::Kv => self.kv(node, slot, id, out),
            Class::Foreign => {
                let other = (slot + 1) % self.procs.len();
                let target = self
                    .pick(other, 16)
                    .map(|(va, _)| va)
                    .unwrap_or(self.page * 1000);
                let h = if self.rng.gen_bool(0.5) {
                    Header {
                        total_len: 16,
                        ..self.req(slot, 0, Opcode::Read, id, target)
                    }
                    .to_packet(&[])
                } else {
                    Header {
                        total_len: 3,
                        ..self.req(slot, 0, Opcode::Write, id, target)
                    }
                    .to_packet(b"bad")
                };
                self.send(node, slot, h, out);
            }
            Class::Fence => {
                let h = self.req(slot, 0, Opcode::Fence, id, 0);
                self.send(node, slot, h.to_packet(&[]), out);
            }
            Class::AllocFree => {
                if self.procs[slot].regions.len() > 4 && self.rng.gen_bool(0.5) {
                    let i = self.rng.gen_range(3..self.procs[slot].regions.len());
                    let (va, _, _) = self.procs[slot].regions.remove(i);
                    let h = Header {
                        va,
                        ..self.req(slot, 0, Opcode::Free, id, 0)
                    };
                    self.send(node, slot, h.to_packet(&[]), out);
                } else {
                    let pages = self.rng.gen_range(1..4);
                    self.alloc(node, slot, pages, PERM_READ | PERM_WRITE, out);
                }
            }
            Class::Forged => {
                // A real request of this process (so it would execute with the right key)...
                let va = self.pick(slot, 16).map(|(va, _)| va & !7).unwrap_or(0);
                let op = [
                    Opcode::Read,
                    Opcode::Write,
                    Opcode::FetchAdd,
                    Opcode::Alloc,
                    Opcode::CnAck,
                    Opcode::Fence,
                ][self.rng.gen_range(0..6)];
                let mut h = Header {
                    total_len: 16,
                    arg0: if op == Opcode::Alloc { self.page } else { 1 },
                    arg1: (PERM_READ | PERM_WRITE) as u64,
                    ..self.req(slot, 0, op, id, va)
                };
                // ...with credentials that do not open its pid.
                let (pid, key) = (h.pid, h.key);
                let other = &self.procs[(slot + 1) % self.procs.len()];
                let (other_pid, other_key) = (other.pid, other.key);
                let epoch = self.procs[slot].epoch;
                (h.pid, h.key) = match self.rng.gen_range(0..7) {
                    // The right credentials with an older epoch (a view out of date).
                    6 if epoch != clio_proto::epoch::UNFENCED => {
                        h.epoch = epoch.wrapping_sub(self.rng.gen_range(1..=3));
                        (pid, key)
                    }
                    0 => (pid, key ^ 1 << self.rng.gen_range(0..64)),
                    1 => (pid, 0),
                    // Another RAS's pid with this RAS's key (the CRC is valid: the client
                    // computed it), or this pid with the other RAS's key.
                    2 if other_pid != pid => (other_pid, key),
                    3 if other_pid != pid => (pid, other_key),
                    4 => (pid | 1 << clio_proto::consts::KEY_TABLE_BITS, key),
                    _ => match self.gone.last() {
                        Some(&g) => g,
                        None => (0, key),
                    },
                };
                let payload: &[u8] = if op == Opcode::Write {
                    &[0xEE; 16]
                } else {
                    &[]
                };
                self.send(node, slot, h.to_packet(payload), out);
            }
            Class::Spoofed => self.spoofed(node, slot, id, out),
            Class::Join => {
                if self.procs[slot].clients.len() < 3 {
                    let nonce = self.nonce();
                    let h = Header {
                        arg0: nonce,
                        ..self.req(slot, 0, Opcode::Join, id, 0)
                    };
                    let member = self.procs[slot].clients.len();
                    // The new member sends it with no client id yet.
                    let h = Header { client: 0, ..h };
                    let r = self.send_as(node, slot, member, h.to_packet(&[]), out);
                    if let Some(r) = r.first().filter(|r| r.status == Status::Ok) {
                        self.procs[slot].clients.push(r.arg1 as u16);
                    }
                } else if self.rng.gen_bool(0.5) {
                    let member = self.rng.gen_range(0..3);
                    let h = self.req(slot, member, Opcode::Heartbeat, id, 0);
                    self.send_as(node, slot, member, h.to_packet(&[]), out);
                } else {
                    // Raise the epoch (the same one again now and then), or ask for an older
                    // one (refused, nothing changes); a new epoch is carried from then on.
                    let member = self.rng.gen_range(0..3);
                    let now = self.procs[slot].epoch;
                    let want = match self.rng.gen_range(0..4) {
                        0 if now > 1 => now - 1,
                        1 => now,
                        _ => now.wrapping_add(self.rng.gen_range(1..=2)).max(1),
                    };
                    let h = Header {
                        arg0: want as u64,
                        epoch: want.max(now),
                        ..self.req(slot, member, Opcode::SetEpoch, id, 0)
                    };
                    let r = self.send_as(node, slot, member, h.to_packet(&[]), out);
                    if let Some(r) = r.first().filter(|r| r.status == Status::Ok) {
                        self.procs[slot].epoch = r.arg0 as u16;
                    }
                }
            }
            Class::Unregister => {
                let members = self.procs[slot].clients.len();
                if members > 1 && self.rng.gen_bool(0.7) {
                    // The last member to join leaves; its ring slots are released.
                    let h = Header {
                        arg0: 0,
                        ..self.req(slot, members - 1, Opcode::Unregister, id, 0)
                    };
                    self.send_as(node, slot, members - 1, h.to_packet(&[]), out);
                    self.procs[slot].clients.pop();
                    self.procs[slot].last_atomic = None;
                } else {
                    // Tear the RAS down; a new process takes its place.
                    self.tear_down(node, slot, id, out);
                    let p = &self.procs[slot];
                    // Its old credentials open nothing any more.
                    let mut r = Header {
                        total_len: 16,
                        ..self.req(slot, 0, Opcode::Read, self.next_id + 1, 0)
                    };
                    r.va = p.regions.first().map_or(0, |g| g.0);
                    self.id();
                    self.send(node, slot, r.to_packet(&[]), out);
                    self.register(node, slot, out);
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
