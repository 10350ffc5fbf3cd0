//! Route cookies from CLib's side (`docs/protocol.md` section 7): the cookie comes with the
//! answer to Register; when this host's packets start arriving from another address (a new
//! IP after a renumbering, a slow path restarted with a new secret), a read of more than 64
//! bytes is refused once, CLib fetches the new cookie with a Heartbeat and the read goes
//! through; where every request arrives from another address than the last (an asymmetric
//! route), the read fails with `RouteUnverified` after three refreshes instead of looping.

mod common;
use clio_clib::transport::InProcTransport;
use clio_clib::{Client, ClioError};
use clio_proto::frame::Route;
use common::*;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// A client whose packets reach the node from the address `ip` holds at each send (a
/// switch `flip` alternates two addresses packet by packet).
fn client_from(
    ip: Arc<AtomicU32>,
    flip: Arc<AtomicBool>,
) -> (Client, Arc<Mutex<clio_sim::CBoard>>) {
    let b = Arc::new(Mutex::new(board()));
    let node = b.clone();
    let t = InProcTransport::direct(move |p| {
        let mut a = ip.load(Ordering::Acquire);
        if flip.load(Ordering::Acquire) {
            a ^= 1;
            ip.store(a, Ordering::Release);
        }
        let route = Route {
            peer_ip: a.into(),
            ..Route::default()
        };
        serve_from(&node, &route, p)
    });
    // No background heartbeat: it would refresh the cookie at a moment of its own.
    let c = quiet_client(t);
    (c, b)
}

#[test]
fn a_new_source_address_costs_one_refresh_and_nothing_else() {
    let ip = Arc::new(AtomicU32::new(0x0A00_0001));
    let (c, b) = client_from(ip.clone(), Arc::new(AtomicBool::new(false)));
    let va = c.ralloc(PAGE).unwrap();
    let data = pattern(4096, 7);
    c.rwrite(va, &data).unwrap();
    assert_eq!(c.rread(va, 4096).unwrap(), data);
    assert_eq!(
        c.stats().route_refreshes,
        0,
        "the cookie came with Register"
    );
    // The host's address changes: the first long read is refused, the cookie refreshed.
    ip.store(0x0A00_0202, Ordering::Release);
    assert_eq!(
        c.rread(va, 16).unwrap(),
        data[..16],
        "64 B or less need no cookie"
    );
    assert_eq!(c.rread(va, 4096).unwrap(), data);
    assert_eq!(c.stats().route_refreshes, 1);
    assert_eq!(c.rread(va + 100, 2000).unwrap(), data[100..2100]);
    assert_eq!(
        c.stats().route_refreshes,
        1,
        "refreshed once for the new address"
    );
    assert_eq!(b.lock().unwrap().counters().route_unverified, 1);
}

#[test]
fn an_address_that_never_holds_still_fails_with_a_clear_error() {
    let ip = Arc::new(AtomicU32::new(0x0A00_0002));
    let flip = Arc::new(AtomicBool::new(false));
    let (c, _b) = client_from(ip, flip.clone());
    let va = c.ralloc(PAGE).unwrap();
    // From now on every packet arrives from the other of two addresses: each refresh brings
    // the cookie of the address the next request does not come from.
    flip.store(true, Ordering::Release);
    let e = c.rread(va, 4096).unwrap_err();
    assert!(matches!(e, ClioError::RouteUnverified { .. }), "{e:?}");
    assert!(e.to_string().contains("route cookie"), "{e}");
    assert_eq!(
        c.stats().route_refreshes,
        4,
        "three refreshes, then the error"
    );
    flip.store(false, Ordering::Release);
    assert_eq!(
        c.rread(va, 4096).unwrap().len(),
        4096,
        "and works again once it holds"
    );
}

/// The slow path away when the cookie goes stale (a daemon restarting with a new secret; here
/// the host's address changes while the first Heartbeats are lost): the long read's refusals
/// wait for the one cookie Heartbeat instead of counting towards `RouteUnverified`, and the
/// read goes through once it is answered.
#[test]
fn a_refresh_that_takes_a_while_costs_a_wait_not_an_error() {
    let ip = Arc::new(AtomicU32::new(0x0A00_0001));
    let lost = Arc::new(AtomicU32::new(0));
    let b = Arc::new(Mutex::new(board()));
    let node = b.clone();
    let (ip2, lost2) = (ip.clone(), lost.clone());
    let t = InProcTransport::direct(move |p| {
        let route = Route {
            peer_ip: ip2.load(Ordering::Acquire).into(),
            ..Route::default()
        };
        let heartbeat = clio_proto::header::Packet::new_unchecked(p).opcode_raw()
            == clio_proto::Opcode::Heartbeat as u8;
        if heartbeat && lost2.load(Ordering::Acquire) > 0 {
            // The slow path is away: this Heartbeat is not answered.
            lost2.fetch_sub(1, Ordering::AcqRel);
            return vec![];
        }
        serve_from(&node, &route, p)
    });
    let c = quiet_client(t);
    let va = c.ralloc(PAGE).unwrap();
    let data = pattern(4096, 9);
    c.rwrite(va, &data).unwrap();
    ip.store(0x0A00_0002, Ordering::Release);
    lost.store(3, Ordering::Release);
    assert_eq!(c.rread(va, 4096).unwrap(), data);
    assert_eq!(
        lost.load(Ordering::Acquire),
        0,
        "three Heartbeats were lost"
    );
    assert!(c.stats().route_refreshes > 3, "{:?}", c.stats());
}

/// The cookie goes stale while the congestion window is below one packet (after timeouts,
/// as when the slow path restarts): the long read refused `RouteUnverified` holds the window
/// while it waits for the cookie Heartbeat, so that Heartbeat leaves outside the window (as
/// CN acks do) and the read goes through. Queued behind the read's share it never left: the
/// read was refused for as long as the member lived (until its lease ended: `Denied`).
#[test]
fn a_cookie_refresh_leaves_when_the_window_is_below_one_packet() {
    let ip = Arc::new(AtomicU32::new(0x0A00_0001));
    let b = Arc::new(Mutex::new(board()));
    let node = b.clone();
    let ip2 = ip.clone();
    let t = InProcTransport::direct(move |p| {
        let route = Route {
            peer_ip: ip2.load(Ordering::Acquire).into(),
            ..Route::default()
        };
        serve_from(&node, &route, p)
    });
    let paced = 0.5;
    let c = Client::connect(
        Box::new(t),
        clio_clib::Config {
            track_shift: PAGE_SHIFT,
            heartbeat: false,
            initial_cwnd: paced,
            min_cwnd: paced,
            max_cwnd: paced,
            ..clio_clib::Config::default()
        },
    )
    .unwrap();
    let va = c.ralloc(PAGE).unwrap();
    let data = pattern(4096, 5);
    c.rwrite(va, &data).unwrap();
    ip.store(0x0A00_0002, Ordering::Release);
    let (tx, rx) = std::sync::mpsc::channel();
    let reader = c.clone();
    std::thread::spawn(move || {
        let _ = tx.send(reader.rread(va, 4096));
    });
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .expect("the long read ends (the cookie Heartbeat left)");
    assert_eq!(got.unwrap(), data);
    assert_eq!(c.stats().route_refreshes, 1, "{:?}", c.stats());
}
