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

/// A thread's last atomic leaves its CN ack to the network; when that ack is lost and the
/// thread does nothing more, nobody drives its lane's timers, yet its entry holds a way of the
/// member's row. Another thread of the client whose request the node refuses for that way
/// sends the idle lane's overdue acks again, so the refusal clears and its request executes
/// (instead of waiting out every busy retry: a Clover writer's compare-and-swap timed out so).
#[test]
fn a_refused_request_sends_an_idle_lanes_lost_ack_again() {
    let b = Arc::new(Mutex::new(board()));
    let drop_acks = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (node, drop2) = (b.clone(), drop_acks.clone());
    let t = InProcTransport::direct_lanes(move |p| {
        let ack = Packet::new_unchecked(p).opcode_raw() == Opcode::CnAck as u8;
        if ack && drop2.load(std::sync::atomic::Ordering::Acquire) {
            return vec![];
        }
        serve(&node, p)
    });
    let c = Arc::new(
        clio_clib::Client::connect(
            Box::new(t),
            clio_clib::Config {
                track_shift: PAGE_SHIFT,
                heartbeat: false,
                // Without the resend, a refused request gives up within a second.
                max_busy_retries: 200,
                ..clio_clib::Config::default()
            },
        )
        .expect("connect"),
    );
    let n = 48u64;
    let va = c.ralloc((n + 1) * PAGE).unwrap();
    // Another thread, on a lane of its own after a few reads (CLib gives a thread that keeps
    // submitting its own lane): one fetch-add whose ack the network loses; then it ends.
    let (c2, drop3) = (c.clone(), drop_acks.clone());
    std::thread::spawn(move || {
        for _ in 0..20 {
            c2.rread(va, 8).unwrap();
        }
        drop3.store(true, std::sync::atomic::Ordering::Release);
        c2.fetch_add(va + n * PAGE, 1).unwrap();
        drop3.store(false, std::sync::atomic::Ordering::Release);
        assert!(c2.stats().lanes > 1, "{:?}", c2.stats());
    })
    .join()
    .unwrap();
    // This thread's requests go round every way of the row, the idle lane's among them (a
    // fetch-add and its ack take two request ids; a read now and then shifts the parity).
    for i in 0..n {
        if i % 3 == 0 {
            c.rread(va, 8).unwrap();
        }
        let r = c.fetch_add(va + i * PAGE, 1);
        assert!(r.is_ok(), "fetch-add {i}: {r:?} {:?}", c.stats());
    }
    assert!(c.stats().ring_share_waits > 0, "{:?}", c.stats());
    for i in 0..=n {
        assert_eq!(
            c.rread(va + i * PAGE, 8).unwrap(),
            1u64.to_le_bytes(),
            "word {i}"
        );
    }
}
