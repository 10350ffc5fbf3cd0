//! Epochs fence a stale view (docs/replication.md, "Epochs"): a multi-node client of a pool
//! raises its address space's epoch on every node in service when it adopts a view, and
//! stamps every request with it; a member still at an older view is refused with `Stale`
//! and changes nothing; a client that missed a view (its store's watch is silent) and meets
//! a node that holds a newer epoch reads the view again and goes on under it.

mod common;

use clio_clib::{
    Client, ClioError, Config, ConfigStore, LocalStore, MultiClient, MultiConfig, OnChange, Pool,
    StoreError, TransportKind, WatchGuard,
};
use clio_proto::epoch::wire;
use clio_proto::Opcode;
use common::relay::Relay;
use common::{udp_nodes, udp_nodes_on_files};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

const MIB: u64 = 1 << 20;

/// The in-process store whose watches never report: a client cut off from the store's
/// notifications (it still reads and writes the store when it asks).
struct Deaf(Arc<LocalStore>);

struct Nothing;
impl WatchGuard for Nothing {}

impl ConfigStore for Deaf {
    fn read(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, StoreError> {
        self.0.read(key)
    }
    fn compare_and_put(
        &self,
        key: &str,
        revision: Option<u64>,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        self.0.compare_and_put(key, revision, value)
    }
    fn watch(&self, _: &str, _: OnChange) -> Result<Box<dyn WatchGuard>, StoreError> {
        Ok(Box::new(Nothing))
    }
    fn list(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>, u64)>, StoreError> {
        self.0.list(prefix)
    }
    fn watch_prefix(&self, _: &str, _: OnChange) -> Result<Box<dyn WatchGuard>, StoreError> {
        Ok(Box::new(Nothing))
    }
    fn put_leased(
        &self,
        key: &str,
        value: &[u8],
        ttl: std::time::Duration,
    ) -> Result<Box<dyn clio_clib::LeasedEntry>, StoreError> {
        self.0.put_leased(key, value, ttl)
    }
}

fn cfg() -> MultiConfig {
    let mut c = MultiConfig::default();
    c.node.heartbeat = false;
    c.auto_heal = false;
    c
}

/// Wait (bounded) until `f` holds.
fn eventually(what: &str, f: impl Fn() -> bool) {
    let t = Instant::now();
    while !f() {
        assert!(t.elapsed() < Duration::from_secs(10), "never: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_stale_member_is_refused_and_a_client_that_missed_a_view_catches_up() {
    let (_s, specs) = udp_nodes(3, 16 * MIB);
    let store = LocalStore::new();
    let pool = |store: Arc<dyn ConfigStore>| Pool {
        store,
        name: "fenced".into(),
    };
    // `m` hears every view; `deaf` never hears one by itself.
    let m = MultiClient::connect_udp_pool(&specs, cfg(), pool(store.clone())).unwrap();
    let deaf_store: Arc<dyn ConfigStore> = Arc::new(Deaf(store.clone()));
    let deaf = MultiClient::connect_udp_pool(&specs, cfg(), pool(deaf_store)).unwrap();
    assert_eq!((m.epoch(), deaf.epoch()), (1, 1));
    let r = m.ralloc(64 << 10, 2).unwrap();
    m.rwrite(r, b"epoch one").unwrap();
    let d = deaf.ralloc(64 << 10, 2).unwrap();
    deaf.rwrite(d, b"deaf one").unwrap();
    assert_eq!(m.replicas_of(r).unwrap(), vec![0, 1]);

    // A member of m's address space at node 0 (its primary), at epoch 1.
    let (addr0, creds0) = m.credentials()[0];
    let open = || TransportKind::Udp(addr0).open().unwrap();
    let at = |epoch| Config {
        epoch,
        heartbeat: false,
        ..Config::default()
    };
    assert_eq!(
        Client::join(open(), at(0), creds0).err(),
        Some(ClioError::Stale),
        "a member that does not know the RAS's epoch does not get in"
    );
    let old = Client::join(open(), at(wire(1)), creds0).unwrap();

    // The operator drains node 2 (no replica of `r` there): epoch 2. `m` adopts it and
    // raises its RAS's epoch on nodes 0 and 1; the member still at epoch 1 is refused there.
    let p = pool(store.clone());
    assert_eq!(p.take_out(specs[2].addr).unwrap().epoch, 2);
    assert_eq!(m.epoch(), 2);
    let stale_write = || old.rwrite(0, b"x");
    eventually("node 0 fences epoch 1", || {
        stale_write() == Err(ClioError::Stale)
    });
    // m goes on at epoch 2 and its data is untouched.
    assert_eq!(m.rread(r, 9).unwrap(), b"epoch one");
    m.rwrite(r, b"epoch two").unwrap();
    assert_eq!(m.stats().stale_answers, 0);

    // `deaf` is still at epoch 1. A member of its address space at node 0 that saw epoch 2
    // raises the node; deaf's next write there is Stale, and it reads the view and goes on.
    let (_, dcreds0) = deaf.credentials()[0];
    let peer = Client::join(open(), at(wire(1)), dcreds0).unwrap();
    peer.set_epoch(wire(2)).unwrap();
    assert_eq!(deaf.epoch(), 1, "it heard nothing");
    deaf.rwrite(d, b"deaf two").unwrap();
    assert_eq!(deaf.epoch(), 2, "caught up on the Stale answer");
    assert!(deaf.stats().stale_answers >= 1, "{:?}", deaf.stats());
    assert_eq!(deaf.rread(d, 8).unwrap(), b"deaf two");
}

/// An atomic executed at the primary whose persist meets a newer view (`Stale`) is not run
/// again: the persist goes again under the new view, and the counter counts the increment
/// once. (`durable` pools persist an atomic's word before its records go to the backups.)
#[test]
fn an_atomic_whose_persist_meets_a_new_view_runs_once() {
    let dir = tempfile::tempdir().unwrap();
    let (_s, mut specs) = udp_nodes_on_files(3, 16 * MIB, dir.path());
    let store = LocalStore::new();
    let pool = |store: Arc<dyn ConfigStore>| Pool {
        store,
        name: "persist".into(),
    };
    // Node 0 (the region's primary) behind a relay: when the atomic's Persist goes by, the
    // operator drains node 2 (epoch 2) and a member that saw it raises node 0's RAS to it;
    // the client, deaf to the store, sends the Persist at epoch 1.
    let node0 = specs[0].addr;
    let (armed, peer) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(OnceLock::<Client>::new()),
    );
    let (arm, p, st, drained) = (armed.clone(), peer.clone(), store.clone(), specs[2].addr);
    let relay = Relay::start(node0, move |seen| {
        if !seen.response
            && seen.opcode == Some(Opcode::Persist)
            && arm.swap(false, Ordering::AcqRel)
        {
            let view = pool(st.clone()).take_out(drained).expect("drain node 2");
            if let Some(m) = p.get() {
                m.set_epoch(wire(view.epoch)).expect("raise node 0");
            }
        }
        true
    });
    specs[0].addr = relay.addr;
    let cfg = MultiConfig {
        durable: true,
        ..cfg()
    };
    let deaf_store: Arc<dyn ConfigStore> = Arc::new(Deaf(store.clone()));
    let m = MultiClient::connect_udp_pool(&specs, cfg, pool(deaf_store)).unwrap();
    let r = m.ralloc(64 << 10, 2).unwrap();
    assert_eq!(m.replicas_of(r).unwrap(), vec![0, 1]);
    let (_, creds0) = m.credentials()[0];
    let member = Client::join(
        TransportKind::Udp(node0).open().unwrap(),
        Config {
            epoch: wire(1),
            heartbeat: false,
            ..Config::default()
        },
        creds0,
    )
    .unwrap();
    let _ = peer.set(member);

    armed.store(true, Ordering::Release);
    assert_eq!(m.fetch_add(r, 1).unwrap(), 0);
    assert!(!armed.load(Ordering::Acquire), "the Persist went by");
    assert_eq!(m.epoch(), 2, "it met the new view");
    assert!(m.stats().stale_answers >= 1, "{:?}", m.stats());
    assert_eq!(m.rread(r, 8).unwrap(), 1u64.to_le_bytes(), "counted once");
    assert_eq!(m.fetch_add(r, 1).unwrap(), 1);
}
