//! The slow path's service loop: what the daemon runs on the board's ARM cores, and what a
//! software node runs on a thread of its own (`clio board --slowpath thread`). The same loop
//! either way, so the slow path is one piece of code behind one ring window.

use crate::daemon::SlowPath;
use crate::frame_memory::FrameMemory;
use crate::ring_window::RingWindow;
use clio_proto::ring::{daemon_state, reg};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Serve the rings until the fast path's side sets `DAEMON_STATE` to `STOP_REQUESTED`:
/// mark the daemon running, poll, beat the heartbeat register, and when a round found no work
/// call `idle` (sleep, or park until the fast path has work) with the length of the idle
/// streak so far. `after_round` sees the slow path after every round that did work
/// (counters for the node). Marks the daemon stopped on the way out.
pub fn serve(
    sp: &mut SlowPath,
    ring: &RingWindow,
    mem: &mut dyn FrameMemory,
    mut idle: impl FnMut(u32),
    mut after_round: impl FnMut(&SlowPath),
) {
    ring.reg(reg::DAEMON_STATE)
        .store(daemon_state::RUNNING, Ordering::Release);
    let mut streak = 0u32;
    loop {
        let work = sp.poll(ring, mem);
        // A plain load and store, not fetch_add: on the board's uncached UIO window an atomic
        // RMW becomes an exclusive pair that an AXI4-Lite slave cannot acknowledge. The
        // daemon is the only writer of this register.
        let hb = ring.reg(reg::DAEMON_HEARTBEAT).load(Ordering::Relaxed);
        ring.reg(reg::DAEMON_HEARTBEAT)
            .store(hb.wrapping_add(1), Ordering::Relaxed);
        if ring.reg(reg::DAEMON_STATE).load(Ordering::Acquire) == daemon_state::STOP_REQUESTED {
            break;
        }
        if work == 0 {
            // A Clio-KV purge pass waits for the fast path to take its pause (KV requests are
            // answered RETRY_LATER meanwhile): look again soon.
            streak = if sp.kv_purge_waits() {
                0
            } else {
                streak.saturating_add(1)
            };
            idle(streak);
        } else {
            streak = 0;
            after_round(sp);
        }
    }
    ring.reg(reg::DAEMON_STATE)
        .store(daemon_state::STOPPED, Ordering::Release);
}

/// The idle wait of a slow path on a thread of the node: short while work came recently
/// (a burst of allocations), growing to `max` when the node is quiet, so an idle node costs
/// little CPU; the node wakes the thread early when it hands over a request.
pub fn idle_wait(streak: u32, max: Duration) -> Duration {
    let us = 20u64.saturating_mul(1 << streak.min(10));
    Duration::from_micros(us).min(max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_idle_wait_grows_to_its_bound() {
        let max = Duration::from_millis(1);
        assert_eq!(idle_wait(0, max), Duration::from_micros(20));
        assert!(idle_wait(3, max) > idle_wait(2, max));
        assert_eq!(idle_wait(1000, max), max);
    }
}
