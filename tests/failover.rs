//! Fail-over across memory-node processes: three `clio board --memory-file` processes on
//! loopback, one client over all three (`MultiClient`, durable replication). A writer thread
//! writes successive slots of a region replicated on 2 or 3 nodes and bumps a replicated
//! counter; the primary is SIGKILLed at a seeded random moment. Afterwards every
//! acknowledged write is readable, the counter equals the number of acknowledged increments,
//! no operation waited longer than the documented bound, and the restarted node is skipped.

mod common;

use clio_clib::{MultiClient, MultiConfig, NodeSpec};
use common::{memory_file_board, memory_file_boards};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SLOT: u64 = 512;
const SLOTS: u64 = 2000;

struct Progress {
    acked: AtomicU64,
    worst: Mutex<Duration>,
}

fn writer(m: MultiClient, a: u64, stop: Arc<AtomicBool>, p: Arc<Progress>) {
    let mut i = 0;
    while !stop.load(Ordering::Acquire) && i < SLOTS {
        let t = Instant::now();
        m.rwrite(a + 8 + i * SLOT, &(i + 1).to_le_bytes().repeat(8))
            .unwrap_or_else(|e| panic!("write {i} failed across the fail-over: {e}"));
        let old = m
            .fetch_add(a, 1)
            .unwrap_or_else(|e| panic!("increment {i} failed across the fail-over: {e}"));
        assert_eq!(old, i, "the counter skipped or repeated an increment");
        let took = t.elapsed();
        let mut w = p.worst.lock().unwrap();
        *w = (*w).max(took);
        drop(w);
        p.acked.store(i + 1, Ordering::Release);
        i += 1;
    }
}

#[test]
fn the_primary_killed_mid_workload_loses_no_acknowledged_write() {
    let mut compactions = 0;
    for seed in 0..4u64 {
        let mut rng = StdRng::seed_from_u64(0xFA11 + seed);
        let replicas = 2 + (seed % 2) as usize;
        let dir = tempfile::tempdir().unwrap();
        let (ports, files, mut nodes) = memory_file_boards(dir.path(), 3);
        // The node with the most room becomes the primary: a different one per seed.
        let specs: Vec<NodeSpec> = ports
            .iter()
            .enumerate()
            .map(|(i, p)| NodeSpec {
                addr: SocketAddr::from(([127, 0, 0, 1], *p)),
                capacity: (32 << 20) + ((i as u64 + seed) % 3 << 20),
            })
            .collect();
        let cfg = MultiConfig {
            durable: true,
            log_bytes: 4 << 10, // applied and reset during the runs
            ..MultiConfig::default()
        };
        let bound = cfg.detection_bound() + Duration::from_secs(1);
        let m = MultiClient::connect_udp(&specs, cfg).unwrap();
        let a = m.ralloc(8 + SLOTS * SLOT, replicas).unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let p = Arc::new(Progress {
            acked: AtomicU64::new(0),
            worst: Mutex::new(Duration::ZERO),
        });
        let w = {
            let (m, stop, p) = (m.clone(), stop.clone(), p.clone());
            std::thread::spawn(move || writer(m, a, stop, p))
        };
        std::thread::sleep(Duration::from_millis(rng.gen_range(50..300)));
        if seed % 2 == 0 {
            // Half the seeds kill the primary only after a full log was applied and reset
            // (how long that takes depends on the machine's speed, not on the seed).
            let t = Instant::now();
            while m.stats().log_applies == 0 && t.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let primary = m.replicas_of(a).unwrap()[0];
        let before = p.acked.load(Ordering::Acquire);
        nodes.0[primary].kill().unwrap(); // SIGKILL
        nodes.0[primary].wait().unwrap();
        let killed = Instant::now();
        // Keep going until the writer made progress past the fail-over.
        while p.acked.load(Ordering::Acquire) < before + 20 && killed.elapsed() < 2 * bound {
            std::thread::sleep(Duration::from_millis(10));
        }
        stop.store(true, Ordering::Release);
        w.join().expect("the writer rode out the fail-over");
        let n = p.acked.load(Ordering::Acquire);
        let worst = *p.worst.lock().unwrap();
        eprintln!(
            "seed {seed}: {replicas} replicas, primary {primary} killed after {before} ops, \
             {n} acknowledged, slowest op {worst:?}, {:?}",
            m.stats()
        );
        assert!(
            n >= before + 20,
            "the workload continued after the fail-over"
        );
        assert!(
            worst < bound,
            "an operation waited {worst:?} (bound {bound:?})"
        );
        assert!(m.node_dead(primary));
        assert_eq!(m.stats().promotions, 1);
        compactions += m.stats().log_applies - 1;
        for i in 0..n {
            let got = m.rread(a + 8 + i * SLOT, 64).unwrap();
            assert_eq!(
                got,
                (i + 1).to_le_bytes().repeat(8),
                "acknowledged slot {i} lost"
            );
        }
        assert_eq!(m.rread(a, 8).unwrap(), n.to_le_bytes(), "counter exact");
        // The killed node comes back on its file: it is stale and skipped.
        nodes.0[primary] = memory_file_board(&files[primary], ports[primary]);
        assert!(m.node_dead(primary));
        let b = m.ralloc(1 << 16, 2).unwrap();
        assert!(!m.replicas_of(b).unwrap().contains(&primary));
        m.rwrite(b, b"after").unwrap();
        assert_eq!(m.rread(b, 5).unwrap(), b"after");
        drop(nodes);
    }
    assert!(
        compactions > 0,
        "full logs were applied and reset during the runs"
    );
}
