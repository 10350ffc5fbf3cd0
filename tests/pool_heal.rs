//! A pool that heals, across memory-node processes: three `clio board --memory-file`
//! processes, a local etcd holding the pool's view, and two clients of the pool (separate
//! `MultiClient`s, as two compute nodes would have), each writing its own durable region with
//! 2 replicas from a thread. Node 0 is killed (both fail over, the background healers give
//! both regions a replica on node 2), restarted on its file and readmitted by one client (the
//! other hears it through etcd), then node 1 is killed (healed onto node 0), then node 2: all
//! that is left of each region is what re-replication put on node 0. Every acknowledged write
//! of both writers is readable, the counters are exact, and both clients end at one epoch.

mod common;

use clio_clib::{MultiClient, MultiConfig, NodeSpec, Pool};
use clio_confmgr::{EtcdServer, EtcdStore};
use common::{memory_file_board, memory_file_boards, wait, Boards, Deaf, Writer};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SLOT: u64 = 256;
const SLOTS: u64 = 4000;

/// Writes slot after slot of its region (round and round), then bumps the region's counter.
fn writer(m: &MultiClient, a: u64, tag: u8) -> Writer {
    let m = m.clone();
    Writer::spawn(move |i| {
        let v = [tag; 8]
            .iter()
            .chain(&(i + 1).to_le_bytes())
            .copied()
            .collect::<Vec<_>>();
        m.rwrite(a + 8 + (i % SLOTS) * SLOT, &v.repeat(2))
            .unwrap_or_else(|e| panic!("writer {tag}: write {i}: {e}"));
        let old = m
            .fetch_add(a, 1)
            .unwrap_or_else(|e| panic!("writer {tag}: increment {i}: {e}"));
        assert_eq!(old, i, "writer {tag}: the counter skipped or repeated");
    })
}

/// The counter counts the writer's `n` operations, and its last `SLOTS` writes are there.
fn check(m: &MultiClient, a: u64, tag: u8, n: u64) {
    assert_eq!(m.rread(a, 8).unwrap(), n.to_le_bytes(), "counter of {tag}");
    let all = m.rread(a + 8, (SLOTS * SLOT) as usize).unwrap();
    for i in n.saturating_sub(SLOTS)..n {
        let v = [tag; 8]
            .iter()
            .chain(&(i + 1).to_le_bytes())
            .copied()
            .collect::<Vec<_>>();
        let at = ((i % SLOTS) * SLOT) as usize;
        assert_eq!(
            &all[at..at + 32],
            &v.repeat(2)[..],
            "writer {tag}: slot {i} lost"
        );
    }
}

/// The nodes on loopback `ports`, 24 MiB of each for the clients.
fn specs_of(ports: &[u16]) -> Vec<NodeSpec> {
    ports
        .iter()
        .map(|p| NodeSpec {
            addr: SocketAddr::from(([127, 0, 0, 1], *p)),
            capacity: 24 << 20,
        })
        .collect()
}

#[test]
fn two_writers_lose_nothing_through_three_failures_and_a_restart() {
    let Some(etcd) = EtcdServer::start_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (ports, files, mut nodes) = memory_file_boards(dir.path(), 3);
    let specs = specs_of(&ports);
    let cfg = MultiConfig {
        durable: true,
        log_bytes: 8 << 10, // applied and reset during the run
        heal_chunk: 64 << 10,
        ..MultiConfig::default()
    };
    let pool = Pool {
        store: EtcdStore::new(etcd.addr()),
        name: "heal".into(),
    };
    let a = MultiClient::connect_udp_pool(&specs, cfg.clone(), pool.clone()).unwrap();
    let b = MultiClient::connect_udp_pool(&specs, cfg, pool).unwrap();
    let len = 8 + SLOTS * SLOT;
    let (ra, rb) = (a.ralloc(len, 2).unwrap(), b.ralloc(len, 2).unwrap());
    assert_eq!(a.replicas_of(ra).unwrap(), vec![0, 1]);
    assert_eq!(b.replicas_of(rb).unwrap(), vec![0, 1]);
    let (wa, wb) = (writer(&a, ra, 0xA), writer(&b, rb, 0xB));
    wa.progress(50);
    wb.progress(50);
    let kill = |nodes: &mut Boards, i: usize| {
        nodes.0[i].kill().unwrap(); // SIGKILL
        nodes.0[i].wait().unwrap();
    };

    // 1. Node 0, both primaries, dies: both fail over and heal onto node 2.
    kill(&mut nodes, 0);
    wait("a did not heal onto node 2", || {
        a.replicas_of(ra).unwrap() == vec![1, 2]
    });
    wait("b did not heal onto node 2", || {
        b.replicas_of(rb).unwrap() == vec![1, 2]
    });
    wa.progress(50);
    wb.progress(50);
    // 2. Node 0 restarts on its file (stale) and is readmitted by a; b hears it from etcd.
    nodes.0[0] = memory_file_board(&files[0], ports[0]);
    let t = Instant::now();
    loop {
        match a.readmit(0) {
            Ok(()) => break,
            // The restarted process may not answer yet.
            Err(e) if t.elapsed() < Duration::from_secs(20) => {
                eprintln!("readmit: {e}");
                std::thread::sleep(Duration::from_millis(100));
            }
            Err(e) => panic!("readmit: {e}"),
        }
    }
    wait("b did not hear of the readmission", || !b.node_dead(0));
    // 3. Node 1, now both primaries, dies: healed onto the readmitted node 0.
    kill(&mut nodes, 1);
    wait("a did not heal onto node 0", || {
        a.replicas_of(ra).unwrap() == vec![2, 0]
    });
    wait("b did not heal onto node 0", || {
        b.replicas_of(rb).unwrap() == vec![2, 0]
    });
    wa.progress(50);
    wb.progress(50);
    // 4. Node 2 dies: what is left is the copy re-replication made on node 0.
    kill(&mut nodes, 2);
    wa.progress(20);
    wb.progress(20);
    let (na, nb) = (wa.finish(), wb.finish());
    assert_eq!(a.replicas_of(ra).unwrap(), vec![0]);
    assert_eq!(b.replicas_of(rb).unwrap(), vec![0]);
    check(&a, ra, 0xA, na);
    check(&b, rb, 0xB, nb);
    assert_eq!((a.epoch(), b.epoch()), (5, 5), "both at one view");
    let (sa, sb) = (a.stats(), b.stats());
    eprintln!("a: {na} operations, {sa:?}\nb: {nb} operations, {sb:?}");
    assert_eq!((sa.replicas_added, sb.replicas_added), (2, 2));
    assert!(sa.log_applies > 0 && sb.log_applies > 0);
}

fn pool_flags(etcd: SocketAddr, pool: &str) -> Vec<String> {
    [
        "--etcd",
        &etcd.to_string(),
        "--pool",
        pool,
        "--pool-lease-s",
        "2",
    ]
    .map(String::from)
    .to_vec()
}

/// `n` boards of the pool named `pool` on free ports.
fn pool_boards(n: usize, etcd: SocketAddr, pool: &str) -> (Vec<u16>, Boards) {
    common::small_boards_on_free_ports(n, |_| pool_flags(etcd, pool))
}

#[test]
fn nodes_announced_in_etcd_are_found_and_a_dead_nodes_lease_takes_it_out() {
    let Some(etcd) = EtcdServer::start_or_skip() else {
        return;
    };
    let (ports, mut nodes) = pool_boards(3, etcd.addr(), "disc");
    let pool = Pool {
        store: EtcdStore::new(etcd.addr()),
        name: "disc".into(),
    };
    let m = MultiClient::connect_pool(pool.clone(), MultiConfig::default()).unwrap();
    assert_eq!(m.nodes(), 3, "the client found the three nodes in etcd");
    let a = m.ralloc(1 << 20, 2).unwrap();
    m.rwrite(a + 4096, b"found through etcd").unwrap();
    let p = m.replicas_of(a).unwrap()[0];
    let addr = m.node_addr(p).unwrap();
    let k = ports.iter().position(|&q| q == addr.port()).unwrap();
    // The primary's process dies; the client sends nothing. Its lease (2 s) ends, etcd
    // deletes its entry, and the client takes it out and heals the region elsewhere.
    nodes.0[k].kill().unwrap();
    nodes.0[k].wait().unwrap();
    let t = Instant::now();
    wait("the dead node's lease never took it out", || m.node_dead(p));
    let took = t.elapsed();
    assert_eq!(m.epoch(), 2);
    wait("the region was not healed", || {
        m.replicas_of(a).unwrap().len() == 2
    });
    assert!(!m.replicas_of(a).unwrap().contains(&p));
    assert_eq!(m.rread(a + 4096, 18).unwrap(), b"found through etcd");
    // It restarts (empty: no memory file) and announces itself again: readmitted.
    let flags = pool_flags(etcd.addr(), "disc");
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    nodes.0[k] = common::small_board(ports[k], &flags);
    wait("the restarted node was not readmitted", || !m.node_dead(p));
    assert_eq!(m.epoch(), 3);
    eprintln!("out {took:?} after the kill (lease 2 s); {:?}", m.stats());

    // The operator's view and changes (`clio pool`): show, drain a node, put it back.
    let pool_cmd = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_clio"))
            .args(["pool"])
            .args(args)
            .args(["--etcd", &etcd.addr().to_string(), "--pool", "disc"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    };
    let shown = pool_cmd(&["show"]);
    assert!(shown.contains("epoch 3"), "{shown}");
    assert_eq!(shown.matches("| yes |").count(), 3, "{shown}");
    // The client is present (under its lease), following epoch 3.
    assert!(
        shown.contains(&format!("| {} | 3 |", m.client_id())),
        "{shown}"
    );
    let drained = m.replicas_of(a).unwrap()[0];
    let drained_addr = m.node_addr(drained).unwrap().to_string();
    let said = pool_cmd(&["out", &drained_addr]);
    assert!(said.contains("epoch 4"), "{said}");
    wait("the drained node was not taken out", || {
        m.node_dead(drained)
    });
    wait("the drained node's region was not healed", || {
        let r = m.replicas_of(a).unwrap();
        r.len() == 2 && !r.contains(&drained)
    });
    assert_eq!(m.rread(a + 4096, 18).unwrap(), b"found through etcd");
    let shown = pool_cmd(&["show"]);
    let line = shown
        .lines()
        .find(|l| l.starts_with(&format!("| {drained_addr} |")))
        .unwrap_or_else(|| panic!("{shown}"));
    assert!(line.ends_with("| out |"), "{shown}");
    pool_cmd(&["in", &drained_addr]);
    wait("the node put back was not readmitted", || {
        !m.node_dead(drained)
    });
    assert_eq!(m.epoch(), 5);
}

/// A node follows its pool's view by itself (`reg::POOL_EPOCH`): when the view moves on, the
/// node raises every RAS a pool client fenced, so a client still at the old view is refused
/// (`Stale`) there although no client of the new view ever reached the node. A RAS no pool
/// client fenced is left alone.
#[test]
fn a_node_raises_its_fenced_address_spaces_when_the_pools_view_moves_on() {
    use clio_clib::{Client, ClioError, Config, TransportKind};
    use clio_proto::epoch::wire;
    let Some(etcd) = EtcdServer::start_or_skip() else {
        return;
    };
    let (ports, _node) = pool_boards(1, etcd.addr(), "own");
    let port = ports[0];
    let pool = Pool {
        store: EtcdStore::new(etcd.addr()),
        name: "own".into(),
    };
    assert_eq!(pool.view().unwrap().epoch, 1);
    let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let connect = || Client::connect(TransportKind::Udp(addr).open().unwrap(), Config::default());
    let (member, outsider) = (connect().unwrap(), connect().unwrap());
    member.set_epoch(wire(1)).unwrap();
    let va = member.ralloc(1 << 16).unwrap();
    member.rwrite(va, b"epoch one").unwrap();
    let ova = outsider.ralloc(1 << 16).unwrap();

    // The operator drains another node: epoch 2. Nobody tells this node but etcd.
    let other: SocketAddr = "127.0.0.1:9".parse().unwrap();
    assert_eq!(pool.take_out(other).unwrap().epoch, 2);
    wait("the node never fenced the old view", || {
        member.rwrite(va, b"stale view") == Err(ClioError::Stale)
    });
    assert_eq!(member.rwrite(va, b"after it"), Err(ClioError::Stale));
    member.use_epoch(wire(2));
    let now = member.rread(va, 8).unwrap();
    assert!(
        now == b"epoch on" || now == b"stale vi",
        "only writes acknowledged before the fence are there: {now:?}"
    );
    // A RAS outside the pool (never fenced) goes on at epoch 0.
    outsider.rwrite(ova, b"not in a pool").unwrap();
    assert_eq!(outsider.epoch(), 0);
}

/// The operator drains the primary of two writers' regions (`clio pool out`; the node stays
/// up). Writer `a` hears it and fails over. Writer `b` missed the view (its watch is cut) and
/// goes on writing to the drained node: the nodes raised its address spaces to the new epoch
/// by themselves (the drained one included), so `b`'s old-view requests are refused (`Stale`,
/// counted), and `b` reads the view, fails over and goes on. Every acknowledged write of both
/// is at the new primary, and the drained node refuses `b`'s old view.
#[test]
fn a_writer_that_missed_a_view_is_refused_by_the_drained_primary() {
    let Some(etcd) = EtcdServer::start_or_skip() else {
        return;
    };
    let (ports, _nodes) = pool_boards(3, etcd.addr(), "drain");
    let specs = specs_of(&ports);
    let cfg = MultiConfig {
        auto_heal: false,
        ..MultiConfig::default()
    };
    let store = EtcdStore::new(etcd.addr());
    let pool = |store: Arc<dyn clio_clib::ConfigStore>| Pool {
        store,
        name: "drain".into(),
    };
    let a = MultiClient::connect_udp_pool(&specs, cfg.clone(), pool(store.clone())).unwrap();
    let b =
        MultiClient::connect_udp_pool(&specs, cfg, pool(Arc::new(Deaf(store.clone())))).unwrap();
    let (ra, rb) = (a.ralloc(1 << 20, 2).unwrap(), b.ralloc(1 << 20, 2).unwrap());
    assert_eq!(a.replicas_of(ra).unwrap()[0], 0);
    assert_eq!(b.replicas_of(rb).unwrap()[0], 0, "both primaries on node 0");
    let slot = |m: &MultiClient, r: u64, i: u64| m.rwrite(r + i * 64, &(i + 1).to_le_bytes());
    for i in 0..20 {
        slot(&a, ra, i).unwrap();
        slot(&b, rb, i).unwrap();
    }

    pool(store.clone()).take_out(specs[0].addr).unwrap();
    wait("a never adopted the drain", || a.node_dead(0));
    // b writes on; it knows nothing of the drain until node 0 refuses it.
    let mut i = 20;
    while b.stats().stale_answers == 0 {
        assert!(i < 16_000, "no node refused b's old view");
        slot(&b, rb, i).unwrap();
        i += 1;
    }
    for j in i..i + 20 {
        slot(&b, rb, j).unwrap();
        slot(&a, ra, j - i + 20).unwrap();
    }
    assert_eq!((a.epoch(), b.epoch()), (2, 2));
    assert!(b.node_dead(0), "b fell over to the backup");
    // The drained node itself holds b's address space at the new epoch: anything of the old
    // view (here a member joining with it) is refused there. Each node learns the view through
    // its own watch, so the refusal that sent b over may have been the backup's, ahead of node
    // 0's: it is waited for (bounded), not assumed.
    let (addr0, creds0) = b.credentials()[0];
    let old_view = clio_clib::Config {
        epoch: clio_proto::epoch::wire(1),
        heartbeat: false,
        ..clio_clib::Config::default()
    };
    wait("the drained node never refused the old view", || {
        let t = clio_clib::TransportKind::Udp(addr0).open().unwrap();
        match clio_clib::Client::join(t, old_view.clone(), creds0) {
            Err(clio_clib::ClioError::Stale) => true,
            Ok(_) => false,
            Err(e) => panic!("the old view's join met {e:?}, not Stale"),
        }
    });
    assert_eq!(b.replicas_of(rb).unwrap(), vec![1]);
    for (m, r, n) in [(&a, ra, 40), (&b, rb, i + 20)] {
        let all = m.rread(r, (n * 64) as usize).unwrap();
        for k in 0..n {
            let at = (k * 64) as usize;
            assert_eq!(all[at..at + 8], (k + 1).to_le_bytes(), "slot {k} lost");
        }
    }
    eprintln!(
        "b wrote {} slots at node 0 before it refused b; {:?}",
        i - 20,
        b.stats()
    );
}
