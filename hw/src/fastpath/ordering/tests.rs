//! The ordering rules alone, against a plain list of the writes without their B responses:
//! random page-table and data writes (W bursts ending), B responses in order after random
//! delays (up to 100 writes outstanding, so the 8-bit counts wrap many times), the write-data
//! stage streaming and the R channel busy at random. Every cycle, every rule says exactly what
//! the list says.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
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
