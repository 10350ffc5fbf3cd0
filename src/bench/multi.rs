//! `clio bench multi`: one client over several memory nodes (docs/replication.md), measured in
//! one run: throughput against the number of nodes (1, 2, 4 by default; regions placed by the
//! client, one per thread) and the cost of replication (the same writes and increments on a
//! region with 1, 2 and 3 replicas, as ratios to 1, and with 2 replicas in a shared space of a
//! pool, whose writers take the region's lock at its primary for every operation), and healing (a region that lost its
//! primary re-replicated onto a third node while a thread keeps writing it: time per GiB, and
//! the writer's rate during the copy against its rate before). Every node is a model node
//! serving UDP on loopback in this process; the points take turns in rounds so drift hits
//! them alike.

use super::harness::run_threads;
use anyhow::{Context, Result};
use clap::Args;
use clio_clib::{MultiClient, MultiConfig, NodeSpec};
use clio_sim::server::{spawn_udp_spinning, ServerHandle};
use clio_sim::{BoardConfig, CBoard};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `clio bench multi`.
#[derive(Args, Debug)]
pub struct MultiArgs {
    /// Node counts for the scaling run.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    nodes: Vec<usize>,
    /// Client threads (each with its own region) in the scaling run.
    #[arg(long, default_value_t = 4)]
    threads: usize,
    /// Seconds per point and round.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Rounds the points take turns in (the median is reported).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Bytes per read and write.
    #[arg(long, default_value_t = 1024)]
    size: usize,
    /// Client threads of the replication run (each with its own region): the cost of
    /// replication is measured at each.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    repl_threads: Vec<usize>,
    /// Size of the region the healing run re-replicates, in MiB.
    #[arg(long, default_value_t = 64)]
    heal_mib: u64,
    /// Directory for the CSV files.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
}

/// The replication run's points: replicas, and whether the client writes a shared space.
const REPL_POINTS: [(usize, bool); 4] = [(1, false), (2, false), (3, false), (2, true)];

const PAGE_SHIFT: u32 = 16;
const NODE_BYTES: u64 = 256 << 20;

fn start_nodes(n: usize) -> Result<(Vec<ServerHandle>, Vec<NodeSpec>)> {
    let mut hs = Vec::new();
    for _ in 0..n {
        let b = CBoard::new(&BoardConfig {
            dram_bytes: NODE_BYTES,
            page_shift: PAGE_SHIFT,
            ..BoardConfig::default()
        })?;
        hs.push(spawn_udp_spinning(
            b,
            "127.0.0.1:0".parse()?,
            Duration::ZERO,
        )?);
    }
    let specs = hs
        .iter()
        .map(|h| {
            Ok(NodeSpec {
                addr: h.udp_addr.context("node without a UDP address")?,
                capacity: NODE_BYTES / 2,
            })
        })
        .collect::<Result<_>>()?;
    Ok((hs, specs))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// Half reads, half writes of `size` bytes, each thread in its own region.
fn scaling_point(n: usize, a: &MultiArgs) -> Result<f64> {
    let (_nodes, specs) = start_nodes(n)?;
    let m = MultiClient::connect_udp(&specs, MultiConfig::default())?;
    let regions: Vec<u64> = (0..a.threads)
        .map(|_| m.ralloc(1 << 20, 1))
        .collect::<Result<_, _>>()?;
    let size = a.size;
    run_threads(a.threads, a.seconds, |t| {
        let (m, base) = (m.clone(), regions[t]);
        let data = vec![t as u8; size];
        let mut i = 0u64;
        move || {
            let va = base + (i % 256) * 4096;
            if i % 2 == 0 {
                m.rwrite(va, &data)?;
            } else {
                m.rread(va, size)?;
            }
            i += 1;
            Ok(())
        }
    })
}

/// Writes and increments with `replicas` copies among 3 nodes, from `threads` threads of one
/// client, each on a region of its own; `shared`: the client is a writer of a shared space
/// (an in-process pool store), so every operation also takes and releases the region's lock.
fn replication_point(
    replicas: usize,
    threads: usize,
    shared: bool,
    a: &MultiArgs,
) -> Result<(f64, f64)> {
    let (_nodes, specs) = start_nodes(3)?;
    let m = if shared {
        let pool = clio_clib::Pool {
            store: clio_clib::LocalStore::new(),
            name: "bench".into(),
        };
        let cfg = MultiConfig {
            space: Some("bench".into()),
            ..MultiConfig::default()
        };
        MultiClient::connect_udp_pool(&specs, cfg, pool)?
    } else {
        MultiClient::connect_udp(&specs, MultiConfig::default())?
    };
    let regions = (0..threads)
        .map(|_| m.ralloc(1 << 20, replicas))
        .collect::<Result<Vec<u64>, _>>()?;
    let data = vec![7u8; a.size];
    let writes = run_threads(threads, a.seconds, |t| {
        let (m, data, r) = (m.clone(), data.clone(), regions[t]);
        let mut i = 0u64;
        move || {
            m.rwrite(r + 4096 + (i % 200) * 4096, &data)?;
            i += 1;
            Ok(())
        }
    })?;
    let incs = run_threads(threads, a.seconds, |t| {
        let (m, r) = (m.clone(), regions[t]);
        move || {
            m.fetch_add(r, 1)?;
            Ok(())
        }
    })?;
    // Log applies and their time.
    eprintln!("{replicas} replicas (shared {shared}): {:?}", m.stats());
    Ok((writes, incs))
}

/// What one healing run measured.
struct HealPoint {
    seconds: f64,
    writes_before: f64,
    writes_during: f64,
}

/// A region of `heal_mib` MiB with 2 replicas on 3 nodes loses its primary; the time to give
/// it a replica on the third node, with the region idle or while one thread keeps writing
/// 1 KiB pieces of it (`writing`).
fn heal_point(a: &MultiArgs, writing: bool) -> Result<HealPoint> {
    let (mut nodes, specs) = start_nodes(3)?;
    let cfg = MultiConfig {
        auto_heal: false,
        ..MultiConfig::default()
    };
    let m = MultiClient::connect_udp(&specs, cfg)?;
    let len = a.heal_mib << 20;
    let r = m.ralloc(len, 2)?;
    let chunk = vec![0x5Au8; 1 << 20];
    for off in (0..len).step_by(chunk.len()) {
        m.rwrite(r + off, &chunk[..chunk.len().min((len - off) as usize)])?;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let done = Arc::new(AtomicU64::new(0));
    let w = {
        let (m, stop, done) = (m.clone(), stop.clone(), done.clone());
        std::thread::spawn(move || -> Result<()> {
            let data = [7u8; 1024];
            let mut i = 0u64;
            // Idle: one write, to find the stopped primary.
            while !stop.load(Ordering::Relaxed) && (writing || i == 0) {
                m.rwrite(r + (i * 7919 % (len / 1024)) * 1024, &data)?;
                i += 1;
                done.store(i, Ordering::Relaxed);
            }
            Ok(())
        })
    };
    let rate = |secs: f64| {
        let n0 = done.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_secs_f64(secs));
        (done.load(Ordering::Relaxed) - n0) as f64 / secs
    };
    let writes_before = if writing { rate(a.seconds) } else { 0.0 };
    drop(nodes.remove(0)); // the primary stops; the writer's next write fails over
    let t = Instant::now();
    while !m.node_dead(0) {
        if (writing && w.is_finished()) || t.elapsed() > Duration::from_secs(30) {
            stop.store(true, Ordering::Relaxed);
            w.join()
                .map_err(|_| anyhow::anyhow!("the writer panicked"))??;
            anyhow::bail!("the writer never met the stopped primary");
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    let n0 = done.load(Ordering::Relaxed);
    let t = Instant::now();
    let rep = m.heal()?;
    let seconds = t.elapsed().as_secs_f64();
    let writes_during = (done.load(Ordering::Relaxed) - n0) as f64 / seconds;
    stop.store(true, Ordering::Relaxed);
    w.join()
        .map_err(|_| anyhow::anyhow!("the writer panicked"))??;
    anyhow::ensure!(
        rep.replicas_added == 1 && rep.bytes_copied == len,
        "the heal did not copy the region: {rep:?}"
    );
    Ok(HealPoint {
        seconds,
        writes_before,
        writes_during,
    })
}

/// Run the benchmark and print the tables.
pub fn run(a: MultiArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out)?;
    let mut scaling: Vec<Vec<f64>> = vec![Vec::new(); a.nodes.len()];
    // Per thread count, per point of REPL_POINTS: writes/s and fetch-adds/s of each round.
    let mut repl: Vec<Vec<(Vec<f64>, Vec<f64>)>> =
        vec![vec![(Vec::new(), Vec::new()); REPL_POINTS.len()]; a.repl_threads.len()];
    let mut heals: Vec<(HealPoint, HealPoint)> = Vec::new();
    for round in 0..a.rounds {
        eprintln!("round {}/{}", round + 1, a.rounds);
        for (k, &n) in a.nodes.iter().enumerate() {
            scaling[k].push(scaling_point(n, &a)?);
        }
        for (t, per) in repl.iter_mut().enumerate() {
            for (k, r) in per.iter_mut().enumerate() {
                let (replicas, shared) = REPL_POINTS[k];
                let (w, i) = replication_point(replicas, a.repl_threads[t], shared, &a)?;
                r.0.push(w);
                r.1.push(i);
            }
        }
        heals.push((heal_point(&a, false)?, heal_point(&a, true)?));
    }
    let mut csv = String::from("nodes,threads,size,ops_per_s,vs_1\n");
    println!(
        "throughput vs nodes ({} threads, {} B, half reads half writes, median of {} rounds of {} s)",
        a.threads, a.size, a.rounds, a.seconds
    );
    println!("| nodes | ops/s | vs 1 node |\n|---|---|---|");
    let base = median(scaling[0].clone());
    for (k, &n) in a.nodes.iter().enumerate() {
        let v = median(scaling[k].clone());
        println!("| {n} | {v:.0} | {:.2}x |", v / base);
        writeln!(csv, "{n},{},{},{v:.0},{:.3}", a.threads, a.size, v / base)?;
    }
    std::fs::write(a.out.join("multi_nodes.csv"), csv)?;
    let mut csv =
        String::from("threads,replicas,write_ops_per_s,write_vs_1,faa_ops_per_s,faa_vs_1\n");
    println!(
        "\ncost of replication (3 nodes, {} B writes and fetch-adds, each thread on a region of its own)",
        a.size
    );
    println!(
        "| threads | replicas | writes/s | vs 1 | fetch-adds/s | vs 1 |\n|---|---|---|---|---|---|"
    );
    for (t, per) in repl.iter().enumerate() {
        let threads = a.repl_threads[t];
        let (w1, i1) = (median(per[0].0.clone()), median(per[0].1.clone()));
        for (k, (w, i)) in per.iter().enumerate() {
            let (w, i) = (median(w.clone()), median(i.clone()));
            let (replicas, shared) = REPL_POINTS[k];
            let name = if shared {
                format!("{replicas} shared")
            } else {
                replicas.to_string()
            };
            println!(
                "| {threads} | {name} | {w:.0} | {:.2} | {i:.0} | {:.2} |",
                w / w1,
                i / i1
            );
            writeln!(
                csv,
                "{threads},{name},{w:.0},{:.3},{i:.0},{:.3}",
                w / w1,
                i / i1
            )?;
        }
    }
    std::fs::write(a.out.join("multi_replication.csv"), csv)?;
    let mib = a.heal_mib as f64;
    println!(
        "\nhealing: a {} MiB region with 2 replicas on 3 nodes loses its primary and is \
         re-replicated onto the third node, idle or while one thread writes 1 KiB pieces of it",
        a.heal_mib
    );
    println!(
        "| region | heal s | MiB/s | s per GiB | writes/s before | during | during vs before |"
    );
    println!("|---|---|---|---|---|---|---|");
    let mut csv =
        String::from("region,mib,heal_s,mib_per_s,s_per_gib,writes_before,writes_during\n");
    for (name, pick) in [
        (
            "idle",
            (|h| &h.0) as fn(&(HealPoint, HealPoint)) -> &HealPoint,
        ),
        ("one writer", |h| &h.1),
    ] {
        let secs = median(heals.iter().map(|h| pick(h).seconds).collect());
        let before = median(heals.iter().map(|h| pick(h).writes_before).collect());
        let during = median(heals.iter().map(|h| pick(h).writes_during).collect());
        // The idle run's writer only finds the stopped primary: no rates to show.
        let rates = if before > 0.0 {
            format!("{before:.0} | {during:.0} | {:.2}", during / before)
        } else {
            "- | - | -".into()
        };
        println!(
            "| {name} | {secs:.2} | {:.0} | {:.1} | {rates} |",
            mib / secs,
            secs * 1024.0 / mib
        );
        writeln!(
            csv,
            "{name},{},{secs:.3},{:.1},{:.2},{before:.0},{during:.0}",
            a.heal_mib,
            mib / secs,
            secs * 1024.0 / mib
        )?;
    }
    std::fs::write(a.out.join("multi_heal.csv"), csv)?;
    Ok(())
}
