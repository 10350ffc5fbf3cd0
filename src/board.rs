//! `clio board`: serve a memory node.

use crate::units::{human, parse_size};
use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use clio_sim::server::{spawn_raw, spawn_udp_serving, ServerHandle};
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What executes requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Backend {
    /// The behavioural CBoard model (the golden model).
    Model,
    /// The fast path's Verilog under Verilator (build with `--features rtl` after `make rtl`).
    #[cfg(feature = "rtl")]
    Rtl,
}

/// How the node is reached.
/// Which extend-path offloads a model node serves (`--offloads`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OffloadSet {
    /// Pointer chasing and Clio-KV.
    All,
    /// Those the RTL fast path has units for (`proto::offload::IN_HARDWARE`: pointer
    /// chasing, Clio-KV's get, put and delete; not the staged put of values over 956 bytes).
    Hardware,
    /// None: every extend opcode is answered UNSUPPORTED.
    None,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Transport {
    /// IPv4/UDP through kernel sockets (no root; the development default).
    Udp,
    /// Raw Ethernet frames on an interface through pnet (root or CAP_NET_RAW).
    Raw,
    /// Raw Ethernet frames through AF_XDP on one queue of an interface (root; Linux >= 5.9;
    /// UDP and other traffic on it still reach the kernel).
    Xdp,
}

/// Where the slow path runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SlowPath {
    /// On a thread of its own in this process, behind the same rings as on the board: data
    /// requests are never held up by allocation, teardown or frame clearing.
    Thread,
    /// Inside this process, stepped by the serving thread (deterministic; a long allocation
    /// holds every request up meanwhile, so only for tests and debugging).
    InProcess,
    /// A separate `clio-slowpath` process attached to a shared-memory ring file.
    External,
}

/// Arguments of `clio board`.
#[derive(Args, Debug)]
pub struct BoardArgs {
    /// What executes requests.
    #[arg(long, value_enum, default_value_t = Backend::Model)]
    backend: Backend,
    /// How clients reach the node.
    #[arg(long, value_enum, default_value_t = Transport::Udp)]
    transport: Transport,
    /// UDP address to listen on (port 0 picks a free port; the bound address is printed).
    #[arg(long, default_value = "127.0.0.1:48850")]
    listen: SocketAddr,
    /// Network interface for `--transport raw` (e.g. eth0 or a veth).
    #[arg(long)]
    iface: Option<String>,
    /// Interface queue for `--transport xdp` (0 on veth and single-queue devices).
    #[arg(long, default_value_t = 0)]
    queue: u32,
    /// Physical memory of the node (K/M/G/T suffixes). Sparse: only touched pages cost RAM.
    #[arg(long, default_value = "4G", value_parser = parse_size)]
    memory: u64,
    /// Page size, a power of two from 4K to 1G.
    #[arg(long, default_value = "4M", value_parser = parse_size)]
    page_size: u64,
    /// Back the node's DRAM with this file instead of anonymous memory (created sparse;
    /// the page table in it is cleared at start).
    #[arg(long)]
    memory_file: Option<PathBuf>,
    /// Where the slow path runs.
    #[arg(long, value_enum, default_value_t = SlowPath::Thread)]
    slowpath: SlowPath,
    /// Shared-memory ring file for `--slowpath external` (default: /dev/shm/clio-rings-<pid>).
    #[arg(long)]
    ring_file: Option<PathBuf>,
    /// With `--slowpath external`: start the `clio-slowpath` daemon found next to this
    /// executable (otherwise start it yourself with `clio-slowpath --ring-file PATH`; it maps
    /// the node's DRAM from PATH.dram, or give it `--dram-file` with --memory-file).
    #[arg(long)]
    spawn_slowpath: bool,
    /// Lease of a remote-address-space member, in milliseconds: a member that sends no
    /// heartbeat (CLib sends one every quarter lease) for this long is removed, and the last
    /// member's removal frees its RAS (memory, key, PID). Bounds how long a dead client holds
    /// memory and idempotence-ring slots.
    #[arg(long, default_value_t = clio_proto::consts::DEFAULT_LEASE_MS)]
    lease_ms: u64,
    #[command(flatten)]
    limits: clio_slowpath::limits::LimitArgs,
    /// etcd client address (e.g. 127.0.0.1:2379) of the pool this node joins: the node
    /// announces itself there (`/clio/pools/<pool>/nodes/<address>`, with its capacity) under
    /// a lease it renews, so the pool's clients (`MultiClient::connect_pool`) find it, and
    /// take it out of service as soon as it dies; and it follows the pool's view: each new
    /// epoch raises the address spaces pool clients fenced, so clients of an older view are
    /// refused (Stale). Needs --pool.
    #[arg(long, requires = "pool")]
    etcd: Option<SocketAddr>,
    /// Name of the pool to join (with --etcd).
    #[arg(long, requires = "etcd")]
    pool: Option<String>,
    /// Seconds of the node's lease in the pool: how long after the node dies its clients
    /// learn it from etcd (renewed three times per lease).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pool_lease_s: u64,
    /// Address the pool's clients reach this node at (default: the address it listens on;
    /// needed when that is 0.0.0.0).
    #[arg(long)]
    announce: Option<SocketAddr>,
    /// Stop after this many seconds (default: serve until Ctrl-C).
    #[arg(long)]
    duration: Option<f64>,
    /// Print counters every N seconds while serving.
    #[arg(long)]
    stats_every: Option<f64>,
    /// UDP: microseconds the serving loop spins for the next datagram before it blocks.
    /// Spinning saves a wake-up per request when requests come back to back; 0 leaves the
    /// CPU to others at once (better when the node shares few cores with its clients).
    #[arg(long, default_value_t = clio_sim::server::UDP_SPIN.as_micros() as u64)]
    spin_us: u64,
    /// UDP: threads that receive, run and answer data requests, each on a socket of its own
    /// bound to the one address (SO_REUSEPORT; the kernel keeps each client lane on one
    /// thread). They share one node, so every answer is one the single-threaded model could
    /// give. The slow path keeps a thread of its own beside them. Default: half of this
    /// host's cores, at least 1 and at most 8.
    #[arg(long, default_value_t = default_threads(), value_parser = clap::value_parser!(u16).range(1..=64))]
    threads: u16,
    /// Model: the extend path's offloads to serve: `all` (pointer chasing and Clio-KV),
    /// `hardware` (those the RTL fast path has units for: pointer chasing and Clio-KV's get,
    /// put and delete) or `none`. An extend opcode not served is answered UNSUPPORTED. The RTL
    /// backend serves what its hardware has.
    #[arg(long, value_enum, default_value_t = OffloadSet::All)]
    offloads: OffloadSet,
    /// Bytes of Clio-KV's region in its own address space (K/M/G suffixes), which the slow
    /// path allocates, maps and formats at start (either backend; passed to a spawned
    /// daemon); it holds about size / 1112 keys of up to 1024-byte values. 0: no store.
    #[arg(long, default_value = "16M", value_parser = parse_size)]
    kv_store_size: u64,
    /// With `--backend rtl`: write a VCD waveform of the whole run to this file (large!).
    #[cfg(feature = "rtl")]
    #[arg(long)]
    vcd: Option<PathBuf>,
    /// With `--backend rtl`: DRAM read latency in clock cycles.
    #[cfg(feature = "rtl")]
    #[arg(long, default_value_t = 20)]
    dram_latency: u64,
}

/// The quota flags of `clio board`, passed on to a spawned daemon as given.
fn limit_flags(l: &clio_slowpath::limits::LimitArgs) -> Vec<std::ffi::OsString> {
    use clio_proto::quota::Quota;
    let mut v: Vec<std::ffi::OsString> = vec![
        Quota::RasPerSource.flag().into(),
        l.max_ras_per_source.to_string().into(),
        Quota::PlacementWork.flag().into(),
        l.placement_budget.to_string().into(),
        Quota::RingShare.flag().into(),
        l.ring_share.to_string().into(),
    ];
    if let Some(m) = l.max_ras_memory {
        v.extend([Quota::MemoryPerRas.flag().into(), m.to_string().into()]);
    }
    if let Some(n) = l.max_ras_kv_records {
        v.extend([Quota::KvRecords.flag().into(), n.to_string().into()]);
    }
    if let Some(p) = &l.admission_secret_file {
        v.extend(["--admission-secret-file".into(), p.clone().into_os_string()]);
    }
    v
}

fn daemon_path() -> Result<PathBuf> {
    let exe = std::env::current_exe().context("locating this executable")?;
    let p = exe.with_file_name("clio-slowpath");
    if !p.exists() {
        bail!("{} not found; build it with `cargo build -p clio-slowpath` or start the daemon yourself", p.display());
    }
    Ok(p)
}

/// Serve until Ctrl-C or `--duration`.
pub fn run(a: BoardArgs) -> Result<()> {
    if !a.page_size.is_power_of_two() {
        bail!("--page-size must be a power of two (got {})", a.page_size);
    }
    let page_shift = a.page_size.trailing_zeros();
    let ring_file = a
        .ring_file
        .clone()
        .unwrap_or_else(|| PathBuf::from(format!("/dev/shm/clio-rings-{}", std::process::id())));
    let slowpath = match a.slowpath {
        SlowPath::InProcess | SlowPath::Thread => {
            if a.spawn_slowpath || a.ring_file.is_some() {
                bail!("--spawn-slowpath and --ring-file need --slowpath external");
            }
            if a.slowpath == SlowPath::Thread {
                SlowPathMode::Thread
            } else {
                SlowPathMode::InProcess
            }
        }
        SlowPath::External => SlowPathMode::External {
            ring_file: ring_file.clone(),
        },
    };
    if a.lease_ms == 0 {
        bail!("--lease-ms must be positive");
    }
    let cfg = BoardConfig {
        dram_bytes: a.memory,
        page_shift,
        memory_file: a.memory_file.clone(),
        slowpath,
        lease: Duration::from_millis(a.lease_ms),
        offloads: match a.offloads {
            OffloadSet::None => clio_sim::Offloads::None,
            OffloadSet::Hardware => clio_sim::Offloads::Hardware,
            OffloadSet::All => clio_sim::Offloads::All,
        },
        kv_store_bytes: a.kv_store_size,
        limits: a.limits.limits().map_err(anyhow::Error::msg)?,
        ..BoardConfig::default()
    };
    // With an external slow path and no memory file, DRAM lives in a file beside the rings
    // (the daemon maps it to clear frames); it goes when the node stops.
    let dram_file = match (&cfg.memory_file, &cfg.slowpath) {
        (Some(p), _) => Some(p.clone()),
        (None, SlowPathMode::External { ring_file }) => {
            Some(clio_sim::model::board::dram_file_for(ring_file))
        }
        (None, SlowPathMode::InProcess | SlowPathMode::Thread | SlowPathMode::Absent) => None,
    };
    let layout = clio_proto::layout::MemoryLayout::new(cfg.dram_bytes, cfg.page_shift)
        .context("memory geometry")?;
    let started = std::time::Instant::now();
    // What recovery found in the memory file, and how long starting took.
    type Node = Box<dyn clio_sim::MemoryNode>;
    let (board, recovered): (Node, _) = match a.backend {
        Backend::Model => {
            let b = CBoard::new(&cfg).context("starting the memory node")?;
            let r = b.recovery().map(|r| (r, started.elapsed()));
            (Box::new(b), r)
        }
        #[cfg(feature = "rtl")]
        Backend::Rtl => {
            let b = clio_sim::cosim::RtlBoard::new(&cfg, a.dram_latency, a.vcd.as_deref())
                .context("starting the cosimulated memory node")?;
            let r = b.recovery().map(|r| (r, started.elapsed()));
            (Box::new(b), r)
        }
    };

    // The register through which the node's side of the pool reaches its slow path.
    let ring_window = board.ring_window();

    // The store is the slow path's to set up; only when the node serves Clio-KV.
    let kv_store_bytes = if cfg.offloads.serves(clio_proto::Opcode::KvGet) {
        a.kv_store_size
    } else {
        0
    };
    let mut daemon: Option<Child> = None;
    if a.slowpath == SlowPath::External && a.spawn_slowpath {
        let p = daemon_path()?;
        daemon = Some(
            Command::new(&p)
                .arg("--ring-file")
                .arg(&ring_file)
                .args(
                    dram_file
                        .iter()
                        .flat_map(|f| [std::ffi::OsStr::new("--dram-file"), f.as_os_str()]),
                )
                .arg("--lease-ms")
                .arg(a.lease_ms.to_string())
                .arg("--kv-store-bytes")
                .arg(kv_store_bytes.to_string())
                .args(a.memory_file.iter().map(|_| "--persistent"))
                .args(limit_flags(&a.limits))
                .spawn()
                .with_context(|| format!("starting {}", p.display()))?,
        );
    }

    let server: ServerHandle = match a.transport {
        Transport::Udp => spawn_udp_serving(
            board,
            a.listen,
            Duration::from_micros(a.spin_us),
            clio_clib::transport::mmsg::offload_wanted(),
            a.threads.into(),
        )?,
        Transport::Raw => {
            let iface = a
                .iface
                .as_deref()
                .context("--transport raw needs --iface NAME")?;
            spawn_raw(board, iface, a.listen.port())?
        }
        Transport::Xdp => {
            let iface = a
                .iface
                .as_deref()
                .context("--transport xdp needs --iface NAME")?;
            clio_sim::xdp_server::spawn_xdp(board, iface, a.queue)?
        }
    };
    // Announced before the node says it listens, so whoever waits for that line finds it
    // in the pool. Held until the node stops: dropping it revokes the lease, so clients
    // learn at once.
    let announcement = match (&a.etcd, &a.pool) {
        (Some(etcd), Some(pool)) => {
            let addr = match a.announce {
                Some(addr) => addr,
                None => server.local.parse::<SocketAddr>().with_context(|| {
                    format!(
                        "the node serves on {}: give --announce IP:PORT",
                        server.local
                    )
                })?,
            };
            if addr.ip().is_unspecified() {
                bail!("the node listens on {addr}: give --announce with the address clients reach it at");
            }
            let capacity = layout.data_pages * layout.page_size();
            let ann = clio_confmgr::Announcement::start(
                clio_confmgr::Etcd::new(*etcd),
                pool,
                addr,
                capacity,
                Duration::from_secs(a.pool_lease_s),
            )
            .with_context(|| format!("announcing the node in pool {pool} at etcd {etcd}"))?;
            Some((
                ann,
                format!(
                    "  in pool {pool} (etcd {etcd}) as {addr}, {} for clients, lease {} s",
                    human(capacity),
                    a.pool_lease_s
                ),
            ))
        }
        _ => None,
    };
    // The node follows its pool's view too: every new epoch goes to the slow path
    // (`reg::POOL_EPOCH`), which raises the RASes that pool clients fenced, so a node taken
    // out of service refuses the old view's clients even when none of them reaches it.
    let _view_watch = match (&a.etcd, &a.pool, ring_window) {
        (Some(etcd), Some(pool), Some(ring)) => Some(
            follow_pool_epoch(*etcd, pool, ring)
                .with_context(|| format!("watching pool {pool}'s view at etcd {etcd}"))?,
        ),
        _ => None,
    };

    println!("clio board: listening on {}", server.local);
    if let Some((_, line)) = &announcement {
        println!("{line}");
    }
    if let (Some(file), Some((r, took))) = (&a.memory_file, recovered) {
        println!(
            "  recovered {} in {:.1} ms: {} spaces, {} members, {} regions, {} mapped pages, \
             {} transaction logs ({} records applied, {} dropped); repaired {} PTEs, cleared {}",
            file.display(),
            took.as_secs_f64() * 1e3,
            r.spaces,
            r.members,
            r.regions,
            r.mapped_pages,
            r.tx_logs,
            r.tx_applied,
            r.tx_dropped,
            r.ptes_rewritten,
            r.ptes_cleared
        );
    }
    println!(
        "  backend {:?}, {} serving thread(s), {} DRAM, {} pages ({} data pages, {} page-table \
         buckets), slow path {}",
        a.backend,
        server.threads(),
        human(layout.dram_bytes),
        human(layout.page_size()),
        layout.data_pages,
        layout.bucket_count(),
        match a.slowpath {
            SlowPath::Thread => "on its own thread".to_string(),
            SlowPath::InProcess => "in-process (stepped by the serving thread)".to_string(),
            SlowPath::External => format!("external via {}", ring_file.display()),
        }
    );

    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    ctrlc::set_handler(move || s.store(true, Ordering::Release))
        .context("installing the Ctrl-C handler")?;
    let start = Instant::now();
    let mut last_stats = Instant::now();
    while !stop.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(20));
        if a.duration
            .is_some_and(|d| start.elapsed().as_secs_f64() >= d)
        {
            break;
        }
        if let Some(every) = a.stats_every {
            if last_stats.elapsed().as_secs_f64() >= every {
                last_stats = Instant::now();
                let b = server.board();
                let c = b.lock().map(|g| g.counters()).unwrap_or_default();
                println!("{c:?}");
            }
        }
        if let Some(d) = daemon.as_mut() {
            if let Ok(Some(status)) = d.try_wait() {
                bail!(
                    "the slow-path daemon exited ({status}); the node cannot allocate without it"
                );
            }
        }
    }
    let board = server.board();
    let counters = board.lock().map(|g| g.counters()).unwrap_or_default();
    let slow_stats = board.lock().ok().and_then(|g| g.slowpath_stats());
    if let Ok(g) = board.lock() {
        g.request_daemon_stop();
    }
    server.stop()?;
    if let Some(mut d) = daemon {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline && matches!(d.try_wait(), Ok(None)) {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = d.kill();
        let _ = d.wait();
    }
    if a.ring_file.is_none() && a.slowpath == SlowPath::External {
        let _ = std::fs::remove_file(&ring_file);
    }
    if a.memory_file.is_none() {
        if let Some(f) = &dram_file {
            let _ = std::fs::remove_file(f);
        }
    }
    println!("clio board: stopped. {counters:#?}");
    if let Some(s) = slow_stats {
        println!("slow path: {s:#?}");
    }
    Ok(())
}

/// Publish the epoch of `pool`'s view in the ring window's `POOL_EPOCH` register now and at
/// every change of the view (a watch on etcd, held by the returned guard).
fn follow_pool_epoch(
    etcd: SocketAddr,
    pool: &str,
    ring: Arc<clio_slowpath::RingWindow>,
) -> Result<Box<dyn clio_clib::WatchGuard>> {
    use clio_proto::ring::reg;
    let pool = clio_clib::Pool {
        store: clio_confmgr::EtcdStore::new(etcd),
        name: pool.to_string(),
    };
    let publish = {
        let pool = pool.clone();
        move || {
            // A view that cannot be read now is read at the next change.
            if let Ok(v) = pool.view() {
                let e = clio_proto::epoch::wire(v.epoch) as u32;
                ring.reg(reg::POOL_EPOCH).store(e, Ordering::Release);
            }
            true
        }
    };
    publish();
    Ok(pool.store.watch(&pool.view_key(), Box::new(publish))?)
}

/// `--threads` by default: half of this host's cores (the other half for whatever shares
/// the host: clients in development, the OS), at least 1, at most 8.
pub(crate) fn default_threads() -> u16 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 2).clamp(1, 8) as u16
}
