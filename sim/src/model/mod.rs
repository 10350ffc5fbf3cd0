//! The behavioural CBoard: the fast path's stages in software, the real slow path behind the
//! rings. Request life: [`ack_layer`] -> MAT (`clio_proto::opcode::path_of`) -> [`key_table`]
//! -> virtual
//! memory ([`tlb`], [`pt_walker`], [`page_fault`]) -> [`mem_access`] / [`sync_unit`] -> response.

pub mod ack_layer;
pub mod board;
pub mod coverage;
pub mod dram;
pub mod key_table;
pub mod mem_access;
pub mod offload;
pub mod page_fault;
pub mod pt_walker;
pub mod sync_unit;
pub mod tlb;

pub use board::{
    BoardConfig, BoardError, CBoard, Counters, Offloads, SlowPathMode, DEFAULT_KV_STORE_BYTES,
};
