//! The request engine: turns operations into wire requests, sends them when the congestion
//! and incast windows allow, matches responses by request id, reassembles, retries, and
//! releases dependent operations.
//!
//! There is no background thread. Whichever application thread waits (a synchronous call,
//! `rpoll`, `rrelease`) drives progress ([`wait`]): it receives on its lane (a socket of its
//! own over UDP, see `crate::lanes`), so its own results reach it without a hand-off, and
//! hands the results of other threads on the same lane to them. An asynchronous operation
//! progresses while a thread waits on its lane (its own thread, or any that waits for it).
//!
//! The state is sharded by lane ([`Shard`]): a lane's operations, requests, windows, timers
//! and ordering tracker live under a lock of their own, so threads on lanes of their own
//! never share a lock on the request path. What all lanes share is read-mostly: the
//! credentials (atomics, set once at registration) and the allocations (a lock taken by
//! `ralloc`/`rfree` only). Operation ids and request ids carry their lane in their low
//! [`LANE_BITS`] bits: a wait finds its shard from the id, and request ids of different
//! lanes never collide at the node's idempotence ring.
//!
//! Files: this one (the state), [`send`] (submitting, sending, timers), [`build`] (requests
//! from operations), [`receive`] (answers, retries, completion), [`wait`] (driving progress).

use crate::cc::{CongestionWindow, IncastWindow, RttEstimator};
use crate::config::Config;
use crate::error::{ClioError, Result, ROUTE_RETRIES};
use crate::lanes::{Lane, Lanes, LANE_BITS, MAX_LANES};
use crate::order::Tracker;
use crate::transport::{Received, Transport};
use clio_proto::consts::{MAX_PAYLOAD, MAX_REQUEST_LEN};
use clio_proto::header::{packet_count, parse_verified, segment, HEADER_LEN};
use clio_proto::offload::ChaseLayout;
use clio_proto::opcode::Path;
use clio_proto::route_cookie::cookie_of_answer;
use clio_proto::{Header, Opcode, Packet, Status};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

mod build;
mod receive;
mod send;
mod wait;

/// What an operation asks for.
#[derive(Debug, Clone)]
pub(crate) enum OpSpec {
    Register {
        nonce: u64,
    },
    Join {
        nonce: u64,
    },
    Unregister {
        destroy: bool,
    },
    Heartbeat,
    SetEpoch {
        epoch: u16,
    },
    Alloc {
        len: u64,
        perms: u8,
    },
    Free {
        va: u64,
    },
    Read {
        va: u64,
        len: usize,
    },
    Write {
        va: u64,
        data: Vec<u8>,
        durable: bool,
        /// Ordered with the other operations on its pages (CLib's page tracking); false only
        /// for a Clio-KV staging write, whose put checks the value itself and whose slot no
        /// other operation touches while it is in flight.
        ordered: bool,
    },
    Persist {
        va: u64,
        len: u32,
    },
    /// Register (or re-open) a transaction log; the answer is its resolved sequence number.
    TxLog {
        va: u64,
        len: u32,
    },
    /// Apply the committed record in the log at `va`; the answer is its sequence number.
    TxApply {
        va: u64,
    },
    Atomic {
        op: Opcode,
        va: u64,
        arg0: u64,
        arg1: u64,
    },
    Fence,
    /// Append `record` to the node-ordered log at `va` of `cap` bytes (`proto::replog`).
    Append {
        va: u64,
        cap: u64,
        record: Vec<u8>,
        durable: bool,
    },
    /// Pointer chase (extend path): from `va`, the node whose key is `key`.
    Chase {
        va: u64,
        key: u64,
        layout: ChaseLayout,
        len: u32,
    },
    /// Clio-KV (extend path): `op` is KvGet, KvPut, KvDelete or KvPutStaged; the payload
    /// (checked by `proto::kv::KvRequest::new` / `KvStagedPut::new` before this is built);
    /// `va` and `arg1` for a staged put (the value's address and check), else 0.
    Kv {
        op: Opcode,
        payload: Vec<u8>,
        va: u64,
        arg1: u64,
    },
}

/// The result of a completed operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Output {
    /// Write, free, unlock, fence: nothing to return.
    Done,
    /// The bytes a read returned.
    Data(Vec<u8>),
    /// The old value an atomic returned.
    Value(u64),
    /// The remote virtual address an allocation returned.
    Va(u64),
    /// A pointer chase: the value of the matching node, or where the walk ended.
    Chase(ChaseOutcome),
    /// A Clio-KV request: whether the key was there (`proto::kv::HIT`), and a get's value.
    Kv {
        /// Get: found; put: replaced an old value; delete: removed.
        hit: bool,
        /// A get's value (empty otherwise).
        value: Vec<u8>,
    },
    /// Membership of a remote address space (Register, Join).
    Member {
        /// The RAS.
        pid: u16,
        /// Its key (Register only; a Join already had it).
        key: u64,
        /// This member's client id.
        client: u16,
    },
}

/// How a pointer chase ended (`Client::rchase`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChaseOutcome {
    /// A node held the key: its value, its address and the nodes visited (1 = the first).
    Found {
        /// The value bytes at the node's value offset.
        value: Vec<u8>,
        /// The matching node.
        node: u64,
        /// Nodes visited.
        hops: u64,
    },
    /// A null next pointer ended the walk after `hops` nodes.
    NotFound {
        /// Nodes visited.
        hops: u64,
    },
    /// The hop bound ended the walk; it may go on from `next`.
    HopLimit {
        /// The node the walk would visit next.
        next: u64,
    },
}

/// Counters and window state of one client (one memory node). The counters are summed over
/// the client's lanes; the window and round-trip fields (`cwnd`, `inflight_packets`,
/// `iwnd_*`, `srtt`, `min_rtt`, `rto`) are those of the calling thread's lane, and
/// `cwnd_min` / `cwnd_max` the extremes over all lanes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Operations completed (successfully or not).
    pub ops_completed: u64,
    /// Wire requests issued (first attempts).
    pub requests: u64,
    /// Packets handed to the transport (including retransmissions and CN acks).
    pub packets_sent: u64,
    /// Batches handed to the transport (over UDP one system call each).
    pub send_batches: u64,
    /// Whole-request retransmissions (timeout, NACK or corrupt response).
    pub retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// NACKs received.
    pub nacks: u64,
    /// Responses that failed their checksum.
    pub corrupt_responses: u64,
    /// Responses for no outstanding request (duplicates, late answers to retried requests).
    pub stale_responses: u64,
    /// `RetryLater` answers waited out.
    pub busy_retries: u64,
    /// `RouteUnverified` answers: the route cookie was stale and a Heartbeat fetched it.
    pub route_refreshes: u64,
    /// `QuotaExceeded` answers for this member's share of the node's idempotence ring
    /// (waited out like `RetryLater`, and counted in `busy_retries` too).
    pub ring_share_waits: u64,
    /// Operations that waited for an earlier conflicting one.
    pub dependency_waits: u64,
    /// CN acks sent for idempotence-ring results (TAS, Unlock, CAS, FAA).
    pub cn_acks: u64,
    /// Lease renewals (heartbeats) answered.
    pub heartbeats: u64,
    /// Sends delayed by pacing (window below one packet).
    pub paced: u64,
    /// Transport errors seen (the requests concerned are retried).
    pub transport_errors: u64,
    /// Retransmissions found needless: the answer arrived sooner after the retransmission
    /// than any round trip takes, so it answered an earlier attempt (the timeout fired on a
    /// delay, not a loss). Each raises the RTO floor for a while.
    pub spurious_retransmits: u64,
    /// CN acks refused for their epoch (`Status::Stale`: the view moved between the atomic's
    /// answer and its acknowledgement), each parked until this client carries another epoch.
    pub stale_acks: u64,
    /// Receive calls that returned packets, and the packets they returned (batching).
    pub receive_batches: u64,
    /// Packets received.
    pub packets_received: u64,
    /// Paths (sockets) open to the node: one per thread that submitted, up to a limit, on
    /// transports that can open more than one (UDP).
    pub lanes: usize,
    /// Current congestion window, packets.
    pub cwnd: f64,
    /// Smallest window since the last `reset_window_extremes`.
    pub cwnd_min: f64,
    /// Largest window since the last `reset_window_extremes`.
    pub cwnd_max: f64,
    /// Packets outstanding.
    pub inflight_packets: f64,
    /// Response bytes outstanding (incast window use).
    pub iwnd_used: u64,
    /// Incast window limit.
    pub iwnd_limit: u64,
    /// Smoothed RTT.
    pub srtt: Option<Duration>,
    /// Smallest RTT.
    pub min_rtt: Option<Duration>,
    /// Current RTO.
    pub rto: Duration,
}

impl Stats {
    /// Add `o`'s counters (not its window and round-trip figures) to these.
    fn add_counters(&mut self, o: &Stats) {
        self.ops_completed += o.ops_completed;
        self.requests += o.requests;
        self.packets_sent += o.packets_sent;
        self.send_batches += o.send_batches;
        self.retransmits += o.retransmits;
        self.timeouts += o.timeouts;
        self.nacks += o.nacks;
        self.corrupt_responses += o.corrupt_responses;
        self.stale_responses += o.stale_responses;
        self.busy_retries += o.busy_retries;
        self.route_refreshes += o.route_refreshes;
        self.ring_share_waits += o.ring_share_waits;
        self.dependency_waits += o.dependency_waits;
        self.cn_acks += o.cn_acks;
        self.heartbeats += o.heartbeats;
        self.paced += o.paced;
        self.transport_errors += o.transport_errors;
        self.spurious_retransmits += o.spurious_retransmits;
        self.stale_acks += o.stale_acks;
        self.receive_batches += o.receive_batches;
        self.packets_received += o.packets_received;
    }
}

/// Internal operation state.
struct Op {
    name: &'static str,
    spec_kind: Kind,
    data: Vec<u8>,
    value: u64,
    /// Second and third results (Register/Join: key, client id).
    aux: (u64, u64),
    pending: usize,
    error: Option<ClioError>,
    /// Requests built but held back by a dependency.
    held: Vec<Req>,
    tracked: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Register,
    Join,
    Unregister,
    Heartbeat,
    SetEpoch,
    Alloc,
    Free,
    Read,
    Write,
    Atomic,
    /// Transaction log / apply: a sequence number.
    Tx,
    /// Pointer chase: value, node, hops.
    Chase,
    /// Clio-KV: hit or miss, value.
    Kv,
    Fence,
}

/// One wire request (one request id).
struct Req {
    id: u32,
    /// The path it goes on (retries and its CN ack too), so its answer comes back there.
    lane: Lane,
    /// Owning operation; `None` for the library's own CN acks.
    op: Option<u64>,
    opcode: Opcode,
    va: u64,
    /// Offset of this request's data within its operation (reads).
    offset: usize,
    len: u32,
    packets: Vec<Vec<u8>>,
    resp_total: u16,
    got: Vec<bool>,
    got_n: u16,
    cost: f64,
    resp_bytes: u64,
    sent_at: Instant,
    /// When the first attempt went out.
    first_sent: Instant,
    deadline: Instant,
    rto: Duration,
    retries: u32,
    busy: u32,
    waiting_busy: bool,
    /// `RouteUnverified` answers to the cookie this client held (each fetched a new one).
    unverified: u32,
    /// The next send puts the current route cookie into the packets first.
    restamp: bool,
    /// Attempt number a NACK / corrupt response already triggered a retry for.
    retried_attempt: u32,
    /// The answer waits for work at the node beyond the fast path: a flush (durable write,
    /// Persist) or the slow path (allocation, registration, transactions...).
    flush: bool,
}

/// One lane's share of the engine: everything its requests need, under its own lock.
struct State {
    /// The next request id: this lane's number in the low bits, stepping by `MAX_LANES`.
    next_req: u32,
    /// The next operation id (lane in the low bits, stepping by `MAX_LANES`).
    next_op: u64,
    /// A thread is receiving on this lane.
    receiving: bool,
    /// Threads waiting on the condition variable for another thread's receive.
    waiters: usize,
    /// Requests completed after a retry, with how long their answer took (see
    /// `remember_retried`).
    retried: VecDeque<Retried>,
    ops: HashMap<u64, Op>,
    done: HashMap<u64, Result<Output>>,
    inflight: HashMap<u32, Req>,
    queue: VecDeque<Req>,
    /// Requests that go first at the next pump, outside the windows: CN acks, and the
    /// Heartbeat that fetches a new route cookie (`send.rs` `pump` says why).
    unwindowed: Vec<Req>,
    /// CN acks refused as stale, parked out of flight and out of the windows until this
    /// client carries an epoch other than the one they were refused at (`send.rs` `pump`).
    parked_acks: Vec<ParkedAck>,
    tracker: Tracker,
    cwnd: CongestionWindow,
    iwnd: IncastWindow,
    rtt: RttEstimator,
    /// Round trips of requests whose answer waits for a flush (durable writes, Persist) or
    /// the slow path (allocations take milliseconds where a read takes microseconds): their
    /// own RTO, and kept out of the delay-based window, because that is the node's storage
    /// or CPU time, not congestion.
    flush_rtt: RttEstimator,
    /// The Heartbeat that is fetching this lane's route cookie after a RouteUnverified, until
    /// it is answered or fails (refusals meanwhile wait for it and do not count).
    cookie_refresh: Option<u32>,
    inflight_pkts: f64,
    last_send: Instant,
    stats: Stats,
}

/// A CN ack the node refused as stale: the request id it acknowledges, its lane, and the
/// epoch it carried.
struct ParkedAck {
    acked: u32,
    lane: Lane,
    epoch: u16,
}

/// A request completed after a retry, remembered to recognise a second answer to it.
struct Retried {
    id: u32,
    /// From its first attempt to its (first) answer.
    delay: Duration,
    /// From its last attempt to that answer.
    after_retry: Duration,
    /// The RTO the last attempt was sent with.
    retry_rto: Duration,
    retries: u32,
}

/// Most requests deferred sends hold back before they leave anyway (a batch of this many
/// 64 B reads is one GSO message well under the kernel's 64-segment limit).
pub(crate) const DEFERRED_MAX: usize = 32;

/// The engine of one client.
pub(crate) struct Engine {
    lanes: Lanes,
    cfg: Config,
    /// One per lane (`shards[l]` holds lane `l`'s operations).
    shards: Vec<Shard>,
    /// `pid | client << 16 | cookie << 32` and the key, presented in every request (set at
    /// registration, before any other request; the route cookie, `clio_proto::route_cookie`,
    /// from every answer to Register, Join and Heartbeat).
    member: (AtomicU64, AtomicU64),
    /// The epoch every request carries (`clio_proto::epoch`; 0 outside a replicated pool):
    /// set by a multi-node client from its pool's view.
    epoch: AtomicU16,
    /// Bytes of each allocation this client made, by address (`rfree` tracks its range).
    allocs: Mutex<BTreeMap<u64, u64>>,
    /// Submissions wait in the queue for the next call that waits or polls (see
    /// [`Engine::set_deferred_sends`]).
    defer: AtomicBool,
}

/// One lane's state and the means to wait for it.
pub(super) struct Shard {
    lane: Lane,
    st: Mutex<State>,
    cv: Condvar,
    /// Bumped each time a receiving thread gives up the receive (results may have been
    /// delivered, or the receive is free to take): waiting threads watch it while they spin.
    receives: AtomicU64,
}

impl Shard {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Retried requests remembered for recognising a second answer.
const RETRIED_KEPT: usize = 64;

/// How long a thread whose result another thread will receive watches for it, yielding the
/// CPU between looks, before it sleeps on the condition variable. A sleeping thread is woken
/// by the kernel, which on a busy host costs tens of microseconds; a yielding one sees its
/// result within a scheduler turn and leaves the CPU to whoever needs it meanwhile.
const WAITER_SPIN: Duration = Duration::from_micros(50);

/// Longest a receiving thread blocks before it re-checks timers (the kernel timer is coarse).
const MAX_RECV_WAIT: Duration = Duration::from_millis(2);

impl Engine {
    pub(crate) fn new(transport: Box<dyn Transport>, mut cfg: Config) -> Engine {
        // A read's answer is one burst: keep it within what the transport can receive at
        // once (whole packets, at least one).
        if let Some(cap) = transport.burst_capacity() {
            let cap = (cap / MAX_PAYLOAD * MAX_PAYLOAD).max(MAX_PAYLOAD);
            cfg.max_read_bytes = cfg.max_read_bytes.min(cap.min(u32::MAX as usize) as u32);
        }
        let now = Instant::now();
        let start = rand::random::<u32>() | 1;
        let shards = (0..MAX_LANES)
            .map(|lane| Shard {
                lane,
                st: Mutex::new(State {
                    next_req: (start << LANE_BITS) | lane as u32,
                    next_op: (1 << LANE_BITS) | lane as u64,
                    receiving: false,
                    waiters: 0,
                    retried: VecDeque::new(),
                    ops: HashMap::new(),
                    done: HashMap::new(),
                    inflight: HashMap::new(),
                    queue: VecDeque::new(),
                    unwindowed: Vec::new(),
                    parked_acks: Vec::new(),
                    tracker: Tracker::default(),
                    cwnd: CongestionWindow::new(&cfg),
                    iwnd: IncastWindow::new(cfg.incast_window),
                    rtt: RttEstimator::new(&cfg),
                    flush_rtt: RttEstimator::new(&cfg),
                    cookie_refresh: None,
                    inflight_pkts: 0.0,
                    last_send: now,
                    stats: Stats::default(),
                }),
                cv: Condvar::new(),
                receives: AtomicU64::new(0),
            })
            .collect();
        let epoch = cfg.epoch;
        Engine {
            lanes: Lanes::new(transport),
            cfg,
            shards,
            member: (AtomicU64::new(0), AtomicU64::new(0)),
            epoch: AtomicU16::new(epoch),
            allocs: Mutex::new(BTreeMap::new()),
            defer: AtomicBool::new(false),
        }
    }

    /// The shard of lane `lane`.
    fn shard(&self, lane: Lane) -> &Shard {
        &self.shards[lane % MAX_LANES]
    }

    /// The shard operation `id` lives in (its low bits).
    fn shard_of(&self, id: u64) -> &Shard {
        self.shard((id % MAX_LANES as u64) as usize)
    }

    /// Present these credentials in every later request.
    pub(crate) fn set_member(&self, pid: u16, key: u64, client: u16) {
        self.member.1.store(key, Ordering::Release);
        let ids = pid as u64 | (client as u64) << 16;
        let _ = self
            .member
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |m| {
                Some(m & !0xFFFF_FFFF | ids)
            });
    }

    /// The route cookie the node gave this host's address (`clio_proto::route_cookie`).
    pub(crate) fn set_cookie(&self, cookie: u32) {
        let _ = self
            .member
            .0
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |m| {
                Some(m & 0xFFFF_FFFF | (cookie as u64) << 32)
            });
    }

    /// The route cookie every request carries.
    pub(crate) fn cookie(&self) -> u32 {
        (self.member.0.load(Ordering::Acquire) >> 32) as u32
    }

    /// The epoch every request built from now on carries.
    pub(crate) fn set_epoch(&self, epoch: u16) {
        self.epoch.store(epoch, Ordering::Release);
    }

    /// The epoch requests carry.
    pub(crate) fn epoch(&self) -> u16 {
        self.epoch.load(Ordering::Acquire)
    }

    /// `(pid, key, client)`.
    pub(crate) fn member(&self) -> (u16, u64, u16) {
        let ids = self.member.0.load(Ordering::Acquire);
        let key = self.member.1.load(Ordering::Acquire);
        (ids as u16, key, (ids >> 16) as u16)
    }

    pub(crate) fn pid(&self) -> u16 {
        self.member().0
    }

    pub(crate) fn transport_name(&self) -> &'static str {
        self.lanes.path(0).name()
    }

    /// Bytes of the allocation starting at `va`, if this client made it.
    pub(crate) fn alloc_len(&self, va: u64) -> Option<u64> {
        self.allocs_lock().get(&va).copied()
    }

    fn allocs_lock(&self) -> MutexGuard<'_, BTreeMap<u64, u64>> {
        self.allocs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Counters summed over the lanes; windows and round trips of the calling thread's lane
    /// (window extremes over all lanes).
    pub(crate) fn stats(&self) -> Stats {
        let own = self.lanes.of_this_thread();
        let mut s = Stats {
            cwnd_min: f64::INFINITY,
            ..Stats::default()
        };
        for sh in &self.shards[..self.lanes.open()] {
            let st = sh.lock();
            s.add_counters(&st.stats);
            s.cwnd_min = s.cwnd_min.min(st.cwnd.extremes.0);
            s.cwnd_max = s.cwnd_max.max(st.cwnd.extremes.1);
            if sh.lane == own {
                s.cwnd = st.cwnd.get();
                s.inflight_packets = st.inflight_pkts;
                s.iwnd_used = st.iwnd.used();
                s.iwnd_limit = st.iwnd.limit();
                s.srtt = st.rtt.srtt();
                s.min_rtt = st.rtt.min_rtt();
                s.rto = st.rtt.rto();
            }
        }
        s.lanes = self.lanes.open();
        s
    }

    pub(crate) fn reset_window_extremes(&self) {
        for sh in &self.shards {
            sh.lock().cwnd.reset_extremes();
        }
    }
}
