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
