//! Print parts of the spec for non-Rust consumers.
//!
//! `clio-spec verilog-regs` prints the FPGA<->ARM ring/register layout as Verilog localparams.

fn main() {
    match std::env::args().nth(1).as_deref() {
        Some("verilog-regs") => print!("{}", clio_proto::ring::verilog_header()),
        _ => {
            eprintln!(
                "usage: clio-spec verilog-regs   (ring/register layout as Verilog localparams)"
            );
            std::process::exit(2);
        }
    }
}
