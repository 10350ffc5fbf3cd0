//! `clio bench isolation`: what one tenant's slow-path traffic costs another (issue 40,
//! docs/perf.md "Isolation"), measured in one run.
//!
//! 1. A victim's synchronous 16-byte reads on a quiet node, then while a neighbour floods
//!    Alloc/Free, taking turns in rounds, for each slow-path placement asked (`thread`,
//!    `clio board`'s default; `in-process`, the slow path on the serving thread, for
//!    comparison) and each flood: single 4 KiB pages on an empty node (cheap requests, many),
//!    and 64 MiB of 4 KiB pages on a node a third tenant filled to `--fill` percent (each
//!    placement long): median and p99 per state, and the flood's p99 over the quiet p99
//!    (goal: at most 2).
//! 2. The worst single allocation at 50, 90 and 99 % utilisation for 4 KiB, 64 KiB and 4 MiB
//!    pages, straight on the slow path with its default placement budget: how long the slow
//!    path can be held by one request, and what it answered.
//! 3. A victim's FetchAdds while a neighbour member holds idempotence-ring results it never
//!    acknowledges (`ring.rs`), with the default share per member and without one.

mod ring;

use super::harness::{hist, Hist};
use anyhow::{Context, Result};
use clap::Args;
use clio_clib::Client;
use clio_proto::layout::MemoryLayout;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_sim::server::spawn_udp;
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use clio_slowpath::{Limits, SlowPath, SlowPathConfig};
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `clio bench isolation`.
#[derive(Args, Debug)]
pub struct IsolationArgs {
    /// Victim reads per state and round.
    #[arg(long, default_value_t = 5_000)]
    reads: u64,
    /// Rounds the quiet and flooded states take turns in.
    #[arg(long, default_value_t = 3)]
    rounds: u64,
    /// Where the slow path runs, each measured: `thread` (clio board's default) and/or
    /// `in-process` (stepped by the serving thread).
    #[arg(long, value_delimiter = ',', default_value = "thread,in-process")]
    slowpath: Vec<Placement>,
    /// How full a third tenant makes the node before the flood of large allocations.
    #[arg(long, default_value_t = 85)]
    fill: u64,
    /// Utilisations (percent) at which the worst single allocation is measured.
    #[arg(long, value_delimiter = ',', default_value = "50,90,99")]
    utilisation: Vec<u64>,
    /// Page sizes (log2) for the worst single allocation.
    #[arg(long, value_delimiter = ',', default_value = "12,16,22")]
    page_shifts: Vec<u32>,
    /// Node memory for the worst-allocation run, MiB.
    #[arg(long, default_value_t = 1024)]
    memory_mib: u64,
    /// Which parts to run: `reads` (1: a victim's reads under an Alloc/Free flood), `worst`
    /// (2: the worst single allocation), `ring` (3: a victim's atomics beside a neighbour
    /// holding idempotence-ring results).
    #[arg(long, value_delimiter = ',', default_value = "reads,worst,ring")]
    parts: Vec<Part>,
    /// Victim FetchAdds per state in the idempotence-ring part.
    #[arg(long, default_value_t = 2_000)]
    ring_ops: u64,
    /// Directory for the CSV files.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
}

/// A part of the benchmark.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// A victim's reads under an Alloc/Free flood.
    Reads,
    /// The worst single allocation.
    Worst,
    /// A victim's atomics beside a neighbour holding idempotence-ring results.
    Ring,
}

/// Where the slow path runs in the victim/neighbour run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    /// Its own thread (`SlowPathMode::Thread`).
    Thread,
    /// The serving thread (`SlowPathMode::InProcess`).
    InProcess,
}

/// Run the parts asked for.
pub fn run(a: IsolationArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    if a.parts.contains(&Part::Reads) {
        reads_part(&a)?;
    }
    if a.parts.contains(&Part::Worst) {
        worst_part(&a)?;
    }
    if a.parts.contains(&Part::Ring) {
        ring_part(&a)?;
    }
    println!("CSV files in {}", a.out.display());
    Ok(())
}

/// Part 1: the victim's reads quiet and flooded, per slow-path placement and flood.
fn reads_part(a: &IsolationArgs) -> Result<()> {
    let mut csv = String::from(
        "slowpath,flood_bytes,fill_pct,state,reads,median_us,p99_us,max_us,neighbour_ops\n",
    );
    println!("victim 16 B reads, quiet vs a neighbour flooding Alloc/Free (4 KiB pages)");
    println!(
        "{:<10} {:<24} {:>10} {:>10} {:>10} {:>10} {:>9} {:>8}",
        "slow path",
        "flood",
        "quiet p50",
        "quiet p99",
        "flood p50",
        "flood p99",
        "p99 x",
        "nbr ops"
    );
    let floods = [
        (4096u64, 0u64, "4 KiB, empty node".to_string()),
        (64 << 20, a.fill, format!("64 MiB, node {}% full", a.fill)),
    ];
    for (bytes, fill, name) in &floods {
        for &p in &a.slowpath {
            let (quiet, flood, ops) = match victim_run(p, a.reads, a.rounds, *bytes, *fill) {
                Ok(r) => r,
                Err(e) => {
                    // The failure is the finding (the slow path on the serving thread can
                    // starve heartbeats until leases end): say it and go on.
                    println!("{:<10} {:<24} failed: {e:#}", format!("{p:?}"), name);
                    writeln!(csv, "{p:?},{bytes},{fill},failed,0,,,,")?;
                    continue;
                }
            };
            let q = |h: &Hist, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
            println!(
                "{:<10} {:<24} {:>8.1}us {:>8.1}us {:>8.1}us {:>8.1}us {:>8.2}x {:>8}",
                format!("{p:?}"),
                name,
                q(&quiet, 0.5),
                q(&quiet, 0.99),
                q(&flood, 0.5),
                q(&flood, 0.99),
                q(&flood, 0.99) / q(&quiet, 0.99),
                ops
            );
            for (state, h, n) in [("quiet", &quiet, 0), ("flood", &flood, ops)] {
                writeln!(
                    csv,
                    "{p:?},{bytes},{fill},{state},{},{:.1},{:.1},{:.1},{n}",
                    h.len(),
                    q(h, 0.5),
                    q(h, 0.99),
                    h.max() as f64 / 1000.0
                )?;
            }
        }
    }
    println!("(goal: with the slow path on its own thread, flood p99 <= 2x quiet p99)");
    let f = a.out.join("isolation-victim.csv");
    std::fs::write(&f, csv).with_context(|| format!("writing {}", f.display()))?;

    Ok(())
}

/// Part 2: the worst single allocation per page size and utilisation.
fn worst_part(a: &IsolationArgs) -> Result<()> {
    println!(
        "\nworst single allocation on the slow path ({} MiB node, default placement budget {})",
        a.memory_mib,
        clio_proto::quota::DEFAULT_PLACEMENT_BUDGET
    );
    println!(
        "{:>6} {:>6} {:>12} {:>10} {:>30}",
        "page", "util", "worst ms", "allocs", "answers (ok / quota / oom)"
    );
    let mut csv = String::from("page_bytes,utilisation_pct,worst_ms,allocs,ok,quota,oom\n");
    for &shift in &a.page_shifts {
        for &u in &a.utilisation {
            let w = worst_alloc(a.memory_mib << 20, shift, u)?;
            println!(
                "{:>6} {:>5}% {:>12.2} {:>10} {:>30}",
                crate::units::human(1 << shift),
                u,
                w.worst.as_secs_f64() * 1e3,
                w.tried,
                format!("{} / {} / {}", w.ok, w.quota, w.oom)
            );
            writeln!(
                csv,
                "{},{u},{:.3},{},{},{},{}",
                1u64 << shift,
                w.worst.as_secs_f64() * 1e3,
                w.tried,
                w.ok,
                w.quota,
                w.oom
            )?;
        }
    }
    let f = a.out.join("isolation-worst-alloc.csv");
    std::fs::write(&f, csv).with_context(|| format!("writing {}", f.display()))?;
    Ok(())
}

/// Part 3: the victim's FetchAdds quiet and with a neighbour holding ring results, per share.
fn ring_part(a: &IsolationArgs) -> Result<()> {
    println!(
        "\nvictim fetch-adds while {} members of a neighbour hold idempotence-table results \
         they never acknowledge (node lease {} s)",
        ring::HOG_MEMBERS,
        ring::LEASE.as_secs()
    );
    println!(
        "{:<22} {:>10} {:>10} {:>10} {:>10} {:>11} {:>16}",
        "share per member",
        "quiet p50",
        "quiet p99",
        "hog p50",
        "hog p99",
        "hog max",
        "neighbour ran"
    );
    let mut csv = String::from("share,state,ops,median_us,p99_us,max_us,hog_sent,hog_executed\n");
    let default = clio_proto::quota::DEFAULT_RING_SHARE;
    for (share, name) in [(default, format!("{default} (default)"))] {
        let (quiet, hogged) = ring::ring_run(share, a.ring_ops)?;
        let q = |h: &Hist, q: f64| h.value_at_quantile(q) as f64 / 1000.0;
        println!(
            "{:<22} {:>8.1}us {:>8.1}us {:>8.1}us {:>8.1}us {:>9.1}ms {:>16}",
            name,
            q(&quiet.victim, 0.5),
            q(&quiet.victim, 0.99),
            q(&hogged.victim, 0.5),
            q(&hogged.victim, 0.99),
            hogged.victim.max() as f64 / 1e6,
            format!("{} of {} sent", hogged.hog_executed, hogged.hog_sent)
        );
        for (state, r) in [("quiet", &quiet), ("hogged", &hogged)] {
            writeln!(
                csv,
                "{share},{state},{},{:.1},{:.1},{:.1},{},{}",
                r.victim.len(),
                q(&r.victim, 0.5),
                q(&r.victim, 0.99),
                r.victim.max() as f64 / 1000.0,
                r.hog_sent,
                r.hog_executed
            )?;
        }
    }
    println!(
        "(each member holds at most its own row: the victim's atomics go on at once; before \
         the rows, the 64-entry ring shared by all members was held by a neighbour member \
         until its lease ended, docs/perf.md)"
    );
    let f = a.out.join("isolation-ring.csv");
    std::fs::write(&f, csv).with_context(|| format!("writing {}", f.display()))?;
    Ok(())
}

/// The victim's read latencies quiet and flooded (nanoseconds), and the neighbour's
/// completed Alloc/Free pairs.
fn victim_run(
    p: Placement,
    reads: u64,
    rounds: u64,
    flood_bytes: u64,
    fill: u64,
) -> Result<(Hist, Hist, u64)> {
    let cfg = BoardConfig {
        dram_bytes: 1 << 30,
        page_shift: 12,
        slowpath: match p {
            Placement::Thread => SlowPathMode::Thread,
            Placement::InProcess => SlowPathMode::InProcess,
        },
        ..BoardConfig::default()
    };
    let node = spawn_udp(CBoard::new(&cfg)?, "127.0.0.1:0".parse()?)?;
    let addr = node.udp_addr.context("node has no UDP address")?;
    let victim = Client::connect_udp(addr)?;
    let va = victim.ralloc(4096)?;
    victim.rwrite(va, &[7u8; 16])?;
    // A third tenant (several RASes: one may hold half the memory) fills the node.
    let mut hogs = Vec::new();
    let target = (1u64 << 30) * fill / 100;
    let mut held = 0u64;
    while held + (1 << 20) <= target {
        let h = Client::connect_udp(addr)?;
        while held + (1 << 20) <= target && h.ralloc(1 << 20).is_ok() {
            held += 1 << 20;
        }
        hogs.push(h);
        anyhow::ensure!(hogs.len() < 64, "could not fill the node to {fill}%");
    }
    let (mut quiet, mut flood) = (hist()?, hist()?);
    let ops = Arc::new(AtomicU64::new(0));
    let bar = ProgressBar::new(2 * rounds * reads).with_style(
        ProgressStyle::with_template("{prefix} {bar:30} {pos}/{len} reads")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(format!("{p:?}"));
    for _ in 0..rounds {
        measure(&victim, va, reads, &mut quiet, &bar)?;
        let stop = Arc::new(AtomicBool::new(false));
        let (s, n) = (stop.clone(), ops.clone());
        let neighbour = std::thread::spawn(move || -> Result<()> {
            let c = Client::connect_udp(addr)?;
            while !s.load(Ordering::Relaxed) {
                // A refusal (quota, placement budget, memory) is part of the flood too.
                if let Ok(v) = c.ralloc(flood_bytes) {
                    c.rfree(v).context("the neighbour's free")?;
                }
                n.fetch_add(1, Ordering::Relaxed);
            }
            Ok(())
        });
        // Let the flood start before measuring.
        let t = Instant::now();
        while ops.load(Ordering::Relaxed) == 0 && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let r = measure(&victim, va, reads, &mut flood, &bar);
        stop.store(true, Ordering::Relaxed);
        let r = r.with_context(|| {
            let s = node.board().lock().ok().and_then(|b| b.slowpath_stats());
            format!("during the flood; the slow path: {s:?}")
        });
        neighbour
            .join()
            .map_err(|_| anyhow::anyhow!("the neighbour thread panicked"))??;
        r?;
    }
    bar.finish_and_clear();
    Ok((quiet, flood, ops.load(Ordering::Relaxed)))
}

fn measure(c: &Client, va: u64, n: u64, h: &mut Hist, bar: &ProgressBar) -> Result<()> {
    for i in 0..n {
        let t = Instant::now();
        let d = c.rread(va, 16).context("the victim's read")?;
        h.record(t.elapsed().as_nanos().max(1) as u64)?;
        anyhow::ensure!(d == [7u8; 16], "the victim read back wrong data");
        if i % 256 == 0 {
            bar.inc(256.min(n - i));
        }
    }
    Ok(())
}

struct Worst {
    worst: Duration,
    tried: u64,
    ok: u64,
    quota: u64,
    oom: u64,
}

/// Fill a node's slow path to `util` percent with 1 MiB allocations (or one page where pages
/// are larger) of many RASes, then time allocations of 1, 16 and 256 MiB: the slowest one.
fn worst_alloc(dram: u64, shift: u32, util: u64) -> Result<Worst> {
    let layout = MemoryLayout::new(dram, shift)?;
    let cfg = SlowPathConfig {
        limits: Limits {
            placement_budget: clio_proto::quota::DEFAULT_PLACEMENT_BUDGET,
            ..Limits::unlimited()
        },
        ..SlowPathConfig::default()
    };
    let mut sp = SlowPath::with_config(layout, cfg);
    let chunk = (1u64 << 20).max(layout.page_size());
    let target = layout.data_pages * util / 100;
    let mut pids = Vec::new();
    let mut n = 1u64;
    // Many tenants, as on a shared node (and a RAS's VA space never limits the fill).
    while sp.utilisation() * (layout.data_pages as f64) < target as f64 {
        let pid = sp
            .register(n)
            .map_err(|e| anyhow::anyhow!("register: {e}"))?;
        n += 1;
        pids.push(pid);
        for _ in 0..64 {
            if sp.utilisation() * (layout.data_pages as f64) >= target as f64 {
                break;
            }
            if sp.alloc(pid, chunk, PERM_READ | PERM_WRITE).is_err() {
                break;
            }
        }
    }
    let mut w = Worst {
        worst: Duration::ZERO,
        tried: 0,
        ok: 0,
        quota: 0,
        oom: 0,
    };
    let pid = sp
        .register(u64::MAX)
        .map_err(|e| anyhow::anyhow!("register: {e}"))?;
    for bytes in [1u64 << 20, 16 << 20, 256 << 20] {
        for _ in 0..4 {
            let t = Instant::now();
            let r = sp.alloc(pid, bytes.max(layout.page_size()), PERM_READ | PERM_WRITE);
            w.worst = w.worst.max(t.elapsed());
            w.tried += 1;
            match r {
                Ok(o) => {
                    w.ok += 1;
                    let _ = sp.free(pid, o.va);
                }
                Err(clio_slowpath::AllocError::Quota(_)) => w.quota += 1,
                Err(_) => w.oom += 1,
            }
        }
    }
    Ok(w)
}
