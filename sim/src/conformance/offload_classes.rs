//! The request generators of the offload classes (`Class::Chase`, `Class::Kv`) and of
//! `Class::Spoofed`, beside the stream's other classes in `conformance.rs`.

use super::*;

impl Stream {
    /// A list of 1..=6 nodes (key at 0, next at 8, value at 16) written into the process's
    /// regions, then a chase over it (see [`Class::Chase`]).
    pub(super) fn chase(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        id: u32,
        out: &mut Vec<Outgoing>,
    ) {
        use clio_proto::offload::{chase, ChaseLayout};
        let vlen = [8u64, 24, 100, 1000][self.rng.gen_range(0..4)];
        let n = self.rng.gen_range(1..=6);
        let mut nodes = Vec::new();
        for _ in 0..n {
            let Some((va, _)) = self.pick(slot, 16 + vlen + 8) else {
                return;
            };
            nodes.push((va & !7, self.rng.gen::<u64>()));
        }
        let other = (slot + 1) % self.procs.len();
        for i in 0..n {
            let next = match (i + 1 == n, self.rng.gen_range(0..10)) {
                (false, _) => nodes[i + 1].0,
                (true, 0) => nodes[0].0, // a cycle
                (true, 1) => self.pick(other, 8).map_or(8, |(va, _)| va & !7),
                (true, 2) => self.rng.gen_range(1..1 << 40) & !7,
                (true, 3) => nodes[0].0 | 4, // unaligned
                (true, _) => 0,
            };
            let mut bytes = nodes[i].1.to_le_bytes().to_vec();
            bytes.extend_from_slice(&next.to_le_bytes());
            bytes.extend((0..vlen).map(|_| self.rng.gen::<u8>()));
            self.write_small(node, slot, 0, nodes[i].0, &bytes, out);
        }
        let mut layout = ChaseLayout {
            key_offset: 0,
            next_offset: 8,
            value_offset: 16,
            max_hops: [1u16, 3, 8, chase::MAX_HOPS][self.rng.gen_range(0..4)],
        };
        let key = if self.rng.gen_bool(0.7) {
            nodes[self.rng.gen_range(0..n)].1
        } else {
            self.rng.gen()
        };
        let mut h = Header {
            arg0: key,
            total_len: if self.rng.gen_bool(0.8) {
                vlen as u32
            } else {
                self.rng.gen_range(1..=chase::MAX_VALUE)
            },
            ..self.req(slot, 0, Opcode::PointerChase, id, nodes[0].0)
        };
        let mut payload = Vec::new();
        match self.rng.gen_range(0..30) {
            0 => layout.key_offset = 4,
            1 => layout.next_offset = chase::MAX_OFFSET + 8,
            2 => layout.value_offset = chase::MAX_OFFSET + self.rng.gen_range(0..8),
            3 => layout.max_hops = 0,
            4 => h.total_len = 0,
            5 => h.total_len = chase::MAX_VALUE + 1,
            6 => payload = vec![7u8; 8],
            7 => h.va = 0,
            8 => h.va = (1 << 48) - 8,
            9 => h.va = u64::MAX - 7,
            10 => layout.value_offset = chase::MAX_OFFSET, // runs past the node
            11 => layout.key_offset = 16,                  // compares a value word
            _ => {}
        }
        h.arg1 = layout.pack();
        self.send(node, slot, h.to_packet(&payload), out);
    }

    /// A request aimed at another address, or without its address's route cookie (see
    /// [`Class::Spoofed`]).
    pub(super) fn spoofed(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        id: u32,
        out: &mut Vec<Outgoing>,
    ) {
        let len = [64u64, 65, 1024, 4096][self.rng.gen_range(0..4)];
        let va = self.pick(slot, len).map_or(0, |(va, _)| va);
        let mut h = if self.rng.gen_bool(0.2) {
            let Ok(r) = clio_proto::kv::KvRequest::new(Opcode::KvGet, b"k", b"") else {
                return;
            };
            let c = self.req(slot, 0, Opcode::KvGet, id, 0);
            let mut h = r.header(Opcode::KvGet, c.pid, id);
            Self::present_as(&mut h, &c);
            (h, r.encode())
        } else {
            let h = Header {
                total_len: len as u32,
                ..self.req(slot, 0, Opcode::Read, id, va)
            };
            (h, Vec::new())
        };
        let mut route = route(slot, 0);
        match self.rng.gen_range(0..4) {
            0 => h.0.cookie ^= 1 << self.rng.gen_range(0..32),
            1 => h.0.cookie = 0,
            // The victim's address: this host's cookie does not prove it.
            _ => route.peer_ip = core::net::Ipv4Addr::new(10, 66, 0, self.rng.gen()),
        }
        self.send_from(node, route, h.0.to_packet(&h.1), out);
    }

    /// One Clio-KV request (see [`Class::Kv`]).
    pub(super) fn kv(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        id: u32,
        out: &mut Vec<Outgoing>,
    ) {
        use clio_proto::kv::{KvRequest, KvStagedPut, MAX_KEY, MAX_VALUE};
        let n = self.rng.gen_range(0..12u8);
        let key_len = [1usize, 8, 16, MAX_KEY][n as usize % 4];
        let key: Vec<u8> = (0..key_len)
            .map(|i| n.wrapping_mul(37).wrapping_add(i as u8))
            .collect();
        let vlen = [1usize, 8, 60, 200, MAX_VALUE][self.rng.gen_range(0..5)];
        let value: Vec<u8> = (0..vlen).map(|_| self.rng.gen()).collect();
        let member = self.rng.gen_range(0..self.procs[slot].clients.len());
        let op = match self.rng.gen_range(0..20) {
            0..=7 => Opcode::KvGet,
            8..=14 => Opcode::KvPut,
            15..=17 => Opcode::KvDelete,
            _ => Opcode::KvPutStaged,
        };
        let (mut h, mut payload) = if op == Opcode::KvPutStaged {
            // Stage the value in the caller's region (a write), then name it.
            let Some((va, _)) = self.pick(slot, vlen as u64) else {
                return;
            };
            self.write_small(node, slot, member, va, &value, out);
            let Ok(p) = KvStagedPut::new(&key, va, &value) else {
                return;
            };
            let mut h = p.header(0, id);
            if self.rng.gen_bool(0.2) {
                h.arg1 ^= 1 << self.rng.gen_range(0..64); // the value "has not landed"
            }
            (h, p.encode())
        } else {
            let v: &[u8] = if op == Opcode::KvPut { &value } else { &[] };
            let Ok(r) = KvRequest::new(op, &key, v) else {
                return;
            };
            (r.header(op, 0, id), r.encode())
        };
        let c = self.req(slot, member, op, id, h.va);
        Self::present_as(&mut h, &c);
        let mut total_lies = false;
        match self.rng.gen_range(0..40) {
            0 => payload[0..2].copy_from_slice(&0u16.to_le_bytes()), // an empty key
            1 => {
                // A 65-byte key.
                let mut p = ((MAX_KEY + 1) as u16).to_le_bytes().to_vec();
                p.extend_from_slice(&payload[2..4]);
                p.extend((0..=MAX_KEY).map(|i| i as u8));
                payload = p;
            }
            2 => payload[2] ^= 1, // the value length lies
            3 => total_lies = true,
            4 if op == Opcode::KvGet => payload.extend_from_slice(&[1, 2, 3]), // a value
            5 => h.arg0 = 1, // an operand field set
            6 if op != Opcode::KvPutStaged => h.va = 64,
            7 => h.pkt_count = 2,
            8 => payload.truncate(3), // shorter than the prefix
            _ => {}
        }
        h.payload_len = payload.len() as u16;
        h.total_len = payload.len() as u32 + total_lies as u32;
        let p = h.to_packet(&payload);
        let resp = self.send_as(node, slot, member, p.clone(), out);
        if op.needs_cn_ack() {
            if self.rng.gen_bool(0.25) {
                // A retry (its answer was lost): answered from the ring, never run again.
                self.send_as(node, slot, member, p, out);
            }
            self.maybe_ack(node, slot, member, id, &resp, out);
        }
    }
}
