//! CLib's fault-injection workload against the cosimulated RTL node: through 5% loss, 1%
//! duplication, 1% reordering and 1% corruption, every read returns the last value written,
//! the shared fetch-add counter is exact, every Append lands exactly once in the log at
//! the offset its answer gave, and every Clio-KV answer (created or replaced, found or not)
//! is what a map says: puts and deletes run exactly once in the RTL's unit.
#![cfg(feature = "rtl")]

use clio_clib::transport::{FaultConfig, FaultyTransport, InProcTransport, Transport};
use clio_clib::{Client, Config};
use clio_proto::frame::Route;
use clio_sim::cosim::RtlBoard;
use clio_sim::{BoardConfig, MemoryNode};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[test]
fn clib_survives_faults_against_the_rtl() {
    let node = Arc::new(Mutex::new(
        RtlBoard::new(
            &BoardConfig {
                dram_bytes: 64 << 20,
                page_shift: 16,
                ..BoardConfig::default()
            },
            20,
            None,
        )
        .unwrap(),
    ));
    let n = node.clone();
    let direct = InProcTransport::direct(move |p: &[u8]| {
        let mut out = Vec::new();
        let mut g = n.lock().unwrap_or_else(|e| e.into_inner());
        g.handle(&Route::default(), p, &mut out);
        g.service(&mut out);
        out.into_iter().map(|(_, b)| b).collect()
    });
    let faults = FaultConfig {
        drop: 0.05,
        duplicate: 0.01,
        reorder: 0.01,
        corrupt: 0.01,
        seed: 0x5EED,
    };
    let net = Arc::new(FaultyTransport::new(direct, faults));
    // The simulated node takes about a millisecond per packet of wall time.
    let cfg = Config {
        min_rto: Duration::from_millis(20),
        initial_rto: Duration::from_millis(50),
        max_rto: Duration::from_millis(500),
        target_delay: Duration::from_millis(50),
        track_shift: 16,
        ..Config::default()
    };
    let c = Client::connect(Box::new(net.clone()) as Box<dyn Transport>, cfg).unwrap();
    let counter = c.ralloc(1 << 16).unwrap();
    let base = c.ralloc(8 << 16).unwrap();
    let log = c.ralloc(2 << 16).unwrap();
    let log_cap = 2 << 16;
    let mut appended: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut shadow: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut rnd = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut incs = 0u64;
    let mut kv: HashMap<Vec<u8>, Vec<u8>> = HashMap::new();
    let mut kv_ops = 0;
    for i in 0..1800u64 {
        let slot = rnd() % 16;
        let va = base + slot * 4096 + 60_000 * (slot % 2); // odd slots straddle a page boundary
        match rnd() % 6 {
            5 => {
                use clio_clib::KvPutOutcome;
                kv_ops += 1;
                let key = format!("key{}", rnd() % 20).into_bytes();
                match rnd() % 3 {
                    0 => {
                        let len = 1 + (rnd() % clio_proto::kv::MAX_VALUE as u64) as usize;
                        let v: Vec<u8> = (0..len).map(|k| (k as u64 * 3 ^ i) as u8).collect();
                        let want = if kv.insert(key.clone(), v.clone()).is_some() {
                            KvPutOutcome::Replaced
                        } else {
                            KvPutOutcome::Created
                        };
                        assert_eq!(c.kv_put(&key, &v).unwrap(), want, "op {i}: put");
                    }
                    1 => assert_eq!(
                        c.kv_delete(&key).unwrap(),
                        kv.remove(&key).is_some(),
                        "op {i}: delete"
                    ),
                    _ => assert_eq!(
                        c.kv_get(&key).unwrap(),
                        kv.get(&key).cloned(),
                        "op {i}: get"
                    ),
                }
            }
            4 => {
                let len = 1 + (rnd() % 300) as usize;
                let rec: Vec<u8> = (0..len).map(|k| (k as u64 * 7 ^ i) as u8).collect();
                let at = c.rappend(log, log_cap, &rec, false).unwrap();
                appended.push((at, rec));
            }
            0 => {
                let len = 1 + (rnd() % 2000) as usize;
                let d: Vec<u8> = (0..len).map(|k| (k as u64 ^ i) as u8).collect();
                c.rwrite(va, &d).unwrap();
                shadow.entry(slot).or_insert_with(|| vec![0; 4096])[..len].copy_from_slice(&d);
            }
            1 | 2 => {
                let len = 1 + (rnd() % 2048) as usize;
                let want = shadow
                    .get(&slot)
                    .map_or_else(|| vec![0; len], |s| s[..len].to_vec());
                assert_eq!(
                    c.rread(va, len).unwrap(),
                    want,
                    "op {i}: read of slot {slot}"
                );
            }
            _ => {
                c.fetch_add(counter, 1).unwrap();
                incs += 1;
            }
        }
    }
    assert_eq!(c.rread(counter, 8).unwrap(), incs.to_le_bytes());
    // The log holds each record once, at the offset its answer gave, in answer order.
    let tail = u64::from_le_bytes(c.rread(log, 8).unwrap().try_into().unwrap());
    let head = clio_proto::replog::LOG_HEAD;
    let data = c.rread(log + head, tail as usize).unwrap();
    let recs = clio_proto::replog::records(&data).expect("a well-formed log");
    let got: Vec<(u64, Vec<u8>)> = recs.into_iter().map(|(o, r)| (o, r.to_vec())).collect();
    assert!(appended.len() > 100, "{} appends", appended.len());
    assert!(kv_ops > 200, "{kv_ops} KV operations");
    assert_eq!(got, appended, "the log is the appends, each exactly once");
    let f = net.stats();
    assert!(
        f.dropped > 50 && f.corrupted > 5,
        "the faults happened: {f:?}"
    );
    assert_eq!(node.lock().unwrap().hung_packets(), 0);
}
