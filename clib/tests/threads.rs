//! Many threads against a node that serves on several threads (`spawn_udp_threads`): one
//! Client shared by all threads, and a Client per thread (each its own socket), doing
//! fetch-and-add, a lock-protected read-modify-write and Clio-KV puts on shared keys. Every
//! result stays exact: the counters end at the number of increments, every FAA's old value
//! is seen once, and each key ends with a value one of its writers put last.

use clio_clib::{Client, Config};
use clio_sim::server::{spawn_udp_threads, ServerHandle};
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use std::collections::HashSet;
use std::sync::Arc;

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
