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
//! path ([`Transport::open_lane`] gives `None`: raw Ethernet, AF_XDP, in-process, fault
//! injection) keeps one lane, and the engine works as before.
//!
//! The engine keeps a lane per request (its retries and CN ack go the same way) and, per
//! lane, whether a thread is receiving on it; this module only holds the paths and who owns
//! which.

use crate::error::Result;
use crate::transport::{Received, Transport};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};
use std::thread::ThreadId;
use std::time::Duration;

/// Most paths one client opens to its node.
pub(crate) const MAX_LANES: usize = 8;

/// Operations a thread submits on lane 0 before it gets a lane of its own.
pub(crate) const LANE_AFTER: u32 = 16;

/// Threads remembered before the map starts over (threads that ended leave entries; they
/// are cheap to re-assign).
const THREADS_KEPT: usize = 256;

/// A lane number, `0..MAX_LANES`.
pub(crate) type Lane = usize;

/// The paths of one client to its node.
pub(crate) struct Lanes {
    /// Lane 0: the transport the client was made with.
    first: Box<dyn Transport>,
    /// Lanes 1.. , opened on demand.
    more: [OnceLock<Box<dyn Transport>>; MAX_LANES - 1],
    owners: Mutex<Owners>,
}

#[derive(Default)]
struct Owners {
    /// Lanes open (lane 0 and `more[..open - 1]`).
    open: usize,
    /// No more lanes: the transport cannot open one, or the last attempt failed.
    closed: bool,
    /// Each thread's lane and the operations it submitted while on lane 0.
    by_thread: HashMap<ThreadId, (Lane, u32)>,
}

impl Lanes {
    pub(crate) fn new(first: Box<dyn Transport>) -> Lanes {
        Lanes {
            first,
            more: Default::default(),
            owners: Mutex::new(Owners {
                open: 1,
                ..Owners::default()
            }),
        }
    }

    /// The path of `lane` (lane 0 for one not open: never the case for a lane the engine
    /// got from [`Lanes::of_this_thread`]).
    pub(crate) fn path(&self, lane: Lane) -> &dyn Transport {
        let more = lane.checked_sub(1).and_then(|i| self.more.get(i));
        match more.and_then(OnceLock::get) {
            Some(t) => t.as_ref(),
            None => self.first.as_ref(),
        }
    }

    /// Lanes open now.
    pub(crate) fn open(&self) -> usize {
        self.owners.lock().unwrap_or_else(|e| e.into_inner()).open
    }

    /// The calling thread's lane (0 until it has one of its own).
    pub(crate) fn of_this_thread(&self) -> Lane {
        let me = std::thread::current().id();
        let o = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        o.by_thread.get(&me).map_or(0, |&(l, _)| l)
    }

    /// The lane for an operation the calling thread submits: its own if it has one; else,
    /// from its `LANE_AFTER`th operation on, a new one while fewer than `MAX_LANES` are open
    /// and the transport can open one, else a shared one. The first thread keeps lane 0.
    pub(crate) fn for_submit(&self) -> Lane {
        let me = std::thread::current().id();
        let mut o = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        if o.by_thread.len() >= THREADS_KEPT && !o.by_thread.contains_key(&me) {
            o.by_thread.clear();
        }
        let first = o.by_thread.is_empty();
        let (lane, n) = *o.by_thread.entry(me).or_insert((0, 0));
        if lane != 0 || first || n + 1 < LANE_AFTER {
            if let Some(e) = o.by_thread.get_mut(&me) {
                e.1 = e.1.saturating_add(1);
            }
            return lane;
        }
        let lane = if !o.closed && o.open < MAX_LANES {
            match self.first.open_lane() {
                Some(t) => {
                    let l = o.open;
                    // `more[l - 1]` was never set: only this branch sets it, under `owners`.
                    let _ = self.more[l - 1].set(t);
                    o.open += 1;
                    l
                }
                None => {
                    o.closed = true;
                    0
                }
            }
        } else if o.open > 1 {
            // Share one of the opened lanes (not lane 0, the first thread's).
            1 + o.by_thread.len() % (o.open - 1)
        } else {
            0
        };
        o.by_thread.insert(me, (lane, n.saturating_add(1)));
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
        assert_eq!(lanes.for_submit(), 0);
        assert_eq!(lanes.for_submit(), 0, "the first thread keeps lane 0");
        // A thread that submits now and then stays on lane 0.
        std::thread::scope(|s| {
            s.spawn(|| {
                for _ in 1..LANE_AFTER {
                    assert_eq!(lanes.for_submit(), 0);
                }
            });
        });
        assert_eq!(lanes.open(), 1);
        let got: Vec<Lane> = std::thread::scope(|s| {
            (0..MAX_LANES + 3)
                .map(|_| {
                    s.spawn(|| {
                        let mut l = 0;
                        for _ in 0..LANE_AFTER {
                            l = lanes.for_submit();
                        }
                        assert_eq!(lanes.of_this_thread(), l, "a thread keeps its lane");
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
        // Each lane is its own socket: the node sees a different source per lane.
        lanes.send(&[(0, b"zero"), (1, b"one")]).unwrap();
        let mut buf = [0u8; 16];
        let (_, a) = node.recv_from(&mut buf).unwrap();
        let (_, b) = node.recv_from(&mut buf).unwrap();
        assert_ne!(a, b);
    }
}
