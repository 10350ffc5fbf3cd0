//! Several writers on one replicated space (docs/replication.md, "Several writers"): clients
//! of a pool that name the same space share its address space at every node, its region
//! table and its backups' logs; their writes and atomics on one region are serialised by the
//! region's lock at its primary, so the replicas stay equal and a fail-over in the middle of
//! their traffic loses nothing; a lock whose holder vanished is taken over (the holder fenced
//! by a new epoch, the region's replicas made equal), and one whose holder is present is not.

mod common;

use clio_clib::{
    Client, ClioError, Config, LocalStore, MultiClient, MultiConfig, Pool, TransportKind,
};
use clio_proto::epoch::wire;
use common::udp_nodes;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const LEASE: Duration = Duration::from_millis(300);

fn cfg(space: &str) -> MultiConfig {
    let mut c = MultiConfig::default();
    c.node.heartbeat = false;
    c.space = Some(space.into());
    // A small log, applied many times while both writers append to it.
    c.log_bytes = 4 << 10;
    c.presence_lease = LEASE;
    c
}

fn pool() -> Pool {
    Pool {
        store: LocalStore::new(),
        name: "rack".into(),
    }
}

/// `n` nodes and two writers of one shared space of them.
fn two_writers(
    n: usize,
) -> (
    Vec<Option<clio_sim::server::ServerHandle>>,
    Vec<clio_clib::NodeSpec>,
    MultiClient,
    MultiClient,
) {
    let (s, addrs) = udp_nodes(n, 16 * MIB);
    let pool = pool();
    let a = MultiClient::connect_udp_pool(&addrs, cfg("shared"), pool.clone()).unwrap();
    let b = MultiClient::connect_udp_pool(&addrs, cfg("shared"), pool).unwrap();
    (s, addrs, a, b)
}

/// A member of the space's address space at `node`, joined as another process would (not a
/// writer of the space: it takes locks by hand, as a writer that then vanished would have).
fn ghost(m: &MultiClient, node: std::net::SocketAddr) -> Client {
    let creds = m
        .credentials()
        .into_iter()
        .find(|&(a, _)| a == node)
        .map(|(_, c)| c)
        .expect("the node is in the space");
    let c = Config {
        heartbeat: false,
        epoch: wire(m.epoch()),
        ..Config::default()
    };
    Client::join(TransportKind::Udp(node).open().unwrap(), c, creds).unwrap()
}

#[test]
fn two_writers_share_a_region_and_lose_nothing_when_its_primaries_die_under_them() {
    let (mut s, addrs, a, b) = two_writers(3);
    assert_eq!(
        a.credentials(),
        b.credentials(),
        "one address space per node, shared by the writers"
    );
    const LEN: u64 = 128 << 10;
    let r = a.ralloc(LEN, 3).unwrap();
    // b learns the region from the space's record.
    assert_eq!(b.rread(r, 8).unwrap(), vec![0; 8]);
    assert_eq!(b.placement(r), a.placement(r));
    let first = b.replicas_of(r).unwrap()[0];

    const THREADS: usize = 4;
    const OPS: usize = 150;
    let done = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let m = if t % 2 == 0 { a.clone() } else { b.clone() };
            let done = done.clone();
            std::thread::spawn(move || {
                for k in 0..OPS {
                    let slot = r + 4096 + ((t * OPS + k) * 64) as u64;
                    m.rwrite(slot, format!("t{t} k{k}").as_bytes()).unwrap();
                    m.fetch_add(r, 1).unwrap();
                    // All threads overwrite one word too: the replicas must agree on the last.
                    m.rwrite(r + 8, &((t * OPS + k) as u64).to_le_bytes())
                        .unwrap();
                    done.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    while done.load(Ordering::Relaxed) < THREADS * OPS / 2 {
        std::thread::sleep(Duration::from_millis(1));
    }
    // The primary dies under both writers.
    s[first] = None;
    for w in workers {
        w.join().unwrap();
    }
    assert!(a.node_dead(first) && b.node_dead(first));
    assert_eq!(a.epoch(), b.epoch());
    let (a_stats, b_stats) = (a.stats(), b.stats());
    assert!(
        a_stats.log_applies + b_stats.log_applies >= 2,
        "the shared 4 KiB logs were applied: {a_stats:?} {b_stats:?}"
    );
    // The region as its second primary holds it, read as a member there.
    let (paddr, pva) = a.placement(r).unwrap()[0];
    let image = ghost(&a, paddr).rread(pva, LEN as usize).unwrap();
    // The second primary dies too: the last replica, brought up to date from its log, must
    // be the same bytes, word for word (writes to one word from four threads in two
    // processes included: its log holds their records in the order the primary took them).
    s[addrs.iter().position(|n| n.addr == paddr).unwrap()] = None;
    assert_eq!(
        a.rread(r, LEN as usize).unwrap(),
        image,
        "the replicas diverged"
    );
    for m in [&a, &b] {
        assert_eq!(
            m.fetch_add(r, 0).unwrap(),
            (THREADS * OPS) as u64,
            "every increment counted once"
        );
        for t in 0..THREADS {
            for k in 0..OPS {
                let want = format!("t{t} k{k}");
                let slot = r + 4096 + ((t * OPS + k) * 64) as u64;
                assert_eq!(m.rread(slot, want.len()).unwrap(), want.as_bytes());
            }
        }
    }
    // Both go on writing at the survivor.
    b.rwrite(r + 16, b"after").unwrap();
    assert_eq!(a.rread(r + 16, 5).unwrap(), b"after");
}

#[test]
fn a_lock_whose_holder_vanished_is_taken_over_its_holder_fenced_and_the_region_repaired() {
    let (mut s, addrs, a, b) = two_writers(3);
    let r = a.ralloc(4096, 2).unwrap();
    a.rwrite(r, &[1; 64]).unwrap();
    let place = a.placement(r).unwrap();
    let (paddr, pva) = place[0];
    // A writer that vanished in the middle of a write: it took the region's lock, wrote the
    // primary, and never appended its record to the backup.
    let gone = ghost(&a, paddr);
    // (a keeps the lock of its last write a moment, in case it writes again.)
    wait_for("a never gave its lock back", || {
        gone.compare_and_swap(pva + 4096, 0, 0xdead_0001).unwrap() == 0
    });
    gone.rwrite(pva, &[7; 64]).unwrap();
    let epoch = b.epoch();

    let t = Instant::now();
    b.rwrite(r + 1024, b"after the break").unwrap();
    assert!(
        t.elapsed() >= LEASE,
        "the lock was waited for as long as a presence lease"
    );
    assert_eq!((b.stats().locks_broken, b.stats().repairs), (1, 1));
    assert_eq!(b.epoch(), epoch + 1, "taking a lock over stores a new view");
    // The vanished writer, should it still run, is refused at the primary.
    assert!(matches!(gone.rwrite(pva, &[9; 8]), Err(ClioError::Stale)));
    // The backup was made equal to the primary: lose the primary and read there.
    let p = addrs.iter().position(|n| n.addr == paddr).unwrap();
    s[p] = None;
    assert_eq!(a.rread(r, 64).unwrap(), vec![7; 64]);
    assert_eq!(a.rread(r + 1024, 15).unwrap(), b"after the break");
}

#[test]
fn a_lock_whose_holder_is_present_is_waited_for() {
    let (_s, _, a, b) = two_writers(2);
    let r = a.ralloc(4096, 2).unwrap();
    let (paddr, pva) = a.placement(r).unwrap()[0];
    // a holds the region's lock (taken by hand here, as a long operation of a's would).
    let hand = ghost(&a, paddr);
    assert_eq!(
        hand.compare_and_swap(pva + 4096, 0, a.lock_token())
            .unwrap(),
        0
    );
    let wrote = Arc::new(AtomicUsize::new(0));
    let w = {
        let b = b.clone();
        let wrote = wrote.clone();
        std::thread::spawn(move || {
            b.rwrite(r, b"waited").unwrap();
            wrote.store(1, Ordering::Release);
        })
    };
    std::thread::sleep(LEASE * 4);
    assert_eq!(
        wrote.load(Ordering::Acquire),
        0,
        "a present holder keeps its lock"
    );
    assert_eq!(
        hand.compare_and_swap(pva + 4096, a.lock_token(), 0)
            .unwrap(),
        a.lock_token()
    );
    w.join().unwrap();
    assert_eq!(a.rread(r, 6).unwrap(), b"waited");
    assert_eq!(b.stats().locks_broken, 0);
}

#[test]
fn a_space_needs_a_pool_and_a_record_that_parses() {
    let (_s, addrs) = udp_nodes(1, 16 * MIB);
    assert!(matches!(
        MultiClient::connect_udp(&addrs, cfg("shared")),
        Err(ClioError::InvalidArgument(_))
    ));
    let pool = pool();
    let key = pool.space_key("shared");
    assert!(pool
        .store
        .compare_and_put(
            &key,
            None,
            b"clio-space 1\nregion 0x0 len 8 target 1 10.9.9.9:1@0x0\n"
        )
        .unwrap());
    match MultiClient::connect_udp_pool(&addrs, cfg("shared"), pool) {
        Err(ClioError::ConfigStore(m)) => assert!(m.contains("10.9.9.9"), "{m}"),
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("a record naming an unknown node was used"),
    }
}

#[test]
fn writers_of_different_spaces_share_nothing() {
    let (_s, addrs) = udp_nodes(2, 16 * MIB);
    let pool = pool();
    let a = MultiClient::connect_udp_pool(&addrs, cfg("one"), pool.clone()).unwrap();
    let b = MultiClient::connect_udp_pool(&addrs, cfg("two"), pool.clone()).unwrap();
    assert_ne!(a.credentials(), b.credentials());
    let r = a.ralloc(4096, 2).unwrap();
    assert!(matches!(b.rread(r, 8), Err(ClioError::Unmapped { .. })));
}

/// Writes its slots of region `r` (round and round) and increments the shared counter at `r`
/// until `stop`; returns the number of its operations that returned.
fn keep_writing(
    m: &MultiClient,
    r: u64,
    tag: u64,
    stop: Arc<std::sync::atomic::AtomicBool>,
    acked: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<()> {
    let m = m.clone();
    std::thread::spawn(move || {
        let mut i = 0u64;
        while !stop.load(Ordering::Acquire) {
            let slot = r + 4096 + (tag * 512 + i % 512) * 16;
            m.rwrite(slot, &[tag.to_le_bytes(), i.to_le_bytes()].concat())
                .unwrap_or_else(|e| panic!("writer {tag}: write {i}: {e}"));
            m.fetch_add(r, 1)
                .unwrap_or_else(|e| panic!("writer {tag}: increment {i}: {e}"));
            i += 1;
            acked.store(i as usize, Ordering::Release);
        }
    })
}

fn wait_for(what: &str, mut f: impl FnMut() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(20), "{what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_shared_region_heals_under_both_writers_through_failures_and_a_readmission() {
    let (mut s, addrs, a, b) = two_writers(3);
    let r = a.ralloc(64 << 10, 2).unwrap();
    assert_eq!(a.replicas_of(r).unwrap(), vec![0, 1]);
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (na, nb) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let wa = keep_writing(&a, r, 0, stop.clone(), na.clone());
    let wb = keep_writing(&b, r, 1, stop.clone(), nb.clone());
    let progress = |n: &AtomicUsize| {
        let from = n.load(Ordering::Acquire);
        wait_for("a writer stalled", || {
            n.load(Ordering::Acquire) >= from + 20
        });
    };
    progress(&na);
    progress(&nb);
    let replicas = |m: &MultiClient| m.replicas_of(r).unwrap();

    // 1. Node 0, the primary, dies: one of the writers heals the region onto node 2.
    s[0] = None;
    wait_for("not healed onto node 2", || {
        replicas(&a) == vec![1, 2] && replicas(&b) == vec![1, 2]
    });
    progress(&na);
    progress(&nb);
    // 2. Node 0 comes back empty and is readmitted by a; b hears of it.
    s[0] = Some(common::udp_node_at(addrs[0].addr));
    a.readmit(0).unwrap();
    wait_for("b did not readmit node 0", || !b.node_dead(0));
    assert_eq!(
        a.credentials(),
        b.credentials(),
        "one address space at node 0 again"
    );
    // 3. Node 1 dies: healed onto the readmitted node 0.
    s[1] = None;
    wait_for("not healed onto node 0", || {
        replicas(&a) == vec![2, 0] && replicas(&b) == vec![2, 0]
    });
    progress(&na);
    progress(&nb);
    // 4. Node 2 dies: what is left is the copy healing made on node 0.
    s[2] = None;
    progress(&na);
    progress(&nb);
    stop.store(true, Ordering::Release);
    wa.join().unwrap();
    wb.join().unwrap();
    let (na, nb) = (na.load(Ordering::Acquire), nb.load(Ordering::Acquire));
    assert_eq!(replicas(&a), vec![0]);
    for m in [&a, &b] {
        assert_eq!(m.fetch_add(r, 0).unwrap(), (na + nb) as u64, "the counter");
        for (tag, n) in [(0u64, na as u64), (1, nb as u64)] {
            for i in n.saturating_sub(512)..n {
                let slot = r + 4096 + (tag * 512 + i % 512) * 16;
                let want = [tag.to_le_bytes(), i.to_le_bytes()].concat();
                assert_eq!(
                    m.rread(slot, 16).unwrap(),
                    want,
                    "writer {tag}: op {i} lost"
                );
            }
        }
    }
    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!(
        sa.replicas_added + sb.replicas_added,
        2,
        "one fill per failure, by one writer: {sa:?} {sb:?}"
    );
}

#[test]
fn a_writer_keeps_a_regions_lock_between_operations_and_gives_it_back_when_dropped() {
    let (_s, _, a, b) = two_writers(2);
    let r = a.ralloc(4096, 2).unwrap();
    let (paddr, pva) = a.placement(r).unwrap()[0];
    let look = ghost(&a, paddr);
    let word = |c: &Client| u64::from_le_bytes(c.rread(pva + 4096, 8).unwrap().try_into().unwrap());
    // Back to back, a keeps the lock: its next operation costs no lock round trip.
    let taken = a.stats().locks_taken;
    for i in 0..100u64 {
        a.rwrite(r, &i.to_le_bytes()).unwrap();
    }
    let taken = a.stats().locks_taken - taken;
    assert!(
        taken < 50,
        "the lock was taken {taken} times for 100 writes"
    );
    // Idle, it gives the lock back by itself.
    wait_for("a never gave its idle lock back", || word(&look) == 0);
    // Dropped while it keeps one, it gives it back at once: b does not wait a presence lease.
    a.rwrite(r, b"three").unwrap();
    drop(a);
    let t = Instant::now();
    b.rwrite(r, b"four!").unwrap();
    assert!(t.elapsed() < LEASE, "b waited for a lock a had dropped");
    assert_eq!(b.stats().locks_broken, 0);
    assert_eq!(b.rread(r, 5).unwrap(), b"four!");
}
