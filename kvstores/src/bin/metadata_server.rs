//! Clover's metadata server as a process: joins the store's remote address space, prints
//! `listening ADDR`, serves compute nodes until its standard input closes.

use clap::Parser;
use clio_kvstores::clover::{run_metadata_server, MsArgs};

#[derive(Parser)]
#[command(name = "clio-kv-ms", about = "Clover metadata server")]
struct Cli {
    #[command(flatten)]
    args: MsArgs,
}

fn main() -> Result<(), clio_kvstores::KvError> {
    let cli = Cli::parse();
    run_metadata_server(&cli.args, clio_kvstores::until_stdin_closes())
}
