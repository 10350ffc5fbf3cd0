//! The ingest stage alone: random frames (good, corrupted, truncated, short, responses) at
//! random lane offsets and lengths, back to back, with slots released after random delays.
//! Every slot's header, client, route, lane and verdict, and every payload byte in the
//! buffer, against what `proto` says the frame carries; back-pressure when all four slots are
//! full; the slot full exactly two cycles after the frame's last beat.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::tb::StreamSource;
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::header::{Packet, FLAG_RESPONSE, HEADER_LEN};
use clio_proto::{Header, Opcode};
use std::collections::{HashMap, VecDeque};

/// What a frame should leave in its slot.
#[derive(Debug, Clone)]
struct Expect {
    frame: Vec<u8>,
    route: [u8; 32],
    /// 0 pass, 1 drop, 2 NACK (the slot's verdict bits).
    verdict: u64,
}

fn frame(r: &mut Rng, i: usize) -> Expect {
    let plen = match r.below(4) {
        0 => 0,
        1 => r.below(64) as usize,
        2 => 1024,
        _ => r.below(1025) as usize,
    };
    let va = 0x40_0000 + r.below(1 << 20);
    let mut h = Header::request(Opcode::Write, 1 + r.below(100) as u16, i as u32, va);
    h.total_len = 4096;
    h.key = r.next();
    h.client = r.next() as u16;
    let mut f = h.to_packet(&r.bytes(plen));
    let verdict = match r.below(10) {
        0 => {
            // A flipped bit anywhere: NACK.
            let bit = r.below(8 * f.len() as u64) as usize;
            f[bit / 8] ^= 1 << (bit % 8);
            2
        }
        1 if plen > 0 => {
            f.pop();
            2
        }
        2 => {
            f.truncate(1 + r.below(HEADER_LEN as u64 - 1) as usize);
            1
        }
        3 => {
            f[3] = FLAG_RESPONSE;
            Packet::new_unchecked(&mut f[..]).fill_checksum();
            1
        }
        _ => 0,
    };
    let mut route = [0u8; 32];
    route.copy_from_slice(&r.bytes(32));
    Expect {
        frame: f,
        route,
        verdict,
    }
}

/// Bytes `[at, at + n)` of the frame, zero past its end.
fn span(f: &[u8], at: usize, n: usize) -> Vec<u8> {
    (at..at + n)
        .map(|i| f.get(i).copied().unwrap_or(0))
        .collect()
}

fn be(b: &[u8]) -> u64 {
    b.iter().fold(0, |v, &x| v << 8 | x as u64)
}

fn check_slot(
    b: &mut Bench<Ingest>,
    buf: &HashMap<u64, Vec<u8>>,
    slot: usize,
    e: &Expect,
    n: usize,
) {
    b.uut.frames.slot.next = (slot as u64).to_bits();
    b.settle();
    let u = &b.uut;
    let f = &e.frame;
    let v = u.frames.verdict.val().to_u64();
    assert_eq!(v, e.verdict, "frame {n}: verdict");
    if e.verdict == 1 && f.len() < HEADER_LEN {
        return; // too short to have fields
    }
    assert_eq!(
        bits_to_bytes(u.frames.hdr.val()),
        span(f, 0, 48),
        "frame {n}: header"
    );
    assert_eq!(
        u.frames.client.val().to_u64(),
        be(&span(f, 56, 2)),
        "frame {n}: client"
    );
    assert_eq!(
        bits_to_bytes(u.frames.route.val()),
        e.route,
        "frame {n}: route"
    );
    let lane = (f[23] % 64) as usize;
    assert_eq!(
        u.frames.lane.val().to_u64() as usize,
        lane,
        "frame {n}: lane"
    );
    if e.verdict != 0 {
        return; // the executor never reads a refused frame's payload
    }
    let payload = &f[HEADER_LEN..];
    for (j, &byte) in payload.iter().enumerate() {
        let at = lane + j;
        let addr = (slot as u64) << 5 | (at / 64) as u64;
        let blk = buf
            .get(&addr)
            .unwrap_or_else(|| panic!("frame {n}: block {} of slot {slot} not written", at / 64));
        assert_eq!(blk[at % 64], byte, "frame {n}: payload byte {j}");
    }
}

/// What a run saw: cycles, beats taken, cycles a beat waited for `rx_ready`.
struct Seen {
    cycles: u64,
    beats: u64,
    stalled_cycles: u64,
}

/// Receive `frames` back to back; a slot is released up to `max_delay` cycles after it fills
/// (0: the cycle after; else up to `max_delay - 1` cycles later). Every slot is checked as it fills.
fn receive(r: &mut Rng, frames: &[Expect], max_delay: u64) -> Seen {
    let mut b = Bench::new(Ingest::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    let start = b.cycle;
    let mut beats = 0u64;
    let mut src = StreamSource::default();
    for e in frames {
        src.push(e.route, e.frame.clone());
    }
    let mut buf: HashMap<u64, Vec<u8>> = HashMap::new();
    // Frames received, in order, with the cycle of their last beat.
    let mut done: VecDeque<(usize, u64)> = VecDeque::new();
    let mut next_frame = 0usize;
    let mut frames_in = 0usize;
    // Full slots and the cycle each is released.
    let mut release_at: [Option<u64>; 4] = [None; 4];
    let mut checked = 0usize;
    let mut stalled_cycles = 0u64;
    let mut was_full = 0u64;
    let mut was_headed = 0u64;
    // The slot a header came in for last cycle (`header.valid`): it is `headed` now.
    let mut header_for: Option<u64> = None;
    let mut headers = 0usize;
    while checked < frames.len() {
        assert!(b.cycle < 200_000, "stuck after {checked} frames");
        let now = b.cycle;
        // Drive this cycle's inputs.
        let beat = src
            .beat()
            .map(|x| (x.data.to_vec(), x.keep, x.last, x.first, *x.meta));
        match &beat {
            Some((data, keep, last, _, route)) => {
                let mut full = data.clone();
                full.resize(64, 0xA5);
                b.uut.rx_valid.next = true;
                b.uut.rx_data.next = bytes_to_bits(&full);
                b.uut.rx_keep.next = keep.to_bits();
                b.uut.rx_last.next = *last;
                b.uut.rx_route.next = bytes_to_bits(route);
            }
            None => b.uut.rx_valid.next = false,
        }
        let mut release = 0u64;
        for (k, at) in release_at.iter_mut().enumerate() {
            if at.is_some_and(|t| t <= now) {
                release |= 1 << k;
                *at = None;
            }
        }
        b.uut.freed.next = release.to_bits();
        b.settle();
        // Sample before the edge.
        let ready = b.uut.rx_ready.val();
        let full = b.uut.full.val().to_u64();
        if beat.is_some() && !ready {
            stalled_cycles += 1;
        }
        if ready {
            // Never receive into a slot that still holds a frame.
            let slot = frames_in % 4;
            assert_eq!(full >> slot & 1, 0, "receiving into full slot {slot}");
        }
        if b.uut.buf_write.val() {
            buf.insert(
                b.uut.buf_address.val().to_u64(),
                bits_to_bytes(b.uut.buf_data.val()),
            );
        }
        if b.uut.frame_in.val() {
            frames_in += 1;
        }
        // A slot that became full: exactly two cycles after its frame's last beat.
        // `headed`: every full slot, and a frame's header from the cycle after its first beat.
        let headed = b.uut.headed.val().to_u64();
        assert_eq!(full & !headed, 0, "full slots without a header");
        for k in 0..4 {
            if (headed & !was_headed) >> k & 1 == 1 {
                let f = &frames[headers].frame;
                assert_eq!(headers % 4, k, "header {headers} in slot {k}");
                if f.len() >= 48 {
                    b.uut.frames.slot.next = (k as u64).to_bits();
                    b.settle();
                    assert_eq!(
                        bits_to_bytes(b.uut.frames.hdr.val()),
                        span(f, 0, 48),
                        "frame {headers}: early header"
                    );
                }
                headers += 1;
            }
        }
        if let Some(k) = header_for.take() {
            assert_eq!(
                (headed & !was_headed) >> k & 1,
                1,
                "header.valid for slot {k}, not headed next"
            );
        }
        if b.uut.header.valid.val() {
            header_for = Some(b.uut.header.slot.val().to_u64());
            assert!(
                ready && beat.as_ref().is_some_and(|x| x.3),
                "header.valid off a first beat"
            );
        }
        was_headed = headed & !release;
        let rising = full & !was_full;
        for (k, release_k) in release_at.iter_mut().enumerate() {
            if rising >> k & 1 == 1 {
                let (i, last) = done.pop_front().expect("a slot filled with no frame");
                assert_eq!(i % 4, k, "frame {i} in slot {k}");
                assert_eq!(
                    now,
                    last + 2,
                    "frame {i}: slot full {} cycles after its last beat",
                    now - last
                );
                check_slot(&mut b, &buf, k, &frames[i], i);
                checked += 1;
                *release_k = Some(if max_delay == 0 {
                    now
                } else {
                    now + r.below(max_delay)
                });
            }
        }
        was_full = full & !release;
        let took = ready && beat.is_some();
        b.tick();
        if took {
            beats += 1;
            let last = beat.as_ref().is_some_and(|x| x.2);
            src.accept();
            if last {
                done.push_back((next_frame, now));
                next_frame += 1;
            }
        }
    }
    assert_eq!(frames_in, frames.len());
    Seen {
        cycles: b.cycle - start,
        beats,
        stalled_cycles,
    }
}

#[test]
fn frames_land_in_their_slots() {
    let mut r = Rng(0x1_6E57);
    let frames: Vec<Expect> = (0..300).map(|i| frame(&mut r, i)).collect();
    let Seen {
        cycles,
        stalled_cycles,
        ..
    } = receive(&mut r, &frames, 40);
    assert!(
        stalled_cycles > 100,
        "all slots full only {stalled_cycles} cycles"
    );
    let counts = [0, 1, 2].map(|v| frames.iter().filter(|e| e.verdict == v).count());
    assert!(counts.iter().all(|&c| c > 10), "verdicts {counts:?}");
    eprintln!(
        "{} frames ({:?} pass/drop/NACK) in {} cycles, {stalled_cycles} cycles back-pressured",
        frames.len(),
        counts,
        cycles
    );
}

#[test]
fn back_to_back_frames_take_one_cycle_per_beat() {
    // Good frames of 0..=64 payload bytes (one or two beats), each slot released as soon as
    // it fills: the next frame's first beat comes in with the previous one's flush cycle.
    let mut r = Rng(0xB2B);
    let frames: Vec<Expect> = (0..200)
        .map(|i| {
            let plen = r.below(65) as usize;
            let va = 0x40_0000 + r.below(1 << 20);
            let mut h = Header::request(Opcode::Write, 7, i as u32, va);
            h.total_len = plen as u32;
            let mut route = [0u8; 32];
            route.copy_from_slice(&r.bytes(32));
            Expect {
                frame: h.to_packet(&r.bytes(plen)),
                route,
                verdict: 0,
            }
        })
        .collect();
    let seen = receive(&mut r, &frames, 0);
    // The last frame's slot fills two cycles after its last beat; nothing else is lost.
    assert!(
        seen.cycles <= seen.beats + 4,
        "{} cycles for {} beats of {} frames",
        seen.cycles,
        seen.beats,
        frames.len()
    );
}
