//! `clio bench --transports udp,raw,xdp`: the same synchronous read latencies over each
//! transport, across a veth pair between two network namespaces (node in one, CLib in the
//! other; both in this process, one thread each side), in one run. Rounds interleave the
//! transports (a node and a client per transport per round, torn down before the next) so
//! that host noise falls on all of them alike. Needs root.

use super::harness::{hist, load_average, quantiles, throughput_outstanding, time_ops, Hist};
use super::BenchArgs;
use anyhow::{bail, Context, Result};
use clio_clib::transport::{RawEthernetTransport, Transport, UdpTransport, XdpTransport};
use clio_clib::{Client, Config};
use clio_sim::server::{spawn_raw, spawn_udp, ServerHandle};
use clio_sim::xdp_server::{spawn_xdp, NetnsPair, Side};
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use std::fmt::Write as _;
use std::net::SocketAddr;

/// A transport `clio bench --transports` measures.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// IPv4/UDP through kernel sockets.
    Udp,
    /// Raw Ethernet through pnet (AF_PACKET).
    Raw,
    /// Raw Ethernet through AF_XDP (UMEM rings; copy mode on veth).
    Xdp,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Udp => "udp",
            Kind::Raw => "raw",
            Kind::Xdp => "xdp",
        }
    }
}

/// Node and client for `kind` across `pair`.
fn open(pair: &NetnsPair, kind: Kind) -> Result<(ServerHandle, Box<dyn Transport>)> {
    let cfg = BoardConfig {
        dram_bytes: 1 << 30,
        page_shift: 22,
        slowpath: SlowPathMode::InProcess,
        ..BoardConfig::default()
    };
    let board = CBoard::new(&cfg)?;
    let server = {
        let _b = pair.enter(Side::B)?;
        match kind {
            Kind::Udp => spawn_udp(board, SocketAddr::from((pair.ip(Side::B), 0)))?,
            Kind::Raw => spawn_raw(board, pair.iface, 0)?,
            Kind::Xdp => spawn_xdp(board, pair.iface, 0)?,
        }
    };
    let _a = pair.enter(Side::A)?;
    let node_mac = pair.mac(Side::B);
    let t: Box<dyn Transport> = match kind {
        Kind::Udp => Box::new(UdpTransport::connect(
            server.udp_addr.context("UDP node without an address")?,
        )?),
        Kind::Raw => Box::new(RawEthernetTransport::open(pair.iface, node_mac)?),
        Kind::Xdp => Box::new(XdpTransport::open(pair.iface, node_mac, 0)?),
    };
    Ok((server, t))
}

/// Run the comparison.
pub(crate) fn run(a: &BenchArgs) -> Result<()> {
    let kinds = &a.transports;
    if a.sizes.iter().any(|&s| s == 0 || s > 1 << 20) {
        bail!("--sizes must be between 1 and 1 MiB");
    }
    let rounds = a.rounds.max(1);
    let per_round = (a.iters / rounds).max(1);
    std::fs::create_dir_all(&a.out).with_context(|| format!("creating {}", a.out.display()))?;
    let pair = NetnsPair::create("bench").context(
        "creating two network namespaces joined by a veth pair (needs root and iproute2)",
    )?;
    let load_before = load_average();
    let mut h: Vec<Vec<Hist>> = kinds
        .iter()
        .map(|_| a.sizes.iter().map(|_| hist()).collect())
        .collect::<Result<_>>()?;
    let mut notes: Vec<String> = vec![String::new(); kinds.len()];
    // Throughput with the deepest `--outstanding` asynchronous 64 B reads, per round.
    let depth = a.outstanding.iter().copied().max().unwrap_or(64).max(1);
    let secs = (a.seconds / rounds as f64).max(0.2);
    let mut tput: Vec<Vec<f64>> = vec![Vec::new(); kinds.len()];
    let maxsize = a.sizes.iter().copied().max().unwrap_or(16);
    let data = vec![0x5Au8; maxsize];
    for round in 0..rounds {
        for (k, &kind) in kinds.iter().enumerate() {
            let (server, t) = open(&pair, kind)
                .with_context(|| format!("opening the {} transport", kind.name()))?;
            let c = Client::connect(t, Config::default())
                .with_context(|| format!("registering over {}", kind.name()))?;
            let va = c.ralloc(4 << 20)?;
            c.rwrite(va, &data)?;
            time_ops((per_round / 10).max(100), |_| {
                c.rread(va, 64)?;
                Ok(())
            })?;
            for (s, &size) in a.sizes.iter().enumerate() {
                let r = time_ops(per_round, |_| {
                    c.rread(va, size)?;
                    Ok(())
                })?;
                h[k][s].add(&r)?;
            }
            tput[k].push(throughput_outstanding(&c, va, depth, secs)?);
            let st = c.stats();
            if round == 0 {
                notes[k] = server.local.clone();
            }
            notes[k] = format!(
                "{} | last round: {} requests, {} retransmits",
                notes[k].split(" | ").next().unwrap_or(""),
                st.requests,
                st.retransmits
            );
            drop(c);
            server.stop()?;
        }
    }
    let load_after = load_average();

    let mut csv = String::from("transport,size_bytes,median_us,p99_us,p999_us,ops\n");
    let mut table = String::from("| size |");
    for k in kinds {
        write!(table, " {} median | {} p99 |", k.name(), k.name())?;
    }
    table.push_str("\n|---:|");
    for _ in kinds {
        table.push_str("---:|---:|");
    }
    table.push('\n');
    for (s, &size) in a.sizes.iter().enumerate() {
        write!(table, "| {size} B |")?;
        for (k, kind) in kinds.iter().enumerate() {
            let (m, p99, p999) = quantiles(&h[k][s]);
            writeln!(
                csv,
                "{},{size},{m:.2},{p99:.2},{p999:.2},{}",
                kind.name(),
                h[k][s].len()
            )?;
            write!(table, " {m:.1} us | {p99:.1} us |")?;
        }
        table.push('\n');
    }
    let mut tline = format!(
        "{depth} outstanding async 64 B reads, one thread (mean of {rounds} x {secs:.1} s):"
    );
    for (k, kind) in kinds.iter().enumerate() {
        let mean = tput[k].iter().sum::<f64>() / tput[k].len().max(1) as f64;
        writeln!(
            csv,
            "{},throughput_{depth}_outstanding,,,,{mean:.0}",
            kind.name()
        )?;
        write!(tline, " {} {mean:.0} ops/s;", kind.name())?;
    }
    std::fs::write(a.out.join("transports.csv"), &csv)?;
    println!(
        "clio bench --transports: synchronous reads, CLib in one network namespace, the model node \
         in another, one veth pair; {rounds} interleaved rounds x {per_round} reads per size and transport"
    );
    println!("load average before {load_before}, after {load_after}");
    for (k, kind) in kinds.iter().enumerate() {
        println!("  {}: {}", kind.name(), notes[k]);
    }
    print!("{table}");
    println!("{}", tline.trim_end_matches(';'));
    println!("wrote {}/transports.csv", a.out.display());
    Ok(())
}
