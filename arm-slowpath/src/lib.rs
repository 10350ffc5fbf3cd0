//! The slow path of the memory node: the software that runs on the board's ARM cores.
//!
//! It owns everything the fast path must not: per-process virtual address trees
//! ([`va_space`]), overflow-free placement of PTEs in the hash page table using a shadow copy
//! of that table ([`shadow_pt`]), the physical frame allocator that keeps the fast path's
//! async free-page buffer full ([`phys_alloc`]) with frames it cleared first
//! ([`frame_memory`]), and the registry of remote address spaces: keys, members, leases
//! ([`ras`]), and the transaction logs whose redo records it applies ([`daemon::tx`]). It talks to the
//! fast path only through the descriptor rings of `clio_proto::ring`, mapped from a UIO
//! device on the board or a shared-memory file in simulation ([`ring_window`]); the same
//! [`daemon::SlowPath`] code serves both.

#![warn(missing_docs)]

pub mod daemon;
pub mod fair_queue;
pub mod frame_memory;
pub mod limits;
pub mod meta_log;
pub mod phys_alloc;
pub mod ras;
pub mod reply_cache;
pub mod ring_window;
pub mod serve;
pub mod shadow_pt;
pub mod va_space;

pub use daemon::kv_store::KvStore;
pub use daemon::recovery::RecoveryReport;
pub use daemon::{AllocError, SlowPath, SlowPathConfig, SlowPathStats};
pub use frame_memory::{FrameMemory, MappedMemory};
pub use limits::{Limits, Source};
pub use meta_log::{MappedMeta, MetaLog, MetaStore, Opened};
pub use ras::KeySource;
pub use ring_window::{RingError, RingWindow};
pub use serve::serve;
