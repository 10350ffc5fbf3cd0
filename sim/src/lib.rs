//! Simulation of the memory node.
//!
//! [`model`] is the behavioural CBoard: the same stages as the hardware (ack layer, MAT, TLB,
//! page-table walker, page-fault unit, memory access, sync unit) over a `memmap2` DRAM model,
//! with the real slow path behind the descriptor rings. It is the golden model for the RTL
//! and the default memory node when no board exists. [`server`] puts a node on the network
//! (UDP, or raw Ethernet through `pnet`).

#![warn(missing_docs)]

pub mod conformance;
#[cfg(feature = "rtl")]
pub mod cosim;
pub mod model;
pub mod node;
#[cfg(feature = "rtl")]
pub mod rtl;
pub mod server;
pub mod slow_thread;
pub mod xdp_server;

/// The slow path's quotas, as a node is configured with them (`BoardConfig::limits`).
pub use clio_slowpath::Limits;
pub use model::{
    BoardConfig, BoardError, CBoard, Counters, Offloads, SlowPathMode, DEFAULT_KV_STORE_BYTES,
};
pub use node::MemoryNode;
