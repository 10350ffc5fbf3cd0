//! The paper's Figure 13 as a test: allocate regions of 1, 10 and 100 pages until physical
//! memory is nearly full and count placement retries against utilisation.
//! Expectation (overflow-free hash table, 16-slot buckets, 2x slots): no retry below half
//! utilisation, and a small bounded number per allocation near full.

use clio_proto::layout::MemoryLayout;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_slowpath::SlowPath;

/// (utilisation before the allocation, retries it took) for every allocation.
fn fill(pages_per_alloc: u64, nonce: u64) -> Vec<(f64, u64)> {
    // 64 MiB of 4 KiB pages: 16,384 frames, big enough for hashing to behave as at scale.
    let mut sp = SlowPath::new(MemoryLayout::new(64 << 20, 12).unwrap());
    let pid = sp.register(nonce).unwrap();
    let mut out = Vec::new();
    while sp.utilisation() < 0.95 {
        let u = sp.utilisation();
        let o = sp
            .alloc(pid, pages_per_alloc * 4096, PERM_READ | PERM_WRITE)
            .expect("allocation below 95% must succeed");
        out.push((u, o.retries));
    }
    out
}

#[test]
fn no_retries_below_half_and_bounded_near_full() {
    for (size, nonce) in [(1u64, 1u64), (10, 2), (100, 3)] {
        let runs = fill(size, nonce);
        let below_half: u64 = runs.iter().filter(|(u, _)| *u < 0.5).map(|(_, r)| r).sum();
        assert_eq!(
            below_half, 0,
            "{size}-page allocations retried below 50% utilisation"
        );
        let worst = runs.iter().map(|(_, r)| *r).max().unwrap();
        assert!(
            worst <= 64,
            "{size}-page allocations: worst case {worst} retries near full"
        );
    }
}
