//! The route check against `clio_proto::route_cookie`: random headers into random slots from
//! a few addresses (UDP and raw Ethernet, right and wrong cookies), ROUTE_KEYs at random
//! cycles; every verdict is the rule's under the latest secret, and every slot is decided
//! within the unit's time for the slots ahead of it.

use super::*;
use crate::bench::Bench;
use crate::siphash::SIPHASH_CYCLES;
use crate::util::bytes_to_bits;
use clio_proto::frame::Route;
use clio_proto::route_cookie::{route_cookie, RouteSecret};

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

fn header(b: &mut Bench<RouteCheck>, slot: usize, route: &Route, cookie: u32) {
    b.uut.hdr_in.next = true;
    b.uut.hdr_slot.next = (slot as u64).to_bits();
    b.uut.hdr_cookie_field.next = bytes_to_bits::<32>(&cookie.to_be_bytes());
    b.uut.hdr_route.next = bytes_to_bits::<256>(&route.to_bytes());
}

fn verdict(b: &mut Bench<RouteCheck>, slot: usize) -> (bool, bool) {
    b.uut.sel.next = (slot as u64).to_bits();
    b.settle();
    (b.uut.done.val(), b.uut.ok.val())
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
    header(&mut b, 2, &rs[0], 0);
    b.tick();
    b.uut.hdr_in.next = false;
    assert_eq!(verdict(&mut b, 2), (true, true), "off until ROUTE_KEY");
    let mut secret = RouteSecret([rng.next(), rng.next()]);
    let key = |b: &mut Bench<RouteCheck>, s: RouteSecret| {
        b.uut.key_valid.next = true;
        b.uut.key0.next = s.0[0].to_bits();
        b.uut.key1.next = s.0[1].to_bits();
    };
    key(&mut b, secret);
    b.tick();
    b.uut.key_valid.next = false;
    // Per slot: the frame presented (route index, cookie), the cycle it came in.
    let mut slot: [Option<(usize, u32, u64)>; 4] = [None; 4];
    let (mut decided, mut passed, mut rekeys) = (0, 0, 0);
    for cycle in 0..20_000u64 {
        let r = rng.next();
        b.uut.hdr_in.next = false;
        b.uut.key_valid.next = false;
        if r % 5 < 2 {
            let k = (r >> 8) as usize % 4;
            let ri = (r >> 16) as usize % rs.len();
            let good = route_cookie(&secret, &rs[ri]);
            let cookie = match (r >> 24) % 4 {
                0 => good ^ 1,
                1 => route_cookie(&secret, &rs[(ri + 1) % 4]),
                _ => good,
            };
            header(&mut b, k, &rs[ri], cookie);
            slot[k] = Some((ri, cookie, cycle));
        } else if r.is_multiple_of(997) {
            secret = RouteSecret([rng.next(), rng.next()]);
            key(&mut b, secret);
            rekeys += 1;
            for s in slot.iter_mut().flatten() {
                s.2 = cycle; // re-decided under the new secret from here
            }
        }
        b.tick();
        for (k, s) in slot.iter().enumerate() {
            let Some((ri, cookie, at)) = *s else { continue };
            if b.uut.hdr_in.val() && b.uut.hdr_slot.val().to_u64() as usize == k {
                continue;
            }
            let (done, ok) = verdict(&mut b, k);
            if done {
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
        decided > 10_000 && passed > 1000 && rekeys > 5,
        "{decided} {passed} {rekeys}"
    );
}
