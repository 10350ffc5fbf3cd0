//! Receiving: checking and matching answers, reassembly, NACKs and corrupt answers,
//! needless-retransmission detection, completing requests and operations.

use super::*;
use clio_proto::quota::Quota;

impl Engine {
    // ---- receiving ----

    /// One packet from the node, received at `now`, which reached this host at `arrived`.
    pub(super) fn on_packet(&self, st: &mut State, bytes: &[u8], now: Instant, arrived: Instant) {
        let (h, payload) = match parse_verified(bytes) {
            Ok(x) => x,
            Err(_) => {
                st.stats.corrupt_responses += 1;
                // The id may itself be damaged; if it names an outstanding request, retry
                // that request now rather than wait for its timeout.
                if bytes.len() >= HEADER_LEN {
                    self.retry_once(st, Packet::new_unchecked(bytes).req_id(), now);
                }
                return;
            }
        };
        let matches = st
            .inflight
            .get(&h.req_id)
            .is_some_and(|r| h.response && r.opcode == h.opcode);
        if !matches {
            st.stats.stale_responses += 1;
            if h.response {
                self.duplicate_answer(st, h.req_id);
            }
            return;
        }
        match h.status {
            Status::Nack => {
                st.stats.nacks += 1;
                self.retry_once(st, h.req_id, now);
            }
            // A transaction target never touched: rtx_commit touches it and applies again.
            Status::RetryLater if h.opcode == Opcode::TxApply && h.arg1 == 1 => {
                if let Some(r) = st.inflight.remove(&h.req_id) {
                    self.finish_req(st, r, Err(ClioError::Untouched { va: h.arg0 }), now);
                }
            }
            Status::RetryLater => self.on_busy(st, h.req_id, None, now),
            Status::Stale if h.opcode == Opcode::CnAck => self.park_stale_ack(st, h.req_id),
            // This member holds its share of the node's idempotence ring, none of it
            // acknowledged yet: its own acknowledgements free it, so wait as for RETRY_LATER;
            // past the retries, the quota names itself.
            Status::QuotaExceeded if Quota::from_u64(h.arg1) == Some(Quota::RingShare) => {
                st.stats.ring_share_waits += 1;
                self.on_busy(st, h.req_id, Some(Quota::RingShare), now);
                self.resend_idle_acks(now);
            }
            Status::RouteUnverified => self.on_unverified(st, h.req_id, now),
            Status::Ok => self.on_ok(st, &h, payload, now, arrived),
            _ => {
                if let Some(r) = st.inflight.remove(&h.req_id) {
                    let e =
                        ClioError::from_answer(&h, r.opcode, r.va).unwrap_or(ClioError::BadRequest);
                    self.finish_req(st, r, Err(e), now);
                }
            }
        }
    }

    /// The node asks for the request again later (RETRY_LATER, or `quota`: a refusal that
    /// clears by itself): it goes again after a backoff that doubles per refusal; past
    /// `max_busy_retries` the operation fails (`Busy`, or `QuotaExceeded` naming `quota`).
    fn on_busy(&self, st: &mut State, id: u32, quota: Option<Quota>, now: Instant) {
        st.stats.busy_retries += 1;
        let Some(mut r) = st.inflight.remove(&id) else {
            return;
        };
        r.busy += 1;
        if r.busy > self.cfg.max_busy_retries {
            let name =
                r.op.and_then(|o| st.ops.get(&o))
                    .map_or("cn-ack", |o| o.name);
            let e = match quota {
                Some(q) => ClioError::QuotaExceeded { quota: Some(q) },
                None => ClioError::Busy {
                    op: name,
                    retries: r.busy,
                },
            };
            return self.finish_req(st, r, Err(e), now);
        }
        if !r.waiting_busy {
            r.waiting_busy = true;
            r.deadline = now + self.cfg.busy_backoff * (1u32 << (r.busy - 1).min(6));
        }
        st.inflight.insert(id, r);
    }

    /// Send again the overdue CN acks of the lanes no thread drives now. A lane's timers fire
    /// only while a thread waits on it, so the ack of a thread's last atomic, once lost, would
    /// never go again; its entry would hold a way of the member's row, and every later request
    /// of any lane in that way would be refused for it. A refusal for the share is when that
    /// shows: the refused thread sends those acks (a lane another thread holds is left to
    /// it; the caller's own is locked and skipped, its timers are its own). Acks go outside
    /// the windows, so nothing else moves.
    fn resend_idle_acks(&self, now: Instant) {
        for sh in &self.shards[..self.lanes.open()] {
            let Ok(mut other) = sh.st.try_lock() else {
                continue;
            };
            if other.receiving {
                continue;
            }
            let due: Vec<u32> = other
                .inflight
                .values()
                .filter(|r| r.opcode == Opcode::CnAck && r.deadline <= now)
                .map(|r| r.id)
                .collect();
            for id in due {
                self.retry_now(&mut other, id, now, true);
            }
        }
    }

    /// A CN ack refused for its epoch: the view moved between the atomic's answer and its
    /// acknowledgement, and the ring entry it frees stays at the node until acknowledged. It
    /// leaves flight and both windows (a client whose window shrank to what it holds could
    /// otherwise send nothing else, and so never meet the `Stale` answer that teaches it the
    /// view) and waits, parked, until this client carries another epoch; `pump` then sends it
    /// again under that epoch. Parked acks are bounded by the atomics this member completed
    /// and the node still holds entries for (its ring share).
    fn park_stale_ack(&self, st: &mut State, id: u32) {
        let Some(r) = st.inflight.remove(&id) else {
            return;
        };
        st.stats.stale_acks += 1;
        st.inflight_pkts = (st.inflight_pkts - r.cost).max(0.0);
        st.iwnd.give(r.resp_bytes);
        let Some(p) = r.packets.first() else {
            return;
        };
        let p = Packet::new_unchecked(&p[..]);
        st.parked_acks.push(ParkedAck {
            acked: p.arg0() as u32,
            lane: r.lane,
            epoch: p.epoch(),
        });
    }

    /// The node wants a route cookie this request did not carry (the cookie is stale: the
    /// node's slow path restarted with a new secret, or this host's address changed). If
    /// the request carried the cookie this client holds, a Heartbeat goes out on the same
    /// lane (its answer carries the cookie of the address it reaches: the slow path's answer,
    /// so the request waits a slow-path round trip) and the refusal counts; while that
    /// Heartbeat is unanswered (the slow path may be restarting) further refusals only wait
    /// for it; if the cookie has changed since the request left, it only goes again. Either
    /// way it is restamped with the cookie of the moment; after [`ROUTE_RETRIES`] counted
    /// refusals the operation fails with `RouteUnverified`.
    pub(super) fn on_unverified(&self, st: &mut State, id: u32, now: Instant) {
        st.stats.route_refreshes += 1;
        let Some(mut r) = st.inflight.remove(&id) else {
            return;
        };
        let sent = r
            .packets
            .first()
            .map(|p| Packet::new_unchecked(&p[..]).cookie());
        if sent == Some(self.cookie()) && st.cookie_refresh.is_none() {
            r.unverified += 1;
            if r.unverified > ROUTE_RETRIES {
                let op =
                    r.op.and_then(|o| st.ops.get(&o))
                        .map_or("cn-ack", |o| o.name);
                return self.finish_req(st, r, Err(ClioError::RouteUnverified { op }), now);
            }
            let mut hb = self.single(st, None, Opcode::Heartbeat, 0, 0, 0);
            hb.lane = r.lane;
            st.cookie_refresh = Some(hb.id);
            // Outside the windows: the refused requests hold their share while they wait for
            // this answer, and with a small window (after timeouts) it would never leave.
            st.unwindowed.push(hb);
        }
        r.waiting_busy = true;
        r.restamp = true;
        let wait = st.flush_rtt.srtt().unwrap_or(self.cfg.busy_backoff);
        r.deadline = now + wait.max(self.cfg.busy_backoff);
        st.inflight.insert(id, r);
        self.pump(st);
    }

    /// Retry after a NACK or corrupt response, once per attempt (several packets of one
    /// attempt may be NACKed).
    pub(super) fn retry_once(&self, st: &mut State, id: u32, now: Instant) {
        let Some(r) = st.inflight.get_mut(&id) else {
            return;
        };
        if r.retried_attempt == r.retries || r.waiting_busy {
            return;
        }
        r.retried_attempt = r.retries + 1;
        self.retry_now(st, id, now, false);
    }

    pub(super) fn on_ok(
        &self,
        st: &mut State,
        h: &Header,
        payload: &[u8],
        now: Instant,
        arrived: Instant,
    ) {
        let Some(r) = st.inflight.get_mut(&h.req_id) else {
            return;
        };
        let i = h.pkt_index as usize;
        if i >= r.got.len() || r.got[i] || h.pkt_count != r.resp_total {
            st.stats.stale_responses += 1;
            return;
        }
        if r.opcode == Opcode::Read {
            let Some((off, len)) = segment(r.len, h.pkt_index) else {
                return;
            };
            if len as usize != payload.len() {
                st.stats.stale_responses += 1;
                return;
            }
            let start = r.offset + off as usize;
            if let Some(op) = r.op.and_then(|o| st.ops.get_mut(&o)) {
                if let Some(dst) = op.data.get_mut(start..start + payload.len()) {
                    dst.copy_from_slice(payload);
                }
            }
        }
        if r.opcode == Opcode::PointerChase {
            // One packet: the whole value of the matching node, or none (arg1 says why).
            if !payload.is_empty() && payload.len() != r.len as usize {
                st.stats.stale_responses += 1;
                return;
            }
            if let Some(op) = r.op.and_then(|o| st.ops.get_mut(&o)) {
                op.data = payload.to_vec();
                op.aux = (h.arg1, 0);
            }
        }
        if clio_proto::kv::is_kv(r.opcode) {
            // A get's hit carries the value; everything else nothing. Anything else is not
            // an answer to this request.
            let get_hit = r.opcode == Opcode::KvGet && h.arg0 == clio_proto::kv::HIT;
            let fits = payload.len() <= clio_proto::kv::MAX_STAGED_VALUE;
            if !matches!(h.arg0, clio_proto::kv::HIT | clio_proto::kv::MISS)
                || !fits
                || (!get_hit && !payload.is_empty())
            {
                st.stats.stale_responses += 1;
                return;
            }
            if let Some(op) = r.op.and_then(|o| st.ops.get_mut(&o)) {
                op.data = payload.to_vec();
            }
        }
        r.got[i] = true;
        r.got_n += 1;
        if r.got_n < r.resp_total {
            return;
        }
        let value = match r.opcode {
            Opcode::Register | Opcode::Join => h.pid as u64,
            Opcode::Alloc => h.va,
            _ => h.arg0,
        };
        let alloc_len = h.arg0;
        if matches!(
            r.opcode,
            Opcode::Register | Opcode::Join | Opcode::Heartbeat
        ) {
            // The cookie of this host's address rides in the high half of `arg1`.
            self.set_cookie(cookie_of_answer(h.arg1));
        }
        if matches!(r.opcode, Opcode::Register | Opcode::Join) {
            if let Some(op) = r.op.and_then(|o| st.ops.get_mut(&o)) {
                op.aux = (h.arg0, h.arg1 & 0xFFFF);
            }
        }
        if r.opcode == Opcode::Heartbeat {
            st.stats.heartbeats += 1;
        }
        if let Some(r) = st.inflight.remove(&h.req_id) {
            if r.opcode == Opcode::Alloc {
                self.allocs_lock().insert(value, alloc_len);
            }
            // The RTT ends when the answer reached this host, not when a thread read it.
            let answered = if arrived >= r.sent_at { arrived } else { now };
            self.check_spurious(st, &r, answered);
            self.finish_req(st, r, Ok(value), answered);
        }
    }

    /// A retransmitted request answered sooner after its last attempt than half the smallest
    /// round trip ever seen: the answer is to an earlier attempt, so the timeout was needless
    /// (a delay, not a loss). Count it, raise the RTO floor above the delay that fooled it,
    /// and take back the window cut the timeout made.
    pub(super) fn check_spurious(&self, st: &mut State, r: &Req, answered: Instant) {
        if r.retries == 0 || r.flush {
            return;
        }
        let Some(min_rtt) = st.rtt.min_rtt() else {
            // Remember it: a second answer later also shows the retry was needless.
            return self.remember_retried(st, r, answered);
        };
        if answered.duration_since(r.sent_at) * 2 < min_rtt {
            self.needless_retry(st, answered.duration_since(r.first_sent), r.retries, true);
        } else {
            self.remember_retried(st, r, answered);
        }
    }

    /// `retries` retransmissions of one request were needless; its answer took `delay`.
    /// The window cut is taken back; the RTO floor is raised above `delay` only when
    /// `timed` (the timing proves the first answer came from an earlier attempt): raising it
    /// on a second answer alone would feed on itself where the network duplicates packets
    /// (a duplicated answer to a retry that did repair a loss took `delay` = RTO + RTT, and
    /// each such raise would lengthen the next RTO).
    pub(super) fn needless_retry(
        &self,
        st: &mut State,
        delay: Duration,
        retries: u32,
        timed: bool,
    ) {
        st.stats.spurious_retransmits += retries as u64;
        if timed {
            st.rtt.on_spurious(delay);
        }
        st.cwnd.undo_timeout();
    }

    /// A retried request completed: keep (id, how long its answer took) for a while, so a
    /// second answer to it (the node answered the first attempt *and* the retry, so the
    /// first was only slow, not lost: D-SACK's reasoning) can be recognised.
    pub(super) fn remember_retried(&self, st: &mut State, r: &Req, answered: Instant) {
        if st.retried.len() == RETRIED_KEPT {
            st.retried.pop_front();
        }
        st.retried.push_back(Retried {
            id: r.id,
            delay: answered.duration_since(r.first_sent),
            after_retry: answered.duration_since(r.sent_at),
            retry_rto: r.rto,
            retries: r.retries,
        });
    }

    /// An answer for no outstanding request: if it answers a request completed after a
    /// retry, both attempts reached the node, and the retry was needless.
    pub(super) fn duplicate_answer(&self, st: &mut State, id: u32) {
        if let Some(i) = st.retried.iter().position(|r| r.id == id) {
            if let Some(r) = st.retried.remove(i) {
                // The first attempt was answered too late, not lost; the retries that
                // followed it were all needless. Its delay is real (raise the floor) if the
                // first answer came sooner after the retry than any round trip takes (so
                // it answered an earlier attempt), or later than half the retry's own RTO
                // (the node was slow whichever attempt it answered: a stall). An answer one
                // round trip after the retry may be the retry's own, duplicated by the
                // network: that proves nothing about the delay.
                let timed = st.rtt.min_rtt().is_some_and(|m| r.after_retry < m)
                    || r.after_retry * 2 > r.retry_rto;
                self.needless_retry(st, r.delay, r.retries, timed);
            }
        }
    }

    /// A request is over (answered, failed, or out of retries): release its window share,
    /// learn from its RTT, ack a non-idempotent result, and complete its operation.
    pub(super) fn finish_req(&self, st: &mut State, r: Req, result: Result<u64>, now: Instant) {
        if st.cookie_refresh == Some(r.id) {
            // The cookie Heartbeat is answered (the cookie is set) or failed.
            st.cookie_refresh = None;
        }
        st.inflight_pkts = (st.inflight_pkts - r.cost).max(0.0);
        st.iwnd.give(r.resp_bytes);
        if result.is_ok() && r.retries == 0 && r.busy == 0 && r.flush {
            st.flush_rtt.sample(now.duration_since(r.sent_at));
        } else if result.is_ok() && r.retries == 0 && r.busy == 0 {
            // Karn: only unambiguous samples.
            let rtt = now.duration_since(r.sent_at);
            st.rtt.sample(rtt);
            let srtt = st.rtt.srtt().unwrap_or(rtt);
            st.cwnd.on_ack(rtt, r.cost, srtt, now);
        }
        // Every answer of a ring-recorded request is acknowledged, errors too: the node records
        // a Clio-KV write's error status, and an unacknowledged entry holds its member's entry
        // (`req_id % RING_WAYS`) until acknowledged. Acknowledging one that recorded nothing
        // changes nothing (the node compares the request id). Not after a timeout: then there
        // was no answer to acknowledge.
        let answered = !matches!(result, Err(crate::ClioError::Timeout { .. }));
        if answered && r.opcode.needs_cn_ack() {
            // Free the node's idempotence-table entry; retried until answered.
            st.stats.cn_acks += 1;
            let mut ack = self.single(st, None, Opcode::CnAck, 0, r.id as u64, 0);
            ack.lane = r.lane;
            st.unwindowed.push(ack);
        }
        if r.opcode == Opcode::Free && result.is_ok() {
            self.allocs_lock().remove(&r.va);
        }
        if let Some(op_id) = r.op {
            self.finish_op_part(st, op_id, result);
        }
        self.pump(st);
    }

    pub(super) fn finish_op_part(&self, st: &mut State, op_id: u64, result: Result<u64>) {
        let Some(op) = st.ops.get_mut(&op_id) else {
            return;
        };
        match result {
            Ok(v) => op.value = v,
            Err(e) => {
                op.error.get_or_insert(e);
            }
        }
        op.pending = op.pending.saturating_sub(1);
        if op.pending > 0 {
            return;
        }
        let Some(op) = st.ops.remove(&op_id) else {
            return;
        };
        let out = match op.error {
            Some(e) => Err(e),
            None => Ok(match op.spec_kind {
                Kind::Read => Output::Data(op.data),
                Kind::Atomic | Kind::Tx => Output::Value(op.value),
                Kind::Alloc => Output::Va(op.value),
                Kind::Register | Kind::Join => Output::Member {
                    pid: op.value as u16,
                    key: op.aux.0,
                    client: op.aux.1 as u16,
                },
                Kind::Heartbeat | Kind::SetEpoch => Output::Value(op.value),
                Kind::Chase => Output::Chase(match (op.data.is_empty(), op.aux.0) {
                    (false, node) => ChaseOutcome::Found {
                        value: op.data,
                        node,
                        hops: op.value,
                    },
                    (true, 0) => ChaseOutcome::NotFound { hops: op.value },
                    (true, next) => ChaseOutcome::HopLimit { next },
                }),
                Kind::Kv => Output::Kv {
                    hit: op.value == clio_proto::kv::HIT,
                    value: op.data,
                },
                Kind::Write | Kind::Free | Kind::Fence | Kind::Unregister => Output::Done,
            }),
        };
        st.stats.ops_completed += 1;
        st.done.insert(op_id, out);
        if op.tracked {
            for ready in st.tracker.remove(op_id) {
                if let Some(o) = st.ops.get_mut(&ready) {
                    let held = std::mem::take(&mut o.held);
                    st.queue.extend(held);
                }
            }
        }
    }
}
