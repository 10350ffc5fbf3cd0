//! `clio bench --vs memcached`: CLib plus the node model against memcached on the same host,
//! in one run, interleaved: latency of 16 B..4 KiB reads and writes (memcached get/set over
//! UDP and TCP), throughput with 1..N threads and with 1..64 outstanding asynchronous reads,
//! and the retransmissions CLib made (spurious ones counted apart) per million requests.
//!
//! The node runs in its own process (`clio board`, re-invoked from this binary), as memcached
//! does, so neither shares a process with the client. memcached runs with one worker thread,
//! like the node's one serving thread. Without memcached on PATH (`make bench-deps`), the
//! CLib part runs and the comparison says so in one line.

use super::harness::{
    hist, load_average, quantiles, run_threads, throughput_outstanding, throughput_refilled,
    time_ops, Busy, Hist, NodeProcess,
};
use super::BenchArgs;
use anyhow::{bail, Context, Result};
use clio_clib::transport::UdpTransport;
use clio_clib::{Client, Config};
use clio_kvstores::memcached::{spawn_server, MemcachedFactory, Proto, ServerGuard};
use clio_kvstores::{KvStore, StoreFactory};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::{BTreeMap, VecDeque};
use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

/// Rounds of the interleaved latency sweep (each system gets a turn per size per round).
const ROUNDS: usize = 3;

/// Unmeasured reads at the start of each system's turn.
const WARM_OPS: u64 = 50;

/// One system under test: a read and a write of `size` bytes at slot `i`.
trait Target {
    fn name(&self) -> &'static str;
    fn read(&mut self, size: usize, i: u64) -> Result<()>;
    fn write(&mut self, size: usize, i: u64, data: &[u8]) -> Result<()>;
}

struct ClioTarget {
    c: Client,
    va: u64,
}

impl Target for ClioTarget {
    fn name(&self) -> &'static str {
        "clio"
    }
    fn read(&mut self, size: usize, i: u64) -> Result<()> {
        self.c.rread(self.va + (i % 16) * 8192, size)?;
        Ok(())
    }
    fn write(&mut self, size: usize, i: u64, data: &[u8]) -> Result<()> {
        self.c.rwrite(self.va + (i % 16) * 8192, &data[..size])?;
        Ok(())
    }
}

struct McTarget {
    name: &'static str,
    kv: Box<dyn KvStore>,
}

fn mc_key(size: usize, i: u64) -> Vec<u8> {
    format!("k{size}-{}", i % 16).into_bytes()
}

impl Target for McTarget {
    fn name(&self) -> &'static str {
        self.name
    }
    fn read(&mut self, size: usize, i: u64) -> Result<()> {
        let v = self.kv.get(&mc_key(size, i))?;
        if v.as_ref().map(Vec::len) != Some(size) {
            bail!("{}: key of {size} B missing or wrong length", self.name);
        }
        Ok(())
    }
    fn write(&mut self, size: usize, i: u64, data: &[u8]) -> Result<()> {
        self.kv.put(&mc_key(size, i), &data[..size])?;
        Ok(())
    }
}

/// Requests, retransmissions and spurious ones of every CLib client of the run.
#[derive(Default)]
struct Retx {
    requests: u64,
    retransmits: u64,
    spurious: u64,
    timeouts: u64,
    window: String,
}

impl Retx {
    fn add(&mut self, c: &Client) {
        let s = c.stats();
        self.window = format!(
            "window {:.1} packets at the end ({:.2} at the smallest), srtt {:?}, rto {:?}",
            s.cwnd,
            s.cwnd_min,
            s.srtt.unwrap_or_default(),
            s.rto
        );
        self.requests += s.requests;
        self.retransmits += s.retransmits;
        self.spurious += s.spurious_retransmits;
        self.timeouts += s.timeouts;
    }
    fn per_million(&self, n: u64) -> f64 {
        n as f64 * 1e6 / self.requests.max(1) as f64
    }
}

fn mc_targets(mc: &Option<ServerGuard>, max_value: usize) -> Result<Vec<McTarget>> {
    let Some(g) = mc else {
        return Ok(Vec::new());
    };
    let mut v = Vec::new();
    for (name, proto) in [("memcached-udp", Proto::Udp), ("memcached-tcp", Proto::Tcp)] {
        v.push(McTarget {
            name,
            kv: MemcachedFactory::new(g.addr, proto, max_value).open()?,
        });
    }
    Ok(v)
}

fn clio_client(addr: SocketAddr, spin_us: u64) -> Result<Client> {
    let t = UdpTransport::connect(addr)?.with_spin(Duration::from_micros(spin_us));
    Ok(Client::connect(Box::new(t), Config::default())?)
}

fn threads_clio(c: &Client, va: u64, threads: usize, secs: f64) -> Result<f64> {
    run_threads(threads, secs, |t| {
        let c = c.clone();
        move || -> Result<()> {
            c.rread(va + t as u64 * 8192, 64)?;
            Ok(())
        }
    })
}

/// Synchronous 64 B reads from `threads` threads, each with a client of its own joined to
/// `owner`'s remote address space: memcached's thread model (a connection per thread), where
/// no thread ever hands a response to another.
fn threads_clio_joined(
    owner: &Client,
    addr: SocketAddr,
    spin_us: u64,
    va: u64,
    threads: usize,
    secs: f64,
) -> Result<f64> {
    let creds = owner.credentials();
    let mut members: VecDeque<Client> = (0..threads)
        .map(|_| -> Result<Client> {
            let t = UdpTransport::connect(addr)?.with_spin(Duration::from_micros(spin_us));
            Ok(Client::join(Box::new(t), Config::default(), creds)?)
        })
        .collect::<Result<_>>()?;
    run_threads(threads, secs, |t| {
        let c = members.pop_front();
        move || -> Result<()> {
            let c = c.as_ref().context("one member per thread")?;
            c.rread(va + t as u64 * 8192, 64)?;
            Ok(())
        }
    })
}

fn threads_mc(addr: SocketAddr, proto: Proto, threads: usize, secs: f64) -> Result<f64> {
    let f = MemcachedFactory::new(addr, proto, 64);
    let mut handles: Vec<Box<dyn KvStore>> = (0..threads)
        .map(|_| f.open())
        .collect::<std::result::Result<_, _>>()?;
    for (t, h) in handles.iter_mut().enumerate() {
        h.put(format!("t{t}").as_bytes(), &[7u8; 64])?;
    }
    let mut handles: VecDeque<_> = handles.into();
    run_threads(threads, secs, |t| {
        let mut h = handles.pop_front();
        let key = format!("t{t}").into_bytes();
        move || -> Result<()> {
            let h = h.as_mut().context("one handle per thread")?;
            h.get(&key)?.context("memcached lost a key")?;
            Ok(())
        }
    })
}

type Key = (&'static str, &'static str, usize);

/// Run the comparison.
pub fn run(a: &BenchArgs) -> Result<()> {
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let sizes: Vec<usize> = a.sizes.clone();
    if sizes.iter().any(|&s| s == 0 || s > 4096) {
        bail!("--sizes must be between 1 and 4096 for --vs memcached");
    }
    let load_before = load_average();
    let node = NodeProcess::start(a.node_spin_us, a.node_threads)?;
    let _busy = Busy::start(a.busy)?;
    let mc = spawn_server(1, 256)?;
    println!(
        "clio bench --vs memcached: CLib + node model (`clio board`, its own process) vs \
         memcached 1 worker thread (its own process), UDP and TCP, loopback; {} cores, load \
         average {load_before} at the start; {} core(s) kept busy by other work (--busy)",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        a.busy
    );
    if mc.is_none() {
        println!("memcached is not on PATH (make bench-deps installs it): CLib figures only");
    }
    let maxsize = sizes.iter().copied().max().unwrap_or(16);
    let data = vec![0x5Au8; maxsize];
    let mut retx = Retx::default();

    // ---- latency, interleaved per size and round ----
    let c = clio_client(node.addr, a.clio_spin_us)?;
    let va = c.ralloc(64 << 20)?;
    let mut targets: Vec<Box<dyn Target>> = vec![Box::new(ClioTarget { c: c.clone(), va })];
    for m in mc_targets(&mc, maxsize)? {
        targets.push(Box::new(m));
    }
    let per_round = (a.iters / ROUNDS as u64).max(100);
    let refills = |d: usize| a.refill.iter().filter(|&&k| k > 1 && k <= d).count();
    let thr_points = a.threads.len() * (2 + 2 * mc.is_some() as usize)
        + a.outstanding.iter().map(|&d| 2 + refills(d)).sum::<usize>();
    let pb = ProgressBar::new((ROUNDS * sizes.len() * targets.len() * 2 + thr_points) as u64);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")?
            .progress_chars("=> "),
    );
    let mut h: BTreeMap<Key, Hist> = BTreeMap::new();
    for size in &sizes {
        for t in targets.iter_mut() {
            // Fill the slots the reads read, and warm up.
            for i in 0..16 {
                t.write(*size, i, &data)?;
            }
            for i in 0..(per_round / 10).max(50) {
                t.read(*size, i)?;
            }
        }
    }
    for _round in 0..ROUNDS {
        for &size in &sizes {
            for t in targets.iter_mut() {
                // Each system's turn starts warm (its server process may have slept through
                // the others' turns): a few unmeasured reads first.
                for i in 0..WARM_OPS {
                    t.read(size, i)?;
                }
                for (op, write) in [("read", false), ("write", true)] {
                    pb.set_message(format!("latency {} {op} {size} B", t.name()));
                    let e = match h.entry((t.name(), op, size)) {
                        std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                        std::collections::btree_map::Entry::Vacant(v) => v.insert(hist()?),
                    };
                    e.add(time_ops(per_round, |i| {
                        if write {
                            t.write(size, i, &data)
                        } else {
                            t.read(size, i)
                        }
                    })?)?;
                    pb.inc(1);
                }
            }
        }
    }

    // ---- throughput ----
    let mut thr: Vec<(String, f64)> = Vec::new();
    for &n in &a.threads {
        pb.set_message(format!("throughput clio {n} threads"));
        thr.push((
            format!("clio, {n} threads, sync 64 B reads"),
            threads_clio(&c, va, n, a.seconds)?,
        ));
        pb.inc(1);
        pb.set_message(format!("throughput clio {n} threads, a client each"));
        thr.push((
            format!("clio, {n} threads, a joined client each, sync 64 B reads"),
            threads_clio_joined(&c, node.addr, a.clio_spin_us, va, n, a.seconds)?,
        ));
        pb.inc(1);
        if let Some(g) = &mc {
            for (name, proto) in [("memcached-udp", Proto::Udp), ("memcached-tcp", Proto::Tcp)] {
                pb.set_message(format!("throughput {name} {n} threads"));
                thr.push((
                    format!("{name}, {n} threads, sync 64 B gets"),
                    threads_mc(g.addr, proto, n, a.seconds)?,
                ));
                pb.inc(1);
            }
        }
    }
    for &d in &a.outstanding {
        pb.set_message(format!("throughput clio {d} outstanding"));
        thr.push((
            format!("clio, {d} outstanding async 64 B reads, one thread"),
            throughput_outstanding(&c, va, d, a.seconds)?,
        ));
        pb.inc(1);
        // The same loop (one rread_async per completed read) with deferred sends: the reads
        // started after one wake-up leave together at the next wait.
        pb.set_message(format!("throughput clio {d} outstanding, deferred sends"));
        c.set_deferred_sends(true);
        let r = throughput_outstanding(&c, va, d, a.seconds);
        c.set_deferred_sends(false);
        thr.push((
            format!("clio, {d} outstanding, deferred sends, one thread"),
            r?,
        ));
        pb.inc(1);
        for &k in a.refill.iter().filter(|&&k| k > 1 && k <= d) {
            pb.set_message(format!("throughput clio {d} outstanding, {k} at a time"));
            thr.push((
                format!("clio, {d} outstanding, started {k} at a time, one thread"),
                throughput_refilled(&c, va, d, k, a.seconds)?,
            ));
            pb.inc(1);
        }
    }
    pb.finish_and_clear();
    retx.add(&c);
    let load_after = load_average();

    // ---- report ----
    let mut csv = String::from("system,op,size,median_us,p99_us,p999_us\n");
    println!(
        "latency ({} ops per point in {ROUNDS} interleaved rounds):",
        per_round * ROUNDS as u64
    );
    for &size in &sizes {
        for op in ["read", "write"] {
            let mut line = format!("  {op:5} {size:5} B:");
            let clio = h.get(&("clio", op, size)).map(quantiles);
            for t in &targets {
                if let Some(x) = h.get(&(t.name(), op, size)) {
                    let (m, p99, p999) = quantiles(x);
                    csv.push_str(&format!(
                        "{},{op},{size},{m:.2},{p99:.2},{p999:.2}\n",
                        t.name()
                    ));
                    line.push_str(&format!(
                        " | {} median {m:7.1} us p99 {p99:7.1} p99.9 {p999:8.1}",
                        t.name()
                    ));
                }
            }
            if let (Some((cm, c99, c999)), true) = (clio, mc.is_some()) {
                let best = |f: fn((f64, f64, f64)) -> f64| {
                    ["memcached-udp", "memcached-tcp"]
                        .iter()
                        .filter_map(|n| h.get(&(*n, op, size)).map(|x| f(quantiles(x))))
                        .fold(f64::INFINITY, f64::min)
                };
                line.push_str(&format!(
                    " | clio/best memcached: median {:.2}x p99 {:.2}x",
                    cm / best(|q| q.0),
                    c99 / best(|q| q.1)
                ));
                let _ = c999;
            }
            println!("{line}");
        }
    }
    println!("throughput ({} s per point):", a.seconds);
    let mut tcsv = String::from("point,ops_per_s\n");
    for (name, v) in &thr {
        println!("  {name:55} {v:10.0} ops/s");
        tcsv.push_str(&format!("\"{name}\",{v:.0}\n"));
    }
    println!(
        "CLib: {} requests, {} retransmissions ({:.1} per million), of which {} spurious \
         ({:.1} per million), {} timeouts; {}; load average {load_after} at the end",
        retx.requests,
        retx.retransmits,
        retx.per_million(retx.retransmits),
        retx.spurious,
        retx.per_million(retx.spurious),
        retx.timeouts,
        retx.window
    );
    std::fs::write(a.out.join("vs_memcached_latency.csv"), csv)?;
    std::fs::write(a.out.join("vs_memcached_throughput.csv"), tcsv)?;
    let svg = a.out.join("vs_memcached.svg");
    plot(
        &svg,
        &sizes,
        &targets.iter().map(|t| t.name()).collect::<Vec<_>>(),
        &h,
    )?;
    println!(
        "wrote {}/vs_memcached_{{latency,throughput}}.csv and vs_memcached.svg",
        a.out.display()
    );
    std::io::stdout().flush()?;
    drop(c);
    drop(node);
    Ok(())
}

/// Median (bar) and p99 (whisker) of reads per size and system.
fn plot(
    path: &std::path::Path,
    sizes: &[usize],
    names: &[&'static str],
    h: &BTreeMap<Key, Hist>,
) -> Result<()> {
    use plotters::prelude::*;
    let e = |e: &dyn std::fmt::Display| anyhow::anyhow!("{e}");
    let ymax = h.values().map(|x| quantiles(x).1).fold(1.0, f64::max) * 1.15;
    let root = SVGBackend::new(path, (1000, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let areas = root.split_evenly((1, 2));
    for (area, op) in areas.iter().zip(["read", "write"]) {
        let groups = sizes.len() as f64;
        let mut chart = ChartBuilder::on(area)
            .caption(
                format!("{op}: median (bar) and p99 (line), loopback"),
                ("sans-serif", 18),
            )
            .margin(10)
            .x_label_area_size(35)
            .y_label_area_size(50)
            .build_cartesian_2d(0.0..groups, 0.0..ymax)
            .map_err(|x| e(&x))?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(sizes.len())
            .x_label_formatter(&|x| {
                sizes
                    .get(x.floor() as usize)
                    .map_or(String::new(), |s| format!("{s} B"))
            })
            .y_desc("latency (us)")
            .draw()
            .map_err(|x| e(&x))?;
        let w = 0.8 / names.len().max(1) as f64;
        for (k, name) in names.iter().enumerate() {
            let color = Palette99::pick(k).to_rgba();
            let bars: Vec<_> = sizes
                .iter()
                .enumerate()
                .filter_map(|(g, s)| {
                    let (m, p99, _) = quantiles(h.get(&(*name, op, *s))?);
                    let x0 = g as f64 + 0.1 + k as f64 * w;
                    Some((x0, m, p99))
                })
                .collect();
            chart
                .draw_series(bars.iter().map(|&(x0, m, _)| {
                    Rectangle::new([(x0, 0.0), (x0 + w * 0.9, m)], color.filled())
                }))
                .map_err(|x| e(&x))?
                .label(*name)
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled())
                });
            chart
                .draw_series(bars.iter().map(|&(x0, m, p99)| {
                    PathElement::new(
                        vec![(x0 + w * 0.45, m), (x0 + w * 0.45, p99)],
                        BLACK.stroke_width(1),
                    )
                }))
                .map_err(|x| e(&x))?;
        }
        super::harness::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    }
    root.present().map_err(|x| e(&x))?;
    Ok(())
}
