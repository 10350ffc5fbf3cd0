//! `clio`: the command that ties the memory node, its slow path and the client together.
//! Each subcommand lives in its own module.

mod app;
mod bench;
mod board;
mod demo;
mod pool;
#[cfg(feature = "rtl")]
mod rtl;
mod units;

use anyhow::Result;
use clap::{Parser, Subcommand};

/// Clio-style disaggregated memory: run a memory node, a demo workload or benchmarks.
#[derive(Parser, Debug)]
#[command(name = "clio", version, about, long_about = None, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Serve a memory node (the behavioural CBoard model) on the network.
    Board(board::BoardArgs),
    /// Run a memory node in-process and a workload through CLib, with a readable summary.
    Demo(demo::DemoArgs),
    /// Measure CLib latency/throughput against a bare UDP ping-pong; write CSV and a CDF plot.
    Bench(bench::BenchArgs),
    /// Applications on remote memory, measured (image compression: Figure 15; radix tree with
    /// pointer chasing: Figure 16).
    #[command(subcommand)]
    App(app::AppCmd),
    /// A pool of memory nodes in etcd: show its view and nodes, drain a node or put it back.
    #[command(subcommand)]
    Pool(pool::PoolCmd),
    /// Hardware flow: emit the fast path's Verilog (built with `--features rtl`).
    #[cfg(feature = "rtl")]
    #[command(subcommand)]
    Rtl(rtl::RtlCmd),
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Board(a) => board::run(a),
        Cmd::Demo(a) => demo::run(a),
        Cmd::Bench(mut a) => match a.cmd.take() {
            Some(c) => bench::run_cmd(c),
            None => bench::run(a),
        },
        Cmd::App(c) => app::run(c),
        Cmd::Pool(c) => pool::run(c),
        #[cfg(feature = "rtl")]
        Cmd::Rtl(c) => rtl::run(c),
    }
}
