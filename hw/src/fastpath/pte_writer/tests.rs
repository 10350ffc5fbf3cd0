//! The PTE writer alone: 3,000 PTE_WRITE descriptors built by `proto::ring::Descriptor` (with
//! random bytes in word 0's undefined bits, and buckets and slots inside and outside a table
//! of 64 buckets), each followed at random by a fault's PTE. The decode (`desc_ok`, the TLB's
//! `tu_*`) against `Pte::from_bytes`, and the beat the one-beat writer gets (its strobed bytes) against the PTE's
//! bytes at `bucket * 256 + slot * 16` (or the fault's address).

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::pte::Pte;
use clio_proto::ring::{desc, Descriptor};

const BUCKETS: u64 = 64;

/// The beat's bytes and strobes for a PTE of `bytes` at `addr`.
fn beat_of(addr: u64, bytes: &[u8; PTE_BYTES]) -> ([u8; 64], u64) {
    let mut beat = [0u8; 64];
    let lane = (addr % 64) as usize;
    beat[lane..lane + PTE_BYTES].copy_from_slice(bytes);
    (beat, 0xFFFF << lane)
}

/// Check the beat the writer offers.
fn check_beat(b: &Bench<PteWriter>, addr: u64, bytes: &[u8; PTE_BYTES], what: &str) {
    let (beat, strb) = beat_of(addr, bytes);
    let u = &b.uut;
    assert_eq!(u.beat.addr.val().to_u64(), addr, "{what}: address");
    assert_eq!(u.beat.strb.val().to_u64(), strb, "{what}: strobes");
    // The bytes under the strobes (AXI writes nothing else).
    let data = bits_to_bytes(u.beat.data.val());
    for k in (0..64).filter(|k| strb >> k & 1 == 1) {
        assert_eq!(data[k], beat[k], "{what}: byte {k}");
    }
}

#[test]
fn pte_writes_and_faults_decode_and_lay_out() {
    let mut r = Rng(0x9E7E);
    let mut b = Bench::new(PteWriter::default());
    b.uut.bucket_mask.next = ((BUCKETS - 1) as u32).to_bits();
    let (mut inside, mut outside, mut faults) = (0, 0, 0);
    for i in 0..3000 {
        let bucket = match r.below(4) {
            0 => BUCKETS - 1 + r.below(3),
            1 => r.next(),
            _ => r.below(BUCKETS),
        };
        let slot = match r.below(4) {
            0 => 15 + r.below(3) as u32,
            1 => r.next() as u32,
            _ => r.below(16) as u32,
        };
        let pte = Pte {
            used: r.below(4) != 0,
            valid: r.below(2) == 0,
            perms: r.below(4) as u8,
            pid: r.next() as u16,
            vpn: r.next() & ((1 << 36) - 1),
            pfn: r.next() & ((1 << 40) - 1),
        };
        let mut d = Descriptor::PteWrite { bucket, slot, pte }.encode();
        // Undefined bits of word 0 (36..52 is the pid; 52..56 and 60..64 are not defined), and
        // word 1 beyond the pfn: the hardware must drop them as `Pte::from_bytes` does.
        let w0 = desc::body::PTE.start;
        d[w0 + 6] |= (r.next() as u8) & 0xF0;
        d[w0 + 7] |= (r.next() as u8) & 0xF0;
        d[w0 + 13] = r.next() as u8;
        let mut raw = [0u8; PTE_BYTES];
        raw.copy_from_slice(&d[w0..w0 + PTE_BYTES]);
        let want = Pte::from_bytes(&raw);
        // The top's slices of the descriptor (bits 8k of byte k).
        let bits: Bits<1024> = bytes_to_bits(&d);
        b.uut.desc_take.next = true;
        b.uut.desc.bucket.next = bits.get_bits::<64>(8 * desc::body::BUCKET.start);
        b.uut.desc.slot.next = bits.get_bits::<32>(8 * desc::body::SLOT.start);
        b.uut.desc.word0.next = bits.get_bits::<64>(8 * desc::body::PTE.start);
        b.uut.desc.pfn.next = bits.get_bits::<40>(8 * (desc::body::PTE.start + 8));
        b.tick();
        b.uut.desc_take.next = false;
        // Other descriptor bits on the inputs while the writer holds the PTE.
        b.uut.desc.bucket.next = r.next().to_bits();
        b.uut.desc.word0.next = r.next().to_bits();
        b.settle();
        let ok = slot < 16 && bucket < BUCKETS;
        let u = &b.uut;
        assert_eq!(
            u.decoded.ok.val(),
            ok,
            "descriptor {i}: bucket {bucket} slot {slot}"
        );
        if ok {
            inside += 1;
            assert_eq!(
                u.decoded.inval.val(),
                !want.used,
                "descriptor {i}: invalidate"
            );
            assert_eq!(
                u.decoded.pid.val().to_u64(),
                want.pid as u64,
                "descriptor {i}: pid"
            );
            assert_eq!(
                u.decoded.vpn.val().to_u64(),
                want.vpn,
                "descriptor {i}: vpn"
            );
            assert_eq!(
                u.decoded.perms.val().to_u64(),
                want.perms as u64,
                "descriptor {i}: perms"
            );
            assert_eq!(
                u.decoded.alloc.val(),
                !want.valid,
                "descriptor {i}: allocated"
            );
            let frame = if want.valid {
                want.pfn
            } else {
                bucket << 4 | slot as u64
            };
            assert_eq!(u.decoded.pfn.val().to_u64(), frame, "descriptor {i}: frame");
            let addr = bucket * 256 + slot as u64 * 16;
            check_beat(&b, addr, &want.to_bytes(), &format!("descriptor {i}"));
        } else {
            outside += 1;
        }
        if r.below(3) == 0 {
            // A fault's PTE replaces it.
            faults += 1;
            let addr = r.below(1 << 36) << 4;
            let bytes: [u8; PTE_BYTES] = r.bytes(PTE_BYTES).try_into().expect("16 bytes");
            b.uut.fault.load.next = true;
            b.uut.fault.addr.next = addr.to_bits();
            b.uut.fault.data.next = bytes_to_bits(&bytes);
            b.tick();
            b.uut.fault.load.next = false;
            b.uut.fault.addr.next = r.next().to_bits();
            b.tick();
            check_beat(&b, addr, &bytes, &format!("fault after descriptor {i}"));
        }
    }
    assert!(inside > 1000 && outside > 500 && faults > 500);
}
