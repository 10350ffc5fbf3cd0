//! What every `clio bench` section measures with: latency histograms and their quantiles,
//! timed loops, threads run for a while, asynchronous reads kept outstanding, and the host's
//! load average printed beside the figures.

use anyhow::Result;
use clio_clib::{Client, Handle};
use hdrhistogram::Histogram;
use std::collections::VecDeque;
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
