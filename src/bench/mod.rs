//! `clio bench`: CLib over UDP on loopback against an in-process model node, measured
//! against a bare UDP ping-pong of the same packets over the same path (the transport's
//! floor), in the same run. Writes CSV files and an SVG latency CDF.

mod durability;
pub(crate) mod harness;
mod isolation;
mod multi;
mod scale;
mod transports;
mod wire;
mod ycsb;

pub(crate) use harness::{hist, quantiles, Hist};
use harness::{run_threads, throughput_outstanding, time_ops, us};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use clio_clib::Client;
use clio_proto::consts::MAX_PAYLOAD;
use clio_proto::header::{packet_count, segment, HEADER_LEN};
use clio_sim::server::{spawn_udp, ServerHandle};
use clio_sim::{BoardConfig, CBoard, Counters, SlowPathMode};
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::net::{SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Arguments of `clio bench`.
/// `clio bench` subcommands.
#[derive(Subcommand, Debug)]
pub enum BenchCmd {
    /// YCSB A/B/C against pDPM-Direct, pDPM-Central, Clover, memcached and Clio-KV on one node.
    Ycsb(ycsb::YcsbArgs),
    /// One client over several nodes: throughput vs nodes, cost of replication.
    Multi(multi::MultiArgs),
    /// Client threads (one shared Client, a Client each, outstanding reads) against node
    /// serving threads: throughput and CPU per read.
    Scale(scale::ScaleArgs),
    /// What one tenant's slow-path traffic costs another: a victim's reads quiet vs under a
    /// neighbour's Alloc/Free flood, and the worst single allocation per page size.
    Isolation(isolation::IsolationArgs),
    /// One compute node of `clio bench ycsb` (internal).
    #[command(hide = true)]
    YcsbWorker(ycsb::WorkerArgs),
    /// pDPM-Central's coordinator process (internal).
    #[command(hide = true)]
    KvCoordinator(clio_kvstores::pdpm_central::CoordinatorArgs),
    /// Clover's metadata server process (internal).
    #[command(hide = true)]
    KvMs(clio_kvstores::clover::MsArgs),
}

/// Dispatch `clio bench <subcommand>`.
pub fn run_cmd(cmd: BenchCmd) -> Result<()> {
    match cmd {
        BenchCmd::Ycsb(a) => ycsb::ycsb(a),
        BenchCmd::Multi(a) => multi::run(a),
        BenchCmd::Scale(a) => scale::run(a),
        BenchCmd::Isolation(a) => isolation::run(a),
        BenchCmd::YcsbWorker(w) => ycsb::worker(w),
        BenchCmd::KvCoordinator(a) => Ok(clio_kvstores::pdpm_central::run_coordinator(
            &a,
            clio_kvstores::until_stdin_closes(),
        )?),
        BenchCmd::KvMs(a) => Ok(clio_kvstores::clover::run_metadata_server(
            &a,
            clio_kvstores::until_stdin_closes(),
        )?),
    }
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Other benchmarks (`clio bench ycsb`); without one, the CLib benchmark below runs.
    #[command(subcommand)]
    pub(crate) cmd: Option<BenchCmd>,
    /// Directory for CSV files and the CDF plot.
    #[arg(long, default_value = "bench-out")]
    pub(crate) out: PathBuf,
    /// Measured operations per latency point.
    #[arg(long, default_value_t = 20_000)]
    pub(crate) iters: u64,
    /// Seconds per throughput point.
    #[arg(long, default_value_t = 1.0)]
    pub(crate) seconds: f64,
    /// Thread counts for the throughput sweep.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4")]
    pub(crate) threads: Vec<usize>,
    /// Outstanding asynchronous requests for the throughput sweep.
    #[arg(long, value_delimiter = ',', default_value = "1,4,16,64")]
    pub(crate) outstanding: Vec<usize>,
    /// Process counts (registered clients with their own PID and socket) for the
    /// many-processes run (paper Figure 4 shape).
    #[arg(long, value_delimiter = ',', default_value = "1,16,64,256,1024")]
    processes: Vec<usize>,
    /// Access sizes for the latency sweep.
    #[arg(long, value_delimiter = ',', default_value = "16,64,256,1024,4096")]
    pub(crate) sizes: Vec<usize>,
    /// Instead of the sections below: CLib and a node in its own process against this
    /// server on the same host, interleaved in one run (latency per size for UDP and TCP,
    /// throughput per thread count and outstanding depth, retransmissions per million).
    #[arg(long, value_enum)]
    pub(crate) vs: Option<Versus>,
    /// Instead of the sections below: the same synchronous read latencies (`--sizes`) over
    /// each of these transports across a veth pair between two network namespaces it
    /// creates, interleaved in one run (needs root): udp, raw (pnet, AF_PACKET), xdp (AF_XDP).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub(crate) transports: Vec<transports::Kind>,
    /// With `--transports`: rounds the transports take turns in (`--iters` split over them).
    #[arg(long, default_value_t = 5)]
    pub(crate) rounds: u64,
    /// With `--vs`: how long CLib's UDP receive spins before it blocks, microseconds.
    #[arg(long, default_value_t = clio_clib::transport::DEFAULT_SPIN.as_micros() as u64)]
    pub(crate) clio_spin_us: u64,
    /// With `--vs`: for each `--outstanding` depth, also a point where the reads are
    /// started this many at a time (`rread_many_async`: their requests leave together, one
    /// GSO message over UDP) instead of one per completed read.
    #[arg(long, value_delimiter = ',', default_value = "16")]
    pub(crate) refill: Vec<usize>,
    /// With `--vs`: the node process's `--threads` (default: its own default).
    #[arg(long)]
    pub(crate) node_threads: Option<u16>,
    /// With `--vs`: keep this many cores busy with other work (a shell loop each) during
    /// the run, to measure CLib on a busy host the same way as on an idle one.
    #[arg(long, default_value_t = 0)]
    pub(crate) busy: usize,
    /// With `--vs`: the node process's `--spin-us`.
    #[arg(long, default_value_t = clio_sim::server::UDP_SPIN.as_micros() as u64)]
    pub(crate) node_spin_us: u64,
    /// DRAM sizes (MiB) of the memory files the recovery-time run restarts a node on.
    #[arg(long, value_delimiter = ',', default_value = "256,1024,4096")]
    pub(crate) recovery_mib: Vec<u64>,
}

/// A server `clio bench --vs` compares with.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Versus {
    /// memcached (`make bench-deps`), get/set over UDP and TCP.
    Memcached,
}

fn node(page_shift: u32) -> Result<(ServerHandle, SocketAddr)> {
    let cfg = BoardConfig {
        dram_bytes: 1 << 30,
        page_shift,
        slowpath: SlowPathMode::InProcess,
        ..BoardConfig::default()
    };
    let s = spawn_udp(CBoard::new(&cfg)?, "127.0.0.1:0".parse()?)?;
    let a = s.udp_addr.context("node has no UDP address")?;
    Ok((s, a))
}

fn counters(s: &ServerHandle) -> Result<Counters> {
    s.board()
        .lock()
        .map(|b| b.counters())
        .map_err(|_| anyhow::anyhow!("node lock poisoned"))
}

/// The floor: an echo thread that answers exactly the datagrams a node would, with no node
/// logic behind them. Each request datagram carries (reply count, full length, last length).
struct PingPong {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl PingPong {
    fn start() -> Result<PingPong> {
        let s = UdpSocket::bind("127.0.0.1:0")?;
        s.set_read_timeout(Some(Duration::from_millis(5)))?;
        let addr = s.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let st = stop.clone();
        std::thread::spawn(move || {
            let mut buf = vec![0u8; 65536];
            let reply = vec![0u8; HEADER_LEN + MAX_PAYLOAD];
            while !st.load(Ordering::Relaxed) {
                let Ok((n, peer)) = s.recv_from(&mut buf) else {
                    continue;
                };
                if n < 6 {
                    continue;
                }
                let count = u16::from_be_bytes([buf[0], buf[1]]) as usize;
                let full = (u16::from_be_bytes([buf[2], buf[3]]) as usize).min(reply.len());
                let last = (u16::from_be_bytes([buf[4], buf[5]]) as usize).min(reply.len());
                for i in 0..count {
                    let _ = s.send_to(&reply[..if i + 1 == count { last } else { full }], peer);
                }
            }
        });
        Ok(PingPong { addr, stop })
    }

    /// One exchange mirroring a Clio read (`write == false`) or write of `size` bytes.
    fn client(&self) -> Result<UdpSocket> {
        let c = UdpSocket::bind("127.0.0.1:0")?;
        c.connect(self.addr)?;
        c.set_read_timeout(Some(Duration::from_secs(1)))?;
        Ok(c)
    }
}

impl Drop for PingPong {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

fn pp_exchange(
    c: &UdpSocket,
    size: usize,
    write: bool,
    buf: &mut [u8],
    out: &mut [u8],
) -> Result<()> {
    let n = packet_count(size as u32);
    let seg_last = segment(size as u32, n - 1).map_or(0, |(_, l)| l as usize);
    let spec = |count: u16, full: usize, last: usize, b: &mut [u8]| {
        b[0..2].copy_from_slice(&count.to_be_bytes());
        b[2..4].copy_from_slice(&(full as u16).to_be_bytes());
        b[4..6].copy_from_slice(&(last as u16).to_be_bytes());
    };
    if write {
        // N request packets of header + data, one header-sized ack each.
        for i in 0..n {
            let len = HEADER_LEN + if i + 1 == n { seg_last } else { MAX_PAYLOAD };
            spec(1, HEADER_LEN, HEADER_LEN, out);
            c.send(&out[..len])?;
        }
    } else {
        spec(n, HEADER_LEN + MAX_PAYLOAD, HEADER_LEN + seg_last, out);
        c.send(&out[..HEADER_LEN])?;
    }
    for _ in 0..n {
        c.recv(buf).context("ping-pong reply lost")?;
    }
    Ok(())
}

struct LatRow {
    op: &'static str,
    size: usize,
    clio: Hist,
    pp: Hist,
}

fn cdf_svg(path: &PathBuf, series: &[(String, &Hist)]) -> Result<()> {
    use plotters::prelude::*;
    let xmax = series
        .iter()
        .map(|(_, h)| us(h.value_at_quantile(0.999)))
        .fold(1.0, f64::max)
        * 1.1;
    let root = SVGBackend::new(path, (900, 560)).into_drawing_area();
    root.fill(&WHITE).map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "CLib latency CDF vs bare UDP ping-pong (loopback)",
            ("sans-serif", 22),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(50)
        .build_cartesian_2d(0.0..xmax, 0.0..1.0)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    chart
        .configure_mesh()
        .x_desc("latency (us)")
        .y_desc("fraction of operations")
        .draw()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    for (i, (name, h)) in series.iter().enumerate() {
        let color = Palette99::pick(i).to_rgba();
        let pts: Vec<(f64, f64)> = (0..=200)
            .map(|k| k as f64 / 200.0 * 0.999)
            .map(|q| (us(h.value_at_quantile(q)), q))
            .collect();
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))
            .map_err(|e| anyhow::anyhow!("{e}"))?
            .label(name.clone())
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 20, y)], color.stroke_width(2))
            });
    }
    harness::legend(&mut chart, SeriesLabelPosition::LowerRight)?;
    root.present().map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}

fn throughput_threads(c: &Client, va: u64, threads: usize, secs: f64) -> Result<f64> {
    run_threads(threads, secs, |t| {
        let c = c.clone();
        move || -> Result<()> {
            c.rread(va + (t as u64) * 4096, 64)?;
            Ok(())
        }
    })
}

/// Run the benchmarks.
pub fn run(a: BenchArgs) -> Result<()> {
    if a.vs == Some(Versus::Memcached) {
        return wire::run(&a);
    }
    if !a.transports.is_empty() {
        return transports::run(&a);
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    if a.sizes.iter().any(|&s| s == 0 || s > 1 << 20) {
        bail!("--sizes must be between 1 and 1 MiB");
    }
    let steps =
        (a.sizes.len() * 2 + a.threads.len() + a.outstanding.len() + 4 + a.processes.len()) as u64;
    let pb = ProgressBar::new(steps);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")?
            .progress_chars("=> "),
    );

    // ---- latency vs size, against the floor ----
    let (srv, addr) = node(22)?;
    let c = Client::connect_udp(addr)?;
    let va = c.ralloc(64 << 20)?;
    let maxsize = a.sizes.iter().copied().max().unwrap_or(16);
    let data = vec![0xA5u8; maxsize];
    for i in 0..16u64 {
        c.rwrite(va + i * (4 << 20), &data[..16])?; // first touch out of the way
    }
    let pp = PingPong::start()?;
    let ppc = pp.client()?;
    let (mut b1, mut b2) = (vec![0u8; 65536], vec![0u8; 65536]);
    let warm = (a.iters / 10).max(100);
    let mut rows = Vec::new();
    for &size in &a.sizes {
        for write in [false, true] {
            let op = if write { "write" } else { "read" };
            pb.set_message(format!("latency {op} {size} B"));
            time_ops(warm, |_| pp_exchange(&ppc, size, write, &mut b1, &mut b2))?;
            let pph = time_ops(a.iters, |_| {
                pp_exchange(&ppc, size, write, &mut b1, &mut b2)
            })?;
            let f = |_| -> Result<()> {
                if write {
                    c.rwrite(va, &data[..size])?;
                } else {
                    c.rread(va, size)?;
                }
                Ok(())
            };
            time_ops(warm, f)?;
            let ch = time_ops(a.iters, f)?;
            rows.push(LatRow {
                op,
                size,
                clio: ch,
                pp: pph,
            });
            pb.inc(1);
        }
    }
    let mut csv = String::from("op,size_bytes,clio_median_us,clio_p99_us,clio_p999_us,udp_pingpong_median_us,udp_pingpong_p99_us,median_ratio,p99_over_own_median\n");
    let mut report = String::new();
    for r in &rows {
        let (m, p99, p999) = quantiles(&r.clio);
        let (pm, pp99, _) = quantiles(&r.pp);
        writeln!(
            csv,
            "{},{},{m:.2},{p99:.2},{p999:.2},{pm:.2},{pp99:.2},{:.3},{:.3}",
            r.op,
            r.size,
            m / pm,
            p99 / m
        )?;
        writeln!(report, "  {:5} {:5} B: median {m:7.1} us  p99 {p99:7.1}  p99.9 {p999:7.1} | UDP ping-pong median {pm:6.1} us -> {:.2}x; p99/median {:.2}", r.op, r.size, m / pm, p99 / m)?;
    }
    std::fs::write(a.out.join("latency.csv"), &csv)?;
    let mut series: Vec<(String, &Hist)> = Vec::new();
    for r in rows
        .iter()
        .filter(|r| r.size == a.sizes[0] || r.size == maxsize)
    {
        series.push((format!("clio {} {} B", r.op, r.size), &r.clio));
        if !r.op.starts_with('w') {
            series.push((format!("udp ping-pong (read shape) {} B", r.size), &r.pp));
        }
    }
    cdf_svg(&a.out.join("latency_cdf.svg"), &series)?;

    // ---- throughput ----
    let mut tcsv = String::from("kind,parameter,ops_per_sec\n");
    let mut treport = String::new();
    for &t in &a.threads {
        pb.set_message(format!("throughput, {t} threads (sync 64 B reads)"));
        let r = throughput_threads(&c, va, t, a.seconds)?;
        writeln!(tcsv, "threads,{t},{r:.0}")?;
        writeln!(
            treport,
            "  {t:4} threads, synchronous 64 B reads: {r:9.0} ops/s"
        )?;
        pb.inc(1);
    }
    for &d in &a.outstanding {
        pb.set_message(format!("throughput, {d} outstanding (async 64 B reads)"));
        let r = throughput_outstanding(&c, va, d, a.seconds)?;
        writeln!(tcsv, "outstanding,{d},{r:.0}")?;
        writeln!(
            treport,
            "  {d:4} outstanding async 64 B reads, one thread: {r:9.0} ops/s"
        )?;
        pb.inc(1);
    }
    std::fs::write(a.out.join("throughput.csv"), &tcsv)?;
    let cs = c.stats();
    drop(c);
    drop(srv);

    // ---- TLB hit / miss / first-touch fault (4 KiB pages so that 512 pages exceed the 64-entry TLB) ----
    let (srv, addr) = node(12)?;
    let c = Client::connect_udp(addr)?;
    let pages = 512u64;
    let va = c.ralloc(pages * 4096)?;
    c.rread(va, 8)?;
    let n = a.iters.min(20_000);
    pb.set_message("first-touch faults");
    let c0 = counters(&srv)?;
    let fault = time_ops(pages - 1, |i| {
        c.rwrite(va + (i + 1) * 4096, &[1u8; 8]).map_err(Into::into)
    })?;
    let c1 = counters(&srv)?;
    pb.inc(1);
    pb.set_message("TLB hits");
    let hit = time_ops(n, |_| c.rread(va, 8).map(|_| ()).map_err(Into::into))?;
    let c2 = counters(&srv)?;
    pb.inc(1);
    pb.set_message("TLB misses");
    let miss = time_ops(n, |i| {
        c.rread(va + (i % pages) * 4096, 8)
            .map(|_| ())
            .map_err(Into::into)
    })?;
    let c3 = counters(&srv)?;
    pb.inc(1);
    let mut vcsv = String::from("case,node_events,median_us,p99_us,p999_us\n");
    let mut vreport = String::new();
    for (name, h, ev) in [
        (
            "first_touch_fault",
            &fault,
            format!("{} faults", c1.page_faults - c0.page_faults),
        ),
        (
            "tlb_hit",
            &hit,
            format!("{} hits", c2.tlb_hits - c1.tlb_hits),
        ),
        (
            "tlb_miss",
            &miss,
            format!("{} misses", c3.tlb_misses - c2.tlb_misses),
        ),
    ] {
        let (m, p99, p999) = quantiles(h);
        writeln!(vcsv, "{name},{ev},{m:.2},{p99:.2},{p999:.2}")?;
        writeln!(vreport, "  {name:18} median {m:6.1} us  p99 {p99:6.1}  p99.9 {p999:7.1}  ({ev} over {} ops; ratio to hit {:.2}x)", h.len(), m / us(hit.value_at_quantile(0.5)))?;
    }
    std::fs::write(a.out.join("tlb.csv"), &vcsv)?;
    drop(c);

    // ---- many processes on one node ----
    let mut clients: Vec<(Client, u64)> = Vec::new();
    let mut pcsv = String::from("processes,median_us,p99_us,p999_us\n");
    let mut preport = String::new();
    for &p in &a.processes {
        pb.set_message(format!("{p} processes"));
        while clients.len() < p {
            let c = Client::connect_udp(addr)?;
            let v = c.ralloc(4096)?;
            c.rwrite(v, &[7u8; 16])?;
            clients.push((c, v));
        }
        let ops = (a.iters / 2).max(2 * p as u64);
        let h = time_ops(ops, |i| {
            let (c, v) = &clients[(i as usize * 7919) % p];
            c.rread(*v, 16).map(|_| ()).map_err(Into::into)
        })?;
        let (m, p99, p999) = quantiles(&h);
        writeln!(pcsv, "{p},{m:.2},{p99:.2},{p999:.2}")?;
        writeln!(preport, "  {p:5} processes (own PID, socket, allocation), 16 B reads spread over all: median {m:6.1} us  p99 {p99:6.1}  p99.9 {p999:7.1}")?;
        pb.inc(1);
    }
    std::fs::write(a.out.join("processes.csv"), &pcsv)?;
    drop(clients);
    drop(srv);

    // ---- durable vs plain writes (a node whose DRAM is a memory file: its persistence domain) ----
    pb.set_message("durable writes");
    let dreport = durability::durability(&a)?;
    pb.set_message("transactions");
    let xreport = durability::transactions(&a)?;
    pb.set_message("recovery time");
    let rreport = durability::recovery(&a)?;
    pb.inc(1);
    pb.finish_and_clear();

    println!("clio bench: CLib over UDP on loopback, model node in this process; floor = bare UDP ping-pong of the same packets, same run");
    println!("latency ({} ops per point):", a.iters);
    print!("{report}");
    println!("throughput ({} s per point):", a.seconds);
    print!("{treport}");
    println!("translation (4 KiB pages, 64-entry TLB):");
    print!("{vreport}");
    println!("many processes on one node:");
    print!("{preport}");
    println!("durable writes (node DRAM in a memory file under --out; acknowledged after msync):");
    print!("{dreport}");
    println!("transactions (commit = durable record write + TxApply; against the same writes issued together):");
    print!("{xreport}");
    println!("recovery of a node from its memory file (CBoard::new on a used file; 4 KiB pages):");
    print!("{rreport}");
    println!(
        "client (first node): {} requests, {} retransmits, {} timeouts, cwnd {:.1}, srtt {:.1} us",
        cs.requests,
        cs.retransmits,
        cs.timeouts,
        cs.cwnd,
        cs.srtt.map_or(0.0, |d| d.as_secs_f64() * 1e6)
    );
    println!(
        "wrote {}/{{latency,throughput,tlb,processes,durability,transactions,recovery}}.csv and latency_cdf.svg",
        a.out.display()
    );
    Ok(())
}
