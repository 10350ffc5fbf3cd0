//! The persist handshake alone: 3,000 durable writes and Appends (one or two page pieces, a
//! tail word after an Append's record), the B responses late at random (`writes_done`), each
//! persist request answered after a random delay, some with an error, and now and then a run
//! cut short (the executor leaving Persist). Every request against the list the piece geometry
//! implies (in order, each held until answered, none before `writes_done`, none after the
//! last); `done` once, after the last answer; `failed` exactly when an answer was an error.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use std::collections::VecDeque;

#[test]
fn persists_every_piece_in_order_after_the_writes() {
    let mut r = Rng(0x9E25_1575);
    let mut b = Bench::new(Persist::default());
    b.uut.exec.run.next = false;
    b.tick();
    let (mut finished, mut cut, mut failures) = (0u32, 0u32, 0u32);
    for i in 0..3000u32 {
        let len = 1 + r.below(1024);
        let two = r.below(2) == 0 && len > 1;
        let n1 = if two { 1 + r.below(len - 1) } else { len };
        let pa1 = r.next() & 0xFF_FFFF_FFFF;
        let pa2 = r.next() & 0xFF_FFFF_F000;
        let append = r.below(3) == 0;
        let tail_pa = r.next() & 0xFF_FFFF_FFF8;
        let mut want: VecDeque<(u64, u64)> = VecDeque::from(vec![(pa1, n1)]);
        if two {
            want.push_back((pa2, len - n1));
        }
        if append {
            want.push_back((tail_pa, 8));
        }
        b.uut.exec.pa1.next = pa1.to_bits();
        b.uut.exec.n1.next = n1.to_bits();
        b.uut.exec.two.next = two;
        b.uut.exec.pa2.next = pa2.to_bits();
        b.uut.exec.len.next = len.to_bits();
        b.uut.exec.append.next = append;
        b.uut.tail_pa.next = tail_pa.to_bits();
        b.uut.exec.run.next = true;
        // The writes' B responses come in after `drain` cycles; each answer after a delay.
        let drain = r.below(6);
        let cut_at = (r.below(10) == 0).then(|| r.below(20));
        let mut errors = false;
        let mut wait = 0u64;
        let mut cycle = 0u64;
        loop {
            assert!(cycle < 1000, "#{i}: stuck");
            if cut_at == Some(cycle) {
                // The executor leaves Persist: nothing more is asked.
                b.uut.exec.run.next = false;
                b.tick();
                b.settle();
                assert!(!b.uut.persist_valid.val(), "#{i}: a request after the cut");
                cut += 1;
                break;
            }
            b.uut.writes_done.next = cycle >= drain;
            let answer = wait > 0 && r.below(3) == 0;
            let error = answer && r.below(5) == 0;
            b.uut.persist_done.next = answer;
            b.uut.persist_error.next = error;
            b.settle();
            let u = &b.uut;
            if u.persist_valid.val() {
                assert!(cycle > drain, "#{i}: asked before the writes were done");
                let &(addr, n) = want.front().expect("a request after the last");
                assert_eq!(
                    (u.persist_addr.val().to_u64(), u.persist_len.val().to_u64()),
                    (addr, n),
                    "#{i}: request {} of {:?}",
                    want.len(),
                    (pa1, n1, two, pa2, len, append)
                );
                wait += 1;
            } else {
                assert!(!answer || wait == 0, "#{i}: answered with nothing out");
            }
            let done = u.exec.done.val();
            let failed = u.exec.failed.val();
            b.tick();
            if answer && wait > 0 {
                errors |= error;
                want.pop_front();
                wait = 0;
            }
            if done {
                assert!(want.is_empty(), "#{i}: done with {want:?} to go");
                assert_eq!(failed, errors, "#{i}: failed");
                finished += 1;
                failures += errors as u32;
                b.uut.exec.run.next = false;
                b.uut.persist_done.next = false;
                b.tick();
                break;
            }
            assert!(!want.is_empty(), "#{i}: every answer in, but not done");
            cycle += 1;
        }
        b.uut.persist_done.next = false;
    }
    assert!(
        finished > 2500 && cut > 100 && failures > 300,
        "finished {finished}, cut {cut}, failed {failures}"
    );
}
