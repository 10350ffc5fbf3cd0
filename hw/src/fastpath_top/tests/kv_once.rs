//! Exactly-once Clio-KV writes through the top: puts and deletes check the sync unit's
//! idempotence ring under the caller's `(pid, client, req_id)` before the unit executes them,
//! record their answer after it (errors included), and a retry is answered from the ring.
//! Every answer byte-exact with the model's rule (`reference::serve_once`, a ring of the
//! sync unit's size beside it), the store's region in DRAM byte for byte after each step.

use super::kv::{dram_region, expected, kv_config, kv_store};
use super::*;
use crate::offload::clio_kv::reference::{serve_once, Answer, Region, Req};
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

    /// The value a get of `key` returns (its answer checked by `send`).
    fn get(&mut self, pid: u16, id: u32, key: &[u8]) -> Option<Vec<u8>> {
        let a = self.send(Opcode::KvGet, pid, client_of(pid), id, key, b"");
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
    // A second member of RAS 3.
    let c2 = client_of(3) + 0x200;
    e.own_row(c2, 3);
    let mut ring = Ring::default();
    for (client, pid) in [(client_of(3), 3), (client_of(4), 4), (c2, 3)] {
        ring.set_owner(client, pid);
    }
    let mut kv = Kv { e, l, m, ring };
    let (put, del) = (Opcode::KvPut, Opcode::KvDelete);
    let (c, c4) = (client_of(3), client_of(4));

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

    for id in [1, 2, 4, 5] {
        kv.ack(3, c, id);
    }
    // An error answer is recorded too: a put refused for a full store (5 keys in 6 records)
    // is answered OUT_OF_MEMORY again after a delete made room.
    for (i, k) in [b"k1", b"k2", b"k3", b"k4"].iter().enumerate() {
        assert_eq!(
            kv.send(put, 3, c, 10 + i as u32, *k, &[i as u8; 64]).status,
            0
        );
    }
    for id in 10..14 {
        kv.ack(3, c, id);
    }
    let oom = Status::OutOfMemory as u8;
    assert_eq!(kv.send(put, 3, c, 20, b"k5", &[9; 9]).status, oom);
    assert_eq!(kv.send(del, 3, c, 21, b"k1", b"").arg0, HIT);
    let a = kv.send(put, 3, c, 20, b"k5", &[9; 9]);
    assert_eq!((a.status, a.replay), (oom, true));
    assert_eq!(kv.get(3, 22, b"k5"), None, "the retry did not execute");

    // Another member of the same RAS, and another RAS, with request id 1: not replays.
    let a = kv.send(put, 3, c2, 1, b"alpha", &[7; 3]);
    assert_eq!((a.arg0, a.replay), (HIT, false));
    let a = kv.send(put, 4, c4, 1, b"alpha", &[8; 3]);
    assert_eq!((a.arg0, a.replay), (MISS, false));
    assert_eq!(kv.get(3, 23, b"alpha"), Some(vec![7; 3]));
    assert_eq!(kv.get(4, 24, b"alpha"), Some(vec![8; 3]));
    // Under RAS 3's client id, RAS 4 is denied, and nothing runs.
    let a = kv.send(put, 4, c, 1, b"alpha", &[9; 3]);
    assert_eq!((a.status, a.replay), (Status::Denied as u8, true));
    assert_eq!(kv.get(4, 25, b"alpha"), Some(vec![8; 3]));

    // Room for beta below, and every result so far acknowledged.
    assert_eq!(kv.send(del, 3, c, 30, b"k2", b"").arg0, HIT);
    for id in [1, 2, 4, 5, 10, 11, 12, 13, 20, 21, 30] {
        kv.ack(3, c, id);
    }
    kv.ack(3, c2, 1);
    kv.ack(4, c4, 1);

    // RAS 4's member fills its own row with unacknowledged deletes (of an absent key: MISS,
    // recorded); its next is refused, while RAS 3's put executes at once.
    use clio_proto::consts::RING_WAYS;
    for i in 0..RING_WAYS as u32 {
        let a = kv.send(del, 4, c4, 0x100 + i, b"absent", b"");
        assert_eq!((a.status, a.arg0, a.replay), (0, MISS, false));
    }
    let a = kv.send(del, 4, c4, 0x100 + RING_WAYS as u32, b"absent", b"");
    assert_eq!(a.status, Status::QuotaExceeded as u8);
    let a = kv.send(put, 3, c, 200, b"beta", &[3; 33]);
    assert_eq!((a.status, a.arg0, a.replay), (0, MISS, false));
    assert_eq!(kv.get(3, 202, b"beta"), Some(vec![3; 33]));
    // Retried once more (a network duplicate): replayed from the row.
    let a = kv.send(put, 3, c, 200, b"beta", &[3; 33]);
    assert_eq!((a.arg0, a.replay), (MISS, true));
    // RAS 4's acknowledgement of the result in that request's entry frees it: it executes.
    let busy = 0x100 + clio_proto::consts::ring_way(0x100 + RING_WAYS as u32) as u32;
    kv.ack(4, c4, busy);
    let a = kv.send(del, 4, c4, 0x100 + RING_WAYS as u32, b"absent", b"");
    assert_eq!((a.status, a.replay), (0, false));
}
