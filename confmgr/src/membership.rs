//! A memory node's membership in a pool: its entry `/clio/pools/<pool>/nodes/<addr>`
//! (`capacity <bytes>`), tied to an etcd lease that a thread renews. When the node process
//! dies the renewals stop and etcd deletes the entry after the lease's time: the pool's
//! clients, which watch the entries, then take the node out of service without waiting for a
//! request to time out. A node that stops cleanly revokes its lease at once.

use crate::etcd::{Etcd, EtcdError};
use clio_clib::Pool;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// A node's entry in a pool, kept alive until dropped.
pub struct Announcement {
    etcd: Etcd,
    lease: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Seconds of the lease: the renewals come three times as often.
fn ttl_secs(ttl: Duration) -> u64 {
    ttl.as_secs().max(1)
}

impl Announcement {
    /// Enter `node` (which clients reach at that address, and on which they may place
    /// `capacity` bytes) in `pool`, under a lease of `ttl` (whole seconds, at least 1).
    pub fn start(
        etcd: Etcd,
        pool: &str,
        node: SocketAddr,
        capacity: u64,
        ttl: Duration,
    ) -> Result<Announcement, EtcdError> {
        let (key, value) = (Pool::node_key_of(pool, node), Pool::node_entry(capacity));
        let secs = ttl_secs(ttl);
        let enter = {
            let (etcd, key, value) = (etcd.clone(), key.clone(), value.clone());
            move || -> Result<u64, EtcdError> {
                let lease = etcd.grant(secs)?;
                etcd.put_leased(key.as_bytes(), value.as_bytes(), lease)?;
                Ok(lease)
            }
        };
        let lease = Arc::new(AtomicU64::new(enter()?));
        let stop = Arc::new(AtomicBool::new(false));
        let thread = {
            let (etcd, lease, stop) = (etcd.clone(), lease.clone(), stop.clone());
            std::thread::Builder::new()
                .name("clio-pool-lease".into())
                .spawn(move || {
                    let period = Duration::from_millis(secs * 1000 / 3);
                    while !stop.load(Ordering::Acquire) {
                        std::thread::sleep(period);
                        if stop.load(Ordering::Acquire) {
                            return;
                        }
                        match etcd.keep_alive(lease.load(Ordering::Acquire)) {
                            Ok(left) if left > 0 => {}
                            // The lease ended (etcd was away longer than it): enter again.
                            // The pool's clients took the node out meanwhile; they readmit it
                            // when they see the new entry.
                            Ok(_) => {
                                if let Ok(l) = enter() {
                                    lease.store(l, Ordering::Release);
                                }
                            }
                            // etcd unreachable: try again next period.
                            Err(_) => {}
                        }
                    }
                })
                .map_err(|e| EtcdError::Answer(format!("lease thread: {e}")))?
        };
        Ok(Announcement {
            etcd,
            lease,
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for Announcement {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // The entry goes now, not a lease later (best effort: etcd may be away).
        let _ = self.etcd.revoke(self.lease.load(Ordering::Acquire));
        // The renewal thread ends after its current sleep (not waited for).
        drop(self.thread.take());
    }
}
