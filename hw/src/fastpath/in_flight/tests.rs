//! The table against a plain list of the bursts in flight: random adds and retires (up to a
//! dozen in flight, so the ring wraps over live slots), a random burst asked about each cycle,
//! every burst inside its 4 KiB block (64 lines) as AXI keeps them, the question's end a random
//! bound between the burst's last line and its block's. `clash` must hold whenever the burst
//! overlaps one in flight (byte ranges) or more are in flight than the slots; with every
//! address inside one 16 KiB window it must say exactly "the question's interval overlaps one in
//! flight, or overflowed", the burst added the cycle before taken to its block's end.

use super::*;
use crate::bench::Bench;
use crate::tb::{spans_overlap, Rng};
use std::collections::VecDeque;

fn run(seed: u64, cycles: u64, lines: u64, max_len: u64, max_out: usize) -> (u64, u64) {
    let mut r = Rng(seed);
    let mut b = Bench::new(InFlight::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    let mut out: VecDeque<(u64, u64)> = VecDeque::new();
    let (mut clashes, mut clears) = (0, 0);
    let mut fresh = false;
    for cycle in 0..cycles {
        let burst = |r: &mut Rng| {
            let start = r.below(lines);
            // Up to the end of its 4 KiB block (AXI: no burst crosses one), and of the lines.
            let room = (63 - (start & 63)).min(lines - 1 - start);
            let len = if r.below(4) == 0 {
                r.below(max_len + 1)
            } else {
                r.below(2)
            };
            (start, len.min(room))
        };
        let add = out.len() < max_out && r.below(3) == 0;
        let new = burst(&mut r);
        // Filling and draining stretches, so both a full ring and an empty one occur.
        let filling = (cycle / 400) % 2 == 0;
        let retire = !out.is_empty() && r.below(if filling { 4 } else { 2 }) == 0;
        let ask = burst(&mut r);
        // The question's end: the burst's last line, or a bound up to its block's last line.
        let block_end = ask.0 | 63;
        let ask_end = match r.below(3) {
            0 => ask.0 + ask.1,
            1 => block_end,
            _ => ask.0 + ask.1 + r.below(block_end - ask.0 - ask.1 + 1),
        };
        let u = &mut b.uut;
        u.add.next = add;
        u.add_line.next = (new.0 & 0xFF).to_bits();
        u.add_len.next = new.1.to_bits();
        u.retire.next = retire;
        u.ask_line.next = (ask.0 & 0xFF).to_bits();
        u.ask_end.next = (ask_end & 0xFF).to_bits();
        b.settle();
        let real = out.iter().any(|&o| spans_overlap(o, ask));
        // The burst added last cycle is kept to its block's end until this cycle's sum lands.
        let kept = |k: usize, o: (u64, u64)| {
            if fresh && k + 1 == out.len() {
                (o.0, (o.0 | 63) - o.0)
            } else {
                o
            }
        };
        let bound = out
            .iter()
            .enumerate()
            .any(|(k, &o)| spans_overlap(kept(k, o), (ask.0, ask_end - ask.0)));
        let over = out.len() > IN_FLIGHT_SLOTS;
        let got = b.uut.clash.val();
        let at = format!("cycle {cycle}: asked {ask:?} up to {ask_end}, in flight {out:?}");
        if real || over {
            assert!(got, "a clash missed, {at}");
        }
        if lines <= 256 {
            assert_eq!(got, bound || over, "{at}");
        }
        if got {
            clashes += 1;
        } else {
            clears += 1;
        }
        if retire {
            out.pop_front();
        }
        if add {
            out.push_back(new);
        }
        fresh = add;
        b.tick();
    }
    (clashes, clears)
}

#[test]
fn in_a_16_kib_window_clash_is_exactly_an_overlap_or_an_overflow() {
    for (seed, max_out) in [(3u64, 4usize), (0x5eed, 12), (0xfeed, 20)] {
        let (clashes, clears) = run(seed, 20_000, 256, 20, max_out);
        assert!(clashes > 500 && clears > 500, "{clashes} {clears}");
    }
}

#[test]
fn anywhere_a_real_overlap_is_never_missed() {
    // Lines over 4 MiB (the circle aliases), bursts up to a whole 4 KiB block.
    for seed in [7u64, 8, 9] {
        let (clashes, clears) = run(seed, 20_000, 1 << 16, 63, 10);
        assert!(clashes > 100 && clears > 100, "{clashes} {clears}");
    }
    // Short bursts close together: overlaps are common, and every one must be seen.
    let (clashes, _) = run(11, 20_000, 40, 3, 10);
    assert!(clashes > 5000, "{clashes}");
}
