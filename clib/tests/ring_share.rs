//! A member's share of the node's idempotence ring (`proto::quota::Quota::RingShare`) from
//! CLib's side: a client with more ring-recorded requests outstanding than its share sees
//! some refused QUOTA_EXCEEDED while its own acknowledgements catch up, waits them out like
//! RETRY_LATER, and every request executes exactly once.

mod common;
use clio_clib::transport::InProcTransport;
use clio_clib::Output;
use clio_proto::header::Packet;
use clio_proto::{Opcode, Status};
use clio_sim::{BoardConfig, CBoard};
use common::*;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const SHARE: u8 = 4;

#[test]
fn more_atomics_in_flight_than_the_share_all_execute_once() {
    // A share of 4: with its acks held back, the member has more results outstanding than
    // that while its window still has room for requests.
    let b = Arc::new(Mutex::new(
        CBoard::new(&BoardConfig {
            limits: clio_sim::Limits {
                ring_share: SHARE,
                ..clio_sim::Limits::default()
            },
            ..board_config()
        })
        .expect("board"),
    ));
    // The CN acks are held back by the network until the node refuses a request for the
    // share (or the oldest has waited 20 ms), so the node sees this member's whole share
    // unacknowledged.
    let held: Arc<Mutex<Vec<(Instant, Vec<u8>)>>> = Arc::default();
    let node = b.clone();
    let t = InProcTransport::direct(move |p| {
        let mut held = held.lock().unwrap();
        let mut out = vec![];
        if Packet::new_unchecked(p).opcode_raw() == Opcode::CnAck as u8 {
            held.push((Instant::now(), p.to_vec()));
        } else {
            out = serve(&node, p);
        }
        let refused = out
            .iter()
            .any(|a| Packet::new_unchecked(&a[..]).status_raw() == Status::QuotaExceeded as u8);
        let stale = held
            .first()
            .is_some_and(|a| a.0.elapsed() > Duration::from_millis(20));
        if refused || stale {
            out.extend(held.drain(..).flat_map(|a| serve(&node, &a.1)));
        }
        out
    });
    let c = quiet_client(t);
    // One word per page: CLib orders operations on one page (`track_shift`), so these may
    // all be outstanding at once.
    let n = 128;
    let va = c.ralloc(n as u64 * PAGE).unwrap();
    let handles: Vec<_> = (0..n)
        .map(|i| c.fetch_add_async(va + i as u64 * PAGE, 1).unwrap())
        .collect();
    for h in handles {
        let r = c.rpoll_one(h);
        assert!(matches!(r, Ok(Output::Value(_))), "{r:?} {:?}", c.stats());
    }
    let total: u64 = (0..n)
        .map(|i| {
            let w = c.rread(va + i as u64 * PAGE, 8).unwrap();
            u64::from_le_bytes(w.try_into().unwrap())
        })
        .sum();
    assert_eq!(total, n as u64, "every fetch-add executed exactly once");
    let s = c.stats();
    assert!(
        s.ring_share_waits > 0,
        "the node refused some for the share: {s:?}"
    );
    let node = b.lock().unwrap();
    let n = node.counters();
    assert!(n.idempotence_ring_over_share > 0, "{n:?}");
}
