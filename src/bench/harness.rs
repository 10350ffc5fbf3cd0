//! What every `clio bench` section measures with: latency histograms and their quantiles,
//! timed loops, threads run for a while, asynchronous reads kept outstanding, and the host's
//! load average printed beside the figures.

use anyhow::{Context, Result};
use clio_clib::{Client, Handle};
use hdrhistogram::Histogram;
use std::collections::VecDeque;
use std::io::BufRead as _;
use std::io::BufReader;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A latency histogram in nanoseconds.
pub(crate) type Hist = Histogram<u64>;

/// An empty histogram from 1 ns to 60 s, three significant digits.
pub(crate) fn hist() -> Result<Hist> {
    Ok(Histogram::new_with_bounds(1, 60_000_000_000, 3)?)
}

/// Nanoseconds as microseconds.
pub(crate) fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Median, p99 and p99.9 of `h`, in microseconds.
pub(crate) fn quantiles(h: &Hist) -> (f64, f64, f64) {
    (
        us(h.value_at_quantile(0.5)),
        us(h.value_at_quantile(0.99)),
        us(h.value_at_quantile(0.999)),
    )
}

/// `n` calls of `f`, each timed.
pub(crate) fn time_ops(n: u64, mut f: impl FnMut(u64) -> Result<()>) -> Result<Hist> {
    let mut h = hist()?;
    for i in 0..n {
        let t = Instant::now();
        f(i)?;
        h.record(t.elapsed().as_nanos().max(1) as u64)?;
    }
    Ok(h)
}

/// `threads` threads each running `op(t)` in a loop for `secs`; total operations per second.
pub(crate) fn run_threads<F, O>(threads: usize, secs: f64, mut op: F) -> Result<f64>
where
    F: FnMut(usize) -> O,
    O: FnMut() -> Result<()> + Send + 'static,
{
    let stop = Arc::new(AtomicBool::new(false));
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let (mut f, stop) = (op(t), stop.clone());
            std::thread::spawn(move || -> Result<u64> {
                let mut n = 0;
                while !stop.load(Ordering::Relaxed) {
                    f()?;
                    n += 1;
                }
                Ok(n)
            })
        })
        .collect();
    let t = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(secs));
    stop.store(true, Ordering::Relaxed);
    let mut total = 0;
    for h in hs {
        total += h
            .join()
            .map_err(|_| anyhow::anyhow!("bench thread panicked"))??;
    }
    Ok(total as f64 / t.elapsed().as_secs_f64())
}

/// [`throughput_refilled`] one read at a time.
pub(crate) fn throughput_outstanding(c: &Client, va: u64, depth: usize, secs: f64) -> Result<f64> {
    throughput_refilled(c, va, depth, 1, secs)
}

/// Asynchronous 64 B reads from one thread, at most `depth` outstanding: each time `refill`
/// have completed, that many new ones start (`1`: one `rread_async` per completed read; more:
/// one `rread_many_async`, whose requests leave together). Operations per second.
pub(crate) fn throughput_refilled(
    c: &Client,
    va: u64,
    depth: usize,
    refill: usize,
    secs: f64,
) -> Result<f64> {
    let refill = refill.clamp(1, depth.max(1));
    let mut q: VecDeque<Handle> = VecDeque::new();
    let t = Instant::now();
    let end = t + Duration::from_secs_f64(secs);
    let mut n = 0u64;
    let mut i = 0u64;
    let mut reads: Vec<(u64, usize)> = Vec::with_capacity(depth);
    while Instant::now() < end {
        if q.len() + refill <= depth {
            reads.clear();
            while q.len() + reads.len() < depth {
                reads.push((va + (i % 64) * 4096, 64));
                i += 1;
            }
            if refill == 1 {
                for &(at, len) in &reads {
                    q.push_back(c.rread_async(at, len)?);
                }
            } else {
                q.extend(c.rread_many_async(&reads)?);
            }
        }
        if let Some(h) = q.pop_front() {
            c.rpoll_one(h)?;
            n += 1;
        }
    }
    for h in q {
        c.rpoll_one(h)?;
        n += 1;
    }
    Ok(n as f64 / t.elapsed().as_secs_f64())
}

/// The host's 1, 5 and 15 minute load averages (`/proc/loadavg`), or `unknown`: printed beside
/// figures that another process on the host could have moved.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// A `clio board` child process; killed on drop.
pub(crate) struct NodeProcess {
    child: Child,
    /// Where it listens.
    pub(crate) addr: SocketAddr,
}

impl NodeProcess {
    /// Start `clio board` spinning `spin_us` on `threads` serving threads (`None`: its
    /// default).
    pub(crate) fn start(spin_us: u64, threads: Option<u16>) -> Result<NodeProcess> {
        let exe = std::env::current_exe().context("finding this executable")?;
        let mut child = Command::new(exe)
            .args(["board", "--listen", "127.0.0.1:0", "--memory", "1G"])
            .args(["--page-size", "4M", "--duration", "86400"])
            .args(["--spin-us", &spin_us.to_string()])
            .args(
                threads
                    .iter()
                    .flat_map(|t| ["--threads".to_string(), t.to_string()]),
            )
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .context("starting `clio board`")?;
        let out = child.stdout.take().context("no stdout of `clio board`")?;
        let mut out = BufReader::new(out);
        let mut line = String::new();
        out.read_line(&mut line)
            .context("reading `clio board`'s first line")?;
        // The node goes on printing (its summary): keep reading, or it dies of a closed pipe.
        std::thread::spawn(move || {
            let mut sink = String::new();
            while out.read_line(&mut sink).is_ok_and(|n| n > 0) {
                sink.clear();
            }
        });
        let addr = line
            .trim()
            .strip_prefix("clio board: listening on ")
            .with_context(|| format!("unexpected first line from `clio board`: {line:?}"))?
            .parse()
            .context("the node's address")?;
        Ok(NodeProcess { child, addr })
    }

    /// CPU time the node process has used so far.
    pub(crate) fn cpu(&self) -> Result<Duration> {
        process_cpu(&format!("/proc/{}/stat", self.child.id()))
    }
}

impl Drop for NodeProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// User plus system CPU time of the process whose `stat` file is `path`
/// (`/proc/self/stat`, `/proc/PID/stat`).
pub(crate) fn process_cpu(path: &str) -> Result<Duration> {
    let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
    // Fields after the command name (in parentheses, which may hold spaces): state is the
    // first, utime and stime the 12th and 13th (fields 14 and 15 of proc(5)).
    let rest = text
        .rsplit_once(')')
        .map(|(_, r)| r)
        .with_context(|| format!("unexpected {path}"))?;
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| -> Result<u64> {
        f.get(i)
            .and_then(|x| x.parse().ok())
            .with_context(|| format!("field {} of {path}", i + 3))
    };
    // SAFETY: sysconf only reads a configuration value.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    let hz = if hz > 0 { hz as u64 } else { 100 };
    Ok(Duration::from_micros(
        (ticks(11)? + ticks(12)?) * 1_000_000 / hz,
    ))
}

/// CPU time this process has used so far.
pub(crate) fn own_cpu() -> Result<Duration> {
    process_cpu("/proc/self/stat")
}

/// `n` processes that keep a core busy each (a shell's empty loop) until dropped: the host
/// state "one core busy with other work" of `--busy`.
pub(crate) struct Busy(Vec<Child>);

impl Busy {
    pub(crate) fn start(n: usize) -> Result<Busy> {
        let kids = (0..n)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .stdin(Stdio::null())
                    .spawn()
                    .context("starting a busy loop (sh)")
            })
            .collect::<Result<_>>()?;
        Ok(Busy(kids))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        for k in &mut self.0 {
            let _ = k.kill();
            let _ = k.wait();
        }
    }
}

/// Draw `chart`'s series legend at `pos`: the one legend style of every `clio bench` plot.
pub(crate) fn legend<'a, DB, CT>(
    chart: &mut plotters::chart::ChartContext<'a, DB, CT>,
    pos: plotters::chart::SeriesLabelPosition,
) -> Result<()>
where
    DB: plotters::prelude::DrawingBackend + 'a,
    CT: plotters::coord::CoordTranslate,
{
    use plotters::style::{Color, BLACK, WHITE};
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(pos)
        .draw()
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(())
}
