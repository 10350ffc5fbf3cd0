//! `clio app image`: the paper's Figure 15. A model node serves UDP on loopback in this
//! process; the synthetic originals are uploaded once into an `ImageStore` of this process's
//! remote address space. For each client count, that many OS processes (this executable's
//! hidden `clio app image-worker`, one process per client as in the paper) join the address
//! space, wait at a common start, and for `--seconds` compress and decompress their share of
//! the images (image `i` belongs to client `i mod clients`, taken round and round). Each then
//! checks, untimed, that every image of its share decodes to its original, and reports.
//! Per-client and aggregate throughput (images compressed and decompressed per second), CSV.
//!
//! The protocol between this process and a worker is lines on its stdin/stdout: the
//! credentials of the address space go in (never on a command line), `ready` comes out once
//! joined, `go` goes in, `done IMAGES SECONDS COMPRESSED_BYTES` comes out.

use anyhow::{bail, ensure, Context, Result};
use clio_apps::image::{
    compress_one, decompress_one, read_original, upload_synthetic, ImageStore, IMAGE_BYTES,
};
use clio_clib::{Client, Credentials};
use clio_sim::server::spawn_udp_spinning;
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use indicatif::{ProgressBar, ProgressStyle};
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// `clio app image` options.
#[derive(clap::Args, Debug)]
pub(crate) struct ImageArgs {
    /// Client counts to measure (one OS process per client).
    #[arg(long, value_delimiter = ',', default_values_t = vec![1usize, 2, 4, 8])]
    clients: Vec<usize>,
    /// Original images in remote memory (256 x 256 RGB each); at least the largest client
    /// count, so every client has a share.
    #[arg(long, default_value_t = 32)]
    images: u64,
    /// Seconds each client compresses and decompresses, per point.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Directory for image.csv.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
}

/// `clio app image-worker` options (set by `clio app image`; the credentials come on stdin).
#[derive(clap::Args, Debug)]
pub(crate) struct ImageWorkerArgs {
    /// The node's UDP address.
    #[arg(long)]
    node: SocketAddr,
    /// Address of the originals' array.
    #[arg(long)]
    originals: u64,
    /// Address of the compressed array.
    #[arg(long)]
    compressed: u64,
    /// Images in the store.
    #[arg(long)]
    count: u64,
    /// This client's number, 0-based.
    #[arg(long)]
    client: u64,
    /// Clients in this point.
    #[arg(long)]
    clients: u64,
    /// Seconds to run.
    #[arg(long)]
    seconds: f64,
}

/// What one worker process reported.
struct WorkerReport {
    images: u64,
    seconds: f64,
    compressed_bytes: u64,
}

fn read_line(from: &mut impl BufRead, what: &str) -> Result<String> {
    let mut line = String::new();
    let n = from
        .read_line(&mut line)
        .with_context(|| format!("reading {what}"))?;
    ensure!(n > 0, "{what}: the other side closed");
    Ok(line.trim().to_string())
}

/// The hidden worker: one client process.
pub(crate) fn worker(a: ImageWorkerArgs) -> Result<()> {
    ensure!(
        a.clients > 0 && a.client < a.clients && a.seconds > 0.0,
        "bad worker arguments"
    );
    let mut input = std::io::stdin().lock();
    let creds: Credentials = read_line(&mut input, "credentials")?.parse()?;
    let c = Client::join_udp(a.node, creds)?;
    let store = ImageStore::open(a.originals, a.compressed, a.count)?;
    let share: Vec<u64> = (a.client..store.count())
        .step_by(a.clients as usize)
        .collect();
    ensure!(!share.is_empty(), "client {} has no images", a.client);
    let mut out = std::io::stdout().lock();
    writeln!(out, "ready")?;
    out.flush()?;
    let go = read_line(&mut input, "the start")?;
    ensure!(go == "go", "expected go, got {go:?}");
    let (start, limit) = (Instant::now(), Duration::from_secs_f64(a.seconds));
    let mut images = 0u64;
    for &index in share.iter().cycle() {
        compress_one(&c, &store, index)?;
        decompress_one(&c, &store, index)?;
        images += 1;
        if start.elapsed() >= limit {
            break;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let mut compressed_bytes = 0u64;
    for &index in &share {
        let decoded = decompress_one(&c, &store, index)?;
        ensure!(
            decoded == read_original(&c, &store, index)?,
            "image {index} does not decode to its original"
        );
        let len = c.rread(store.length_at(index), 8)?;
        compressed_bytes += u64::from_le_bytes(len[..].try_into().context("length word")?);
    }
    writeln!(out, "done {images} {seconds} {compressed_bytes}")?;
    out.flush()?;
    Ok(())
}

/// A running worker and the ends of its pipes.
struct WorkerProcess {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl WorkerProcess {
    fn say(&mut self, line: &str) -> Result<()> {
        writeln!(self.stdin, "{line}").context("writing to a worker")?;
        self.stdin.flush().context("writing to a worker")
    }
}

/// Run one point: `clients` worker processes, started together.
fn point(
    exe: &PathBuf,
    node: SocketAddr,
    creds: Credentials,
    store: &ImageStore,
    clients: usize,
    seconds: f64,
) -> Result<Vec<WorkerReport>> {
    let mut workers = Vec::with_capacity(clients);
    for k in 0..clients {
        let mut child = Command::new(exe)
            .args(["app", "image-worker", "--node", &node.to_string()])
            .args(["--originals", &store.originals().to_string()])
            .args(["--compressed", &store.compressed().to_string()])
            .args(["--count", &store.count().to_string()])
            .args([
                "--client",
                &k.to_string(),
                "--clients",
                &clients.to_string(),
            ])
            .args(["--seconds", &seconds.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("starting a worker process")?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("a worker without pipes");
        };
        let mut w = WorkerProcess {
            child,
            stdin,
            stdout: BufReader::new(stdout),
        };
        w.say(&creds.to_string())?;
        workers.push(w);
    }
    for w in &mut workers {
        let ready = read_line(&mut w.stdout, "a worker's ready")?;
        ensure!(ready == "ready", "a worker said {ready:?}");
    }
    for w in &mut workers {
        w.say("go")?;
    }
    let mut reports = Vec::with_capacity(clients);
    for mut w in workers {
        let done = read_line(&mut w.stdout, "a worker's result")?;
        let status = w.child.wait().context("waiting for a worker")?;
        ensure!(status.success(), "a worker failed: {status}");
        let fields: Vec<&str> = done.split_whitespace().collect();
        let [tag, images, secs, bytes] = fields[..] else {
            bail!("a worker said {done:?}");
        };
        ensure!(tag == "done", "a worker said {done:?}");
        reports.push(WorkerReport {
            images: images.parse()?,
            seconds: secs.parse()?,
            compressed_bytes: bytes.parse()?,
        });
    }
    Ok(reports)
}

pub(crate) fn run(a: ImageArgs) -> Result<()> {
    let most = a.clients.iter().copied().max().unwrap_or(0);
    if a.clients.contains(&0)
        || most as u64 > a.images
        || !(a.seconds.is_finite() && a.seconds > 0.0)
    {
        bail!("--clients must be positive and at most --images; --seconds positive");
    }
    let cfg = BoardConfig {
        dram_bytes: 1 << 30,
        page_shift: 22,
        slowpath: SlowPathMode::InProcess,
        ..BoardConfig::default()
    };
    // The node blocks when idle instead of spinning: the clients need the cores.
    let server = spawn_udp_spinning(CBoard::new(&cfg)?, "127.0.0.1:0".parse()?, Duration::ZERO)?;
    let node = server.udp_addr.context("node without a UDP address")?;
    let owner = Client::connect_udp(node)?;
    let store = ImageStore::create(&owner, a.images)?;
    let t0 = Instant::now();
    upload_synthetic(&owner, &store, 1)?;
    let uploaded = t0.elapsed();
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let exe = std::env::current_exe().context("locating this executable")?;
    println!(
        "clio app image: {} originals of 256x256 RGB ({} KiB each, uploaded once in {:.2} s), {} s per point, one process per client, node model over UDP loopback",
        a.images,
        IMAGE_BYTES / 1024,
        uploaded.as_secs_f64(),
        a.seconds
    );
    let pb = ProgressBar::new(a.clients.len() as u64);
    pb.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} {msg}")?
            .progress_chars("=> "),
    );
    let mut csv = String::from(
        "clients,per_client_mean_img_s,per_client_min_img_s,aggregate_img_s,mean_ms_per_image,compressed_ratio\n",
    );
    let mut table = Vec::new();
    for &k in &a.clients {
        pb.set_message(format!("{k} client processes"));
        let reports = point(&exe, node, owner.credentials(), &store, k, a.seconds)?;
        let rates: Vec<f64> = reports
            .iter()
            .map(|r| r.images as f64 / r.seconds)
            .collect();
        let aggregate: f64 = rates.iter().sum();
        let mean = aggregate / k as f64;
        let min = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let ms = 1e3 / mean;
        let bytes: u64 = reports.iter().map(|r| r.compressed_bytes).sum();
        let ratio = bytes as f64 / (a.images as f64 * IMAGE_BYTES as f64);
        writeln!(
            csv,
            "{k},{mean:.2},{min:.2},{aggregate:.2},{ms:.3},{ratio:.4}"
        )?;
        table.push(format!(
            "{k:>7} | {mean:>10.1} {min:>10.1} | {aggregate:>12.1} | {ms:>8.2} | {ratio:>6.3}"
        ));
        pb.inc(1);
    }
    pb.finish_and_clear();
    println!(
        "{:>7} | {:>10} {:>10} | {:>12} | {:>8} | {:>6}",
        "clients", "img/s/cl", "min", "aggregate", "ms/img", "ratio"
    );
    for row in table {
        println!("{row}");
    }
    std::fs::write(a.out.join("image.csv"), csv)?;
    println!("wrote {}/image.csv (an image: compressed and decompressed once; ratio: compressed/original bytes)", a.out.display());
    drop(owner);
    server.stop()?;
    Ok(())
}
