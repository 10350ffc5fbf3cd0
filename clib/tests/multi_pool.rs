//! Clients of one pool agree on which nodes are in service (clib/src/multi/pool.rs): a node
//! found dead by one client is out for every client, at one epoch, without the others waiting
//! out their own timeouts; a node that comes back stays out; a fail-over that cannot reach the
//! pool's store does not happen. The store here is the in-process one; `confmgr/tests/`
//! repeats the agreement on etcd.

mod common;

use clio_clib::{
    ClioError, ConfigStore, LocalStore, MultiClient, MultiConfig, OnChange, Pool, StoreError, View,
    WatchGuard,
};
use common::{udp_node_at, udp_nodes};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

const MIB: u64 = 1 << 20;

fn fast() -> MultiConfig {
    let mut c = MultiConfig::default();
    c.node.heartbeat = false;
    c
}

#[test]
fn a_node_one_client_finds_dead_is_out_for_every_client_of_the_pool() {
    let (mut s, addrs) = udp_nodes(3, 16 * MIB);
    let pool = Pool {
        store: LocalStore::new(),
        name: "rack-a".into(),
    };
    let a = MultiClient::connect_udp_pool(&addrs, fast(), pool.clone()).unwrap();
    let b = MultiClient::connect_udp_pool(&addrs, fast(), pool.clone()).unwrap();
    assert_eq!(
        (a.epoch(), b.epoch()),
        (1, 1),
        "a new pool starts at epoch 1"
    );
    let ra = a.ralloc(64 << 10, 2).unwrap();
    let rb = b.ralloc(64 << 10, 2).unwrap();
    assert_eq!(a.replicas_of(ra).unwrap()[0], 0);
    assert_eq!(b.replicas_of(rb).unwrap()[0], 0, "both primaries on node 0");
    a.rwrite(ra, b"written by a").unwrap();
    b.rwrite(rb, b"written by b").unwrap();
    for _ in 0..5 {
        b.fetch_add(rb + 64, 1).unwrap();
    }

    let b_to_node0 = b.node_stats()[0].packets_sent;
    // Node 0 stops. Client a meets it first and takes it out of service.
    let dead_addr = addrs[0].addr;
    s[0] = None;
    assert_eq!(a.rread(ra, 12).unwrap(), b"written by a");
    assert!(a.node_dead(0));
    assert_eq!(a.epoch(), 2);
    // Client b heard it from the pool's store, before sending anything to node 0.
    assert!(
        b.node_dead(0),
        "b adopted the view without a timeout of its own"
    );
    assert_eq!(b.epoch(), 2);
    assert_eq!(b.stats().failed_nodes, 1);
    let t = Instant::now();
    assert_eq!(b.fetch_add(rb + 64, 1).unwrap(), 5, "the counter is exact");
    assert_eq!(b.rread(rb, 12).unwrap(), b"written by b");
    assert!(
        t.elapsed() < fast().detection_bound() / 2,
        "b's fail-over waited for no timeout: {:?}",
        t.elapsed()
    );
    assert_eq!(
        b.node_stats()[0].packets_sent,
        b_to_node0,
        "nothing more went to node 0"
    );

    // Node 0 comes back on its address, empty: it missed writes, so it stays out, also for a
    // client that connects now.
    let _back = udp_node_at(dead_addr);
    let c = MultiClient::connect_udp_pool(&addrs, fast(), pool.clone()).unwrap();
    assert!(c.node_dead(0));
    assert_eq!(c.epoch(), 2);
    assert_eq!(
        c.credentials().len(),
        2,
        "no address space was created at the out node"
    );
    let rc = c.ralloc(MIB, 2).unwrap();
    assert_eq!(c.replicas_of(rc).unwrap().len(), 2);
    assert!(!c.replicas_of(rc).unwrap().contains(&0));
    let (v, _) = pool.store.read("/clio/pools/rack-a/view").unwrap().unwrap();
    let v = View::decode(&v).unwrap();
    assert_eq!(v.epoch, 2);
    assert_eq!(v.out.into_iter().collect::<Vec<_>>(), vec![dead_addr]);
}

/// A store that can be cut off, as a partition from etcd would.
struct Flaky {
    inner: Arc<LocalStore>,
    down: AtomicBool,
}

impl Flaky {
    fn check(&self) -> Result<(), StoreError> {
        if self.down.load(Ordering::Acquire) {
            Err(StoreError("unreachable (test)".into()))
        } else {
            Ok(())
        }
    }
}

impl ConfigStore for Flaky {
    fn read(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, StoreError> {
        self.check()?;
        self.inner.read(key)
    }
    fn compare_and_put(
        &self,
        key: &str,
        revision: Option<u64>,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        self.check()?;
        self.inner.compare_and_put(key, revision, value)
    }
    fn watch(&self, key: &str, on_change: OnChange) -> Result<Box<dyn WatchGuard>, StoreError> {
        self.inner.watch(key, on_change)
    }
    fn list(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>, u64)>, StoreError> {
        self.check()?;
        self.inner.list(prefix)
    }
    fn watch_prefix(
        &self,
        prefix: &str,
        on_change: OnChange,
    ) -> Result<Box<dyn WatchGuard>, StoreError> {
        self.inner.watch_prefix(prefix, on_change)
    }
    fn put_leased(
        &self,
        key: &str,
        value: &[u8],
        ttl: std::time::Duration,
    ) -> Result<Box<dyn clio_clib::LeasedEntry>, StoreError> {
        self.check()?;
        self.inner.put_leased(key, value, ttl)
    }
}

#[test]
fn a_client_cut_off_from_the_pools_store_does_not_fail_over_alone() {
    let (mut s, specs) = udp_nodes(2, 16 * MIB);
    let store = Arc::new(Flaky {
        inner: LocalStore::new(),
        down: AtomicBool::new(false),
    });
    let pool = Pool {
        store: store.clone(),
        name: "p".into(),
    };
    let m = MultiClient::connect_udp_pool(&specs, fast(), pool).unwrap();
    let r = m.ralloc(64 << 10, 2).unwrap();
    m.rwrite(r, b"kept").unwrap();
    s[0] = None;
    store.down.store(true, Ordering::Release);
    match m.rread(r, 4) {
        Err(ClioError::ConfigStore(msg)) => assert!(msg.contains("unreachable"), "{msg}"),
        other => panic!("a fail-over without the store: {other:?}"),
    }
    assert!(!m.node_dead(0), "the node was not dropped");
    assert_eq!(m.epoch(), 1);
    // The store is back: the next operation fails over through it.
    store.down.store(false, Ordering::Release);
    assert_eq!(m.rread(r, 4).unwrap(), b"kept");
    assert!(m.node_dead(0));
    assert_eq!(m.epoch(), 2);
}

#[test]
fn a_client_of_announced_nodes_follows_their_entries() {
    let (mut s, specs) = udp_nodes(3, 16 * MIB);
    let store = LocalStore::new();
    let pool = Pool {
        store: store.clone(),
        name: "announced".into(),
    };
    assert!(matches!(
        MultiClient::connect_pool(pool.clone(), fast()),
        Err(ClioError::InvalidArgument(_))
    ));
    let entry = |addr: std::net::SocketAddr| Pool::node_key_of(&pool.name, addr);
    let value = Pool::node_entry(16 * MIB);
    for n in &specs {
        store.put(&entry(n.addr), value.as_bytes());
    }
    let mut cfg = fast();
    cfg.auto_heal = true;
    let m = MultiClient::connect_pool(pool.clone(), cfg).unwrap();
    assert_eq!(m.nodes(), 3);
    let a = m.ralloc(1 << 16, 2).unwrap();
    m.rwrite(a, b"kept").unwrap();
    let p = m.replicas_of(a).unwrap()[0];
    let addr = m.node_addr(p).unwrap();
    let k = specs.iter().position(|n| n.addr == addr).unwrap();
    // The primary's entry goes (its lease ended): it is out at once, with no request of ours.
    s[k] = None;
    let sent = m.node_stats()[p].packets_sent;
    store.remove(&entry(addr));
    assert!(m.node_dead(p));
    assert_eq!(m.epoch(), 2);
    assert_eq!(m.node_stats()[p].packets_sent, sent);
    assert_eq!(m.rread(a, 4).unwrap(), b"kept");
    // It restarts and announces itself again: readmitted, and the healer may use it.
    s[k] = Some(udp_node_at(addr));
    store.put(&entry(addr), value.as_bytes());
    assert!(!m.node_dead(p), "readmitted when it announced itself again");
    assert_eq!(m.epoch(), 3);
    // A malformed entry is an error naming it, not a guess.
    store.put(&format!("{}nowhere", pool.nodes_prefix()), b"capacity 1\n");
    match pool.announced() {
        Err(e) => assert!(e.to_string().contains("nowhere"), "{e}"),
        Ok(v) => panic!("{v:?}"),
    }
}

#[test]
fn a_pool_client_connects_past_a_node_that_does_not_answer() {
    let (mut s, specs) = udp_nodes(3, 16 * MIB);
    s[2] = None;
    let pool = Pool {
        store: LocalStore::new(),
        name: "p".into(),
    };
    let m = MultiClient::connect_udp_pool(&specs, fast(), pool.clone()).unwrap();
    assert!(m.node_dead(2));
    assert_eq!(m.epoch(), 2, "taken out through the view");
    assert_eq!(m.credentials().len(), 2);
    let a = m.ralloc(1 << 16, 2).unwrap();
    assert!(!m.replicas_of(a).unwrap().contains(&2));
    // Without a pool the connect fails, as it always did.
    assert!(MultiClient::connect_udp(&specs, fast()).is_err());
}

#[test]
fn a_node_announced_later_joins_the_clients_of_the_pool() {
    let (s, specs) = udp_nodes(3, 16 * MIB);
    let store = LocalStore::new();
    let pool = Pool {
        store: store.clone(),
        name: "growing".into(),
    };
    let entry = |addr: std::net::SocketAddr| Pool::node_key_of(&pool.name, addr);
    let value = Pool::node_entry(16 * MIB);
    for n in &specs[..2] {
        store.put(&entry(n.addr), value.as_bytes());
    }
    let mut cfg = fast();
    cfg.auto_heal = true;
    let m = MultiClient::connect_pool(pool.clone(), cfg).unwrap();
    assert_eq!(m.nodes(), 2);
    assert!(
        m.ralloc(1 << 16, 3).is_err(),
        "two nodes hold no three replicas"
    );
    // A third node announces itself: the client takes it on and places on it.
    store.put(&entry(specs[2].addr), value.as_bytes());
    assert_eq!(m.nodes(), 3);
    assert_eq!(m.node_addr(2), Some(specs[2].addr));
    assert_eq!(m.stats().nodes_added, 1);
    let a = m.ralloc(1 << 16, 3).unwrap();
    assert_eq!(m.replicas_of(a).unwrap().len(), 3);
    m.rwrite(a, b"on three").unwrap();
    assert_eq!(m.rread(a, 8).unwrap(), b"on three");
    drop(s);
}

/// Clients are present in the pool's store while they live (`/clio/pools/<name>/clients/`,
/// under a lease on etcd): each entry says the epoch of the view its client follows, moves
/// on with the view, and goes with the client.
#[test]
fn clients_are_present_in_the_pool_with_the_epoch_they_follow() {
    let (_s, addrs) = udp_nodes(3, 16 * MIB);
    let pool = Pool {
        store: LocalStore::new(),
        name: "seen".into(),
    };
    let a = MultiClient::connect_udp_pool(&addrs, fast(), pool.clone()).unwrap();
    let b = MultiClient::connect_udp_pool(&addrs, fast(), pool.clone()).unwrap();
    assert_ne!(a.client_id(), b.client_id());
    let mut ids = vec![
        (a.client_id().to_string(), 1),
        (b.client_id().to_string(), 1),
    ];
    ids.sort();
    assert_eq!(pool.clients().unwrap(), ids);
    pool.take_out(addrs[2].addr).unwrap();
    assert_eq!(
        pool.clients()
            .unwrap()
            .iter()
            .map(|c| c.1)
            .collect::<Vec<_>>(),
        vec![2, 2],
        "both moved on with the view"
    );
    let gone = b.client_id().to_string();
    drop(b);
    let left = pool.clients().unwrap();
    assert_eq!(left, vec![(a.client_id().to_string(), 2)], "{gone} left");
}
