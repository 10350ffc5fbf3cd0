//! CLib: the library compute-node applications link to use remote memory on a Clio-style
//! memory node (paper sections 3.1, 4.4, 4.5).
//!
//! * API: [`Client`] with `ralloc`, `rfree`, `rread`, `rwrite` (synchronous and `_async`),
//!   `rpoll`, `rlock`/`runlock`, `rfence`, `rrelease`, `fetch_add`, `compare_and_swap`.
//!   Errors are typed ([`ClioError`]).
//! * Transport ([`transport`]): UDP (default), raw Ethernet (pnet), in-process (tests), and a
//!   fault injector around any of them. Every packet carries the full header; requests are
//!   split into MTU packets; the response is the ack; whole requests are retried on NACK,
//!   corrupt response or timeout with an RFC 6298 RTO; non-idempotent results are acked
//!   back to the node.
//! * Congestion ([`cc`]): one delay-based AIMD window per memory node that may fall below
//!   one packet (pacing), and an incast window over expected response bytes.
//! * Ordering ([`order`]): synchronous calls are strictly ordered; asynchronous ones follow
//!   release order with page-granular RAW/WAR/WAW tracking.
//! * Several nodes ([`MultiClient`]): one address space over N nodes, placement, routing by
//!   address, replication through the backups' node-ordered logs, fail-over
//!   (docs/replication.md).
//! * Clio-KV ([`Client::kv_get`], [`Client::kv_put`], [`Client::kv_delete`]): the memory
//!   node's key-value offload, one round trip per operation.
//! * C API ([`capi`], header `clib/include/clio.h`).
//!
//! CLib depends only on `clio-proto`: the wire spec.
#![warn(missing_docs)]

pub mod capi;
pub mod capi_kv;
pub mod capi_multi;
pub mod cc;
mod client;
mod config;
mod engine;
mod error;
mod lanes;
mod multi;
pub mod order;
pub mod transport;

pub use client::kv::KvPutOutcome;
pub use client::tx::{Transaction, TxLog};
pub use client::{Client, Credentials, Handle, TransportKind, READ, WRITE};
pub use clio_proto::offload::ChaseLayout;
pub use config::Config;
pub use engine::{ChaseOutcome, Output, Stats};
pub use error::{ClioError, Result};
pub use multi::{
    ConfigStore, HealReport, LeasedEntry, LocalStore, MultiClient, MultiConfig, MultiStats,
    NodeSpec, OnChange, Pool, StoreError, View, WatchGuard,
};
