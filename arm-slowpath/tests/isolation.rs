//! Tenants cannot hurt each other through the slow path: each test plays the attacker
//! against one quota or rule of `proto::quota` and `docs/security.md`, through the same ring
//! descriptors the fast path hands over.

use clio_proto::frame::Route;
use clio_proto::layout::MemoryLayout;
use clio_proto::quota::Quota;
use clio_proto::ring::{Descriptor, RingLayout};
use clio_proto::{Header, Opcode, Status};
use clio_slowpath::{KeySource, Limits, RingWindow, SlowPath, SlowPathConfig};
use std::cell::Cell;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

const DRAM: u64 = 64 << 20;

/// A slow path with its ring window and memory, driven as the fast path would.
struct Node {
    sp: SlowPath,
    ring: RingWindow,
    mem: Vec<u8>,
}

fn node(limits: Limits, lease: Duration) -> Node {
    let cfg = SlowPathConfig {
        keys: KeySource::seeded(11),
        lease,
        limits,
    };
    let sp = SlowPath::with_config(MemoryLayout::new(DRAM, 12).unwrap(), cfg);
    let ring = RingWindow::anonymous(RingLayout::default()).unwrap();
    ring.init_fast_path(DRAM, 12);
    Node {
        sp,
        ring,
        mem: vec![0u8; DRAM as usize],
    }
}

fn from(ip: [u8; 4], port: u16) -> Route {
    Route::udp(
        SocketAddrV4::new(Ipv4Addr::from(ip), port),
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, 48850),
    )
}

impl Node {
    /// Send `h` from `route` through the ring and return the slow path's reply.
    fn call(&mut self, route: Route, h: Header) -> Header {
        let (sp, ring, mem) = (&mut self.sp, &self.ring, &mut self.mem);
        ring.push_rx(&Descriptor::Request { route, header: h })
            .unwrap();
        // An allocation's PTE writes come first and may fill the TX ring: drain it as the fast
        // path would until the reply is out.
        for _ in 0..100_000 {
            sp.poll(ring, mem);
            while let Some(d) = ring.pop_tx() {
                if let Ok(Descriptor::Reply { header, .. }) = d {
                    return header;
                }
            }
        }
        panic!("no reply")
    }
}

fn register(nonce: u64, secret: u64) -> Header {
    Header {
        arg0: nonce,
        arg1: secret,
        ..Header::request(Opcode::Register, 0, nonce as u32, 0)
    }
}

fn join(pid: u16, key: u64, nonce: u64) -> Header {
    Header {
        arg0: nonce,
        ..Header::request(Opcode::Join, pid, nonce as u32, 0).with_credentials(key, 0)
    }
}

fn alloc(pid: u16, client: u16, req: u32, bytes: u64) -> Header {
    Header {
        arg0: bytes,
        arg1: 3,
        client,
        ..Header::request(Opcode::Alloc, pid, req, 0)
    }
}

#[test]
fn one_source_cannot_take_more_than_its_share_of_pids() {
    let limits = Limits {
        ras_per_source: 3,
        ..Limits::default()
    };
    let mut node = node(limits, Duration::from_secs(10));
    let attacker = from([10, 0, 0, 66], 1000);
    let mut pids = Vec::new();
    for n in 1..=3 {
        // Ports differ: a host's processes share its quota.
        let r = node.call(from([10, 0, 0, 66], 1000 + n as u16), register(n, 0));
        assert_eq!(r.status, Status::Ok);
        pids.push((r.pid, r.arg1 as u16));
    }
    let r = node.call(attacker, register(4, 0));
    assert_eq!(r.status, Status::QuotaExceeded);
    assert_eq!(Quota::from_u64(r.arg1), Some(Quota::RasPerSource));
    assert_eq!(r.arg0, 4, "no key handed out (the nonce echoed)");
    // A retried Register that already succeeded is not refused.
    let again = node.call(attacker, register(2, 0));
    assert_eq!((again.status, again.pid), (Status::Ok, pids[1].0));
    // Another host still gets in.
    let honest = node.call(from([10, 0, 0, 7], 1), register(100, 0));
    assert_eq!(honest.status, Status::Ok);
    // A torn-down RAS gives its source room again.
    let (pid, client) = pids[0];
    let bye = Header {
        client,
        ..Header::request(Opcode::Unregister, pid, 77, 0)
    };
    assert_eq!(node.call(attacker, bye).status, Status::Ok);
    assert_eq!(node.call(attacker, register(5, 0)).status, Status::Ok);
    assert_eq!(node.sp.stats().quota_refusals, 1);
}

#[test]
fn the_default_source_quota_leaves_half_the_client_ids() {
    // Every RAS has a member, so the member quota (half of the 1,023 client ids) binds
    // before the RAS quota (half of the 4,095 PIDs) does.
    const {
        assert!(
            clio_proto::quota::DEFAULT_MEMBERS_PER_SOURCE
                < clio_proto::quota::DEFAULT_RAS_PER_SOURCE
        )
    };
    let attacker = from([10, 0, 0, 66], 1000);
    // Register and Join from one host stop at half the client ids.
    let mut node = node(Limits::default(), Duration::from_secs(10));
    let first = node.call(attacker, register(1, 0));
    let mut ok = 1;
    for n in 2..=1023u64 {
        let r = if n % 2 == 0 {
            node.call(attacker, register(n, 0))
        } else {
            node.call(attacker, join(first.pid, first.arg0, n))
        };
        match r.status {
            Status::Ok => ok += 1,
            Status::QuotaExceeded => {
                assert_eq!(Quota::from_u64(r.arg1), Some(Quota::MembersPerSource));
                break;
            }
            s => panic!("unexpected {s:?}"),
        }
    }
    assert_eq!(ok, clio_proto::quota::DEFAULT_MEMBERS_PER_SOURCE);
    assert!(2 * ok < clio_proto::consts::RING_MEMBERS as u32 - 1);
    let honest = node.call(from([10, 0, 0, 7], 1), register(1 << 40, 0));
    assert_eq!(honest.status, Status::Ok);
    let joins = node.call(from([10, 0, 0, 7], 1), join(first.pid, first.arg0, 1 << 41));
    assert_eq!(
        joins.status,
        Status::Ok,
        "another host may join the same RAS"
    );
}

#[test]
fn register_needs_the_admission_secret_when_the_node_has_one() {
    let limits = Limits {
        admission_secret: Some(0x5EC2E7),
        ..Limits::default()
    };
    let mut node = node(limits, Duration::from_secs(10));
    let host = from([10, 0, 0, 9], 5);
    for wrong in [0, 0x5EC2E6, u64::MAX] {
        let r = node.call(host, register(wrong ^ 1, wrong));
        assert_eq!(
            (r.status, r.arg0, r.pid),
            (Status::Denied, wrong ^ 1, 0),
            "secret {wrong:#x}: denied, no key, no pid"
        );
    }
    assert_eq!(node.sp.registry().len(), 0, "nothing registered");
    let r = node.call(host, register(1, 0x5EC2E7));
    assert_eq!(r.status, Status::Ok);
    assert_ne!(r.arg0, 0);
    assert_eq!(node.sp.stats().admission_refusals, 3);
}

#[test]
fn one_ras_cannot_take_more_than_its_share_of_memory() {
    let mut node = node(Limits::default(), Duration::from_secs(10));
    let a = node.call(from([10, 0, 0, 1], 1), register(1, 0));
    let b = node.call(from([10, 0, 0, 2], 1), register(2, 0));
    let data = node.sp.layout().data_pages * 4096;
    let hog = alloc(a.pid, a.arg1 as u16, 1, data / 2 + 4096);
    let r = node.call(from([10, 0, 0, 1], 1), hog);
    assert_eq!(r.status, Status::QuotaExceeded);
    assert_eq!(Quota::from_u64(r.arg1), Some(Quota::MemoryPerRas));
    // Up to the share, in pieces, and not a page more.
    let mut held = 0;
    let mut req = 2;
    loop {
        let r = node.call(
            from([10, 0, 0, 1], 1),
            alloc(a.pid, a.arg1 as u16, req, 1 << 20),
        );
        req += 1;
        if r.status != Status::Ok {
            assert_eq!(
                (r.status, Quota::from_u64(r.arg1)),
                (Status::QuotaExceeded, Some(Quota::MemoryPerRas))
            );
            break;
        }
        held += 1 << 20;
    }
    assert!(
        held <= data / 2 && held + (1 << 20) > data / 2,
        "held {held} of {data}"
    );
    // The neighbour still gets the other half.
    let r = node.call(
        from([10, 0, 0, 2], 1),
        alloc(b.pid, b.arg1 as u16, 1, data / 2 - (2 << 20)),
    );
    assert_eq!(r.status, Status::Ok);
}

#[test]
fn placement_work_of_one_allocation_is_bounded() {
    let limits = Limits {
        placement_budget: 1000,
        ..Limits::default()
    };
    let mut node = node(limits, Duration::from_secs(10));
    let a = node.call(from([10, 0, 0, 1], 1), register(1, 0));
    let ok = node.call(
        from([10, 0, 0, 1], 1),
        alloc(a.pid, a.arg1 as u16, 1, 1000 * 4096),
    );
    assert_eq!(ok.status, Status::Ok, "within the budget");
    let r = node.call(
        from([10, 0, 0, 1], 1),
        alloc(a.pid, a.arg1 as u16, 2, 1001 * 4096),
    );
    assert_eq!(r.status, Status::QuotaExceeded);
    assert_eq!(Quota::from_u64(r.arg1), Some(Quota::PlacementWork));
    assert_eq!(node.sp.stats().allocs, 1);
}

#[test]
fn a_flood_of_slow_path_requests_cannot_evict_anothers_replay_protection() {
    let mut node = node(Limits::default(), Duration::from_secs(10));
    let v = node.call(from([10, 0, 0, 1], 1), register(1, 0));
    let m = node.call(from([10, 0, 0, 2], 1), register(2, 0));
    let victim_alloc = alloc(v.pid, v.arg1 as u16, 42, 4096);
    let first = node.call(from([10, 0, 0, 1], 1), victim_alloc);
    assert_eq!(first.status, Status::Ok);
    // The neighbour floods cheap cached requests (frees of nothing).
    for r in 0..5000 {
        let free = Header {
            client: m.arg1 as u16,
            ..Header::request(Opcode::Free, m.pid, r, 1 << 30)
        };
        node.call(from([10, 0, 0, 2], 1), free);
    }
    // The victim's retried Alloc is answered from the cache, not executed again.
    let again = node.call(from([10, 0, 0, 1], 1), victim_alloc);
    assert_eq!((again.status, again.va), (Status::Ok, first.va));
    assert_eq!(node.sp.stats().allocs, 1, "executed once");
}

#[test]
fn a_reused_pid_finds_nothing_of_its_previous_owner() {
    // As many client ids as PIDs: both come back together, the worst case below.
    let limits = Limits {
        pids: 64,
        clients: 64,
        ..Limits::default()
    };
    let mut node = node(limits, Duration::from_secs(10));
    let old = node.call(from([10, 0, 0, 1], 1), register(1, 0));
    let (pid, client) = (old.pid, old.arg1 as u16);
    let a = node.call(from([10, 0, 0, 1], 1), alloc(pid, client, 9, 4096));
    assert_eq!(a.status, Status::Ok);
    let bye = Header {
        client,
        ..Header::request(Opcode::Unregister, pid, 10, 0)
    };
    assert_eq!(node.call(from([10, 0, 0, 1], 1), bye).status, Status::Ok);
    assert_eq!(
        node.sp.reply_cache_len(),
        0,
        "the RAS's answers went with it"
    );
    // Cycle registrations until the PID comes back (FIFO reuse: after every other PID).
    let mut n = 2;
    let new = loop {
        let r = node.call(from([10, 0, 0, 2 + (n % 200) as u8], 1), register(n, 0));
        assert_eq!(r.status, Status::Ok);
        n += 1;
        if r.pid == pid && r.arg1 as u16 == client {
            break r;
        }
        let bye = Header {
            client: r.arg1 as u16,
            ..Header::request(Opcode::Unregister, r.pid, 1, 0)
        };
        node.call(from([10, 0, 0, 2 + (n % 200) as u8], 1), bye);
    };
    assert_eq!(
        new.arg1 as u16, client,
        "same pid, same client id: the worst case"
    );
    // The new owner's request with the old owner's req_id executes; it is not the old answer.
    let r = node.call(from([10, 0, 0, 3], 1), alloc(pid, client, 9, 8192));
    assert_eq!(r.status, Status::Ok);
    assert_eq!(
        r.arg0, 8192,
        "a fresh allocation, not the old owner's recorded one"
    );
}

#[test]
fn leases_are_judged_on_arrival_not_after_a_long_request() {
    let lease = Duration::from_secs(2);
    let mut node = node(Limits::default(), lease);
    let t0 = Instant::now();
    let victim = node.sp.register_at(1, t0).map(|(p, _, c)| (p, c)).unwrap();
    let busy = node.sp.register_at(2, t0).map(|(p, _, c)| (p, c)).unwrap();
    node.sp.poll_at(&node.ring, &mut node.mem, t0);
    while node.ring.pop_tx().is_some() {}
    // In the ring: a request that keeps the slow path busy for a second, then the victim's
    // heartbeat, which arrived while it ran. The clock moves a second on every reading.
    node.ring
        .push_rx(&Descriptor::Request {
            route: from([10, 0, 0, 2], 1),
            header: alloc(busy.0, busy.1, 1, 4096),
        })
        .unwrap();
    node.ring
        .push_rx(&Descriptor::Request {
            route: from([10, 0, 0, 1], 1),
            header: Header {
                client: victim.1,
                ..Header::request(Opcode::Heartbeat, victim.0, 1, 0)
            },
        })
        .unwrap();
    let secs = Cell::new(0u64);
    node.sp.poll_clocked(&node.ring, &mut node.mem, || {
        secs.set(secs.get() + 1);
        t0 + Duration::from_secs(secs.get())
    });
    // The heartbeat was taken at t0+3 s: the lease runs to t0+5 s.
    node.sp
        .poll_at(&node.ring, &mut node.mem, t0 + Duration::from_millis(4500));
    assert!(
        node.sp.registry().members(victim.0) == 1,
        "a member whose heartbeat reached the node within its lease was expired"
    );
    node.sp
        .poll_at(&node.ring, &mut node.mem, t0 + Duration::from_millis(5500));
    assert_eq!(node.sp.registry().members(victim.0), 0, "and it does end");
}

#[test]
fn a_flood_of_allocations_delays_its_own_ras_not_anothers() {
    let mut node = node(Limits::default(), Duration::from_secs(10));
    let hog = node.call(from([10, 0, 0, 66], 1), register(1, 0));
    let v = node.call(from([10, 0, 0, 1], 1), register(2, 0));
    // 50 allocations of the hog reach the ring first, then the victim's heartbeat and alloc.
    for r in 0..50 {
        node.ring
            .push_rx(&Descriptor::Request {
                route: from([10, 0, 0, 66], 1),
                header: alloc(hog.pid, hog.arg1 as u16, 100 + r, 4096),
            })
            .unwrap();
    }
    let beat = Header {
        client: v.arg1 as u16,
        ..Header::request(Opcode::Heartbeat, v.pid, 7, 0)
    };
    node.ring
        .push_rx(&Descriptor::Request {
            route: from([10, 0, 0, 1], 1),
            header: beat,
        })
        .unwrap();
    node.ring
        .push_rx(&Descriptor::Request {
            route: from([10, 0, 0, 1], 1),
            header: alloc(v.pid, v.arg1 as u16, 8, 4096),
        })
        .unwrap();
    let mut replies = Vec::new();
    for _ in 0..100 {
        node.sp.poll(&node.ring, &mut node.mem);
        while let Some(d) = node.ring.pop_tx() {
            if let Ok(Descriptor::Reply { header, .. }) = d {
                replies.push((header.pid, header.opcode));
            }
        }
        if replies.len() == 52 {
            break;
        }
    }
    assert_eq!(replies.len(), 52);
    let at = |op| replies.iter().position(|r| *r == (v.pid, op)).unwrap();
    assert_eq!(
        at(Opcode::Heartbeat),
        0,
        "the heartbeat is answered as it is taken"
    );
    assert!(
        at(Opcode::Alloc) <= 2,
        "the victim's turn comes after one of the hog's: {replies:?}"
    );
}

#[test]
fn answers_waiting_for_the_tx_ring_do_not_keep_the_rx_ring_full() {
    let lease = Duration::from_secs(2);
    let mut node = node(Limits::default(), lease);
    let t0 = Instant::now();
    let hog = node.sp.register_at(1, t0).map(|(p, _, c)| (p, c)).unwrap();
    let victim = node.sp.register_at(2, t0).map(|(p, _, c)| (p, c)).unwrap();
    node.sp.poll_at(&node.ring, &mut node.mem, t0);
    while node.ring.pop_tx().is_some() {}
    let beat = |(pid, client): (u16, u16), req| Header {
        client,
        ..Header::request(Opcode::Heartbeat, pid, req, 0)
    };
    // From here on the fast path takes nothing from the TX ring. The hog fills the RX ring
    // with heartbeats (each answer needs a TX slot); the slow path keeps taking them.
    let mut req = 0;
    let mut fill = |node: &mut Node, t: Instant| {
        while node.ring.rx_free() > 0 {
            req += 1;
            node.ring
                .push_rx(&Descriptor::Request {
                    route: from([10, 0, 0, 66], 1),
                    header: beat(hog, req),
                })
                .unwrap();
        }
        node.sp.poll_at(&node.ring, &mut node.mem, t);
    };
    fill(&mut node, t0);
    fill(&mut node, t0);
    assert_eq!(node.ring.tx_free(), 0, "the TX ring is full");
    assert!(node.sp.outbox_len() > 0, "answers wait for it");
    assert_eq!(
        node.ring.rx_pending(),
        0,
        "requests are still taken while answers wait"
    );
    // The victim's heartbeat, sent after the lease's first half, is taken behind the flood.
    let t1 = t0 + Duration::from_millis(1500);
    node.ring
        .push_rx(&Descriptor::Request {
            route: from([10, 0, 0, 1], 1),
            header: beat(victim, 1),
        })
        .unwrap();
    node.sp.poll_at(&node.ring, &mut node.mem, t1);
    assert_eq!(
        node.ring.rx_pending(),
        0,
        "the victim's heartbeat was taken"
    );
    // Taking is bounded: with the TX ring stuck for good, the outbox stops growing at
    // TAKE_AHEAD descriptors of taking, and the RX ring then stays full (RETRY_LATER from the
    // fast path; nothing is lost).
    for _ in 0..40 {
        fill(&mut node, t1);
    }
    let limit = clio_slowpath::daemon::TAKE_AHEAD;
    assert!(node.ring.rx_pending() > 0, "the bound was reached");
    assert!(
        node.sp.outbox_len() <= limit + 2,
        "{} descriptors wait",
        node.sp.outbox_len()
    );
    // The fast path drains the TX ring: every request taken is answered, the victim's among
    // them, and the victim's lease was renewed at t1 (it lives past t0 + lease).
    let t2 = t0 + Duration::from_millis(3000);
    let mut answered = 0;
    let mut victim_answered = false;
    for _ in 0..10_000 {
        node.sp.poll_at(&node.ring, &mut node.mem, t2);
        let mut moved = false;
        while let Some(d) = node.ring.pop_tx() {
            moved = true;
            if let Ok(Descriptor::Reply { header, .. }) = d {
                assert_eq!(header.status, Status::Ok);
                answered += 1;
                victim_answered |= header.pid == victim.0;
            }
        }
        if !moved && node.ring.rx_pending() == 0 && node.sp.outbox_len() == 0 {
            break;
        }
    }
    assert_eq!(answered, req as usize + 1, "every heartbeat answered once");
    assert!(victim_answered);
    assert_eq!(
        node.sp.registry().members(victim.0),
        1,
        "the victim's heartbeat renewed its lease when it was taken"
    );
}
