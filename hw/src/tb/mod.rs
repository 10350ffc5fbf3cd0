//! Bus models for testbenches: one AXI4 DRAM slave ([`AxiDram`]), one frame stream
//! source/sink ([`StreamSource`], [`StreamSink`]) and one seeded random source ([`Rng`]), and the response jobs of the
//! response side's testbenches ([`ResponseJob`]), shared by every hw testbench that needs
//! them and by the cosimulation harness (`sim/src/cosim.rs`), so the RTL is checked against
//! one definition of the bus everywhere. Plain Rust, independent of the simulator: the caller
//! moves values between the model and the ports.

pub mod axi_dram;
pub mod response;
pub mod rng;
pub mod stream;

pub use axi_dram::{Adversary, AxiDram, AxiDrive, Memory, SparseMemory, BEAT};
pub use response::ResponseJob;
pub use rng::Rng;
pub use stream::{keep_of, Beat, StreamSink, StreamSource};

/// Two runs of whole units (beats, lines), each as (first, count less one), share a unit: the
/// overlap test of the DRAM model's hazard count and of the ordering tables' reference lists.
pub fn spans_overlap(a: (u64, u64), b: (u64, u64)) -> bool {
    a.0 <= b.0 + b.1 && b.0 <= a.0 + a.1
}
