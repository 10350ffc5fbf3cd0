//! Clio-KV through CLib: the node's key-value offload in its own address space. Members of
//! one RAS share keys, another RAS sees none of them; thousands of operations through a lossy,
//! duplicating network stay exact (puts and deletes run once); concurrent readers never see
//! a torn value; a full store refuses new keys and a delete makes room; hand-made malformed
//! or unauthorised requests are refused and change nothing.

mod common;
use clio_clib::transport::{FaultConfig, FaultyTransport, Transport};
use clio_clib::{Client, ClioError, Config, KvPutOutcome};
use clio_proto::kv::{KvRequest, KvStagedPut, MAX_KEY, MAX_STAGED_VALUE, MAX_VALUE};
use clio_sim::CBoard;
use common::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn node(offloads: bool, kv_store_bytes: u64) -> Arc<Mutex<CBoard>> {
    offload_board(offloads, kv_store_bytes)
}

fn client(b: &Arc<Mutex<CBoard>>) -> Client {
    Client::connect(Box::new(direct(b.clone())), Config::default()).unwrap()
}

fn member_of(b: &Arc<Mutex<CBoard>>, owner: &Client) -> Client {
    Client::join(
        Box::new(direct(b.clone())),
        Config::default(),
        owner.credentials(),
    )
    .unwrap()
}

#[test]
fn members_of_one_ras_share_keys_and_another_ras_sees_none() {
    let b = node(true, 1 << 20);
    let a = client(&b);
    let a2 = member_of(&b, &a);
    assert_eq!(a.kv_get(b"user1").unwrap(), None);
    assert_eq!(a.kv_put(b"user1", b"one").unwrap(), KvPutOutcome::Created);
    assert_eq!(a2.kv_get(b"user1").unwrap(), Some(b"one".to_vec()));
    assert_eq!(a2.kv_put(b"user1", b"uno").unwrap(), KvPutOutcome::Replaced);
    assert_eq!(a.kv_get(b"user1").unwrap(), Some(b"uno".to_vec()));
    // An empty value is a value, not an absence.
    a.kv_put(b"empty", b"").unwrap();
    assert_eq!(a2.kv_get(b"empty").unwrap(), Some(Vec::new()));

    // Another tenant: the same key names its own, separate entry.
    let t = client(&b);
    assert_eq!(t.kv_get(b"user1").unwrap(), None);
    assert!(!t.kv_delete(b"user1").unwrap());
    assert_eq!(
        t.kv_put(b"user1", b"theirs").unwrap(),
        KvPutOutcome::Created
    );
    assert_eq!(a.kv_get(b"user1").unwrap(), Some(b"uno".to_vec()));
    assert!(a2.kv_delete(b"user1").unwrap());
    assert_eq!(a.kv_get(b"user1").unwrap(), None);
    assert_eq!(t.kv_get(b"user1").unwrap(), Some(b"theirs".to_vec()));

    // One request per operation.
    let before = a.stats().requests;
    a.kv_get(b"empty").unwrap();
    assert_eq!(a.stats().requests, before + 1);
    // Bounds are checked before anything is sent.
    let long_key = [b'k'; MAX_KEY + 1];
    assert!(matches!(
        a.kv_get(&long_key),
        Err(ClioError::InvalidArgument(_))
    ));
    assert!(matches!(a.kv_get(b""), Err(ClioError::InvalidArgument(_))));
    let long_value = vec![0u8; MAX_STAGED_VALUE + 1];
    assert!(matches!(
        a.kv_put(b"k", &long_value),
        Err(ClioError::InvalidArgument(_))
    ));
    // The async put takes one packet's worth; longer values go through kv_put (staged).
    assert!(matches!(
        a.kv_put_async(b"k", &pattern(MAX_VALUE + 1, 0)),
        Err(ClioError::InvalidArgument(_))
    ));
    let longest = pattern(MAX_VALUE, 3);
    a.kv_put(&[b'z'; MAX_KEY], &longest).unwrap();
    assert_eq!(a2.kv_get(&[b'z'; MAX_KEY]).unwrap(), Some(longest));
    // Staged values: just over one packet's room, and the paper's 1 KiB with the longest key.
    for (i, len) in [MAX_VALUE + 1, MAX_STAGED_VALUE].into_iter().enumerate() {
        let v = pattern(len, 10 + i as u64);
        let before = a.stats().requests;
        assert_eq!(
            a.kv_put(&[b'y'; MAX_KEY], &v).unwrap(),
            [KvPutOutcome::Created, KvPutOutcome::Replaced][i]
        );
        assert!(
            a.stats().requests - before >= 2,
            "the value's write and the staged put"
        );
        assert_eq!(a2.kv_get(&[b'y'; MAX_KEY]).unwrap(), Some(v));
    }
}

#[test]
fn thousands_of_operations_under_loss_and_duplication_stay_exact() {
    let b = node(true, 1 << 20);
    let faults = FaultConfig {
        drop: 0.05,
        duplicate: 0.05,
        reorder: 0.02,
        corrupt: 0.01,
        seed: 0x4B56,
    };
    let cfg = Config {
        min_rto: Duration::from_micros(300),
        initial_rto: Duration::from_millis(1),
        max_rto: Duration::from_millis(20),
        ..Config::default()
    };
    let net = |seed: u64| {
        Box::new(FaultyTransport::new(
            direct(b.clone()),
            FaultConfig { seed, ..faults },
        )) as Box<dyn Transport>
    };
    let c1 = Client::connect(net(1), cfg.clone()).unwrap();
    let c2 = Client::join(net(2), cfg, c1.credentials()).unwrap();
    let mut model: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for i in 0..3000u64 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let c = if x & 1 == 0 { &c1 } else { &c2 };
        let key = format!("key{}", (x >> 8) % 40).into_bytes();
        match (x >> 20) % 3 {
            0 => {
                // Up to the paper's 1 KiB: values over one packet's room are staged.
                let v = pattern(1 + ((x >> 24) % MAX_STAGED_VALUE as u64) as usize, i);
                let want = match model.insert(key.clone(), v.clone()) {
                    Some(_) => KvPutOutcome::Replaced,
                    None => KvPutOutcome::Created,
                };
                assert_eq!(c.kv_put(&key, &v).unwrap(), want, "op {i}");
            }
            1 => assert_eq!(
                c.kv_delete(&key).unwrap(),
                model.remove(&key).is_some(),
                "op {i}"
            ),
            _ => assert_eq!(c.kv_get(&key).unwrap(), model.get(&key).cloned(), "op {i}"),
        }
    }
    let retried = c1.stats().retransmits + c2.stats().retransmits;
    assert!(retried > 50, "faults were met: {retried} retransmissions");
    assert!(b.lock().unwrap().counters().idempotent_replays > 0);
}

#[test]
fn concurrent_readers_never_see_a_torn_value() {
    let b = node(true, 1 << 20);
    let owner = client(&b);
    const KEYS: u64 = 4;
    // A value is its length's worth of one byte: any mix of two puts shows.
    let value = |byte: u8, len: usize| vec![byte; len];
    for k in 0..KEYS {
        owner
            .kv_put(format!("t{k}").as_bytes(), &value(0, 10))
            .unwrap();
    }
    let writers: Vec<_> = (0..2u8)
        .map(|w| {
            let c = member_of(&b, &owner);
            std::thread::spawn(move || {
                for i in 0..400u64 {
                    let byte = 1 + w * 100 + (i % 100) as u8;
                    let len = 1 + (i * 37 % MAX_VALUE as u64) as usize;
                    c.kv_put(format!("t{}", i % KEYS).as_bytes(), &value(byte, len))
                        .unwrap();
                }
            })
        })
        .collect();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let c = member_of(&b, &owner);
            std::thread::spawn(move || {
                let mut seen = 0;
                for i in 0..400u64 {
                    let v = c.kv_get(format!("t{}", i % KEYS).as_bytes()).unwrap();
                    let v = v.expect("never deleted");
                    assert!(!v.is_empty() && v.iter().all(|&x| x == v[0]), "torn: {v:?}");
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
    for r in readers {
        assert_eq!(r.join().unwrap(), 400);
    }
}

/// One tenant can take only its RAS's quota of the store (half of it by default): its next
/// new key is refused naming the quota and its flag; a second tenant fills the rest.
#[test]
fn a_full_store_refuses_new_keys_and_a_delete_makes_room() {
    use clio_proto::quota::Quota;
    // The count table, then 64 KiB: 58 records, 29 per RAS.
    let b = node(true, clio_proto::kv::HEADS_OFFSET + (64 << 10));
    let fill = |c: &Client, prefix: &str| {
        let mut n = 0;
        loop {
            match c.kv_put(format!("{prefix}{n}").as_bytes(), b"v") {
                Ok(_) => n += 1,
                Err(e) => break (n, e),
            }
            assert!(n < 1000, "the store never filled");
        }
    };
    let greedy = client(&b);
    let (n, err) = fill(&greedy, "g");
    let quota = ClioError::QuotaExceeded {
        quota: Some(Quota::KvRecords),
    };
    assert_eq!((n, &err), (29, &quota));
    assert!(err.to_string().contains("--max-ras-kv-records"), "{err}");
    let c = client(&b);
    let (n, err) = fill(&c, "k");
    assert_eq!(err, ClioError::KvStoreFull);
    assert_eq!(n, 28, "the rest of the store, less the spare record");
    // A full store still replaces values, and a delete frees a record for a new key.
    assert_eq!(c.kv_put(b"k0", b"w").unwrap(), KvPutOutcome::Replaced);
    assert_eq!(c.kv_put(b"new", b"x"), Err(ClioError::KvStoreFull));
    assert!(c.kv_delete(b"k1").unwrap());
    assert_eq!(c.kv_put(b"new", b"x").unwrap(), KvPutOutcome::Created);
    assert_eq!(c.kv_get(b"new").unwrap(), Some(b"x".to_vec()));
}

/// The status of the node's one answer to a hand-made request.
fn status_of(b: &Arc<Mutex<CBoard>>, h: clio_proto::Header, payload: &[u8]) -> clio_proto::Status {
    let out = serve(b, &h.to_packet(payload));
    let p = clio_proto::Packet::new_checked(&out[0][..]).unwrap();
    clio_proto::Header::parse(&p).unwrap().status
}

#[test]
fn hand_made_kv_requests_are_checked_and_change_nothing() {
    use clio_proto::{Header, Opcode, Status};
    let b = node(true, 1 << 20);
    let victim = client(&b);
    victim.kv_put(b"secret", b"the victim's value").unwrap();
    let attacker = client(&b);
    let cr = attacker.credentials();
    let ask = |h: Header, payload: &[u8]| status_of(&b, h, payload);
    let put = KvRequest::new(Opcode::KvPut, b"secret", b"overwritten").unwrap();
    let good = put
        .header(Opcode::KvPut, cr.pid, 900)
        .with_credentials(cr.key, attacker.client_id())
        .with_cookie(attacker.route_cookie());
    let payload = put.encode();
    let mut longer_key = payload.clone();
    longer_key[0] = 60; // claims more key than the payload holds
    let mut no_key = payload.clone();
    no_key[..2].copy_from_slice(&0u16.to_le_bytes());
    no_key[2..4].copy_from_slice(&((payload.len() - 4) as u16).to_le_bytes());
    let mut big_key = vec![(MAX_KEY + 1) as u8, 0, 0, 0];
    big_key.extend([b'k'; MAX_KEY + 1]);
    let get_with_value = Header {
        opcode: Opcode::KvGet,
        req_id: 901,
        ..good
    };
    let before = b.lock().unwrap().counters();
    for (i, (h, p)) in [
        (good, &longer_key),
        (good, &no_key),
        (
            Header {
                total_len: big_key.len() as u32,
                req_id: 902,
                ..good
            },
            &big_key,
        ),
        (get_with_value, &payload),
        (
            Header {
                va: 64,
                req_id: 903,
                ..good
            },
            &payload,
        ),
        (
            Header {
                arg0: 1,
                req_id: 904,
                ..good
            },
            &payload,
        ),
        (
            Header {
                total_len: 4,
                req_id: 905,
                ..good
            },
            &payload,
        ),
        (
            Header {
                pkt_count: 2,
                req_id: 906,
                ..good
            },
            &payload,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        assert_eq!(ask(h, p), Status::BadRequest, "request {i}");
    }
    let after = b.lock().unwrap().counters();
    assert_eq!(
        after.offload_requests, before.offload_requests,
        "no unit ran"
    );
    // The victim's RAS with a guessed key, and PIDs with no key at all: denied.
    let vpid = victim.credentials().pid;
    let forged = put
        .header(Opcode::KvPut, vpid, 910)
        .with_credentials(cr.key, 0);
    assert_eq!(ask(forged, &payload), Status::Denied);
    for pid in 1..64u16 {
        let h = put.header(Opcode::KvPut, pid, 1000 + pid as u32);
        assert_eq!(ask(h, &payload), Status::Denied, "pid {pid}");
    }
    assert_eq!(
        victim.kv_get(b"secret").unwrap(),
        Some(b"the victim's value".to_vec())
    );
    // The well-formed request in the attacker's own RAS works, on its own key only.
    assert_eq!(ask(good, &payload), Status::Ok);
    assert_eq!(
        attacker.kv_get(b"secret").unwrap(),
        Some(b"overwritten".to_vec())
    );
    assert_eq!(
        victim.kv_get(b"secret").unwrap(),
        Some(b"the victim's value".to_vec())
    );
}

/// Staged puts from a hostile client: the value is read through the caller's own translation
/// (the victim's address names nothing in the attacker's RAS), a value whose check does not
/// match is not applied (RETRY_LATER, nothing recorded: the same request with the right value
/// then works), and lengths past the bound are refused. The victim's entry never changes.
#[test]
fn staged_puts_read_only_the_callers_memory_and_check_the_value() {
    use clio_proto::{Header, Status};
    let b = node(true, 1 << 20);
    let victim = client(&b);
    let secret = pattern(1000, 77);
    victim.kv_put(b"secret", &secret).unwrap();
    let attacker = client(&b);
    let cr = attacker.credentials();
    let ask = |h: Header, payload: &[u8]| status_of(&b, h, payload);
    let mine = attacker.ralloc(1 << 16).unwrap();
    let value = pattern(1000, 5);
    attacker.rwrite(mine, &value).unwrap();
    let staged = |va: u64, v: &[u8], id: u32| {
        let p = KvStagedPut::new(b"secret", va, v).unwrap();
        (
            p.header(cr.pid, id)
                .with_credentials(cr.key, attacker.client_id())
                .with_cookie(attacker.route_cookie()),
            p.encode(),
        )
    };
    // The check of another value: not applied, not recorded.
    let (h, p) = staged(mine, &pattern(1000, 6), 700);
    assert_eq!(ask(h, &p), Status::RetryLater);
    assert_eq!(attacker.kv_get(b"secret").unwrap(), None);
    // The victim's staging address (its first allocation sits where the attacker's did):
    // read through the attacker's translation, never the victim's memory.
    let victim_va = victim.ralloc(1 << 16).unwrap();
    victim.rwrite(victim_va, &secret).unwrap();
    let (h, p) = staged(victim_va + (1 << 20), &secret, 701);
    assert_ne!(ask(h, &p), Status::Ok);
    // Past the bound, and a length the payload does not carry: malformed.
    let (h, mut p) = staged(mine, &value, 702);
    p[2..4].copy_from_slice(&(MAX_STAGED_VALUE as u16 + 1).to_le_bytes());
    assert_eq!(ask(h, &p), Status::BadRequest);
    // The victim's entry is untouched; the attacker's own well-formed staged put works.
    assert_eq!(victim.kv_get(b"secret").unwrap(), Some(secret));
    let (h, p) = staged(mine, &value, 700);
    assert_eq!(
        ask(h, &p),
        Status::Ok,
        "the same request id, now with its value"
    );
    assert_eq!(attacker.kv_get(b"secret").unwrap(), Some(value));
}

#[test]
fn a_node_without_offloads_answers_unsupported() {
    let b = node(false, 1 << 20);
    let c = client(&b);
    assert_eq!(c.kv_get(b"k"), Err(ClioError::Unsupported));
    assert_eq!(c.kv_put(b"k", b"v"), Err(ClioError::Unsupported));
    assert_eq!(c.kv_delete(b"k"), Err(ClioError::Unsupported));
}

#[test]
fn the_store_outlives_many_leases_because_the_slow_path_keeps_it() {
    use clio_clib::TransportKind;
    use clio_sim::server::spawn_udp;
    let lease = Duration::from_millis(300);
    let cfg = clio_sim::BoardConfig {
        dram_bytes: 256 << 20,
        page_shift: PAGE_SHIFT,
        lease,
        offloads: clio_sim::Offloads::All,
        kv_store_bytes: 1 << 20,
        ..clio_sim::BoardConfig::default()
    };
    let server = spawn_udp(CBoard::new(&cfg).unwrap(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.udp_addr.unwrap();
    let c = Client::connect(TransportKind::Udp(addr).open().unwrap(), Config::default()).unwrap();
    c.kv_put(b"k", b"kept").unwrap();
    // Four leases of silence from every client but this one's heartbeats: unless the slow
    // path kept its own membership of the store's RAS alive, it would tear the store down.
    std::thread::sleep(lease * 4);
    assert_eq!(c.kv_get(b"k").unwrap(), Some(b"kept".to_vec()));
    assert_eq!(c.kv_put(b"k", b"still").unwrap(), KvPutOutcome::Replaced);
    drop(c);
    server.stop().unwrap();
}

/// Eight threads of one joined client put 1 KiB values (staged) over UDP: every value lands
/// whole, and no staging write waits behind another (staging writes are not page-tracked:
/// with tracking, writes to neighbouring slots of one page serialised and nearly every
/// staged put overtook its write and was answered RETRY_LATER).
#[test]
fn staged_puts_from_many_threads_over_udp_wait_for_nothing() {
    use clio_sim::{BoardConfig, SlowPathMode};
    use std::sync::atomic::{AtomicU64, Ordering};
    let keys = 1000u64;
    let b = CBoard::new(&BoardConfig {
        dram_bytes: 1 << 30,
        slowpath: SlowPathMode::InProcess,
        offloads: clio_sim::Offloads::All,
        kv_store_bytes: (keys * 2 + 1024) * (clio_proto::kv::RECORD_BYTES + 16),
        ..BoardConfig::default()
    })
    .unwrap();
    let srv = clio_sim::server::spawn_udp_threads(b, "127.0.0.1:0".parse().unwrap(), 4).unwrap();
    let addr = srv.udp_addr.unwrap();
    let owner = Client::connect_udp(addr).unwrap();
    let c = Arc::new(Client::join_udp(addr, owner.credentials()).unwrap());
    let next = Arc::new(AtomicU64::new(0));
    let threads: Vec<_> = (0..8)
        .map(|_| {
            let (c, next) = (c.clone(), next.clone());
            std::thread::spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= keys {
                    return;
                }
                let k = format!("user{i:010}");
                c.kv_put(k.as_bytes(), &pattern(MAX_STAGED_VALUE, i))
                    .unwrap();
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(c.stats().dependency_waits, 0, "{:?}", c.stats());
    for i in (0..keys).step_by(7) {
        let k = format!("user{i:010}");
        assert_eq!(
            owner.kv_get(k.as_bytes()).unwrap(),
            Some(pattern(MAX_STAGED_VALUE, i))
        );
    }
}

/// State dies with its RAS (issue 40): 30 tenants one after another each put 8 keys into a
/// store of 22 records and leave. The slow path frees a departed tenant's records before its
/// pid comes back, so the store never fills, and each new owner of a pid (6 pids: they come
/// back within a few tenants) finds none of its last owner's keys. Without the purge the
/// third tenant meets a full store, and a pid's next owner reads its last owner's values.
#[test]
fn a_departed_tenants_records_are_freed_before_its_pid_comes_back() {
    use std::collections::HashMap;
    let b = Arc::new(Mutex::new(
        CBoard::new(&clio_sim::BoardConfig {
            dram_bytes: 64 << 20,
            page_shift: PAGE_SHIFT,
            slowpath: clio_sim::SlowPathMode::InProcess,
            offloads: clio_sim::Offloads::All,
            kv_store_bytes: clio_proto::kv::HEADS_OFFSET + (24 << 10),
            limits: clio_sim::Limits {
                pids: 6,
                kv_purge_interval: std::time::Duration::ZERO,
                ..clio_sim::Limits::default()
            },
            ..clio_sim::BoardConfig::default()
        })
        .unwrap(),
    ));
    let mut last_keys: HashMap<u16, Vec<Vec<u8>>> = HashMap::new();
    let mut reused = 0;
    for t in 0..30 {
        let c = client(&b);
        if let Some(old) = last_keys.get(&c.pid()) {
            reused += 1;
            for k in old {
                assert_eq!(
                    c.kv_get(k).unwrap(),
                    None,
                    "tenant {t} sees its pid's last owner's key"
                );
            }
        }
        let keys: Vec<Vec<u8>> = (0..8).map(|i| format!("t{t}-k{i}").into_bytes()).collect();
        for k in &keys {
            c.kv_put(k, b"value")
                .unwrap_or_else(|e| panic!("tenant {t}: {e}"));
        }
        last_keys.insert(c.pid(), keys);
        c.unregister(false).unwrap();
    }
    assert!(reused >= 20, "pids came back {reused} times");
    let g = b.lock().unwrap();
    let s = g.slowpath_stats().unwrap();
    assert_eq!(s.kv_records_purged, 30 * 8);
    assert_eq!(s.kv_purge_failures, 0);
}
