//! Several writers on one replicated space (docs/replication.md, "Several writers"): the
//! clients of a pool that name the same [`MultiConfig::space`] share, at every node, one
//! remote address space (the first writer registers it, the others join it), one
//! node-ordered log per node, and the region table, all kept in the space's record in the
//! pool's store (`space_record.rs`).
//!
//! What keeps the replicas equal with several writers:
//! * **A lock per region at its primary.** Every write and atomic of a region runs while the
//!   region's lock word (the word after the region's bytes, in the primary's replica) holds
//!   the writer's token: the primary executes the region's operations in the order the
//!   backups' logs receive their records, as with one writer.
//! * **One applier per log.** A log is applied only while its apply lock word
//!   ([`clio_proto::replog::APPLY_LOCK_OFFSET`]) holds the applier's token.
//! * **A holder that is gone loses its lock.** A writer waits for a lock as long as its
//!   holder is present in the pool (`/clio/pools/<pool>/clients/<id>`, under a lease). Once a
//!   holder's presence is gone, the waiter stores a new view (epoch + 1), raises every node
//!   the holder could still write to (the region's replicas, or the log's node) and takes the
//!   lock over by compare-and-swap: from then on the holder, should it still run, is refused
//!   `Stale` there. A region whose holder vanished in the middle of an operation may have the
//!   write at the primary and not at a backup: the new holder applies the backups' logs and
//!   copies the primary's bytes to every backup before its own operation (a redo: what the
//!   vanished operation wrote is kept or not, as for any operation that never returned).
//! * **The region table changes by compare-and-put** on the record, and a writer that meets
//!   an address it does not know reads the record again; the store's watch tells every writer
//!   of every change.

use super::space_record::{SpaceNode, SpaceRecord, SpaceRegion};
use super::*;
use clio_proto::replog::APPLY_LOCK_OFFSET;
use std::time::Instant;

/// The longest pause between a waiter's tries for a lock word: about a round trip on a
/// LAN. A holder releases a region's lock and takes it again for its next operation one round
/// trip later; a waiter that paused much longer than that would almost never find the word
/// free, and one busy writer could hold off the others for as long as it keeps writing.
const LOCK_POLL: Duration = Duration::from_micros(32);

/// Read-and-compare-and-put attempts on a space's record before it is an error.
const EDITS: usize = 1000;

/// A writer's token in the lock words of a shared space: a hash of its presence id (never
/// 0), so a waiter can tell from the pool's presence entries whether the holder is there.
pub(super) fn token_of(id: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in id.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h | 1
}

/// Where a region's lock word is in each of its replicas: the first 8-byte word past its
/// bytes (a shared space allocates it with the region, [`MultiClient::ralloc`]). The word
/// after it is the lock's *wanted* word: 0, or the token of a writer waiting for the lock.
pub(super) fn lock_offset(len: u64) -> u64 {
    len.div_ceil(8) * 8
}

/// Bytes a replica of a `len`-byte region takes (with its lock and wanted words in a shared
/// space).
pub(super) fn replica_bytes(len: u64, shared: bool) -> u64 {
    if shared {
        lock_offset(len) + 16
    } else {
        len
    }
}

/// How long a writer keeps a region's lock after its last operation on it when nobody asked
/// for it: its next operation within this time costs no lock round trip.
const KEEP_IDLE: Duration = Duration::from_millis(1);

/// Start the thread that gives back the region locks a writer kept and no longer uses
/// ([`KEEP_IDLE`]). It holds the client only while it looks, and ends with it.
pub(super) fn spawn_lock_keeper(me: Weak<Inner>) -> Result<()> {
    std::thread::Builder::new()
        .name("clio-space-locks".into())
        .spawn(move || loop {
            let busy = {
                let Some(inner) = me.upgrade() else { return };
                let m = MultiClient::internal(inner);
                m.give_back_idle_locks()
            };
            std::thread::sleep(if busy { KEEP_IDLE } else { KEEP_IDLE * 20 });
        })
        .map(|_| ())
        .map_err(|e| ClioError::Transport(format!("starting the lock keeper thread: {e}")))
}

/// A region's lock held by this writer for one operation.
pub(super) struct RegionHold {
    base: u64,
    /// The primary, where the lock word is.
    pub(super) node: usize,
    word: u64,
    /// The read of the lock's wanted word that went out with the operation.
    wanted: Option<(Arc<Client>, crate::Handle)>,
}

/// Join the address space `creds` at the node at `addr`, at the view's `epoch`.
fn join_node(
    addr: SocketAddr,
    cfg: &MultiConfig,
    creds: Credentials,
    epoch: u64,
) -> Result<Client> {
    let t = Box::new(crate::transport::UdpTransport::connect(addr)?);
    let mut c = cfg.node.clone();
    c.epoch = clio_proto::epoch::wire(epoch);
    Client::join(t, c, creds)
}

/// The answers of a join that mean "that address space is gone" (its last member left).
fn ras_gone(e: &ClioError) -> bool {
    matches!(e, ClioError::Denied | ClioError::UnknownProcess)
}

/// The engine at a node of a shared space: the space's address space there if the record
/// names one that still lives, else a new one (published by [`MultiClient::reconcile`]).
pub(super) fn open_node(
    addr: SocketAddr,
    cfg: &MultiConfig,
    rec: Option<&SpaceRecord>,
    epoch: u64,
) -> Result<Client> {
    if let Some(n) = rec.and_then(|r| r.nodes.get(&addr)) {
        match join_node(addr, cfg, n.creds, epoch) {
            Err(e) if ras_gone(&e) => {}
            other => return other,
        }
    }
    connect_node(addr, cfg)
}

impl MultiClient {
    /// Whether this client writes a shared space.
    pub(super) fn shared(&self) -> bool {
        self.inner.cfg.space.is_some() && self.inner.pool.is_some()
    }

    pub(super) fn space_pool(&self) -> Result<(&Pool, String)> {
        match (&self.inner.pool, &self.inner.cfg.space) {
            (Some(p), Some(s)) => Ok((p, p.space_key(s))),
            _ => Err(ClioError::InvalidArgument("not a writer of a shared space")),
        }
    }

    /// The space's record and its revision (a new, empty record and `None` when absent).
    pub(super) fn read_space(&self) -> Result<(SpaceRecord, Option<u64>)> {
        let (p, key) = self.space_pool()?;
        Ok(match p.store.read(&key)? {
            None => (SpaceRecord::new(GLOBAL_BASE), None),
            Some((b, rev)) => (SpaceRecord::decode(&b)?, Some(rev)),
        })
    }

    /// Change the space's record with `f` (read, change, compare-and-put, again if another
    /// writer's change came first), then act on what is stored. `f` may run several times.
    pub(super) fn edit_space<T>(
        &self,
        mut f: impl FnMut(&mut SpaceRecord) -> Result<T>,
    ) -> Result<T> {
        let (p, key) = self.space_pool()?;
        for _ in 0..EDITS {
            let (mut rec, rev) = self.read_space()?;
            let before = rec.clone();
            let out = f(&mut rec)?;
            if rec == before {
                self.sync_regions(&rec, rev)?;
                return Ok(out);
            }
            if p.store.compare_and_put(&key, rev, &rec.encode())? {
                // Taken with the revision it was stored at (a later one, if another writer's
                // change came first meanwhile): see `sync_regions`.
                let (rec, rev) = self.read_space()?;
                self.sync_regions(&rec, rev)?;
                return Ok(out);
            }
        }
        Err(ClioError::ConfigStore(format!(
            "the shared space's record changed under each of {EDITS} edits"
        )))
    }

    /// Read the space's record and act on it: join the space's address space at every node
    /// in service, and take the region table.
    pub(super) fn refresh_space(&self) -> Result<()> {
        if !self.shared() {
            return Ok(());
        }
        self.reconcile()?;
        let (rec, rev) = self.read_space()?;
        self.sync_regions(&rec, rev)
    }

    /// Make this client's engine at every node in service a member of the space's address
    /// space there: publish ours where the record names none (or one that is gone), join the
    /// record's where it names another.
    pub(super) fn reconcile(&self) -> Result<()> {
        for (i, n) in self.inner.nodes.iter() {
            if !n.dead.load(Ordering::Acquire) {
                self.reconcile_node(i)?;
            }
        }
        Ok(())
    }

    /// [`MultiClient::reconcile`] at node `i` (also one being revived, not yet in use).
    pub(super) fn reconcile_node(&self, i: usize) -> Result<()> {
        let n = self.inner.nodes.at(i);
        let Ok(mine) = n.engine() else {
            return Ok(());
        };
        let creds = mine.credentials();
        for _ in 0..EDITS {
            let (rec, _) = self.read_space()?;
            match rec.nodes.get(&n.addr) {
                Some(s) if s.creds == creds => {
                    // Noted if nobody holds the log's mutex (an in-process store's watch
                    // runs on the thread that wrote, which may hold it); otherwise
                    // `ensure_log` reads it from the record when it is needed.
                    if let (true, Ok(mut g)) = (s.log != 0, n.log.try_lock()) {
                        *g = Some(s.log);
                    }
                    return Ok(());
                }
                Some(s) => match join_node(n.addr, &self.inner.cfg, s.creds, self.epoch()) {
                    Ok(c) => {
                        *n.client.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(c));
                        if let Ok(mut g) = n.log.try_lock() {
                            *g = (s.log != 0).then_some(s.log); // as above
                        }
                        // Ours was never published: nothing of the space is in it.
                        let _ = mine.unregister(true);
                        return Ok(());
                    }
                    Err(e) if ras_gone(&e) => {
                        // Its last member left: whatever the space had there is gone.
                        let gone = s.creds;
                        self.edit_space(|rec| {
                            if rec.nodes.get(&n.addr).is_some_and(|x| x.creds == gone) {
                                rec.nodes.insert(n.addr, SpaceNode { creds, log: 0 });
                                for r in rec.regions.values_mut() {
                                    r.replicas.retain(|&(a, _)| a != n.addr);
                                }
                            }
                            Ok(())
                        })?;
                    }
                    // Raised to a view this writer has not adopted yet.
                    Err(ClioError::Stale) => self.refresh_view()?,
                    Err(e) if node_failed(&e) => {
                        return self.fail_node(i);
                    }
                    Err(e) => return Err(e),
                },
                None => {
                    // A node out of the view is not entered again (the record forgot
                    // it when it went out; a writer that has not dropped it yet is late).
                    let (p, _) = self.space_pool()?;
                    if pool::read_view(p)?.0.out.contains(&n.addr) {
                        return Ok(());
                    }
                    self.edit_space(|rec| {
                        rec.nodes
                            .entry(n.addr)
                            .or_insert(SpaceNode { creds, log: 0 });
                        Ok(())
                    })?
                }
            }
        }
        Err(ClioError::ConfigStore(format!(
            "the shared space's entry for node {} changed under each of {EDITS} reads",
            n.addr
        )))
    }

    /// Take the record's region table: each region's replicas on nodes in service (the first
    /// one the primary). A region whose primary changed is marked stale (its new primary's
    /// log is applied before anything else reaches it). A node the record names and this
    /// client does not know is joined first (or taken out through the view if it does not
    /// answer), so no writer ever leaves out a backup the others write to.
    ///
    /// `rev` is the record's revision in the store: a record older than the one taken last is
    /// ignored (two threads that read the record one after the other may get here in the
    /// other order, and an older table could lack a replica every writer must append to).
    pub(super) fn sync_regions(&self, rec: &SpaceRecord, rev: Option<u64>) -> Result<()> {
        for (&addr, s) in &rec.nodes {
            if self.inner.nodes.iter().any(|(_, n)| n.addr == addr) {
                continue;
            }
            let out = pool::read_view(self.space_pool()?.0)?.0.out.contains(&addr);
            let client = if out {
                None
            } else {
                match join_node(addr, &self.inner.cfg, s.creds, self.epoch()) {
                    Ok(c) => Some(Arc::new(c)),
                    Err(e) if node_failed(&e) => None,
                    Err(e) => return Err(e),
                }
            };
            let dead = client.is_none();
            let n = Node::new(addr, 0, client, dead);
            *lock(&n.log) = (s.log != 0).then_some(s.log);
            let (i, added) = self.inner.nodes.add(n)?;
            if !added {
                continue; // another thread added it meanwhile
            }
            lock(&self.inner.stats).nodes_added += 1;
            if dead && !out {
                // Joined by another writer but not answering this one: out for everyone.
                self.inner.nodes.at(i).dead.store(false, Ordering::Release);
                self.fail_node(i)?;
            }
        }
        let live: std::collections::HashMap<SocketAddr, usize> = self
            .inner
            .nodes
            .iter()
            .filter(|(_, n)| !n.dead.load(Ordering::Acquire))
            .map(|(i, n)| (n.addr, i))
            .collect();
        let mut regions = self
            .inner
            .regions
            .write()
            .unwrap_or_else(|p| p.into_inner());
        let rev = rev.unwrap_or(0);
        if rev < self.inner.space_rev.load(Ordering::Acquire) {
            return Ok(());
        }
        self.inner.space_rev.store(rev, Ordering::Release);
        let mut table = BTreeMap::new();
        for (&base, s) in &rec.regions {
            let replicas: Vec<(usize, u64)> = s
                .replicas
                .iter()
                .filter_map(|(a, va)| live.get(a).map(|&i| (i, *va)))
                .collect();
            let (sync, moved) = match regions.get(&base) {
                Some(old) => (old.sync.clone(), old.replicas.first() != replicas.first()),
                None => (
                    Arc::new(RegionSync::default()),
                    s.replicas.first().map(|r| r.0)
                        != replicas.first().map(|&(i, _)| self.inner.nodes.at(i).addr),
                ),
            };
            if moved {
                sync.stale.store(true, Ordering::Release);
            }
            let joining = s
                .joining
                .iter()
                .filter_map(|(a, va, _)| live.get(a).map(|&i| (i, *va)))
                .collect();
            table.insert(
                base,
                Region {
                    len: s.len,
                    replicas,
                    joining,
                    target: s.target,
                    sync,
                },
            );
        }
        *regions = table;
        Ok(())
    }

    /// A newer view `v` is being adopted: forget in the space's record what it had on the
    /// nodes `v` has out (they missed writes; whoever sees it first does it), and take the
    /// record's table before any request of the new view leaves, so that a writer that learns
    /// a view learns the table it goes with (a replica joined under the view, `space_heal.rs`).
    /// Best effort: a store away is met again at the next operation.
    pub(super) fn adopt_space(&self, v: &View) {
        let out: Vec<SocketAddr> = v.out.iter().copied().collect();
        let _ = self.edit_space(|rec| {
            for &a in &out {
                rec.strip(a);
            }
            Ok(())
        });
    }

    /// Enter a new region in the space's record: its global address.
    pub(super) fn publish_region(
        &self,
        len: u64,
        target: usize,
        got: &[(usize, u64)],
    ) -> Result<u64> {
        let replicas: Vec<(SocketAddr, u64)> = got
            .iter()
            .map(|&(i, va)| (self.inner.nodes.at(i).addr, va))
            .collect();
        let span = global_span(len);
        self.edit_space(|rec| {
            let base = rec.next;
            rec.next = base.checked_add(span).ok_or(ClioError::OutOfMemory)?;
            rec.regions.insert(
                base,
                SpaceRegion {
                    len,
                    target,
                    replicas: replicas.clone(),
                    joining: Vec::new(),
                },
            );
            Ok(base)
        })
    }

    /// Take the region at `base` out of the space's record; the region as it was.
    pub(super) fn unpublish_region(&self, base: u64) -> Result<Region> {
        let r = self.locate(base, 1)?.1;
        {
            // Its lock goes with it (given back first: the bytes may serve another region).
            let _g = r.sync.enter();
            if let Some((n, w, _, _)) = lock(&self.inner.held).remove(&base) {
                self.release(n, w);
            }
        }
        self.edit_space(|rec| {
            rec.regions.remove(&base);
            Ok(())
        })?;
        Ok(r)
    }

    /// The space's log at node `b`: the record's, or a new one published there (another
    /// writer's that came first wins, ours is freed).
    pub(super) fn space_log(&self, b: usize) -> Result<u64> {
        let n = self.inner.nodes.at(b);
        let creds = self.inner.engine(b)?.credentials();
        let (rec, _) = self.read_space()?;
        if let Some(s) = rec
            .nodes
            .get(&n.addr)
            .filter(|s| s.creds == creds && s.log != 0)
        {
            return Ok(s.log);
        }
        let c = self.inner.engine(b)?;
        let va = c.ralloc(self.inner.cfg.log_bytes)?;
        let got = self.edit_space(|rec| match rec.nodes.get_mut(&n.addr) {
            Some(s) if s.creds == creds => {
                if s.log == 0 {
                    s.log = va;
                }
                Ok(s.log)
            }
            _ => Err(ClioError::Transport(format!(
                "node {} is not in the shared space",
                n.addr
            ))),
        });
        if got.as_ref().map_or(true, |&l| l != va) {
            // Best effort: it holds nothing.
            let _ = c.rfree(va);
        }
        got
    }

    /// Whether a writer whose token is `token` is present in the pool now.
    pub(super) fn present(&self, token: u64) -> Result<bool> {
        let (p, _) = self.space_pool()?;
        Ok(p.clients()?.iter().any(|(id, _)| token_of(id) == token))
    }

    /// Take region `r`'s lock at its primary for an operation, unless this writer kept it
    /// since its last one (no round trip then). A read of the lock's wanted word goes out with
    /// the operation: [`MultiClient::leave_region`] gives the lock back if another writer
    /// waits for it.
    pub(super) fn enter_region(
        &self,
        base: u64,
        r: &Region,
    ) -> std::result::Result<RegionHold, Failed> {
        let (p, pva) = r.replicas[0];
        let word = pva + lock_offset(r.len);
        // A lock kept under an older view is taken again (a compare-and-swap that finds this
        // writer's token, if nobody took the lock over meanwhile): a waiter takes a lock over
        // only after storing a new view, so a kept lock is this writer's as long as the view
        // it was taken or checked under is the current one.
        let epoch = self.epoch();
        let kept = {
            let mut held = lock(&self.inner.held);
            match held.get(&base) {
                Some(&(n, w, _, e)) if (n, w, e) == (p, word, epoch) => true,
                Some(_) => {
                    held.remove(&base); // another primary, or an older view
                    false
                }
                None => false,
            }
        };
        if !kept {
            self.hold(p, word, Some(r))?;
            lock(&self.inner.held).insert(base, (p, word, Instant::now(), epoch));
            lock(&self.inner.stats).locks_taken += 1;
        }
        let c = self.inner.engine(p).map_err(|e| Failed::at(p, e))?;
        let wanted = c.rread_async(word + 8, 8).ok().map(|h| (c, h));
        Ok(RegionHold {
            base,
            node: p,
            word,
            wanted,
        })
    }

    /// The operation under `h` is over (`ok`: it ran, or needs running again under the same
    /// lock): keep the lock for the next one unless another writer wants it or the operation
    /// failed.
    pub(super) fn leave_region(&self, h: RegionHold, ok: bool) {
        let wanted = h.wanted.and_then(|(c, hd)| match c.rpoll_one(hd) {
            Ok(crate::Output::Data(d)) => d.try_into().ok().map(u64::from_le_bytes),
            _ => None,
        });
        let token = self.inner.token;
        if wanted == Some(token) {
            // This writer's own request, left from a wait that ended in an error: withdrawn
            // (best effort), or it would hide every other writer's.
            let _ = self
                .inner
                .engine(h.node)
                .and_then(|c| c.compare_and_swap(h.word + 8, token, 0));
        }
        let keep = ok && wanted.is_some_and(|w| w == 0 || w == token);
        let mut held = lock(&self.inner.held);
        if keep {
            if let Some(e) = held.get_mut(&h.base) {
                e.2 = Instant::now();
            }
        } else {
            held.remove(&h.base);
            drop(held);
            self.release(h.node, h.word);
            if wanted.is_some_and(|w| w != 0) {
                // Another writer waits, trying a round trip apart: this one's next operation
                // would take the lock again as soon as it is free, so it pauses for two of
                // the waiter's tries first.
                std::thread::sleep(LOCK_POLL * 2);
            }
        }
    }

    /// Give back the region locks kept and unused for [`KEEP_IDLE`] (each under its region's
    /// local lock, so no operation of this writer is under it meanwhile). Whether any is kept.
    fn give_back_idle_locks(&self) -> bool {
        let idle: Vec<(u64, usize, u64)> = lock(&self.inner.held)
            .iter()
            .filter(|(_, e)| e.2.elapsed() >= KEEP_IDLE)
            .map(|(&b, &(n, w, _, _))| (b, n, w))
            .collect();
        for (base, node, word) in idle {
            let sync = {
                let regions = self.inner.regions.read().unwrap_or_else(|p| p.into_inner());
                regions.get(&base).map(|r| r.sync.clone())
            };
            let Some(sync) = sync else {
                lock(&self.inner.held).remove(&base); // freed: nothing to give back
                continue;
            };
            let Ok(guard) = sync.lock.try_lock() else {
                continue; // in use: not idle after all
            };
            let mut held = lock(&self.inner.held);
            if held
                .get(&base)
                .is_some_and(|e| (e.0, e.1) == (node, word) && e.2.elapsed() >= KEEP_IDLE)
            {
                held.remove(&base);
                drop(held);
                self.release(node, word);
            }
            drop(guard);
        }
        !lock(&self.inner.held).is_empty()
    }

    /// Take the lock word at `va` of node `i` (a region's, `region` given, or a log's apply
    /// lock). Waits while another writer holds it (for a region's lock, telling the holder
    /// through the wanted word, so that it gives the lock back after its operation); once its
    /// holder has been absent from the pool, breaks it (see the module's doc).
    pub(super) fn hold(
        &self,
        i: usize,
        va: u64,
        region: Option<&Region>,
    ) -> std::result::Result<(), Failed> {
        let token = self.inner.token;
        let mut backoff = Duration::from_micros(1);
        let mut seen = (0u64, Instant::now());
        let mut asked = false;
        loop {
            let c = self.inner.engine(i).map_err(|e| Failed::at(i, e))?;
            let old = c
                .compare_and_swap(va, 0, token)
                .map_err(|e| Failed::at(i, e))?;
            if old == 0 || old == token {
                if asked {
                    // Best effort: a wanted word left set only makes the next holder give
                    // the lock back after each operation.
                    let _ = c.compare_and_swap(va + 8, token, 0);
                }
                return Ok(());
            }
            if region.is_some() && !asked {
                let w = c
                    .compare_and_swap(va + 8, 0, token)
                    .map_err(|e| Failed::at(i, e))?;
                asked = w == 0;
            }
            if old != seen.0 {
                seen = (old, Instant::now());
            } else if seen.1.elapsed() >= self.inner.cfg.presence_lease {
                if !self.present(old).map_err(Failed::Op)? {
                    if self.break_lock(i, va, old, region)? {
                        return Ok(());
                    }
                    continue;
                }
                seen.1 = Instant::now();
            }
            std::thread::sleep(backoff);
            backoff = (backoff * 2).min(LOCK_POLL);
        }
    }

    /// Release a lock word this writer holds (best effort: a node gone takes its locks with
    /// it; a view that moved on is read and the release tried again).
    pub(super) fn release(&self, i: usize, va: u64) {
        for _ in 0..3 {
            match self
                .inner
                .engine(i)
                .and_then(|c| c.compare_and_swap(va, self.inner.token, 0))
            {
                Err(ClioError::Stale) => {
                    lock(&self.inner.stats).stale_answers += 1;
                    if self.refresh_view().is_err() {
                        return;
                    }
                }
                _ => return,
            }
        }
    }

    /// The holder `holder` of the lock word at `va` of node `i` is gone: fence it (a new
    /// view, raised at every node it could write to) and take the lock over. A region's
    /// replicas are then made equal again. False if the word changed meanwhile.
    fn break_lock(
        &self,
        i: usize,
        va: u64,
        holder: u64,
        region: Option<&Region>,
    ) -> std::result::Result<bool, Failed> {
        let (p, _) = self.space_pool().map_err(Failed::Op)?;
        let v = pool::bump(p).map_err(|e| Failed::Op(e.into()))?;
        self.adopt(&v);
        let reach: Vec<usize> = match region {
            Some(r) => r
                .replicas
                .iter()
                .chain(&r.joining)
                .map(|&(n, _)| n)
                .collect(),
            None => vec![i],
        };
        for n in reach {
            self.inner.engine(n).map_err(|e| Failed::at(n, e))?;
        }
        let c = self.inner.engine(i).map_err(|e| Failed::at(i, e))?;
        if c.compare_and_swap(va, holder, self.inner.token)
            .map_err(|e| Failed::at(i, e))?
            != holder
        {
            return Ok(false);
        }
        lock(&self.inner.stats).locks_broken += 1;
        if let Some(r) = region {
            self.repair(r)?;
        }
        Ok(true)
    }

    /// Make every backup of `r` equal to its primary (its lock held, every node of it raised
    /// to this view): apply the backups' logs, then copy the primary's bytes over.
    fn repair(&self, r: &Region) -> std::result::Result<(), Failed> {
        for &(b, _) in r.record_targets() {
            self.apply_log(b)?;
        }
        let step = self.inner.cfg.heal_chunk.max(8);
        let mut off = 0;
        while off < r.len {
            let n = (r.len - off).min(step) as usize;
            for &to in r.record_targets() {
                self.copy_range(r.replicas[0], to, off, n)?;
            }
            off += n as u64;
        }
        lock(&self.inner.stats).repairs += 1;
        Ok(())
    }

    /// Copy `n` bytes at offset `off` of a region from its replica `from` to its replica `to`
    /// (each `(node, va)`; durably with `MultiConfig::durable`).
    pub(super) fn copy_range(
        &self,
        (p, pva): (usize, u64),
        (j, va): (usize, u64),
        off: u64,
        n: usize,
    ) -> std::result::Result<(), Failed> {
        let data = self
            .inner
            .engine(p)
            .and_then(|c| c.rread(pva + off, n))
            .map_err(|e| Failed::at(p, e))?;
        let c = self.inner.engine(j).map_err(|e| Failed::at(j, e))?;
        if self.inner.cfg.durable {
            c.rwrite_durable(va + off, &data)
        } else {
            c.rwrite(va + off, &data)
        }
        .map_err(|e| Failed::at(j, e))
    }

    /// Whether this writer still holds the lock of region `r` at its primary (after a view
    /// change met in the middle of an atomic: if not, a waiter broke it and repaired the
    /// region, and the atomic's record must not be appended again).
    pub(super) fn still_holds(&self, r: &Region) -> bool {
        let Some(&(p, pva)) = r.replicas.first() else {
            return false;
        };
        let at = pva + lock_offset(r.len);
        self.inner
            .engine(p)
            .and_then(|c| c.rread(at, 8))
            .is_ok_and(|w| w.as_slice() == self.inner.token.to_le_bytes())
    }

    /// The apply lock of node `b`'s log at `log`.
    pub(super) fn apply_lock(log: u64) -> u64 {
        log + APPLY_LOCK_OFFSET
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_never_zero_and_tell_ids_apart() {
        let a = token_of("pid1-00000001");
        let b = token_of("pid1-00000002");
        assert_ne!(a, b);
        assert_eq!(a & 1, 1);
        assert_eq!(token_of(""), 0xcbf2_9ce4_8422_2325 | 1);
    }

    #[test]
    fn the_lock_word_follows_the_regions_bytes() {
        assert_eq!(lock_offset(1), 8);
        assert_eq!(lock_offset(8), 8);
        assert_eq!(lock_offset(4096), 4096);
        assert_eq!(replica_bytes(4095, true), 4112);
        assert_eq!(replica_bytes(4095, false), 4095);
    }
}
