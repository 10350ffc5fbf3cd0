//! Directed corners of the conformance streams (issue 44): requests exactly at, one below and
//! one above the bounds that the random classes rarely or never land on, sent through the same
//! [`Stream`] so that they are replayed into the RTL like everything else.
//!
//! Each corner is named, and [`Stream::corners`] returns what the reference node answered it,
//! so a test asserts that every corner was reached with the answer the spec gives
//! (`every_corner_is_reached_with_the_answer_the_spec_gives` below).

use super::{route, Outgoing, Stream};
use clio_proto::consts::MAX_REQUEST_LEN;
use clio_proto::frame::Route;
use clio_proto::header::parse_verified;
use clio_proto::pte::PERM_WRITE;
use clio_proto::replog;
use clio_proto::{Header, Opcode, Status};

use crate::MemoryNode;

/// One corner and what the reference node answered: its status and, for reads, the data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Corner {
    /// What the corner is (`"read of 0 bytes"`).
    pub name: &'static str,
    /// The status of the corner's (first) answer, `None` when nothing answered.
    pub status: Option<Status>,
    /// The data of a read's answers, in order.
    pub data: Vec<u8>,
}

impl Stream {
    /// Send the directed corners for processes 0 and 1 (the stream needs at least two, set up
    /// by [`Stream::setup`]) into `node`; returns each corner with the node's answer.
    ///
    /// The corners: a read of 0 bytes, of `MAX_REQUEST_LEN` + 1 bytes, of 16 bytes ending
    /// exactly at a page end and of 17 bytes one past it; atomics at an address 4 and 1 byte
    /// off alignment; a FetchAdd whose carry crosses bit 32 and a CompareAndSwap whose
    /// expected value differs from the word only above bit 31 (each read back); a
    /// ring-recorded request of one RAS, the same request id under its client id from another
    /// RAS (DENIED: the row is not that RAS's) and from the other RAS's own member (executed,
    /// not answered with the first one's result); an Append to a log 4 bytes off alignment and one
    /// whose payload is not its total_len; a member's share of the idempotence ring
    /// (`ring_share_corners`); pointer
    /// chases whose key or next offset is 4 bytes off alignment, and one carrying a payload;
    /// reads at the amplification bound (`route_corners`); Clio-KV gets with keys of 0
    /// and `MAX_KEY` + 1 bytes, and puts until the store is full; writes and reads of the same
    /// bytes back to back (`order_corners`, last).
    pub fn corners(&mut self, node: &mut dyn MemoryNode, out: &mut Vec<Outgoing>) -> Vec<Corner> {
        assert!(self.procs.len() >= 2, "corners need two processes");
        let mut got = Vec::new();
        let (va, size, _) = *self.procs[0]
            .regions
            .iter()
            .find(|r| r.2 & PERM_WRITE != 0 && r.1 >= 2 * self.page)
            .expect("a writable region of two pages");
        // Reads at the length bounds and across a page end.
        for (name, at, len) in [
            ("read of 0 bytes", va, 0u64),
            (
                "read of MAX_REQUEST_LEN + 1 bytes",
                va,
                MAX_REQUEST_LEN as u64 + 1,
            ),
            (
                "read of exactly MAX_REQUEST_LEN bytes",
                va,
                MAX_REQUEST_LEN as u64,
            ),
            ("read ending at a page end", va + self.page - 16, 16),
            ("read one byte past a page end", va + self.page - 16, 17),
        ] {
            let id = self.id();
            let h = Header {
                total_len: len as u32,
                ..self.req(0, 0, Opcode::Read, id, at)
            };
            got.push(self.corner(node, 0, 0, name, h.to_packet(&[]), out));
        }
        // A page end at every byte offset of a beat: reads of 1..=64 bytes ending exactly at
        // it, and of 2..=65 bytes crossing it by one byte.
        for k in 1..=64u64 {
            for (name, len) in [
                ("read of 1..=64 bytes ending at a page end", k),
                (
                    "read of 2..=65 bytes crossing a page end by one byte",
                    k + 1,
                ),
            ] {
                let id = self.id();
                let h = Header {
                    total_len: len as u32,
                    ..self.req(0, 0, Opcode::Read, id, va + self.page - k)
                };
                got.push(self.corner(node, 0, 0, name, h.to_packet(&[]), out));
            }
        }
        // A word whose low half is all ones.
        let word = (va + size - 64) & !7;
        self.write_small(node, 0, 0, word, &0xFFFF_FFFFu64.to_le_bytes(), out);
        // FetchAdd 1 carries into bit 32; CompareAndSwap whose expected value differs only in
        // bit 40 swaps nothing (each read back); atomics off alignment.
        for (name, op, at, arg0, arg1, read_back) in [
            (
                "fetch-add carrying across bit 32",
                Opcode::FetchAdd,
                word,
                1,
                0,
                Some("word after the carrying fetch-add"),
            ),
            (
                "compare-and-swap differing only above bit 31",
                Opcode::CompareAndSwap,
                word,
                0x1_0000_0000 ^ 1 << 40,
                7,
                Some("word after the failed compare-and-swap"),
            ),
            (
                "atomic 4 bytes off alignment",
                Opcode::FetchAdd,
                word | 4,
                1,
                0,
                None,
            ),
            (
                "atomic 1 byte off alignment",
                Opcode::TestAndSet,
                word | 1,
                0,
                0,
                None,
            ),
        ] {
            got.push(self.atomic(node, name, op, at, arg0, arg1, out));
            if let Some(r) = read_back {
                got.push(self.read_back(node, word, r, out));
            }
        }
        // One request id, one RAS's client id: only that RAS's member is answered; another
        // RAS under that client id is denied, and executes its own under its own.
        let shared = self.id();
        let (va1, _, _) = *self.procs[1]
            .regions
            .iter()
            .find(|r| r.2 & PERM_WRITE != 0)
            .expect("a writable region");
        let client0 = self.procs[0].clients[0];
        for (slot, name, at, client) in [
            (0, "ring-recorded request of one RAS", word, None),
            (
                1,
                "same request id under that client id from another RAS",
                va1 & !7,
                Some(client0),
            ),
            (
                1,
                "same request id from another RAS's own member",
                va1 & !7,
                None,
            ),
        ] {
            let mut h = Header {
                arg0: 5,
                ..self.req(slot, 0, Opcode::FetchAdd, shared, at)
            };
            if let Some(c) = client {
                h.client = c;
            }
            got.push(self.corner(node, slot, 0, name, h.to_packet(&[]), out));
            if client.is_none() {
                self.ack(node, slot, 0, shared, out);
            }
        }
        // An append to a log 4 bytes off alignment (its tail word zeroed first), and one whose
        // total_len says 16 bytes and whose payload carries 8.
        let log = (va + self.page) & !7;
        self.write_small(node, 0, 0, log, &[0; 8], out);
        for (name, at, len) in [
            ("append to a log 4 bytes off alignment", log | 4, 8u32),
            ("append whose payload is not its total_len", log, 16),
        ] {
            let id = self.id();
            let h = Header {
                pkt_index: 0,
                pkt_count: 1,
                total_len: len,
                arg0: 1024,
                ..self.req(0, 0, Opcode::Append, id, at)
            };
            got.push(self.corner(node, 0, 0, name, h.to_packet(&[9; 8]), out));
            self.ack(node, 0, 0, id, out);
        }
        // A log's capacity: a log of exactly two records (13 and 16 bytes of payload, 24
        // bytes each in the log), the second filling it to its last byte, then one more.
        let log = log + 512;
        self.write_small(node, 0, 0, log, &[0; 8], out);
        let capacity = replog::LOG_HEAD + replog::footprint(13) + replog::footprint(16);
        for (name, len) in [
            ("append of the log's first record", 13u32),
            ("append filling the log to exactly its capacity", 16),
            ("append past the log's capacity", 1),
        ] {
            let id = self.id();
            let h = Header {
                pkt_index: 0,
                pkt_count: 1,
                total_len: len,
                arg0: capacity,
                ..self.req(0, 0, Opcode::Append, id, log)
            };
            let body = vec![len as u8; len as usize];
            got.push(self.corner(node, 0, 0, name, h.to_packet(&body), out));
            self.ack(node, 0, 0, id, out);
        }
        self.chase_layout_corners(node, va, &mut got, out);
        self.ring_share_corners(node, (shared, word), &mut got, out);
        self.route_corners(node, va, &mut got, out);
        self.kv_corners(node, &mut got, out);
        self.pid_reuse_corner(node, &mut got, out);
        self.order_corners(node, va, &mut got, out);
        got
    }

    /// A chase's layout at its alignment bound: one node (key at 0, no next, value at 16)
    /// chased for its own key with the key and next offsets aligned (found), then with the key
    /// offset 4 off alignment and with the next offset 4 off (each BAD_REQUEST before any
    /// read: a node that read the aligned word below an unaligned offset would find the key).
    fn chase_layout_corners(
        &mut self,
        node: &mut dyn MemoryNode,
        va: u64,
        got: &mut Vec<Corner>,
        out: &mut Vec<Outgoing>,
    ) {
        use clio_proto::offload::ChaseLayout;
        let at = (va + self.page + 1024) & !7;
        let key = 0x0C4A_5E00_0000_0001u64;
        let mut bytes = key.to_le_bytes().to_vec();
        bytes.extend_from_slice(&0u64.to_le_bytes());
        bytes.extend_from_slice(&[0x5A; 8]);
        self.write_small(node, 0, 0, at, &bytes, out);
        for (name, key_offset, next_offset) in [
            ("chase with an aligned layout", 0u16, 8u16),
            ("chase with its key offset 4 bytes off alignment", 4, 8),
            ("chase with its next offset 4 bytes off alignment", 0, 12),
        ] {
            let id = self.id();
            let layout = ChaseLayout {
                key_offset,
                next_offset,
                value_offset: 16,
                max_hops: 4,
            };
            let h = Header {
                arg0: key,
                arg1: layout.pack(),
                total_len: 8,
                ..self.req(0, 0, Opcode::PointerChase, id, at)
            };
            got.push(self.corner(node, 0, 0, name, h.to_packet(&[]), out));
        }
        // The aligned chase again, carrying a payload: BAD_REQUEST (a chase carries none).
        let id = self.id();
        let h = Header {
            arg0: key,
            arg1: ChaseLayout {
                key_offset: 0,
                next_offset: 8,
                value_offset: 16,
                max_hops: 4,
            }
            .pack(),
            total_len: 8,
            ..self.req(0, 0, Opcode::PointerChase, id, at)
        };
        let name = "chase carrying a payload";
        got.push(self.corner(node, 0, 0, name, h.to_packet(&[7; 8]), out));
    }

    /// The amplification bound at its edges (`clio_proto::route_cookie`): a read of 65
    /// bytes (one more than twice the request allows without a cookie) with no cookie; a read
    /// of 64 bytes from another address with none (answered: twice the request); a 1 KiB read
    /// carrying this host's cookie but coming from another address (the victim's); the same
    /// read from this host (answered).
    fn route_corners(
        &mut self,
        node: &mut dyn MemoryNode,
        va: u64,
        got: &mut Vec<Corner>,
        out: &mut Vec<Outgoing>,
    ) {
        let victim = Route {
            peer_ip: core::net::Ipv4Addr::new(10, 66, 6, 6),
            ..route(0, 0)
        };
        for (name, len, cookie, from) in [
            (
                "read of 65 bytes without a route cookie",
                65u32,
                false,
                None,
            ),
            (
                "read of 64 bytes from another address without a route cookie",
                64,
                false,
                Some(victim),
            ),
            (
                "read of 1 KiB with this host's route cookie from another address",
                1024,
                true,
                Some(victim),
            ),
            (
                "read of 1 KiB with this host's route cookie",
                1024,
                true,
                None,
            ),
        ] {
            let id = self.id();
            let mut h = Header {
                total_len: len,
                ..self.req(0, 0, Opcode::Read, id, va)
            };
            if !cookie {
                h.cookie = 0;
            }
            let pkt = h.to_packet(&[]);
            let r = from.unwrap_or_else(|| route(0, 0));
            got.push(self.corner_from(node, r, name, pkt, out));
        }
    }

    /// A member's row of the idempotence table (`Quota::RingShare`, the conformance node's
    /// share, `CONFORMANCE_RING_SHARE`, below the row's 16): process 1's first member sends
    /// a FetchAdd, leaves it unacknowledged and sends a later request id of the same entry
    /// (QUOTA_EXCEEDED, as at the share); then records its whole share of FetchAdds (each
    /// in an entry of its own) and acknowledges none, so its next one is refused QUOTA_EXCEEDED;
    /// with its oldest result acknowledged the next executes over that result (the same
    /// entry). With all acknowledged it records a share more, over its own results in turn;
    /// then process 0's FetchAdd recorded at the start of the corners (`shared`) comes again
    /// and must still be answered from its own row. Every result is acknowledged after, so the
    /// stream's random steps find the rows as before.
    fn ring_share_corners(
        &mut self,
        node: &mut dyn MemoryNode,
        shared: (u32, u64),
        got: &mut Vec<Corner>,
        out: &mut Vec<Outgoing>,
    ) {
        let share = usize::from(super::CONFORMANCE_RING_SHARE);
        let (va, _, _) = *self.procs[1]
            .regions
            .iter()
            .find(|r| r.2 & PERM_WRITE != 0)
            .expect("a writable region");
        let word = (va & !7) + 8;
        let faa = |s: &mut Stream, id: u32| {
            Header {
                arg0: 1,
                ..s.req(1, 0, Opcode::FetchAdd, id, word)
            }
            .to_packet(&[])
        };
        // An entry busy with the member's own unacknowledged result.
        let first = self.id();
        let pkt = faa(self, first);
        self.send(node, 1, pkt, out);
        let way = clio_proto::consts::ring_way;
        let later = (first + 1..)
            .find(|&i| way(i) == way(first))
            .expect("an id of the same entry");
        let pkt = faa(self, later);
        got.push(self.corner(
            node,
            1,
            0,
            "ring request whose entry holds its member's unacknowledged result",
            pkt,
            out,
        ));
        self.ack(node, 1, 0, first, out);
        // The share's ids after `later`, each of its own entry, so they fill the row.
        self.next_id = self.next_id.max(later);
        let mut ids: Vec<u32> = Vec::new();
        while ids.len() < share {
            let id = self.id();
            if ids.iter().all(|&i| way(i) != way(id)) {
                ids.push(id);
            }
        }
        for &id in &ids {
            let pkt = faa(self, id);
            self.corner_taken(node, 1, "", pkt, out);
        }
        // The next id of the oldest result's entry.
        let id = loop {
            let id = self.id();
            if way(id) == way(ids[0]) {
                break id;
            }
        };
        let pkt = faa(self, id);
        got.push(self.corner(
            node,
            1,
            0,
            "ring request of a member holding its share, none acknowledged",
            pkt.clone(),
            out,
        ));
        self.ack(node, 1, 0, ids[0], out);
        got.push(self.corner(
            node,
            1,
            0,
            "ring request of a member at its share, over its own oldest result",
            pkt,
            out,
        ));
        ids.push(id);
        for &i in &ids {
            self.ack(node, 1, 0, i, out);
        }
        for _ in 0..share {
            let id = self.id();
            let pkt = faa(self, id);
            self.send(node, 1, pkt, out);
            self.ack(node, 1, 0, id, out);
        }
        let (id, at) = shared;
        let h = Header {
            arg0: 5,
            ..self.req(0, 0, Opcode::FetchAdd, id, at)
        };
        got.push(self.corner(
            node,
            0,
            0,
            "ring request again after a member at its share recorded past its result",
            h.to_packet(&[]),
            out,
        ));
        got.push(self.read_back(node, at, "word after the replayed ring request", out));
    }

    /// A pid's next owner: the last process's RAS leaves a ring-recorded FetchAdd
    /// unacknowledged and a word written, is torn down, and processes register (and leave
    /// again) in its place until one is handed its pid (pids come back first-in first-out, so
    /// within a stream only under a small pool: `CONFORMANCE_PIDS`; at most 16 tries). The
    /// new owner then sends a FetchAdd with the last owner's client and request id, which must
    /// execute on its own word (not be answered from the ring), and reads that word and where
    /// the last owner wrote, which must not show that data; and gets the Clio-KV key the last
    /// owner put, which must miss (the slow path freed the record before the pid came back).
    fn pid_reuse_corner(
        &mut self,
        node: &mut dyn MemoryNode,
        got: &mut Vec<Corner>,
        out: &mut Vec<Outgoing>,
    ) {
        let slot = self.procs.len() - 1;
        let writable = |s: &Stream| {
            s.procs[slot]
                .regions
                .iter()
                .find(|r| r.2 & PERM_WRITE != 0)
                .map(|r| r.0)
                .expect("a writable region")
        };
        let va = writable(self);
        let old_pid = self.procs[slot].pid;
        self.write_small(node, slot, 0, va + 64, &[0xA5; 16], out);
        // A Clio-KV record left behind (freed with its RAS before the pid comes back).
        let left_key = b"left behind";
        let name = "KV put by a pid's last owner";
        let value = b"the last owner's value";
        self.kv_key_op(node, slot, name, Opcode::KvPut, left_key, value, out);
        let left = self.id();
        let h = Header {
            arg0: 0x77,
            ..self.req(slot, 0, Opcode::FetchAdd, left, va)
        };
        self.send(node, slot, h.to_packet(&[]), out);
        for _ in 0..16 {
            let id = self.id();
            self.tear_down(node, slot, id, out);
            self.register(node, slot, out);
            if self.procs[slot].pid == old_pid {
                break;
            }
        }
        let reused = self.procs[slot].pid == old_pid;
        let va = writable(self);
        let h = Header {
            arg0: 3,
            ..self.req(slot, 0, Opcode::FetchAdd, left, va)
        };
        let name = "ring request of a pid's next owner with its last owner's request id";
        let mut c = self.corner(node, slot, 0, name, h.to_packet(&[]), out);
        self.ack(node, slot, 0, left, out);
        let name = "KV get by a pid's next owner of its last owner's key";
        let mut k = self
            .kv_key_op(node, slot, name, Opcode::KvGet, left_key, &[], out)
            .expect("a well-formed get");
        let id = self.id();
        let h = Header {
            total_len: 80,
            ..self.req(slot, 0, Opcode::Read, id, va)
        };
        let mut r = self.corner(
            node,
            slot,
            0,
            "read by a pid's next owner of its word and where its last owner wrote",
            h.to_packet(&[]),
            out,
        );
        if !reused {
            (c.status, k.status, r.status) = (None, None, None);
        }
        got.extend([c, k, r]);
    }

    /// Tear process `slot`'s RAS down (its regions freed, its key removed) with request `id`.
    pub(super) fn tear_down(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        id: u32,
        out: &mut Vec<Outgoing>,
    ) {
        let h = Header {
            arg0: 1,
            ..self.req(slot, 0, Opcode::Unregister, id, 0)
        };
        self.send(node, slot, h.to_packet(&[]), out);
        let p = &self.procs[slot];
        self.gone.push((p.pid, p.key));
    }

    /// Clio-KV's bounds: gets whose key is 0 and `MAX_KEY` + 1 bytes, each with a body that
    /// matches its lengths (so only the key bound can refuse it), and puts of new keys by each
    /// process until its RAS's record quota or the store refuses one (a store of N slots
    /// holds N - 1 keys), which are then deleted.
    fn kv_corners(
        &mut self,
        node: &mut dyn MemoryNode,
        got: &mut Vec<Corner>,
        out: &mut Vec<Outgoing>,
    ) {
        use clio_proto::kv::MAX_KEY;
        for (name, klen) in [
            ("KV get with an empty key", 0usize),
            ("KV get with a key of MAX_KEY + 1 bytes", MAX_KEY + 1),
        ] {
            let mut body = (klen as u16).to_le_bytes().to_vec();
            body.extend_from_slice(&0u16.to_le_bytes());
            body.extend((0..klen).map(|i| i as u8));
            let c = self.kv_request(node, 0, name, Opcode::KvGet, None, body, out);
            got.push(c);
        }
        // Each process in turn puts new keys until refused: the first at its RAS's record
        // quota (half the store), the next ones until the store is full.
        let mut stored = Vec::new();
        for slot in 0..self.procs.len() {
            for i in 0..256u32 {
                let key = format!("corner-{i}").into_bytes();
                let name = "KV put of new keys until the RAS's quota or the store refuses one";
                let v = [i as u8; 8];
                let put = self.kv_key_op(node, slot, name, Opcode::KvPut, &key, &v, out);
                let Some(c) = put else {
                    break;
                };
                if c.status != Some(Status::Ok) {
                    got.push(c);
                    break;
                }
                stored.push((slot, key));
            }
        }
        for (slot, key) in stored {
            self.kv_key_op(node, slot, "KV delete", Opcode::KvDelete, &key, &[], out);
        }
        self.kv_twin_corner(node, got, out);
    }

    /// Two tenants, one key, one bucket: a key whose hash under processes 0's and 1's pids
    /// picks the same bucket of the conformance store (`CONFORMANCE_KV_STORE_BYTES`), put by
    /// both with different values and read back by each (each must get its own: the records
    /// share a chain and the key bytes, only the owner tells them apart), then deleted.
    fn kv_twin_corner(
        &mut self,
        node: &mut dyn MemoryNode,
        got: &mut Vec<Corner>,
        out: &mut Vec<Outgoing>,
    ) {
        use clio_proto::kv::StoreLayout;
        let Some(l) = StoreLayout::fit(0, super::CONFORMANCE_KV_STORE_BYTES) else {
            return;
        };
        let (a, b) = (self.procs[0].pid, self.procs[1].pid);
        let Some(key) = (0..1024)
            .map(|i| format!("twin-{i}").into_bytes())
            .find(|k| l.bucket(a, k) == l.bucket(b, k))
        else {
            return;
        };
        for (slot, value) in [(0, b"first owner"), (1, b"other owner")] {
            let name = "KV put of one key by two tenants into one bucket";
            got.extend(self.kv_key_op(node, slot, name, Opcode::KvPut, &key, value, out));
        }
        for slot in [0, 1] {
            let name = "KV get of the twin key by each tenant";
            got.extend(self.kv_key_op(node, slot, name, Opcode::KvGet, &key, &[], out));
        }
        for slot in [0, 1] {
            self.kv_key_op(node, slot, "KV delete", Opcode::KvDelete, &key, &[], out);
        }
    }

    /// A well-formed KV request (`op` of `key` and `value`) of process `slot`'s first member;
    /// `None` when no such request can be encoded.
    #[allow(clippy::too_many_arguments)]
    fn kv_key_op(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        name: &'static str,
        op: Opcode,
        key: &[u8],
        value: &[u8],
        out: &mut Vec<Outgoing>,
    ) -> Option<Corner> {
        let r = clio_proto::kv::KvRequest::new(op, key, value).ok()?;
        Some(self.kv_request(node, slot, name, op, Some(&r), r.encode(), out))
    }

    /// A KV request of process `slot`'s first member with `body` (the header from `r` when
    /// there is one), acknowledged when the opcode is ring-recorded and it was answered.
    #[allow(clippy::too_many_arguments)]
    fn kv_request(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        name: &'static str,
        op: Opcode,
        r: Option<&clio_proto::kv::KvRequest>,
        body: Vec<u8>,
        out: &mut Vec<Outgoing>,
    ) -> Corner {
        let id = self.id();
        let c = self.req(slot, 0, op, id, 0);
        let mut h = match r {
            Some(r) => r.header(op, 0, id),
            None => c,
        };
        Self::present_as(&mut h, &c);
        h.payload_len = body.len() as u16;
        h.total_len = body.len() as u32;
        let corner = self.corner_taken(node, slot, name, h.to_packet(&body), out);
        // Acknowledged whatever the answer, as CLib does: an error a write ended with is
        // recorded too, and its entry is free again only once acknowledged.
        if op.needs_cn_ack() && corner.status.is_some() {
            self.ack(node, slot, 0, id, out);
        }
        corner
    }

    /// [`Stream::corner`] from process `slot`'s first member, sent again while its entry holds
    /// another of the member's unacknowledged results (RETRY_LATER), as CLib would: at most
    /// once per entry of the member's row.
    fn corner_taken(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        name: &'static str,
        pkt: Vec<u8>,
        out: &mut Vec<Outgoing>,
    ) -> Corner {
        let mut corner = self.corner(node, slot, 0, name, pkt.clone(), out);
        for _ in 0..clio_proto::consts::RING_WAYS {
            if corner.status != Some(Status::RetryLater) {
                break;
            }
            corner = self.corner(node, slot, 0, name, pkt.clone(), out);
        }
        corner
    }

    /// Send `pkt` as member `member` of process `slot`; the corner with the answers.
    pub(super) fn corner(
        &mut self,
        node: &mut dyn MemoryNode,
        slot: usize,
        member: usize,
        name: &'static str,
        pkt: Vec<u8>,
        out: &mut Vec<Outgoing>,
    ) -> Corner {
        self.corner_from(node, route(slot, member), name, pkt, out)
    }

    /// Send `pkt` along `r`; the corner with the answers.
    fn corner_from(
        &mut self,
        node: &mut dyn MemoryNode,
        r: Route,
        name: &'static str,
        pkt: Vec<u8>,
        out: &mut Vec<Outgoing>,
    ) -> Corner {
        let start = out.len();
        self.send_from(node, r, pkt, out);
        let answers: Vec<(Header, Vec<u8>)> = out[start..]
            .iter()
            .filter_map(|(_, b)| parse_verified(b).ok().map(|(h, p)| (h, p.to_vec())))
            .collect();
        Corner {
            name,
            status: answers.first().map(|a| a.0.status),
            data: answers.into_iter().flat_map(|a| a.1).collect(),
        }
    }

    /// Read the word at `va` of process 0 back.
    fn read_back(
        &mut self,
        node: &mut dyn MemoryNode,
        va: u64,
        name: &'static str,
        out: &mut Vec<Outgoing>,
    ) -> Corner {
        let id = self.id();
        let h = Header {
            total_len: 8,
            ..self.req(0, 0, Opcode::Read, id, va)
        };
        self.corner(node, 0, 0, name, h.to_packet(&[]), out)
    }

    /// An atomic of process 0's first member, acknowledged.
    #[allow(clippy::too_many_arguments)]
    fn atomic(
        &mut self,
        node: &mut dyn MemoryNode,
        name: &'static str,
        op: Opcode,
        va: u64,
        arg0: u64,
        arg1: u64,
        out: &mut Vec<Outgoing>,
    ) -> Corner {
        let id = self.id();
        let h = Header {
            arg0,
            arg1,
            ..self.req(0, 0, op, id, va)
        };
        let c = self.corner(node, 0, 0, name, h.to_packet(&[]), out);
        self.ack(node, 0, 0, id, out);
        c
    }
}

#[cfg(test)]
mod tests;
