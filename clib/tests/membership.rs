//! Membership of a remote address space through CLib: leases kept alive by the heartbeat
//! thread, lost without it, memory returned when the last member leaves (drop or explicit
//! unregister), typed errors for a RAS that is gone.

use clio_clib::{Client, ClioError, Config, Credentials, TransportKind};
use clio_sim::server::{spawn_udp, ServerHandle};
use clio_sim::{BoardConfig, CBoard};
use std::net::SocketAddr;
use std::time::Duration;

const PAGE: u64 = 1 << 16;

fn node(dram: u64, lease: Duration) -> (ServerHandle, SocketAddr) {
    let cfg = BoardConfig {
        dram_bytes: dram,
        page_shift: 16,
        lease,
        // No memory quota: these tests let one RAS take all of the node's memory.
        limits: clio_sim::Limits {
            ras_bytes: Some(u64::MAX),
            ..clio_sim::Limits::default()
        },
        ..BoardConfig::default()
    };
    let s = spawn_udp(CBoard::new(&cfg).unwrap(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let a = s.udp_addr.unwrap();
    (s, a)
}

fn connect(addr: SocketAddr, heartbeat: bool) -> Client {
    let cfg = Config {
        heartbeat,
        ..Config::default()
    };
    Client::connect(TransportKind::Udp(addr).open().unwrap(), cfg).unwrap()
}

#[test]
fn the_heartbeat_keeps_a_member_alive_and_silence_ends_it() {
    let lease = Duration::from_millis(400);
    let (server, addr) = node(64 << 20, lease);
    let alive = connect(addr, true);
    assert_eq!(
        alive.lease(),
        lease,
        "the first heartbeat tells the node's lease"
    );
    let silent = connect(addr, false);
    let (va_a, va_s) = (alive.ralloc(PAGE).unwrap(), silent.ralloc(PAGE).unwrap());
    alive.rwrite(va_a, b"still here").unwrap();
    silent.rwrite(va_s, b"gone soon").unwrap();
    std::thread::sleep(lease * 3);
    assert_eq!(alive.rread(va_a, 10).unwrap(), b"still here");
    assert!(alive.stats().heartbeats >= 4, "{:?}", alive.stats());
    assert_eq!(
        silent.rread(va_s, 9),
        Err(ClioError::Denied),
        "its RAS was torn down"
    );
    assert!(silent.heartbeat().is_err() && silent.lease_lost());
    drop(silent);
    drop(alive);
    server.stop().unwrap();
}

#[test]
fn the_last_member_to_leave_returns_the_memory() {
    // 4 MiB of DRAM, no memory quota: one client can take all of it.
    let (server, addr) = node(4 << 20, Duration::from_secs(10));
    let a = connect(addr, true);
    while a.ralloc(PAGE).is_ok() {}
    assert_eq!(a.ralloc(PAGE), Err(ClioError::OutOfMemory));
    let creds = a.credentials();
    let b = Client::join_udp(addr, creds).unwrap();
    assert_ne!(b.client_id(), a.client_id());
    drop(a);
    // B is still a member: the RAS and its memory stay.
    let c = connect(addr, true);
    assert_eq!(c.ralloc(PAGE), Err(ClioError::OutOfMemory));
    b.unregister(false).unwrap();
    // Now the node is empty again and the old credentials open nothing.
    assert!(c.ralloc(PAGE).is_ok(), "memory came back");
    assert!(matches!(
        Client::join_udp(addr, creds),
        Err(ClioError::Denied)
    ));
    let bogus: Result<Credentials, _> = "0:abc".parse();
    assert!(bogus.is_err(), "pid 0 is never a RAS");
    assert!(
        !format!("{creds:?}").contains(&format!("{:x}", creds.key)),
        "Debug output hides the key"
    );
    drop(c);
    server.stop().unwrap();
}
