//! Epochs fence a member with an out-of-date view (docs/protocol.md section 7, "Epochs"):
//! once one member raises its RAS's epoch, another member's requests that carry an older one
//! are refused with `Stale` and change nothing, whatever they are (read, write, atomic,
//! Append, slow-path requests); requests with the RAS's epoch or a newer one pass; an epoch
//! never goes back.

mod common;

use clio_clib::{Client, ClioError, Config, TransportKind};
use clio_proto::{Opcode, Status};
use clio_sim::server::spawn_udp;
use clio_sim::{BoardConfig, CBoard};
use common::relay::{Relay, Seen};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A node on loopback with 64 KiB pages.
fn node() -> clio_sim::server::ServerHandle {
    let cfg = BoardConfig {
        dram_bytes: 64 << 20,
        page_shift: 16,
        ..BoardConfig::default()
    };
    spawn_udp(CBoard::new(&cfg).unwrap(), "127.0.0.1:0".parse().unwrap()).unwrap()
}

/// Two members of one RAS at epoch 1 on one node, with 64 KiB of it at `va`: `a` direct, `b`
/// through a relay whose hook sees every packet and gets `a` (to raise the RAS's epoch as a
/// packet goes by); `false` from the hook drops the packet.
struct Pair {
    a: Arc<Client>,
    b: Client,
    va: u64,
    _relay: Relay,
    _server: clio_sim::server::ServerHandle,
}

fn pair(hook: impl Fn(Seen, &Client) -> bool + Send + Sync + 'static) -> Pair {
    let server = node();
    let node = server.udp_addr.unwrap();
    let a = Arc::new(
        Client::connect(TransportKind::Udp(node).open().unwrap(), Config::default()).unwrap(),
    );
    a.set_epoch(1).unwrap();
    let va = a.ralloc(1 << 16).unwrap();
    let peer = a.clone();
    let relay = Relay::start(node, move |seen| hook(seen, &peer));
    let at1 = Config {
        epoch: 1,
        ..Config::default()
    };
    let b = Client::join(
        TransportKind::Udp(relay.addr).open().unwrap(),
        at1,
        a.credentials(),
    )
    .unwrap();
    Pair {
        a,
        b,
        va,
        _relay: relay,
        _server: server,
    }
}

#[test]
fn a_member_behind_the_ras_epoch_changes_nothing() {
    let server = node();
    let addr = server.udp_addr.unwrap();
    let open = || TransportKind::Udp(addr).open().unwrap();
    let a = Client::connect(open(), Config::default()).unwrap();
    let b = Client::join(open(), Config::default(), a.credentials()).unwrap();
    let va = a.ralloc(1 << 16).unwrap();
    a.rwrite(va, b"epoch zero").unwrap();
    assert_eq!(
        b.rread(va, 10).unwrap(),
        b"epoch zero",
        "unfenced: epoch 0 passes"
    );

    // `a` enters epoch 7; `b` still carries 0, then 6: every request of it is Stale.
    a.set_epoch(7).unwrap();
    assert_eq!(a.epoch(), 7);
    for e in [0u16, 6] {
        b.use_epoch(e);
        assert_eq!(
            b.rwrite(va, b"stale view"),
            Err(ClioError::Stale),
            "epoch {e}"
        );
        assert_eq!(b.rread(va, 10), Err(ClioError::Stale));
        assert_eq!(b.fetch_add(va + 64, 1), Err(ClioError::Stale));
        assert_eq!(b.ralloc(1 << 16), Err(ClioError::Stale), "slow path too");
        assert_eq!(b.set_epoch(5), Err(ClioError::Stale), "an older SetEpoch");
    }
    assert_eq!(a.rread(va, 10).unwrap(), b"epoch zero", "nothing changed");
    assert_eq!(a.fetch_add(va + 64, 0).unwrap(), 0);

    // `b` learns the view: the RAS's epoch, then a newer one, pass.
    b.use_epoch(7);
    b.rwrite(va, b"epoch seven").unwrap();
    b.set_epoch(9).unwrap();
    assert_eq!(b.rread(va, 11).unwrap(), b"epoch seven");
    assert_eq!(a.rread(va, 11), Err(ClioError::Stale), "now `a` is behind");
    // SetEpoch with the RAS's epoch is Ok; an older one is refused, changes nothing and
    // leaves the client at the epoch it had; 0 is never sent.
    a.set_epoch(9).unwrap();
    assert_eq!(a.set_epoch(8), Err(ClioError::Stale));
    assert_eq!(a.epoch(), 9);
    assert_eq!(a.rread(va, 11).unwrap(), b"epoch seven", "still at 9");
    assert!(matches!(a.set_epoch(0), Err(ClioError::InvalidArgument(_))));
}

/// A retransmitted atomic that meets a newer epoch at the node: if its first attempt
/// executed (only the answer was lost), the node answers it from the idempotence ring, so the
/// sender learns the result of the one execution; if the first attempt never arrived, it is
/// `Stale` and nothing executed. Either way the word changed at most once.
#[test]
fn a_retransmitted_atomic_meeting_a_newer_epoch_is_answered_from_the_ring_or_stale() {
    // The relay drops the next FetchAdd answer (`drop_answer`) or request (`drop_request`)
    // of `b` and, as it does, `a` raises the RAS's epoch: `b`'s retransmission is behind.
    let (drop_answer, drop_request) = (
        Arc::new(AtomicBool::new(true)),
        Arc::new(AtomicBool::new(false)),
    );
    let (da, dr) = (drop_answer.clone(), drop_request.clone());
    let pr = pair(move |seen, a| {
        let flag = if seen.response { &da } else { &dr };
        if seen.opcode == Some(Opcode::FetchAdd) && flag.swap(false, Ordering::AcqRel) {
            a.set_epoch(a.epoch() + 1).expect("raise the epoch");
            return false;
        }
        true
    });
    // (`pr` holds the node and the relay for the whole test.)
    let (a, b, va) = (&pr.a, &pr.b, pr.va);
    assert_eq!(
        b.fetch_add(va, 1),
        Ok(0),
        "the first attempt's answer, from the ring"
    );
    assert!(
        !drop_answer.load(Ordering::Acquire),
        "the answer was dropped"
    );
    assert_eq!(a.fetch_add(va, 0).unwrap(), 1, "executed once");
    // The first attempt lost on the way: nothing executed, and the retransmission is Stale.
    b.use_epoch(2);
    drop_request.store(true, Ordering::Release);
    assert_eq!(b.fetch_add(va, 1), Err(ClioError::Stale));
    assert!(
        !drop_request.load(Ordering::Acquire),
        "the request was dropped"
    );
    assert_eq!(a.fetch_add(va, 0).unwrap(), 1, "nothing executed");
    // A first attempt refused as stale executes nothing either.
    assert_eq!(b.fetch_add(va, 1), Err(ClioError::Stale));
    assert_eq!(a.fetch_add(va, 0).unwrap(), 1);
}

/// A CN ack that meets a newer epoch (the view moved between the atomic's answer and its
/// acknowledgement) is refused as stale. The ring entry it frees stays at the node until
/// acknowledged, so the client parks the ack, out of flight and out of its windows (it holds
/// no window share while it waits: nothing else is held back), and sends it again once it
/// carries another epoch; under the learnt epoch it is taken.
#[test]
fn a_cn_ack_refused_for_its_epoch_is_parked_and_goes_again_under_the_next_epoch() {
    // As `b`'s first CN ack goes by, `a` raises the RAS to epoch 2; the relay counts the CN
    // acks' answers by status.
    let armed = Arc::new(AtomicBool::new(true));
    let (stale, ok) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let (arm, st, okc) = (armed.clone(), stale.clone(), ok.clone());
    let pr = pair(move |seen, a| {
        if seen.opcode == Some(Opcode::CnAck) {
            if !seen.response && arm.swap(false, Ordering::AcqRel) {
                a.set_epoch(2).expect("raise the epoch");
            } else if seen.response && seen.status == Status::Stale as u8 {
                st.fetch_add(1, Ordering::AcqRel);
            } else if seen.response && seen.status == Status::Ok as u8 {
                okc.fetch_add(1, Ordering::AcqRel);
            }
        }
        true
    });
    let (b, va) = (&pr.b, pr.va);
    assert_eq!(b.fetch_add(va, 1), Ok(0));
    let eventually = |what: &str, f: &dyn Fn() -> bool| {
        let t = Instant::now();
        while !f() {
            assert!(t.elapsed() < Duration::from_secs(10), "never: {what}");
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    eventually("the CN ack refused as stale", &|| {
        stale.load(Ordering::Acquire) > 0 && b.stats().stale_acks > 0
    });
    // (A heartbeat may be in flight a moment; the parked ack never is.)
    eventually(
        "nothing in flight: the parked ack holds no window share",
        &|| b.stats().inflight_packets == 0.0,
    );
    assert_eq!(ok.load(Ordering::Acquire), 0, "not taken at epoch 1");
    // Still at epoch 1, the ack stays parked: another activity does not send it again.
    assert_eq!(b.rread(va, 8), Err(ClioError::Stale));
    assert_eq!(stale.load(Ordering::Acquire), 1, "sent once at epoch 1");
    // `b` learns the view: its CN ack goes again under epoch 2 with the next activity (a
    // read here) and is taken.
    b.use_epoch(2);
    assert_eq!(b.rread(va, 8).unwrap(), 1u64.to_le_bytes());
    // (At least once: an attempt that outlived its RTO goes again, and both are answered.)
    eventually("the CN ack taken", &|| {
        let _ = b.rread(va, 8);
        ok.load(Ordering::Acquire) >= 1
    });
    assert_eq!(stale.load(Ordering::Acquire), 1);
}
