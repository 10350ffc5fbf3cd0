//! Several writers on one replicated space, across memory-node processes
//! (docs/replication.md, "Several writers"): three `clio board --memory-file --etcd --pool`
//! processes, a local etcd, and two writers of one shared space (separate `MultiClient`s, as
//! two compute nodes would have) writing one region with 2 replicas: each its own slots and
//! both one counter. The primary is SIGKILLed under them (both fail over, the region is
//! healed onto the third node), restarted on its file and readmitted; then the operator drains
//! the next primary while writer `b`'s store watch is cut: the drained node refuses `b`'s old
//! view (asserted: it was tried), `b` reads the view and goes on; the region is healed onto
//! the readmitted node; then the third node dies. Every acknowledged write of both writers is
//! on the one node left, and the counter counts each acknowledged increment once.

mod common;

use clio_clib::{MultiClient, MultiConfig, NodeSpec, Pool};
use clio_confmgr::{EtcdServer, EtcdStore};
use common::{small_board, small_boards_on_free_ports, wait_or, Deaf, Writer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

const SLOT: u64 = 64;
/// Slots of each writer; its `i`-th write goes to slot `i % SLOTS` (a writer runs until
/// stopped), so the last `SLOTS` acknowledged writes of each are checked.
const SLOTS: u64 = 4000;

/// Writes its slots of the region (from 8 + its first slot on, round and round), each write
/// followed by an increment of the shared counter at the region's start.
fn writer(m: &MultiClient, r: u64, tag: u8) -> Writer {
    let m = m.clone();
    let first = u64::from(tag & 1) * SLOTS;
    Writer::spawn(move |i| {
        m.rwrite(r + 8 + (first + i % SLOTS) * SLOT, &value(tag, i))
            .unwrap_or_else(|e| panic!("writer {tag:x}: write {i}: {e}"));
        m.fetch_add(r, 1)
            .unwrap_or_else(|e| panic!("writer {tag:x}: increment {i}: {e}"));
    })
}

fn value(tag: u8, i: u64) -> Vec<u8> {
    [tag; 8]
        .iter()
        .chain(&(i + 1).to_le_bytes())
        .copied()
        .collect()
}

#[test]
fn two_writers_of_one_space_lose_nothing_through_two_failures_and_a_restart_between() {
    let Some(etcd) = EtcdServer::start_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let etcd_addr = etcd.addr().to_string();
    let flags = |i: usize| -> Vec<String> {
        let file = dir.path().join(format!("mem{i}"));
        [
            "--memory-file",
            &file.to_string_lossy(),
            "--etcd",
            &etcd_addr,
            "--pool",
            "space",
            "--pool-lease-s",
            "2",
        ]
        .map(String::from)
        .to_vec()
    };
    let (ports, mut nodes) = small_boards_on_free_ports(3, flags);
    // Node `i` again, on its port and file.
    let board = |i: usize| {
        let f = flags(i);
        small_board(ports[i], &f.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let specs: Vec<NodeSpec> = ports
        .iter()
        .map(|p| NodeSpec {
            addr: SocketAddr::from(([127, 0, 0, 1], *p)),
            capacity: 24 << 20,
        })
        .collect();
    let cfg = MultiConfig {
        durable: true,
        log_bytes: 8 << 10, // applied and reset during the run
        space: Some("orders".into()),
        presence_lease: Duration::from_secs(1),
        ..MultiConfig::default()
    };
    let store = EtcdStore::new(etcd.addr());
    let pool = |store: Arc<dyn clio_clib::ConfigStore>| Pool {
        store,
        name: "space".into(),
    };
    let a = MultiClient::connect_udp_pool(&specs, cfg.clone(), pool(store.clone())).unwrap();
    let b =
        MultiClient::connect_udp_pool(&specs, cfg, pool(Arc::new(Deaf(store.clone())))).unwrap();
    assert_eq!(
        a.credentials(),
        b.credentials(),
        "one address space per node"
    );
    let len = 8 + 2 * SLOTS * SLOT;
    let r = a.ralloc(len, 2).unwrap();
    assert_eq!(a.replicas_of(r).unwrap(), vec![0, 1]);
    let (wa, wb) = (writer(&a, r, 0xA), writer(&b, r, 0xB));
    wa.progress(50);
    wb.progress(50);
    let replicas = |m: &MultiClient| m.replicas_of(r).unwrap();
    // What a failed wait reports: each writer's view of the region and its counters.
    let state = || {
        format!(
            "a {:?} epoch {} {:?}; b {:?} epoch {} {:?}",
            replicas(&a),
            a.epoch(),
            a.stats(),
            replicas(&b),
            b.epoch(),
            b.stats()
        )
    };

    // 1. The primary dies under both writers: both fail over, one heals the region onto
    //    node 2 while both keep writing it.
    nodes.0[0].kill().unwrap(); // SIGKILL
    nodes.0[0].wait().unwrap();
    wait_or(
        "not healed onto node 2",
        || replicas(&a) == vec![1, 2] && replicas(&b) == vec![1, 2],
        state,
    );
    wa.progress(50);
    wb.progress(50);
    // 2. It restarts on its file (it missed writes) and a readmits it: the space forgets what
    //    it had there and starts a fresh address space. b, deaf, meets the new view at a node.
    nodes.0[0] = board(0);
    let t = std::time::Instant::now();
    while let Err(e) = a.readmit(0) {
        // The restarted process may not answer yet.
        assert!(t.elapsed() < Duration::from_secs(20), "readmit: {e}");
        std::thread::sleep(Duration::from_millis(100));
    }
    wait_or("b never readmitted node 0", || !b.node_dead(0), state);
    wa.progress(50);
    wb.progress(50);
    // 3. The operator drains the new primary. a hears it, fails over and heals onto node 0;
    //    b, whose watch is cut, writes on to the drained node until the node, following the
    //    view itself, refuses b's old view.
    let before = b.stats().stale_answers;
    pool(store.clone()).take_out(specs[1].addr).unwrap();
    wait_or("a never adopted the drain", || a.node_dead(1), state);
    wait_or(
        "the drained node never refused b",
        || b.stats().stale_answers > before,
        state,
    );
    wait_or(
        "not healed onto node 0",
        || replicas(&a) == vec![2, 0] && replicas(&b) == vec![2, 0],
        state,
    );
    wa.progress(50);
    wb.progress(50);
    // 4. Node 2 dies: what is left is the copy healing made on the readmitted node 0.
    nodes.0[2].kill().unwrap();
    nodes.0[2].wait().unwrap();
    wa.progress(50);
    wb.progress(50);
    let (na, nb) = (wa.finish(), wb.finish());
    assert_eq!(replicas(&a), vec![0]);
    assert_eq!(replicas(&b), vec![0]);
    assert_eq!(a.epoch(), b.epoch(), "both at one view");
    let added = a.stats().replicas_added + b.stats().replicas_added;
    assert_eq!(added, 2, "one fill per lost replica, by one writer");

    // Every acknowledged write of both is on the node left, the counter exact.
    for m in [&a, &b] {
        assert_eq!(
            m.rread(r, 8).unwrap(),
            (na + nb).to_le_bytes(),
            "the counter"
        );
        let all = m.rread(r + 8, (2 * SLOTS * SLOT) as usize).unwrap();
        for (tag, n) in [(0xAu8, na), (0xB, nb)] {
            let first = u64::from(tag & 1) * SLOTS;
            for i in n.saturating_sub(SLOTS)..n {
                let at = ((first + i % SLOTS) * SLOT) as usize;
                assert_eq!(
                    all[at..at + 16],
                    value(tag, i),
                    "writer {tag:x}: slot {i} lost"
                );
            }
        }
    }
    eprintln!(
        "a: {na} operations, {:?}\nb: {nb} operations, {:?}",
        a.stats(),
        b.stats()
    );
}
