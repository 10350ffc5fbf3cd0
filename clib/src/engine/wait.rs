//! Waiting: the thread that waits drives its shard's progress, receiving on the shard's lane
//! (or watching the thread that does), firing timers, and taking its result.

use super::*;

impl Engine {
    // ---- waiting ----

    /// Handle every packet of a receive, under one lock.
    pub(super) fn take_batch(&self, st: &mut State, batch: &[Received], now: Instant) {
        if batch.is_empty() {
            return;
        }
        st.stats.receive_batches += 1;
        st.stats.packets_received += batch.len() as u64;
        for p in batch {
            let arrived = p.arrived.filter(|a| *a <= now).unwrap_or(now);
            self.on_packet(st, &p.bytes, now, arrived);
        }
    }

    /// Drive shard `sh` until `cond` holds or `deadline` passes (after at least one receive
    /// attempt); returns whether it holds. `want` is the operation waited for, if one. The
    /// thread receives on the shard's lane, or watches the thread that does.
    pub(super) fn drive<'a>(
        &'a self,
        sh: &'a Shard,
        mut st: MutexGuard<'a, State>,
        deadline: Option<Instant>,
        want: Option<u64>,
        cond: impl Fn(&State) -> bool,
    ) -> (MutexGuard<'a, State>, bool) {
        let lane = sh.lane;
        self.flush_deferred(&mut st, want);
        loop {
            if cond(&st) {
                return (st, true);
            }
            let now = Instant::now();
            let mut until = self.next_event(&st, now);
            if let Some(d) = deadline {
                until = until.min(d);
            }
            let wait = until
                .saturating_duration_since(now)
                .max(Duration::from_micros(1));
            if st.receiving {
                let handed;
                (st, handed) = self.watch_receives(sh, st, until);
                if handed {
                    continue;
                }
            }
            if st.receiving {
                st.waiters += 1;
                st = sh
                    .cv
                    .wait_timeout(st, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                st.waiters -= 1;
            } else {
                st.receiving = true;
                // Spin only while no other thread waits (a woken waiter needs a CPU that a
                // spinning receiver would hold). Threads receiving on their own lanes may all
                // spin: on a host where a blocking wake-up costs more than a round trip, the
                // threads that blocked made two threads slower than one (docs/perf.md).
                let spin = st.waiters == 0;
                self.lanes.path(lane).spin_hint(spin);
                drop(st);
                let mut batch: Vec<Received> = Vec::new();
                let got = self.lanes.recv(lane, wait, &mut batch);
                st = sh.lock();
                st.receiving = false;
                let now = Instant::now();
                match got {
                    Ok(()) if !batch.is_empty() => {
                        self.take_batch(&mut st, &batch, now);
                        // Under a steady stream of answers the transport is never silent:
                        // requests overdue by more than a receive wait are retried anyway.
                        self.timers(&mut st, Instant::now(), MAX_RECV_WAIT);
                    }
                    // Timers fire only when nothing is waiting in the transport: a thread
                    // that was descheduled past a deadline first takes the response that
                    // arrived meanwhile instead of retransmitting spuriously.
                    Ok(()) => self.timers(&mut st, now, Duration::ZERO),
                    Err(_) => {
                        st.stats.transport_errors += 1;
                        drop(st);
                        std::thread::sleep(Duration::from_micros(200));
                        st = sh.lock();
                        self.timers(&mut st, Instant::now(), Duration::ZERO);
                    }
                }
                sh.receives.fetch_add(1, Ordering::Release);
                // A wake-up is a system call even with nobody to wake: only when one waits.
                if st.waiters > 0 {
                    sh.cv.notify_all();
                }
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                let ok = cond(&st);
                return (st, ok);
            }
        }
    }

    /// Another thread receives: watch for it to hand over (results delivered or the receive
    /// free), yielding between looks, for at most `WAITER_SPIN` or until `until`. True when
    /// it did (the caller re-checks), false when the watch ran out (the caller sleeps).
    pub(super) fn watch_receives<'a>(
        &'a self,
        sh: &'a Shard,
        st: MutexGuard<'a, State>,
        until: Instant,
    ) -> (MutexGuard<'a, State>, bool) {
        let seen = sh.receives.load(Ordering::Acquire);
        let stop = until.min(Instant::now() + WAITER_SPIN);
        drop(st);
        let handed = loop {
            if sh.receives.load(Ordering::Acquire) != seen {
                break true;
            }
            if Instant::now() >= stop {
                break false;
            }
            std::thread::yield_now();
        };
        let st = sh.lock();
        let handed = handed || sh.receives.load(Ordering::Acquire) != seen;
        (st, handed)
    }

    /// Wait for operation `id` and take its result.
    pub(crate) fn wait(&self, id: u64) -> Result<Output> {
        let sh = self.shard_of(id);
        let st = sh.lock();
        if !st.ops.contains_key(&id) && !st.done.contains_key(&id) {
            return Err(ClioError::UnknownHandle(id));
        }
        let (mut st, _) = self.drive(sh, st, None, Some(id), |s| s.done.contains_key(&id));
        st.done
            .remove(&id)
            .unwrap_or(Err(ClioError::UnknownHandle(id)))
    }

    /// Wait for operation `id` until `deadline`; `None` if it is still running then.
    pub(crate) fn wait_until(&self, id: u64, deadline: Instant) -> Option<Result<Output>> {
        let sh = self.shard_of(id);
        let st = sh.lock();
        if !st.ops.contains_key(&id) && !st.done.contains_key(&id) {
            return Some(Err(ClioError::UnknownHandle(id)));
        }
        let (mut st, _) = self.drive(sh, st, Some(deadline), Some(id), |s| {
            s.done.contains_key(&id)
        });
        st.done.remove(&id)
    }

    /// Make progress without blocking for long; the result if operation `id` is complete.
    pub(crate) fn try_take(&self, id: u64) -> Option<Result<Output>> {
        self.wait_until(id, Instant::now())
    }

    /// Wait until every operation the calling thread's lane started before this call is
    /// complete (results stay available to `rpoll`): the thread's release. Threads on
    /// lanes of their own do not wait for each other.
    pub(crate) fn drain(&self) {
        self.drain_shard(self.shard(self.lanes.of_this_thread()));
    }

    /// [`Engine::drain`] for every lane (the client going away).
    pub(crate) fn drain_all(&self) {
        for sh in &self.shards[..self.lanes.open()] {
            self.drain_shard(sh);
        }
    }

    /// Wait until every operation of `sh` started before this call is complete.
    pub(super) fn drain_shard(&self, sh: &Shard) {
        let st = sh.lock();
        let upto = st.next_op;
        let _ = self.drive(sh, st, None, None, |s| s.ops.keys().all(|k| *k >= upto));
    }

    /// Deliver outstanding CN acks on every lane (bounded wait), e.g. before the client goes
    /// away, so the node's idempotence ring is not left holding this client's entries.
    pub(crate) fn flush_acks(&self, limit: Duration) {
        let until = Instant::now() + limit;
        for sh in &self.shards[..self.lanes.open()] {
            let st = sh.lock();
            let _ = self.drive(sh, st, Some(until), None, |s| {
                s.unwindowed.is_empty()
                    && s.queue.iter().all(|r| r.op.is_some())
                    && s.inflight.values().all(|r| r.op.is_some())
            });
        }
    }
}
