//! `rappend` through CLib over a lossy, duplicating, reordering network: two threads append
//! to one node-ordered log; every record is in the log exactly once, each where its answer
//! said, and a full log answers LogFull with nothing written.

mod common;
use clio_clib::transport::{FaultConfig, FaultyTransport, Transport};
use clio_clib::{Client, ClioError, Config};
use clio_proto::replog::{self, LOG_HEAD};
use common::*;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

const PER_THREAD: u32 = 300;

#[test]
fn appends_are_exactly_once_under_loss_and_duplication() {
    let b = Arc::new(Mutex::new(board()));
    let faults = FaultConfig {
        drop: 0.05,
        duplicate: 0.05,
        reorder: 0.02,
        corrupt: 0.01,
        seed: 0xA99E,
    };
    let net = Arc::new(FaultyTransport::new(direct(b.clone()), faults));
    let cfg = Config {
        min_rto: Duration::from_micros(300),
        initial_rto: Duration::from_millis(1),
        max_rto: Duration::from_millis(20),
        ..Config::default()
    };
    let c = Client::connect(Box::new(net) as Box<dyn Transport>, cfg).unwrap();
    let cap = 4 * PAGE;
    let log = c.ralloc(cap).unwrap();
    let threads: Vec<_> = (0..2u32)
        .map(|t| {
            let c = c.clone();
            std::thread::spawn(move || {
                (0..PER_THREAD)
                    .map(|i| {
                        let rec =
                            pattern(1 + ((i * 37 + t) % 700) as usize, (t * 100_000 + i) as u64);
                        let at = c.rappend(log, cap, &rec, false).unwrap();
                        (at, rec)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut want = BTreeMap::new();
    for th in threads {
        for (at, rec) in th.join().unwrap() {
            assert!(want.insert(at, rec).is_none(), "two records at {at}");
        }
    }
    let tail = u64::from_le_bytes(c.rread(log, 8).unwrap().try_into().unwrap());
    let data = c.rread(log + LOG_HEAD, tail as usize).unwrap();
    let got: BTreeMap<u64, Vec<u8>> = replog::records(&data)
        .unwrap()
        .into_iter()
        .map(|(o, p)| (o, p.to_vec()))
        .collect();
    assert_eq!(
        got.len(),
        2 * PER_THREAD as usize,
        "no record twice, none lost"
    );
    assert!(got == want, "each record where its answer said");
    // Fill the rest of the log: LogFull, and the tail does not move.
    let big = vec![1u8; 1024];
    let err = loop {
        match c.rappend(log, cap, &big, false) {
            Ok(_) => {}
            Err(e) => break e,
        }
    };
    assert_eq!(err, ClioError::LogFull);
    let t1 = c.rread(log, 8).unwrap();
    assert_eq!(c.rappend(log, cap, &big, false), Err(ClioError::LogFull));
    assert_eq!(c.rread(log, 8).unwrap(), t1);
    assert!(matches!(
        c.rappend(log, cap, &[], false),
        Err(ClioError::InvalidArgument(_))
    ));
}
