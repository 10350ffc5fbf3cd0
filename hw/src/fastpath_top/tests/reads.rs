//! Reads of any length up to `MAX_REQUEST_LEN`: one response packet per KiB, each translated
//! as the answer reaches its pages (faults included), an error packet where a page does not
//! translate, back-pressure from the network.

use super::*;
use crate::tb::axi_dram::Memory;
use clio_proto::consts::{MAX_PAYLOAD, MAX_REQUEST_LEN};
use clio_proto::header::{packet_count, read_response, segment};

const PID: u16 = 3;

/// Map `pages` of `PID` at `shift`: `(vpn, pfn, perms)`, with `pfn = None` for an allocated
/// page (first touch); every frame's bytes set to a pattern of its address.
fn map(e: &mut Env, shift: u32, pages: &[(u64, Option<u64>, u8)]) {
    for &(vpn, pfn, perms) in pages {
        let pte = match pfn {
            Some(pfn) => Pte {
                used: true,
                valid: true,
                perms,
                pid: PID,
                vpn,
                pfn,
            },
            None => Pte::allocated(PID, vpn, perms),
        };
        e.put_pte(pte);
        if let Some(pfn) = pfn {
            let base = pfn << shift;
            let bytes: Vec<u8> = (0..1u64 << shift)
                .map(|a| ((base + a) * 7 + (base + a) / 251) as u8)
                .collect();
            e.dram.mem_mut().write(base, &bytes);
        }
    }
}

/// The frame of `va` (its page's PTE as mapped, or the frame a fault gave it).
fn frame_of(pages: &[(u64, u64)], shift: u32, va: u64) -> u64 {
    let vpn = va >> shift;
    let pfn = pages.iter().find(|p| p.0 == vpn).expect("a mapped page").1;
    (pfn << shift) | (va & ((1 << shift) - 1))
}

/// The answer a read of `h` must get: packets `0..ok` with their data from DRAM, then an
/// error packet with index `ok` if `error`.
fn answer(
    e: &Env,
    h: &Header,
    pages: &[(u64, u64)],
    shift: u32,
    ok: u16,
    error: Option<Status>,
) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..ok)
        .map(|i| {
            let (off, len) = segment(h.total_len, i).unwrap();
            let data: Vec<u8> = (0..len as u64)
                .map(|j| {
                    let pa = frame_of(pages, shift, h.va + off as u64 + j);
                    e.dram.mem().bytes(pa, 1)[0]
                })
                .collect();
            read_response(h, Status::Ok, i).to_packet(&data)
        })
        .collect();
    if let Some(s) = error {
        v.push(read_response(h, s, ok).to_packet(&[]));
    }
    v
}

/// 2 KiB across a page boundary, 64 KiB across 17 pages with a first touch midway, a write
/// and the long read that must see it, back to back: every packet byte-exact, and the answer
/// streams at the 1 KiB read rate (about 18 cycles per packet).
#[test]
fn long_reads_stream_one_packet_per_kib_across_pages() {
    let mut e = Env::new();
    e.grant(PID, key_of(PID));
    e.budget = 20_000;
    // vpn 0x10..=0x20 at frames 0x20.., except 0x18: allocated, faulted in from frame 0x40.
    let mut pages: Vec<(u64, u64)> = (0x10..=0x20u64).map(|v| (v, v + 0x10)).collect();
    let spec: Vec<(u64, Option<u64>, u8)> = pages
        .iter()
        .map(|&(v, f)| (v, (v != 0x18).then_some(f), PERM_READ | PERM_WRITE))
        .collect();
    map(&mut e, SHIFT, &spec);
    e.sp_tx
        .push_back(Descriptor::FreePage { pfn: 0x40 }.encode());
    e.run();
    pages.iter_mut().for_each(|p| {
        if p.0 == 0x18 {
            p.1 = 0x40;
        }
    });
    let (h, f) = read_req(PID, 1, 0x10 * PS + PS - 1000 + 3, 2048);
    let (out, _) = e.request(&f);
    assert_eq!(out, answer(&e, &h, &pages, SHIFT, 2, None), "2 KiB");

    let len = 64 << 10;
    let (h, f) = read_req(PID, 2, 0x10 * PS + 0x45, len);
    let start = e.b.cycle;
    let (out, _) = e.request(&f);
    let cycles = e.b.cycle - start;
    assert_eq!(out.len(), 64);
    assert_eq!(out, answer(&e, &h, &pages, SHIFT, 64, None), "64 KiB");
    assert_eq!(
        e.sp_rx,
        vec![Descriptor::PageMapped {
            pid: PID,
            vpn: 0x18,
            pfn: 0x40
        }],
        "the page first touched midway faulted in as the answer reached it"
    );
    println!("64 KiB read across 17 pages: {cycles} cycles to idle");
    assert!(cycles < 64 * 20 + 100, "{cycles} cycles: not streaming");

    // A write, then a long read over it: the read sees the write (read-after-write).
    let data: Vec<u8> = (0..300u32).map(|i| (i * 3 + 1) as u8).collect();
    let (wh, wf) = write_req(PID, 3, 0x13 * PS - 100, &data);
    let (rh, rf) = read_req(PID, 4, 0x12 * PS + 7, 3 * PS as u32);
    let n = e.tx.len();
    e.send(&wf);
    e.send(&rf);
    e.run();
    let out: Vec<Vec<u8>> = e.tx[n + 1..].iter().map(|(_, p)| p.clone()).collect();
    assert_eq!(e.tx[n].1, resp(&wh, Status::Ok, &[]));
    assert_eq!(out, answer(&e, &rh, &pages, SHIFT, 12, None));
    let got: Vec<u8> = out.iter().flat_map(|p| p[HEADER_LEN..].to_vec()).collect();
    let at = (0x13 * PS - 100 - (0x12 * PS + 7)) as usize;
    assert_eq!(got[at..at + 300], data[..]);
}

/// Packet 7 of a read from 1000 bytes into page 0x10 is the first to reach page 0x12: when
/// that page is write-only, packets 0..7 go out and one PERMISSION packet with index 7 ends
/// the answer; an unmapped page likewise. Nothing is sent for the rest, and the next request
/// is served as usual.
#[test]
fn a_page_failing_midway_ends_the_answer_with_one_error_packet() {
    let mut e = Env::new();
    e.grant(PID, key_of(PID));
    let rw = PERM_READ | PERM_WRITE;
    let spec = [
        (0x10, Some(0x20), rw),
        (0x11, Some(0x21), rw),
        (0x12, Some(0x22), PERM_WRITE),
        (0x15, Some(0x25), rw),
    ];
    map(&mut e, SHIFT, &spec);
    let pages: Vec<(u64, u64)> = spec.iter().map(|p| (p.0, p.1.unwrap())).collect();
    let first_bad = ((2 * PS - 1000) / MAX_PAYLOAD as u64) as u16;
    let (h, f) = read_req(PID, 1, 0x10 * PS + 1000, 3 * PS as u32);
    let out = e.request(&f).0;
    assert_eq!(
        out,
        answer(&e, &h, &pages, SHIFT, first_bad, Some(Status::Permission))
    );
    // Unmapped page 0x16 after 0x15: packet 3 (bytes 3172..4196 of the page) reaches it.
    let (h, f) = read_req(PID, 2, 0x15 * PS + 100, 2 * PS as u32);
    let out = e.request(&f).0;
    assert_eq!(
        out,
        answer(&e, &h, &pages, SHIFT, 3, Some(Status::Unmapped))
    );
    // Failing at the first packet: the error alone, index 0, count of the whole answer.
    let (h, f) = read_req(PID, 3, 0x12 * PS, 5000);
    let out = e.request(&f).0;
    assert_eq!(
        out,
        answer(&e, &h, &pages, SHIFT, 0, Some(Status::Permission))
    );
    assert_eq!(packet_count(5000), 5);
    // The node goes on.
    let (h, f) = read_req(PID, 4, 0x11 * PS - 10, 20);
    assert_eq!(e.request(&f).0, answer(&e, &h, &pages, SHIFT, 1, None));
    // Hostile lengths: one BAD_REQUEST packet with the request's index and count.
    for (id, va, len) in [
        (5u32, 0x10 * PS, 0u32),
        (6, 0x10 * PS, MAX_REQUEST_LEN + 1),
        (7, (1 << 48) - 1024, 1025),
        (8, u64::MAX - 100, 1024),
    ] {
        let (h, f) = read_req(PID, id, va, len);
        assert_eq!(e.request(&f).0, vec![resp(&h, Status::BadRequest, &[])]);
    }
}

/// The network takes a beat only every third cycle: the answer waits (transmit stage,
/// read-data stage and its queue, then the executor) and comes out whole and in order.
#[test]
fn long_reads_wait_for_the_network() {
    let mut e = Env::new();
    e.grant(PID, key_of(PID));
    e.budget = 20_000;
    let spec: Vec<(u64, Option<u64>, u8)> = (0x10..0x16u64)
        .map(|v| (v, Some(v + 0x10), PERM_READ | PERM_WRITE))
        .collect();
    map(&mut e, SHIFT, &spec);
    let pages: Vec<(u64, u64)> = spec.iter().map(|p| (p.0, p.1.unwrap())).collect();
    e.tx_every = 3;
    let (h, f) = read_req(PID, 1, 0x10 * PS + 0x3F, 16 << 10);
    let start = e.b.cycle;
    let out = e.request(&f).0;
    let cycles = e.b.cycle - start;
    assert_eq!(out, answer(&e, &h, &pages, SHIFT, 16, None));
    assert!(cycles >= 16 * 17 * 3, "{cycles}: the network's pace");
    // Two reads queued behind each other, with a payload-less error response between.
    let (h1, f1) = read_req(PID, 2, 0x11 * PS + 5, 3000);
    let (h2, f2) = read_req(PID, 3, 0x40 * PS, 3000);
    let (h3, f3) = read_req(PID, 4, 0x14 * PS + 900, 4000);
    let n = e.tx.len();
    e.send(&f1);
    e.send(&f2);
    e.send(&f3);
    e.run();
    let out: Vec<Vec<u8>> = e.tx[n..].iter().map(|(_, p)| p.clone()).collect();
    let mut want = answer(&e, &h1, &pages, SHIFT, 3, None);
    want.extend(answer(&e, &h2, &pages, SHIFT, 0, Some(Status::Unmapped)));
    want.extend(answer(&e, &h3, &pages, SHIFT, 4, None));
    assert_eq!(out, want);
}

/// A whole request (1 MiB, 64 KiB pages: 17 of them) in one answer of 1024 packets. Long in
/// rust-hdl's simulator: `cargo test -p clio-hw --release one_mebibyte -- --ignored`.
#[test]
#[ignore]
fn one_mebibyte_read_in_one_answer() {
    let mut e = Env::new();
    let shift = 16u32;
    e.b.uut.cfg_page_shift.next = (shift as u64).to_bits();
    e.grant(PID, key_of(PID));
    e.budget = 40_000;
    let spec: Vec<(u64, Option<u64>, u8)> = (1..=17u64)
        .map(|v| (v, Some(v + 1), PERM_READ | PERM_WRITE))
        .collect();
    map(&mut e, shift, &spec);
    let pages: Vec<(u64, u64)> = spec.iter().map(|p| (p.0, p.1.unwrap())).collect();
    let (h, f) = read_req(PID, 1, (1 << shift) + 0x21, MAX_REQUEST_LEN);
    let start = e.b.cycle;
    let out = e.request(&f).0;
    let cycles = e.b.cycle - start;
    println!("1 MiB read: {cycles} cycles to idle");
    assert_eq!(out.len(), 1024);
    assert_eq!(out, answer(&e, &h, &pages, shift, 1024, None));
}
