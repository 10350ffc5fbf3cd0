//! Membership in a pool under etcd leases: an entry ([`LeasedKey`]) tied to a lease that a
//! thread renews. When its process dies the renewals stop and etcd deletes the entry after
//! the lease's time; a holder that stops cleanly revokes the lease at once. A memory node's
//! entry `/clio/pools/<pool>/nodes/<addr>` (`capacity <bytes>`, [`Announcement`]) is one:
//! the pool's clients, which watch the entries, take the node out of service without waiting
//! for a request to time out. A pool client's presence `/clio/pools/<pool>/clients/<id>`
//! (`epoch <n>`, CLib's `ConfigStore::put_leased` on etcd) is another: `clio pool show`
//! lists the clients and the view each follows.

use crate::etcd::{Etcd, EtcdError};
use clio_clib::Pool;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A key kept in etcd under a lease a thread renews, until dropped.
pub struct LeasedKey {
    etcd: Etcd,
    key: String,
    /// The value, put again with a new lease if the lease ended (etcd was away longer).
    value: Arc<Mutex<Vec<u8>>>,
    lease: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Seconds of the lease: the renewals come three times as often.
fn ttl_secs(ttl: Duration) -> u64 {
    ttl.as_secs().max(1)
}

impl LeasedKey {
    /// Put `value` at `key` under a lease of `ttl` (whole seconds, at least 1), renewed three
    /// times per lease until this is dropped.
    pub fn start(
        etcd: Etcd,
        key: &str,
        value: &[u8],
        ttl: Duration,
    ) -> Result<LeasedKey, EtcdError> {
        let secs = ttl_secs(ttl);
        let value = Arc::new(Mutex::new(value.to_vec()));
        let enter = {
            let (etcd, key, value) = (etcd.clone(), key.to_string(), value.clone());
            move || -> Result<u64, EtcdError> {
                let lease = etcd.grant(secs)?;
                let v = value.lock().unwrap_or_else(|p| p.into_inner()).clone();
                etcd.put_leased(key.as_bytes(), &v, lease)?;
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
                            // Whoever watches the entries saw it go meanwhile (a node's
                            // clients took it out; they readmit it when it is back).
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
        Ok(LeasedKey {
            etcd,
            key: key.to_string(),
            value,
            lease,
            stop,
            thread: Some(thread),
        })
    }

    /// Replace the value (under the same lease; kept if the lease is renewed anew).
    pub fn set(&self, value: &[u8]) -> Result<(), EtcdError> {
        *self.value.lock().unwrap_or_else(|p| p.into_inner()) = value.to_vec();
        self.etcd.put_leased(
            self.key.as_bytes(),
            value,
            self.lease.load(Ordering::Acquire),
        )
    }
}

impl clio_clib::LeasedEntry for LeasedKey {
    fn set(&self, value: &[u8]) -> Result<(), clio_clib::StoreError> {
        LeasedKey::set(self, value).map_err(|e| clio_clib::StoreError(e.to_string()))
    }
}

impl Drop for LeasedKey {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        // The entry goes now, not a lease later (best effort: etcd may be away).
        let _ = self.etcd.revoke(self.lease.load(Ordering::Acquire));
        // The renewal thread ends after its current sleep (not waited for).
        drop(self.thread.take());
    }
}

/// A node's entry in a pool, kept alive until dropped.
pub struct Announcement {
    _entry: LeasedKey,
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
        Ok(Announcement {
            _entry: LeasedKey::start(etcd, &key, value.as_bytes(), ttl)?,
        })
    }
}
