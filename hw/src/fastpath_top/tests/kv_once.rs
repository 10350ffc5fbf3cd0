//! Exactly-once Clio-KV writes through the top: puts and deletes check the sync unit's
//! idempotence ring under the caller's `(pid, client, req_id)` before the unit executes them,
//! record their answer after it (errors included), and a retry is answered from the ring.
//! Every answer byte-exact with the model's rule (`reference::serve_once`, a ring of the
//! sync unit's size beside it), the store's region in DRAM byte for byte after each step.

use super::kv::{dram_region, expected, kv_config, kv_store};
use super::*;
use crate::offload::clio_kv::reference::{serve_once, Answer, Region, Req};
use crate::sync_unit::RING_ENTRIES;
use clio_model::sync_unit::SyncUnit as Ring;
use clio_proto::kv::{KvRequest, StoreLayout, HIT, MISS};

struct Kv {
    e: Env,
    l: StoreLayout,
    m: Region,
    ring: Ring,
}

impl Kv {
    /// `op` on `key` from member `client` of `pid` with request id `id`: the answer must be
    /// the reference's, and the region in DRAM the reference's image.
    fn send(&mut self, op: Opcode, pid: u16, client: u16, id: u32, key: &[u8], v: &[u8]) -> Answer {
        let q = KvRequest::new(op, key, v).unwrap();
        let h = q.header(op, pid, id).with_credentials(key_of(pid), client);
        let a = serve_once(
            &mut self.m,
            &self.l,
            0,
            &mut self.ring,
            client,
            id,
            &Req::new(op, pid, key, v),
        );
        let want = expected(&h, &self.m, &a);
        assert_eq!(
            self.e.request(&h.to_packet(&q.encode())).0,
            vec![want],
            "{op:?} pid {pid} client {client} id {id}"
        );
        self.same_image();
        a
    }

    /// The member's CN_ACK of `id`.
    fn ack(&mut self, pid: u16, client: u16, id: u32) {
        let mut h = req(Opcode::CnAck, pid, 0xACC0_0000 | id, 0);
        h.client = client;
        h.arg0 = id as u64;
        assert_eq!(
            self.e.request(&h.to_packet(&[])).0,
            vec![resp(&h, Status::Ok, &[])]
        );
        self.ring.ack(pid, client, id);
    }

    fn same_image(&self) {
        assert!(
            dram_region(&self.e, &self.l, self.m.bytes.len()) == self.m.bytes,
            "the store's region in DRAM"
        );
    }

    /// The RTL ring's write pointer.
    fn wp(&self) -> usize {
        self.e.b.uut.sync.wp.q.val().to_u64() as usize
    }

    /// The value a get of `key` returns (its answer checked by `send`).
    fn get(&mut self, pid: u16, id: u32, key: &[u8]) -> Option<Vec<u8>> {
        let a = self.send(Opcode::KvGet, pid, CLIENT, id, key, b"");
        assert!(!a.replay, "gets are not recorded");
        (a.arg0 == HIT).then(|| match a.read {
            Some((va, n)) => self.m.read(va, n as usize).unwrap(),
            None => vec![],
        })
    }
}

#[test]
fn kv_puts_and_deletes_are_executed_once() {
    let (mut e, l, m) = kv_store(&[3, 4]);
    e.sp_tx.push_back(kv_config(&l, Status::Ok));
    e.run();
    let mut kv = Kv {
        e,
        l,
        m,
        ring: Ring::with_entries(RING_ENTRIES),
    };
    let (put, del) = (Opcode::KvPut, Opcode::KvDelete);
    let c = CLIENT;

    // A put retried after another put changed the key: the first answer (created), nothing
    // changed, the second value stays. The replay is the first answer (total_len 0).
    assert_eq!(kv.send(put, 3, c, 1, b"alpha", &[1; 100]).arg0, MISS);
    assert_eq!(kv.send(put, 3, c, 2, b"alpha", &[2; 40]).arg0, HIT);
    let a = kv.send(put, 3, c, 1, b"alpha", &[1; 100]);
    assert_eq!((a.status, a.arg0, a.replay), (0, MISS, true));
    assert_eq!(kv.get(3, 3, b"alpha"), Some(vec![2; 40]));

    // A delete retried after the key was put again: HIT replayed, the key stays.
    assert_eq!(kv.send(del, 3, c, 4, b"alpha", b"").arg0, HIT);
    assert_eq!(kv.send(put, 3, c, 5, b"alpha", &[5; 7]).arg0, MISS);
    let a = kv.send(del, 3, c, 4, b"alpha", b"");
    assert_eq!((a.status, a.arg0, a.replay), (0, HIT, true));
    assert_eq!(kv.get(3, 6, b"alpha"), Some(vec![5; 7]));

    // An error answer is recorded too: a put refused for a full store (5 keys in 6 records)
    // is answered OUT_OF_MEMORY again after a delete made room.
    for (i, k) in [b"k1", b"k2", b"k3", b"k4"].iter().enumerate() {
        assert_eq!(
            kv.send(put, 3, c, 10 + i as u32, *k, &[i as u8; 64]).status,
            0
        );
    }
    let oom = Status::OutOfMemory as u8;
    assert_eq!(kv.send(put, 3, c, 20, b"k5", &[9; 9]).status, oom);
    assert_eq!(kv.send(del, 3, c, 21, b"k1", b"").arg0, HIT);
    let a = kv.send(put, 3, c, 20, b"k5", &[9; 9]);
    assert_eq!((a.status, a.replay), (oom, true));
    assert_eq!(kv.get(3, 22, b"k5"), None, "the retry did not execute");

    // Another member of the same RAS, and another RAS, with request id 1: not replays.
    let a = kv.send(put, 3, c + 1, 1, b"alpha", &[7; 3]);
    assert_eq!((a.arg0, a.replay), (HIT, false));
    let a = kv.send(put, 4, c, 1, b"alpha", &[8; 3]);
    assert_eq!((a.arg0, a.replay), (MISS, false));
    assert_eq!(kv.get(3, 23, b"alpha"), Some(vec![7; 3]));
    assert_eq!(kv.get(4, 24, b"alpha"), Some(vec![8; 3]));

    // CN_ACKs free the slots; then unacknowledged deletes (of absent keys: MISS, recorded)
    // fill the ring from the write pointer round to it again.
    assert_eq!(
        kv.send(del, 3, c, 30, b"k2", b"").arg0,
        HIT,
        "room for beta below"
    );
    for id in [1, 2, 4, 5, 10, 11, 12, 13, 20, 21, 30] {
        kv.ack(3, c, id);
    }
    kv.ack(3, c + 1, 1);
    kv.ack(4, c, 1);
    let pending = kv
        .ring
        .slots()
        .iter()
        .flatten()
        .filter(|e| !e.acked)
        .count();
    assert_eq!(pending, 0);
    for i in 0..RING_ENTRIES as u32 {
        let a = kv.send(del, 4, c, 100 + i, b"absent", b"");
        assert_eq!((a.status, a.arg0, a.replay), (0, MISS, false));
    }
    assert_eq!(kv.wp(), kv.ring.write_pointer());
    // Full: RETRY_LATER, nothing executes, the pointer moves past the slot; again.
    for attempt in 1..=2 {
        let wp = kv.wp();
        let a = kv.send(put, 3, c, 200, b"beta", &[3; 33]);
        assert_eq!(
            (a.status, a.replay),
            (Status::RetryLater as u8, true),
            "attempt {attempt}"
        );
        assert_eq!(kv.wp(), (wp + 1) % RING_ENTRIES);
    }
    assert_eq!(kv.get(3, 201, b"beta"), None);
    // The CN_ACK of the request in the slot at the write pointer frees it: the put executes.
    let e = kv.ring.slots()[kv.ring.write_pointer()].expect("an entry");
    let (p, cl, id) = (e.pid, e.client, e.req_id);
    kv.ack(p, cl, id);
    let a = kv.send(put, 3, c, 200, b"beta", &[3; 33]);
    assert_eq!((a.status, a.arg0, a.replay), (0, MISS, false));
    assert_eq!(kv.get(3, 202, b"beta"), Some(vec![3; 33]));
    // Retried once more (a network duplicate): replayed from the ring.
    let a = kv.send(put, 3, c, 200, b"beta", &[3; 33]);
    assert_eq!((a.arg0, a.replay), (MISS, true));
    assert_eq!(kv.wp(), kv.ring.write_pointer());
}
