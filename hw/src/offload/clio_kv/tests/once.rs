//! Exactly-once puts and deletes at the unit: the executor's part of the idempotence ring is
//! played by the bench (`run_ring`), the model's by `reference::serve_once` with a ring of its
//! own; both rings, every answer and the whole region must agree after each request.

use super::*;
use crate::offload::clio_kv::reference::serve_once;

/// A put and a delete retried after the store changed get their first answers and change
/// nothing; then random traffic with retries, acks and a 4-slot ring that fills (RETRY_LATER,
/// nothing executed), over two members with colliding request ids, keys of every length class
/// (a retry of a key over 60 bytes leaves its second beat to the drain) and a store that gets
/// full (OUT_OF_MEMORY is recorded and replayed as such).
/// The unit, its region and ring, and the reference's.
struct Once {
    b: Bench<ClioKv>,
    dut: Region,
    want: Region,
    ring_dut: Ring,
    ring_ref: Ring,
}

impl Once {
    /// `r` from member `client` with request id `id`: the unit against `serve_once`.
    fn step(&mut self, r: &Req, client: u16, id: u32, t: Timing) -> Answer {
        let expect = serve_once(&mut self.want, &SMALL, 0, &mut self.ring_ref, client, id, r);
        let got = run_ring(
            &mut self.b,
            &mut self.dut,
            r,
            t,
            &mut self.ring_dut,
            client,
            id,
        );
        assert_eq!(got.answer, expect, "{:?} client {client} id {id}", r.op);
        assert!(
            self.dut.bytes == self.want.bytes,
            "memory differs after {r:?}"
        );
        assert!(
            self.ring_dut.table() == self.ring_ref.table(),
            "the tables differ"
        );
        if got.answer.replay {
            assert_eq!((got.reads, got.writes), (0, 0), "a replay touches nothing");
        }
        got.answer
    }

    fn ack(&mut self, pid: u16, client: u16, id: u32) {
        self.ring_dut.ack(pid, client, id);
        self.ring_ref.ack(pid, client, id);
    }
}

#[test]
fn retries_are_answered_from_the_ring_and_change_nothing() {
    let dut = Region::formatted(&SMALL);
    let mut o = Once {
        b: unit(&SMALL, 0),
        want: dut.clone(),
        dut,
        ring_dut: rows(),
        ring_ref: rows(),
    };
    let k = key(4); // 61 bytes: the retry's second beat is drained, not peeked
    let put1 = Req::new(Opcode::KvPut, 1, &k, &[1; 100]);
    let put2 = Req::new(Opcode::KvPut, 1, &k, &[2; 30]);
    let del = Req::new(Opcode::KvDelete, 1, &k, b"");
    let get = Req::new(Opcode::KvGet, 1, &k, b"");
    let a1 = o.step(&put1, 1, 10, FAST);
    assert_eq!((a1.status, a1.arg0, a1.replay), (0, MISS, false));
    let a2 = o.step(&put2, 1, 11, DRAM);
    assert_eq!((a2.status, a2.arg0), (0, HIT));
    let before = o.dut.bytes.clone();
    let r1 = o.step(&put1, 1, 10, DRAM);
    assert_eq!(
        (r1.status, r1.arg0, r1.replay),
        (0, MISS, true),
        "the first answer"
    );
    assert!(o.dut.bytes == before, "the retried put changed nothing");
    let g = o.step(&get, 1, 12, FAST);
    let (va, n) = g.read.expect("a value");
    assert_eq!(
        o.dut.read(va, n as usize),
        Ok(vec![2; 30]),
        "the second put's value"
    );
    // Free the slots, then a delete, a put of the key again, the delete retried.
    for id in [10, 11] {
        o.ack(1, 1, id);
    }
    let d = o.step(&del, 1, 13, FAST);
    assert_eq!((d.status, d.arg0), (0, HIT));
    o.step(&put2, 1, 14, FAST);
    let before = o.dut.bytes.clone();
    let rd = o.step(&del, 1, 13, DRAM);
    assert_eq!((rd.status, rd.arg0, rd.replay), (0, HIT, true));
    assert!(o.dut.bytes == before, "the retried delete changed nothing");
    // Random traffic.
    random_traffic(
        &mut o,
        0x9E37_79B9_7F4A_7C15,
        false,
        &[
            "denied",
            "over share",
            "replay",
            "executed",
            "out of memory",
            "replayed out of memory",
        ],
    );
}

/// The same random traffic with a share of 2 entries per member in an 8-slot ring: a member
/// holding two unacknowledged results is refused QUOTA_EXCEEDED (not a replay, nothing
/// executed or recorded), and one at its share is turned away (RETRY_LATER) until the write
/// pointer reaches its own acknowledged result; unit and reference agree on every ring slot.
#[test]
fn a_caller_at_its_share_of_the_ring_is_refused_or_waits_for_its_own_slot() {
    let dut = Region::formatted(&SMALL);
    let mut o = Once {
        b: unit(&SMALL, 0),
        want: dut.clone(),
        dut,
        ring_dut: rows(),
        ring_ref: rows(),
    };
    o.ring_dut.set_share(2);
    o.ring_ref.set_share(2);
    random_traffic(
        &mut o,
        0x2545_F491_4F6C_DD1D,
        true,
        &["over share", "denied", "replay", "executed"],
    );
}

/// The rows of the two members the traffic uses: client 1 is RAS 1's, client 2 RAS 2's.
fn rows() -> Ring {
    let mut r = Ring::default();
    r.set_owner(1, 1);
    r.set_owner(2, 2);
    r
}

/// The RAS a client id's row belongs to in [`rows`].
fn owner_of(client: u16) -> u16 {
    client
}

/// Random puts, deletes and gets with retries and acks over two members whose RASes also send
/// under each other's client id (denied), with colliding request ids, acknowledging the oldest
/// unacknowledged result (or with `ack_any` a recent request); each answer kind in `want` must
/// come at least twice.
fn random_traffic(o: &mut Once, seed: u64, ack_any: bool, want: &[&str]) {
    let mut sent: Vec<(Req, u16, u32)> = vec![];
    let mut seen: HashMap<&str, usize> = HashMap::new();
    let mut x = seed;
    for i in 0..200u32 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let t = [FAST, DRAM][(x >> 60) as usize % 2];
        let recent = |n: usize| sent.len() - 1 - (x >> 8) as usize % sent.len().min(n);
        if x % 5 < 2 {
            // CN_ACK of a request sent (its client got the answer): of the oldest one still
            // unacknowledged, or with `ack_any` of any recent one.
            let pick = if ack_any && !sent.is_empty() {
                Some(sent[recent(8)].clone())
            } else {
                sent.iter()
                    .find(|(r, c, id)| {
                        o.ring_ref
                            .entry(*c, *id)
                            .is_some_and(|e| e.req_id == *id && !e.acked && r.pid == owner_of(*c))
                    })
                    .cloned()
            };
            if let Some((r, c, id)) = pick {
                o.ack(r.pid, c, id);
            }
            continue;
        }
        let (r, client, id) = if x % 5 == 2 && !sent.is_empty() {
            sent[recent(4)].clone()
        } else {
            let owner = 1 + (x >> 16) as u16 % 2;
            let op = [
                Opcode::KvPut,
                Opcode::KvPut,
                Opcode::KvDelete,
                Opcode::KvGet,
            ][(x >> 20) as usize % 4];
            let v = if op == Opcode::KvPut {
                value(i as usize)
            } else {
                vec![]
            };
            // Request ids collide across the two members and the two owners.
            let r = Req::new(op, owner, &key((x >> 24) as usize % 8 + 8), &v);
            (r, 1 + (x >> 32) as u16 % 2, 100 + i / 4)
        };
        let ring_before = o.ring_ref.clone();
        let a = o.step(&r, client, id, t);
        let kind = match (a.replay, a.status) {
            (true, s) if s == Status::Denied as u8 => "denied",
            (true, s) if s == Status::OutOfMemory as u8 => "replayed out of memory",
            (true, _) => "replay",
            (false, s) if s == Status::OutOfMemory as u8 => "out of memory",
            (false, s) if s == Status::QuotaExceeded as u8 => "over share",
            _ => "executed",
        };
        *seen.entry(kind).or_default() += 1;
        if a.replay && a.status != Status::Denied as u8 {
            assert!(
                r.pid == owner_of(client)
                    && ring_before
                        .entry(client, id)
                        .is_some_and(|e| e.req_id == id),
                "replayed only what the member's row holds"
            );
        }
        sent.push((r, client, id));
    }
    for k in want {
        assert!(seen.get(k).copied().unwrap_or(0) >= 2, "{k}: {seen:?}");
    }
}

/// `Check` sends every request of the unit's but a get to the ring: exactly the opcodes
/// `Opcode::offload_uses_idempotence_ring` names among `kv::is_kv`'s.
#[test]
fn every_kv_opcode_but_get_uses_the_ring() {
    for b in 0..=255u8 {
        if let Some(op) = Opcode::from_u8(b).filter(|&op| clio_proto::kv::is_kv(op)) {
            assert_eq!(
                op.offload_uses_idempotence_ring(),
                op != Opcode::KvGet,
                "{op:?}"
            );
        }
    }
}
