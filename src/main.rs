//! `clio`: the command that ties the memory node, its slow path and the client together.
//! Each subcommand lives in its own module.

mod board;
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
}

fn main() -> Result<()> {
    let cli = Cli::parse();
    match cli.cmd {
        Cmd::Board(a) => board::run(a),
    }
}
