//! The request engine: turns operations into wire requests, sends them when the congestion
//! and incast windows allow, matches responses by request id, reassembles, retries, and
//! releases dependent operations.
//!
//! There is no background thread. Whichever application thread waits (a synchronous call,
//! `rpoll`, `rrelease`) drives progress: one waiter at a time receives from the transport
//! and hands results to the others. A single-threaded caller thus pays no thread hand-off
//! on its fast path. Asynchronous operations progress while some thread of the process is
//! inside CLib.

use crate::cc::{CongestionWindow, IncastWindow, RttEstimator};
use crate::config::Config;
use crate::error::{ClioError, Result};
use crate::lanes::{Lane, Lanes, MAX_LANES};
use crate::order::Tracker;
use crate::transport::{Received, Transport};
use clio_proto::consts::{MAX_PAYLOAD, MAX_READ_LEN, MAX_REQUEST_LEN};
use clio_proto::header::{packet_count, parse_verified, segment, HEADER_LEN};
use clio_proto::opcode::Path;
use clio_proto::{Header, Opcode, Packet, Status};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

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

/// Counters and window state of one client (one memory node).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Operations completed (successfully or not).
    pub ops_completed: u64,
    /// Wire requests issued (first attempts).
    pub requests: u64,
    /// Packets handed to the transport (including retransmissions and CN acks).
    pub packets_sent: u64,
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
    /// The lane its requests go on (the submitting thread's).
    lane: Lane,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Register,
    Join,
    Unregister,
    Heartbeat,
    Alloc,
    Free,
    Read,
    Write,
    Atomic,
    /// Transaction log / apply: a sequence number.
    Tx,
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
    /// Attempt number a NACK / corrupt response already triggered a retry for.
    retried_attempt: u32,
    /// The answer waits for work at the node beyond the fast path: a flush (durable write,
    /// Persist) or the slow path (allocation, registration, transactions...).
    flush: bool,
}

struct State {
    pid: u16,
    key: u64,
    client: u16,
    next_req: u32,
    next_op: u64,
    /// Per lane: a thread is receiving on it.
    receiving: [bool; MAX_LANES],
    /// Threads waiting on the condition variable for another thread's receive.
    waiters: usize,
    /// Requests completed after a retry, with how long their answer took (see
    /// `remember_retried`).
    retried: VecDeque<Retried>,
    ops: HashMap<u64, Op>,
    done: HashMap<u64, Result<Output>>,
    inflight: HashMap<u32, Req>,
    queue: VecDeque<Req>,
    tracker: Tracker,
    allocs: BTreeMap<u64, u64>,
    cwnd: CongestionWindow,
    iwnd: IncastWindow,
    rtt: RttEstimator,
    /// Round trips of requests whose answer waits for a flush (durable writes, Persist) or
    /// the slow path (allocations take milliseconds where a read takes microseconds): their
    /// own RTO, and kept out of the delay-based window, because that is the node's storage
    /// or CPU time, not congestion.
    flush_rtt: RttEstimator,
    inflight_pkts: f64,
    last_send: Instant,
    stats: Stats,
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

/// The engine of one client.
pub(crate) struct Engine {
    lanes: Lanes,
    cfg: Config,
    st: Mutex<State>,
    cv: Condvar,
    /// Bumped each time a receiving thread gives up the receive (results may have been
    /// delivered, or the receive is free to take): waiting threads watch it while they spin.
    receives: AtomicU64,
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
    pub(crate) fn new(transport: Box<dyn Transport>, cfg: Config) -> Engine {
        let now = Instant::now();
        let st = State {
            pid: 0,
            key: 0,
            client: 0,
            next_req: rand::random::<u32>() | 1,
            next_op: 1,
            receiving: [false; MAX_LANES],
            waiters: 0,
            retried: VecDeque::new(),
            ops: HashMap::new(),
            done: HashMap::new(),
            inflight: HashMap::new(),
            queue: VecDeque::new(),
            tracker: Tracker::default(),
            allocs: BTreeMap::new(),
            cwnd: CongestionWindow::new(&cfg),
            iwnd: IncastWindow::new(cfg.incast_window),
            rtt: RttEstimator::new(&cfg),
            flush_rtt: RttEstimator::new(&cfg),
            inflight_pkts: 0.0,
            last_send: now,
            stats: Stats::default(),
        };
        Engine {
            lanes: Lanes::new(transport),
            cfg,
            st: Mutex::new(st),
            cv: Condvar::new(),
            receives: AtomicU64::new(0),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Present these credentials in every later request.
    pub(crate) fn set_member(&self, pid: u16, key: u64, client: u16) {
        let mut st = self.lock();
        (st.pid, st.key, st.client) = (pid, key, client);
    }

    /// `(pid, key, client)`.
    pub(crate) fn member(&self) -> (u16, u64, u16) {
        let st = self.lock();
        (st.pid, st.key, st.client)
    }

    pub(crate) fn pid(&self) -> u16 {
        self.lock().pid
    }

    pub(crate) fn transport_name(&self) -> &'static str {
        self.lanes.path(0).name()
    }

    /// Bytes of the allocation starting at `va`, if this client made it.
    pub(crate) fn alloc_len(&self, va: u64) -> Option<u64> {
        self.lock().allocs.get(&va).copied()
    }

    pub(crate) fn stats(&self) -> Stats {
        let st = self.lock();
        let mut s = st.stats.clone();
        s.cwnd = st.cwnd.get();
        s.lanes = self.lanes.open();
        (s.cwnd_min, s.cwnd_max) = st.cwnd.extremes;
        s.inflight_packets = st.inflight_pkts;
        s.iwnd_used = st.iwnd.used();
        s.iwnd_limit = st.iwnd.limit();
        s.srtt = st.rtt.srtt();
        s.min_rtt = st.rtt.min_rtt();
        s.rto = st.rtt.rto();
        s
    }

    pub(crate) fn reset_window_extremes(&self) {
        self.lock().cwnd.reset_extremes();
    }

    // ---- building requests ----

    fn new_req(
        &self,
        st: &mut State,
        op: Option<u64>,
        h: Header,
        packets: Vec<Vec<u8>>,
        resp_total: u16,
        resp_bytes: u64,
    ) -> Req {
        let now = Instant::now();
        let cost = (packets.len().max(resp_total as usize)) as f64;
        let flush = h.durable || h.opcode.path() == Path::SlowPath;
        Req {
            id: h.req_id,
            lane: 0,
            op,
            opcode: h.opcode,
            va: h.va,
            offset: 0,
            len: h.total_len,
            packets,
            resp_total,
            got: vec![false; resp_total as usize],
            got_n: 0,
            cost,
            resp_bytes,
            sent_at: now,
            first_sent: now,
            deadline: now,
            rto: if flush {
                st.flush_rtt.rto()
            } else {
                st.rtt.rto()
            },
            retries: 0,
            busy: 0,
            waiting_busy: false,
            retried_attempt: u32::MAX,
            flush,
        }
    }

    fn req_id(st: &mut State) -> u32 {
        let id = st.next_req;
        st.next_req = st.next_req.wrapping_add(1);
        id
    }

    fn single(
        &self,
        st: &mut State,
        op: Option<u64>,
        opcode: Opcode,
        va: u64,
        arg0: u64,
        arg1: u64,
    ) -> Req {
        let id = Self::req_id(st);
        let h = Header {
            arg0,
            arg1,
            ..Header::request(opcode, st.pid, id, va)
        };
        // Register creates the RAS and has no credentials yet; everything else presents them.
        let h = if opcode.needs_key() {
            h.with_credentials(st.key, st.client)
        } else {
            h
        };
        let p = h.to_packet(&[]);
        self.new_req(st, op, h, vec![p], 1, HEADER_LEN as u64)
    }

    fn build(&self, st: &mut State, op_id: u64, spec: &OpSpec) -> Vec<Req> {
        let chunk = (self
            .cfg
            .max_request_bytes
            .clamp(MAX_PAYLOAD as u32, MAX_REQUEST_LEN)) as usize;
        match spec {
            OpSpec::Register { nonce } => {
                vec![self.single(st, Some(op_id), Opcode::Register, 0, *nonce, 0)]
            }
            OpSpec::Join { nonce } => {
                vec![self.single(st, Some(op_id), Opcode::Join, 0, *nonce, 0)]
            }
            OpSpec::Unregister { destroy } => {
                vec![self.single(st, Some(op_id), Opcode::Unregister, 0, *destroy as u64, 0)]
            }
            OpSpec::Heartbeat => vec![self.single(st, Some(op_id), Opcode::Heartbeat, 0, 0, 0)],
            OpSpec::Persist { va, len } | OpSpec::TxLog { va, len } => {
                let opcode = match spec {
                    OpSpec::Persist { .. } => Opcode::Persist,
                    _ => Opcode::TxLog,
                };
                let id = Self::req_id(st);
                let h = Header {
                    total_len: *len,
                    ..Header::request(opcode, st.pid, id, *va)
                }
                .with_credentials(st.key, st.client);
                let p = h.to_packet(&[]);
                vec![self.new_req(st, Some(op_id), h, vec![p], 1, HEADER_LEN as u64)]
            }
            OpSpec::TxApply { va } => {
                vec![self.single(st, Some(op_id), Opcode::TxApply, *va, 0, 0)]
            }
            OpSpec::Alloc { len, perms } => {
                vec![self.single(st, Some(op_id), Opcode::Alloc, 0, *len, *perms as u64)]
            }
            OpSpec::Free { va } => vec![self.single(st, Some(op_id), Opcode::Free, *va, 0, 0)],
            OpSpec::Fence => vec![self.single(st, Some(op_id), Opcode::Fence, 0, 0, 0)],
            OpSpec::Atomic { op, va, arg0, arg1 } => {
                vec![self.single(st, Some(op_id), *op, *va, *arg0, *arg1)]
            }
            OpSpec::Append {
                va,
                cap,
                record,
                durable,
            } => {
                let id = Self::req_id(st);
                let h = Header {
                    total_len: record.len() as u32,
                    durable: *durable,
                    arg0: *cap,
                    ..Header::request(Opcode::Append, st.pid, id, *va)
                }
                .with_credentials(st.key, st.client);
                let p = h.to_packet(record);
                vec![self.new_req(st, Some(op_id), h, vec![p], 1, HEADER_LEN as u64)]
            }
            OpSpec::Read { va, len } => (0..*len)
                .step_by(chunk.min(MAX_READ_LEN as usize))
                .map(|off| {
                    let clen = chunk.min(MAX_READ_LEN as usize).min(len - off) as u32;
                    let id = Self::req_id(st);
                    let h = Header {
                        total_len: clen,
                        ..Header::request(Opcode::Read, st.pid, id, va + off as u64)
                    }
                    .with_credentials(st.key, st.client);
                    let n = packet_count(clen);
                    let p = h.to_packet(&[]);
                    let mut r = self.new_req(
                        st,
                        Some(op_id),
                        h,
                        vec![p],
                        n,
                        clen as u64 + HEADER_LEN as u64 * n as u64,
                    );
                    r.offset = off;
                    r
                })
                .collect(),
            OpSpec::Write { va, data, durable } => (0..data.len())
                .step_by(chunk)
                .map(|off| {
                    let clen = chunk.min(data.len() - off) as u32;
                    let id = Self::req_id(st);
                    let base = Header {
                        total_len: clen,
                        durable: *durable,
                        ..Header::request(Opcode::Write, st.pid, id, va + off as u64)
                    }
                    .with_credentials(st.key, st.client);
                    let n = packet_count(clen);
                    let packets = (0..n)
                        .filter_map(|i| {
                            let (so, sl) = segment(clen, i)?;
                            let s = off + so as usize;
                            Some(
                                Header {
                                    pkt_index: i,
                                    pkt_count: n,
                                    ..base
                                }
                                .to_packet(&data[s..s + sl as usize]),
                            )
                        })
                        .collect();
                    let mut r = self.new_req(
                        st,
                        Some(op_id),
                        base,
                        packets,
                        n,
                        HEADER_LEN as u64 * n as u64,
                    );
                    r.offset = off;
                    r
                })
                .collect(),
        }
    }

    /// Pages (tracking units) an operation touches and whether it writes them.
    fn footprint(&self, st: &State, spec: &OpSpec) -> Option<(u64, u64, bool)> {
        let s = self.cfg.track_shift;
        let span = |va: u64, len: u64| Some((va >> s, va.saturating_add(len.max(1) - 1) >> s));
        let (range, write) = match spec {
            OpSpec::Read { va, len } => (span(*va, *len as u64), false),
            OpSpec::Write { va, data, .. } => (span(*va, data.len() as u64), true),
            // Persist waits for every earlier write to its range, and later ones for it.
            OpSpec::Persist { va, len } => (span(*va, *len as u64), true),
            // rtx_commit issues these after the durable write of the record has completed.
            OpSpec::TxLog { .. } | OpSpec::TxApply { .. } => (None, false),
            OpSpec::Atomic { va, .. } => (span(*va, 8), true),
            // Appenders need no order among themselves: the node orders the log.
            OpSpec::Append { .. } => (None, false),
            OpSpec::Free { va } => (span(*va, st.allocs.get(va).copied().unwrap_or(1)), true),
            OpSpec::Register { .. }
            | OpSpec::Join { .. }
            | OpSpec::Unregister { .. }
            | OpSpec::Heartbeat
            | OpSpec::Alloc { .. }
            | OpSpec::Fence => (None, false),
        };
        range.map(|(a, b)| (a, b, write))
    }

    /// Start an operation; returns its id (the handle).
    pub(crate) fn submit(&self, spec: OpSpec) -> u64 {
        let lane = self.lanes.for_submit();
        let mut st = self.lock();
        let id = st.next_op;
        st.next_op += 1;
        let mut reqs = self.build(&mut st, id, &spec);
        for r in &mut reqs {
            r.lane = lane;
        }
        let (kind, name, data) = match &spec {
            OpSpec::Register { .. } => (Kind::Register, "register", Vec::new()),
            OpSpec::Join { .. } => (Kind::Join, "join", Vec::new()),
            OpSpec::Unregister { .. } => (Kind::Unregister, "unregister", Vec::new()),
            OpSpec::Heartbeat => (Kind::Heartbeat, "heartbeat", Vec::new()),
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
            lane,
        };
        let ready = match self.footprint(&st, &spec) {
            Some((a, b, w)) => {
                op.tracked = true;
                st.tracker.insert(id, a, b, w)
            }
            None => true,
        };
        if ready {
            st.queue.extend(reqs);
        } else {
            st.stats.dependency_waits += 1;
            op.held = reqs;
        }
        st.ops.insert(id, op);
        self.pump(&mut st);
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
    fn pump(&self, st: &mut State) {
        let now = Instant::now();
        let srtt = st.rtt.srtt().unwrap_or(self.cfg.target_delay);
        let mut batch: Vec<Req> = Vec::new();
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

    fn retry_now(&self, st: &mut State, id: u32, now: Instant, timeout: bool) {
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

    /// Fire timers due `grace` ago or earlier: retransmission timeouts and ends of
    /// `RetryLater` waits.
    fn timers(&self, st: &mut State, now: Instant, grace: Duration) {
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

    fn next_event(&self, st: &State, now: Instant) -> Instant {
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

    // ---- receiving ----

    /// One packet from the node, received at `now`, which reached this host at `arrived`.
    fn on_packet(&self, st: &mut State, bytes: &[u8], now: Instant, arrived: Instant) {
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
            Status::RetryLater => {
                st.stats.busy_retries += 1;
                let Some(mut r) = st.inflight.remove(&h.req_id) else {
                    return;
                };
                r.busy += 1;
                if r.busy > self.cfg.max_busy_retries {
                    let name =
                        r.op.and_then(|o| st.ops.get(&o))
                            .map_or("cn-ack", |o| o.name);
                    let e = ClioError::Busy {
                        op: name,
                        retries: r.busy,
                    };
                    return self.finish_req(st, r, Err(e), now);
                }
                if !r.waiting_busy {
                    r.waiting_busy = true;
                    r.deadline = now + self.cfg.busy_backoff * (1u32 << (r.busy - 1).min(6));
                }
                st.inflight.insert(h.req_id, r);
            }
            Status::Ok => self.on_ok(st, &h, payload, now, arrived),
            s => {
                if let Some(r) = st.inflight.remove(&h.req_id) {
                    let e = ClioError::from_status(s, r.va).unwrap_or(ClioError::BadRequest);
                    self.finish_req(st, r, Err(e), now);
                }
            }
        }
    }

    /// Retry after a NACK or corrupt response, once per attempt (several packets of one
    /// attempt may be NACKed).
    fn retry_once(&self, st: &mut State, id: u32, now: Instant) {
        let Some(r) = st.inflight.get_mut(&id) else {
            return;
        };
        if r.retried_attempt == r.retries || r.waiting_busy {
            return;
        }
        r.retried_attempt = r.retries + 1;
        self.retry_now(st, id, now, false);
    }

    fn on_ok(&self, st: &mut State, h: &Header, payload: &[u8], now: Instant, arrived: Instant) {
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
        if matches!(r.opcode, Opcode::Register | Opcode::Join) {
            if let Some(op) = r.op.and_then(|o| st.ops.get_mut(&o)) {
                op.aux = (h.arg0, h.arg1);
            }
        }
        if r.opcode == Opcode::Heartbeat {
            st.stats.heartbeats += 1;
        }
        if let Some(r) = st.inflight.remove(&h.req_id) {
            if r.opcode == Opcode::Alloc {
                st.allocs.insert(value, alloc_len);
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
    fn check_spurious(&self, st: &mut State, r: &Req, answered: Instant) {
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
    fn needless_retry(&self, st: &mut State, delay: Duration, retries: u32, timed: bool) {
        st.stats.spurious_retransmits += retries as u64;
        if timed {
            st.rtt.on_spurious(delay);
        }
        st.cwnd.undo_timeout();
    }

    /// A retried request completed: keep (id, how long its answer took) for a while, so a
    /// second answer to it (the node answered the first attempt *and* the retry, so the
    /// first was only slow, not lost: D-SACK's reasoning) can be recognised.
    fn remember_retried(&self, st: &mut State, r: &Req, answered: Instant) {
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
    fn duplicate_answer(&self, st: &mut State, id: u32) {
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
    fn finish_req(&self, st: &mut State, r: Req, result: Result<u64>, now: Instant) {
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
        if result.is_ok() && r.opcode.needs_cn_ack() {
            // Free the node's idempotence-ring slot; retried until answered.
            st.stats.cn_acks += 1;
            let mut ack = self.single(st, None, Opcode::CnAck, 0, r.id as u64, 0);
            ack.lane = r.lane;
            st.queue.push_back(ack);
        }
        if r.opcode == Opcode::Free && result.is_ok() {
            st.allocs.remove(&r.va);
        }
        if let Some(op_id) = r.op {
            self.finish_op_part(st, op_id, result);
        }
        self.pump(st);
    }

    fn finish_op_part(&self, st: &mut State, op_id: u64, result: Result<u64>) {
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
                Kind::Heartbeat => Output::Value(op.value),
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

    // ---- waiting ----

    /// The lane a thread waiting for `want` (or for everything: `None`) receives on: the
    /// wanted operation's; else its own if it has requests out there; else the first free
    /// lane with requests out; else its own.
    fn lane_to_receive(&self, st: &State, own: Lane, want: Option<u64>) -> Lane {
        if let Some(op) = want.and_then(|id| st.ops.get(&id)) {
            return op.lane;
        }
        let busy = |l: Lane| st.inflight.values().any(|r| r.lane == l);
        if busy(own) {
            return own;
        }
        (0..self.lanes.open())
            .filter(|&l| busy(l))
            .find(|&l| !st.receiving[l])
            .unwrap_or(own)
    }

    /// Before timers fire: take what already waits on the lanes nobody receives on that have
    /// overdue requests (their threads are elsewhere), so an answer that arrived is not
    /// taken for a loss. Non-blocking.
    fn poll_idle_lanes(&self, st: &mut State, now: Instant) {
        for lane in 0..self.lanes.open() {
            if st.receiving[lane]
                || !st
                    .inflight
                    .values()
                    .any(|r| r.lane == lane && r.deadline <= now)
            {
                continue;
            }
            let mut batch: Vec<Received> = Vec::new();
            if self.lanes.recv(lane, Duration::ZERO, &mut batch).is_ok() {
                self.take_batch(st, &batch, Instant::now());
            }
        }
    }

    /// Handle every packet of a receive, under one lock.
    fn take_batch(&self, st: &mut State, batch: &[Received], now: Instant) {
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

    /// Drive the engine until `cond` holds or `deadline` passes (after at least one
    /// receive attempt); returns whether it holds. `want` is the operation waited for, if
    /// one: the thread receives on its lane.
    fn drive<'a>(
        &'a self,
        mut st: MutexGuard<'a, State>,
        deadline: Option<Instant>,
        want: Option<u64>,
        cond: impl Fn(&State) -> bool,
    ) -> (MutexGuard<'a, State>, bool) {
        let own = self.lanes.of_this_thread();
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
            let lane = self.lane_to_receive(&st, own, want);
            if st.receiving[lane] {
                let handed;
                (st, handed) = self.watch_receives(st, until);
                if handed {
                    continue;
                }
            }
            if st.receiving[lane] {
                st.waiters += 1;
                st = self
                    .cv
                    .wait_timeout(st, wait)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
                st.waiters -= 1;
            } else {
                st.receiving[lane] = true;
                // Spin only while no other thread waits: a woken waiter needs a CPU that
                // a spinning receiver would hold.
                self.lanes.path(lane).spin_hint(st.waiters == 0);
                drop(st);
                let mut batch: Vec<Received> = Vec::new();
                let got = self.lanes.recv(lane, wait, &mut batch);
                st = self.lock();
                st.receiving[lane] = false;
                let now = Instant::now();
                match got {
                    Ok(()) if !batch.is_empty() => {
                        self.take_batch(&mut st, &batch, now);
                        // Under a steady stream of answers the transport is never silent:
                        // requests overdue by more than a receive wait are retried anyway.
                        let now = Instant::now();
                        self.poll_idle_lanes(&mut st, now);
                        self.timers(&mut st, now, MAX_RECV_WAIT);
                    }
                    // Timers fire only when nothing is waiting in the transport: a thread
                    // that was descheduled past a deadline first takes the response that
                    // arrived meanwhile instead of retransmitting spuriously.
                    Ok(()) => {
                        self.poll_idle_lanes(&mut st, now);
                        self.timers(&mut st, now, Duration::ZERO)
                    }
                    Err(_) => {
                        st.stats.transport_errors += 1;
                        drop(st);
                        std::thread::sleep(Duration::from_micros(200));
                        st = self.lock();
                        let now = Instant::now();
                        self.poll_idle_lanes(&mut st, now);
                        self.timers(&mut st, now, Duration::ZERO);
                    }
                }
                self.receives.fetch_add(1, Ordering::Release);
                self.cv.notify_all();
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
    fn watch_receives<'a>(
        &'a self,
        st: MutexGuard<'a, State>,
        until: Instant,
    ) -> (MutexGuard<'a, State>, bool) {
        let seen = self.receives.load(Ordering::Acquire);
        let stop = until.min(Instant::now() + WAITER_SPIN);
        drop(st);
        let handed = loop {
            if self.receives.load(Ordering::Acquire) != seen {
                break true;
            }
            if Instant::now() >= stop {
                break false;
            }
            std::thread::yield_now();
        };
        let st = self.lock();
        let handed = handed || self.receives.load(Ordering::Acquire) != seen;
        (st, handed)
    }

    /// Wait for operation `id` and take its result.
    pub(crate) fn wait(&self, id: u64) -> Result<Output> {
        let st = self.lock();
        if !st.ops.contains_key(&id) && !st.done.contains_key(&id) {
            return Err(ClioError::UnknownHandle(id));
        }
        let (mut st, _) = self.drive(st, None, Some(id), |s| s.done.contains_key(&id));
        st.done
            .remove(&id)
            .unwrap_or(Err(ClioError::UnknownHandle(id)))
    }

    /// Wait for operation `id` until `deadline`; `None` if it is still running then.
    pub(crate) fn wait_until(&self, id: u64, deadline: Instant) -> Option<Result<Output>> {
        let st = self.lock();
        if !st.ops.contains_key(&id) && !st.done.contains_key(&id) {
            return Some(Err(ClioError::UnknownHandle(id)));
        }
        let (mut st, _) = self.drive(st, Some(deadline), Some(id), |s| s.done.contains_key(&id));
        st.done.remove(&id)
    }

    /// Make progress without blocking for long; the result if operation `id` is complete.
    pub(crate) fn try_take(&self, id: u64) -> Option<Result<Output>> {
        let st = self.lock();
        if !st.ops.contains_key(&id) && !st.done.contains_key(&id) {
            return Some(Err(ClioError::UnknownHandle(id)));
        }
        let (mut st, _) = self.drive(st, Some(Instant::now()), Some(id), |s| {
            s.done.contains_key(&id)
        });
        st.done.remove(&id)
    }

    /// Wait until every operation started before this call is complete (results stay
    /// available to `rpoll`).
    pub(crate) fn drain(&self) {
        let st = self.lock();
        let upto = st.next_op;
        let _ = self.drive(st, None, None, |s| s.ops.keys().all(|k| *k >= upto));
    }

    /// Deliver outstanding CN acks (bounded wait), e.g. before the client goes away, so the
    /// node's idempotence ring is not left holding this client's entries.
    pub(crate) fn flush_acks(&self, limit: Duration) {
        let st = self.lock();
        let _ = self.drive(st, Some(Instant::now() + limit), None, |s| {
            s.queue.iter().all(|r| r.op.is_some()) && s.inflight.values().all(|r| r.op.is_some())
        });
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
