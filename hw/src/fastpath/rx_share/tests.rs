//! The share alone against the model (`clio_model::rx_share`): 4,000 steps of a ring of 64
//! entries whose consumer takes zero to three descriptors now and then (slower than the
//! requests come), one source (3) sending
//! most requests, notices now and then. Before each push decision the source is held for
//! three cycles plus one per descriptor just taken (the executor's timing: a push is in `ok`
//! three cycles later, and the RTL retires one taken descriptor a cycle), and `ok` must be
//! the model's verdict.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use clio_model::rx_share::RxShare as Model;

#[test]
fn each_source_is_admitted_exactly_as_the_model_says() {
    const ENTRIES: u32 = 64;
    let mut r = Rng(0x5EED_0DD5);
    let mut b = Bench::new(RxShare::default());
    let mut model = Model::default();
    b.uut.reset.next = true;
    b.uut.room.next = (ENTRIES as u64).to_bits();
    b.tick();
    b.uut.reset.next = false;
    let (mut used, mut taken) = (0u32, 0u64);
    let (mut admitted, mut refused, mut quiet_admitted_while_full) = ([0u32; 16], [0u32; 16], 0);
    for step in 0..4000 {
        // The consumer is slower than the requests: the ring fills and the share decides.
        let k = if r.below(3) == 0 { r.below(4) } else { 0 }.min(used as u64) as u32;
        used -= k;
        taken += k as u64;
        model.taken_up_to(used);
        b.uut.taken.next = (taken & 0xFFFF).to_bits();
        b.uut.room.next = ((ENTRIES - used) as u64).to_bits();
        let source = if r.below(10) < 8 {
            3
        } else {
            r.below(16) as usize
        };
        b.uut.source.next = (source as u64).to_bits();
        b.uut.push.next = false;
        for _ in 0..3 + k {
            b.tick();
        }
        b.settle();
        let want = model.admits(source, ENTRIES - used);
        assert_eq!(
            b.uut.ok.val(),
            want,
            "step {step}: source {source}, {used} used"
        );
        if want {
            admitted[source] += 1;
            if source != 3 && !model.admits(3, ENTRIES - used) {
                quiet_admitted_while_full += 1;
            }
            b.uut.push.next = true;
            b.uut.counted.next = true;
            b.tick();
            used += 1;
            model.pushed(Some(source));
        } else {
            refused[source] += 1;
        }
        if r.below(8) == 0 && used < ENTRIES {
            // A notice: nobody's.
            b.uut.push.next = true;
            b.uut.counted.next = false;
            b.tick();
            used += 1;
            model.pushed(None);
        }
        b.uut.push.next = false;
        b.uut.room.next = ((ENTRIES - used) as u64).to_bits();
    }
    assert!(
        admitted[3] > 100 && refused[3] > 100,
        "{admitted:?} {refused:?}"
    );
    assert!(
        quiet_admitted_while_full > 20,
        "{quiet_admitted_while_full}"
    );
    // The ring's counters wrap (16 bits) in a longer run; the RAM's index is their low byte.
    assert!(taken > 256, "{taken}");
}
