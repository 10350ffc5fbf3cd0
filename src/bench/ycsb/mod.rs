//! `clio bench ycsb`: key-value stores on the same memory node under YCSB workloads (the
//! shape of the paper's Figure 17): pDPM-Direct, pDPM-Central, Clover (crate
//! `clio-kvstores`), memcached as the CPU key-value server, and Clio-KV (the node's own KV
//! offload; its node model is started with offloads on).
//!
//! For each system: set the store up (its coordinator / metadata server / memcached as child
//! processes), load every key, measure the per-operation breakdown (node requests, server
//! requests and round trips per get and per put, counted from CLib's statistics and the
//! stores' own counters, one thread alone), then for each workload start `--cns` worker
//! processes (this binary again, `clio bench ycsb-worker`: each its own CLib client, socket
//! and member of the RAS, i.e. one compute node) with `--threads` threads each; they warm up,
//! then measure. Output: a table, `ycsb.csv`, `ycsb_breakdown.csv`, `ycsb_throughput.svg`.

use super::harness::{hist, quantiles, Hist};
use anyhow::{bail, Context, Result};
use clap::Args;
use clio_clib::Client;
use clio_kvstores::deploy::{deploy, Role, Setup, System};
use clio_kvstores::history::{make_value, parse_value, ValueId};
use clio_kvstores::store::loopback_config;
use clio_kvstores::ycsb::{key_name, Generator, Workload, YcsbOp};
use clio_kvstores::{open_factory, Cost, KvStore, NodeLink, StoreFactory, StoreSpec};
use clio_sim::server::{spawn_udp_threads, ServerHandle};
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod worker;
use worker::parse_worker;
pub(super) use worker::{worker, WorkerArgs};

/// Arguments of `clio bench ycsb`.
#[derive(Args, Debug)]
pub struct YcsbArgs {
    /// Systems: a comma list of pdpm-direct, pdpm-central, clover, memcached, clio-kv, or
    /// `all` (clio-kv is skipped when `--value-size` exceeds its value bound, 1024).
    #[arg(long, default_value = "all")]
    systems: String,
    /// Workloads: A (50% update), B (5%), C (read only), custom:READ:UPDATE:DELETE (percent).
    #[arg(long, value_delimiter = ',', default_value = "A,B,C")]
    workloads: Vec<Workload>,
    /// Zipf skew of the key popularity (0 = uniform).
    #[arg(long, default_value_t = 0.99)]
    theta: f64,
    /// Number of keys.
    #[arg(long, default_value_t = 100_000)]
    keys: u64,
    /// Value size in bytes.
    #[arg(long, default_value_t = 1024)]
    value_size: usize,
    /// Client processes (compute nodes), each with its own socket.
    #[arg(long, default_value_t = 2)]
    cns: usize,
    /// Threads per compute node.
    #[arg(long, default_value_t = 8)]
    threads: usize,
    /// Warm-up seconds per run (not measured).
    #[arg(long, default_value_t = 2.0)]
    warmup: f64,
    /// Measured seconds per run.
    #[arg(long, default_value_t = 5.0)]
    duration: f64,
    /// Use this memory node instead of starting a model node in this process.
    #[arg(long)]
    node: Option<SocketAddr>,
    /// Serving threads of the model node this starts (`clio board --threads`; default: half
    /// of this host's cores, at least 1, at most 8).
    #[arg(long, default_value_t = crate::board::default_threads())]
    node_threads: u16,
    /// Seed of the workload generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Operations per kind in the per-operation breakdown.
    #[arg(long, default_value_t = 500)]
    breakdown_ops: u64,
    /// Clover's GC epoch `Te` (ms): CNs drop cursors unused for `Te/2`.
    #[arg(long, default_value_t = 2000)]
    clover_epoch_ms: u64,
    /// Directory for the CSV files and the plot.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
}

fn op_index(op: &YcsbOp) -> usize {
    match op {
        YcsbOp::Read(_) => 0,
        YcsbOp::Update(_) => 1,
        YcsbOp::Delete(_) => 2,
    }
}

/// What one thread (or one worker) measured.
struct Measured {
    hists: Vec<Hist>,
    ops: u64,
    errors: u64,
    torn: u64,
    /// Round trips and server requests the stores counted during the measured window.
    round_trips: u64,
    server_requests: u64,
    first_error: Option<String>,
}

impl Measured {
    fn new() -> Result<Measured> {
        Ok(Measured {
            hists: vec![hist()?, hist()?, hist()?],
            ops: 0,
            errors: 0,
            torn: 0,
            round_trips: 0,
            server_requests: 0,
            first_error: None,
        })
    }
    fn merge(&mut self, o: &Measured) -> Result<()> {
        for (a, b) in self.hists.iter_mut().zip(&o.hists) {
            a.add(b)?;
        }
        self.ops += o.ops;
        self.errors += o.errors;
        self.torn += o.torn;
        self.round_trips += o.round_trips;
        self.server_requests += o.server_requests;
        if self.first_error.is_none() {
            self.first_error.clone_from(&o.first_error);
        }
        Ok(())
    }
}

/// Run one operation; `Ok(true)` if it succeeded.
fn do_op(
    s: &mut dyn KvStore,
    op: &YcsbOp,
    writer: u32,
    seq: u64,
    value_size: usize,
    m: &mut Measured,
) -> bool {
    let r = match *op {
        YcsbOp::Read(k) => s.get(&key_name(k)).map(|v| {
            if let Some(v) = v {
                if parse_value(&v).is_err() {
                    m.torn += 1;
                }
            }
        }),
        YcsbOp::Update(k) => s.put(
            &key_name(k),
            &make_value(ValueId { writer, seq }, value_size),
        ),
        YcsbOp::Delete(k) => s.delete(&key_name(k)),
    };
    match r {
        Ok(()) => true,
        Err(e) => {
            m.errors += 1;
            m.first_error.get_or_insert_with(|| e.to_string());
            false
        }
    }
}

fn server_cmd(role: Role, args: Vec<String>) -> Command {
    let exe = std::env::current_exe().unwrap_or_else(|_| PathBuf::from("clio"));
    let mut c = Command::new(exe);
    c.arg("bench").arg(match role {
        Role::Coordinator => "kv-coordinator",
        Role::MetadataServer => "kv-ms",
    });
    c.args(args);
    c
}

fn parse_systems(s: &str) -> Result<Vec<System>> {
    if s.trim() == "all" {
        return Ok(System::ALL.to_vec());
    }
    s.split(',')
        .map(|x| x.parse::<System>().map_err(anyhow::Error::msg))
        .collect()
}

/// Per-operation network cost of one system.
struct Breakdown {
    system: System,
    get: [f64; 3],
    put: [f64; 3],
}

fn per_op(a: Cost, b: Cost, n: u64) -> [f64; 3] {
    let d = |x: u64, y: u64| (y.saturating_sub(x)) as f64 / n.max(1) as f64;
    [
        d(a.node_requests, b.node_requests),
        d(a.rpc_requests, b.rpc_requests),
        d(a.round_trips, b.round_trips),
    ]
}

/// Load every key with `threads` threads of one factory.
fn load(
    f: &dyn StoreFactory,
    keys: u64,
    value_size: usize,
    threads: u64,
    pb: &ProgressBar,
) -> Result<()> {
    let next = AtomicU64::new(0);
    let done = AtomicU64::new(0);
    std::thread::scope(|s| -> Result<()> {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let (next, done) = (&next, &done);
                s.spawn(move || -> Result<()> {
                    let mut st = f.open()?;
                    loop {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        if k >= keys {
                            return Ok(());
                        }
                        let v = make_value(
                            ValueId {
                                writer: u32::MAX,
                                seq: k,
                            },
                            value_size,
                        );
                        st.put(&key_name(k), &v)?;
                        done.fetch_add(1, Ordering::Relaxed);
                    }
                })
            })
            .collect();
        while hs.iter().any(|h| !h.is_finished()) {
            pb.set_message(format!(
                "{}: loading {}/{keys}",
                f.name(),
                done.load(Ordering::Relaxed)
            ));
            pb.tick();
            std::thread::sleep(Duration::from_millis(100));
        }
        for h in hs {
            h.join()
                .map_err(|_| anyhow::anyhow!("a loader panicked"))??;
        }
        Ok(())
    })
}

/// One thread alone: `n` gets then `n` puts on Zipfian keys; network cost per operation.
fn breakdown(f: &dyn StoreFactory, system: System, a: &YcsbArgs) -> Result<Breakdown> {
    let mut s = f.open()?;
    let mut g =
        Generator::new(Workload::C, a.keys, a.theta, a.seed ^ 0xB7).map_err(anyhow::Error::msg)?;
    let mut m = Measured::new()?;
    // Warm the CN's metadata for the keys touched, as a running system would have.
    let keys: Vec<u64> = (0..a.breakdown_ops).map(|_| g.key()).collect();
    for &k in &keys {
        s.get(&key_name(k))?;
    }
    let c0 = s.cost()?;
    for &k in &keys {
        do_op(s.as_mut(), &YcsbOp::Read(k), 7, 0, a.value_size, &mut m);
    }
    let c1 = s.cost()?;
    for (i, &k) in keys.iter().enumerate() {
        do_op(
            s.as_mut(),
            &YcsbOp::Update(k),
            7,
            i as u64,
            a.value_size,
            &mut m,
        );
    }
    // Background work of the puts (Clover's shortcut updates) lands within this.
    std::thread::sleep(Duration::from_millis(200));
    let c2 = s.cost()?;
    if m.errors > 0 || m.torn > 0 {
        bail!(
            "{system}: breakdown saw {} errors, {} torn values: {:?}",
            m.errors,
            m.torn,
            m.first_error
        );
    }
    Ok(Breakdown {
        system,
        get: per_op(c0, c1, a.breakdown_ops),
        put: per_op(c1, c2, a.breakdown_ops),
    })
}

/// One (system, workload) run with `cns` worker processes.
fn run_workers(
    spec: &StoreSpec,
    w: Workload,
    a: &YcsbArgs,
    pb: &ProgressBar,
    label: &str,
) -> Result<Measured> {
    let exe = std::env::current_exe().context("locating the clio binary")?;
    let mut children = Vec::new();
    for cn in 0..a.cns {
        let mut c = Command::new(&exe);
        c.args(["bench", "ycsb-worker", "--spec"])
            .arg(spec.to_string())
            .args(["--workload", &w.name()])
            .args(["--keys", &a.keys.to_string()])
            .args(["--theta", &a.theta.to_string()])
            .args(["--value-size", &a.value_size.to_string()])
            .args(["--threads", &a.threads.to_string()])
            .args(["--warmup", &a.warmup.to_string()])
            .args(["--duration", &a.duration.to_string()])
            .args(["--seed", &a.seed.to_string()])
            .args(["--cn", &cn.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        children.push(c.spawn().context("starting a worker")?);
    }
    // Wait until every worker has opened its handles, then start them together.
    let mut readers = Vec::new();
    for ch in &mut children {
        let out = ch.stdout.take().context("worker stdout")?;
        let mut r = BufReader::new(out);
        let mut line = String::new();
        r.read_line(&mut line)?;
        if line.trim() != "ready" {
            bail!("a worker did not start: `{}`", line.trim());
        }
        readers.push(r);
    }
    for ch in &mut children {
        if let Some(mut i) = ch.stdin.take() {
            writeln!(i, "go")?;
        }
    }
    let started = Instant::now();
    let total = a.warmup + a.duration;
    let collectors: Vec<_> = readers
        .into_iter()
        .map(|mut r| {
            std::thread::spawn(move || {
                let mut s = String::new();
                let _ = std::io::Read::read_to_string(&mut r, &mut s);
                s
            })
        })
        .collect();
    while collectors.iter().any(|c| !c.is_finished()) {
        let t = started.elapsed().as_secs_f64();
        let phase = if t < a.warmup { "warm-up" } else { "measuring" };
        pb.set_message(format!("{label}: {phase} {t:.0}/{total:.0} s"));
        pb.tick();
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut m = Measured::new()?;
    for (c, mut ch) in collectors.into_iter().zip(children) {
        let text = c
            .join()
            .map_err(|_| anyhow::anyhow!("collector panicked"))?;
        let st = ch.wait()?;
        if !st.success() {
            bail!("a worker failed ({st})");
        }
        m.merge(&parse_worker(&text)?)?;
    }
    Ok(m)
}

fn node(a: &YcsbArgs) -> Result<(Option<ServerHandle>, SocketAddr)> {
    if let Some(n) = a.node {
        return Ok((None, n));
    }
    // Room for every store's data several times over (memory is sparse: untouched pages
    // cost nothing).
    let need = a.keys * (a.value_size as u64 + 512) * 16;
    // Clio-KV's region: a record per key, twice over (puts are out of place), and its table.
    let kv_store_bytes = (a.keys * 2 + 1024) * (clio_proto::kv::RECORD_BYTES + 16);
    let cfg = BoardConfig {
        dram_bytes: (need + kv_store_bytes).next_power_of_two().max(1 << 30),
        // As `clio board` runs it: the slow path on its own thread, not stepped under the
        // node's lock by the serving threads.
        slowpath: SlowPathMode::Thread,
        offloads: clio_sim::Offloads::All,
        kv_store_bytes,
        ..BoardConfig::default()
    };
    let s = spawn_udp_threads(
        CBoard::new(&cfg)?,
        "127.0.0.1:0".parse()?,
        a.node_threads.into(),
    )?;
    let addr = s.udp_addr.context("node has no UDP address")?;
    Ok((Some(s), addr))
}

struct Row {
    system: System,
    workload: String,
    m: Measured,
    /// The in-process node's lock over the run: the share of its wall time some serving
    /// thread held it, and serving threads waiting for it on average.
    lock: Option<(f64, f64)>,
}

pub(super) fn ycsb(a: YcsbArgs) -> Result<()> {
    let systems = parse_systems(&a.systems)?;
    if a.keys == 0 || a.cns == 0 || a.threads == 0 || a.duration <= 0.0 || a.warmup < 0.0 {
        bail!("--keys, --cns, --threads and --duration must be positive");
    }
    if a.value_size < clio_kvstores::history::VALUE_HEADER || a.value_size > 32 * 1024 {
        bail!(
            "--value-size must be {}..=32768 (values carry a {}-byte self-check)",
            clio_kvstores::history::VALUE_HEADER,
            clio_kvstores::history::VALUE_HEADER
        );
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let (srv, addr) = node(&a)?;
    let creator = Client::connect_udp(addr).context("creating the stores' address space")?;
    let link = NodeLink {
        node: addr,
        creds: creator.credentials(),
        config: loopback_config(),
        faults: None,
    };
    let setup = Setup {
        keys: a.keys,
        max_value: a.value_size,
        epoch_ms: a.clover_epoch_ms,
        memcached_threads: 4,
    };
    let steps = (systems.len() * (a.workloads.len() + 1)) as u64;
    let pb = ProgressBar::new(steps);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")?
            .progress_chars("=> "),
    );
    let mut rows = Vec::new();
    let mut breakdowns = Vec::new();
    let mut skipped = Vec::new();
    for &system in &systems {
        if system == System::ClioKv && a.value_size > clio_kvstores::clio_kv::KV_MAX_VALUE {
            pb.println(format!(
                "{system}: skipped (values up to {} bytes, not {})",
                clio_kvstores::clio_kv::KV_MAX_VALUE,
                a.value_size
            ));
            skipped.push(system);
            pb.inc(1 + a.workloads.len() as u64);
            continue;
        }
        pb.set_message(format!("{system}: setting up"));
        let Some(dep) = deploy(system, &creator, &link, &setup, &server_cmd)? else {
            pb.println(format!(
                "{system}: skipped (memcached is not on PATH; `make bench-deps` installs it)"
            ));
            skipped.push(system);
            pb.inc(1 + a.workloads.len() as u64);
            continue;
        };
        // Load, then measure the breakdown on a CN of its own (so that no background work
        // of the load, e.g. Clover's shortcut updates, is counted).
        load(
            open_factory(&dep.spec, loopback_config())?.as_ref(),
            a.keys,
            a.value_size,
            8,
            &pb,
        )?;
        pb.set_message(format!("{system}: per-operation breakdown"));
        breakdowns.push(breakdown(
            open_factory(&dep.spec, loopback_config())?.as_ref(),
            system,
            &a,
        )?);
        pb.inc(1);
        for &w in &a.workloads {
            let label = format!("{system} YCSB-{}", w.name());
            let before = srv.as_ref().map(|s| (s.serving_stats(), Instant::now()));
            let m = run_workers(&dep.spec, w, &a, &pb, &label)?;
            let lock = match (&srv, before) {
                (Some(s), Some((b, t0))) => Some(lock_use(&b, &s.serving_stats(), t0.elapsed())),
                _ => None,
            };
            rows.push(Row {
                system,
                workload: w.name(),
                m,
                lock,
            });
            pb.inc(1);
        }
        drop(dep);
    }
    pb.finish_and_clear();

    // ---- table, CSV ----
    let mut csv = String::from("system,workload,cns,threads_per_cn,keys,value_bytes,theta,measured_s,ops,throughput_ops_per_s,read_median_us,read_p99_us,read_p999_us,update_median_us,update_p99_us,update_p999_us,round_trips_per_op,server_requests_per_op,errors,torn_values\n");
    let mut table = String::new();
    writeln!(
        table,
        "{:13} {:4} {:>11} {:>6} {:>6} | {:>8} {:>8} {:>8} | {:>8} {:>8} {:>8} | errors/torn",
        "system",
        "wl",
        "ops/s",
        "RT/op",
        "srv/op",
        "rd p50",
        "rd p99",
        "rd p99.9",
        "up p50",
        "up p99",
        "up p99.9",
    )?;
    for r in &rows {
        let tput = r.m.ops as f64 / a.duration;
        let per_op = |x: u64| x as f64 / r.m.ops.max(1) as f64;
        let (rt, srv) = (per_op(r.m.round_trips), per_op(r.m.server_requests));
        let q = |h: &Hist| {
            if h.is_empty() {
                (f64::NAN, f64::NAN, f64::NAN)
            } else {
                quantiles(h)
            }
        };
        let (rm, r99, r999) = q(&r.m.hists[0]);
        let (um, u99, u999) = q(&r.m.hists[1]);
        writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{tput:.0},{rm:.1},{r99:.1},{r999:.1},{um:.1},{u99:.1},{u999:.1},{rt:.2},{srv:.2},{},{}",
            r.system, r.workload, a.cns, a.threads, a.keys, a.value_size, a.theta, a.duration, r.m.ops, r.m.errors, r.m.torn
        )?;
        writeln!(
            table,
            "{:13} {:4} {tput:11.0} {rt:6.2} {srv:6.2} | {rm:8.1} {r99:8.1} {r999:8.1} | {um:8.1} {u99:8.1} {u999:8.1} | {}/{}{}",
            r.system.name(),
            r.workload,
            r.m.errors,
            r.m.torn,
            r.m.first_error.as_deref().map(|e| format!(" (first: {e})")).unwrap_or_default()
        )?;
    }
    std::fs::write(a.out.join("ycsb.csv"), &csv)?;
    if rows.iter().any(|r| r.lock.is_some()) {
        writeln!(
            table,
            "the node's lock over each run ({} serving threads; every request runs through the \
             model under it): held / waited for, as a share of the run's wall time",
            a.node_threads
        )?;
        for r in &rows {
            if let Some((held, wait)) = r.lock {
                writeln!(
                    table,
                    "  {:13} {:4} held {:5.1}%  waited {:6.1}% (thread-seconds per second)",
                    r.system.name(),
                    r.workload,
                    held * 100.0,
                    wait * 100.0
                )?;
            }
        }
    }
    let mut bcsv = String::from("system,get_node_requests,get_server_requests,get_round_trips,put_node_requests,put_server_requests,put_round_trips\n");
    let mut btable = String::new();
    for b in &breakdowns {
        writeln!(
            bcsv,
            "{},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2}",
            b.system, b.get[0], b.get[1], b.get[2], b.put[0], b.put[1], b.put[2]
        )?;
        writeln!(
            btable,
            "  {:13} get: {:5.2} node requests, {:5.2} server requests, {:5.2} round trips | put: {:5.2} node requests, {:5.2} server requests, {:5.2} round trips",
            b.system.name(), b.get[0], b.get[1], b.get[2], b.put[0], b.put[1], b.put[2]
        )?;
    }
    std::fs::write(a.out.join("ycsb_breakdown.csv"), &bcsv)?;
    bar_svg(&a.out.join("ycsb_throughput.svg"), &rows, &a)?;

    println!(
        "clio bench ycsb: {} keys x {} B, Zipf theta {}, {} CN processes x {} threads, {} s warm-up + {} s measured per run; node: {}",
        a.keys,
        a.value_size,
        a.theta,
        a.cns,
        a.threads,
        a.warmup,
        a.duration,
        if a.node.is_some() { "--node (external)".to_string() } else { format!("model, in this process, UDP on loopback, {} serving threads", a.node_threads) }
    );
    println!("latencies in microseconds (rd = get, up = put); RT/op, srv/op: round trips and server requests per operation in the measured window (the stores' counters); errors/torn: failed operations / reads that were not a whole written value");
    print!("{table}");
    println!("per-operation breakdown (one thread alone, {} gets then {} puts on Zipfian keys, CN metadata warm; node requests from CLib's counters, server = coordinator / metadata server / memcached):", a.breakdown_ops, a.breakdown_ops);
    print!("{btable}");
    for s in skipped {
        let why = match s {
            System::ClioKv => "values longer than one packet holds",
            _ => "not installed",
        };
        println!("  {s}: skipped ({why})");
    }
    println!(
        "wrote {}/{{ycsb.csv,ycsb_breakdown.csv,ycsb_throughput.svg}}",
        a.out.display()
    );
    drop(creator);
    Ok(())
}

/// Grouped bars: throughput per workload, one bar per system.
fn bar_svg(path: &PathBuf, rows: &[Row], a: &YcsbArgs) -> Result<()> {
    use plotters::prelude::*;
    let e = |e: &dyn std::fmt::Display| anyhow::anyhow!("{e}");
    let mut systems: Vec<System> = rows.iter().map(|r| r.system).collect();
    systems.dedup();
    let workloads: Vec<String> = a.workloads.iter().map(|w| w.name()).collect();
    let ymax = rows
        .iter()
        .map(|r| r.m.ops as f64 / a.duration / 1000.0)
        .fold(1.0, f64::max)
        * 1.15;
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let groups = workloads.len().max(1) as f64;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!(
                "YCSB throughput: {} CNs x {} threads, {} keys x {} B, theta {}",
                a.cns, a.threads, a.keys, a.value_size, a.theta
            ),
            ("sans-serif", 20),
        )
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..groups, 0.0..ymax)
        .map_err(|x| e(&x))?;
    let wl = workloads.clone();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(workloads.len() * 2 + 1)
        .x_label_formatter(&move |x| {
            let i = x.floor() as usize;
            if (x - x.floor() - 0.5).abs() < 0.01 && i < wl.len() {
                format!("YCSB-{}", wl[i])
            } else {
                String::new()
            }
        })
        .y_desc("throughput (K ops/s)")
        .draw()
        .map_err(|x| e(&x))?;
    let width = 0.8 / systems.len().max(1) as f64;
    for (si, s) in systems.iter().enumerate() {
        let color = Palette99::pick(si).to_rgba();
        let bars: Vec<Rectangle<(f64, f64)>> = rows
            .iter()
            .filter(|r| r.system == *s)
            .filter_map(|r| {
                let wi = workloads.iter().position(|w| *w == r.workload)? as f64;
                let x0 = wi + 0.1 + si as f64 * width;
                let y = r.m.ops as f64 / a.duration / 1000.0;
                Some(Rectangle::new(
                    [(x0, 0.0), (x0 + width * 0.95, y)],
                    color.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|x| e(&x))?
            .label(s.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 15, y + 5)], color.filled()));
    }
    super::harness::legend(&mut chart, SeriesLabelPosition::UpperRight)?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_output_round_trips_and_garbage_is_refused() {
        let mut h = hist().unwrap();
        h.record_n(1500, 3).unwrap();
        h.record(90_000).unwrap();
        let text = format!(
            "ready\nresult 4 1 0 9 2 memory node: timed out\nhist 0 {}\nhist 1\nhist 2\n",
            h.iter_recorded()
                .map(|v| format!("{}:{}", v.value_iterated_to(), v.count_at_value()))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let m = parse_worker(&text).unwrap();
        assert_eq!((m.ops, m.errors, m.torn), (4, 1, 0));
        assert_eq!((m.round_trips, m.server_requests), (9, 2));
        assert_eq!(m.hists[0].len(), 4);
        assert_eq!(m.first_error.as_deref(), Some("memory node: timed out"));
        assert!(parse_worker("hist 0 1:1\n").is_err(), "no result line");
        assert!(parse_worker("result 1 0 0 0 0\nhist 9 1:1\n").is_err());
        assert!(parse_worker("result x 0 0 0 0\n").is_err());
        assert!(parse_worker("result 1 0 0\n").is_err(), "short result line");
        assert_eq!(parse_systems("all").unwrap(), System::ALL.to_vec());
        assert_eq!(
            parse_systems("clover,pdpm-direct").unwrap(),
            vec![System::Clover, System::PdpmDirect]
        );
        assert!(parse_systems("clover,herd").is_err());
    }
}

/// The share of `wall` some serving thread held the node's lock, and serving threads
/// waiting for it on average, between two snapshots.
fn lock_use(
    before: &[clio_sim::server::ServingStats],
    after: &[clio_sim::server::ServingStats],
    wall: Duration,
) -> (f64, f64) {
    let sum = |f: fn(&clio_sim::server::ServingStats) -> Duration| {
        let a: Duration = after.iter().map(f).sum();
        let b: Duration = before.iter().map(f).sum();
        a.saturating_sub(b).as_secs_f64() / wall.as_secs_f64().max(1e-9)
    };
    (sum(|s| s.lock_held), sum(|s| s.lock_wait))
}
