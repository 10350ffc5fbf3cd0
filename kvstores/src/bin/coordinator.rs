//! pDPM-Central's coordinator as a process: joins the store's remote address space, prints
//! `listening ADDR`, serves compute nodes until its standard input closes.

use clap::Parser;
use clio_kvstores::pdpm_central::{run_coordinator, CoordinatorArgs};

#[derive(Parser)]
#[command(name = "clio-kv-coordinator", about = "pDPM-Central coordinator")]
struct Cli {
    #[command(flatten)]
    args: CoordinatorArgs,
}

fn main() -> Result<(), clio_kvstores::KvError> {
    let cli = Cli::parse();
    run_coordinator(&cli.args, clio_kvstores::until_stdin_closes())
}
