//! Clio-KV through the top (`offload::clio_kv`): a store set up by hand (its pages mapped for
//! the store's pid, the superblock formatted in DRAM, then the slow path's KV_CONFIG), then
//! puts, gets and deletes of two owners as frames, every answer byte-exact with the reference
//! (`offload::clio_kv::reference`, the model's logic) and the store's region in DRAM byte for
//! byte like the reference's image at the end.

use super::*;
use crate::offload::clio_kv::reference::{serve, Region, Req};
use crate::tb::axi_dram::Memory;
use clio_proto::kv::{KvRequest, StoreLayout, MAX_KEY, MAX_VALUE};

/// The store's RAS (no key: only the unit reaches it).
const STORE_PID: u16 = 9;
/// The store's pages: vpn 0x40.. at frames 20...
const STORE_VPN: u64 = 0x40;
const STORE_PFN: u64 = 20;
const STORE_PAGES: u64 = 10;

fn store_pa(va: u64) -> u64 {
    let vpn = va >> SHIFT;
    assert!((STORE_VPN..STORE_VPN + STORE_PAGES).contains(&vpn));
    ((vpn - STORE_VPN + STORE_PFN) << SHIFT) | (va & (PS - 1))
}

/// The store's region as DRAM holds it.
pub(super) fn dram_region(e: &Env, l: &StoreLayout, n: usize) -> Vec<u8> {
    (0..n as u64)
        .map(|i| e.dram.mem().bytes(store_pa(l.base + i), 1)[0])
        .collect()
}

/// The expected response to `h` from the reference's answer.
pub(super) fn expected(
    h: &Header,
    m: &Region,
    a: &crate::offload::clio_kv::reference::Answer,
) -> Vec<u8> {
    if a.replay {
        // From the idempotence ring: the request's header with the recorded status and arg0;
        // an OK answer (a put's or delete's) carries no value, total_len 0, as the first did.
        let status = Status::from_u8(a.status).unwrap();
        return Header {
            arg0: a.arg0,
            total_len: if status == Status::Ok { 0 } else { h.total_len },
            ..h.response_to(status)
        }
        .to_packet(&[]);
    }
    if a.status != 0 {
        // A refusal by a quota names it in arg1.
        let mut r = h.response_to(Status::from_u8(a.status).unwrap());
        if a.arg1 != 0 {
            r.arg1 = a.arg1;
        }
        return r.to_packet(&[]);
    }
    let value = match a.read {
        Some((va, n)) => m.read(va, n as usize).unwrap(),
        None => vec![],
    };
    Header {
        arg0: a.arg0,
        arg1: 0,
        total_len: value.len() as u32,
        ..h.response_to(Status::Ok)
    }
    .to_packet(&value)
}

/// The store of the KV tests: six records in ten pages of `STORE_PID` (`HEADS_OFFSET` + 4 *
/// 8 + 6 * 1104 bytes), formatted in DRAM, RAS keys for `owners`; not configured yet (no KV_CONFIG).
pub(super) fn kv_store(owners: &[u16]) -> (Env, StoreLayout, Region) {
    let mut e = env_with_page(owners);
    e.budget = 20_000;
    for vpn in STORE_VPN..STORE_VPN + STORE_PAGES {
        e.put_pte(Pte {
            used: true,
            valid: true,
            perms: PERM_READ | PERM_WRITE,
            pid: STORE_PID,
            vpn,
            pfn: STORE_PFN + vpn - STORE_VPN,
        });
    }
    let l = StoreLayout {
        base: STORE_VPN * PS,
        buckets: 4,
        records: 6,
    };
    assert!(l.bytes() <= STORE_PAGES * PS);
    let m = Region::formatted(&l);
    for (i, b) in m.bytes.iter().enumerate() {
        let pa = store_pa(l.base + i as u64);
        e.dram.mem_mut().write(pa, &[*b]);
    }
    (e, l, m)
}

/// The slow path's KV_CONFIG for the store `l` with `status`.
pub(super) fn kv_config(l: &StoreLayout, status: Status) -> [u8; 128] {
    Descriptor::KvConfig {
        pid: STORE_PID,
        base: l.base,
        buckets: l.buckets,
        records: l.records as u32,
        status: status as u8,
    }
    .encode()
}

#[test]
fn clio_kv_serves_puts_gets_and_deletes_through_the_top() {
    let owners = [3u16, 4u16];
    let (mut e, l, mut m) = kv_store(&owners);
    let config = |status: Status| kv_config(&l, status);
    // Before the slow path's KV_CONFIG the unit is off: UNSUPPORTED, as a node without it.
    let q = KvRequest::new(Opcode::KvGet, b"alpha", &[]).unwrap();
    let h = q
        .header(Opcode::KvGet, 3, 999)
        .with_credentials(key_of(3), client_of(3));
    assert_eq!(
        e.request(&h.to_packet(&q.encode())).0,
        vec![resp(&h, Status::Unsupported, &[])]
    );
    e.sp_tx.push_back(config(Status::Ok));
    e.run();

    let mut id = 1000u32;
    let mut send = |e: &mut Env, m: &mut Region, op: Opcode, pid: u16, key: &[u8], value: &[u8]| {
        id += 1;
        let q = KvRequest::new(op, key, value).unwrap();
        let h = q
            .header(op, pid, id)
            .with_credentials(key_of(pid), client_of(pid));
        let pkt = h.to_packet(&q.encode());
        let a = serve(m, &l, 0, &Req::new(op, pid, key, value));
        let want = expected(&h, m, &a);
        let (got, c) = e.request(&pkt);
        assert_eq!(
            got,
            vec![want],
            "{op:?} pid {pid} key {key:?} value {}",
            value.len()
        );
        if op.needs_cn_ack() {
            // Acknowledged, as CLib does: the member's row never fills.
            let mut ack = req(Opcode::CnAck, pid, id | 0x8000_0000, 0);
            ack.arg0 = u64::from(id);
            assert_eq!(
                e.request(&ack.to_packet(&[])).0,
                vec![resp(&ack, Status::Ok, &[])]
            );
        }
        c
    };

    // A put, its get (hit), a get of another key (miss), the other owner's same key (miss).
    let c_put = send(&mut e, &mut m, Opcode::KvPut, 3, b"alpha", &[0x5A; 64]);
    let c_hit = send(&mut e, &mut m, Opcode::KvGet, 3, b"alpha", &[]);
    let c_miss = send(&mut e, &mut m, Opcode::KvGet, 3, b"beta", &[]);
    send(&mut e, &mut m, Opcode::KvGet, 4, b"alpha", &[]);
    eprintln!(
        "clio-kv through the top (16 B key class, 64 B value): put {c_put}, get hit {c_hit}, \
         get miss {c_miss} cycles (last beat to first response beat)"
    );
    // Random puts (create, update, full store), gets and deletes of both owners, keys of
    // 1..=64 bytes (a few distinct ones so that they hit), values of 0..=MAX_VALUE bytes.
    let mut seed = 0x1234_5678_9ABC_DEF0u64;
    let mut rnd = |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let keys: Vec<Vec<u8>> = (0..9)
        .map(|k| {
            let len = [1, 5, 16, 31, 59, 60, 61, 63, MAX_KEY][k];
            (0..len).map(|i| (k * 37 + i * 11) as u8).collect()
        })
        .collect();
    for n in 0..60 {
        let pid = owners[rnd(2) as usize];
        let key = &keys[rnd(keys.len() as u64) as usize];
        let op = [
            Opcode::KvPut,
            Opcode::KvPut,
            Opcode::KvGet,
            Opcode::KvDelete,
        ][rnd(4) as usize];
        let value: Vec<u8> = if op == Opcode::KvPut {
            let len = [0, 1, 63, 64, 100, 500, MAX_VALUE - 1, MAX_VALUE][rnd(8) as usize];
            (0..len).map(|i| (n * 13 + i * 7) as u8).collect()
        } else {
            vec![]
        };
        send(&mut e, &mut m, op, pid, key, &value);
    }
    let n = m.bytes.len();
    assert!(
        dram_region(&e, &l, n) == m.bytes,
        "the store's region in DRAM"
    );

    // Malformed (va != 0): BAD_REQUEST, the payload drained, nothing changed; a store not
    // ready (KV_CONFIG with another status): that status.
    for (id, status) in [(2000, Status::BadRequest), (2001, Status::RetryLater)] {
        let mut h = q
            .header(Opcode::KvGet, 3, id)
            .with_credentials(key_of(3), client_of(3));
        if status == Status::BadRequest {
            h.va = 64;
        } else {
            e.sp_tx.push_back(config(status));
            e.run();
        }
        assert_eq!(
            e.request(&h.to_packet(&q.encode())).0,
            vec![resp(&h, status, &[])],
            "{status:?}"
        );
    }
    assert!(dram_region(&e, &l, n) == m.bytes, "nothing changed");
}

/// A put refused by the header checks (`va` != 0, a second packet announced, a lying
/// `total_len`) with a value of many beats is answered BAD_REQUEST on its own: its payload is
/// drained without waiting for the next frame, and the unit takes the next request.
#[test]
fn a_refused_put_with_a_long_value_is_answered_alone() {
    let (mut e, l, _) = kv_store(&[3]);
    e.sp_tx.push_back(kv_config(&l, Status::Ok));
    e.run();
    let q = KvRequest::new(Opcode::KvPut, b"key", &[0x33; MAX_VALUE]).unwrap();
    for (id, bend) in [
        (3000u32, (|h: &mut Header| h.va = 8) as fn(&mut Header)),
        (3001, |h| h.pkt_count = 2),
        (3002, |h| h.total_len -= 1),
    ] {
        let mut h = q
            .header(Opcode::KvPut, 3, id)
            .with_credentials(key_of(3), client_of(3));
        bend(&mut h);
        assert_eq!(
            e.request(&h.to_packet(&q.encode())).0,
            vec![resp(&h, Status::BadRequest, &[])],
            "request {id}"
        );
    }
}
