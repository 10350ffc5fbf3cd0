//! Many tenants on one node (the model): authenticated requests, RAS sharing between
//! members, exactly-once unlock, dead clients, teardown. Every test plays at least one
//! attacker or one failure; the cosimulation checks the RTL against the same model.

mod common;

use clio_proto::consts::{ring_way, KEY_TABLE_ENTRIES, RING_MEMBERS, RING_WAYS};
use clio_proto::frame::Route;
use clio_proto::header::{parse_verified, HEADER_LEN};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::{Header, Opcode, Status};
use common::{node, node_with, Member, Wire, PAGE};
use std::time::Duration;

const RW: u8 = PERM_READ | PERM_WRITE;

/// Every kind of request an attacker could send, with credentials `(pid, key, client)`; each
/// must come back Denied with nothing executed.
fn forged_requests(pid: u16, key: u64, va: u64) -> Vec<Vec<u8>> {
    let base = |op| Header::request(op, pid, 0x7000 + op as u32, va).with_credentials(key, 1);
    let mut v = vec![
        Header {
            total_len: 64,
            ..base(Opcode::Read)
        }
        .to_packet(&[]),
        Header {
            total_len: 8,
            ..base(Opcode::Write)
        }
        .to_packet(b"pwned!!!"),
        Header {
            arg0: 1,
            ..base(Opcode::FetchAdd)
        }
        .to_packet(&[]),
        base(Opcode::TestAndSet).to_packet(&[]),
        base(Opcode::Unlock).to_packet(&[]),
        Header {
            arg0: 0,
            arg1: 7,
            ..base(Opcode::CompareAndSwap)
        }
        .to_packet(&[]),
        Header {
            arg0: PAGE,
            arg1: 3,
            ..base(Opcode::Alloc)
        }
        .to_packet(&[]),
        base(Opcode::Free).to_packet(&[]),
        Header {
            arg0: 1,
            ..base(Opcode::Unregister)
        }
        .to_packet(&[]),
        Header {
            arg0: 5,
            ..base(Opcode::Join)
        }
        .to_packet(&[]),
        base(Opcode::Heartbeat).to_packet(&[]),
        base(Opcode::Fence).to_packet(&[]),
        Header {
            arg0: 1,
            ..base(Opcode::CnAck)
        }
        .to_packet(&[]),
    ];
    v.sort();
    v
}

fn expect_denied(w: &mut Wire, pkts: &[Vec<u8>], what: &str) {
    for p in pkts {
        let r = w.send_raw(p);
        assert_eq!(r.len(), 1, "{what}: one answer");
        let (h, payload) = &r[0];
        assert_eq!(h.status, Status::Denied, "{what}: {:?}", h.opcode);
        assert!(payload.is_empty(), "{what}: a denial carries no data");
    }
}

#[test]
fn forged_or_missing_keys_and_other_rases_pids_are_denied_and_change_nothing() {
    let mut a = Wire::new(node());
    let victim = a.register(1);
    let va = a.alloc(PAGE, RW).unwrap();
    assert_eq!(a.write(va, b"secret of A"), Status::Ok);
    let lock = va + 64;
    let image = a.dram();
    let before = a.node.counters();

    // The attacker has its own RAS on the same node (so it holds a valid key of its own).
    let mut m = Wire::new(node());
    std::mem::swap(&mut m.node, &mut a.node);
    let attacker = m.register(2);
    std::mem::swap(&mut m.node, &mut a.node);
    let image = {
        // The attacker's registration changed the key table, not memory.
        assert_eq!(a.dram(), image);
        image
    };
    for (key, what) in [
        (0, "missing key"),
        (victim.key ^ 1, "one bit off"),
        (attacker.key, "another RAS's key"),
        (u64::MAX, "all ones"),
    ] {
        expect_denied(&mut a, &forged_requests(victim.pid, key, lock), what);
    }
    // PIDs outside the key table, or aliasing the victim's entry modulo its size, or 0.
    for pid in [
        0,
        KEY_TABLE_ENTRIES as u16,
        victim.pid + KEY_TABLE_ENTRIES as u16,
    ] {
        expect_denied(&mut a, &forged_requests(pid, victim.key, lock), "bad pid");
    }
    // A packet that claims to be a response is dropped, not executed.
    let mut resp = Header::request(Opcode::Write, victim.pid, 1, va)
        .with_credentials(victim.key, victim.client);
    resp.response = true;
    resp.total_len = 4;
    assert!(a.send_raw(&resp.to_packet(b"evil")).is_empty());

    assert_eq!(a.dram(), image, "memory and page table unchanged");
    let after = a.node.counters();
    assert_eq!(after.denied - before.denied, 7 * 13);
    assert_eq!(after.atomics, before.atomics, "no atomic executed");
    assert_eq!(
        after.slowpath_requests,
        before.slowpath_requests + 1,
        "only B's Register"
    );
    assert_eq!(a.read(va, 11).unwrap(), b"secret of A");
    // The victim's RAS is intact: it still allocates and its lock word is untouched.
    a.m = victim;
    assert!(a.alloc(PAGE, RW).is_ok());
    assert_eq!(a.read(lock, 8).unwrap(), [0; 8]);
}

#[test]
fn responses_never_carry_the_key() {
    let mut w = Wire::new(node());
    let m = w.register(1);
    let va = w.alloc(PAGE, RW).unwrap();
    // A NACK echoes the header it got, but never bytes 48..64.
    let mut p = Header {
        total_len: 8,
        ..w.request(Opcode::Read, 5, va)
    }
    .to_packet(&[]);
    p[20] ^= 1;
    let mut out = Vec::new();
    w.node.handle(&Route::default(), &p, &mut out);
    assert_eq!(out.len(), 1);
    assert!(out[0].1[48..HEADER_LEN].iter().all(|b| *b == 0));
    let (h, _) = parse_verified(&out[0].1).unwrap();
    assert_eq!((h.status, h.key), (Status::Nack, 0));
    assert_ne!(m.key, 0);
}

#[test]
fn members_share_memory_and_atomics_but_not_ring_entries() {
    let mut a = Wire::new(node());
    let owner = a.register(1);
    let va = a.alloc(PAGE, RW).unwrap();
    assert_eq!(a.write(va + 8, b"shared"), Status::Ok);
    // B joins from "another CN" (another wire client of the same node).
    let mut b = Wire::new(node());
    std::mem::swap(&mut a.node, &mut b.node);
    let joined = b.join(owner, 77).unwrap();
    assert_eq!(joined.pid, owner.pid);
    assert_ne!(joined.client, owner.client);
    assert_eq!(b.read(va + 8, 6).unwrap(), b"shared");
    // Both use request id 500 for a fetch-add: two members, two executions.
    assert_eq!(b.atomic(Opcode::FetchAdd, va, 1, 0, 500).arg0, 0);
    std::mem::swap(&mut a.node, &mut b.node);
    assert_eq!(a.atomic(Opcode::FetchAdd, va, 1, 0, 500).arg0, 1);
    // A retry of A's 500 replays A's result, not B's.
    assert_eq!(a.atomic(Opcode::FetchAdd, va, 1, 0, 500).arg0, 1);
    assert_eq!(a.read(va, 8).unwrap(), 2u64.to_le_bytes());
    // A join with a wrong key is denied; a retried join gets the same client id.
    std::mem::swap(&mut a.node, &mut b.node);
    let wrong = Member {
        key: owner.key ^ 0x8000,
        ..owner
    };
    assert_eq!(b.join(wrong, 78), Err(Status::Denied));
    assert_eq!(b.join(owner, 77).unwrap(), joined);
}

#[test]
fn a_retried_unlock_never_releases_a_lock_someone_else_took() {
    let mut a = Wire::new(node());
    let owner = a.register(1);
    let lock = a.alloc(PAGE, RW).unwrap();
    let mut b = Wire::new(node());
    std::mem::swap(&mut a.node, &mut b.node);
    b.join(owner, 2).unwrap();
    std::mem::swap(&mut a.node, &mut b.node);

    assert_eq!(
        a.atomic(Opcode::TestAndSet, lock, 0, 0, 10).arg0,
        0,
        "A locks"
    );
    a.ack(10);
    // A unlocks; the response is "lost" (we ignore it), so A will retry request 11.
    assert_eq!(a.atomic(Opcode::Unlock, lock, 0, 0, 11).status, Status::Ok);
    std::mem::swap(&mut a.node, &mut b.node);
    assert_eq!(
        b.atomic(Opcode::TestAndSet, lock, 0, 0, 20).arg0,
        0,
        "B locks"
    );
    std::mem::swap(&mut a.node, &mut b.node);
    // A's retry of the unlock is answered from the idempotence ring: B keeps the lock.
    let retry = a.atomic(Opcode::Unlock, lock, 0, 0, 11);
    assert_eq!((retry.status, retry.arg0), (Status::Ok, 1));
    assert_eq!(
        a.read(lock, 8).unwrap(),
        1u64.to_le_bytes(),
        "still locked by B"
    );
    assert_eq!(
        a.atomic(Opcode::TestAndSet, lock, 0, 0, 12).arg0,
        1,
        "A cannot enter"
    );
}

#[test]
fn a_frame_another_process_freed_reads_zeros() {
    // 4 MiB of DRAM with 64 KiB pages: so few frames that B's pages must reuse A's.
    let mut a = Wire::new(node_with(4 << 20, Duration::from_secs(10)));
    a.register(1);
    let mut vas = Vec::new();
    while let Ok(va) = a.alloc(PAGE, RW) {
        assert_eq!(a.write(va, &vec![0xA5; PAGE as usize]), Status::Ok);
        vas.push(va);
    }
    let frames = vas.len();
    assert!(frames > 32, "more frames than the free-page buffer holds");
    assert_eq!(
        a.unregister(false),
        Status::Ok,
        "last member out: RAS torn down"
    );
    let mut out = Vec::new();
    a.node.service(&mut out);
    let mut b = Wire::new(node());
    std::mem::swap(&mut a.node, &mut b.node);
    b.register(2);
    let mut touched = 0;
    while let Ok(va) = b.alloc(PAGE, RW) {
        let d = b.read(va, 1024).unwrap();
        assert!(d.iter().all(|x| *x == 0), "B's first touch read A's data");
        let tail = b.read(va + PAGE - 1024, 1024).unwrap();
        assert!(tail.iter().all(|x| *x == 0));
        touched += 1;
    }
    assert_eq!(touched, frames, "every frame A used came back to B");
    let sp = b.node.slowpath_stats().unwrap();
    assert!(sp.frames_cleared as usize >= 2 * frames - 32, "{sp:?}");
}

#[test]
fn a_dead_client_costs_others_nothing_and_its_row_goes_with_its_lease() {
    let lease = Duration::from_millis(300);
    let mut dead = Wire::new(node_with(64 << 20, lease));
    let owner = dead.register(1);
    let va = dead.alloc(PAGE, RW).unwrap();
    // The dead client records 5 results and never acknowledges them.
    for id in 0..5 {
        assert_eq!(
            dead.atomic(Opcode::FetchAdd, va, 1, 0, 100 + id).status,
            Status::Ok
        );
    }
    let mut live = Wire::new(node());
    std::mem::swap(&mut dead.node, &mut live.node);
    let me = live.register(2);
    let mine = live.alloc(PAGE, RW).unwrap();
    let start = std::time::Instant::now();
    let mut id = 1000u32;
    // Every entry of its own row three times over while the dead client's lease still runs:
    // the dead client's results are in its own row, so none is ever in the way.
    for _ in 0..3 * RING_WAYS {
        let r = live.atomic(Opcode::FetchAdd, mine, 1, 0, id);
        assert_eq!(r.status, Status::Ok);
        assert_eq!(live.ack(id), Status::Ok);
        id += 1;
    }
    assert!(start.elapsed() < lease, "the test ran inside the lease");
    assert_eq!(
        live.node.counters().idempotence_ring_full,
        0,
        "never a retry"
    );
    let releases = live.node.counters().ring_releases;
    // The dead member's lease ends: its slots are released and its RAS torn down.
    std::thread::sleep(lease);
    // The live member renews its own lease by heartbeat.
    let hb = live.request(Opcode::Heartbeat, 1, 0);
    assert_eq!(live.call(hb).status, Status::Ok);
    let mut out = Vec::new();
    live.node.service(&mut out);
    assert_eq!(
        live.node.counters().ring_releases,
        releases + 1,
        "the dead member's row taken back"
    );
    let before = live.node.counters().idempotence_ring_full;
    for _ in 0..2 * RING_WAYS {
        assert_eq!(
            live.atomic(Opcode::FetchAdd, mine, 1, 0, id).status,
            Status::Ok
        );
        live.ack(id);
        id += 1;
    }
    assert_eq!(
        live.node.counters().idempotence_ring_full,
        before,
        "its own row, as before"
    );
    let sp = live.node.slowpath_stats().unwrap();
    assert_eq!((sp.lease_expiries, sp.teardowns), (1, 1));
    live.m = owner;
    assert_eq!(
        live.read(va, 8),
        Err(Status::Denied),
        "the dead RAS is gone"
    );
    live.m = me;
}

#[test]
fn unregister_returns_the_memory_and_retires_the_key() {
    let mut a = Wire::new(node_with(4 << 20, Duration::from_secs(10)));
    let first = a.register(1);
    while a.alloc(PAGE, RW).is_ok() {}
    assert_eq!(
        a.alloc(PAGE, RW),
        Err(Status::OutOfMemory),
        "the node is full"
    );
    let mut b = Wire::new(node());
    std::mem::swap(&mut a.node, &mut b.node);
    let second = b.register(2);
    assert_eq!(b.alloc(PAGE, RW), Err(Status::OutOfMemory));
    std::mem::swap(&mut a.node, &mut b.node);
    // A second member joins, then the owner tears the RAS down for everyone.
    let mut c = Wire::new(node());
    std::mem::swap(&mut a.node, &mut c.node);
    let joined = c.join(first, 3).unwrap();
    std::mem::swap(&mut a.node, &mut c.node);
    assert_eq!(a.unregister(true), Status::Ok);
    let mut out = Vec::new();
    a.node.service(&mut out);
    std::mem::swap(&mut a.node, &mut b.node);
    b.m = second;
    let va = b.alloc(PAGE, RW).expect("memory came back");
    assert_eq!(b.write(va, b"mine now"), Status::Ok);
    // Neither the owner's nor the joined member's credentials open anything any more.
    b.m = joined;
    assert_eq!(b.alloc(PAGE, RW), Err(Status::Denied));
    b.m = first;
    assert_eq!(b.read(va, 8), Err(Status::Denied));
    // The retired pid is not handed out again while other pids are free.
    b.m = second;
    let third = b.register(4);
    assert!(third.pid != first.pid && third.pid != second.pid);
    let sp = b.node.slowpath_stats().unwrap();
    assert_eq!(sp.teardowns, 1);
}

#[test]
fn the_client_ids_have_room_for_1023_members_then_say_table_full() {
    let mut w = Wire::new(node());
    let mut last = Member::default();
    for n in 1..RING_MEMBERS as u64 {
        last = w.register(n);
    }
    // Every RAS has a member, so the client ids (a row of the idempotence table each) run out
    // before the key table's 4,095 PIDs do.
    assert_eq!(last.client as usize, RING_MEMBERS - 1);
    assert!((last.pid as usize) < KEY_TABLE_ENTRIES);
    let mut h = Header::request(Opcode::Register, 0, 1, 0);
    h.arg0 = u64::MAX;
    assert_eq!(w.call(h).status, Status::TableFull);
    let join = w.join(last, u64::MAX - 2);
    assert_eq!(join.err(), Some(Status::TableFull));
    // Leaving frees a client id for the next registration.
    w.m = last;
    assert_eq!(w.unregister(false), Status::Ok);
    let mut out = Vec::new();
    w.node.service(&mut out);
    assert_eq!(w.register(u64::MAX - 1).client, last.client);
}

/// Issue 40, behaviour 2: a host cycles Register and Unregister until a departed tenant's pid
/// comes back to it, with the same client id, and replays the departed tenant's request ids
/// (a FetchAdd recorded in the idempotence ring, an Alloc in the slow path's reply cache).
/// Both execute for the new owner; neither answers with the old tenant's recorded result.
#[test]
fn the_next_owner_of_a_pid_gets_none_of_the_old_owners_recorded_answers() {
    // As many client ids as PIDs, so both come back together: the worst case below.
    let mut w = Wire::new(
        clio_sim::CBoard::new(&clio_sim::BoardConfig {
            limits: clio_sim::Limits {
                pids: 8,
                clients: 8,
                ..clio_sim::Limits::unlimited()
            },
            ..common::node_config()
        })
        .unwrap(),
    );
    let old = w.register(1);
    let va = w.alloc(PAGE, RW).unwrap();
    let faa_id = w.id();
    let mut faa = w.request(Opcode::FetchAdd, faa_id, va);
    faa.arg0 = 41;
    let first = w.call(faa);
    assert_eq!((first.status, first.arg0), (Status::Ok, 0));
    let mut alloc = w.request(Opcode::Alloc, faa_id + 1, 0);
    alloc.arg0 = PAGE;
    alloc.arg1 = RW as u64;
    let old_alloc = w.call(alloc);
    assert_eq!(old_alloc.status, Status::Ok);
    assert_eq!(w.unregister(true), Status::Ok);
    let mut out = Vec::new();
    w.node.service(&mut out);
    let mut nonce = 2;
    let new = loop {
        let m = w.register(nonce);
        nonce += 1;
        if m.pid == old.pid && m.client == old.client {
            break m;
        }
        assert_eq!(w.unregister(true), Status::Ok);
        w.node.service(&mut out);
    };
    assert_eq!(new.client, old.client, "the worst case: the same member id");
    let va2 = w.alloc(PAGE, RW).unwrap();
    // The new owner's own requests with the old owner's request ids.
    let mut faa = w.request(Opcode::FetchAdd, faa_id, va2);
    faa.arg0 = 1;
    let r = w.call(faa);
    assert_eq!(
        (r.status, r.arg0),
        (Status::Ok, 0),
        "executed on the new owner's word"
    );
    assert_eq!(w.read(va2, 8).unwrap(), 1u64.to_le_bytes(), "and applied");
    let mut alloc = w.request(Opcode::Alloc, faa_id + 1, 0);
    alloc.arg0 = PAGE;
    alloc.arg1 = RW as u64;
    let r = w.call(alloc);
    assert_eq!(r.status, Status::Ok);
    assert_ne!(r.va, va2, "a new allocation, not a recorded answer");
}

/// Amplification: a tenant with valid credentials aims answers at a victim's address (its
/// requests carry the victim's source address) with its own route cookie, none, a made-up
/// one, or one guessed from its own; for reads of every size up to `MAX_REQUEST_LEN`, the
/// victim receives at most twice what was sent (one bare header per long request), and
/// nothing executes. From its own address, with its cookie, the tenant reads what it asked
/// for. Fails with the route check taken out (the victim gets the whole MiB).
#[test]
fn an_admitted_tenant_cannot_aim_large_answers_at_a_victim() {
    use clio_proto::consts::MAX_REQUEST_LEN;
    let mut w = Wire::new(node());
    let me = w.register(1);
    assert_ne!(me.cookie, 0, "Register's answer carries the cookie");
    let va = w.alloc(MAX_REQUEST_LEN as u64, RW).unwrap();
    assert_eq!(w.write(va, &[0x5A; 4096]), Status::Ok);
    let victim = Route::udp(
        "192.0.2.7:53".parse().unwrap(),
        "10.0.0.100:9000".parse().unwrap(),
    );
    let (mut sent, mut received) = (0usize, 0usize);
    for len in [65u32, 1024, 1025, 64 << 10, MAX_REQUEST_LEN] {
        for cookie in [me.cookie, 0, !me.cookie, me.cookie ^ 1] {
            let id = w.id();
            let h = Header {
                total_len: len,
                ..w.request(Opcode::Read, id, va)
            }
            .with_cookie(cookie);
            let p = h.to_packet(&[]);
            sent += p.len();
            for (r, payload) in w.send_from(&victim, &p) {
                received += HEADER_LEN + payload.len();
                assert_eq!(r.status, Status::RouteUnverified, "{len} bytes");
            }
        }
    }
    assert!(
        received <= 2 * sent,
        "the victim got {received} bytes for {sent} sent"
    );
    // Up to twice the request needs no cookie, from anywhere.
    let id = w.id();
    let small = Header {
        total_len: 64,
        ..w.request(Opcode::Read, id, va)
    }
    .with_cookie(0);
    let r = w.send_from(&victim, &small.to_packet(&[]));
    assert_eq!((r[0].0.status, r[0].1.len()), (Status::Ok, 64));
    // The tenant's own address, with its cookie: the whole answer.
    assert_eq!(w.read(va, 64 << 10).unwrap()[..4096], [0x5A; 4096]);
    assert_eq!(w.node.counters().route_unverified, 20);
}

/// Issue 40, behaviour 6: a tenant joins many members to its RAS and floods FetchAdds from
/// each (acknowledged, and a share never acknowledged), and sends some under the victim's
/// client id. The victim's atomics all execute at once, and its result, recorded and
/// acknowledged before it all, is still answered from the table when it comes again (a late
/// duplicate does not execute again). With the old 64-entry ring shared by all members, the
/// flood evicted it after 64 records.
#[test]
fn a_tenant_with_many_members_can_neither_refuse_nor_evict_anothers_results() {
    let mut w = Wire::new(node());
    let victim = w.register(1);
    let mine = w.alloc(PAGE, RW).unwrap();
    assert_eq!(w.atomic(Opcode::FetchAdd, mine, 1, 0, 7).status, Status::Ok);
    assert_eq!(w.ack(7), Status::Ok);
    let first = w.register(2);
    let theirs = w.alloc(PAGE, RW).unwrap();
    let mut members = vec![first];
    for n in 0..40 {
        members.push(w.join(first, 100 + n).unwrap());
    }
    let mut executed = 0;
    for (k, &m) in members.iter().enumerate() {
        w.m = m;
        for id in 0..2 * RING_WAYS as u32 {
            let r = w.atomic(Opcode::FetchAdd, theirs, 1, 0, 1000 + id);
            executed += usize::from(r.status == Status::Ok);
            // Half the members never acknowledge anything.
            if k % 2 == 0 {
                w.ack(1000 + id);
            }
        }
        // Under the victim's client id: not the attacker's row.
        w.m = Member {
            client: victim.client,
            ..m
        };
        assert_eq!(
            w.atomic(Opcode::FetchAdd, theirs, 1, 0, 7).status,
            Status::Denied
        );
        assert_eq!(
            w.ack(7),
            Status::Ok,
            "a CN ack is answered, and changes nothing"
        );
    }
    assert!(executed > 64 * 10, "the flood ran: {executed}");
    w.m = victim;
    // (Ids whose entry is not request 7's: the victim's own requests do replace its results.)
    for id in (100..).filter(|&i| ring_way(i) != ring_way(7)).take(10) {
        let r = w.atomic(Opcode::FetchAdd, mine + 8, 1, 0, id);
        assert_eq!(r.status, Status::Ok, "the victim's atomics go on at once");
        w.ack(id);
    }
    let again = w.atomic(Opcode::FetchAdd, mine, 1, 0, 7);
    let word = u64::from_le_bytes(w.read(mine, 8).unwrap().try_into().unwrap());
    assert_eq!(
        (again.status, again.arg0, word),
        (Status::Ok, 0, 1),
        "answered from the victim's row, not executed again"
    );
}

/// One host floods the slow path with requests that are never taken (the slow path is away,
/// so the RX ring only fills): the host holds at most half the ring's room past the notices'
/// reserve and the rest of its requests are RETRY_LATER, while a request of any other host
/// still reaches the slow path. With the per-source share taken out (the ring's room the only
/// rule) the flooder fills the ring up to the reserve and every other host is refused.
#[test]
fn a_host_flooding_the_slow_path_holds_at_most_half_the_rx_ring() {
    use clio_proto::ring::{rx_source_bucket, RX_RESERVED_FOR_NOTICES};
    let cfg = clio_sim::BoardConfig {
        slowpath: clio_sim::SlowPathMode::Absent,
        ..common::node_config()
    };
    let mut w = Wire::new(clio_sim::CBoard::new(&cfg).unwrap());
    let udp = |ip: &str| {
        Route::udp(
            format!("{ip}:4000").parse().unwrap(),
            "10.0.0.100:9000".parse().unwrap(),
        )
    };
    let flooder = udp("198.51.100.9");
    let register = |w: &mut Wire, from: &Route| {
        let id = w.id();
        let h = Header {
            arg0: id as u64,
            ..Header::request(Opcode::Register, 0, id, 0)
        };
        match w.send_from(from, &h.to_packet(&[])).as_slice() {
            [] => true,
            [(h, _)] if h.status == Status::RetryLater => false,
            other => panic!("a Register answered {other:?}"),
        }
    };
    let pushed = (0..cfg.ring_entries)
        .filter(|_| register(&mut w, &flooder))
        .count() as u32;
    assert_eq!(pushed, (cfg.ring_entries - RX_RESERVED_FOR_NOTICES) / 2);
    for ip in ["198.51.100.10", "203.0.113.5", "192.0.2.77"] {
        let other = udp(ip);
        assert_ne!(rx_source_bucket(&other), rx_source_bucket(&flooder));
        assert!(
            register(&mut w, &other),
            "{ip}'s request reaches the slow path"
        );
    }
    // Another lane (port) of the flooding host is the same source.
    let lane = Route {
        peer_port: 4001,
        ..flooder
    };
    assert!(
        !register(&mut w, &lane),
        "the flooder's other lane is refused too"
    );
}
