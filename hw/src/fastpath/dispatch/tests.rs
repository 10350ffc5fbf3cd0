//! Dispatch's decision against the protocol's order (module doc), for every class with the
//! parse, key, epoch and route checks in each combination and the other inputs random: the
//! status, the next step, the branch whose registers load and the stages' starts.

use super::*;
use crate::tb::Rng;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Class {
    Read,
    Write,
    Slow,
    Fence,
    CnAck,
    Kv,
    Chase,
    Append,
    Atomic,
}

/// What the request does next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Next {
    Resp,
    Hit,
    Translate,
    SlowPush,
    Offload,
    SyncCheck,
    Wait,
}

#[derive(Default, Clone, Copy, Debug)]
struct Inputs {
    extend: bool,
    needs_key: bool,
    parse_ok: bool,
    key_ok: bool,
    epoch_ok: bool,
    needs_route: bool,
    route_done: bool,
    route_ok: bool,
    read_ok: bool,
    write_ok: bool,
    write_in_va: bool,
    append_ok: bool,
    chase_ok: bool,
    atomic_ok: bool,
    ahead_ok: bool,
    durable: bool,
    persist: bool,
    room_ok: bool,
    room_fresh: bool,
    fence_clear: bool,
    kv_ready: bool,
    chase_ready: bool,
}

/// The protocol's answer: status and next step.
fn reference(c: Class, i: &Inputs) -> (Status, Next) {
    use Next::*;
    if !i.parse_ok {
        let s = if i.extend {
            Status::Unsupported
        } else {
            Status::BadRequest
        };
        return (s, Resp);
    }
    if i.needs_key && !i.key_ok {
        return (Status::Denied, Resp);
    }
    if i.needs_key && !i.epoch_ok {
        // An atomic in its format looks for its ring entry first (answered from it if an
        // earlier attempt executed; STALE otherwise, decided in the sync check).
        if c == Class::Atomic && i.atomic_ok {
            return (Status::Stale, SyncCheck);
        }
        return (Status::Stale, Resp);
    }
    if i.needs_route && !i.route_done {
        return (Status::BadRequest, Wait);
    }
    if i.needs_route && !i.route_ok {
        return (Status::RouteUnverified, Resp);
    }
    let bad = (Status::BadRequest, Resp);
    let go = |ok: bool| if ok { Hit } else { Translate };
    match c {
        Class::Read if i.read_ok => (Status::Ok, go(i.ahead_ok)),
        Class::Read => bad,
        Class::Write if !i.write_ok => bad,
        Class::Write if i.durable && !i.persist => (Status::Unsupported, Resp),
        // (A write's OK is decided after its access.)
        Class::Write if i.write_in_va => (Status::BadRequest, go(i.ahead_ok)),
        Class::Write => bad,
        Class::Slow if !i.room_fresh => (Status::BadRequest, Wait),
        Class::Slow if i.room_ok => (Status::BadRequest, SlowPush),
        Class::Slow => (Status::RetryLater, Resp),
        Class::Fence if i.fence_clear => (Status::Ok, Resp),
        Class::Fence => (Status::Ok, Wait),
        Class::CnAck => (Status::Ok, Resp),
        Class::Kv if i.kv_ready => (Status::BadRequest, Offload),
        Class::Chase if i.chase_ok && i.chase_ready => (Status::BadRequest, Offload),
        Class::Kv | Class::Chase => bad,
        Class::Append if !i.append_ok => bad,
        Class::Append if i.durable && !i.persist => (Status::Unsupported, Resp),
        Class::Append => (Status::BadRequest, SyncCheck),
        Class::Atomic if i.atomic_ok => (Status::BadRequest, SyncCheck),
        Class::Atomic => bad,
    }
}

#[test]
fn decides_in_the_protocols_order() {
    let classes = [
        Class::Read,
        Class::Write,
        Class::Slow,
        Class::Fence,
        Class::CnAck,
        Class::Kv,
        Class::Chase,
        Class::Append,
        Class::Atomic,
    ];
    let mut d = Dispatch::default();
    d.connect_all();
    let mut r = Rng(0x5eed_d15a_7c40_0001);
    let mut seen = std::collections::HashSet::new();
    for &c in &classes {
        for head in 0..256u64 {
            for _ in 0..16 {
                let mut b = || r.below(2) == 1;
                let i = Inputs {
                    extend: head & 1 != 0,
                    needs_key: head & 2 != 0,
                    parse_ok: head & 4 != 0,
                    key_ok: head & 8 != 0,
                    needs_route: head & 16 != 0,
                    route_done: head & 32 != 0,
                    route_ok: head & 64 != 0,
                    epoch_ok: head & 128 != 0,
                    read_ok: b(),
                    write_ok: b(),
                    write_in_va: b(),
                    append_ok: b(),
                    chase_ok: b(),
                    atomic_ok: b(),
                    ahead_ok: b(),
                    durable: b(),
                    persist: b(),
                    room_ok: b(),
                    room_fresh: b(),
                    fence_clear: b(),
                    kv_ready: b(),
                    chase_ready: b(),
                };
                d.is_read.next = c == Class::Read;
                d.is_write.next = c == Class::Write;
                d.is_slow.next = c == Class::Slow;
                d.is_fence.next = c == Class::Fence;
                d.is_cn_ack.next = c == Class::CnAck;
                d.is_kv.next = c == Class::Kv;
                d.is_chase.next = c == Class::Chase;
                d.is_append.next = c == Class::Append;
                d.is_extend.next = i.extend;
                d.needs_key.next = i.needs_key;
                d.uses_ring.next = matches!(c, Class::Append | Class::Atomic);
                d.parse_ok.next = i.parse_ok;
                d.key_ok.next = i.key_ok;
                d.epoch_ok.next = i.epoch_ok;
                d.needs_route.next = i.needs_route;
                d.route_done.next = i.route_done;
                d.route_ok.next = i.route_ok;
                d.read_ok.next = i.read_ok;
                d.write_ok.next = i.write_ok;
                d.write_in_va.next = i.write_in_va;
                d.append_ok.next = i.append_ok;
                d.chase_ok.next = i.chase_ok;
                d.atomic_ok.next = i.atomic_ok;
                d.ahead_ok.next = i.ahead_ok;
                d.durable.next = i.durable;
                d.persist.next = i.persist;
                d.room_ok.next = i.room_ok;
                d.room_fresh.next = i.room_fresh;
                d.fence_clear.next = i.fence_clear;
                d.kv_ready.next = i.kv_ready;
                d.chase_ready.next = i.chase_ready;
                assert!(simulate(&mut d, 100));
                let at = format!("{c:?} {i:?}");
                let (status, next) = reference(c, &i);
                seen.insert((c, status as u8, next as u8));
                assert_eq!(d.status.val().to_u64(), status as u64, "{at}: status");
                let got = [
                    d.hit.val(),
                    d.to_translate.val(),
                    d.to_slow_push.val(),
                    d.to_offload.val(),
                    d.to_sync_check.val(),
                    d.fence_wait.val() || d.route_wait.val() || d.room_wait.val(),
                ];
                let want = [
                    next == Next::Hit,
                    next == Next::Translate,
                    next == Next::SlowPush,
                    next == Next::Offload,
                    next == Next::SyncCheck,
                    next == Next::Wait,
                ];
                assert_eq!(got, want, "{at}: next step");
                let keyed = i.parse_ok && !(i.needs_key && !(i.key_ok && i.epoch_ok));
                let checked = keyed && !(i.needs_route && !(i.route_done && i.route_ok));
                assert_eq!(d.denied.val(), i.parse_ok && !keyed, "{at}: denied");
                assert_eq!(
                    d.stale_replay.val(),
                    status == Status::Stale && next == Next::SyncCheck,
                    "{at}: stale_replay"
                );
                assert_eq!(
                    d.unverified.val(),
                    keyed && i.needs_route && i.route_done && !i.route_ok,
                    "{at}: unverified"
                );
                assert_eq!(
                    d.route_wait.val(),
                    keyed && i.needs_route && !i.route_done,
                    "{at}: route_wait"
                );
                assert_eq!(
                    d.room_wait.val(),
                    checked && c == Class::Slow && !i.room_fresh,
                    "{at}: room_wait"
                );
                let branches = [
                    d.branch_read.val(),
                    d.branch_write.val(),
                    d.branch_word.val(),
                    d.branch_append.val(),
                ];
                let word = matches!(c, Class::Append | Class::Atomic);
                assert_eq!(
                    branches,
                    [
                        checked && c == Class::Read,
                        checked && c == Class::Write,
                        checked && word,
                        checked && c == Class::Append,
                    ],
                    "{at}: branch"
                );
                assert_eq!(d.read_go.val(), checked && c == Class::Read && i.read_ok);
                assert_eq!(d.ring_ack.val(), checked && c == Class::CnAck, "{at}");
                assert_eq!(
                    d.append_go.val(),
                    c == Class::Append && next == Next::SyncCheck,
                    "{at}"
                );
                assert_eq!(d.kv_start.val(), c == Class::Kv && next == Next::Offload);
                assert_eq!(
                    d.chase_start.val(),
                    c == Class::Chase && next == Next::Offload
                );
            }
        }
    }
    // Every class reached each of its outcomes (OK or its next step, each refusal).
    assert!(seen.len() >= 50, "{} outcomes seen", seen.len());
    for c in classes {
        assert!(
            seen.contains(&(c, Status::Stale as u8, Next::Resp as u8)),
            "{c:?}: never Stale"
        );
    }
    assert!(
        seen.contains(&(Class::Atomic, Status::Stale as u8, Next::SyncCheck as u8)),
        "a stale atomic never looked for its ring entry"
    );
}
