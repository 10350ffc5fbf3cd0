//! The behavioural CBoard: the fast path's golden model (the `clio-model` crate, re-exported
//! here under its block names) composed with the real slow path behind the rings ([`board`]).

pub use clio_model::{
    ack_layer, coverage, dram, key_table, mem_access, offload, page_fault, pt_walker, route_check,
    rx_share, sync_unit, tlb,
};

pub mod board;

pub use board::{
    BoardConfig, BoardError, CBoard, Counters, Offloads, SlowPathMode, DEFAULT_KV_STORE_BYTES,
};
