//! `clio bench scale`: how CLib and the node use the cores they are given. A model node in
//! its own process (`clio board --threads K`, for each K of `--node-threads`), and from this
//! process, for each thread count T of `--threads`: synchronous 64 B reads from T threads
//! sharing one Client, from T threads with a joined Client each, and `--outstanding`
//! asynchronous reads kept in flight by each of T threads sharing one Client. Every point
//! reports operations per second and the CPU the node process and this process (CLib) spent
//! per read. Ratios are taken within the run: a shared Client against one thread and against
//! a Client per thread, a many-threaded node against a one-threaded one.

use super::harness::NodeProcess;
use super::harness::{load_average, own_cpu, run_threads, throughput_outstanding, Busy};
use anyhow::{bail, Context, Result};
use clap::Args;
use clio_clib::transport::UdpTransport;
use clio_clib::{Client, Config};
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Arguments of `clio bench scale`.
#[derive(Args, Debug)]
pub struct ScaleArgs {
    /// Client thread counts.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16")]
    threads: Vec<usize>,
    /// Serving threads of the node (`clio board --threads`), one node process each, measured
    /// one after the other. Default: 1 and `clio board`'s default (half the cores, at most 8).
    #[arg(long, value_delimiter = ',')]
    node_threads: Vec<u16>,
    /// Seconds per point.
    #[arg(long, default_value_t = 1.0)]
    seconds: f64,
    /// Asynchronous reads each thread keeps in flight in the outstanding points.
    #[arg(long, default_value_t = 64)]
    outstanding: usize,
    /// Keep this many cores busy with other work (a shell loop each) during the run.
    #[arg(long, default_value_t = 0)]
    busy: usize,
    /// The node's `--spin-us`.
    #[arg(long, default_value_t = clio_sim::server::UDP_SPIN.as_micros() as u64)]
    node_spin_us: u64,
    /// Directory for scale.csv and scale.svg.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
}

/// How the threads of a point reach the node.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    /// Synchronous reads, one Client shared by the threads.
    Shared,
    /// Synchronous reads, a joined Client per thread.
    Each,
    /// `--outstanding` asynchronous reads per thread, one shared Client.
    Async,
    /// The same with deferred sends (`Client::set_deferred_sends`): the reads started after
    /// one wake-up leave together, one system call (and one GSO message) per batch.
    Deferred,
}

impl Mode {
    const ALL: [Mode; 4] = [Mode::Shared, Mode::Each, Mode::Async, Mode::Deferred];

    fn name(self) -> &'static str {
        match self {
            Mode::Shared => "sync, one shared Client",
            Mode::Each => "sync, a Client per thread",
            Mode::Async => "async, one shared Client",
            Mode::Deferred => "async deferred, one shared Client",
        }
    }
}

/// One measured point.
struct Point {
    node_threads: u16,
    mode: Mode,
    threads: usize,
    ops_per_s: f64,
    /// Node CPU per read, microseconds.
    node_us: f64,
    /// This process's CPU per read (CLib and the benchmark loop), microseconds.
    clib_us: f64,
}

/// Run `clio bench scale`.
pub fn run(a: ScaleArgs) -> Result<()> {
    if a.threads.is_empty() || a.threads.contains(&0) || a.seconds <= 0.0 || a.outstanding == 0 {
        bail!("--threads must be positive counts; --seconds and --outstanding positive");
    }
    let mut nodes = a.node_threads.clone();
    if nodes.is_empty() {
        nodes = vec![1, crate::board::default_threads()];
    }
    nodes.dedup();
    if nodes.contains(&0) {
        bail!("--node-threads must be positive");
    }
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "clio bench scale: model node in its own process (`clio board --threads K`), UDP on \
         loopback, 64 B reads; {cores} cores, load average {} at the start, {} core(s) kept \
         busy (--busy); {} s per point",
        load_average(),
        a.busy,
        a.seconds
    );
    let _busy = Busy::start(a.busy)?;
    let pb = ProgressBar::new((nodes.len() * a.threads.len() * Mode::ALL.len()) as u64);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")?
            .progress_chars("=> "),
    );
    let mut points = Vec::new();
    for &k in &nodes {
        let node = NodeProcess::start(a.node_spin_us, Some(k))?;
        let owner = client(&node)?;
        let va = owner.ralloc(64 << 20)?;
        owner.rwrite(va, &vec![7u8; 1 << 20])?;
        for &t in &a.threads {
            for mode in Mode::ALL {
                pb.set_message(format!("node {k} threads: {t} threads, {}", mode.name()));
                points.push(point(&a, &node, &owner, va, k, mode, t)?);
                pb.inc(1);
            }
        }
    }
    pb.finish_and_clear();
    report(&a, &nodes, &points)
}

fn client(node: &NodeProcess) -> Result<Client> {
    Ok(Client::connect(
        Box::new(UdpTransport::connect(node.addr)?),
        Config::default(),
    )?)
}

/// Measure one point (a short unmeasured run first, so lanes and windows are settled).
fn point(
    a: &ScaleArgs,
    node: &NodeProcess,
    owner: &Client,
    va: u64,
    node_threads: u16,
    mode: Mode,
    threads: usize,
) -> Result<Point> {
    let members: Vec<Client> = match mode {
        Mode::Each => (0..threads)
            .map(|_| -> Result<Client> {
                let t = UdpTransport::connect(node.addr)?;
                Ok(Client::join(
                    Box::new(t),
                    Config::default(),
                    owner.credentials(),
                )?)
            })
            .collect::<Result<_>>()?,
        _ => Vec::new(),
    };
    let run = |secs: f64| -> Result<f64> {
        match mode {
            Mode::Shared => run_threads(threads, secs, |t| {
                let c = owner.clone();
                move || -> Result<()> {
                    c.rread(va + t as u64 * 8192, 64)?;
                    Ok(())
                }
            }),
            Mode::Each => {
                let mut m = members.iter().cloned();
                run_threads(threads, secs, |t| {
                    let c = m.next();
                    move || -> Result<()> {
                        let c = c.as_ref().context("a member per thread")?;
                        c.rread(va + t as u64 * 8192, 64)?;
                        Ok(())
                    }
                })
            }
            Mode::Async | Mode::Deferred => std::thread::scope(|s| {
                let hs: Vec<_> = (0..threads)
                    .map(|t| {
                        let c = owner;
                        let at = va + (t as u64 % 64) * (256 << 10);
                        s.spawn(move || throughput_outstanding(c, at, a.outstanding, secs))
                    })
                    .collect();
                let mut sum = 0.0;
                for h in hs {
                    sum += h
                        .join()
                        .map_err(|_| anyhow::anyhow!("bench thread panicked"))??;
                }
                Ok(sum)
            }),
        }
    };
    owner.set_deferred_sends(mode == Mode::Deferred);
    let r = measure(node, &run, a.seconds);
    owner.set_deferred_sends(false);
    let (ops_per_s, node_us, clib_us) = r?;
    Ok(Point {
        node_threads,
        mode,
        threads,
        ops_per_s,
        node_us,
        clib_us,
    })
}

/// `run` briefly unmeasured (lanes and windows settle), then for `secs`: operations per
/// second, and node and own CPU per operation (microseconds).
fn measure(
    node: &NodeProcess,
    run: &dyn Fn(f64) -> Result<f64>,
    secs: f64,
) -> Result<(f64, f64, f64)> {
    run((secs / 5.0).min(0.2))?;
    let (n0, c0) = (node.cpu()?, own_cpu()?);
    let start = std::time::Instant::now();
    let ops_per_s = run(secs)?;
    let took = start.elapsed().as_secs_f64();
    let (n1, c1) = (node.cpu()?, own_cpu()?);
    let reads = (ops_per_s * took).max(1.0);
    let per = |d: Duration| d.as_secs_f64() * 1e6 / reads;
    Ok((
        ops_per_s,
        per(n1.saturating_sub(n0)),
        per(c1.saturating_sub(c0)),
    ))
}

fn find(points: &[Point], k: u16, mode: Mode, t: usize) -> Option<&Point> {
    points
        .iter()
        .find(|p| p.node_threads == k && p.mode == mode && p.threads == t)
}

fn report(a: &ScaleArgs, nodes: &[u16], points: &[Point]) -> Result<()> {
    let mut csv =
        String::from("node_threads,mode,threads,ops_per_s,node_cpu_us_per_op,clib_cpu_us_per_op\n");
    for p in points {
        writeln!(
            csv,
            "{},{:?},{},{:.0},{:.2},{:.2}",
            p.node_threads, p.mode, p.threads, p.ops_per_s, p.node_us, p.clib_us
        )?;
    }
    for &k in nodes {
        println!("node with {k} serving thread(s):");
        println!(
            "  {:>7} | {:>28} | {:>28} | {:>28} | {:>28} | shared/1 | shared/each",
            "threads",
            "sync shared ops/s (node, clib us)",
            "sync each ops/s (node, clib us)",
            format!("async x{} ops/s (node, clib us)", a.outstanding),
            "deferred ops/s (node, clib us)"
        );
        let one = find(points, k, Mode::Shared, 1).map(|p| p.ops_per_s);
        for &t in &a.threads {
            let cell = |m: Mode| {
                find(points, k, m, t).map_or(String::from("-"), |p| {
                    format!(
                        "{:>10.0} ({:5.2}, {:5.2})",
                        p.ops_per_s, p.node_us, p.clib_us
                    )
                })
            };
            let shared = find(points, k, Mode::Shared, t).map(|p| p.ops_per_s);
            let each = find(points, k, Mode::Each, t).map(|p| p.ops_per_s);
            let ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
                (Some(x), Some(y)) if y > 0.0 => format!("{:.2}x", x / y),
                _ => "-".into(),
            };
            println!(
                "  {t:>7} | {:>28} | {:>28} | {:>28} | {:>28} | {:>8} | {:>11}",
                cell(Mode::Shared),
                cell(Mode::Each),
                cell(Mode::Async),
                cell(Mode::Deferred),
                ratio(shared, one),
                ratio(shared, each)
            );
        }
    }
    if let (Some(&lo), Some(&hi)) = (nodes.first(), nodes.last()) {
        if lo != hi {
            println!("node with {hi} threads against {lo}, same points:");
            for &t in &a.threads {
                let line: Vec<String> = Mode::ALL
                    .iter()
                    .filter_map(|&m| {
                        let (x, y) = (find(points, hi, m, t)?, find(points, lo, m, t)?);
                        Some(format!(
                            "{} {:.2}x",
                            m.name(),
                            x.ops_per_s / y.ops_per_s.max(1.0)
                        ))
                    })
                    .collect();
                println!("  {t:>3} client threads: {}", line.join(" | "));
            }
        }
    }
    std::fs::write(a.out.join("scale.csv"), csv)?;
    plot(&a.out.join("scale.svg"), nodes, &a.threads, points)?;
    println!("wrote {0}/scale.csv and {0}/scale.svg", a.out.display());
    Ok(())
}

/// Throughput against client threads: a line per mode and node thread count.
fn plot(path: &Path, nodes: &[u16], threads: &[usize], points: &[Point]) -> Result<()> {
    use plotters::prelude::*;
    let e = |e: &dyn std::fmt::Display| anyhow::anyhow!("{e}");
    let ymax = points.iter().map(|p| p.ops_per_s / 1e3).fold(1.0, f64::max) * 1.15;
    let xs: Vec<f64> = threads.iter().map(|&t| (t as f64).log2()).collect();
    let (x0, x1) = (
        xs.iter().copied().fold(f64::INFINITY, f64::min),
        xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
    );
    let root = SVGBackend::new(path, (900, 540)).into_drawing_area();
    root.fill(&WHITE).map_err(|x| e(&x))?;
    let mut chart = ChartBuilder::on(&root)
        .caption("64 B reads against client threads", ("sans-serif", 20))
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(x0 - 0.2..x1 + 0.2, 0.0..ymax)
        .map_err(|x| e(&x))?;
    chart
        .configure_mesh()
        .x_labels(threads.len() * 2)
        .x_label_formatter(&|x| format!("{:.0}", 2f64.powf(*x)))
        .x_desc("client threads")
        .y_desc("K reads/s")
        .draw()
        .map_err(|x| e(&x))?;
    let mut k = 0;
    for &n in nodes {
        for m in Mode::ALL {
            let color = Palette99::pick(k).to_rgba();
            k += 1;
            let line: Vec<(f64, f64)> = threads
                .iter()
                .filter_map(|&t| {
                    let p = find(points, n, m, t)?;
                    Some(((t as f64).log2(), p.ops_per_s / 1e3))
                })
                .collect();
            chart
                .draw_series(LineSeries::new(line, color.stroke_width(2)))
                .map_err(|x| e(&x))?
                .label(format!("{}, node {n} thread(s)", m.name()))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 16, y)], color.stroke_width(2))
                });
        }
    }
    super::harness::legend(&mut chart, SeriesLabelPosition::UpperLeft)?;
    root.present().map_err(|x| e(&x))?;
    Ok(())
}
