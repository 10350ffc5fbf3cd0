//! `clio app ...`: the applications of `clio-apps` against a memory node, measured.
//!
//! `clio app radix`: the paper's Figure 16. A radix tree of random 32-bit keys is built in
//! remote memory for each size, then the same random lookups run two ways, interleaved: with
//! the node's pointer-chasing offload (one request per level) and from the compute node (one
//! read per node visited). Latency per size, requests per lookup, CSV.
//!
//! `clio app image`: the paper's Figure 15, in [`image`].

mod image;

use crate::bench::{hist, quantiles, Hist};
use anyhow::{bail, Context, Result};
use clio_apps::radix::RadixTree;
use clio_clib::Client;
use clio_sim::server::spawn_udp;
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;

/// Applications on remote memory.
#[derive(clap::Subcommand, Debug)]
pub(crate) enum AppCmd {
    /// Radix tree lookups with the pointer-chasing offload vs from the compute node, latency
    /// vs tree size (Clio Figure 16). Node model in this process over UDP loopback.
    Radix(RadixArgs),
    /// Image compression: one OS process per client compresses and decompresses images held
    /// in remote arrays; per-client and aggregate throughput vs clients (Clio Figure 15).
    /// Node model in this process over UDP loopback.
    Image(image::ImageArgs),
    /// One client process of `clio app image` (started by it).
    #[command(hide = true)]
    ImageWorker(image::ImageWorkerArgs),
}

/// `clio app radix` options.
#[derive(clap::Args, Debug)]
pub(crate) struct RadixArgs {
    /// Tree sizes (keys) to measure.
    #[arg(long, value_delimiter = ',', default_values_t = vec![100u64, 1_000, 10_000, 100_000])]
    entries: Vec<u64>,
    /// Lookups per size and search (keys present in the tree).
    #[arg(long, default_value_t = 2000)]
    lookups: u64,
    /// Directory for radix.csv.
    #[arg(long, default_value = "bench-out")]
    out: PathBuf,
    /// Use the node at this UDP address (for example `clio board --backend rtl`, whose
    /// fast path has the pointer-chasing unit) instead of a node model in this process.
    #[arg(long)]
    node: Option<std::net::SocketAddr>,
}

pub(crate) fn run(c: AppCmd) -> Result<()> {
    match c {
        AppCmd::Radix(a) => radix(a),
        AppCmd::Image(a) => image::run(a),
        AppCmd::ImageWorker(a) => image::worker(a),
    }
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn radix(a: RadixArgs) -> Result<()> {
    if a.entries.iter().any(|&n| n == 0 || n > 4_000_000) || a.lookups == 0 {
        bail!("--entries must be 1..=4,000,000 and --lookups positive");
    }
    let cfg = BoardConfig {
        dram_bytes: 2 << 30,
        page_shift: 22,
        slowpath: SlowPathMode::InProcess,
        offloads: clio_sim::Offloads::All,
        ..BoardConfig::default()
    };
    // The node: the one given, else a model in this process (kept alive to the end).
    let (addr, server, node_desc) = match a.node {
        Some(addr) => (addr, None, format!("the node at {addr}")),
        None => {
            let server = spawn_udp(CBoard::new(&cfg)?, "127.0.0.1:0".parse()?)?;
            let addr = server.udp_addr.context("node without a UDP address")?;
            (
                addr,
                Some(server),
                String::from("node model over UDP loopback"),
            )
        }
    };
    let c = Client::connect_udp(addr)?;
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let mut csv =
        String::from("entries,nodes,search,median_us,p99_us,p999_us,requests_per_lookup\n");
    println!(
        "clio app radix: 32-bit keys, 4 levels, {} lookups per size and search, {node_desc}",
        a.lookups
    );
    println!(
        "{:>9} {:>9} | {:>28} | {:>28} | {:>7}",
        "entries",
        "nodes",
        "offload: median p99 (req/lk)",
        "from CN: median p99 (req/lk)",
        "CN/off"
    );
    let mut seed = 0x2545_F491_4F6C_DD1Du64;
    for &n in &a.entries {
        let mut entries = BTreeMap::new();
        while (entries.len() as u64) < n {
            let k = xorshift(&mut seed) as u32;
            entries.insert(k, entries.len() as u64 + 1);
        }
        let t0 = Instant::now();
        let tree = RadixTree::build(&c, &entries)?;
        let built = t0.elapsed();
        let keys: Vec<(u32, u64)> = entries.iter().map(|(&k, &v)| (k, v)).collect();
        let (mut ho, mut hc): (Hist, Hist) = (hist()?, hist()?);
        let (mut ro, mut rc) = (0u64, 0u64);
        for i in 0..a.lookups {
            let (k, v) = keys[(xorshift(&mut seed) % keys.len() as u64) as usize];
            // Interleaved: host noise falls on both alike.
            let order = i % 2 == 0;
            for offloaded in [order, !order] {
                let t = Instant::now();
                let (got, cost) = if offloaded {
                    tree.get_offloaded(&c, k)?
                } else {
                    tree.get_from_cn(&c, k)?
                };
                let ns = t.elapsed().as_nanos().max(1) as u64;
                if got != Some(v) {
                    bail!("lookup of {k:#x} returned {got:?}, stored {v}");
                }
                if offloaded {
                    ho.record(ns)?;
                    ro += cost.requests;
                } else {
                    hc.record(ns)?;
                    rc += cost.requests;
                }
            }
        }
        let (om, o99, o999) = quantiles(&ho);
        let (cm, c99, c999) = quantiles(&hc);
        let (rpo, rpc) = (ro as f64 / a.lookups as f64, rc as f64 / a.lookups as f64);
        println!(
            "{n:>9} {:>9} | {om:>8.1} us {o99:>8.1} ({rpo:>5.1}) | {cm:>8.1} us {c99:>8.1} ({rpc:>5.1}) | {:>6.1}x   (built in {:.2} s)",
            tree.nodes(),
            cm / om,
            built.as_secs_f64()
        );
        writeln!(
            csv,
            "{n},{},offload,{om:.2},{o99:.2},{o999:.2},{rpo:.2}",
            tree.nodes()
        )?;
        writeln!(
            csv,
            "{n},{},cn,{cm:.2},{c99:.2},{c999:.2},{rpc:.2}",
            tree.nodes()
        )?;
    }
    std::fs::write(a.out.join("radix.csv"), csv)?;
    println!("wrote {}/radix.csv", a.out.display());
    drop(c);
    if let Some(server) = server {
        server.stop()?;
    }
    Ok(())
}
