//! The slow path on a thread of its own (`SlowPathMode::Thread`, `clio board`'s default):
//! the board's shape in one process. The fast path (the model or the cosimulated RTL, on the
//! serving thread) and the slow path share only what they share on the board: the descriptor
//! ring window and the node's DRAM, mapped twice. Allocation, teardown, frame clearing and
//! recovery then never hold up a data request.

use clio_proto::ring::{daemon_state, reg};
use clio_slowpath::{serve, MappedMemory, RingWindow, SlowPath, SlowPathStats};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// The longest an idle slow-path thread sleeps before it looks at the ring again (leases,
/// which are judged in seconds); the node wakes it at once when it hands a request or a
/// fault's notice over, so this costs no latency, and a quiet node wakes it 100 times a
/// second.
pub const IDLE_MAX: Duration = Duration::from_millis(10);

/// A running slow-path thread. Dropping it stops the thread and waits for it.
#[derive(Debug)]
pub struct SlowPathThread {
    ring: Arc<RingWindow>,
    stats: Arc<Mutex<SlowPathStats>>,
    /// The last round found work (a request executing or waiting its turn): its answers
    /// may still come. Cleared when a round finds none.
    busy: Arc<AtomicBool>,
    join: Option<JoinHandle<()>>,
}

impl SlowPathThread {
    /// Start serving `ring` with `sp`, clearing frames and applying records in `mem` (the
    /// node's DRAM, mapped again for this thread).
    pub fn spawn(
        mut sp: SlowPath,
        ring: Arc<RingWindow>,
        mut mem: MappedMemory,
    ) -> std::io::Result<SlowPathThread> {
        let stats = Arc::new(Mutex::new(sp.stats()));
        let busy = Arc::new(AtomicBool::new(false));
        let (r, s, b, b2) = (ring.clone(), stats.clone(), busy.clone(), busy.clone());
        let join = std::thread::Builder::new()
            .name("clio-slowpath".into())
            .spawn(move || {
                serve(
                    &mut sp,
                    &r,
                    &mut mem,
                    |streak| {
                        b.store(false, Ordering::Release);
                        std::thread::park_timeout(clio_slowpath::serve::idle_wait(streak, IDLE_MAX))
                    },
                    |sp| {
                        b2.store(true, Ordering::Release);
                        *s.lock().unwrap_or_else(|e| e.into_inner()) = sp.stats()
                    },
                );
                *s.lock().unwrap_or_else(|e| e.into_inner()) = sp.stats();
            })?;
        Ok(SlowPathThread {
            ring,
            stats,
            busy,
            join: Some(join),
        })
    }

    /// The fast path handed something over: look at the ring now.
    pub fn wake(&self) {
        if let Some(j) = &self.join {
            j.thread().unpark();
        }
    }

    /// Whether the slow path may still owe answers: requests in the RX ring, answers in the
    /// TX ring, or its last round found work.
    pub fn owes_replies(&self) -> bool {
        self.busy.load(Ordering::Acquire)
            || self.ring.rx_pending() > 0
            || self.ring.tx_pending() > 0
    }

    /// The slow path's counters as of its last busy round.
    pub fn stats(&self) -> SlowPathStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for SlowPathThread {
    fn drop(&mut self) {
        self.ring
            .reg(reg::DAEMON_STATE)
            .store(daemon_state::STOP_REQUESTED, Ordering::Release);
        if let Some(j) = self.join.take() {
            j.thread().unpark();
            let _ = j.join();
        }
    }
}
