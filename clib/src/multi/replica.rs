//! Replication steps of the [`MultiClient`]: writes and atomics on every replica, the
//! backups' node-ordered logs (records appended with `Opcode::Append`, applied in log order),
//! and promotion of a backup after its primary failed.

use super::{lock, node_failed, Failed, MultiClient, Region};
use crate::{ClioError, Handle};
use clio_proto::replog::{self, LOG_HEAD, MAX_REPL_DATA};
use clio_proto::Opcode;
use std::sync::atomic::Ordering;

/// Adds the time since its start to `apply_micros` when dropped (every way out of an apply).
struct Elapsed<'a>(&'a std::sync::Mutex<super::MultiStats>, std::time::Instant);

impl Drop for Elapsed<'_> {
    fn drop(&mut self) {
        lock(self.0).apply_micros += self.1.elapsed().as_micros() as u64;
    }
}

impl MultiClient {
    /// The log at backup `b` (allocated on first use).
    pub(super) fn ensure_log(&self, b: usize) -> Result<u64, Failed> {
        let n = &self.inner.nodes.at(b);
        let mut g = lock(&n.log);
        if let Some(va) = *g {
            return Ok(va);
        }
        if self.shared() {
            // The space's log there, shared with its other writers. Not under the log's
            // mutex: publishing it changes the record, whose watch (in-process: on this
            // thread) takes the mutex to note the log.
            drop(g);
            let va = self.space_log(b).map_err(|e| Failed::at(b, e))?;
            *lock(&n.log) = Some(va);
            return Ok(va);
        }
        match self
            .inner
            .engine(b)
            .and_then(|c| c.ralloc(self.inner.cfg.log_bytes))
        {
            Ok(va) => {
                *g = Some(va);
                Ok(va)
            }
            Err(e) if node_failed(&e) => Err(Failed::Node(b)),
            Err(e) => Err(Failed::Op(e)),
        }
    }

    /// Start appending `data` for `va` (in backup `b`'s RAS) to `b`'s log, in records of at
    /// most [`MAX_REPL_DATA`] bytes.
    fn append_records(&self, b: usize, va: u64, data: &[u8]) -> Result<Vec<Handle>, Failed> {
        let log = self.ensure_log(b)?;
        let n = self.inner.engine(b).map_err(|e| Failed::at(b, e))?;
        let mut hs = Vec::new();
        for (k, chunk) in data.chunks(MAX_REPL_DATA).enumerate() {
            let rec = replog::repl_record(va + (k * MAX_REPL_DATA) as u64, chunk);
            let h = n
                .rappend_async(log, self.inner.cfg.log_bytes, &rec, self.inner.cfg.durable)
                .map_err(Failed::Op)?;
            hs.push(h);
        }
        Ok(hs)
    }

    /// Wait for every `(node, handle)`; the first node failure or error wins. Nodes whose log
    /// was full are returned (their log must be applied, then the step run again).
    fn wait_all(&self, pending: Vec<(usize, Handle)>) -> Result<Vec<usize>, Failed> {
        let mut failed = None;
        let mut full = Vec::new();
        for (i, h) in pending {
            match self.inner.engine(i).and_then(|c| c.rpoll_one(h)) {
                Ok(_) => {}
                Err(ClioError::LogFull) => full.push(i),
                Err(e) if node_failed(&e) => {
                    failed.get_or_insert(Failed::Node(i));
                }
                Err(e) => {
                    failed.get_or_insert(Failed::Op(e));
                }
            }
        }
        if let Some(f) = failed {
            return Err(f);
        }
        full.dedup();
        Ok(full)
    }

    /// Write `data` at offset `off` of region `r` on every replica: the primary directly, each
    /// backup as records in its log; all in flight together. Runs again after a full log has
    /// been applied (writing the same bytes again is harmless).
    pub(super) fn write_all(&self, r: &Region, off: u64, data: &[u8]) -> Result<(), Failed> {
        loop {
            let (p, pva) = r.replicas[0];
            let c = self.inner.engine(p).map_err(|e| Failed::at(p, e))?;
            let h = if self.inner.cfg.durable {
                c.rwrite_durable_async(pva + off, data)
            } else {
                c.rwrite_async(pva + off, data)
            }
            .map_err(Failed::Op)?;
            let mut pending = vec![(p, h)];
            for &(b, bva) in r.record_targets() {
                pending.extend(
                    self.append_records(b, bva + off, data)?
                        .into_iter()
                        .map(|h| (b, h)),
                );
            }
            let full = self.wait_all(pending)?;
            if full.is_empty() {
                return Ok(());
            }
            for b in full {
                self.apply_log(b)?;
            }
        }
    }

    /// An atomic on the word at `addr`: executed once at the primary (a retry after the
    /// primary failed executes it at the new primary, whose state never saw it), then the word
    /// it left is appended to every backup's log before the call returns.
    pub(super) fn atomic(&self, op: Opcode, addr: u64, arg0: u64, arg1: u64) -> crate::Result<u64> {
        if !addr.is_multiple_of(clio_proto::consts::ATOMIC_BYTES) {
            return Err(ClioError::InvalidArgument(
                "atomics need an 8-byte aligned address",
            ));
        }
        self.replicated(addr, 8, |me, r, off| {
            let (p, pva) = r.replicas[0];
            let c = me.inner.engine(p).map_err(|e| Failed::at(p, e))?;
            let res = match op {
                Opcode::FetchAdd => c.fetch_add(pva + off, arg0),
                Opcode::CompareAndSwap => c.compare_and_swap(pva + off, arg0, arg1),
                Opcode::TestAndSet => c.test_and_set(pva + off),
                _ => c.runlock(pva + off).map(|()| 0),
            };
            let old = match res {
                Ok(v) => v,
                Err(e) if node_failed(&e) => return Err(Failed::Node(p)),
                Err(e) => return Err(Failed::Op(e)),
            };
            if me.inner.cfg.durable {
                // The primary's word is durable before the call returns, like a durable write.
                me.persist_executed(r, p, pva + off)?;
            }
            if let Some(new) = op.atomic_new_value(old, arg0, arg1) {
                // Executed at the primary: whatever fails now, the atomic must not run again.
                me.word_to_backups(r, off, new).map_err(Failed::InDoubt)?;
            }
            Ok(old)
        })
    }

    /// Make the word an atomic has just changed at the primary `p` (at `va` there) durable.
    /// The atomic executed, so it must not run again at `p`: a `Stale` answer (the view moved
    /// between the atomic and its persist) sends the persist again under the new view while
    /// `p` is in it and this writer still holds the region. A `p` out of the new view takes
    /// the atomic's word with it (no replica is filled from it), so the step runs again under
    /// the new view (`Stale`), as after a node failure (`Failed::Node`); a lock taken over is
    /// in doubt (a waiter may have copied the word on).
    fn persist_executed(&self, r: &Region, p: usize, va: u64) -> Result<(), Failed> {
        let mut stale = 0;
        loop {
            match self.inner.engine(p).and_then(|c| c.rpersist(va, 8)) {
                Ok(()) => return Ok(()),
                Err(e) if node_failed(&e) => return Err(Failed::Node(p)),
                Err(ClioError::Stale) => {
                    self.after_stale(&mut stale).map_err(Failed::InDoubt)?;
                    if self.node_dead(p) {
                        return Err(Failed::Op(ClioError::Stale));
                    }
                    if self.shared() && !self.still_holds(r) {
                        return Err(Failed::InDoubt(ClioError::Stale));
                    }
                }
                Err(e) => return Err(Failed::InDoubt(e)),
            }
        }
    }

    /// Append the word an atomic left to every backup. The atomic must not run again, so a
    /// backup that fails here is dropped and the others still get the record.
    fn word_to_backups(&self, r: &Region, off: u64, word: u64) -> crate::Result<()> {
        let mut stale = 0;
        for &(b, bva) in r.record_targets() {
            loop {
                // Appended (true), or the log was full and is applied now (false: again).
                let step = self
                    .append_records(b, bva + off, &word.to_le_bytes())
                    .and_then(|hs| self.wait_all(hs.into_iter().map(|h| (b, h)).collect()))
                    .and_then(|full| {
                        if full.is_empty() {
                            Ok(true)
                        } else {
                            self.apply_log(b).map(|()| false)
                        }
                    });
                match step {
                    Ok(true) => break,
                    Ok(false) => continue,
                    Err(Failed::Node(i)) => self.fail_node(i)?,
                    // The view moved on while the record was in flight (this client's own
                    // adoption raises the nodes too): the record is the word's new value, a
                    // redo, so it goes again under the new view.
                    Err(Failed::Op(ClioError::Stale)) => {
                        self.after_stale(&mut stale)?;
                        if self.node_dead(b) {
                            break; // out of the new view: as a backup that failed
                        }
                        if self.shared() && !self.still_holds(r) {
                            // A waiter took the region's lock over (this writer's presence
                            // had lapsed) and copied the primary, this atomic's word with
                            // it, to every backup; a record now could land after newer ones.
                            return Err(ClioError::Stale);
                        }
                        continue;
                    }
                    Err(Failed::Op(e) | Failed::InDoubt(e)) => return Err(e),
                }
                break;
            }
        }
        Ok(())
    }

    /// Apply node `b`'s log in log order to its replicas, then reset it (a compare-and-swap
    /// of the tail applied to 0; records that arrived meanwhile make it fail: apply again).
    /// Applying is a redo, so running it again after an interruption is harmless.
    pub(super) fn apply_log(&self, b: usize) -> Result<(), Failed> {
        let node = &self.inner.nodes.at(b);
        let g = lock(&node.log);
        let Some(log) = *g else {
            return Ok(());
        };
        let n = self.inner.engine(b).map_err(|e| Failed::at(b, e))?;
        if self.shared() {
            // One applier at a time among the space's writers.
            let word = Self::apply_lock(log);
            self.hold(b, word, None)?;
            let applied = self.apply_held(b, log, &n);
            self.release(b, word);
            return applied;
        }
        self.apply_held(b, log, &n)
    }

    /// Apply node `b`'s log at `log` (this client applies it alone: the node's log mutex,
    /// and a shared space's apply lock).
    fn apply_held(&self, b: usize, log: u64, n: &crate::Client) -> Result<(), Failed> {
        let fail = |e: ClioError| {
            if node_failed(&e) {
                Failed::Node(b)
            } else {
                Failed::Op(e)
            }
        };
        let _time = Elapsed(&self.inner.stats, std::time::Instant::now());
        loop {
            let t = n.rread(log, 8).map_err(fail)?;
            let tail = u64::from_le_bytes(
                t.try_into()
                    .map_err(|_| Failed::Op(ClioError::BadRequest))?,
            );
            if tail == 0 {
                return Ok(());
            }
            if tail > self.inner.cfg.log_bytes {
                return Err(Failed::Op(ClioError::BadRequest));
            }
            let data = n.rread(log + LOG_HEAD, tail as usize).map_err(fail)?;
            let recs = replog::records(&data).map_err(|_| Failed::Op(ClioError::BadRequest))?;
            let parsed = recs
                .iter()
                .map(|(_, rec)| replog::parse_repl_record(rec))
                .collect::<Option<Vec<_>>>()
                .ok_or(Failed::Op(ClioError::BadRequest))?;
            // What applying in log order amounts to: disjoint extents, written in parallel.
            let mut hs = Vec::new();
            for (va, bytes) in replog::coalesce(parsed) {
                let h = if self.inner.cfg.durable {
                    n.rwrite_durable_async(va, &bytes)
                } else {
                    n.rwrite_async(va, &bytes)
                };
                hs.push(h.map_err(Failed::Op)?);
            }
            n.rpoll(&hs).map_err(fail)?;
            {
                let mut s = lock(&self.inner.stats);
                s.log_applies += 1;
                s.records_applied += recs.len() as u64;
            }
            if n.compare_and_swap(log, tail, 0).map_err(fail)? == tail {
                return Ok(());
            }
        }
    }

    /// The region at `base` has a new primary whose log may still hold records of it: apply
    /// that log before anything else reaches the region (the caller holds its lock).
    pub(super) fn promote(&self, base: u64) -> crate::Result<()> {
        let (_, r) = self.locate(base, 1)?;
        let p = r.replicas[0].0;
        match self.apply_log(p) {
            Ok(()) => {
                r.sync.stale.store(false, Ordering::Release);
                Ok(())
            }
            // The new primary failed as well: the next backup takes over (still stale).
            Err(Failed::Node(i)) => self.fail_node(i),
            Err(Failed::Op(e) | Failed::InDoubt(e)) => Err(e),
        }
    }
}
