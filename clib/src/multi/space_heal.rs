//! Re-replication in a shared space (docs/replication.md, "Several writers"): a region that
//! lost a replica gets one on another node while every writer keeps using it, as for one
//! writer (`heal.rs`), with the region's lock at its primary where one writer takes its local
//! lock:
//!
//! 1. **Join.** Under the region's locks the filler enters the new replica in the space's
//!    record as joining (with its token; one filler per region: a joining replica whose
//!    filler is present is left alone), stores a new view and raises the primary to it before
//!    it releases the lock. A writer that has not read the record since meets `Stale` at the
//!    primary on its next operation and reads view and record again (a writer adopts a view's
//!    record before the view, `MultiClient::adopt_space`): from then on every write and
//!    atomic of the region appends its records to the new node's log too.
//! 2. **Copy** the region from the primary in `heal_chunk` steps, each under the region's
//!    locks and the new node's log apply lock (no log apply writes the new replica meanwhile).
//! 3. **Complete.** Under the region's locks the joining replica becomes the last replica,
//!    announced by a new view as in step 1 (so every writer promotes the same replica next).
//!
//! A filler that vanishes leaves a joining replica that receives records but is never read;
//! the next filler, finding its filler absent from the pool, replaces it.

use super::heal::Fill;
use super::*;
use std::time::Instant;

impl MultiClient {
    /// [`MultiClient::heal`]'s step for a region of a shared space: `Some(bytes copied)`,
    /// `Some(0)` when it is at its target, lost, or being filled by another writer, `None`
    /// when no node can take a replica.
    pub(super) fn top_up_shared(&self, base: u64) -> Result<Option<u64>> {
        loop {
            let r = self.snapshot(base)?;
            if r.replicas.is_empty() || r.replicas.len() >= r.target {
                return Ok(Some(0));
            }
            let bytes = space::replica_bytes(r.len, true);
            let Some((j, va)) = self.place_replica(&r, bytes)? else {
                return Ok(None);
            };
            let outcome = match self.join_shared(base, j, va) {
                Ok(true) => self.fill_shared(base, j, va),
                Ok(false) => Ok(Fill::Done(0)),
                Err(e) => Err(e),
            };
            match outcome {
                Ok(Fill::Done(0)) => {
                    // Not joined: nothing refers to it. Best effort, as any free.
                    self.inner
                        .nodes
                        .at(j)
                        .used
                        .fetch_sub(r.len, Ordering::Relaxed);
                    let _ = self.inner.engine(j).and_then(|c| c.rfree(va));
                    return Ok(Some(0));
                }
                Ok(Fill::Done(n)) => return Ok(Some(n)),
                Ok(Fill::NodeFailed) => continue,
                Err(e) => return Err(e),
            }
        }
    }

    /// Step 1: enter `(j, va)` as the region's joining replica. False if the region needs
    /// none any more or another writer present in the pool is filling one.
    fn join_shared(&self, base: u64, j: usize, va: u64) -> Result<bool> {
        // Records reach the new node from the moment it joins: its log must be there.
        if let Err(f) = self.ensure_log(j) {
            return Err(match f {
                Failed::Node(i) => {
                    self.fail_node(i)?;
                    ClioError::NodeLost { addr: base }
                }
                Failed::Op(e) | Failed::InDoubt(e) => e,
            });
        }
        let node = self.inner.nodes.at(j).addr;
        let token = self.inner.token;
        self.replicated(base, 1, |me, r, _| {
            let live: std::collections::HashSet<SocketAddr> = r
                .replicas
                .iter()
                .map(|&(i, _)| me.inner.nodes.at(i).addr)
                .collect();
            let joined = me
                .edit_space(|rec| {
                    let Some(sr) = rec.regions.get_mut(&base) else {
                        return Ok(false);
                    };
                    // Replicas on nodes out of service are gone for good.
                    sr.replicas.retain(|(a, _)| live.contains(a));
                    if sr.replicas.is_empty() || sr.replicas.len() >= sr.target {
                        return Ok(false);
                    }
                    for &(_, _, t) in &sr.joining {
                        if t != token && me.present(t)? {
                            return Ok(false);
                        }
                    }
                    sr.joining = vec![(node, va, token)];
                    Ok(true)
                })
                .map_err(Failed::Op)?;
            if joined {
                me.announce(r)?;
            }
            Ok(joined)
        })
    }

    /// The replica set of `r` changed in the record (its locks held): the region's other
    /// writers must know before their next operation on it, so a new view is stored and the
    /// primary raised to it before the lock goes (a writer still at the old view meets
    /// `Stale` there and reads view and record again).
    fn announce(&self, r: &Region) -> std::result::Result<(), Failed> {
        let (p, _) = self.space_pool().map_err(Failed::Op)?;
        let v = pool::bump(p).map_err(|e| Failed::Op(e.into()))?;
        self.adopt(&v);
        let p = r.replicas[0].0;
        self.inner.engine(p).map_err(|e| Failed::at(p, e))?;
        Ok(())
    }

    /// Steps 2 and 3: copy the region into `(j, va)` and make it a replica.
    fn fill_shared(&self, base: u64, j: usize, va: u64) -> Result<Fill> {
        let len = self.snapshot(base)?.len;
        let log = match self.ensure_log(j) {
            Ok(l) => l,
            Err(_) => return Ok(Fill::NodeFailed),
        };
        let mut off = 0;
        while off < len {
            let n = (len - off).min(self.inner.cfg.heal_chunk.max(8)) as usize;
            let step = Instant::now();
            let copied = self.replicated_as(base, 1, true, |me, r, _| {
                if !r.joining.contains(&(j, va)) {
                    return Ok(false); // the new node failed, or the region was freed
                }
                // This process's appliers of the log, then every writer's.
                let _log = lock(&me.inner.nodes.at(j).log);
                let word = Self::apply_lock(log);
                me.hold(j, word, None)?;
                let copy = me.copy_range(r.replicas[0], (j, va), off, n);
                me.release(j, word);
                copy.map(|()| true)
            })?;
            if !copied {
                return Ok(Fill::NodeFailed);
            }
            off += n as u64;
            // As for one writer: leave the region to its writers as long as the step took.
            std::thread::sleep(step.elapsed());
        }
        let node = self.inner.nodes.at(j).addr;
        let token = self.inner.token;
        let done = self.replicated(base, 1, |me, r, _| {
            let done = me
                .edit_space(|rec| {
                    let Some(sr) = rec.regions.get_mut(&base) else {
                        return Ok(false);
                    };
                    let Some(k) = sr.joining.iter().position(|&x| x == (node, va, token)) else {
                        return Ok(false);
                    };
                    sr.joining.remove(k);
                    sr.replicas.push((node, va));
                    Ok(true)
                })
                .map_err(Failed::Op)?;
            if done {
                me.announce(r)?;
            }
            Ok(done)
        })?;
        Ok(if done {
            Fill::Done(len)
        } else {
            Fill::NodeFailed
        })
    }
}
