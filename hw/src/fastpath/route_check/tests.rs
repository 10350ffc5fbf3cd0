//! The route check against `clio_proto::route_cookie`: random headers (reads of 16 B .. 4 KiB,
//! KV gets, writes) into random slots from a few addresses (UDP and raw Ethernet, right and
//! wrong cookies), ROUTE_KEYs at random cycles; every slot's `need` is the rule's, a frame
//! that needs no check is decided at once, and every verdict of one that does is the rule's
//! under the latest secret, within the unit's time for the slots ahead of it; every slot's
//! source bucket is `clio_proto::ring::rx_source_bucket` of its route.

use super::*;
use crate::bench::Bench;
use crate::siphash::SIPHASH_CYCLES;
use crate::util::bytes_to_bits;
use clio_proto::frame::Route;
use clio_proto::ring::rx_source_bucket;
use clio_proto::route_cookie::{needs_route_cookie, route_cookie, RouteSecret};
use clio_proto::Opcode;

fn routes() -> Vec<Route> {
    let mut v: Vec<Route> = (1..=3)
        .map(|i| {
            Route::udp(
                format!("10.0.0.{i}:{}", 4000 + i).parse().unwrap(),
                "10.0.0.100:9000".parse().unwrap(),
            )
        })
        .collect();
    v.push(Route {
        encap: Encap::RawEthernet,
        peer_mac: [2, 0, 0, 0, 0, 7],
        ..Route::default()
    });
    // Same IPv4 address, another port: the same cookie.
    v.push(Route::udp(
        "10.0.0.1:5999".parse().unwrap(),
        "10.0.0.100:9000".parse().unwrap(),
    ));
    v
}

fn header(
    b: &mut Bench<RouteCheck>,
    slot: usize,
    route: &Route,
    cookie: u32,
    op: Opcode,
    len: u32,
) {
    let mut h = [0u8; 64];
    h[field::OPCODE] = op as u8;
    h[field::TOTAL_LEN].copy_from_slice(&len.to_be_bytes());
    h[field::COOKIE].copy_from_slice(&cookie.to_be_bytes());
    b.uut.hdr.valid.next = true;
    b.uut.hdr.slot.next = (slot as u64).to_bits();
    b.uut.hdr.data.next = bytes_to_bits::<512>(&h);
    b.uut.hdr.route.next = bytes_to_bits::<256>(&route.to_bytes());
}

fn verdict(b: &mut Bench<RouteCheck>, slot: usize) -> (bool, bool, bool) {
    b.uut.sel.next = (slot as u64).to_bits();
    b.settle();
    (
        b.uut.verdict.need.val(),
        b.uut.verdict.done.val(),
        b.uut.verdict.ok.val(),
    )
}

#[test]
fn verdicts_follow_the_rule_under_the_latest_secret() {
    let mut b = Bench::new(RouteCheck::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    let rs = routes();
    let mut rng = crate::tb::Rng(0x0DD5_EED5_1234_5678);
    // Off: everything passes.
    header(&mut b, 2, &rs[0], 0, Opcode::Read, 4096);
    b.tick();
    b.uut.hdr.valid.next = false;
    assert_eq!(
        verdict(&mut b, 2),
        (true, true, true),
        "off until ROUTE_KEY"
    );
    let mut secret = RouteSecret([rng.next(), rng.next()]);
    let key = |b: &mut Bench<RouteCheck>, s: RouteSecret| {
        b.uut.key.valid.next = true;
        b.uut.key.key0.next = s.0[0].to_bits();
        b.uut.key.key1.next = s.0[1].to_bits();
    };
    key(&mut b, secret);
    b.tick();
    b.uut.key.valid.next = false;
    // Per slot: the frame presented (route index, cookie, needs the check), the cycle it came in.
    let mut slot: [Option<(usize, u32, bool, u64)>; 4] = [None; 4];
    let (mut decided, mut passed, mut rekeys, mut free) = (0, 0, 0, 0);
    let shapes = [
        (Opcode::Read, 16u32),
        (Opcode::Read, 64),
        (Opcode::Read, 65),
        (Opcode::Read, 4096),
        (Opcode::KvGet, 20),
        (Opcode::Write, 4096),
        (Opcode::PointerChase, 1000),
    ];
    for cycle in 0..20_000u64 {
        let r = rng.next();
        b.uut.hdr.valid.next = false;
        b.uut.key.valid.next = false;
        if r % 5 < 2 {
            let k = (r >> 8) as usize % 4;
            let ri = (r >> 16) as usize % rs.len();
            let good = route_cookie(&secret, &rs[ri]);
            let cookie = match (r >> 24) % 4 {
                0 => good ^ 1,
                1 => route_cookie(&secret, &rs[(ri + 1) % 4]),
                _ => good,
            };
            let (op, len) = shapes[(r >> 40) as usize % shapes.len()];
            header(&mut b, k, &rs[ri], cookie, op, len);
            slot[k] = Some((ri, cookie, needs_route_cookie(op, len), cycle));
        } else if r.is_multiple_of(997) {
            secret = RouteSecret([rng.next(), rng.next()]);
            key(&mut b, secret);
            rekeys += 1;
            for s in slot.iter_mut().flatten() {
                s.3 = cycle; // re-decided under the new secret from here
            }
        }
        b.tick();
        for (k, s) in slot.iter().enumerate() {
            let Some((ri, cookie, needs, at)) = *s else {
                continue;
            };
            if b.uut.hdr.valid.val() && b.uut.hdr.slot.val().to_u64() as usize == k {
                continue;
            }
            let (need, done, ok) = verdict(&mut b, k);
            assert_eq!(need, needs, "cycle {cycle}, slot {k}: need");
            assert_eq!(
                b.uut.source.val().to_u64() as usize,
                rx_source_bucket(&rs[ri]),
                "cycle {cycle}, slot {k}: source bucket"
            );
            if !needs {
                assert!(
                    done,
                    "cycle {cycle}, slot {k}: no check needed, decided at once"
                );
                free += 1;
            } else if done {
                decided += 1;
                let want = cookie == route_cookie(&secret, &rs[ri]);
                assert_eq!(ok, want, "cycle {cycle}, slot {k}, route {ri}");
                passed += ok as u64;
            } else {
                // At most every slot ahead of it, plus the one in the unit.
                assert!(
                    cycle - at <= 5 * (SIPHASH_CYCLES + 1),
                    "cycle {cycle}: slot {k} waiting since {at}"
                );
            }
        }
    }
    assert!(
        decided > 5_000 && passed > 1000 && rekeys > 5 && free > 5_000,
        "{decided} {passed} {rekeys} {free}"
    );
}
