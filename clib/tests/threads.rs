//! Many threads against a node that serves on several threads (`spawn_udp_threads`): one
//! Client shared by all threads, and a Client per thread (each its own socket), doing
//! fetch-and-add, a lock-protected read-modify-write and Clio-KV puts on shared keys. Every
//! result stays exact: the counters end at the number of increments, every FAA's old value
//! is seen once, and each key ends with a value one of its writers put last.

use clio_clib::{Client, Config};
use clio_sim::server::{spawn_udp_threads, ServerHandle};
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use std::collections::{HashMap, HashSet};
use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Operations a thread submits on lane 0 before it gets a lane of its own (`lanes.rs`).
const LANE_AFTER: usize = 16;

const NODE_THREADS: usize = 4;
const PAGE: u64 = 1 << 16;

fn node() -> ServerHandle {
    let b = CBoard::new(&BoardConfig {
        dram_bytes: 256 << 20,
        page_shift: 16,
        slowpath: SlowPathMode::Thread,
        offloads: clio_sim::Offloads::All,
        ..BoardConfig::default()
    })
    .expect("board");
    spawn_udp_threads(b, "127.0.0.1:0".parse().expect("addr"), NODE_THREADS).expect("node")
}

fn word(c: &Client, va: u64) -> u64 {
    u64::from_le_bytes(c.rread(va, 8).expect("read").try_into().expect("8 bytes"))
}

/// What every thread does: `n` FAAs (returning their old values), `n` lock-protected
/// increments of a plain word, and `n` KV puts of its own tag to one of four shared keys.
fn work(c: &Client, va: u64, t: u64, n: u64) -> Vec<u64> {
    let (faa, lock, plain) = (va, va + 64, va + 128);
    let mut olds = Vec::new();
    for i in 0..n {
        olds.push(c.fetch_add(faa, 1).expect("faa"));
        c.rlock(lock).expect("lock");
        let v = word(c, plain);
        c.rwrite(plain, &(v + 1).to_le_bytes()).expect("write");
        c.runlock(lock).expect("unlock");
        let key = format!("k{}", i % 4);
        c.kv_put(key.as_bytes(), format!("t{t}-{i}").as_bytes())
            .expect("put");
    }
    olds
}

/// Run `f(t)` on threads `t` in `0..threads` at once; their results, concatenated.
fn on_threads(threads: u64, f: impl Fn(u64) -> Vec<u64> + Sync) -> Vec<u64> {
    std::thread::scope(|s| {
        let f = &f;
        let hs: Vec<_> = (0..threads).map(|t| s.spawn(move || f(t))).collect();
        hs.into_iter()
            .flat_map(|h| h.join().expect("thread"))
            .collect()
    })
}

/// More than one serving thread took datagrams, and the node stops cleanly. The kernel
/// spreads sockets by a hash of their addresses: k client sockets all land on one of 4
/// threads with a chance of 4^(1-k) (8 lanes: 6e-5; 16 members: 1e-9).
fn assert_spread(srv: ServerHandle) {
    let busy = srv.served_per_thread().iter().filter(|&&x| x > 0).count();
    assert!(
        busy > 1,
        "one serving thread took everything: {:?}",
        srv.served_per_thread()
    );
    srv.stop().expect("stop");
}

fn check(c: &Client, va: u64, olds: Vec<u64>, threads: u64, n: u64) {
    let total = threads * n;
    assert_eq!(word(c, va), total, "FAA counter");
    assert_eq!(word(c, va + 128), total, "lock-protected counter");
    let seen: HashSet<u64> = olds.iter().copied().collect();
    assert_eq!(seen.len() as u64, total, "every FAA old value once");
    assert!(olds.iter().all(|&o| o < total));
    for k in 0..4 {
        let v = c.kv_get(format!("k{k}").as_bytes()).expect("get");
        let v = String::from_utf8(v.expect("key present")).expect("utf8");
        // Each thread's last put to key k is at i = n - 4 + k.
        let last = format!("-{}", n - 4 + k);
        assert!(v.ends_with(&last), "k{k} = {v}: not a last put");
    }
}

#[test]
fn one_client_shared_by_threads_stays_exact_on_a_threaded_node() {
    let srv = node();
    let c = Client::connect_udp(srv.udp_addr.expect("udp")).expect("client");
    let va = c.ralloc(PAGE).expect("alloc");
    let (threads, n) = (8u64, 200u64);
    let olds = on_threads(threads, |t| work(&c, va, t, n));
    check(&c, va, olds, threads, n);
    assert!(c.stats().lanes > 1, "threads got lanes: {:?}", c.stats());
    assert_spread(srv);
}

#[test]
fn a_client_per_thread_stays_exact_on_a_threaded_node() {
    let srv = node();
    let addr = srv.udp_addr.expect("udp");
    let owner = Client::connect_udp(addr).expect("owner");
    let va = owner.ralloc(PAGE).expect("alloc");
    let (threads, n) = (16u64, 100u64);
    let members: Vec<Arc<Client>> = (0..threads)
        .map(|_| {
            let t = clio_clib::transport::UdpTransport::connect(addr).expect("udp");
            Arc::new(
                Client::join(Box::new(t), Config::default(), owner.credentials()).expect("join"),
            )
        })
        .collect();
    let olds = on_threads(threads, |t| work(&members[t as usize], va, t, n));
    check(&owner, va, olds, threads, n);
    assert_spread(srv);
}

/// A UDP relay between clients and a node that holds back, by `delay`, every packet from the
/// first client address it saw (lane 0) while `slow` is set: what a congested path of one
/// lane looks like.
fn slow_first_lane(node: std::net::SocketAddr, slow: Arc<AtomicBool>) -> std::net::SocketAddr {
    let front = UdpSocket::bind("127.0.0.1:0").expect("relay");
    let at = front.local_addr().expect("addr");
    std::thread::spawn(move || {
        let mut ups: HashMap<std::net::SocketAddr, Arc<UdpSocket>> = HashMap::new();
        let mut first = None;
        let mut buf = [0u8; 4096];
        while let Ok((n, from)) = front.recv_from(&mut buf) {
            let up = ups.entry(from).or_insert_with(|| {
                let up = Arc::new(UdpSocket::bind("127.0.0.1:0").expect("upstream"));
                up.connect(node).expect("connect");
                let (back, up2) = (front.try_clone().expect("clone"), up.clone());
                std::thread::spawn(move || {
                    let mut b = [0u8; 4096];
                    while let Ok(n) = up2.recv(&mut b) {
                        let _ = back.send_to(&b[..n], from);
                    }
                });
                up
            });
            let (up, pkt) = (up.clone(), buf[..n].to_vec());
            if *first.get_or_insert(from) == from && slow.load(Ordering::Acquire) {
                std::thread::spawn(move || {
                    std::thread::sleep(Duration::from_millis(100));
                    let _ = up.send(&pkt);
                });
            } else {
                let _ = up.send(&pkt);
            }
        }
    });
    at
}

/// A thread's first operations go on lane 0; when it moves to a lane of its own, what it left
/// on lane 0 completes first: a read on the new lane sees the thread's asynchronous write
/// still held back on lane 0 (without the drain at the move, the read overtakes it).
#[test]
fn a_thread_keeps_its_order_when_it_moves_off_lane_zero() {
    let srv = node();
    let slow = Arc::new(AtomicBool::new(false));
    let relay = slow_first_lane(srv.udp_addr.expect("udp"), slow.clone());
    let cfg = Config {
        // No retry while lane 0 is held back (100 ms).
        initial_rto: Duration::from_millis(400),
        min_rto: Duration::from_millis(400),
        ..Config::default()
    };
    let t = clio_clib::transport::UdpTransport::connect(relay).expect("udp");
    let c = Client::connect(Box::new(t), cfg).expect("client"); // this thread keeps lane 0
    let va = c.ralloc(PAGE).expect("alloc");
    c.rwrite(va, &[0u8; 8]).expect("write");
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 1..LANE_AFTER - 1 {
                c.rread(va + 4096, 8).expect("read"); // on lane 0
            }
            slow.store(true, Ordering::Release);
            let w = c.rwrite_async(va, &[1u8; 8]).expect("write"); // the last on lane 0
            let got = c.rread(va, 8).expect("read"); // the move: a lane of its own
            assert_eq!(got, [1u8; 8], "the read overtook the thread's own write");
            c.rpoll_one(w).expect("write done");
        });
    });
    assert!(c.stats().lanes > 1, "the thread moved: {:?}", c.stats());
    srv.stop().expect("stop");
}
