//! The pool's view, agreed by every client through a configuration store: which memory nodes
//! of the pool are out of service, and the **epoch** of that decision (docs/replication.md,
//! "The configuration manager").
//!
//! A client that finds a node dead does not act alone: it proposes the next view (the epoch
//! plus one, the node out) with a compare-and-put on the view's key, and only a view the store
//! accepted is acted on. A proposal that loses the race is read back and adopted, so two
//! clients that meet the same failure end at the same epoch. Every client also watches the key
//! and adopts a view another client stored, without waiting for its own requests to time
//! out. A node that is out stays out for every client of the pool: a restarted node missed
//! writes, and nobody places on it or reads from it again.
//!
//! The store is a trait: `clio-confmgr` implements it on etcd (the pool's configuration
//! manager, shared by processes on many hosts); [`LocalStore`] is an in-process one (clients
//! of one process, and tests). Without a pool a [`super::MultiClient`] decides alone, as a
//! single process always could.

use std::collections::{BTreeSet, HashMap};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use thiserror::Error;

/// A configuration store failed (unreachable, or it answered something unexpected).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("configuration store: {0}")]
pub struct StoreError(pub String);

/// Called by a store's watch when the watched key changed; returns false to end the watch
/// (its client is gone).
pub type OnChange = Box<dyn Fn() -> bool + Send + Sync>;

/// Ends a watch when dropped.
pub trait WatchGuard: Send + Sync {}

/// An entry the store keeps while its holder lives (a lease in etcd): deleted when the
/// guard is dropped, or, when its process dies, once the lease ends unrenewed.
pub trait LeasedEntry: Send + Sync {
    /// Replace the entry's value (under the same lease).
    fn set(&self, value: &[u8]) -> Result<(), StoreError>;
}

/// A key-value store with compare-and-put and watches: what a configuration manager offers.
pub trait ConfigStore: Send + Sync {
    /// The value at `key` and its revision (changes with every put), or `None` when absent.
    fn read(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, StoreError>;

    /// Store `value` at `key` if the key is still at `revision` (`None`: if the key is
    /// absent). True when stored; false when another put came first (nothing changed).
    fn compare_and_put(
        &self,
        key: &str,
        revision: Option<u64>,
        value: &[u8],
    ) -> Result<bool, StoreError>;

    /// Call `on_change` (from a thread of the store's) after every change of `key` until it
    /// returns false or the returned guard is dropped.
    fn watch(&self, key: &str, on_change: OnChange) -> Result<Box<dyn WatchGuard>, StoreError>;

    /// Every key that starts with `prefix`, with its value and revision, in key order.
    fn list(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>, u64)>, StoreError>;

    /// As [`ConfigStore::watch`], for every key that starts with `prefix` (a key put or
    /// deleted, by a client or by the end of a lease).
    fn watch_prefix(
        &self,
        prefix: &str,
        on_change: OnChange,
    ) -> Result<Box<dyn WatchGuard>, StoreError>;

    /// Put `value` at `key` for as long as the returned entry lives, under a lease of `ttl`
    /// renewed meanwhile (a node's announcement, a client's presence).
    fn put_leased(
        &self,
        key: &str,
        value: &[u8],
        ttl: std::time::Duration,
    ) -> Result<Box<dyn LeasedEntry>, StoreError>;
}

/// A pool of memory nodes shared by clients: the store where its view lives and its name
/// (the view's key is `/clio/pools/<name>/view`).
#[derive(Clone)]
pub struct Pool {
    /// Where the view is kept and agreed on.
    pub store: Arc<dyn ConfigStore>,
    /// The pool's name (clients of the same name share one view).
    pub name: String,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool").field("name", &self.name).finish()
    }
}

impl Pool {
    /// The key of the pool's view in its store.
    pub fn view_key(&self) -> String {
        format!("/clio/pools/{}/view", self.name)
    }

    /// Where the pool's nodes announce themselves: one key per node, `<prefix><ip:port>`,
    /// whose value is `capacity <bytes>` (`clio board --etcd ... --pool NAME` keeps its entry
    /// under a lease: it goes when the node does).
    pub fn nodes_prefix(&self) -> String {
        Self::nodes_prefix_of(&self.name)
    }

    /// [`Pool::nodes_prefix`] of the pool named `name`.
    pub fn nodes_prefix_of(name: &str) -> String {
        format!("/clio/pools/{name}/nodes/")
    }

    /// The pool's view now (created at epoch 1 if the pool is new).
    pub fn view(&self) -> Result<View, StoreError> {
        read_view(self).map(|(v, _)| v)
    }

    /// Take `node` out of service (an operator's drain: every client of the pool fails its
    /// regions over to their backups and heals them elsewhere). Returns the stored view.
    pub fn take_out(&self, node: SocketAddr) -> Result<View, StoreError> {
        take_out(self, node)
    }

    /// Put `node` back in service (clients readmit it with a fresh address space). Returns
    /// the stored view.
    pub fn bring_in(&self, node: SocketAddr) -> Result<View, StoreError> {
        bring_in(self, node)
    }

    /// The key of `node`'s entry in the pool named `name`.
    pub fn node_key_of(name: &str, node: SocketAddr) -> String {
        format!("{}{node}", Self::nodes_prefix_of(name))
    }

    /// The prefix of the pool's clients' presence entries (`/clio/pools/<name>/clients/`).
    pub fn clients_prefix(&self) -> String {
        format!("/clio/pools/{}/clients/", self.name)
    }

    /// The key of the shared space `name` of this pool (docs/replication.md, "Several
    /// writers").
    pub fn space_key(&self, name: &str) -> String {
        format!("{}{name}", self.spaces_prefix())
    }

    /// The prefix of the pool's shared spaces (`/clio/pools/<name>/spaces/`).
    pub fn spaces_prefix(&self) -> String {
        format!("/clio/pools/{}/spaces/", self.name)
    }

    /// The value of a client's presence entry: the epoch of the view it follows.
    pub fn client_entry(epoch: u64) -> String {
        format!("epoch {epoch}\n")
    }

    /// The pool's clients now: each one's id and the epoch of the view it follows (an entry
    /// that does not parse is an error naming it).
    pub fn clients(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let prefix = self.clients_prefix();
        self.store
            .list(&prefix)?
            .into_iter()
            .map(|(k, v, _)| {
                let id = k.strip_prefix(&prefix).unwrap_or(&k).to_string();
                std::str::from_utf8(&v)
                    .ok()
                    .and_then(|s| s.trim().strip_prefix("epoch "))
                    .and_then(|e| e.parse().ok())
                    .map(|e| (id, e))
                    .ok_or_else(|| StoreError(format!("client entry {k} does not parse")))
            })
            .collect()
    }

    /// The value of a node's entry: what clients may place on it.
    pub fn node_entry(capacity: u64) -> String {
        format!("capacity {capacity}\n")
    }

    /// The capacity a node's entry holds; `None` when it is not one.
    fn parse_node_entry(v: &[u8]) -> Option<u64> {
        std::str::from_utf8(v)
            .ok()?
            .strip_suffix('\n')?
            .strip_prefix("capacity ")?
            .parse()
            .ok()
    }

    /// The nodes announced in the pool now: address, capacity and the entry's revision (a
    /// node that announces itself again gets a newer one), in address order. An entry that
    /// does not parse is an error naming it.
    pub fn announced(&self) -> Result<Vec<(SocketAddr, u64, u64)>, StoreError> {
        let prefix = self.nodes_prefix();
        let mut v = Vec::new();
        for (k, val, rev) in self.store.list(&prefix)? {
            let bad = || StoreError(format!("the pool's node entry {k} is malformed"));
            let addr: SocketAddr = k
                .strip_prefix(prefix.as_str())
                .ok_or_else(bad)?
                .parse()
                .map_err(|_| bad())?;
            let cap = Self::parse_node_entry(&val).ok_or_else(bad)?;
            v.push((addr, cap, rev));
        }
        v.sort();
        Ok(v)
    }
}

/// The view: the epoch and the nodes out of service, by address.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct View {
    /// Starts at 1 when the pool is first used; one more with every node taken out.
    pub epoch: u64,
    /// Nodes out of service (declared dead under some epoch).
    pub out: BTreeSet<SocketAddr>,
}

const MAGIC: &str = "clio-pool-view 1";

impl View {
    /// The first view of a pool: epoch 1, every node in service.
    pub fn first() -> View {
        View {
            epoch: 1,
            out: BTreeSet::new(),
        }
    }

    /// The view with `node` out of service, one epoch later.
    pub fn without(&self, node: SocketAddr) -> View {
        let mut v = self.clone();
        v.epoch += 1;
        v.out.insert(node);
        v
    }

    /// The view with `node` back in service, one epoch later.
    pub fn with(&self, node: SocketAddr) -> View {
        let mut v = self.clone();
        v.epoch += 1;
        v.out.remove(&node);
        v
    }

    /// The stored form: text, one fact per line (readable with `etcdctl get`).
    pub fn encode(&self) -> Vec<u8> {
        let mut s = format!("{MAGIC}\nepoch {}\n", self.epoch);
        for a in &self.out {
            s.push_str(&format!("out {a}\n"));
        }
        s.into_bytes()
    }

    /// Parse a stored view; anything else is an error naming the line.
    pub fn decode(b: &[u8]) -> Result<View, StoreError> {
        let bad = |what: &str| StoreError(format!("the pool's view is malformed: {what}"));
        let s = std::str::from_utf8(b).map_err(|_| bad("not UTF-8"))?;
        let mut lines = s.lines();
        if lines.next() != Some(MAGIC) {
            return Err(bad("no header"));
        }
        let mut v = View::default();
        for l in lines {
            match l.split_once(' ') {
                Some(("epoch", e)) => v.epoch = e.parse().map_err(|_| bad(l))?,
                Some(("out", a)) => {
                    v.out.insert(a.parse().map_err(|_| bad(l))?);
                }
                _ => return Err(bad(l)),
            }
        }
        if v.epoch == 0 {
            return Err(bad("epoch 0"));
        }
        Ok(v)
    }
}

/// The view and its revision in the store, created (epoch 1) if the pool is new.
pub(super) fn read_view(pool: &Pool) -> Result<(View, u64), StoreError> {
    let key = pool.view_key();
    for _ in 0..PROPOSALS {
        if let Some((b, rev)) = pool.store.read(&key)? {
            return Ok((View::decode(&b)?, rev));
        }
        // A new pool: the first client stores epoch 1 (another may come first: read again).
        pool.store
            .compare_and_put(&key, None, &View::first().encode())?;
    }
    Err(churn())
}

/// Proposals a client makes before it gives up on a view that keeps changing under it (or a
/// store that accepts nothing and shows nothing): far more than clients racing for one
/// failure need.
const PROPOSALS: usize = 1000;

fn churn() -> StoreError {
    StoreError(format!(
        "the pool's view changed under each of {PROPOSALS} proposals (or the store stores nothing)"
    ))
}

/// Take `node` out of service: propose the next view until one that has it out is stored
/// (by this client or another). Returns that view.
pub(super) fn take_out(pool: &Pool, node: SocketAddr) -> Result<View, StoreError> {
    propose(pool, node, true)
}

/// Put `node` back in service: propose the next view until one that has it in is stored.
/// Every shared space of the pool forgets what it had on the node first (its address space
/// and replicas there missed writes while it was out): so no writer of a space ever takes
/// them for live when the node is back in service.
pub(super) fn bring_in(pool: &Pool, node: SocketAddr) -> Result<View, StoreError> {
    if read_view(pool)?.0.out.contains(&node) {
        forget_in_spaces(pool, node)?;
    }
    propose(pool, node, false)
}

/// Remove `node` from every shared space of the pool (compare-and-put per space).
pub(super) fn forget_in_spaces(pool: &Pool, node: SocketAddr) -> Result<(), StoreError> {
    for (key, _, _) in pool.store.list(&pool.spaces_prefix())? {
        let mut done = false;
        for _ in 0..PROPOSALS {
            let Some((b, rev)) = pool.store.read(&key)? else {
                done = true;
                break;
            };
            let mut rec = super::space_record::SpaceRecord::decode(&b)?;
            if !rec.strip(node) || pool.store.compare_and_put(&key, Some(rev), &rec.encode())? {
                done = true;
                break;
            }
        }
        if !done {
            return Err(StoreError(format!(
                "the shared space {key} changed under each of {PROPOSALS} edits"
            )));
        }
    }
    Ok(())
}

/// Store the next view (one epoch on, the same nodes in service): every node a client of
/// it then reaches refuses what the older views' clients send. Returns it.
pub(super) fn bump(pool: &Pool) -> Result<View, StoreError> {
    for _ in 0..PROPOSALS {
        let (v, rev) = read_view(pool)?;
        let mut next = v.clone();
        next.epoch += 1;
        if pool
            .store
            .compare_and_put(&pool.view_key(), Some(rev), &next.encode())?
        {
            return Ok(next);
        }
    }
    Err(churn())
}

/// Propose views (one epoch on, `node` out or in) until one with `node` as wanted is stored,
/// by this client or another; that view.
fn propose(pool: &Pool, node: SocketAddr, out: bool) -> Result<View, StoreError> {
    for _ in 0..PROPOSALS {
        let (v, rev) = read_view(pool)?;
        if v.out.contains(&node) == out {
            return Ok(v);
        }
        let next = if out { v.without(node) } else { v.with(node) };
        if pool
            .store
            .compare_and_put(&pool.view_key(), Some(rev), &next.encode())?
        {
            return Ok(next);
        }
    }
    Err(churn())
}

/// An in-process configuration store (clients of one process share a pool through it).
#[derive(Default)]
pub struct LocalStore {
    inner: Arc<Mutex<LocalInner>>,
}

/// A watch: the key (or prefix, when the flag is set), its callback and whether it lives.
type Watchers = Vec<(
    String,
    bool,
    Arc<OnChange>,
    Arc<std::sync::atomic::AtomicBool>,
)>;

#[derive(Default)]
struct LocalInner {
    revision: u64,
    keys: HashMap<String, (Vec<u8>, u64)>,
    watchers: Watchers,
}

struct LocalWatch(Arc<std::sync::atomic::AtomicBool>);

impl WatchGuard for LocalWatch {}

impl Drop for LocalWatch {
    fn drop(&mut self) {
        self.0.store(false, std::sync::atomic::Ordering::Release);
    }
}

impl LocalStore {
    /// An empty store.
    pub fn new() -> Arc<LocalStore> {
        Arc::new(LocalStore::default())
    }

    /// Delete `key` (as the end of a lease would in etcd) and tell its watchers.
    pub fn remove(&self, key: &str) {
        Self::remove_in(&self.inner, key)
    }

    fn remove_in(inner: &Mutex<LocalInner>, key: &str) {
        let callbacks = {
            let mut g = inner.lock().unwrap_or_else(|p| p.into_inner());
            if g.keys.remove(key).is_none() {
                return;
            }
            g.revision += 1;
            Self::watchers_of(&mut g, key)
        };
        Self::tell(callbacks);
    }

    /// Put `value` at `key` unconditionally (as a node's announcement does).
    pub fn put(&self, key: &str, value: &[u8]) {
        self.put_if(key, None, value);
    }

    /// Put `value` at `key` if `revision` is `None` or `Some` of the key's revision (`Some(None)`:
    /// if the key is absent), then tell its watchers; whether it was put.
    fn put_if(&self, key: &str, revision: Option<Option<u64>>, value: &[u8]) -> bool {
        Self::put_in(&self.inner, key, revision, value)
    }

    fn put_in(
        inner: &Mutex<LocalInner>,
        key: &str,
        revision: Option<Option<u64>>,
        value: &[u8],
    ) -> bool {
        let callbacks = {
            let mut g = inner.lock().unwrap_or_else(|p| p.into_inner());
            if revision.is_some_and(|r| g.keys.get(key).map(|(_, k)| *k) != r) {
                return false;
            }
            g.revision += 1;
            let rev = g.revision;
            g.keys.insert(key.to_string(), (value.to_vec(), rev));
            Self::watchers_of(&mut g, key)
        };
        Self::tell(callbacks);
        true
    }

    /// The live watches that `key` concerns (dead ones are dropped).
    fn watchers_of(g: &mut LocalInner, key: &str) -> Vec<(Arc<OnChange>, Live)> {
        g.watchers
            .retain(|(_, _, _, live)| live.load(std::sync::atomic::Ordering::Acquire));
        g.watchers
            .iter()
            .filter(|(k, prefix, _, _)| {
                if *prefix {
                    key.starts_with(k.as_str())
                } else {
                    k == key
                }
            })
            .map(|(_, _, f, live)| (f.clone(), live.clone()))
            .collect()
    }

    /// Call the watches outside the lock, as a remote store's watch thread would (a
    /// callback reads the store); one that answers false ends.
    fn tell(callbacks: Vec<(Arc<OnChange>, Live)>) {
        for (f, live) in callbacks {
            if !f() {
                live.store(false, std::sync::atomic::Ordering::Release);
            }
        }
    }

    fn add_watch(&self, key: &str, prefix: bool, on_change: OnChange) -> Box<dyn WatchGuard> {
        let live = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let mut g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        g.watchers
            .push((key.to_string(), prefix, Arc::new(on_change), live.clone()));
        Box::new(LocalWatch(live))
    }
}

/// Whether a watch lives.
type Live = Arc<std::sync::atomic::AtomicBool>;

/// A leased entry of the in-process store: nothing outlives the process, so no lease runs;
/// the entry goes when the guard is dropped.
struct LocalLeased {
    inner: Arc<Mutex<LocalInner>>,
    key: String,
}

impl LeasedEntry for LocalLeased {
    fn set(&self, value: &[u8]) -> Result<(), StoreError> {
        LocalStore::put_in(&self.inner, &self.key, None, value);
        Ok(())
    }
}

impl Drop for LocalLeased {
    fn drop(&mut self) {
        LocalStore::remove_in(&self.inner, &self.key);
    }
}

impl ConfigStore for LocalStore {
    fn read(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, StoreError> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        Ok(g.keys.get(key).cloned())
    }

    fn compare_and_put(
        &self,
        key: &str,
        revision: Option<u64>,
        value: &[u8],
    ) -> Result<bool, StoreError> {
        Ok(self.put_if(key, Some(revision), value))
    }

    fn watch(&self, key: &str, on_change: OnChange) -> Result<Box<dyn WatchGuard>, StoreError> {
        Ok(self.add_watch(key, false, on_change))
    }

    fn list(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>, u64)>, StoreError> {
        let g = self.inner.lock().unwrap_or_else(|p| p.into_inner());
        let mut v: Vec<_> = g
            .keys
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .map(|(k, (val, rev))| (k.clone(), val.clone(), *rev))
            .collect();
        v.sort();
        Ok(v)
    }

    fn watch_prefix(
        &self,
        prefix: &str,
        on_change: OnChange,
    ) -> Result<Box<dyn WatchGuard>, StoreError> {
        Ok(self.add_watch(prefix, true, on_change))
    }

    fn put_leased(
        &self,
        key: &str,
        value: &[u8],
        _ttl: std::time::Duration,
    ) -> Result<Box<dyn LeasedEntry>, StoreError> {
        self.put(key, value);
        Ok(Box::new(LocalLeased {
            inner: self.inner.clone(),
            key: key.to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(p: u16) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], p))
    }

    #[test]
    fn a_view_survives_its_stored_form_and_rejects_garbage() {
        let v = View::first().without(addr(7001)).without(addr(7003));
        assert_eq!(v.epoch, 3);
        assert_eq!(View::decode(&v.encode()).unwrap(), v);
        for bad in [
            &b""[..],
            b"clio-pool-view 2\nepoch 1\n",
            b"clio-pool-view 1\nepoch x\n",
            b"clio-pool-view 1\nepoch 0\n",
            b"clio-pool-view 1\nepoch 1\nout nowhere\n",
            b"clio-pool-view 1\nepoch 1\nin 127.0.0.1:1\n",
            b"\xff",
        ] {
            assert!(View::decode(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn two_proposals_for_one_failure_end_at_one_epoch() {
        let pool = Pool {
            store: LocalStore::new(),
            name: "p".into(),
        };
        assert_eq!(read_view(&pool).unwrap().0, View::first());
        let a = take_out(&pool, addr(1)).unwrap();
        let b = take_out(&pool, addr(1)).unwrap();
        assert_eq!(
            (a.epoch, b.epoch),
            (2, 2),
            "the second finds it out already"
        );
        let c = take_out(&pool, addr(2)).unwrap();
        assert_eq!(c.epoch, 3);
        assert_eq!(c.out.len(), 2);
    }

    /// A store that stores nothing and shows keys it was not asked for (broken or hostile).
    struct Liar;

    impl ConfigStore for Liar {
        fn read(&self, _: &str) -> Result<Option<(Vec<u8>, u64)>, StoreError> {
            Ok(None)
        }
        fn compare_and_put(&self, _: &str, _: Option<u64>, _: &[u8]) -> Result<bool, StoreError> {
            Ok(true)
        }
        fn watch(&self, _: &str, _: OnChange) -> Result<Box<dyn WatchGuard>, StoreError> {
            Err(StoreError("no".into()))
        }
        fn list(&self, _: &str) -> Result<Vec<(String, Vec<u8>, u64)>, StoreError> {
            Ok(vec![("/x".into(), b"capacity 1\n".to_vec(), 1)])
        }
        fn watch_prefix(&self, _: &str, _: OnChange) -> Result<Box<dyn WatchGuard>, StoreError> {
            Err(StoreError("no".into()))
        }
        fn put_leased(
            &self,
            _: &str,
            _: &[u8],
            _: std::time::Duration,
        ) -> Result<Box<dyn LeasedEntry>, StoreError> {
            Err(StoreError("no".into()))
        }
    }

    #[test]
    fn a_store_that_lies_is_an_error_not_a_hang_or_a_panic() {
        let pool = Pool {
            store: Arc::new(Liar),
            name: "p".into(),
        };
        let e = read_view(&pool).unwrap_err();
        assert!(e.to_string().contains("1000 proposals"), "{e}");
        assert!(take_out(&pool, addr(1)).is_err());
        assert!(bring_in(&pool, addr(1)).is_err());
        let e = pool.announced().unwrap_err();
        assert!(e.to_string().contains("/x"), "{e}");
        let e = pool.clients().unwrap_err();
        assert!(
            e.to_string().contains("/x"),
            "a foreign key is no client entry: {e}"
        );
    }

    #[test]
    fn a_stale_proposal_is_refused_and_watchers_hear_of_every_change() {
        let store = LocalStore::new();
        let heard = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let h = heard.clone();
        let guard = store
            .watch(
                "k",
                Box::new(move || {
                    h.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    true
                }),
            )
            .unwrap();
        assert!(store.compare_and_put("k", None, b"a").unwrap());
        assert!(!store.compare_and_put("k", None, b"b").unwrap());
        let (_, rev) = store.read("k").unwrap().unwrap();
        assert!(store.compare_and_put("k", Some(rev), b"c").unwrap());
        assert!(!store.compare_and_put("k", Some(rev), b"d").unwrap());
        assert_eq!(store.read("k").unwrap().unwrap().0, b"c");
        assert_eq!(heard.load(std::sync::atomic::Ordering::Relaxed), 2);
        drop(guard);
        let (_, rev) = store.read("k").unwrap().unwrap();
        assert!(store.compare_and_put("k", Some(rev), b"e").unwrap());
        assert_eq!(
            heard.load(std::sync::atomic::Ordering::Relaxed),
            2,
            "a dropped watch hears nothing"
        );
    }
}
