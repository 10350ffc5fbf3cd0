//! `clio-slowpath`: the slow-path daemon. On the board it maps the ring/register window of
//! the fast path from a UIO device; in simulation it maps the shared-memory ring file that
//! `clio board` creates. Same code, same layout.

use anyhow::{bail, Context, Result};
use clap::Parser;
use clio_proto::layout::MemoryLayout;
use clio_proto::ring::{daemon_state, reg};
use clio_slowpath::{
    MappedMemory, MappedMeta, MetaLog, Opened, RingError, RingWindow, SlowPath, SlowPathConfig,
};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// Serve the memory node's slow path (remote address spaces and their keys, alloc, free,
/// member leases, free-page refill with cleared frames) over the FPGA<->ARM descriptor rings.
#[derive(Parser, Debug)]
#[command(version, about, long_about = None)]
struct Args {
    /// Shared-memory ring file created by `clio board --slowpath external --ring-file PATH`
    /// (simulation).
    #[arg(long, conflicts_with = "uio", required_unless_present = "uio")]
    ring_file: Option<PathBuf>,
    /// UIO device exposing the fast path's ring window (on the board), e.g. /dev/uio0.
    #[arg(long)]
    uio: Option<PathBuf>,
    /// Bytes to map from the UIO device (its ring window size).
    #[arg(long, default_value_t = clio_proto::ring::RingLayout::default().total_bytes())]
    uio_size: usize,
    /// The node's DRAM, mapped to clear frames before they are reused: the DRAM file of a
    /// simulated node (default with --ring-file: the ring file's path plus `.dram`, which
    /// `clio board --slowpath external` creates), or on the board a device exposing the DRAM
    /// aperture. Required with --uio.
    #[arg(long)]
    dram_file: Option<PathBuf>,
    /// The DRAM file is the node's persistence domain (`clio board --memory-file`): the
    /// daemon keeps its metadata log after the DRAM image in it, recovers from it at start
    /// (docs/durability.md), and Persist requests (`rpersist`) flush it. Without this flag the
    /// daemon keeps no durable state and refuses Persist as unsupported.
    #[arg(long)]
    persistent: bool,
    /// Byte offset of DRAM physical address 0 in --dram-file.
    #[arg(long, default_value_t = 0)]
    dram_offset: u64,
    /// Lease of a remote-address-space member in milliseconds: a member silent for this long
    /// (no heartbeat, no slow-path request) is removed; the last one's removal tears its RAS
    /// down.
    #[arg(long, default_value_t = clio_proto::consts::DEFAULT_LEASE_MS)]
    lease_ms: u64,
    /// Seconds to wait for the fast path to initialise the window.
    #[arg(long, default_value_t = 10.0)]
    wait_secs: f64,
    /// Microseconds to sleep when a poll found no work.
    #[arg(long, default_value_t = 20)]
    idle_sleep_us: u64,
    /// Print counters when stopping.
    #[arg(long)]
    stats: bool,
}

fn open_window(args: &Args) -> Result<RingWindow> {
    let (path, len) = match (&args.ring_file, &args.uio) {
        (Some(p), _) => (p.clone(), None),
        (None, Some(p)) => (p.clone(), Some(args.uio_size)),
        (None, None) => bail!("give --ring-file or --uio"),
    };
    let deadline = Instant::now() + Duration::from_secs_f64(args.wait_secs);
    loop {
        match RingWindow::open(&path, len) {
            Ok(w) => return Ok(w),
            Err(e @ (RingError::NotInitialised { .. } | RingError::Io { .. }))
                if Instant::now() < deadline =>
            {
                let _ = e;
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => {
                return Err(e).with_context(|| format!("opening ring window {}", path.display()))
            }
        }
    }
}

fn main() -> Result<()> {
    let args = Args::parse();
    let ring = open_window(&args)?;
    let layout = MemoryLayout::new(ring.dram_bytes(), ring.page_shift())
        .context("the fast path published a memory geometry the slow path cannot lay out")?;
    let dram_path = match (&args.dram_file, &args.ring_file) {
        (Some(p), _) => p.clone(),
        (None, Some(r)) => {
            let mut p = r.clone().into_os_string();
            p.push(".dram");
            PathBuf::from(p)
        }
        (None, None) => bail!("give --dram-file: the slow path clears frames before reuse"),
    };
    let mut mem = MappedMemory::open(
        &dram_path,
        args.dram_offset,
        layout.dram_bytes,
        args.persistent,
    )
    .with_context(|| format!("mapping the node's DRAM from {}", dram_path.display()))?;
    let cfg = SlowPathConfig {
        lease: Duration::from_millis(args.lease_ms),
        ..SlowPathConfig::default()
    };
    let mut sp = if args.persistent {
        let meta = MappedMeta::open(&dram_path, args.dram_offset + layout.dram_bytes)
            .with_context(|| format!("mapping the metadata area of {}", dram_path.display()))?;
        let (log, opened) = MetaLog::open(Box::new(meta), layout.dram_bytes, layout.page_shift)
            .with_context(|| format!("opening the metadata of {}", dram_path.display()))?;
        match opened {
            Opened::Formatted => SlowPath::with_log(layout, cfg, log),
            Opened::Recovered(records) => {
                // No daemon attached since the fast path's reset: its free-page buffer is
                // empty. Otherwise (only the daemon restarted) it still holds frames.
                let fresh =
                    ring.reg(reg::DAEMON_STATE).load(Ordering::Acquire) == daemon_state::ABSENT;
                let table = mem
                    .bytes(layout.pt_base, layout.pt_bytes())
                    .context("the page table lies outside the DRAM mapping")?
                    .to_vec();
                let (sp, rep) =
                    SlowPath::recover(layout, cfg, log, &records, &table, fresh, Instant::now());
                eprintln!(
                    "clio-slowpath: recovered from {}: {rep:?}",
                    dram_path.display()
                );
                sp
            }
        }
    } else {
        SlowPath::with_config(layout, cfg)
    };
    ring.reg(reg::DAEMON_STATE)
        .store(daemon_state::RUNNING, Ordering::Release);
    let idle = Duration::from_micros(args.idle_sleep_us);
    loop {
        let work = sp.poll(&ring, &mut mem);
        // A plain load and store, not fetch_add: on the board's uncached UIO window an atomic
        // RMW becomes an exclusive pair that an AXI4-Lite slave cannot acknowledge. The
        // daemon is the only writer of this register.
        let hb = ring.reg(reg::DAEMON_HEARTBEAT).load(Ordering::Relaxed);
        ring.reg(reg::DAEMON_HEARTBEAT)
            .store(hb.wrapping_add(1), Ordering::Relaxed);
        if ring.reg(reg::DAEMON_STATE).load(Ordering::Acquire) == daemon_state::STOP_REQUESTED {
            break;
        }
        if work == 0 {
            std::thread::sleep(idle);
        }
    }
    ring.reg(reg::DAEMON_STATE)
        .store(daemon_state::STOPPED, Ordering::Release);
    if args.stats {
        eprintln!("{:#?}", sp.stats());
    }
    Ok(())
}
