//! What each serving thread did: datagrams taken, and the time it waited for the node's lock
//! and held it. The threads share one node behind one lock (every answer is one the
//! single-threaded model could give); these figures say how much of the node's time that
//! lock is busy, the first thing to read when more threads stop adding throughput.

use crate::node::MemoryNode;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// One serving thread's counters (updated by it, read by anyone).
#[derive(Default)]
pub(crate) struct ThreadStats {
    datagrams: AtomicU64,
    lock_wait_ns: AtomicU64,
    lock_held_ns: AtomicU64,
}

/// A snapshot of one serving thread's counters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServingStats {
    /// Datagrams it took.
    pub datagrams: u64,
    /// Time it waited for the node's lock.
    pub lock_wait: Duration,
    /// Time it held the node's lock (running requests through the model).
    pub lock_held: Duration,
}

impl ThreadStats {
    pub(crate) fn took(&self, n: usize) {
        self.datagrams.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> ServingStats {
        ServingStats {
            datagrams: self.datagrams.load(Ordering::Relaxed),
            lock_wait: Duration::from_nanos(self.lock_wait_ns.load(Ordering::Relaxed)),
            lock_held: Duration::from_nanos(self.lock_held_ns.load(Ordering::Relaxed)),
        }
    }

    /// Lock `board`, counting the wait now and the time held when the guard drops.
    pub(crate) fn lock<'a>(&'a self, board: &'a Mutex<Box<dyn MemoryNode>>) -> Held<'a> {
        let asked = Instant::now();
        let g = super::lock(board);
        let since = Instant::now();
        self.lock_wait_ns.fetch_add(
            since.duration_since(asked).as_nanos() as u64,
            Ordering::Relaxed,
        );
        Held {
            g,
            since,
            stats: self,
        }
    }
}

/// The node's lock, held by a serving thread (its hold time is counted when it drops).
pub(crate) struct Held<'a> {
    g: MutexGuard<'a, Box<dyn MemoryNode>>,
    since: Instant,
    stats: &'a ThreadStats,
}

impl Deref for Held<'_> {
    type Target = Box<dyn MemoryNode>;
    fn deref(&self) -> &Self::Target {
        &self.g
    }
}

impl DerefMut for Held<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.g
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.stats
            .lock_held_ns
            .fetch_add(self.since.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}
