//! The receive side alone: a KEY_WRITE opens one pid, then writes with the right key and with
//! a wrong one arrive back to back at random lengths and lane offsets. An executor model takes
//! each frame when the slot queue offers it (after a random wait), reads the key verdict of
//! its slot, fetches the payload through the `wbuf` read port (the payload feeder's way) and
//! finishes it. Every frame comes in order with its header and route, the verdict is the
//! key's, every payload byte is where its lane puts it, and every TLB look-ahead lookup is of
//! a waiting frame's page: the ingest stage, the slots, the checks and the look-ahead are
//! wired to each other.

use super::*;
use crate::bench::Bench;
use crate::tb::{Rng, StreamSource};
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::header::HEADER_LEN;
use clio_proto::{Header, Opcode};
use std::collections::HashSet;

const PID: u16 = 7;
const KEY: u64 = 0x0123_4567_89ab_cdef;
const SHIFT: u64 = 12;

struct Frame {
    bytes: Vec<u8>,
    route: [u8; 32],
    key_ok: bool,
    page: (u64, u64),
}

fn frame(r: &mut Rng, i: u32) -> Frame {
    let key_ok = r.below(3) != 0;
    let plen = 1 + r.below(1024) as usize;
    let va = 0x40_0000 + r.below(1 << 22);
    let mut h = Header::request(Opcode::Write, PID, i, va);
    h.total_len = plen as u32;
    h.key = if key_ok {
        KEY
    } else {
        KEY ^ (1 + r.below(1 << 20))
    };
    let mut route = [0u8; 32];
    route.copy_from_slice(&r.bytes(32));
    Frame {
        bytes: h.to_packet(&r.bytes(plen)),
        route,
        key_ok,
        page: (PID as u64, va >> SHIFT),
    }
}

#[test]
fn frames_reach_the_executor_with_their_verdicts_and_payloads() {
    let mut r = Rng(0x7ece_17e5);
    let mut b = Bench::new(Receive::default());
    b.uut.page_shift.next = SHIFT.to_bits();
    b.uut.piece_shift.next = SHIFT
        .min(crate::fastpath::piece_shift::AXI_BOUNDARY_SHIFT)
        .to_bits();
    b.uut.mem.tlb_free.next = true;
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    for _ in 0..crate::key_table::SWEEP_CYCLES {
        b.tick();
    }
    b.uut.slow.key_wr.valid.next = true;
    b.uut.slow.key_wr.pid.next = (PID as u64).to_bits();
    b.uut.slow.key_wr.key.next = KEY.to_bits();
    b.tick();
    b.uut.slow.key_wr.valid.next = false;

    let frames: Vec<Frame> = (0..40).map(|i| frame(&mut r, i)).collect();
    let pages: HashSet<(u64, u64)> = frames.iter().map(|f| f.page).collect();
    let mut src = StreamSource::default();
    for f in &frames {
        src.push(f.route, f.bytes.clone());
    }
    // The executor model: the frame it holds, the cycles it still waits before taking the
    // next one, the payload block it fetches next and the blocks fetched so far.
    let mut held: Option<usize> = None;
    let mut next = 0usize;
    let mut wait = r.below(12);
    let mut fetched: Vec<u8> = Vec::new();
    let mut fetching: Option<u64> = None;
    let mut block = 0u64;
    let mut looked = HashSet::new();
    let mut cycles = 0u64;
    while next < frames.len() || held.is_some() {
        assert!(cycles < 200_000, "stuck at frame {next}");
        let beat = src
            .beat()
            .map(|x| (x.data.to_vec(), x.keep, x.last, *x.meta));
        b.uut.rx_valid.next = beat.is_some();
        if let Some((data, keep, last, route)) = &beat {
            let mut full = data.clone();
            full.resize(64, 0);
            b.uut.rx_data.next = bytes_to_bits(&full);
            b.uut.rx_keep.next = keep.to_bits();
            b.uut.rx_last.next = *last;
            b.uut.rx_route.next = bytes_to_bits(route);
        }
        // The block fetched last cycle is on `buf_data` now.
        if let Some(k) = fetching.take() {
            assert_eq!(k as usize * 64, fetched.len());
            fetched.extend(bits_to_bytes(b.uut.core.buf_data.val()));
        }
        b.uut.core.queue.take.next = false;
        b.uut.core.queue.done.next = false;
        b.uut.core.pay_fetch.next = false;
        b.settle();
        if b.uut.mem.tlb_ahead.valid.val() {
            let page = (
                b.uut.mem.tlb_ahead.pid.val().to_u64(),
                b.uut.mem.tlb_ahead.vpn.val().to_u64(),
            );
            assert!(
                pages.contains(&page),
                "lookup of a page no frame has: {page:?}"
            );
            looked.insert(page);
        }
        match held {
            None if b.uut.core.frame.full.val() && b.uut.core.keys.ready.val() => {
                if wait > 0 {
                    wait -= 1;
                } else {
                    let f = &frames[next];
                    let hdr = bits_to_bytes(b.uut.core.frame.hdr.val());
                    assert_eq!(hdr[..], f.bytes[..48], "header of frame {next}");
                    assert_eq!(bits_to_bytes(b.uut.core.frame.route.val()), f.route);
                    assert_eq!(
                        b.uut.core.frame.verdict.val().to_u64(),
                        0,
                        "frame {next} passes"
                    );
                    b.uut.core.queue.take.next = true;
                    held = Some(next);
                    next += 1;
                    block = 0;
                    fetched.clear();
                }
            }
            Some(n) => {
                let f = &frames[n];
                let lane = (f.bytes[23] % 64) as usize;
                let plen = f.bytes.len() - HEADER_LEN;
                let blocks = (lane + plen).div_ceil(64) as u64;
                if block == 0 {
                    assert_eq!(
                        b.uut.core.keys.ok.val(),
                        f.key_ok,
                        "key verdict of frame {n}"
                    );
                }
                if block < blocks {
                    b.uut.core.pay_fetch.next = true;
                    b.uut.core.pay_block.next = block.to_bits();
                    fetching = Some(block);
                    block += 1;
                } else if fetching.is_none() && fetched.len() as u64 == blocks * 64 {
                    assert!(
                        fetched[lane..lane + plen] == f.bytes[HEADER_LEN..],
                        "payload of frame {n}"
                    );
                    b.uut.core.queue.done.next = true;
                    held = None;
                    wait = r.below(12);
                }
            }
            None => {}
        }
        b.settle();
        if beat.is_some() && b.uut.rx_ready.val() {
            src.accept();
        }
        b.tick();
        cycles += 1;
    }
    assert!(
        looked.len() * 2 >= pages.len(),
        "the look-ahead looked up {} of {} pages",
        looked.len(),
        pages.len()
    );
}
