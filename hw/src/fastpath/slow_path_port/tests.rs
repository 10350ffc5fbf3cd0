//! The slow-path port alone: TX descriptors of every kind the sides act on, taken and acted
//! on by an executor model, reach the side that applies them (the key check, the route
//! check, the page-fault unit's free list, the TLB, the sync unit, the extend path) with
//! proto's fields; the RX ring carries the executor's REQUEST, or else a fault's
//! PAGE_MAPPED notice, as proto encodes them; and a source that floods the ring with
//! REQUESTs is refused by its share as `proto::ring::rx_share_admits` says, and admitted again
//! once the slow path has taken them.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::frame::Route;
use clio_proto::header::{Header, HEADER_LEN};
use clio_proto::ring::{rx_share_admits, Descriptor, RX_RESERVED_FOR_NOTICES};
use clio_proto::Opcode;

/// A route of a known encapsulation with random fields.
fn route(r: &mut Rng) -> Route {
    let mut b: [u8; 32] = r.bytes(32).try_into().expect("32 bytes");
    b[0] = 1 + r.below(2) as u8;
    b[1] = 0;
    b[26..].fill(0);
    Route::from_bytes(&b).expect("a known encapsulation")
}

fn bench() -> Bench<SlowPathPort> {
    let mut b = Bench::new(SlowPathPort::default());
    b.uut.sp_rx_ready.next = true;
    b.uut.sp_rx_room.next = 200u64.to_bits();
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    b.settle();
    b
}

/// Which side's pulse a descriptor must raise, sampled each cycle.
fn pulses(u: &SlowPathPort) -> [bool; 6] {
    [
        u.recv.key_wr.valid.val(),
        u.recv.route_key.valid.val(),
        u.mem.fp.valid.val(),
        u.mem.up.valid.val(),
        u.core.ring.owner.val(),
        u.core.kv_at.load.val(),
    ]
}

#[test]
fn tx_descriptors_reach_the_side_that_applies_them() {
    let mut r = Rng(0x5103);
    let mut b = bench();
    for i in 0..60 {
        let which = i % 6;
        let (pid, key, epoch) = (1 + r.below(4000) as u16, r.next(), r.next() as u16);
        let d = match which {
            0 => Descriptor::KeyWrite { pid, key, epoch },
            1 => Descriptor::RouteKey {
                secret: [key, r.next()],
            },
            2 => Descriptor::FreePage {
                pfn: r.below(1 << 40),
            },
            3 => Descriptor::TlbInvalidate {
                pid,
                vpn: r.below(1 << 36),
            },
            4 => Descriptor::RingOwner {
                pid,
                client: 1 + r.below(1000) as u16,
            },
            _ => Descriptor::KvConfig {
                pid,
                base: r.next(),
                buckets: r.next(),
                records: r.next() as u32,
                status: 0,
            },
        };
        b.uut.sp_tx_valid.next = true;
        b.uut.sp_tx_desc.next = bytes_to_bits(&d.encode());
        b.settle();
        assert!(
            b.uut.core.tx_valid.val(),
            "the executor sees the descriptor"
        );
        if let Descriptor::RingOwner { pid, client } = d {
            let member = (pid as u64) << 16 | client as u64;
            assert_eq!(
                b.uut.core.desc.member.val().to_u64(),
                member,
                "descriptor {i}"
            );
        }
        // The executor takes it, then acts on it the next cycle.
        b.uut.core.take.next = true;
        b.uut.core.tx_ready.next = true;
        b.settle();
        assert!(b.uut.sp_tx_ready.val(), "the ring sees the take");
        b.tick();
        b.uut.core.take.next = false;
        b.uut.core.tx_ready.next = false;
        b.uut.sp_tx_valid.next = false;
        b.uut.sp_tx_desc.next = bytes_to_bits(&r.bytes(128));
        b.uut.core.sptx.act.next = true;
        let mut seen = [false; 6];
        for cycle in 0..3 {
            b.settle();
            let p = pulses(&b.uut);
            let u = &b.uut;
            if p[which] && !seen[which] {
                match d {
                    Descriptor::KeyWrite { pid, key, epoch } => assert_eq!(
                        (
                            u.recv.key_wr.pid.val().to_u64(),
                            u.recv.key_wr.key.val().to_u64(),
                            u.recv.key_wr.epoch.val().to_u64()
                        ),
                        (pid as u64, key, epoch as u64)
                    ),
                    Descriptor::RouteKey { secret } => assert_eq!(
                        [
                            u.recv.route_key.key0.val().to_u64(),
                            u.recv.route_key.key1.val().to_u64()
                        ],
                        secret
                    ),
                    Descriptor::FreePage { pfn } => {
                        assert_eq!(u.mem.fp.pfn.val().to_u64(), pfn)
                    }
                    Descriptor::TlbInvalidate { pid, vpn } => {
                        assert!(u.mem.up.inval.val());
                        assert_eq!(u.mem.up.pid.val().to_u64(), pid as u64);
                        assert_eq!(u.mem.up.vpn.val().to_u64(), vpn);
                    }
                    // The member is the sync unit's key, registered by the executor as it
                    // takes the descriptor (`core.desc.member`, checked below).
                    Descriptor::RingOwner { .. } => {}
                    Descriptor::KvConfig {
                        base,
                        buckets,
                        records,
                        ..
                    } => {
                        assert_eq!(u.core.kv.base.val().to_u64(), base);
                        assert_eq!(u.core.kv.buckets.val().to_u64(), buckets);
                        assert_eq!(u.core.kv.records.val().to_u64(), records as u64);
                        assert_eq!(u.core.kv_at.pid.val().to_u64(), pid as u64);
                    }
                    _ => unreachable!("the kinds above"),
                }
            }
            for (k, s) in seen.iter_mut().enumerate() {
                *s |= p[k];
            }
            b.tick();
            if cycle == 0 {
                b.uut.core.sptx.act.next = false;
            }
        }
        for (k, s) in seen.iter().enumerate() {
            assert_eq!(*s, k == which, "descriptor {i} (kind {which}): pulse {k}");
        }
    }
}

#[test]
fn the_rx_ring_carries_requests_and_notices_within_each_sources_share() {
    let mut r = Rng(0x0525);
    let mut b = bench();
    // A REQUEST, a notice, and both at once (the REQUEST goes; the notice waits).
    for i in 0..30 {
        let route = route(&mut r);
        let mut h = Header::request(Opcode::Alloc, r.next() as u16, r.next() as u32, r.next());
        h.client = r.next() as u16;
        let mut hb = [0u8; HEADER_LEN];
        h.emit_header(&mut hb);
        let (pid, vpn, pfn) = (r.next() as u16, r.below(1 << 36), r.below(1 << 40));
        let (push, notice) = [(true, false), (false, true), (true, true)][i % 3];
        b.uut.core.push.next = push;
        b.uut.core.client.next = (h.client as u64).to_bits();
        b.uut.core.route.next = bytes_to_bits(&route.to_bytes());
        b.uut.core.header.next = bytes_to_bits(&hb[..48]);
        b.uut.mem.notice_valid.next = notice;
        b.uut.mem.notice.pid.next = (pid as u64).to_bits();
        b.uut.mem.notice.vpn.next = vpn.to_bits();
        b.uut.mem.notice.pfn.next = pfn.to_bits();
        b.settle();
        assert!(b.uut.sp_rx_valid.val());
        let want = if push {
            Descriptor::Request { route, header: h }.encode()
        } else {
            Descriptor::PageMapped { pid, vpn, pfn }.encode()
        };
        assert_eq!(bits_to_bytes(b.uut.sp_rx_desc.val()), want.to_vec(), "{i}");
        assert!(b.uut.core.rx_ready.val() && b.uut.mem.ready.val());
    }
    b.uut.core.push.next = false;
    b.uut.mem.notice_valid.next = false;
    b.tick();

    // One source floods the ring: its REQUESTs are admitted while it holds fewer than are
    // free past the notices' reserve.
    let mut b = bench();
    b.uut.recv.source.next = 5u64.to_bits();
    let ring = RX_RESERVED_FOR_NOTICES + 8;
    let (mut pushed, mut taken) = (0u32, 0u32);
    let wait = |b: &mut Bench<SlowPathPort>| {
        for _ in 0..4 {
            b.tick();
        }
        b.settle();
    };
    let mut refused = false;
    for _ in 0..12 {
        b.uut.sp_rx_room.next = ((ring - (pushed - taken)) as u64).to_bits();
        wait(&mut b);
        let admits = rx_share_admits(pushed - taken, ring - (pushed - taken));
        assert_eq!(b.uut.core.rx_ok.val(), admits, "held {}", pushed - taken);
        if !admits {
            refused = true;
            break;
        }
        b.uut.core.push.next = true;
        b.tick();
        b.uut.core.push.next = false;
        pushed += 1;
    }
    assert!(refused, "the flooding source was never refused");
    // Another source, holding nothing, is admitted meanwhile.
    b.uut.recv.source.next = 6u64.to_bits();
    wait(&mut b);
    assert!(
        b.uut.core.rx_ok.val(),
        "a source that holds nothing is admitted"
    );
    b.uut.recv.source.next = 5u64.to_bits();
    // The slow path takes them all: the flooding source is admitted again.
    wait(&mut b);
    assert!(!b.uut.core.rx_ok.val());
    taken = pushed;
    b.uut.sp_rx_taken.next = (taken as u64).to_bits();
    b.uut.sp_rx_room.next = (ring as u64).to_bits();
    for _ in 0..pushed {
        b.tick();
    }
    wait(&mut b);
    assert!(
        b.uut.core.rx_ok.val(),
        "admitted once its descriptors are taken"
    );
}
