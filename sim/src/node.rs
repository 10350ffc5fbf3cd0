//! What a network front end needs from a memory node: the behavioural model and the
//! cosimulated RTL both implement it, so `clio board --backend model|rtl` serves the same way.

use crate::model::board::Outgoing;
use crate::model::Counters;
use clio_proto::frame::Route;

/// A memory node that answers packets.
pub trait MemoryNode: Send {
    /// Serve one incoming packet; responses are appended to `out`.
    fn handle(&mut self, route: &Route, bytes: &[u8], out: &mut Vec<Outgoing>);
    /// Let background work progress (slow-path rings); replies are appended to `out`.
    fn service(&mut self, out: &mut Vec<Outgoing>) -> usize;
    /// Counters of all stages.
    fn counters(&self) -> Counters;
    /// Ask an external slow-path daemon to stop.
    fn request_daemon_stop(&self);
    /// Whether acknowledgements wait for the next `service` (durable writes waiting for their
    /// flush): the front end then takes the packets already queued before it calls `service`,
    /// so one flush serves them all.
    fn holds_responses(&self) -> bool {
        false
    }
    /// Whether a slow path that runs beside the serving thread owes replies: the front end
    /// then looks at the rings again soon ([`crate::server::SLOW_PATH_POLL`]) instead of
    /// after its idle wait, so an allocation's answer does not wait for unrelated traffic.
    fn awaits_slow_path(&self) -> bool {
        false
    }
    /// The slow path's counters, where it runs in this process (thread or stepped).
    fn slowpath_stats(&self) -> Option<clio_slowpath::SlowPathStats> {
        None
    }
    /// The descriptor ring window the node shares with its slow path (its registers:
    /// `clio_proto::ring::reg`), for the node's own side of the pool (`reg::POOL_EPOCH`).
    fn ring_window(&self) -> Option<std::sync::Arc<clio_slowpath::RingWindow>> {
        None
    }
}

impl MemoryNode for crate::model::CBoard {
    fn handle(&mut self, route: &Route, bytes: &[u8], out: &mut Vec<Outgoing>) {
        crate::model::CBoard::handle(self, route, bytes, out)
    }
    fn service(&mut self, out: &mut Vec<Outgoing>) -> usize {
        crate::model::CBoard::service(self, out)
    }
    fn counters(&self) -> Counters {
        crate::model::CBoard::counters(self)
    }
    fn request_daemon_stop(&self) {
        crate::model::CBoard::request_daemon_stop(self)
    }
    fn holds_responses(&self) -> bool {
        crate::model::CBoard::holds_responses(self)
    }
    fn awaits_slow_path(&self) -> bool {
        crate::model::CBoard::awaits_slow_path(self)
    }
    fn slowpath_stats(&self) -> Option<clio_slowpath::SlowPathStats> {
        crate::model::CBoard::slowpath_stats(self)
    }
    fn ring_window(&self) -> Option<std::sync::Arc<clio_slowpath::RingWindow>> {
        Some(crate::model::CBoard::ring_window(self))
    }
}

impl MemoryNode for Box<dyn MemoryNode> {
    fn handle(&mut self, route: &Route, bytes: &[u8], out: &mut Vec<Outgoing>) {
        (**self).handle(route, bytes, out)
    }
    fn service(&mut self, out: &mut Vec<Outgoing>) -> usize {
        (**self).service(out)
    }
    fn counters(&self) -> Counters {
        (**self).counters()
    }
    fn request_daemon_stop(&self) {
        (**self).request_daemon_stop()
    }
    fn holds_responses(&self) -> bool {
        (**self).holds_responses()
    }
    fn awaits_slow_path(&self) -> bool {
        (**self).awaits_slow_path()
    }
    fn slowpath_stats(&self) -> Option<clio_slowpath::SlowPathStats> {
        (**self).slowpath_stats()
    }
    fn ring_window(&self) -> Option<std::sync::Arc<clio_slowpath::RingWindow>> {
        (**self).ring_window()
    }
}
