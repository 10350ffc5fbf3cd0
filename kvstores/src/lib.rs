//! Key-value stores on disaggregated memory, side by side (issue 13).
//!
//! * [`store`]: the [`KvStore`] trait every store implements (one handle per client thread),
//!   the [`StoreFactory`] a compute node opens handles from, typed errors, store specs.
//! * [`pdpm_direct`], [`pdpm_central`], [`clover`]: the three passive-disaggregated-memory
//!   stores of Tsai et al. (ATC '20), as CN-side libraries over CLib's one-sided operations;
//!   pDPM-Central's coordinator and Clover's metadata server run as their own processes
//!   (`clio-kv-coordinator`, `clio-kv-ms`).
//! * [`memcached`]: a client for a CPU key-value server, driven by the same workload.
//! * [`ycsb`]: YCSB workloads A/B/C and custom mixes over scrambled Zipfian keys.
//! * [`history`]: self-describing values (torn-value check) and a linearizability checker
//!   for recorded single-key histories.
//! * [`clio_kv`]: Clio-KV, the memory node's own key-value offload (one request per
//!   operation), as one more [`StoreFactory`].
//!
//! Depends only on `clio-clib` and `clio-proto` (plus crates.io).
#![warn(missing_docs)]

pub mod clio_kv;
pub mod clover;
pub mod deploy;
pub mod history;
pub mod memcached;
pub mod pdpm_central;
pub mod pdpm_direct;
pub mod rpc;
pub mod store;
pub mod ycsb;

pub use store::{Cost, KvError, KvResult, KvStore, NodeLink, StoreFactory, StoreSpec};

/// Open a compute node's factory from a spec written by the process that set the store up
/// (CLib's configuration for stores that talk to the memory node).
pub fn open_factory(
    spec: &StoreSpec,
    config: clio_clib::Config,
) -> KvResult<Box<dyn StoreFactory>> {
    Ok(match spec.system.as_str() {
        pdpm_direct::NAME => Box::new(pdpm_direct::DirectFactory::from_spec(spec, config)?),
        pdpm_central::NAME => Box::new(pdpm_central::CentralFactory::from_spec(spec)?),
        clover::NAME => Box::new(clover::CloverFactory::from_spec(spec, config)?),
        clio_kv::NAME => Box::new(clio_kv::ClioKvFactory::from_spec(spec, config)?),
        memcached::NAME => Box::new(memcached::MemcachedFactory::from_spec(spec)?),
        s => return Err(KvError::Spec(format!("unknown store `{s}`"))),
    })
}

/// Run a server process body (coordinator or MS) until standard input closes: the parent
/// holds the pipe, so the server ends with its parent.
pub fn until_stdin_closes() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let s = stop.clone();
    std::thread::spawn(move || {
        let mut sink = Vec::new();
        let _ = std::io::Read::read_to_end(&mut std::io::stdin(), &mut sink);
        s.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    stop
}
