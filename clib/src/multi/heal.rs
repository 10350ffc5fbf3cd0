//! Healing a replicated space (docs/replication.md, "Healing"): regions below the replicas
//! they were allocated with get a new replica on another live node, filled from the primary
//! while the region stays in use, and a node that came back is readmitted with a fresh
//! address space.
//!
//! How a replica joins without stopping the region: under the region's lock (no operation of
//! the region in flight) it is added as *joining*: from then on every write and every atomic
//! of the region appends its records to the new node's log, as for a backup. Then the region
//! is copied from the primary in chunks, each under the region's lock and the new node's log
//! lock: so a chunk's copy sees every write acknowledged before it, and no log apply writes
//! the new replica meanwhile. A record older than the copy that is applied later writes what
//! the copy already holds or what a later record overwrites again: applying the log in order
//! over the copy ends at the primary's state. When the copy is complete the replica becomes
//! a backup (the last in the list, so promoted last).

use super::{connect_node, lock, node_failed, pool, Inner, MultiClient, Region};
use crate::{ClioError, Result};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex, Weak};
use std::time::Duration;

/// How often the background healer looks for short regions when nothing woke it (a heal
/// that found no room, or failed, is retried so).
const HEAL_RETRY: Duration = Duration::from_secs(1);

/// Start the background healer of a client (`MultiConfig::auto_heal`). It holds the client
/// only while it heals (it waits on `due` alone), and ends within [`HEAL_RETRY`] of the
/// client's drop.
pub(super) fn spawn_healer(me: Weak<Inner>, due: Arc<(Mutex<bool>, Condvar)>) -> Result<()> {
    std::thread::Builder::new()
        .name("clio-multi-heal".into())
        .spawn(move || loop {
            {
                let Some(inner) = me.upgrade() else { return };
                let m = MultiClient::internal(inner);
                // The pool's node entries, in case a watch event was missed.
                let _ = m.refresh_nodes();
                if m.short_regions() > 0 {
                    // An error (a node failing meanwhile, the pool's store away) is retried
                    // at the next wake or retry.
                    let _ = m.heal();
                }
            }
            let (flag, cv) = &*due;
            let mut woken = lock(flag);
            if !*woken {
                woken = cv
                    .wait_timeout(woken, HEAL_RETRY)
                    .unwrap_or_else(|p| p.into_inner())
                    .0;
            }
            *woken = false;
        })
        .map(|_| ())
        .map_err(|e| ClioError::Transport(format!("starting the healer thread: {e}")))
}

/// What one [`MultiClient::heal`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HealReport {
    /// Regions that got a new replica.
    pub replicas_added: u64,
    /// Bytes copied into new replicas.
    pub bytes_copied: u64,
    /// Regions still below their target (no live node with room that is not already a
    /// replica).
    pub still_short: u64,
}

/// How a fill ended.
pub(super) enum Fill {
    Done(u64),
    /// The new node failed; another may be tried.
    NodeFailed,
}

impl MultiClient {
    /// Wake the background healer (a node was dropped or readmitted).
    pub(super) fn wake_healer(&self) {
        let (flag, cv) = &*self.inner.heal_due;
        *lock(flag) = true;
        cv.notify_one();
    }

    /// Regions with fewer live replicas than they were allocated with (and one at least).
    pub fn short_regions(&self) -> usize {
        let regions = self.inner.regions.read().unwrap_or_else(|p| p.into_inner());
        regions
            .values()
            .filter(|r| !r.replicas.is_empty() && r.replicas.len() < r.target)
            .count()
    }

    /// Give every region that has fewer live replicas than it was allocated with (a node
    /// failed) a new replica on another live node, one at a time, while the regions stay in
    /// use. The regions with no replica left stay lost (`NodeLost`).
    pub fn heal(&self) -> Result<HealReport> {
        let _one = lock(&self.inner.healing);
        let short: Vec<u64> = {
            let regions = self.inner.regions.read().unwrap_or_else(|p| p.into_inner());
            regions
                .iter()
                .filter(|(_, r)| !r.replicas.is_empty() && r.replicas.len() < r.target)
                .map(|(&b, _)| b)
                .collect()
        };
        let mut rep = HealReport::default();
        for base in short {
            loop {
                match self.top_up(base)? {
                    Some(0) => break,
                    Some(bytes) => {
                        rep.replicas_added += 1;
                        rep.bytes_copied += bytes;
                    }
                    None => {
                        rep.still_short += 1;
                        break;
                    }
                }
            }
        }
        let mut s = lock(&self.inner.stats);
        s.replicas_added += rep.replicas_added;
        s.bytes_copied += rep.bytes_copied;
        Ok(rep)
    }

    pub(super) fn snapshot(&self, base: u64) -> Result<Region> {
        let regions = self.inner.regions.read().unwrap_or_else(|p| p.into_inner());
        regions
            .get(&base)
            .cloned()
            .ok_or(ClioError::Unmapped { va: base })
    }

    fn edit(&self, base: u64, f: impl FnOnce(&mut Region)) -> Result<()> {
        let mut regions = self
            .inner
            .regions
            .write()
            .unwrap_or_else(|p| p.into_inner());
        let r = regions
            .get_mut(&base)
            .ok_or(ClioError::Unmapped { va: base })?;
        f(r);
        Ok(())
    }

    /// Add one replica to the region at `base`: `Some(bytes copied)`, `Some(0)` when it is at
    /// its target (or lost), `None` when no node can take one.
    fn top_up(&self, base: u64) -> Result<Option<u64>> {
        if self.shared() {
            return self.top_up_shared(base);
        }
        loop {
            let r = self.snapshot(base)?;
            if r.replicas.is_empty() || r.replicas.len() >= r.target {
                return Ok(Some(0));
            }
            let Some((j, va)) = self.place_replica(&r, r.len)? else {
                return Ok(None);
            };
            match self.fill(base, j, va)? {
                Fill::Done(bytes) => return Ok(Some(bytes)),
                Fill::NodeFailed => continue,
            }
        }
    }

    /// Allocate `bytes` for a new replica of `r` on the live node with the most room that
    /// holds none of it (a node that fails is taken out, one that is full is counted so, and
    /// the next one tried): the node and the address there, `None` when no node can.
    pub(super) fn place_replica(&self, r: &Region, bytes: u64) -> Result<Option<(usize, u64)>> {
        let inner = &self.inner;
        loop {
            let room = |i: usize| {
                let n = inner.nodes.at(i);
                n.capacity.saturating_sub(n.used.load(Ordering::Relaxed))
            };
            let mut order: Vec<usize> = (0..inner.nodes.len())
                .filter(|&i| {
                    !inner.nodes.at(i).dead.load(Ordering::Acquire)
                        && !r.replicas.iter().chain(&r.joining).any(|&(n, _)| n == i)
                        && room(i) >= r.len
                })
                .collect();
            order.sort_by_key(|&i| (std::cmp::Reverse(room(i)), i));
            let Some(&j) = order.first() else {
                return Ok(None);
            };
            match inner.engine(j).and_then(|c| c.ralloc(bytes)) {
                Ok(va) => {
                    inner.nodes.at(j).used.fetch_add(r.len, Ordering::Relaxed);
                    return Ok(Some((j, va)));
                }
                Err(e) if node_failed(&e) => self.fail_node(j)?,
                Err(ClioError::OutOfMemory) | Err(ClioError::OutOfVirtualSpace) => {
                    // Full for this client: count it so, and try the next node.
                    inner
                        .nodes
                        .at(j)
                        .used
                        .store(inner.nodes.at(j).capacity, Ordering::Relaxed);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Join `(j, va)` to the region at `base`, copy the region into it from the primary and
    /// make it a backup.
    fn fill(&self, base: u64, j: usize, va: u64) -> Result<Fill> {
        let r = self.snapshot(base)?;
        {
            let _g = lock(&r.sync.lock);
            self.edit(base, |r| r.joining.push((j, va)))?;
        }
        let mut off = 0;
        while off < r.len {
            let n = (r.len - off).min(self.inner.cfg.heal_chunk.max(8)) as usize;
            let r = self.snapshot(base)?;
            let g = r.sync.enter_for_fill();
            if r.sync.stale.load(Ordering::Acquire) {
                self.promote(base)?;
                continue;
            }
            let r = self.snapshot(base)?;
            if !r.joining.contains(&(j, va)) {
                // The new node failed (dropped from the region meanwhile).
                return Ok(Fill::NodeFailed);
            }
            let Some(&(p, pva)) = r.replicas.first() else {
                return Err(ClioError::NodeLost { addr: base });
            };
            let log = lock(&self.inner.nodes.at(j).log);
            let step = std::time::Instant::now();
            let data = match self.inner.engine(p).and_then(|c| c.rread(pva + off, n)) {
                Ok(d) => d,
                Err(e) if node_failed(&e) => {
                    drop((log, g));
                    self.fail_node(p)?;
                    continue;
                }
                Err(e) => return Err(e),
            };
            let durable = self.inner.cfg.durable;
            let target = self.inner.engine(j);
            match target.and_then(|c| {
                if durable {
                    c.rwrite_durable(va + off, &data)
                } else {
                    c.rwrite(va + off, &data)
                }
            }) {
                Ok(()) => {}
                Err(e) if node_failed(&e) => {
                    drop((log, g));
                    self.fail_node(j)?;
                    return Ok(Fill::NodeFailed);
                }
                Err(e) => return Err(e),
            }
            off += n as u64;
            drop((log, g));
            // The region's lock is not fair: without a pause the fill would take it again at
            // once and starve the region's writers. Pausing as long as the copy took leaves
            // them at least half of the region's time.
            std::thread::sleep(step.elapsed());
        }
        let r = self.snapshot(base)?;
        let _g = lock(&r.sync.lock);
        let mut joined = false;
        self.edit(base, |r| {
            if let Some(k) = r.joining.iter().position(|&x| x == (j, va)) {
                r.joining.remove(k);
                r.replicas.push((j, va));
                joined = true;
            }
        })?;
        Ok(if joined {
            Fill::Done(r.len)
        } else {
            Fill::NodeFailed
        })
    }

    /// Put node `i` back in service after it was declared dead (it restarted, or was
    /// repaired): with a pool, through a view stored in the pool's store (every client of
    /// the pool then connects to it again); here, with a fresh address space, nothing
    /// placed, so [`MultiClient::heal`] and new allocations use it. Its old replicas are
    /// not reused: it missed writes.
    pub fn readmit(&self, i: usize) -> Result<()> {
        let n = self
            .inner
            .nodes
            .get(i)
            .ok_or(ClioError::InvalidArgument("readmit: no such node"))?;
        match &self.inner.pool {
            Some(p) => {
                let v = pool::bring_in(p, n.addr)?;
                self.adopt(&v);
                if n.dead.load(Ordering::Acquire) {
                    // It did not answer: it stays in the view until a client finds it dead.
                    self.revive(i)?;
                }
                Ok(())
            }
            None => self.revive(i),
        }
    }

    /// A fresh address space at dead node `i`, which is then live again with nothing placed.
    pub(super) fn revive(&self, i: usize) -> Result<()> {
        let n = self.inner.nodes.at(i);
        if n.reviving.swap(true, Ordering::AcqRel) {
            return Ok(()); // another thread is at it
        }
        let r = self.revive_alone(i);
        n.reviving.store(false, Ordering::Release);
        r
    }

    fn revive_alone(&self, i: usize) -> Result<()> {
        let n = self.inner.nodes.at(i);
        let _g = lock(&self.inner.failover);
        if !n.dead.load(Ordering::Acquire) {
            return Ok(());
        }
        let c = connect_node(n.addr, &self.inner.cfg)?;
        *n.client.write().unwrap_or_else(|p| p.into_inner()) = Some(Arc::new(c));
        *lock(&n.log) = None;
        n.used.store(0, Ordering::Relaxed);
        drop(_g);
        if self.shared() {
            // Publish the new address space in the space's record, or join the one another
            // writer published first (the record forgot the old one when the node was brought
            // back in, `pool::bring_in`), before anything of this client uses it. Not under
            // `failover`: a node failing here is taken out through the view.
            self.reconcile_node(i)?;
        }
        n.dead.store(false, Ordering::Release);
        lock(&self.inner.stats).readmitted += 1;
        self.wake_healer();
        Ok(())
    }
}
