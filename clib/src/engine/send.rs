//! The send side of the engine: submitting operations (their requests queued, or held behind
//! the operations they depend on), admitting queued requests while the congestion and incast
//! windows have room, transmitting them in one batch, and the timers that retransmit them.

use super::*;

impl Engine {
    // ---- submitting ----

    /// Start an operation; returns its id (the handle). Its packets leave at once, or with
    /// deferred sends at the next call that waits or polls ([`Engine::set_deferred_sends`]).
    pub(crate) fn submit(&self, spec: OpSpec) -> u64 {
        let sh = self.lane_for_submit();
        let mut st = sh.lock();
        let id = self.enqueue(&mut st, sh.lane, spec);
        if !self.defer.load(Ordering::Relaxed) || st.queue.len() >= DEFERRED_MAX {
            self.pump(&mut st);
        }
        id
    }

    /// The calling thread's shard for a submission. A thread that just moved off lane 0
    /// first completes what lane 0 holds from before (its own earlier operations among
    /// them), so its operations stay in the order it issued them across the move.
    fn lane_for_submit(&self) -> &Shard {
        let (lane, moved) = self.lanes.for_submit();
        if moved {
            self.drain_shard(self.shard(0));
        }
        self.shard(lane)
    }

    /// Deferred sends on or off. On, a submission is only queued; the queue leaves in one
    /// batch (over UDP one system call, one GSO message per run of equal sizes) at the next
    /// call that waits or polls, at [`Engine::flush`], or once [`DEFERRED_MAX`] requests wait.
    /// Turning it off flushes.
    pub(crate) fn set_deferred_sends(&self, on: bool) {
        self.defer.store(on, Ordering::Relaxed);
        if !on {
            self.flush();
        }
    }

    /// Send what deferred sends queued on every lane (as far as the windows admit it).
    pub(crate) fn flush(&self) {
        for sh in &self.shards[..self.lanes.open()] {
            self.pump(&mut sh.lock());
        }
    }

    /// With deferred sends, before a thread waits (for operation `want`, or for anything):
    /// send the queue when the wait needs it (`want` has a request in it, or the wait is not
    /// for one operation) or when fewer requests are on the wire than wait in the queue (the
    /// pipe must not run dry). Otherwise the queue keeps growing while answers to what is on
    /// the wire arrive, so a loop that starts a read per completed read sends batches, not
    /// one datagram per wake-up.
    pub(super) fn flush_deferred(&self, st: &mut State, want: Option<u64>) {
        if !self.defer.load(Ordering::Relaxed) || st.queue.is_empty() {
            return;
        }
        let needed = want.is_none_or(|id| st.queue.iter().any(|r| r.op == Some(id)));
        if needed || st.inflight.len() < st.queue.len() {
            self.pump(st);
        }
    }

    /// Start several operations at once; returns their ids in order. Their packets leave
    /// together (one batch for the transport: over UDP one system call, and one GSO message
    /// where they are of one size), as far as the windows admit them.
    pub(crate) fn submit_many(&self, specs: impl IntoIterator<Item = OpSpec>) -> Vec<u64> {
        let sh = self.lane_for_submit();
        let mut st = sh.lock();
        let ids = specs
            .into_iter()
            .map(|spec| self.enqueue(&mut st, sh.lane, spec))
            .collect();
        self.pump(&mut st);
        ids
    }

    /// Register an operation on `lane` and queue its requests (or hold them behind the
    /// operations they depend on); returns its id. The caller pumps.
    fn enqueue(&self, st: &mut State, lane: Lane, spec: OpSpec) -> u64 {
        let id = st.next_op;
        st.next_op += MAX_LANES as u64;
        let mut reqs = self.build(st, id, &spec);
        for r in &mut reqs {
            r.lane = lane;
        }
        let (kind, name, data) = match &spec {
            OpSpec::Register { .. } => (Kind::Register, "register", Vec::new()),
            OpSpec::Join { .. } => (Kind::Join, "join", Vec::new()),
            OpSpec::Unregister { .. } => (Kind::Unregister, "unregister", Vec::new()),
            OpSpec::Heartbeat => (Kind::Heartbeat, "heartbeat", Vec::new()),
            OpSpec::SetEpoch { .. } => (Kind::SetEpoch, "set_epoch", Vec::new()),
            OpSpec::Alloc { .. } => (Kind::Alloc, "ralloc", Vec::new()),
            OpSpec::Free { .. } => (Kind::Free, "rfree", Vec::new()),
            OpSpec::Read { len, .. } => (Kind::Read, "rread", vec![0u8; *len]),
            OpSpec::Write { durable: false, .. } => (Kind::Write, "rwrite", Vec::new()),
            OpSpec::Write { durable: true, .. } => (Kind::Write, "rwrite_durable", Vec::new()),
            OpSpec::Persist { .. } => (Kind::Write, "rpersist", Vec::new()),
            OpSpec::TxLog { .. } => (Kind::Tx, "rtx_log", Vec::new()),
            OpSpec::TxApply { .. } => (Kind::Tx, "rtx_commit", Vec::new()),
            OpSpec::Atomic { op, .. } => (Kind::Atomic, atomic_name(*op), Vec::new()),
            OpSpec::Fence => (Kind::Fence, "rfence", Vec::new()),
            OpSpec::Append { .. } => (Kind::Atomic, "rappend", Vec::new()),
            OpSpec::Chase { .. } => (Kind::Chase, "rchase", Vec::new()),
            OpSpec::Kv { op, .. } => (Kind::Kv, kv_name(*op), Vec::new()),
        };
        let mut op = Op {
            name,
            spec_kind: kind,
            data,
            value: 0,
            aux: (0, 0),
            pending: reqs.len(),
            error: None,
            held: Vec::new(),
            tracked: false,
        };
        let ready = match self.footprint(&spec) {
            Some((a, b, w)) => {
                op.tracked = true;
                st.tracker.insert(id, a, b, w)
            }
            None => true,
        };
        if ready && kind == Kind::Heartbeat {
            // The lease's renewal goes outside the windows: a member's liveness must not
            // wait on its congestion control (a paced window kept a heartbeat queued past
            // the lease, and the node took the member's row away while it was in use). One
            // packet per call, and `heartbeat` waits for its answer.
            st.unwindowed.extend(reqs);
        } else if ready {
            st.queue.extend(reqs);
        } else {
            st.stats.dependency_waits += 1;
            op.held = reqs;
        }
        st.ops.insert(id, op);
        id
    }

    // ---- sending ----

    /// Send every packet of `reqs` (one batch for the transport) and arm their timers.
    fn transmit(&self, st: &mut State, reqs: &mut [&mut Req], now: Instant) {
        let packets: Vec<(Lane, &[u8])> = reqs
            .iter()
            .flat_map(|r| r.packets.iter().map(|p| (r.lane, p.as_slice())))
            .collect();
        st.stats.packets_sent += packets.len() as u64;
        st.stats.send_batches += 1;
        if self.lanes.send(&packets).is_err() {
            // Counted; the requests' timers retry them.
            st.stats.transport_errors += 1;
        }
        for r in reqs.iter_mut() {
            r.sent_at = now;
            if r.retries == 0 && r.busy == 0 {
                r.first_sent = now;
            }
            r.deadline = now + r.rto;
        }
        st.last_send = now;
    }

    /// Send queued requests while both windows have room, all in one batch.
    pub(super) fn pump(&self, st: &mut State) {
        let now = Instant::now();
        let srtt = st.rtt.srtt().unwrap_or(self.cfg.target_delay);
        let mut batch: Vec<Req> = Vec::new();
        // CN acks and Heartbeats first, outside the windows (as TCP's pure acks): requests
        // wait on acks and the route-cookie Heartbeat while holding their window share (those
        // the node refused for this member's share of its idempotence table wait for the acks
        // that free it; those refused RouteUnverified for the new cookie), so one queued
        // behind them would never leave once the window is no larger than what waits; the
        // lease's Heartbeat must not wait on the window (`enqueue`). Acks are bounded by the
        // completed operations, cookie Heartbeats to one per lane at a time, lease Heartbeats
        // to one per `heartbeat` call; all are still counted in flight until answered.
        // CN acks refused as stale go again once this client carries another epoch.
        let epoch = self.epoch();
        for p in std::mem::take(&mut st.parked_acks) {
            if p.epoch == epoch {
                st.parked_acks.push(p);
            } else {
                let mut ack = self.single(st, None, Opcode::CnAck, 0, p.acked as u64, 0);
                ack.lane = p.lane;
                st.unwindowed.push(ack);
            }
        }
        for mut r in std::mem::take(&mut st.unwindowed) {
            st.inflight_pkts += r.cost;
            st.iwnd.take(r.resp_bytes);
            r.rto = st.rtt.rto();
            st.stats.requests += 1;
            batch.push(r);
        }
        while let Some(front) = st.queue.front() {
            let (cost, resp) = (front.cost, front.resp_bytes);
            if !st.cwnd.admits(
                cost,
                st.inflight_pkts,
                now.duration_since(st.last_send),
                srtt,
            ) {
                if st.cwnd.get() < 1.0 && st.inflight_pkts == 0.0 {
                    st.stats.paced += 1;
                }
                break;
            }
            if !st.iwnd.admits(resp) {
                break;
            }
            let Some(mut r) = st.queue.pop_front() else {
                break;
            };
            st.inflight_pkts += cost;
            st.iwnd.take(resp);
            r.rto = if r.flush {
                st.flush_rtt.rto()
            } else {
                st.rtt.rto()
            };
            st.stats.requests += 1;
            batch.push(r);
            if st.cwnd.get() < 1.0 {
                // Paced: one request per pacing interval.
                break;
            }
        }
        if batch.is_empty() {
            return;
        }
        let mut refs: Vec<&mut Req> = batch.iter_mut().collect();
        self.transmit(st, &mut refs, now);
        for r in batch {
            st.inflight.insert(r.id, r);
        }
    }

    pub(super) fn retry_now(&self, st: &mut State, id: u32, now: Instant, timeout: bool) {
        let Some(mut r) = st.inflight.remove(&id) else {
            return;
        };
        r.retries += 1;
        st.stats.retransmits += 1;
        if r.retries > self.cfg.max_retries {
            let name =
                r.op.and_then(|o| st.ops.get(&o))
                    .map_or("cn-ack", |o| o.name);
            let e = ClioError::Timeout {
                op: name,
                retries: r.retries - 1,
            };
            return self.finish_req(st, r, Err(e), now);
        }
        if timeout && r.flush {
            r.rto = st.flush_rtt.backoff(r.rto);
        } else if timeout {
            let srtt = st.rtt.srtt().unwrap_or(r.rto);
            st.cwnd.on_timeout(srtt, now);
            r.rto = st.rtt.backoff(r.rto);
        }
        self.transmit(st, &mut [&mut r], now);
        st.inflight.insert(id, r);
    }

    /// Put the current route cookie into a request's packets (their checksums again).
    pub(super) fn restamp(&self, r: &mut Req) {
        let cookie = self.cookie();
        for p in &mut r.packets {
            let mut pkt = Packet::new_unchecked(&mut p[..]);
            if pkt.cookie() != cookie {
                pkt.set_cookie(cookie);
                pkt.fill_checksum();
            }
        }
    }

    /// Fire timers due `grace` ago or earlier: retransmission timeouts and ends of
    /// `RetryLater` waits.
    pub(super) fn timers(&self, st: &mut State, now: Instant, grace: Duration) {
        let due: Vec<u32> = st
            .inflight
            .values()
            .filter(|r| r.deadline + grace <= now)
            .map(|r| r.id)
            .collect();
        for id in due {
            let busy = st.inflight.get(&id).is_some_and(|r| r.waiting_busy);
            if busy {
                if let Some(mut r) = st.inflight.remove(&id) {
                    r.waiting_busy = false;
                    if r.restamp {
                        self.restamp(&mut r);
                    }
                    self.transmit(st, &mut [&mut r], now);
                    st.inflight.insert(id, r);
                }
            } else {
                st.stats.timeouts += 1;
                self.retry_now(st, id, now, true);
            }
        }
        self.pump(st);
    }

    pub(super) fn next_event(&self, st: &State, now: Instant) -> Instant {
        let mut t = now + MAX_RECV_WAIT;
        for r in st.inflight.values() {
            t = t.min(r.deadline);
        }
        if !st.queue.is_empty() {
            if let Some(p) = st
                .cwnd
                .pace_after(st.last_send, st.rtt.srtt().unwrap_or(self.cfg.target_delay))
            {
                t = t.min(p);
            }
        }
        t
    }
}

fn kv_name(op: Opcode) -> &'static str {
    match op {
        Opcode::KvGet => "kv_get",
        Opcode::KvPut => "kv_put",
        Opcode::KvPutStaged => "kv_put (staged)",
        _ => "kv_delete",
    }
}

fn atomic_name(op: Opcode) -> &'static str {
    match op {
        Opcode::TestAndSet => "rlock (test-and-set)",
        Opcode::Unlock => "runlock",
        Opcode::CompareAndSwap => "compare-and-swap",
        Opcode::FetchAdd => "fetch-add",
        _ => "atomic",
    }
}
