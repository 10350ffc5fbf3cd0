//! Lanes: one path to the memory node per application thread, so that a thread waiting for
//! its own result receives it itself.
//!
//! With one socket per client, one waiting thread receives for all and wakes the thread a
//! result belongs to through a condition variable: every result of another thread costs a
//! kernel wake-up on top of the receive. A lane is a second socket to the same node (the
//! node answers each request to the address it came from, so the answers to a lane's
//! requests come back on that lane). A thread that keeps submitting (its [`LANE_AFTER`]th
//! operation) gets a lane of its own while there are fewer than [`MAX_LANES`], then shares
//! one; a thread that submits now and then (a lease heartbeat) stays on lane 0 and costs no
//! socket. A transport that cannot open another
//! path ([`Transport::open_lane`] gives `None`: raw Ethernet, AF_XDP, in-process) keeps one
//! lane, and the engine works as before; fault injection opens a faulty lane over a transport
//! that opens lanes.
//!
//! The engine keeps a lane per request (its retries and CN ack go the same way) and, per
//! lane, whether a thread is receiving on it; this module only holds the paths and who owns
//! which.

use crate::error::Result;
use crate::transport::{Received, Transport};
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

/// Most paths one client opens to its node (and the engine's shards: one per lane).
pub(crate) const MAX_LANES: usize = 16;

/// Bits of an operation id or request id that name its lane (`MAX_LANES` is a power of two).
pub(crate) const LANE_BITS: u32 = MAX_LANES.trailing_zeros();
const _: () = assert!(
    1 << LANE_BITS == MAX_LANES,
    "MAX_LANES must be a power of two"
);

/// Operations a thread submits on lane 0 before it gets a lane of its own.
pub(crate) const LANE_AFTER: u32 = 16;

/// A lane number, `0..MAX_LANES`.
pub(crate) type Lane = usize;

/// Identifies a `Lanes` (a client's engine) in the threads' own maps.
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's claim in each client it used: read on every submission without a lock
    /// shared with other threads. A claim gives its lane back when the thread ends.
    static MINE: RefCell<HashMap<u64, Claim>> = RefCell::new(HashMap::new());
}

/// A thread's lane in one client, and the operations it submitted while on lane 0.
struct Claim {
    lane: Lane,
    /// Operations submitted on lane 0 (`u32::MAX`: the first thread, which keeps lane 0).
    on_first: u32,
    /// Where to give the lane back (the client may be gone by then).
    owners: Weak<Mutex<Owners>>,
}

impl Drop for Claim {
    fn drop(&mut self) {
        if self.lane == 0 {
            return;
        }
        if let Some(o) = self.owners.upgrade() {
            let mut o = o.lock().unwrap_or_else(|e| e.into_inner());
            o.threads[self.lane] = o.threads[self.lane].saturating_sub(1);
        }
    }
}

/// Who holds which lane.
#[derive(Default)]
struct Owners {
    /// Threads holding each lane (lane 0 is never counted: the first thread's, and the
    /// lane of threads that submit now and then).
    threads: [usize; MAX_LANES],
    /// No more lanes can be opened (the transport cannot, or an attempt failed).
    closed: bool,
}

/// The paths of one client to its node.
pub(crate) struct Lanes {
    id: u64,
    /// Lane 0: the transport the client was made with.
    first: Box<dyn Transport>,
    /// Lanes 1.. , opened on demand.
    more: [OnceLock<Box<dyn Transport>>; MAX_LANES - 1],
    /// Lanes open (lane 0 and `more[..open - 1]`).
    open: AtomicUsize,
    /// A thread has claimed lane 0 for good (the first to submit).
    first_claimed: AtomicBool,
    /// Taken when a thread leaves lane 0 or ends (not on the request path).
    owners: Arc<Mutex<Owners>>,
}

impl Lanes {
    pub(crate) fn new(first: Box<dyn Transport>) -> Lanes {
        Lanes {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            first,
            more: Default::default(),
            open: AtomicUsize::new(1),
            first_claimed: AtomicBool::new(false),
            owners: Arc::new(Mutex::new(Owners::default())),
        }
    }

    /// The path of `lane` (lane 0 for one not open: never the case for a lane the engine
    /// got from [`Lanes::for_submit`]).
    pub(crate) fn path(&self, lane: Lane) -> &dyn Transport {
        let more = lane.checked_sub(1).and_then(|i| self.more.get(i));
        match more.and_then(OnceLock::get) {
            Some(t) => t.as_ref(),
            None => self.first.as_ref(),
        }
    }

    /// Lanes open now.
    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }

    /// The calling thread's lane (0 until it has one of its own).
    pub(crate) fn of_this_thread(&self) -> Lane {
        MINE.with(|m| m.borrow().get(&self.id).map_or(0, |c| c.lane))
    }

    /// The lane for an operation the calling thread submits, and whether the thread just
    /// moved to it from lane 0 (the engine then completes what the thread left on lane 0,
    /// so its operations stay ordered). Its own lane if it has one; else, from its
    /// `LANE_AFTER`th operation on, a lane no live thread holds (one an ended thread gave
    /// back, or a new one while fewer than `MAX_LANES` are open and the transport can open
    /// one), else the least shared one. The first thread keeps lane 0.
    pub(crate) fn for_submit(&self) -> (Lane, bool) {
        MINE.with(|m| {
            let mut m = m.borrow_mut();
            let c = m.entry(self.id).or_insert_with(|| {
                // The first thread to submit keeps lane 0 (it never moves).
                let first = !self.first_claimed.swap(true, Ordering::AcqRel);
                Claim {
                    lane: 0,
                    on_first: if first { u32::MAX } else { 0 },
                    owners: Arc::downgrade(&self.owners),
                }
            });
            if c.lane != 0 || c.on_first == u32::MAX || c.on_first + 1 < LANE_AFTER {
                c.on_first = c.on_first.saturating_add((c.lane == 0) as u32);
                return (c.lane, false);
            }
            c.lane = self.assign();
            if c.lane == 0 {
                c.on_first = u32::MAX; // no lane to be had: lane 0 for good
            }
            (c.lane, c.lane != 0)
        })
    }

    /// A lane for a thread leaving lane 0, counted as held by it.
    fn assign(&self) -> Lane {
        let mut o = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        let open = self.open.load(Ordering::Acquire);
        let free = (1..open).find(|&l| o.threads[l] == 0);
        let lane = match free {
            Some(l) => l,
            None if !o.closed && open < MAX_LANES => match self.first.open_lane() {
                Some(t) => {
                    // `more[open - 1]` was never set: only this branch sets it, under
                    // `owners`, and `open` grows after.
                    let _ = self.more[open - 1].set(t);
                    self.open.store(open + 1, Ordering::Release);
                    open
                }
                None => {
                    o.closed = true;
                    0
                }
            },
            None => (1..open).min_by_key(|&l| o.threads[l]).unwrap_or(0),
        };
        if lane != 0 {
            o.threads[lane] += 1;
        }
        lane
    }

    /// Send `packets`, each on its lane, one batch per lane, in order within a lane.
    pub(crate) fn send(&self, packets: &[(Lane, &[u8])]) -> Result<()> {
        let mut result = Ok(());
        let mut done = [false; MAX_LANES];
        for &(lane, _) in packets {
            if std::mem::replace(&mut done[lane.min(MAX_LANES - 1)], true) {
                continue;
            }
            let batch: Vec<&[u8]> = packets
                .iter()
                .filter(|(l, _)| *l == lane)
                .map(|(_, p)| *p)
                .collect();
            if let Err(e) = self.path(lane).send_batch(&batch) {
                result = Err(e);
            }
        }
        result
    }

    /// Receive on `lane` (see [`Transport::recv_batch`]).
    pub(crate) fn recv(&self, lane: Lane, wait: Duration, out: &mut Vec<Received>) -> Result<()> {
        self.path(lane).recv_batch(wait, out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::UdpTransport;
    use std::net::UdpSocket;

    #[test]
    fn threads_get_lanes_of_their_own_up_to_the_limit_then_share() {
        let node = UdpSocket::bind("127.0.0.1:0").unwrap();
        let lanes = Lanes::new(Box::new(
            UdpTransport::connect(node.local_addr().unwrap()).unwrap(),
        ));
        assert_eq!(lanes.for_submit(), (0, false));
        for _ in 0..2 * LANE_AFTER {
            assert_eq!(
                lanes.for_submit(),
                (0, false),
                "the first thread keeps lane 0"
            );
        }
        // A thread that submits now and then stays on lane 0.
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 1..LANE_AFTER {
                    assert_eq!(lanes.for_submit(), (0, false));
                }
            });
        });
        assert_eq!(lanes.open(), 1);
        // The threads live until all have their lanes (an ended thread gives its lane back).
        let all = std::sync::Barrier::new(MAX_LANES + 3);
        let got: Vec<Lane> = std::thread::scope(|s| {
            (0..MAX_LANES + 3)
                .map(|_| {
                    s.spawn(|| {
                        let mut moves = 0;
                        for _ in 0..LANE_AFTER {
                            moves += lanes.for_submit().1 as u32;
                        }
                        let l = lanes.of_this_thread();
                        assert_eq!(moves, 1, "a thread moves once, to lane {l}");
                        for _ in 0..3 {
                            assert_eq!(lanes.for_submit(), (l, false), "a thread keeps its lane");
                        }
                        all.wait();
                        l
                    })
                })
                .collect::<Vec<_>>()
                .into_iter()
                .map(|h| h.join().unwrap())
                .collect()
        });
        assert_eq!(lanes.open(), MAX_LANES);
        assert!(
            !got.contains(&0),
            "lane 0 stays the first thread's: {got:?}"
        );
        let mut own = got.clone();
        own.sort_unstable();
        own.dedup();
        assert_eq!(own, (1..MAX_LANES).collect::<Vec<_>>(), "{got:?}");
        // Ended threads gave their lanes back: the next thread gets a lane of its own again.
        let held = |l: Lane| lanes.owners.lock().unwrap().threads[l];
        assert!((0..MAX_LANES).all(|l| held(l) == 0));
        std::thread::scope(|s| {
            s.spawn(|| {
                let moved: Vec<bool> = (0..LANE_AFTER).map(|_| lanes.for_submit().1).collect();
                assert_eq!(moved.iter().filter(|m| **m).count(), 1);
                let l = lanes.of_this_thread();
                assert!(l != 0 && held(l) == 1, "lane {l} held by {}", held(l));
            });
        });
        assert_eq!(lanes.open(), MAX_LANES, "no lane opened beyond the limit");
        // Each lane is its own socket: the node sees a different source per lane.
        lanes.send(&[(0, b"zero"), (1, b"one")]).unwrap();
        let mut buf = [0u8; 16];
        let (_, a) = node.recv_from(&mut buf).unwrap();
        let (_, b) = node.recv_from(&mut buf).unwrap();
        assert_ne!(a, b);
    }
}
