//! How the slow path takes work from the fast path: the descriptors of the RX ring taken as
//! they arrive (leases renewed, retries answered from the reply cache, the cheap requests
//! answered at once), the rest queued per RAS and executed in turns (`fair_queue.rs`), the
//! answers pushed back through the TX ring, and the rounds of service ([`SlowPath::poll`]).

use super::{SlowPath, EXECUTE_SLICE, TAKE_AHEAD};
use crate::frame_memory::FrameMemory;
use crate::ring_window::{RingError, RingWindow};
use clio_proto::frame::Route;
use clio_proto::ring::{reg, Descriptor};
use clio_proto::route_cookie::{answer_arg1, route_cookie};
use clio_proto::{Header, Opcode, Status};
use std::sync::atomic::Ordering;
use std::time::Instant;

impl SlowPath {
    /// Serve one descriptor from the fast path; outputs go to the outbox. `mem` is the node's
    /// DRAM (Persist flushes it).
    pub fn handle(&mut self, d: Descriptor, mem: &mut dyn FrameMemory) {
        self.handle_at(d, Instant::now(), mem)
    }

    /// [`SlowPath::handle`] at time `now` (leases): take the descriptor, then execute
    /// everything that waits.
    pub fn handle_at(&mut self, d: Descriptor, now: Instant, mem: &mut dyn FrameMemory) {
        self.take(d, now, mem);
        while self.run_next(now, mem) {}
    }

    /// Take a descriptor from the fast path: renew the member's lease (it arrived now),
    /// answer a retry from the reply cache and the cheap requests (Heartbeat, Register, Join)
    /// at once, and queue the rest for their RAS's turn (`fair_queue.rs`).
    fn take(&mut self, d: Descriptor, now: Instant, mem: &mut dyn FrameMemory) {
        let (route, header) = match d {
            Descriptor::PageMapped { pid, vpn, pfn } => return self.page_mapped(pid, vpn, pfn),
            Descriptor::Request { route, header } => (route, header),
            _ => {
                self.stats.bad_descriptors += 1;
                return;
            }
        };
        self.stats.requests += 1;
        // Any request of a member renews its lease.
        if header.opcode != Opcode::Register {
            let _ = self.registry.renew(header.pid, header.client, now);
        }
        if let Some(r) = self.cached(&header) {
            self.stats.duplicate_requests += 1;
            return self.reply(route, r);
        }
        if self.waiting.contains(&header) {
            // A retransmission of a request still waiting: its answer is on the way.
            self.stats.duplicate_requests += 1;
            return;
        }
        match header.opcode {
            Opcode::Heartbeat | Opcode::Register | Opcode::Join => {
                let r = self.execute(&route, &header, now, mem);
                self.reply(route, r);
            }
            _ => {
                if !self.waiting.push(route, header) {
                    self.stats.queue_refusals += 1;
                    self.reply(route, header.response_to(Status::RetryLater));
                }
            }
        }
    }

    /// Execute the next waiting request (its RAS's turn); false when none waits.
    fn run_next(&mut self, now: Instant, mem: &mut dyn FrameMemory) -> bool {
        let Some((route, header)) = self.waiting.pop() else {
            return false;
        };
        let r = self.execute(&route, &header, now, mem);
        // Kept while the RAS lives (a retried Unregister of a member that left still finds
        // its answer); a torn-down RAS keeps nothing.
        if Self::is_cached_kind(&header) && self.registry.exists(header.pid) {
            self.replies.insert(header.identity(), r);
        }
        self.reply(route, r);
        true
    }

    /// Register and Join are deduplicated by their nonce instead; Heartbeat is idempotent.
    fn is_cached_kind(h: &Header) -> bool {
        matches!(h.opcode, Opcode::Alloc | Opcode::Free | Opcode::Unregister)
    }

    fn cached(&self, h: &Header) -> Option<Header> {
        if Self::is_cached_kind(h) {
            self.replies.get(h.identity())
        } else {
            None
        }
    }

    /// Send `header` back along `route`. An OK answer to Register, Join or Heartbeat carries
    /// the route cookie of the address it goes to (`clio_proto::route_cookie`), computed here
    /// for this route, so a cached answer replayed to another address never carries the
    /// first one's cookie.
    fn reply(&mut self, route: Route, mut header: Header) {
        if header.status == Status::Ok
            && matches!(
                header.opcode,
                Opcode::Register | Opcode::Join | Opcode::Heartbeat
            )
        {
            header.arg1 = answer_arg1(header.arg1, route_cookie(&self.route_secret, &route));
        }
        self.outbox.push_back(Descriptor::Reply { route, header });
    }

    /// Requests taken from the ring and waiting for their RAS's turn.
    pub fn waiting(&self) -> usize {
        self.waiting.len()
    }

    fn flush(&mut self, ring: &RingWindow) -> usize {
        let mut n = 0;
        while let Some(d) = self.outbox.front() {
            match ring.push_tx(d) {
                Ok(()) => {
                    self.outbox.pop_front();
                    self.tx_pushed += 1;
                    n += 1;
                }
                Err(RingError::Full) => break,
                Err(_) => break,
            }
        }
        n
    }

    /// One round of service: push queued outputs, take the requests waiting in the RX ring
    /// while nothing is queued (so a full TX ring back-pressures RX instead of losing
    /// descriptors), end expired leases, refill the free-page buffer with frames cleared in
    /// `mem`. Returns the number of descriptors moved (0 = idle).
    ///
    /// Leases are judged on arrival: each request renews its member's lease at the time it is
    /// taken (never earlier than it reached the node), and leases are checked only once every
    /// descriptor that had reached the ring when the round began is taken, against that
    /// moment. So a member whose heartbeat reached the node within its lease is never expired,
    /// however long an earlier request (an allocation) kept the slow path busy.
    pub fn poll(&mut self, ring: &RingWindow, mem: &mut dyn FrameMemory) -> usize {
        self.poll_clocked(ring, mem, Instant::now)
    }

    /// [`SlowPath::poll`] with the clock stopped at `now` (tests).
    pub fn poll_at(&mut self, ring: &RingWindow, mem: &mut dyn FrameMemory, now: Instant) -> usize {
        self.poll_clocked(ring, mem, || now)
    }

    /// [`SlowPath::poll`] with time read from `clock` (simulated time in tests).
    pub fn poll_clocked(
        &mut self,
        ring: &RingWindow,
        mem: &mut dyn FrameMemory,
        clock: impl Fn() -> Instant,
    ) -> usize {
        let mut work = self.flush(ring);
        // The pool's view moved on (`reg::POOL_EPOCH`): fence before taking anything more.
        let pool = ring.reg(reg::POOL_EPOCH).load(Ordering::Acquire) as u16;
        if pool != self.pool_epoch {
            self.pool_epoch = pool;
            work += self.raise_fenced(pool) + self.flush(ring);
        }
        let arrived_by = clock();
        let pending = ring.rx_pending();
        let mut taken = 0;
        // Taking goes on while answers wait for the TX ring, up to TAKE_AHEAD descriptors of
        // its own (each take adds a few: a reply, a key write): so requests are taken (leases
        // renewed, heartbeats answered in order behind what waits) as they arrive, and a TX
        // ring kept full by one tenant's allocation does not keep the RX ring full for all.
        while taken < pending && self.may_take() {
            let Some(d) = ring.pop_rx() else { break };
            taken += 1;
            work += 1;
            let before = self.outbox.len();
            match d {
                Ok(d) => self.take(d, clock(), mem),
                Err(_) => self.stats.bad_descriptors += 1,
            }
            let added = self.outbox.len().saturating_sub(before);
            self.take_ahead = self.take_ahead.saturating_sub(added);
            work += self.flush(ring);
        }
        // The waiting requests, one RAS's at a time, for at most a slice of time (then the
        // ring is looked at again: new heartbeats are taken, new tenants get their turn).
        let slice_end = clock() + EXECUTE_SLICE;
        while self.outbox.is_empty() && clock() < slice_end && self.run_next(clock(), mem) {
            work += 1 + self.flush(ring);
        }
        if taken == pending && self.outbox.is_empty() {
            self.expire_leases(arrived_by);
        }
        work += self.flush(ring);
        // (Descriptors a previous daemon left in the ring count as not consumed: the pass
        // waits for them too.)
        let consumed = self.tx_pushed.saturating_sub(ring.tx_pending() as u64);
        if self.kv_purge_step(self.tx_pushed, consumed, mem, clock()) {
            work += 1 + self.flush(ring);
        }
        self.refill(mem);
        work + self.flush(ring)
    }

    /// Whether a request may be taken from the RX ring now: always while the outbox is
    /// empty, and for TAKE_AHEAD more descriptors while it holds answers the TX ring has not
    /// accepted.
    fn may_take(&mut self) -> bool {
        if self.outbox.is_empty() {
            self.take_ahead = TAKE_AHEAD;
        }
        self.take_ahead > 0
    }

    /// Descriptors produced but not yet accepted by the TX ring.
    pub fn outbox_len(&self) -> usize {
        self.outbox.len()
    }
}
