//! The golden model of the memory node's fast path: each block of the RTL (`clio-hw`) in
//! software, one request at a time, every rule of the spec (`clio-proto`) decided where the
//! RTL decides it. Request life: [`ack_layer`] -> MAT (`clio_proto::opcode::path_of`) ->
//! [`key_table`] -> [`route_check`] -> ([`rx_share`] for the slow path) -> virtual memory ([`tlb`], [`pt_walker`], [`page_fault`]) ->
//! [`mem_access`] / [`sync_unit`] / [`offload`] -> response.
//!
//! This crate depends only on `clio-proto`. The node that serves clients (`clio-sim`'s
//! `CBoard`) composes these blocks with the real slow path; the RTL's testbenches
//! (`clio-hw`, as a dev-dependency) and the cosimulation compare the hardware against them,
//! so there is one model and no copy of it.
#![warn(missing_docs)]

pub mod ack_layer;
pub mod coverage;
pub mod dram;
pub mod key_table;
pub mod mem_access;
pub mod offload;
pub mod page_fault;
pub mod pt_walker;
pub mod route_check;
pub mod rx_share;
pub mod sync_unit;
pub mod tlb;
