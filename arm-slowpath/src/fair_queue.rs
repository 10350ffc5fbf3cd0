//! The slow path's queue of requests waiting to execute, fair between remote address spaces.
//!
//! The slow path takes every descriptor the fast path hands over as soon as it can (renewing
//! leases and answering the cheap requests at once) and queues the requests whose execution
//! can take long (Alloc, Free, Unregister, Persist, transactions) per RAS; it then executes
//! one request of each RAS in turn. So a tenant that floods allocations, or asks for ones
//! whose placement runs to the budget, delays its own requests, not another tenant's, and
//! the fast path's RX ring never stays full behind it.

use clio_proto::frame::Route;
use clio_proto::Header;
use std::collections::{HashMap, HashSet, VecDeque};

/// Requests one RAS may have waiting; past it the slow path answers RETRY_LATER at once.
pub const QUEUED_PER_RAS: usize = 64;

/// Per-RAS queues served round robin.
#[derive(Debug, Default)]
pub struct FairQueue {
    queues: HashMap<u16, VecDeque<(Route, Header)>>,
    /// RASes with something queued, in the order they are served next.
    turn: VecDeque<u16>,
    /// Identities `(pid, client, req_id)` queued (a retransmission of one is not queued again).
    ids: HashSet<(u16, u16, u32)>,
}

impl FairQueue {
    /// Whether this request is already waiting.
    pub fn contains(&self, h: &Header) -> bool {
        self.ids.contains(&h.identity())
    }

    /// Queue a request; false (nothing queued) when its RAS has [`QUEUED_PER_RAS`] waiting.
    pub fn push(&mut self, route: Route, h: Header) -> bool {
        let q = self.queues.entry(h.pid).or_default();
        if q.len() >= QUEUED_PER_RAS {
            return false;
        }
        if q.is_empty() {
            self.turn.push_back(h.pid);
        }
        q.push_back((route, h));
        self.ids.insert(h.identity());
        true
    }

    /// The next request to execute: the oldest of the RAS whose turn it is.
    pub fn pop(&mut self) -> Option<(Route, Header)> {
        let pid = self.turn.pop_front()?;
        let q = self.queues.get_mut(&pid)?;
        let r = q.pop_front();
        if q.is_empty() {
            self.queues.remove(&pid);
        } else {
            self.turn.push_back(pid);
        }
        if let Some((_, h)) = &r {
            self.ids.remove(&h.identity());
        }
        r
    }

    /// Requests waiting, in all.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.turn.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_proto::Opcode;

    fn req(pid: u16, id: u32) -> Header {
        Header::request(Opcode::Alloc, pid, id, 0)
    }

    #[test]
    fn rases_take_turns_and_each_keeps_its_order() {
        let mut q = FairQueue::default();
        for id in 0..5 {
            assert!(q.push(Route::default(), req(1, id)));
        }
        assert!(q.push(Route::default(), req(2, 100)));
        assert!(q.push(Route::default(), req(2, 101)));
        assert!(q.contains(&req(1, 3)) && !q.contains(&req(1, 9)));
        let order: Vec<(u16, u32)> = std::iter::from_fn(|| q.pop())
            .map(|(_, h)| (h.pid, h.req_id))
            .collect();
        assert_eq!(
            order,
            vec![(1, 0), (2, 100), (1, 1), (2, 101), (1, 2), (1, 3), (1, 4)]
        );
        assert!(q.is_empty() && q.len() == 0);
    }

    #[test]
    fn one_ras_cannot_queue_past_its_bound() {
        let mut q = FairQueue::default();
        for id in 0..QUEUED_PER_RAS as u32 {
            assert!(q.push(Route::default(), req(1, id)));
        }
        assert!(!q.push(Route::default(), req(1, 999)));
        assert!(
            q.push(Route::default(), req(2, 0)),
            "another RAS still queues"
        );
    }
}
