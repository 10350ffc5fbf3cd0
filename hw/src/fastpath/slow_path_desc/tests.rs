//! The slow-path descriptors alone: 5,000 TX descriptors of every kind, encoded by
//! `proto::ring::Descriptor` with random fields (and unknown kinds, and the rest of the slot
//! filled with noise for the kinds that leave it zero), taken one by one: the kind flags and
//! each kind's fields as proto wrote them, held while the input changes (a PTE_WRITE's body
//! also as it is taken); and PAGE_MAPPED and REQUEST descriptors for random pages and frames,
//! members, routes and headers, against `Descriptor::PageMapped`'s and `Descriptor::Request`'s
//! bytes.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::frame::Route;
use clio_proto::header::{Header, HEADER_LEN};
use clio_proto::pte::Pte;
use clio_proto::ring::Descriptor;
use clio_proto::{Opcode, Status};

fn route(r: &mut Rng) -> Route {
    let mut b: [u8; 32] = r.bytes(32).try_into().expect("32 bytes");
    b[0] = 1 + r.below(2) as u8;
    b[1] = 0;
    b[26..].fill(0);
    Route::from_bytes(&b).expect("a known encapsulation")
}

fn header(r: &mut Rng) -> Header {
    let mut h = Header::request(Opcode::Alloc, r.next() as u16, r.next() as u32, r.next());
    h.status = Status::from_u8(r.below(4) as u8).unwrap_or(Status::Ok);
    h.response = r.below(2) == 0;
    h.total_len = r.next() as u32;
    h.arg0 = r.next();
    h.client = r.next() as u16;
    h
}

#[test]
fn descriptors_decode_and_encode_as_proto() {
    let mut r = Rng(0x5D35);
    let mut b = Bench::new(SlowPathDesc::default());
    let mut seen = [0u32; 9];
    for i in 0..5000 {
        let which = r.below(9);
        let d = match which {
            0 => Descriptor::PteWrite {
                bucket: r.next(),
                slot: r.next() as u32,
                pte: Pte::allocated(r.next() as u16, r.below(1 << 36), 3),
            },
            1 => Descriptor::TlbInvalidate {
                pid: r.next() as u16,
                vpn: match r.below(3) {
                    0 => r.below(1 << 36),
                    // One bit beyond VPN_BITS, each in turn.
                    1 => r.below(1 << 36) | 1 << (36 + r.below(28)),
                    _ => r.next(),
                },
            },
            2 => Descriptor::FreePage {
                pfn: r.below(1 << 40),
            },
            3 => Descriptor::KeyWrite {
                pid: r.next() as u16,
                key: r.next(),
                epoch: r.next() as u16,
            },
            4 => Descriptor::RingOwner {
                pid: r.next() as u16,
                client: r.next() as u16,
            },
            5 => Descriptor::KvConfig {
                pid: r.next() as u16,
                base: r.next(),
                buckets: r.next(),
                records: r.next() as u32,
                status: r.next() as u8,
            },
            8 => Descriptor::RouteKey {
                secret: [r.next(), r.next()],
            },
            _ => Descriptor::Reply {
                route: route(&mut r),
                header: header(&mut r),
            },
        };
        let mut bytes = d.encode();
        if which == 7 {
            // An unknown kind.
            bytes[0] = 0x7F;
            bytes[1] = r.next() as u8 | 0x40;
        }
        b.uut.take.next = true;
        b.uut.desc.next = bytes_to_bits(&bytes);
        b.settle();
        if let Descriptor::RingOwner { pid, client } = d {
            // The member as it is taken (the sync unit's key, registered by the executor).
            let member = (pid as u64) << 16 | client as u64;
            assert_eq!(b.uut.taken.member.val().to_u64(), member, "descriptor {i}");
        }
        if let Descriptor::PteWrite { bucket, slot, pte } = d {
            // The PTE_WRITE's body as it is taken (the PTE writer's inputs).
            let u = &b.uut;
            let pb = pte.to_bytes();
            let w0 = u64::from_le_bytes(pb[..8].try_into().expect("8 bytes"));
            let pfn = u64::from_le_bytes(pb[8..].try_into().expect("8 bytes")) & ((1 << 40) - 1);
            assert_eq!(u.pte.bucket.val().to_u64(), bucket, "descriptor {i}");
            assert_eq!(u.pte.slot.val().to_u64(), slot as u64, "descriptor {i}");
            assert_eq!(u.pte.word0.val().to_u64(), w0, "descriptor {i}");
            assert_eq!(u.pte.pfn.val().to_u64(), pfn, "descriptor {i}");
        }
        b.tick();
        b.uut.take.next = false;
        b.uut.desc.next = bytes_to_bits(&r.bytes(128));
        b.settle();
        let u = &b.uut;
        let flags = [
            u.kind.pte_write.val(),
            u.kind.tlb_invalidate.val(),
            u.kind.free_page.val(),
            u.kind.key_write.val(),
            u.kind.ring_owner.val(),
            u.kind.kv_config.val(),
            u.kind.reply.val(),
            u.kind.route_key.val(),
        ];
        // Flag k is set by the descriptor `which` (7, an unknown kind, sets none).
        let of_flag = [0, 1, 2, 3, 4, 5, 6, 8];
        for (k, f) in flags.iter().enumerate() {
            assert_eq!(*f, which == of_flag[k], "descriptor {i} kind flag {k}");
        }
        seen[which as usize] += 1;
        match d {
            Descriptor::TlbInvalidate { pid, vpn } => {
                assert_eq!(u.kind.pid.val().to_u64(), pid as u64);
                assert_eq!(u.kind.vpn_fits.val(), vpn >> 36 == 0, "descriptor {i}");
                assert_eq!(u.kind.vpn.val().to_u64(), vpn & ((1 << 36) - 1));
            }
            Descriptor::FreePage { pfn } => assert_eq!(u.kind.pfn.val().to_u64(), pfn),
            Descriptor::KeyWrite { pid, key, epoch } => {
                assert_eq!(
                    (
                        u.kind.pid.val().to_u64(),
                        u.kind.key.val().to_u64(),
                        u.kind.epoch.val().to_u64()
                    ),
                    (pid as u64, key, epoch as u64)
                );
            }
            Descriptor::RingOwner { pid, .. } => {
                assert_eq!(u.kind.pid.val().to_u64(), pid as u64)
            }
            Descriptor::RouteKey { secret } => {
                assert_eq!(
                    [u.kind.key.val().to_u64(), u.kind.secret1.val().to_u64()],
                    secret,
                    "descriptor {i}"
                );
            }
            Descriptor::KvConfig {
                pid,
                base,
                buckets,
                records,
                status,
            } => {
                assert_eq!(u.kind.pid.val().to_u64(), pid as u64);
                assert_eq!(u.kv.status.val().to_u64(), status as u64);
                assert_eq!(u.kv.base.val().to_u64(), base);
                assert_eq!(u.kv.buckets.val().to_u64(), buckets);
                assert_eq!(u.kv.records.val().to_u64(), records as u64);
            }
            Descriptor::Reply { route, header } if which == 6 => {
                assert_eq!(
                    bits_to_bytes(u.taken.route.val()),
                    route.to_bytes().to_vec()
                );
                let mut h = [0u8; HEADER_LEN];
                header.emit_header(&mut h);
                assert_eq!(
                    bits_to_bytes(u.taken.header.val()),
                    h[..48].to_vec(),
                    "descriptor {i}"
                );
                assert_eq!(u.taken.reply_status.val().to_u64(), header.status as u64);
                assert_eq!(u.taken.reply_flags.val().to_u64(), header.response as u64);
            }
            _ => {}
        }
        // A PAGE_MAPPED notice for a random page and frame.
        let (pid, vpn, pfn) = (r.next() as u16, r.below(1 << 36), r.below(1 << 40));
        b.uut.pm.pid.next = (pid as u64).to_bits();
        b.uut.pm.vpn.next = vpn.to_bits();
        b.uut.pm.pfn.next = pfn.to_bits();
        b.settle();
        let want = Descriptor::PageMapped { pid, vpn, pfn }.encode();
        assert_eq!(
            bits_to_bytes(b.uut.page_mapped.val()),
            want.to_vec(),
            "notice {i}"
        );
        // A REQUEST for a random member.
        let (rt, mut h) = (route(&mut r), header(&mut r));
        h.response = false;
        h.durable = false;
        let want = Descriptor::Request {
            route: rt,
            header: h,
        }
        .encode();
        let mut hb = [0u8; HEADER_LEN];
        h.emit_header(&mut hb);
        b.uut.req_client.next = (h.client as u64).to_bits();
        b.uut.req_route.next = bytes_to_bits(&rt.to_bytes());
        b.uut.req_header.next = bytes_to_bits(&hb[..48]);
        b.settle();
        assert_eq!(
            bits_to_bytes(b.uut.request.val()),
            want.to_vec(),
            "request {i}"
        );
    }
    assert!(seen.iter().all(|&n| n > 400), "{seen:?}");
}
