//! The conformance stream against two independent model instances: deterministic, and it
//! exercises every request class (this is the reference half of the model-vs-RTL check).

use clio_sim::conformance::{replay, Stream};
use clio_sim::{BoardConfig, CBoard};

fn node() -> CBoard {
    CBoard::new(&BoardConfig {
        dram_bytes: 64 << 20,
        page_shift: 16,
        // The stream carries the keys the first node handed out: both draw the same.
        key_seed: Some(7),
        lease: std::time::Duration::from_secs(24 * 3600),
        ..BoardConfig::default()
    })
    .unwrap()
}

#[test]
fn stream_is_deterministic_and_replays_identically() {
    let mut a = node();
    let mut s = Stream::new(7, 1 << 16);
    let mut out = Vec::new();
    s.setup(&mut a, 3, &mut out);
    for _ in 0..3000 {
        s.step(&mut a, &mut out);
    }
    let mut b = node();
    let replayed = replay(&mut b, &s.sent);
    assert_eq!(replayed.len(), out.len());
    assert!(replayed == out, "responses differ");
    assert!(
        a.peek(0, 64 << 20) == b.peek(0, 64 << 20),
        "memory images differ"
    );
    let c = a.counters();
    assert!(
        c.nacks > 10
            && c.page_faults > 5
            && c.idempotent_replays > 10
            && c.unmapped > 10
            && c.tlb_hits > 100
            && c.denied > 10,
        "{c:?}"
    );
}
