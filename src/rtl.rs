//! `clio rtl`: the hardware flow from the command line.

use anyhow::{Context, Result};
use clap::Subcommand;
use std::path::PathBuf;

/// RTL subcommands.
#[derive(Subcommand, Debug)]
pub enum RtlCmd {
    /// Write the Verilog of every fast-path module (what `make rtl` does).
    Emit {
        /// Output directory.
        #[arg(long, default_value = "build/rtl")]
        out: PathBuf,
    },
}

/// Run an RTL subcommand.
pub fn run(c: RtlCmd) -> Result<()> {
    match c {
        RtlCmd::Emit { out } => {
            let files = clio_hw::emit_all(&out)
                .with_context(|| format!("writing Verilog into {}", out.display()))?;
            for f in files {
                println!("{}", f.display());
            }
            Ok(())
        }
    }
}
