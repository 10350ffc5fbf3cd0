//! The counters alone: 20,000 cycles of random events (several in one cycle, long quiet and
//! busy stretches) and resets now and then; every count against the events driven since the
//! last reset, every cycle.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;

#[test]
fn counts_every_event_since_reset() {
    let mut r = Rng(0x0005_7A75);
    let mut b = Bench::new(Stats::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    // rx, tx, nack, hit, miss, fault, denied; a hit counted for the translate stage's or the
    // look-ahead's (`ahead`), once when both come.
    let mut want = [0u64; 7];
    let mut resets = 0;
    for cycle in 0..20_000u64 {
        let busy = (cycle / 700) % 2 == 0;
        let ev: [bool; 7] =
            core::array::from_fn(|k| r.below(if busy { 2 } else { 9 + k as u64 }) == 0);
        let ahead = r.below(if busy { 2 } else { 12 }) == 0;
        let reset = r.below(3000) == 0;
        let u = &mut b.uut;
        u.rx.next = ev[0];
        u.tx.next = ev[1];
        u.exec.nack.next = ev[2];
        u.tr.hit.next = ev[3];
        u.exec.ahead_hit.next = ahead;
        u.tr.miss.next = ev[4];
        u.tr.fault.next = ev[5];
        u.exec.denied.next = ev[6];
        u.reset.next = reset;
        b.tick();
        if reset {
            want = [0; 7];
            resets += 1;
        } else {
            for (w, e) in want.iter_mut().zip(ev) {
                *w += e as u64;
            }
            want[3] += (ahead && !ev[3]) as u64;
        }
        b.settle();
        let u = &b.uut;
        let got = [
            u.rx_pkts.val().to_u64(),
            u.tx_pkts.val().to_u64(),
            u.nacks.val().to_u64(),
            u.tlb_hits.val().to_u64(),
            u.tlb_misses.val().to_u64(),
            u.page_faults.val().to_u64(),
            u.denied_reqs.val().to_u64(),
        ];
        assert_eq!(got, want, "cycle {cycle}: rx tx nack hit miss fault denied");
        assert_eq!(
            u.bucket_reads.val().to_u64(),
            want[4],
            "cycle {cycle}: one bucket per miss"
        );
    }
    assert!(resets > 2, "only {resets} resets");
}
