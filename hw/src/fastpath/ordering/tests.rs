//! The ordering rules alone, against a plain list of the writes without their B responses:
//! random page-table and data writes (W bursts ending), B responses in order after random
//! delays (up to 100 writes outstanding, so the 8-bit counts wrap many times), the write-data
//! stage streaming and the R channel busy at random. Every cycle, every rule says exactly what
//! the list says.

use super::*;
use crate::bench::Bench;
use crate::fastpath::in_flight::IN_FLIGHT_SLOTS;
use crate::tb::{spans_overlap, Rng};
use std::collections::VecDeque;

fn run(seed: u64, cycles: u64, max_out: usize) -> (u64, u64) {
    let mut r = Rng(seed);
    let mut b = Bench::new(Ordering::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    // Writes whose last W beat was taken and whose B is due: page-table write or not.
    let mut out: VecDeque<bool> = VecDeque::new();
    let (mut w_busy, mut reads_idle) = (false, true);
    let (mut blocked_reads, mut blocked_walks) = (0u64, 0u64);
    for cycle in 0..cycles {
        // Bursts of writes, then quiet stretches, so both full and empty lists occur.
        let phase = (cycle / 500) % 2 == 0;
        let w_done = out.len() < max_out && r.below(if phase { 2 } else { 9 }) == 0;
        // Long stretches with one kind of write only: the other kind's mark must follow the B
        // count across many wraps of the 8-bit counts.
        let w_pt = match (cycle / 3000) % 3 {
            0 => r.below(3) == 0,
            1 => false,
            _ => true,
        };
        let b_valid = !out.is_empty() && r.below(if phase { 3 } else { 2 }) == 0;
        if r.below(8) == 0 {
            w_busy = !w_busy;
        }
        if r.below(6) == 0 {
            reads_idle = !reads_idle;
        }
        b.uut.dram.w_done.next = w_done;
        b.uut.w_page_table.next = w_pt;
        b.uut.dram.b_done.next = b_valid;
        b.uut.w_busy.next = w_busy;
        b.uut.dram.reads_idle.next = reads_idle;
        b.settle();
        let data_out = out.iter().any(|&pt| !pt);
        let pt_out = out.iter().any(|&pt| pt);
        let u = &b.uut;
        let at = format!("cycle {cycle}, {} outstanding", out.len());
        assert_eq!(
            u.clear.read_clear.val(),
            !data_out && !w_busy,
            "read_clear, {at}"
        );
        assert_eq!(
            u.walk_clear.val(),
            !pt_out && reads_idle,
            "walk_clear, {at}"
        );
        assert_eq!(
            u.clear.atomic_clear.val(),
            !data_out && !w_busy && reads_idle,
            "atomic_clear, {at}"
        );
        assert_eq!(u.clear.write_clear.val(), reads_idle, "write_clear, {at}");
        assert_eq!(
            u.clear.fence_clear.val(),
            out.is_empty() && !w_busy,
            "fence_clear, {at}"
        );
        blocked_reads += data_out as u64;
        blocked_walks += pt_out as u64;
        if b_valid {
            out.pop_front();
        }
        if w_done {
            out.push_back(w_pt);
        }
        b.tick();
    }
    (blocked_reads, blocked_walks)
}

#[test]
fn every_rule_says_what_the_outstanding_writes_say() {
    for (seed, max_out) in [(1u64, 3usize), (0xdead_beef, 20), (0x5eed, 100)] {
        let (reads, walks) = run(seed, 30_000, max_out);
        // Both rules were exercised (held back and let go).
        assert!(reads > 1000 && walks > 1000, "{reads} {walks}");
    }
}

/// A burst as (first line, length less one), lines inside one 16 KiB window.
type Lines = (u64, u64);

#[test]
fn near_verdicts_answer_last_cycles_burst_against_the_other_way_in_flight() {
    let mut r = Rng(0xa11ce);
    let mut b = Bench::new(Ordering::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    let (mut writes, mut reads): (VecDeque<Lines>, VecDeque<Lines>) = Default::default();
    // What the verdicts must say next cycle.
    let (mut want_read, mut want_write) = (false, false);
    let (mut read_near, mut write_near) = (0u64, 0u64);
    let (mut w_fresh, mut r_fresh) = (false, false);
    // Bursts inside their 4 KiB blocks (64 lines), as AXI keeps them.
    let burst = |r: &mut Rng| {
        let start = r.below(256);
        let len = if r.below(3) == 0 { r.below(17) } else { 0 };
        (start, len.min(63 - (start & 63)))
    };
    for cycle in 0..40_000u64 {
        let filling = (cycle / 300) % 2 == 0;
        // The executor asks about one burst, both tables at once, and often about the same
        // burst again.
        let q = burst(&mut r);
        let ask = r.below(3) != 0;
        let ar = r.below(if filling { 3 } else { 6 }) == 0;
        let aw = r.below(if filling { 3 } else { 6 }) == 0;
        let (ar_burst, aw_burst) = (burst(&mut r), burst(&mut r));
        let b_done = !writes.is_empty() && r.below(if filling { 5 } else { 2 }) == 0;
        let r_last = !reads.is_empty() && r.below(if filling { 5 } else { 2 }) == 0;
        let u = &mut b.uut;
        u.dram.ar_take.next = ar;
        u.dram.ar_line.next = ar_burst.0.to_bits();
        u.dram.ar_len.next = ar_burst.1.to_bits();
        u.dram.aw_take.next = aw;
        u.dram.aw_line.next = aw_burst.0.to_bits();
        u.dram.aw_len.next = aw_burst.1.to_bits();
        u.dram.b_done.next = b_done;
        u.dram.r_last.next = r_last;
        u.clear.ask.next = ask;
        u.clear.ask_line.next = q.0.to_bits();
        u.clear.ask_end.next = (q.0 + q.1).to_bits();
        b.settle();
        let u = &b.uut;
        assert_eq!(
            u.clear.read_near.val(),
            want_read,
            "read_near, cycle {cycle}"
        );
        assert_eq!(
            u.clear.write_near.val(),
            want_write,
            "write_near, cycle {cycle}"
        );
        read_near += want_read as u64;
        write_near += want_write as u64;
        // A burst added last cycle is kept to its block's end in its table this cycle.
        let kept = |fresh: bool, k: usize, n: usize, o: Lines| {
            if fresh && k + 1 == n {
                (o.0, (o.0 | 63) - o.0)
            } else {
                o
            }
        };
        want_read = ask
            && !ar
            && !aw
            && writes.len() <= IN_FLIGHT_SLOTS
            && !writes
                .iter()
                .enumerate()
                .any(|(k, &w)| spans_overlap(kept(w_fresh, k, writes.len(), w), q));
        want_write = ask
            && !ar
            && !aw
            && reads.len() <= IN_FLIGHT_SLOTS
            && !reads
                .iter()
                .enumerate()
                .any(|(k, &x)| spans_overlap(kept(r_fresh, k, reads.len(), x), q));
        if b_done {
            writes.pop_front();
        }
        if r_last {
            reads.pop_front();
        }
        if aw {
            writes.push_back(aw_burst);
        }
        if ar {
            reads.push_back(ar_burst);
        }
        (w_fresh, r_fresh) = (aw, ar);
        b.tick();
    }
    assert!(
        read_near > 1000 && write_near > 1000,
        "{read_near} {write_near}"
    );
}
