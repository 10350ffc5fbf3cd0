//! The table against a plain list of the bursts in flight: random adds and retires (up to a
//! dozen in flight, so the ring wraps over live slots), a random burst asked about each cycle.
//! `clash` must hold whenever the burst overlaps one in flight (byte ranges) or more are in
//! flight than the slots; with every address inside one 16 KiB window it must say exactly that.

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
    for cycle in 0..cycles {
        let burst = |r: &mut Rng| {
            let len = if r.below(4) == 0 {
                r.below(max_len + 1)
            } else {
                r.below(2)
            };
            // In the 16 KiB window, bursts end inside it too (none wraps the circle).
            let room = if lines <= 256 { lines - len } else { lines };
            (r.below(room), len)
        };
        let add = out.len() < max_out && r.below(3) == 0;
        let new = burst(&mut r);
        // Filling and draining stretches, so both a full ring and an empty one occur.
        let filling = (cycle / 400) % 2 == 0;
        let retire = !out.is_empty() && r.below(if filling { 4 } else { 2 }) == 0;
        let ask = burst(&mut r);
        let u = &mut b.uut;
        u.add.next = add;
        u.add_line.next = (new.0 & 0xFF).to_bits();
        u.add_len.next = new.1.to_bits();
        u.retire.next = retire;
        u.ask_line.next = (ask.0 & 0xFF).to_bits();
        u.ask_len.next = ask.1.to_bits();
        b.settle();
        let real = out.iter().any(|&o| spans_overlap(o, ask));
        let over = out.len() > IN_FLIGHT_SLOTS;
        let got = b.uut.clash.val();
        let at = format!("cycle {cycle}: asked {ask:?}, in flight {out:?}");
        if real || over {
            assert!(got, "a clash missed, {at}");
        }
        if lines <= 256 {
            assert_eq!(got, real || over, "{at}");
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
    // Lines over 4 MiB (the circle aliases), bursts up to the longest AxLEN.
    for seed in [7u64, 8, 9] {
        let (clashes, clears) = run(seed, 20_000, 1 << 16, 255, 10);
        assert!(clashes > 100 && clears > 100, "{clashes} {clears}");
    }
    // Short bursts close together: overlaps are common, and every one must be seen.
    let (clashes, _) = run(11, 20_000, 40, 3, 10);
    assert!(clashes > 5000, "{clashes}");
}
