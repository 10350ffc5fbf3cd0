//! The durability sections of `clio bench`: durable against plain writes, transactions
//! against the same writes issued together, and the time a node takes to recover from its
//! memory file as the file grows. Each compares against a baseline measured in the same run.

use super::{quantiles, BenchArgs, Hist};
use anyhow::{Context, Result};
use clio_clib::Client;
use clio_sim::server::{spawn_udp, ServerHandle};
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// A model node whose 256 MiB of DRAM (4 MiB pages) is the memory file `name` under `--out`
/// (its persistence domain), a client on it, and `pages` pages allocated and touched (so no
/// measurement pays first-touch faults).
fn file_node(
    a: &BenchArgs,
    name: &str,
    pages: u64,
) -> Result<(ServerHandle, Client, u64, PathBuf)> {
    let file = a.out.join(name);
    let cfg = BoardConfig {
        dram_bytes: 256 << 20,
        page_shift: 22,
        memory_file: Some(file.clone()),
        slowpath: SlowPathMode::InProcess,
        ..BoardConfig::default()
    };
    let s = spawn_udp(CBoard::new(&cfg)?, "127.0.0.1:0".parse()?)?;
    // Track dependencies per 4 KiB block, so that writes to different blocks of one 4 MiB page
    // may be in flight together (and durable ones share flushes at the node).
    let ccfg = clio_clib::Config {
        track_shift: 12,
        ..clio_clib::Config::default()
    };
    let udp = clio_clib::TransportKind::Udp(s.udp_addr.context("node has no UDP address")?);
    let c = Client::connect(udp.open()?, ccfg)?;
    let va = c.ralloc(pages << 22)?;
    for p in 0..pages {
        c.rwrite(va + (p << 22), b"touched")?;
    }
    Ok((s, c, va, file))
}

/// Stop a node from [`file_node`] and remove its file.
fn stop(s: ServerHandle, c: Client, file: &PathBuf) -> Result<()> {
    drop(c);
    s.stop()
        .map_err(|e| anyhow::anyhow!("stopping the node: {e}"))?;
    let _ = std::fs::remove_file(file);
    Ok(())
}

/// Durable against plain 1 KiB writes on one node, interleaved in the same run: latency one
/// at a time, and throughput with 64 in flight (where durable writes share flushes).
pub(crate) fn durability(a: &BenchArgs) -> Result<String> {
    let (s, c, va, file) = file_node(a, "durable-node.mem", 16)?;
    let data = [0x5Au8; 1024];
    let n = (a.iters / 4).max(200);
    let mut plain = Hist::new(3)?;
    let mut durable = Hist::new(3)?;
    for i in 0..2 * n {
        let at = va + (i % 4096) * 4096;
        let t = Instant::now();
        if i % 2 == 0 {
            c.rwrite(at, &data)?;
            plain.record(t.elapsed().as_nanos() as u64)?;
        } else {
            c.rwrite_durable(at, &data)?;
            durable.record(t.elapsed().as_nanos() as u64)?;
        }
    }
    let rate = |dur: bool| -> Result<f64> {
        let t = Instant::now();
        let mut done = 0u64;
        while t.elapsed().as_secs_f64() < a.seconds {
            let hs: Vec<_> = (0..64u64)
                .map(|k| {
                    let at = va + ((done + k) % 4096) * 4096;
                    if dur {
                        c.rwrite_durable_async(at, &data)
                    } else {
                        c.rwrite_async(at, &data)
                    }
                })
                .collect::<std::result::Result<_, _>>()?;
            c.rpoll(&hs)?;
            done += 64;
        }
        Ok(done as f64 / t.elapsed().as_secs_f64())
    };
    let (tp, td) = (rate(false)?, rate(true)?);
    let counters = s
        .board()
        .lock()
        .map(|b| b.counters())
        .map_err(|_| anyhow::anyhow!("node lock poisoned"))?;
    stop(s, c, &file)?;
    let (pm, pp99, _) = quantiles(&plain);
    let (dm, dp99, _) = quantiles(&durable);
    let mut csv = String::from("kind,median_us,p99_us,ops_per_s_64_in_flight\n");
    writeln!(csv, "plain,{pm:.2},{pp99:.2},{tp:.0}")?;
    writeln!(csv, "durable,{dm:.2},{dp99:.2},{td:.0}")?;
    std::fs::write(a.out.join("durability.csv"), &csv)?;
    let mut r = String::new();
    writeln!(
        r,
        "  plain   1 KiB: median {pm:6.1} us  p99 {pp99:6.1}  | 64 in flight: {tp:9.0} ops/s"
    )?;
    writeln!(r, "  durable 1 KiB: median {dm:6.1} us  p99 {dp99:6.1}  | 64 in flight: {td:9.0} ops/s ({} writes shared {} flushes)", counters.durable_writes, counters.durable_flushes)?;
    writeln!(
        r,
        "  durable / plain: median latency {:.2}x, throughput {:.2}x",
        dm / pm,
        td / tp
    )?;
    Ok(r)
}

/// A transaction of `k` 1 KiB writes (`rtx_commit`: one durable record write, then TxApply)
/// against the same `k` writes issued together as durable writes and as plain writes,
/// interleaved in one run on one node.
pub(crate) fn transactions(a: &BenchArgs) -> Result<String> {
    let (s, c, va, file) = file_node(a, "tx-node.mem", 4)?;
    let data = [0xA5u8; 1024];
    let mut log = c.rtx_log(64 << 10)?;
    let n = (a.iters / 16).max(100);
    let mut csv = String::from("writes,tx_median_us,tx_p99_us,durable_median_us,plain_median_us\n");
    let mut r = String::new();
    for k in [1u64, 4, 16] {
        let (mut tx, mut dur, mut plain) = (Hist::new(3)?, Hist::new(3)?, Hist::new(3)?);
        for i in 0..3 * n {
            let at = |j: u64| va + ((i * k + j) % 4096) * 4096;
            let t = Instant::now();
            match i % 3 {
                0 => {
                    let mut t = c.rtx_begin(&mut log);
                    for j in 0..k {
                        t.rtx_write(at(j), &data)?;
                    }
                    t.rtx_commit()?;
                }
                1 => {
                    let hs: Vec<_> = (0..k)
                        .map(|j| c.rwrite_durable_async(at(j), &data))
                        .collect::<std::result::Result<_, _>>()?;
                    c.rpoll(&hs)?;
                }
                _ => {
                    let hs: Vec<_> = (0..k)
                        .map(|j| c.rwrite_async(at(j), &data))
                        .collect::<std::result::Result<_, _>>()?;
                    c.rpoll(&hs)?;
                }
            }
            let ns = t.elapsed().as_nanos() as u64;
            [&mut tx, &mut dur, &mut plain][(i % 3) as usize].record(ns)?;
        }
        let (tm, tp99, _) = quantiles(&tx);
        let (dm, _, _) = quantiles(&dur);
        let (pm, _, _) = quantiles(&plain);
        writeln!(csv, "{k},{tm:.2},{tp99:.2},{dm:.2},{pm:.2}")?;
        writeln!(r, "  {k:2} x 1 KiB: transaction median {tm:7.1} us  p99 {tp99:7.1}  | same writes durable {dm:7.1} us ({:.2}x), plain {pm:6.1} us ({:.2}x)", tm / dm, tm / pm)?;
    }
    drop(log);
    stop(s, c, &file)?;
    std::fs::write(a.out.join("transactions.csv"), &csv)?;
    Ok(r)
}

/// Start a node on a memory file, give it a RAS with 64 regions and touched pages, stop it,
/// and time its restart (recovery: metadata log replay, page-table scan, compaction) for
/// each DRAM size: the median of three restarts, against the first start (format) of the
/// same file.
pub(crate) fn recovery(a: &BenchArgs) -> Result<String> {
    let mut csv = String::from("dram_mib,format_ms,recover_ms,mapped_pages\n");
    let mut r = String::new();
    for &mib in &a.recovery_mib {
        let file = a.out.join(format!("recovery-{mib}.mem"));
        let _ = std::fs::remove_file(&file);
        let cfg = BoardConfig {
            dram_bytes: mib << 20,
            page_shift: 12,
            memory_file: Some(file.clone()),
            slowpath: SlowPathMode::InProcess,
            ..BoardConfig::default()
        };
        let t = Instant::now();
        let node = CBoard::new(&cfg).with_context(|| format!("formatting {}", file.display()))?;
        let format_ms = t.elapsed().as_secs_f64() * 1e3;
        let s = spawn_udp(node, "127.0.0.1:0".parse()?)?;
        let c = Client::connect_udp(s.udp_addr.context("node has no UDP address")?)?;
        for _ in 0..64 {
            let va = c.ralloc(1 << 20)?;
            for p in 0..16u64 {
                c.rwrite(va + p * 65536, b"touched")?;
            }
        }
        // Stop the node while the client is still a member (a client that leaves last would
        // tear its RAS down, leaving nothing to recover); its goodbye then times out.
        s.stop()
            .map_err(|e| anyhow::anyhow!("stopping the node: {e}"))?;
        drop(c);
        let mut times = Vec::new();
        let mut mapped = 0;
        for _ in 0..3 {
            let t = Instant::now();
            let node =
                CBoard::new(&cfg).with_context(|| format!("recovering {}", file.display()))?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
            mapped = node.recovery().map_or(0, |rep| rep.mapped_pages);
        }
        times.sort_by(f64::total_cmp);
        let rec = times[1];
        let _ = std::fs::remove_file(&file);
        writeln!(csv, "{mib},{format_ms:.2},{rec:.2},{mapped}")?;
        writeln!(r, "  {mib:5} MiB DRAM ({mapped} mapped pages of 64 regions): recover {rec:7.1} ms (median of 3)  | format {format_ms:7.1} ms")?;
    }
    std::fs::write(a.out.join("recovery.csv"), &csv)?;
    Ok(r)
}
