//! The slot bookkeeping alone, against a model of the four slots: frames arrive in slot order
//! with random fields, the executor takes them (also in the cycle it finishes the last),
//! finishes them or passes writes to a write-data stage that streams for a while and then
//! releases the slot, at random. Every cycle: the executor's slot and hold, the slot released,
//! the next slot, the slot a take reads (the oldest not taken, which is the next slot whenever
//! the executor can take), whether a frame is there (never the one being streamed), that
//! frame's fields, pid and idempotence-ring key (a CN_ACK's from its `arg0`), and the
//! look-ahead's `taken` and `head`; and no frame is taken twice or skipped.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::bytes_to_bits;

/// A big-endian field of the header (`proto::header::field`), as the model reads it.
fn be(hdr: &[u8], f: core::ops::Range<usize>) -> u64 {
    hdr[f].iter().fold(0, |v, b| v << 8 | *b as u64)
}

/// A frame in a slot: the fields the block muxes.
#[derive(Clone, Debug)]
struct Frame {
    id: u64,
    verdict: u64,
    hdr: [u8; 48],
    client: u64,
    route: [u8; 32],
    lane: u64,
}

fn frame(r: &mut Rng, id: u64) -> Frame {
    let mut hdr = [0u8; 48];
    let mut route = [0u8; 32];
    hdr.iter_mut().for_each(|b| *b = r.next() as u8);
    if r.below(4) == 0 {
        hdr[field::OPCODE] = Opcode::CnAck as u8;
    }
    route.iter_mut().for_each(|b| *b = r.next() as u8);
    Frame {
        id,
        verdict: r.below(4),
        hdr,
        client: r.below(1 << 16),
        route,
        lane: r.below(64),
    }
}

#[test]
fn takes_frames_in_order_and_releases_each_once() {
    let mut r = Rng(0x5107_0EE0);
    let mut b = Bench::new(SlotQueue::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    let mut slots: [Option<Frame>; 4] = Default::default();
    let (mut fill, mut next_id) = (0usize, 0u64);
    // The executor: its slot, whether it holds it, and the frame it expects next.
    let (mut x_slot, mut x_hold, mut want_id) = (0usize, false, 0u64);
    // The write-data stage: the slot it streams and the cycles left.
    let mut wd: Option<(usize, u32)> = None;
    let (mut taken_n, mut passed, mut same_cycle) = (0u32, 0u32, 0u32);
    for cycle in 0..20_000u64 {
        // Inputs: the slots, the write-data stage, the executor's moves.
        let full: u64 = (0..4).filter(|&k| slots[k].is_some()).map(|k| 1 << k).sum();
        b.uut.full.next = full.to_bits();
        b.uut.w_busy.next = wd.is_some();
        b.uut.w_slot.next = (wd.map_or(r.below(4) as usize, |w| w.0) as u64).to_bits();
        // `done` also ends requests that hold no slot (a slow-path descriptor's): no move then.
        let done = r.below(3) == 0;
        let pass = x_hold && !done && wd.is_none() && r.below(3) == 0;
        let moves = (done && x_hold) || pass;
        let next = if moves { (x_slot + 1) % 4 } else { x_slot };
        let next_full = slots[next].is_some() && wd.map(|w| w.0) != Some(next);
        let take = (!x_hold || moves) && next_full && r.below(2) == 0;
        b.uut.exec.done.next = done;
        b.uut.exec.pass.next = pass;
        b.uut.exec.take.next = take;
        // The ingest stage answers the slot read the same cycle (its LUT RAM): the slot's
        // frame, or a random one where there is none.
        b.settle();
        let k = b.uut.frames.slot.val().to_u64() as usize;
        // The slot a take reads is the oldest not taken, from the registers alone; it is the
        // next slot whenever the executor can take.
        let head = if x_hold { (x_slot + 1) % 4 } else { x_slot };
        let can_take = !x_hold || moves;
        if can_take {
            assert_eq!(head, next, "cycle {cycle}: the take's slot is the next one");
        }
        let head_full = slots[head].is_some() && wd.map(|w| w.0) != Some(head);
        let f = slots[k].clone().unwrap_or_else(|| frame(&mut r, u64::MAX));
        b.uut.frames.verdict.next = f.verdict.to_bits();
        b.uut.frames.hdr.next = bytes_to_bits(&f.hdr);
        b.uut.frames.client.next = f.client.to_bits();
        b.uut.frames.route.next = bytes_to_bits(&f.route);
        b.uut.frames.lane.next = f.lane.to_bits();
        b.settle();
        assert_eq!(
            k, head,
            "cycle {cycle}: the slot read is the oldest not taken"
        );
        let u = &b.uut;
        let at = format!("cycle {cycle}");
        assert_eq!(u.view.slot.val().to_u64() as usize, x_slot, "{at}: slot");
        assert_eq!(u.hold.val(), x_hold, "{at}: hold");
        let clear = if done && x_hold { 1u64 << x_slot } else { 0 };
        assert_eq!(u.clear.val().to_u64(), clear, "{at}: clear");
        assert_eq!(
            u.view.next_slot.val().to_u64() as usize,
            next,
            "{at}: next slot"
        );
        assert_eq!(u.out.full.val(), head_full, "{at}: next full");
        if head_full {
            let f = slots[head].as_ref().expect("full");
            if can_take {
                // The frame the executor can take now is the one after its last.
                assert_eq!(f.id, want_id, "{at}: frames out of order");
            }
            assert_eq!(u.out.verdict.val().to_u64(), f.verdict, "{at}: verdict");
            assert_eq!(
                u.out.hdr.val(),
                bytes_to_bits::<384>(&f.hdr),
                "{at}: header"
            );
            let req = if f.hdr[field::OPCODE] == Opcode::CnAck as u8 {
                be(&f.hdr, field::ARG0) & 0xFFFF_FFFF
            } else {
                be(&f.hdr, field::REQ_ID)
            };
            assert_eq!(
                u.out.ring_key.val().to_u64(),
                be(&f.hdr, field::PID) << 48 | f.client << 32 | req,
                "{at}: ring key"
            );
            assert_eq!(u.out.client.val().to_u64(), f.client, "{at}: client");
            assert_eq!(
                u.out.route.val(),
                bytes_to_bits::<256>(&f.route),
                "{at}: route"
            );
            assert_eq!(u.out.lane.val().to_u64(), f.lane, "{at}: lane");
        }
        let mut taken = if x_hold { 1u64 << x_slot } else { 0 };
        if let Some((s, _)) = wd {
            taken |= 1 << s;
        }
        assert_eq!(u.view.taken.val().to_u64(), taken, "{at}: taken");
        assert_eq!(u.view.head.val().to_u64() as usize, head, "{at}: head");
        b.tick();
        // The model moves on.
        if let Some((s, left)) = wd {
            wd = if left == 0 {
                slots[s] = None;
                None
            } else {
                Some((s, left - 1))
            };
        }
        if done && x_hold {
            slots[x_slot] = None;
        }
        if pass {
            wd = Some((x_slot, r.below(20) as u32));
            passed += 1;
        }
        if moves {
            x_slot = next;
            x_hold = false;
        }
        if take {
            x_hold = true;
            want_id += 1;
            taken_n += 1;
            same_cycle += moves as u32;
        }
        if slots[fill].is_none() && r.below(2) == 0 {
            slots[fill] = Some(frame(&mut r, next_id));
            next_id += 1;
            fill = (fill + 1) % 4;
        }
    }
    assert!(
        taken_n > 3000 && passed > 500 && same_cycle > 500,
        "taken {taken_n}, passed {passed}, taken as the last ends {same_cycle}"
    );
}
