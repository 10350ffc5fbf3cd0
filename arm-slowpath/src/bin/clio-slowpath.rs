//! `clio-slowpath`: the slow-path daemon. On the board it maps the ring/register window of
//! the fast path from a UIO device, and the node's DRAM from a second one
//! (`--dram-file /dev/clio-dram --dram-uio-map 0`); in simulation it maps the shared-memory
//! ring file that `clio board` creates and the node's DRAM file. Same code, same layout.

use anyhow::{bail, Context, Result};
use clap::Parser;
use clio_proto::layout::MemoryLayout;
use clio_proto::ring::{daemon_state, reg};
use clio_slowpath::{
    FrameMemory, MappedMemory, MappedMeta, MetaLog, Opened, RingError, RingWindow, SlowPath,
    SlowPathConfig,
};
use memmap2::{MmapMut, MmapOptions};
use std::fs::OpenOptions;
use std::path::{Path, PathBuf};
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
    /// --dram-file is a UIO device exposing the board's DRAM aperture (docs/fpga.md: UIO
    /// device `clio-dram`, /dev/clio-dram, one map, so N = 0): map its memory map N (UIO
    /// selects map N by the mmap offset N x page size) and treat it as device memory, which
    /// UIO maps uncached. Frames are then cleared with aligned 8-byte volatile stores only: no
    /// memset (its DC ZVA faults on device memory) and no read-before-write (uncached reads
    /// over the PS-PL port are slow). A regular file given here is mapped the same way (the
    /// board's code path on an image; `make fpga-check` does that).
    #[arg(long, value_name = "N", conflicts_with_all = ["dram_offset", "persistent"])]
    dram_uio_map: Option<u64>,
    /// Lease of a remote-address-space member in milliseconds: a member silent for this long
    /// (no heartbeat, no slow-path request) is removed; the last one's removal tears its RAS
    /// down.
    #[arg(long, default_value_t = clio_proto::consts::DEFAULT_LEASE_MS)]
    lease_ms: u64,
    /// Bytes of Clio-KV's store, which the daemon sets up in a RAS of its own at start
    /// (docs/offloads.md) and announces to the fast path; 0: no store (KV requests are then
    /// answered UNSUPPORTED). The store lives as long as the daemon: a restart builds a new,
    /// empty one.
    #[arg(long, default_value_t = clio_proto::kv::DEFAULT_STORE_BYTES)]
    kv_store_bytes: u64,
    /// Seconds to wait for the fast path to initialise the window.
    #[arg(long, default_value_t = 10.0)]
    wait_secs: f64,
    /// Microseconds to sleep when a poll found no work.
    #[arg(long, default_value_t = 20)]
    idle_sleep_us: u64,
    /// Print counters when stopping.
    #[arg(long)]
    stats: bool,
    #[command(flatten)]
    limits: clio_slowpath::limits::LimitArgs,
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

/// The system's page size (AT_PAGESZ of the auxiliary vector): UIO map N lies at mmap
/// offset N x page size.
fn page_size() -> Result<u64> {
    const AT_PAGESZ: u64 = 6;
    let auxv = std::fs::read("/proc/self/auxv").context("reading /proc/self/auxv")?;
    auxv.chunks_exact(16)
        .map(|e| {
            let word = |b: &[u8]| u64::from_ne_bytes(b.try_into().expect("8 bytes"));
            (word(&e[..8]), word(&e[8..]))
        })
        .find(|&(key, _)| key == AT_PAGESZ)
        .map(|(_, value)| value)
        .context("no AT_PAGESZ in /proc/self/auxv")
}

/// The node's DRAM as device memory (`--dram-uio-map`): the board's PL DDR4 aperture mapped
/// from a UIO device, which maps it uncached (Device-nGnRnE on AArch64). Only aligned,
/// volatile stores touch it.
struct DeviceDram {
    map: MmapMut,
}

impl DeviceDram {
    /// Map `bytes` of UIO map `map_index` of `path` (or of a regular file, from offset
    /// `map_index` x page size, which must hold them).
    fn open(path: &Path, map_index: u64, bytes: u64) -> Result<DeviceDram> {
        let f = OpenOptions::new().read(true).write(true).open(path)?;
        let offset = if map_index == 0 {
            0
        } else {
            map_index
                .checked_mul(page_size()?)
                .context("UIO map index out of range")?
        };
        let meta = f.metadata()?;
        if meta.is_file() && meta.len() < offset + bytes {
            bail!(
                "{} holds {} bytes, the node has {} bytes of DRAM after offset {}",
                path.display(),
                meta.len(),
                bytes,
                offset
            );
        }
        let len = usize::try_from(bytes).context("DRAM size does not fit the address space")?;
        // SAFETY: the aperture is shared with the fast path by design; the slow path only
        // writes frames no process owns (freed, not yet handed out), as with MappedMemory.
        let map = unsafe { MmapOptions::new().offset(offset).len(len).map_mut(&f)? };
        Ok(DeviceDram { map })
    }
}

/// Zero `mem` with volatile stores: single bytes up to 8-byte alignment, 8-byte words, single
/// bytes after the last word. Volatile, so the compiler neither turns the loop into a memset
/// call (whose DC ZVA is an alignment fault on device memory) nor merges or drops stores.
fn clear_device(mem: &mut [u8]) {
    let p = mem.as_mut_ptr();
    let len = mem.len();
    let head = p.align_offset(8).min(len);
    let words = (len - head) / 8;
    // SAFETY: every store is inside `mem`; the word stores are 8-byte aligned (after `head`).
    unsafe {
        for i in 0..head {
            p.add(i).write_volatile(0);
        }
        let w = p.add(head) as *mut u64;
        for i in 0..words {
            w.add(i).write_volatile(0);
        }
        for i in head + 8 * words..len {
            p.add(i).write_volatile(0);
        }
    }
}

impl FrameMemory for DeviceDram {
    fn zero(&mut self, pa: u64, len: u64) -> bool {
        let Some(end) = pa.checked_add(len) else {
            return false;
        };
        if end > self.map.len() as u64 {
            return false;
        }
        clear_device(&mut self.map[pa as usize..end as usize]);
        true
    }
    /// The DRAM aperture is not a persistence domain.
    fn persist(&mut self, _pa: u64, _len: u64) -> bool {
        false
    }
    fn is_persistent(&self) -> bool {
        false
    }
    /// Transactions need a persistence domain, which this aperture is not (TxLog is refused
    /// before any record is read), so the slow path never reads or writes data here.
    fn read(&self, _pa: u64, _buf: &mut [u8]) -> bool {
        false
    }
    fn write(&mut self, _pa: u64, _data: &[u8]) -> bool {
        false
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
    let context = || format!("mapping the node's DRAM from {}", dram_path.display());
    let (mut file_mem, mut dev_mem) = match args.dram_uio_map {
        Some(map) => (
            None,
            Some(DeviceDram::open(&dram_path, map, layout.dram_bytes).with_context(context)?),
        ),
        None => (
            Some(
                MappedMemory::open(
                    &dram_path,
                    args.dram_offset,
                    layout.dram_bytes,
                    args.persistent,
                )
                .with_context(context)?,
            ),
            None,
        ),
    };
    let cfg = SlowPathConfig {
        lease: Duration::from_millis(args.lease_ms),
        limits: args.limits.limits().map_err(anyhow::Error::msg)?,
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
                let mem = file_mem
                    .as_mut()
                    .context("--persistent needs a DRAM file, not --dram-uio-map")?;
                let (sp, rep) =
                    SlowPath::recover(layout, cfg, log, &records, mem, fresh, Instant::now());
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
    let mem: &mut dyn FrameMemory = match (&mut file_mem, &mut dev_mem) {
        (Some(m), _) => m,
        (None, Some(d)) => d,
        (None, None) => unreachable!("one DRAM mapping is always made"),
    };
    if args.kv_store_bytes > 0 {
        if let Err(e) = sp.start_kv_store(args.kv_store_bytes, mem, Instant::now()) {
            eprintln!(
                "clio-slowpath: Clio-KV's store of {} bytes could not be set up ({e}); KV \
                 requests get {:?}",
                args.kv_store_bytes,
                e.status()
            );
        }
    }
    let idle = Duration::from_micros(args.idle_sleep_us);
    clio_slowpath::serve(&mut sp, &ring, mem, |_| std::thread::sleep(idle), |_| {});
    if args.stats {
        eprintln!("{:#?}", sp.stats());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn device_clear_zeroes_exactly_the_range() {
        let mut m = DeviceDram {
            map: MmapMut::map_anon(4 * 4096).unwrap(),
        };
        m.map.fill(0xA5);
        assert!(m.zero(4096, 8192));
        assert!(m.map[..4096].iter().all(|b| *b == 0xA5));
        assert!(m.map[4096..12288].iter().all(|b| *b == 0));
        assert!(m.map[12288..].iter().all(|b| *b == 0xA5));
        // unaligned head and tail (frames never are, but the store loop must not overrun)
        assert!(m.zero(12288 + 3, 21));
        assert!(m.map[12288..12291].iter().all(|b| *b == 0xA5));
        assert!(m.map[12291..12312].iter().all(|b| *b == 0));
        assert!(m.map[12312..].iter().all(|b| *b == 0xA5));
        assert!(!m.zero(12288, 8192), "past the end: refused");
        assert!(!m.zero(u64::MAX, 2), "overflow: refused");
        assert!(
            m.map[12312..].iter().all(|b| *b == 0xA5),
            "and nothing changed"
        );
        assert!(!m.persist(0, 4096) && !m.is_persistent());
    }

    #[test]
    fn uio_map_n_is_at_n_pages() {
        let page = page_size().unwrap();
        assert!(page.is_power_of_two() && page >= 4096, "page size {page}");
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(&vec![0xEEu8; 3 * page as usize]).unwrap();
        f.flush().unwrap();
        // map 1 starts one page in: clearing its first page clears the file's second page
        let mut m = DeviceDram::open(f.path(), 1, 2 * page).unwrap();
        assert!(m.zero(0, page));
        drop(m);
        let bytes = std::fs::read(f.path()).unwrap();
        let p = page as usize;
        assert!(bytes[..p].iter().all(|b| *b == 0xEE));
        assert!(bytes[p..2 * p].iter().all(|b| *b == 0));
        assert!(bytes[2 * p..].iter().all(|b| *b == 0xEE));
        // a file shorter than the DRAM after the map's offset is refused before mapping
        assert!(DeviceDram::open(f.path(), 1, 3 * page).is_err());
        assert!(DeviceDram::open(f.path(), 0, 3 * page).is_ok());
    }

    #[test]
    fn dram_uio_map_excludes_offset_and_persistence() {
        let base = [
            "clio-slowpath",
            "--uio",
            "/dev/clio-ring",
            "--dram-file",
            "/dev/clio-dram",
        ];
        let parse = |extra: &[&str]| Args::try_parse_from(base.iter().chain(extra.iter()));
        assert_eq!(
            parse(&["--dram-uio-map", "0"]).unwrap().dram_uio_map,
            Some(0)
        );
        assert!(parse(&["--dram-uio-map", "0", "--dram-offset", "4096"]).is_err());
        assert!(parse(&["--dram-uio-map", "0", "--persistent"]).is_err());
        assert_eq!(parse(&[]).unwrap().dram_uio_map, None);
    }
}
