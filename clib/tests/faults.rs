//! Tens of thousands of mixed operations through a lossy, duplicating, reordering,
//! corrupting network: every read returns the last value written, and a shared counter
//! ends exactly at the number of increments.

mod common;
use clio_clib::transport::{FaultConfig, FaultyTransport, Transport};
use clio_clib::{Client, Config, Output};
use common::*;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const THREADS: u64 = 2;
const OPS_PER_THREAD: u64 = 12_000;
const SLOTS: u64 = 64;
const SLOT_BYTES: u64 = 4096;

const FAULTS: FaultConfig = FaultConfig {
    drop: 0.05,
    duplicate: 0.01,
    reorder: 0.01,
    corrupt: 0.01,
    seed: 0xC110,
};

#[test]
fn mixed_operations_survive_loss_duplication_reordering_and_corruption() {
    let b = Arc::new(Mutex::new(board()));
    let net = Arc::new(FaultyTransport::new(direct(b.clone()), FAULTS));
    mixed_operations(net, Duration::from_micros(300));
    assert!(
        b.lock().unwrap().counters().idempotent_replays > 0,
        "duplicates of non-idempotent requests were replayed, not re-executed"
    );
}

/// The same over UDP against a node serving on 4 threads: each client thread's lane (a
/// socket of its own, faulty with a seed of its own) reaches the node's threads, which run
/// the requests through one node: every result stays exact.
#[test]
fn mixed_operations_survive_faults_on_lanes_to_a_threaded_node() {
    let srv =
        clio_sim::server::spawn_udp_threads(board(), "127.0.0.1:0".parse().unwrap(), 4).unwrap();
    let udp = clio_clib::transport::UdpTransport::connect(srv.udp_addr.unwrap()).unwrap();
    let net = Arc::new(FaultyTransport::new(udp, FAULTS));
    let s = mixed_operations(net, Duration::from_millis(1));
    assert!(s.lanes > 1, "the threads had lanes of their own: {s:?}");
    let replayed = srv.board().lock().unwrap().counters().idempotent_replays;
    assert!(
        replayed > 0,
        "duplicates of non-idempotent requests were replayed, not re-executed"
    );
    srv.stop().unwrap();
}

/// `THREADS` threads of one client through `net` doing `OPS_PER_THREAD` mixed operations:
/// every read equals the last write, the shared counter ends at the increments; the faults
/// happened and were handled. Returns the client's counters.
fn mixed_operations<T: Transport + 'static>(
    net: Arc<FaultyTransport<T>>,
    min_rto: Duration,
) -> clio_clib::Stats {
    let cfg = Config {
        // In-process round trips take microseconds: a short RTO keeps the test fast.
        min_rto,
        initial_rto: Duration::from_millis(1),
        max_rto: Duration::from_millis(20),
        max_request_bytes: 2048,
        track_shift: PAGE_SHIFT,
        ..Config::default()
    };
    let c = Client::connect(Box::new(net.clone()) as Box<dyn Transport>, cfg).unwrap();
    let counter = c.ralloc(PAGE).unwrap();
    let threads: Vec<_> = (0..THREADS)
        .map(|t| {
            let c = c.clone();
            std::thread::spawn(move || -> (u64, u64) {
                let base = c.ralloc(SLOTS * SLOT_BYTES).unwrap();
                let mut shadow: HashMap<u64, Vec<u8>> = HashMap::new();
                let mut x = 0x2545_F491_4F6C_DD1Du64 ^ t;
                let mut rnd = move || {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                };
                let (mut incs, mut reads) = (0u64, 0u64);
                for i in 0..OPS_PER_THREAD {
                    let slot = rnd() % SLOTS;
                    let va = base + slot * SLOT_BYTES;
                    match rnd() % 10 {
                        // Writes of 1 byte to 3 KiB (up to 3 packets, 2 requests).
                        0..=2 => {
                            let len = 1 + (rnd() % 3000) as usize;
                            let mut d = pattern(len, rnd());
                            d[0] = i as u8;
                            c.rwrite(va, &d).unwrap();
                            // Bytes past `len` keep their older value.
                            let old = shadow
                                .entry(slot)
                                .or_insert_with(|| vec![0; SLOT_BYTES as usize]);
                            old[..len].copy_from_slice(&d);
                        }
                        3 => {
                            // Asynchronous write then asynchronous read of the same slot.
                            let d = pattern(64, rnd());
                            let w = c.rwrite_async(va, &d).unwrap();
                            let r = c.rread_async(va, 64).unwrap();
                            let out = c.rpoll(&[w, r]).unwrap();
                            assert_eq!(
                                out[1],
                                Output::Data(d.clone()),
                                "RAW through async ops, thread {t} op {i}"
                            );
                            shadow
                                .entry(slot)
                                .or_insert_with(|| vec![0; SLOT_BYTES as usize])[..64]
                                .copy_from_slice(&d);
                        }
                        4..=7 => {
                            let len = 1 + (rnd() % SLOT_BYTES) as usize;
                            let got = c.rread(va, len).unwrap();
                            let want = shadow
                                .get(&slot)
                                .map_or_else(|| vec![0; len], |s| s[..len].to_vec());
                            assert_eq!(
                                got, want,
                                "thread {t} op {i}: read of slot {slot}, {len} bytes"
                            );
                            reads += 1;
                        }
                        _ => {
                            c.fetch_add(counter, 1).unwrap();
                            incs += 1;
                        }
                    }
                }
                (incs, reads)
            })
        })
        .collect();
    let mut incs = 0;
    for t in threads {
        let (i, _) = t.join().unwrap();
        incs += i;
    }
    assert_eq!(
        c.rread(counter, 8).unwrap(),
        incs.to_le_bytes(),
        "every increment counted exactly once"
    );
    let s = c.stats();
    let f = net.stats();
    println!("faults injected: {f:?}");
    println!("client: {s:?}");
    assert!(
        f.dropped > 1000 && f.duplicated > 100 && f.reordered > 100 && f.corrupted > 100,
        "the faults happened: {f:?}"
    );
    assert!(
        s.timeouts > 0 && s.nacks > 0 && s.corrupt_responses > 0 && s.stale_responses > 0,
        "and were handled: {s:?}"
    );
    s
}
