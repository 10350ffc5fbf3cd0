//! Figure 13 of the paper: placement retries of the overflow-free hash page table against
//! memory utilisation, for allocations of 1, 10 and 100 pages.
//!
//! `cargo bench -p clio-slowpath --bench fig13_alloc [-- --memory-mib N --page-kib K]`
//! (or `make bench-alloc`). Prints a table: utilisation band, allocations in the band,
//! mean and max retries per allocation.

use clio_proto::layout::MemoryLayout;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_slowpath::SlowPath;

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn main() {
    let memory = arg("--memory-mib", 1024) << 20;
    let page = arg("--page-kib", 4) << 10;
    let layout = MemoryLayout::new(memory, page.trailing_zeros()).expect("valid geometry");
    println!(
        "# Figure 13: {} data pages of {} KiB, {} buckets x {} slots ({}x over-provisioned)",
        layout.data_pages,
        page >> 10,
        layout.bucket_count(),
        clio_proto::consts::BUCKET_SLOTS,
        clio_proto::consts::PT_OVERPROVISION
    );
    println!(
        "{:>6} {:>10} {:>8} {:>12} {:>12}",
        "pages", "util", "allocs", "mean_retry", "max_retry"
    );
    for size in [1u64, 10, 100] {
        let mut sp = SlowPath::new(layout);
        let pid = sp.register(size).expect("fresh node registers");
        let mut bands = vec![(0u64, 0u64, 0u64); 20];
        loop {
            let u = sp.utilisation();
            let Ok(o) = sp.alloc(pid, size * page, PERM_READ | PERM_WRITE) else {
                break;
            };
            let b = ((u * 20.0) as usize).min(19);
            bands[b].0 += 1;
            bands[b].1 += o.retries;
            bands[b].2 = bands[b].2.max(o.retries);
        }
        for (i, (n, sum, max)) in bands.iter().enumerate().filter(|(_, b)| b.0 > 0) {
            println!(
                "{:>6} {:>9}% {:>8} {:>12.4} {:>12}",
                size,
                i * 5,
                n,
                *sum as f64 / *n as f64,
                max
            );
        }
        println!(
            "{:>6} final utilisation {:.1}%, total retries {}",
            size,
            sp.utilisation() * 100.0,
            sp.stats().alloc_retries
        );
    }
}
