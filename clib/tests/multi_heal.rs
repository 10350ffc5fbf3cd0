//! Healing a replicated space (clib/src/multi/heal.rs): a region that lost a replica gets a
//! new one on another node, filled while a thread keeps writing it; a restarted node is
//! readmitted and used again; failures one after another, with a restart between them, lose
//! no acknowledged write and keep counters exact.

mod common;

use clio_clib::{LocalStore, MultiClient, MultiConfig, Pool};
use common::{udp_node_at, udp_nodes};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;
const LEN: u64 = 512 << 10;

fn cfg() -> MultiConfig {
    let mut c = MultiConfig::default();
    c.node.heartbeat = false;
    // Small logs: applied many times while replicas are filled; small fill steps, so the
    // writer's operations fall between them.
    c.log_bytes = 16 << 10;
    c.heal_chunk = 4 << 10;
    // Healed when the test says so (the background healer has a test of its own).
    c.auto_heal = false;
    c
}

/// A thread that writes the region (random extents, then an increment of the counter at
/// offset 0) until stopped, keeping a shadow of what was acknowledged.
struct Writer {
    stop: Arc<AtomicBool>,
    done: Arc<AtomicU64>,
    h: std::thread::JoinHandle<(Vec<u8>, u64)>,
}

fn writer(m: &MultiClient, a: u64, seed: u64) -> Writer {
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let (m, s, acked) = (m.clone(), stop.clone(), done.clone());
    let h = std::thread::spawn(move || {
        let mut shadow = vec![0u8; LEN as usize];
        let mut x = seed;
        let mut count = 0u64;
        let mut i = 0usize;
        while !s.load(Ordering::Acquire) || i < 50 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let off = 64 + x % (LEN - 64 - 3000);
            let len = 1 + (x >> 24) as usize % 2500;
            let d: Vec<u8> = (0..len).map(|j| (i * 31 + j) as u8 ^ seed as u8).collect();
            m.rwrite(a + off, &d).unwrap();
            shadow[off as usize..off as usize + len].copy_from_slice(&d);
            assert_eq!(m.fetch_add(a, 1).unwrap(), count, "the counter is exact");
            count += 1;
            acked.store(count, Ordering::Release);
            i += 1;
        }
        (shadow, count)
    });
    Writer { stop, done, h }
}

impl Writer {
    /// Operations acknowledged so far.
    fn done(&self) -> u64 {
        self.done.load(Ordering::Acquire)
    }

    fn finish(self) -> (Vec<u8>, u64) {
        self.stop.store(true, Ordering::Release);
        self.h.join().unwrap()
    }
}

fn check(m: &MultiClient, a: u64, shadow: &[u8], count: u64) {
    let got = m.rread(a, LEN as usize).unwrap();
    assert_eq!(u64::from_le_bytes(got[..8].try_into().unwrap()), count);
    assert!(got[8..] == shadow[8..], "every acknowledged write is there");
}

#[test]
fn a_region_that_lost_a_replica_gets_one_back_while_it_is_written() {
    let (mut s, specs) = udp_nodes(3, 16 * MIB);
    let m = MultiClient::connect_udp(&specs, cfg()).unwrap();
    let a = m.ralloc(LEN, 2).unwrap();
    assert_eq!(m.replicas_of(a).unwrap(), vec![0, 1]);
    let w = writer(&m, a, 0x9E37_79B9_7F4A_7C15);
    std::thread::sleep(Duration::from_millis(100));
    s[0] = None; // the primary stops
    let t = Instant::now();
    while !m.node_dead(0) {
        assert!(t.elapsed() < Duration::from_secs(5));
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(m.replicas_of(a).unwrap(), vec![1]);
    // The writer goes on while the new replica is filled.
    let before = w.done();
    let rep = m.heal().unwrap();
    let during = w.done() - before;
    assert_eq!(
        (rep.replicas_added, rep.bytes_copied, rep.still_short),
        (1, LEN, 0)
    );
    assert!(during >= 10, "only {during} writes fell into the fill");
    assert_eq!(m.replicas_of(a).unwrap(), vec![1, 2]);
    let (shadow, count) = w.finish();
    assert!(count > 50);
    check(&m, a, &shadow, count);
    // The new replica holds everything: the old backup stops, the new one serves.
    s[1] = None;
    check(&m, a, &shadow, count);
    assert_eq!(m.replicas_of(a).unwrap(), vec![2]);
    assert_eq!(m.heal().unwrap().still_short, 1, "no third node left");
}

#[test]
fn failures_one_after_another_with_a_restart_between_lose_nothing() {
    let (mut s, specs) = udp_nodes(3, 16 * MIB);
    let pool = Pool {
        store: LocalStore::new(),
        name: "p".into(),
    };
    let m = MultiClient::connect_udp_pool(&specs, cfg(), pool.clone()).unwrap();
    let other = MultiClient::connect_udp_pool(&specs, cfg(), pool).unwrap();
    let a = m.ralloc(LEN, 2).unwrap();
    let w = writer(&m, a, 0xD1B5_4A32_D192_ED03);
    let wait_dead = |i: usize| {
        let t = Instant::now();
        while !m.node_dead(i) {
            assert!(
                t.elapsed() < Duration::from_secs(5),
                "node {i} never declared dead"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    // 1. Node 0 (the primary) fails; the region is healed onto node 2.
    std::thread::sleep(Duration::from_millis(50));
    s[0] = None;
    wait_dead(0);
    assert_eq!(m.heal().unwrap().replicas_added, 1);
    assert_eq!(m.replicas_of(a).unwrap(), vec![1, 2]);
    // 2. Node 0 restarts on its address, empty, and is readmitted: the other client of the
    // pool hears of it and uses it again too.
    s[0] = Some(udp_node_at(specs[0].addr));
    assert!(other.node_dead(0));
    m.readmit(0).unwrap();
    assert!(!m.node_dead(0));
    assert!(
        !other.node_dead(0),
        "the readmission reached the pool's other client"
    );
    assert_eq!(m.epoch(), 3);
    assert_eq!(m.stats().readmitted, 1);
    // 3. Node 1 (now the primary) fails; healed onto the readmitted node 0.
    std::thread::sleep(Duration::from_millis(50));
    s[1] = None;
    wait_dead(1);
    assert_eq!(m.heal().unwrap().replicas_added, 1);
    assert_eq!(m.replicas_of(a).unwrap(), vec![2, 0]);
    // 4. Node 2 fails: node 0, filled by the heal, is all that is left.
    std::thread::sleep(Duration::from_millis(50));
    s[2] = None;
    wait_dead(2);
    let (shadow, count) = w.finish();
    assert_eq!(m.replicas_of(a).unwrap(), vec![0]);
    check(&m, a, &shadow, count);
    let st = m.stats();
    assert_eq!((st.failed_nodes, st.replicas_added), (3, 2));
}

#[test]
fn the_background_healer_restores_a_region_by_itself() {
    let (mut s, specs) = udp_nodes(3, 16 * MIB);
    let mut c = cfg();
    c.auto_heal = true;
    let m = MultiClient::connect_udp(&specs, c).unwrap();
    let a = m.ralloc(LEN, 2).unwrap();
    let w = writer(&m, a, 0x2545_F491_4F6C_DD1D);
    std::thread::sleep(Duration::from_millis(50));
    s[0] = None;
    let t = Instant::now();
    while m.replicas_of(a).unwrap() != vec![1, 2] {
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "not healed: {:?}",
            m.replicas_of(a)
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(m.short_regions(), 0);
    let (shadow, count) = w.finish();
    s[1] = None;
    check(&m, a, &shadow, count);
    assert_eq!(m.stats().replicas_added, 1);
    // Dropping the client ends its healer (nothing to observe but that this returns and the
    // nodes stop cleanly).
    drop(m);
}
