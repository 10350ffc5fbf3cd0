//! The configuration manager on a real etcd (started per test on free loopback ports): its
//! compare-and-put lets exactly one proposal win, its watch reports changes and stops, hostile
//! answers are errors, and clients of one pool agree on a node's failure through it.
//!
//! Without an etcd binary each test says so in one line and passes, unless
//! `CLIO_REQUIRE_ETCD` is set (CI sets it: there these tests must run).

use clio_clib::{ConfigStore, MultiClient, MultiConfig, NodeSpec, Pool};
use clio_confmgr::{Etcd, EtcdError, EtcdServer, EtcdStore};
use clio_sim::server::{spawn_udp_spinning, ServerHandle};
use clio_sim::{BoardConfig, CBoard};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn etcd() -> Option<EtcdServer> {
    EtcdServer::start_or_skip()
}

#[test]
fn one_of_many_racing_proposals_wins_and_counted_updates_are_exact() {
    let Some(server) = etcd() else { return };
    let e = Etcd::new(server.addr());
    // Eight creators race for an absent key: one wins.
    let wins: usize = std::thread::scope(|s| {
        let hs: Vec<_> = (0..8u8)
            .map(|i| {
                let e = e.clone();
                s.spawn(move || e.compare_and_put(b"/t/first", None, &[i]).unwrap() as usize)
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    assert_eq!(wins, 1);
    assert!(e.get(b"/t/first").unwrap().is_some());
    // Four threads add 25 each through read and compare-and-put: nothing lost, nothing twice.
    e.put(b"/t/n", b"0").unwrap();
    std::thread::scope(|s| {
        for _ in 0..4 {
            let e = e.clone();
            s.spawn(move || {
                for _ in 0..25 {
                    loop {
                        let kv = e.get(b"/t/n").unwrap().unwrap();
                        let n: u64 = std::str::from_utf8(&kv.value).unwrap().parse().unwrap();
                        let next = (n + 1).to_string();
                        if e.compare_and_put(b"/t/n", Some(kv.revision), next.as_bytes())
                            .unwrap()
                        {
                            break;
                        }
                    }
                }
            });
        }
    });
    assert_eq!(e.get(b"/t/n").unwrap().unwrap().value, b"100");
    assert_eq!(e.get(b"/t/absent").unwrap(), None);
    // A stale revision is refused and changes nothing.
    let kv = e.get(b"/t/n").unwrap().unwrap();
    assert!(!e
        .compare_and_put(b"/t/n", Some(kv.revision - 1), b"x")
        .unwrap());
    assert!(!e.compare_and_put(b"/t/n", None, b"x").unwrap());
    assert_eq!(e.get(b"/t/n").unwrap().unwrap(), kv);
}

#[test]
fn a_watch_reports_each_change_and_stops_when_dropped() {
    let Some(server) = etcd() else { return };
    let store = EtcdStore::new(server.addr());
    let heard = Arc::new(AtomicU64::new(0));
    let h = heard.clone();
    let guard = store
        .watch(
            "/t/w",
            Box::new(move || {
                h.fetch_add(1, Ordering::SeqCst);
                true
            }),
        )
        .unwrap();
    let wait_for = |n: u64| {
        let t = Instant::now();
        while heard.load(Ordering::SeqCst) < n {
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "heard {heard:?} of {n}"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    for (i, v) in [b"a", b"b", b"c"].iter().enumerate() {
        let rev = store.read("/t/w").unwrap().map(|(_, r)| r);
        assert!(store.compare_and_put("/t/w", rev, *v).unwrap());
        wait_for(i as u64 + 1);
    }
    drop(guard);
    std::thread::sleep(Duration::from_millis(100));
    let before = heard.load(Ordering::SeqCst);
    store.etcd().put(b"/t/w", b"d").unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        heard.load(Ordering::SeqCst),
        before,
        "a dropped watch hears nothing"
    );
}

/// A server that answers every request with `answer`, as a hostile or broken endpoint would.
fn liar(answer: &'static [u8]) -> std::net::SocketAddr {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = l.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in l.incoming() {
            let Ok(mut s) = s else { return };
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf);
            let _ = s.write_all(answer);
        }
    });
    addr
}

#[test]
fn a_hostile_or_broken_endpoint_is_an_error_not_a_crash() {
    let cases: [&'static [u8]; 7] = [
        b"garbage\r\n\r\n",
        b"HTTP/1.1 500 Internal\r\nContent-Length: 4\r\n\r\noops",
        b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!",
        b"HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n{\"kvs\":[{\"key\":\"!!\",\"value\":1}]}      ",
        b"HTTP/1.1 200 OK\r\nContent-Length: 58\r\n\r\n{\"kvs\":[{\"key\":\"Zm9v\",\"value\":\"YmFy\",\"mod_revision\":\"x\"}]}",
    ];
    for c in cases {
        let e = Etcd::new(liar(c));
        let r = e.get(b"foo");
        assert!(
            matches!(r, Err(EtcdError::Http(_)) | Err(EtcdError::Answer(_))),
            "{:?}: {r:?}",
            String::from_utf8_lossy(c)
        );
    }
    // Nobody listening: an error naming the address.
    let gone = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let err = Etcd::new(gone).get(b"foo").unwrap_err().to_string();
    assert!(err.contains(&gone.to_string()), "{err}");
}

fn node() -> ServerHandle {
    let b = CBoard::new(&BoardConfig {
        dram_bytes: 64 << 20,
        page_shift: 16,
        ..BoardConfig::default()
    })
    .unwrap();
    spawn_udp_spinning(b, "127.0.0.1:0".parse().unwrap(), Duration::ZERO).unwrap()
}

#[test]
fn clients_of_one_pool_agree_on_a_failure_through_etcd() {
    let Some(server) = etcd() else { return };
    let mut s: Vec<ServerHandle> = (0..3).map(|_| node()).collect();
    let specs: Vec<NodeSpec> = s
        .iter()
        .map(|h| NodeSpec {
            addr: h.udp_addr.unwrap(),
            capacity: 16 << 20,
        })
        .collect();
    let mut cfg = MultiConfig::default();
    cfg.node.heartbeat = false;
    let pool = Pool {
        store: EtcdStore::new(server.addr()),
        name: "rack-a".into(),
    };
    let a = MultiClient::connect_udp_pool(&specs, cfg.clone(), pool.clone()).unwrap();
    let b = MultiClient::connect_udp_pool(&specs, cfg.clone(), pool.clone()).unwrap();
    let (ra, rb) = (a.ralloc(1 << 16, 2).unwrap(), b.ralloc(1 << 16, 2).unwrap());
    a.rwrite(ra, b"from a").unwrap();
    b.rwrite(rb, b"from b").unwrap();
    assert_eq!((a.epoch(), b.epoch()), (1, 1));
    drop(s.remove(0));
    assert_eq!(a.rread(ra, 6).unwrap(), b"from a");
    assert_eq!(a.epoch(), 2);
    // b hears of it through etcd's watch, not through a timeout of its own.
    let t = Instant::now();
    while !b.node_dead(0) {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "b never heard of the failure"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
    let heard = t.elapsed();
    assert_eq!(b.epoch(), 2);
    let t = Instant::now();
    assert_eq!(b.rread(rb, 6).unwrap(), b"from b");
    assert!(t.elapsed() < cfg.detection_bound() / 2, "{:?}", t.elapsed());
    eprintln!("b had adopted epoch 2 {heard:?} after a's operation returned");
    // The view in etcd, as an operator reads it (`etcdctl get /clio/pools/rack-a/view`).
    let v = Etcd::new(server.addr())
        .get(b"/clio/pools/rack-a/view")
        .unwrap()
        .unwrap();
    let text = String::from_utf8(v.value).unwrap();
    assert!(text.contains("epoch 2\n"), "{text}");
    assert!(text.contains(&format!("out {}\n", specs[0].addr)), "{text}");
    // Both clients are present under their leases, at the epoch they follow; one that goes
    // revokes its lease, and its entry with it.
    let mut want = vec![
        (a.client_id().to_string(), 2),
        (b.client_id().to_string(), 2),
    ];
    want.sort();
    assert_eq!(pool.clients().unwrap(), want);
    let a_id = a.client_id().to_string();
    drop(a);
    // (Its background healer may still hold the client for the heal it is doing.)
    let t = Instant::now();
    while pool.clients().unwrap() != vec![(b.client_id().to_string(), 2)] {
        assert!(t.elapsed() < Duration::from_secs(10), "{a_id} never left");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A leased entry lives while its holder does, takes new values under its lease, and goes
/// when the holder drops it (at once: the lease is revoked) or when the lease ends unrenewed.
#[test]
fn a_leased_entry_lives_with_its_holder() {
    let Some(server) = etcd() else { return };
    let store = EtcdStore::new(server.addr());
    let read = |k: &str| store.read(k).unwrap().map(|(v, _)| v);
    let e = store
        .put_leased("/t/present", b"epoch 1", Duration::from_secs(1))
        .unwrap();
    assert_eq!(read("/t/present").as_deref(), Some(&b"epoch 1"[..]));
    e.set(b"epoch 2").unwrap();
    // Renewed (three times a lease): still there well past one lease.
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(read("/t/present").as_deref(), Some(&b"epoch 2"[..]));
    drop(e);
    assert_eq!(read("/t/present"), None, "revoked with its holder");
    // A lease nobody renews (a holder that died) ends by itself.
    let etcd = Etcd::new(server.addr());
    let lease = etcd.grant(1).unwrap();
    etcd.put_leased(b"/t/dead", b"epoch 1", lease).unwrap();
    let t = Instant::now();
    while read("/t/dead").is_some() {
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "the lease never ended"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}
