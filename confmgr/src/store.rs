//! CLib's [`ConfigStore`] on etcd: a pool's view read and changed with etcd's transactions,
//! and watched through etcd's watch stream on a thread of the store's.

use crate::etcd::{Etcd, EtcdError};
use clio_clib::{ConfigStore, LeasedEntry, OnChange, StoreError, WatchGuard};
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A pool's configuration store on an etcd endpoint.
#[derive(Debug, Clone)]
pub struct EtcdStore {
    etcd: Etcd,
}

impl EtcdStore {
    /// The store at etcd's client address (e.g. `127.0.0.1:2379`).
    pub fn new(addr: SocketAddr) -> Arc<EtcdStore> {
        Arc::new(EtcdStore {
            etcd: Etcd::new(addr),
        })
    }

    /// The etcd client underneath.
    pub fn etcd(&self) -> &Etcd {
        &self.etcd
    }
}

fn store_err(e: EtcdError) -> StoreError {
    StoreError(e.to_string())
}

/// Ends a watch: the thread sees the flag, and a read it is blocked in ends with the
/// connection's shutdown.
struct EtcdWatch {
    stop: Arc<AtomicBool>,
    conn: Arc<Mutex<Option<TcpStream>>>,
}

impl WatchGuard for EtcdWatch {}

impl Drop for EtcdWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
        if let Some(c) = self.conn.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = c.shutdown(Shutdown::Both);
        }
    }
}

/// Wait between attempts to (re)open a watch while etcd is unreachable.
const REWATCH: Duration = Duration::from_millis(200);

impl ConfigStore for EtcdStore {
    fn read(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, StoreError> {
        Ok(self
            .etcd
            .get(key.as_bytes())
            .map_err(store_err)?
            .map(|kv| (kv.value, kv.revision)))
    }

    fn compare_and_put(
        &self,
        key: &str,
        revision: Option<u64>,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        self.etcd
            .compare_and_put(key.as_bytes(), revision, value)
            .map_err(store_err)
    }

    /// The watch runs on a thread of its own. After every (re)connection `on_change` is
    /// called once, so a change made while the stream was down is not missed.
    fn watch(&self, key: &str, on_change: OnChange) -> Result<Box<dyn WatchGuard>, StoreError> {
        self.watch_keys(key, false, on_change)
    }

    fn list(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>, u64)>, StoreError> {
        self.etcd
            .get_prefix(prefix.as_bytes())
            .map_err(store_err)?
            .into_iter()
            .map(|(k, kv)| {
                String::from_utf8(k)
                    .map(|k| (k, kv.value, kv.revision))
                    .map_err(|_| StoreError(format!("a key under {prefix} is not UTF-8")))
            })
            .collect()
    }

    fn watch_prefix(
        &self,
        prefix: &str,
        on_change: OnChange,
    ) -> Result<Box<dyn WatchGuard>, StoreError> {
        self.watch_keys(prefix, true, on_change)
    }

    /// Under an etcd lease renewed by a thread of its own ([`crate::membership::LeasedKey`]).
    fn put_leased(
        &self,
        key: &str,
        value: &[u8],
        ttl: Duration,
    ) -> Result<Box<dyn LeasedEntry>, StoreError> {
        Ok(Box::new(
            crate::membership::LeasedKey::start(self.etcd.clone(), key, value, ttl)
                .map_err(store_err)?,
        ))
    }
}

impl EtcdStore {
    /// A watch on `key`, or on every key under it (`prefix`), on a thread of its own.
    fn watch_keys(
        &self,
        key: &str,
        prefix: bool,
        on_change: OnChange,
    ) -> Result<Box<dyn WatchGuard>, StoreError> {
        let open = {
            let (etcd, key) = (self.etcd.clone(), key.as_bytes().to_vec());
            move || {
                if prefix {
                    etcd.watch_prefix(&key, 0)
                } else {
                    etcd.watch(&key, 0)
                }
            }
        };
        let stop = Arc::new(AtomicBool::new(false));
        let conn: Arc<Mutex<Option<TcpStream>>> = Arc::default();
        // The first stream is opened here, so a store that cannot watch says so at once.
        let first = open().map_err(store_err)?;
        *conn.lock().unwrap_or_else(|p| p.into_inner()) =
            Some(first.connection().map_err(store_err)?);
        let (stop2, conn2) = (stop.clone(), conn.clone());
        std::thread::Builder::new()
            .name("clio-etcd-watch".into())
            .spawn(move || {
                let mut w = Some(first);
                while !stop2.load(Ordering::Acquire) {
                    let Some(mut watch) = w.take() else {
                        match open() {
                            Ok(n) => {
                                if let Ok(c) = n.connection() {
                                    *conn2.lock().unwrap_or_else(|p| p.into_inner()) = Some(c);
                                }
                                // Changes while the stream was down.
                                if !on_change() {
                                    return;
                                }
                                w = Some(n);
                            }
                            Err(_) => std::thread::sleep(REWATCH),
                        }
                        continue;
                    };
                    loop {
                        match watch.next() {
                            Ok(Some(_)) => {
                                if stop2.load(Ordering::Acquire) || !on_change() {
                                    return;
                                }
                            }
                            // The stream ended or broke: open another (unless stopped).
                            _ => break,
                        }
                    }
                }
            })
            .map_err(|e| StoreError(format!("watch thread: {e}")))?;
        Ok(Box::new(EtcdWatch { stop, conn }))
    }
}
