//! The pool's configuration manager on etcd (docs/replication.md, "The configuration
//! manager"). A pool of memory nodes keeps its view (which nodes are in service, and the
//! epoch of that decision) in etcd; every [`clio_clib::MultiClient`] of the pool reads it,
//! proposes changes with etcd's compare-and-put transactions and learns others' through
//! etcd's watch, so all clients agree on one configuration.
//!
//! - [`etcd`]: etcd's v3 API through its JSON gateway (get, put, compare-and-put, watch);
//!   no gRPC stack or code generation, just HTTP/1.1 on a socket ([`http`]).
//! - [`EtcdStore`]: CLib's `ConfigStore` on it.
//! - [`LeasedKey`]: an entry under a lease a thread renews; [`Announcement`]: a memory
//!   node's entry in its pool (a pool client's presence is one too).
//! - [`EtcdServer`]: a local etcd (tests, demos, a single-host pool).

pub mod etcd;
pub mod http;
pub mod membership;
pub mod server;
pub mod store;

pub use etcd::{Etcd, EtcdError, KeyValue};
pub use membership::{Announcement, LeasedKey};
pub use server::{EtcdServer, ServerError};
pub use store::EtcdStore;
