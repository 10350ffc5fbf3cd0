//! Crash tests: the node (`clio board --memory-file`) and, separately, its slow-path daemon
//! are killed with SIGKILL at seeded random points of a write-heavy workload and restarted on
//! the same file. Every acknowledged durable write must be there afterwards, allocations made
//! before the crash must still be usable, and a client that keeps retrying across the restart
//! simply goes on (its RAS, key and membership come back from the file). Transactions stay
//! whole: after any number of crashes every slot a transaction writes holds the same
//! transaction, at least the last one whose commit returned.

mod common;

use clio_clib::{Client, ClioError, Config, TransportKind};
use common::{free_port, spawn_board, Boards};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SLOT: u64 = 4096;
const SLOTS: u64 = 4000;

/// Start `clio board` on `file` and `port` and wait until it listens.
fn board(file: &Path, port: u16, extra: &[&str]) -> Child {
    let listen = format!("127.0.0.1:{port}");
    let file = file.to_string_lossy();
    let mut args = vec!["--memory", "256M", "--page-size", "1M", "--listen", &listen];
    args.extend(["--memory-file", &file]);
    args.extend(extra);
    spawn_board(&args)
}

fn kill9(child: &mut Child) {
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
}

/// A client that rides out restarts: generous retries, slow back-off.
fn patient() -> Config {
    Config {
        max_retries: 60,
        max_rto: Duration::from_millis(200),
        ..Config::default()
    }
}

/// Durable writes of `slot index` into successive slots until `stop`; the highest slot whose
/// write was acknowledged.
fn writer(c: Client, va: u64, stop: Arc<AtomicBool>, acked: Arc<AtomicU64>) {
    let mut i = 0;
    while !stop.load(Ordering::Acquire) && i < SLOTS {
        let v = (i + 1).to_le_bytes().repeat(8);
        c.rwrite_durable(va + i * SLOT, &v)
            .unwrap_or_else(|e| panic!("durable write {i} failed across the crash: {e}"));
        acked.store(i + 1, Ordering::Release);
        i += 1;
    }
}

fn check(c: &Client, va: u64, acked: u64) {
    for i in 0..acked {
        let got = c.rread(va + i * SLOT, 64).unwrap();
        assert_eq!(
            got,
            (i + 1).to_le_bytes().repeat(8),
            "acknowledged slot {i} lost"
        );
    }
}

#[test]
fn the_node_killed_at_random_points_loses_no_acknowledged_durable_write() {
    for seed in 0..3u64 {
        let mut rng = StdRng::seed_from_u64(0xC4A5 + seed);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mem");
        let port = free_port();
        let mut node = board(&file, port, &[]);
        let addr = format!("127.0.0.1:{port}").parse().unwrap();
        let c = Client::connect(TransportKind::Udp(addr).open().unwrap(), patient()).unwrap();
        let va = c.ralloc(SLOTS * SLOT).unwrap();
        let (stop, acked) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicU64::new(0)),
        );
        let w = {
            let (c, stop, acked) = (c.clone(), stop.clone(), acked.clone());
            std::thread::spawn(move || writer(c, va, stop, acked))
        };
        for crash in 0..2 {
            std::thread::sleep(Duration::from_millis(rng.gen_range(50..300)));
            let before = acked.load(Ordering::Acquire);
            kill9(&mut node);
            eprintln!("seed {seed} crash {crash}: killed after {before} acknowledged writes");
            std::thread::sleep(Duration::from_millis(rng.gen_range(0..100)));
            node = board(&file, port, &[]);
        }
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Ordering::Release);
        w.join().expect("the writer rode out the crashes");
        let n = acked.load(Ordering::Acquire);
        assert!(n > 0);
        check(&c, va, n);
        // The allocation made before the crashes still takes new data.
        c.rwrite(va + (SLOTS - 1) * SLOT, b"after").unwrap();
        assert_eq!(c.rread(va + (SLOTS - 1) * SLOT, 5).unwrap(), b"after");
        drop(c);
        kill9(&mut node);
    }
}

#[test]
fn the_slow_path_daemon_killed_and_restarted_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mem");
    let rings = dir.path().join("rings");
    let port = free_port();
    let daemon_bin = common::slowpath_daemon_bin();
    let ring_arg = rings.to_str().unwrap();
    let node = board(
        &file,
        port,
        &["--slowpath", "external", "--ring-file", ring_arg],
    );
    let daemon = || {
        Command::new(&daemon_bin)
            .arg("--ring-file")
            .arg(&rings)
            .arg("--dram-file")
            .arg(&file)
            .arg("--persistent")
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    // The node (0) and the daemon (1), killed also if the test fails.
    let mut procs = Boards(vec![node, daemon()]);
    let addr = format!("127.0.0.1:{port}").parse().unwrap();
    let c = Client::connect(TransportKind::Udp(addr).open().unwrap(), patient()).unwrap();
    let mut rng = StdRng::seed_from_u64(7);
    let regions = Arc::new(Mutex::new(Vec::new()));
    // Allocations (slow path) and first touches (frames from the buffer the daemon fills)
    // while the daemon is killed and restarted twice.
    let (stop, acked) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicU64::new(0)),
    );
    let w = {
        let (c, stop, acked, regions) = (c.clone(), stop.clone(), acked.clone(), regions.clone());
        std::thread::spawn(move || {
            let mut i = 0u64;
            while !stop.load(Ordering::Acquire) && i < 400 {
                let va = match c.ralloc(1 << 20) {
                    Ok(va) => va,
                    // The RAS holds its share of the node's memory (`--max-ras-memory`, half by
                    // default): the oldest region goes back, and allocations go on crossing the
                    // daemon's restarts however fast they run.
                    Err(ClioError::QuotaExceeded { .. } | ClioError::OutOfMemory) => {
                        let (old, _) = regions.lock().unwrap().remove(0);
                        c.rfree(old).expect("rfree across a daemon restart");
                        continue;
                    }
                    Err(e) => panic!("ralloc across a daemon restart: {e}"),
                };
                c.rwrite_durable(va + 8, &i.to_le_bytes()).unwrap();
                regions.lock().unwrap().push((va, i));
                acked.store(i + 1, Ordering::Release);
                i += 1;
            }
        })
    };
    let start = Instant::now();
    for _ in 0..2 {
        std::thread::sleep(Duration::from_millis(rng.gen_range(100..300)));
        kill9(&mut procs.0[1]);
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..50)));
        procs.0[1] = daemon();
    }
    std::thread::sleep(Duration::from_millis(200));
    stop.store(true, Ordering::Release);
    w.join().expect("the workload rode out the daemon restarts");
    assert!(start.elapsed() < Duration::from_secs(60));
    let mut regions = regions.lock().unwrap().clone();
    // Every allocation acknowledged is here but those given back for room.
    assert!(regions.len() as u64 <= acked.load(Ordering::Acquire) && regions.len() >= 3);
    let mut vas: Vec<u64> = regions.iter().map(|r| r.0).collect();
    vas.sort_unstable();
    vas.dedup();
    assert_eq!(vas.len(), regions.len(), "no region handed out twice");
    for (va, i) in &regions {
        assert_eq!(
            c.rread(va + 8, 8).unwrap(),
            i.to_le_bytes(),
            "region {va:#x}"
        );
    }
    // A read longer than twice its request needs the route cookie: the restarted daemon drew
    // a new secret, and CLib fetches the new cookie (a Heartbeat) if it has not yet.
    let (va, i) = regions[0];
    let long = c
        .rread(va, 4096)
        .expect("a long read across the daemon's restarts");
    assert_eq!(long[8..16], i.to_le_bytes());
    // The restarted daemon applies transactions through its own mapping of the file (the log
    // takes a page: one region goes back first, the RAS may stand at its memory quota).
    let (spare, _) = regions.pop().expect("regions");
    c.rfree(spare).unwrap();
    let mut log = c.rtx_log(4096).unwrap();
    let mut tx = c.rtx_begin(&mut log);
    tx.rtx_write(regions[0].0 + 16, b"through the daemon")
        .unwrap();
    tx.rtx_write(regions[1].0 + 16, b"and again").unwrap();
    tx.rtx_commit().unwrap();
    assert_eq!(
        c.rread(regions[0].0 + 16, 18).unwrap(),
        b"through the daemon"
    );
    assert_eq!(c.rread(regions[1].0 + 16, 9).unwrap(), b"and again");
    drop(c);
    drop(procs);
}

/// Transaction `t`'s value for slot `j`: 600 bytes (so a record spans several packets).
fn tx_value(t: u64, j: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(600);
    while v.len() < 600 {
        v.extend_from_slice(&(t << 8 | j).to_le_bytes());
    }
    v
}

/// Slots a transaction writes: one per page (1 MiB pages), the last ones never touched before
/// the first commit.
const TX_SLOTS: u64 = 6;

#[test]
fn transactions_stay_whole_across_node_crashes() {
    for seed in 0..2u64 {
        let mut rng = StdRng::seed_from_u64(0x7A + seed);
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mem");
        let port = free_port();
        let mut node = board(&file, port, &[]);
        let addr = format!("127.0.0.1:{port}").parse().unwrap();
        let c = Client::connect(TransportKind::Udp(addr).open().unwrap(), patient()).unwrap();
        let data = c.ralloc(TX_SLOTS << 20).unwrap();
        let slot = move |j: u64| data + (j << 20) + 64 * j;
        let mut log = c.rtx_log(64 << 10).unwrap();
        let (stop, acked, tried) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicU64::new(0)),
            Arc::new(AtomicU64::new(0)),
        );
        let w = {
            let (c, stop, acked, tried) = (c.clone(), stop.clone(), acked.clone(), tried.clone());
            std::thread::spawn(move || {
                let mut t = 1u64;
                while !stop.load(Ordering::Acquire) {
                    let mut tx = c.rtx_begin(&mut log);
                    for j in 0..TX_SLOTS {
                        tx.rtx_write(slot(j), &tx_value(t, j)).unwrap();
                    }
                    tried.store(t, Ordering::Release);
                    match tx.rtx_commit() {
                        Ok(()) => acked.store(t, Ordering::Release),
                        // In doubt at a crash and dropped by recovery: never partly visible.
                        Err(ClioError::Aborted) => {}
                        Err(e) => panic!("transaction {t} failed across the crash: {e}"),
                    }
                    t += 1;
                }
            })
        };
        for crash in 0..2 {
            std::thread::sleep(Duration::from_millis(rng.gen_range(50..300)));
            let before = acked.load(Ordering::Acquire);
            kill9(&mut node);
            eprintln!("tx seed {seed} crash {crash}: killed after {before} committed transactions");
            std::thread::sleep(Duration::from_millis(rng.gen_range(0..100)));
            node = board(&file, port, &[]);
        }
        std::thread::sleep(Duration::from_millis(200));
        stop.store(true, Ordering::Release);
        w.join().expect("the transactions rode out the crashes");
        let (acked, tried) = (acked.load(Ordering::Acquire), tried.load(Ordering::Acquire));
        assert!(acked > 0);
        // Whole: every slot holds the same transaction; durable: at least the last committed.
        let first = c.rread(slot(0), 8).unwrap();
        let t = u64::from_le_bytes(first.try_into().unwrap()) >> 8;
        assert!(
            acked <= t && t <= tried,
            "slot 0 holds {t}, committed {acked}, tried {tried}"
        );
        for j in 0..TX_SLOTS {
            let mut got = vec![0u8; 600];
            let mut off = 0;
            while off < 600 {
                let n = (600 - off).min(512);
                got[off..off + n].copy_from_slice(&c.rread(slot(j) + off as u64, n).unwrap());
                off += n;
            }
            assert_eq!(got, tx_value(t, j), "slot {j} is not transaction {t}'s");
        }
        drop(c);
        kill9(&mut node);
    }
}
