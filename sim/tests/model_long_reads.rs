//! Reads of any length up to `MAX_REQUEST_LEN` in one request (protocol.md section 2): one
//! response packet per KiB, translated as they go; a page that does not translate ends the
//! answer with one error packet naming the first packet that did not go out.

mod common;

use clio_proto::consts::{MAX_PAYLOAD, MAX_REQUEST_LEN, VA_LIMIT};
use clio_proto::header::{packet_count, segment};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::{Header, Opcode, Status};
use common::{node, pattern, Wire, PAGE};

/// Send a read of `len` bytes at `va`; the raw answer.
fn read_raw(w: &mut Wire, va: u64, len: u32) -> Vec<(Header, Vec<u8>)> {
    let id = w.id();
    let h = Header {
        total_len: len,
        ..w.request(Opcode::Read, id, va)
    };
    w.send_raw(&h.to_packet(&[]))
}

/// The answer is packets 0..k in order with their segments, then (if `error`) one empty
/// packet with index k and that status.
fn check_answer(r: &[(Header, Vec<u8>)], len: u32, ok: usize, error: Option<Status>) {
    let n = packet_count(len);
    assert_eq!(r.len(), ok + error.is_some() as usize);
    for (i, (h, p)) in r.iter().enumerate() {
        assert_eq!((h.pkt_index as usize, h.pkt_count), (i, n), "{h:?}");
        assert!(h.response && h.total_len == len);
        assert_eq!(h.payload_len as usize, p.len());
        if i < ok {
            assert_eq!(h.status, Status::Ok);
            assert_eq!(p.len(), segment(len, i as u16).unwrap().1 as usize);
        } else {
            assert_eq!(Some(h.status), error);
            assert!(p.is_empty());
        }
    }
}

#[test]
fn reads_of_any_length_come_back_one_packet_per_kib() {
    let mut w = Wire::new(node());
    w.register(1);
    let pages = 18u64;
    let va = w.alloc(pages * PAGE, PERM_READ | PERM_WRITE).unwrap();
    let data = pattern((pages * PAGE) as usize, 7);
    for off in (0..data.len()).step_by(MAX_REQUEST_LEN as usize) {
        let end = (off + MAX_REQUEST_LEN as usize).min(data.len());
        assert_eq!(w.write(va + off as u64, &data[off..end]), Status::Ok);
    }
    // Lengths around the packet size, across page boundaries, up to a whole request.
    for (start, len) in [
        (100u64, 1u32),
        (5, 1024),
        (PAGE - 700, 1025),
        (PAGE - 1, 2048),
        (3, 64 << 10),
        (PAGE + 33, 64 << 10),
        (77, MAX_REQUEST_LEN),
    ] {
        let r = read_raw(&mut w, va + start, len);
        check_answer(&r, len, packet_count(len) as usize, None);
        let got: Vec<u8> = r.into_iter().flat_map(|(_, p)| p).collect();
        assert_eq!(got, data[start as usize..start as usize + len as usize]);
    }
    assert_eq!(
        w.read(va + PAGE - 10, 3 * MAX_PAYLOAD as u32 + 1).unwrap(),
        data[(PAGE - 10) as usize..(PAGE - 10) as usize + 3 * MAX_PAYLOAD + 1]
    );
}

#[test]
fn hostile_read_lengths_are_bad_requests_in_one_packet() {
    let mut w = Wire::new(node());
    w.register(1);
    let va = w.alloc(PAGE, PERM_READ | PERM_WRITE).unwrap();
    let before = w.node.counters();
    for (va, len) in [
        (va, 0),
        (va, MAX_REQUEST_LEN + 1),
        (va, u32::MAX),
        // Past the 48-bit VA space, at its edge, and wrapping 2^64.
        (VA_LIMIT - 1024, 1025),
        (VA_LIMIT, 1),
        (u64::MAX - 100, MAX_REQUEST_LEN),
    ] {
        let r = read_raw(&mut w, va, len);
        assert_eq!(r.len(), 1, "{va:#x} {len}");
        assert_eq!(r[0].0.status, Status::BadRequest);
        assert_eq!((r[0].0.pkt_index, r[0].0.pkt_count), (0, 1));
    }
    let c = w.node.counters();
    assert_eq!(
        c.tlb_hits + c.tlb_misses,
        before.tlb_hits + before.tlb_misses
    );
    // A read ending exactly at the VA limit is well formed (and unmapped there).
    let r = read_raw(&mut w, VA_LIMIT - 4096, 4096);
    check_answer(&r, 4096, 0, Some(Status::Unmapped));
}

#[test]
fn a_page_that_fails_midway_ends_the_answer_with_one_error_packet() {
    let mut w = Wire::new(node());
    w.register(1);
    let a = w.alloc(2 * PAGE, PERM_READ | PERM_WRITE).unwrap();
    let b = w.alloc(PAGE, PERM_WRITE).unwrap();
    assert_eq!(b, a + 2 * PAGE, "regions are placed one after the other");
    // Packet i covers [a + 1000 + 1024 i, +1024): packet 127 is the first to reach b.
    let first_bad = ((2 * PAGE - 1000) / MAX_PAYLOAD as u64) as usize;
    let len = 3 * PAGE as u32;
    let r = read_raw(&mut w, a + 1000, len);
    check_answer(&r, len, first_bad, Some(Status::Permission));
    // Pages before the failing one were faulted in (and stay mapped); a read that ends
    // before b is whole.
    let faults = w.node.counters().page_faults;
    assert_eq!(faults, 2);
    let r = read_raw(&mut w, a + 1000, (2 * PAGE - 1000) as u32);
    check_answer(&r, (2 * PAGE - 1000) as u32, first_bad + 1, None);
    // A write-only page at the first packet: nothing but the error.
    let r = read_raw(&mut w, b + PAGE - 2048, 4096);
    check_answer(&r, 4096, 0, Some(Status::Permission));
    let r = read_raw(&mut w, a + PAGE, len);
    check_answer(&r, len, 64, Some(Status::Permission));
    let id = w.id();
    assert_eq!(w.call(w.request(Opcode::Free, id, b)).status, Status::Ok);
    let r = read_raw(&mut w, a + PAGE, len);
    check_answer(&r, len, 64, Some(Status::Unmapped));
}
