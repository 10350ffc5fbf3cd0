//! The reply cache of non-idempotent slow-path requests (Alloc, Free, Unregister): a retry of
//! one that already executed gets the recorded answer instead of executing again.
//!
//! Partitioned by member: each `(pid, client)` holds at most [`REPLY_CACHE_PER_MEMBER`]
//! answers and evicts only its own oldest, so no tenant's traffic can flush another's replay
//! protection; a member's answers are forgotten when it departs, and a RAS's when it is torn
//! down, so the next owner of a PID or client id never meets them.

use clio_proto::Header;
use std::collections::{HashMap, VecDeque};

/// Answers kept per member. CLib has at most a few slow-path requests of one member in flight
/// (each retried until answered), so a duplicate arrives long before 32 newer requests of the
/// same member could have pushed its answer out.
pub const REPLY_CACHE_PER_MEMBER: usize = 32;

/// The cache.
#[derive(Debug, Default)]
pub struct ReplyCache {
    members: HashMap<(u16, u16), VecDeque<(u32, Header)>>,
}

impl ReplyCache {
    /// The recorded answer to `(pid, client, req_id)`, if it is still held.
    pub fn get(&self, (pid, client, req_id): (u16, u16, u32)) -> Option<Header> {
        self.members
            .get(&(pid, client))?
            .iter()
            .find(|(r, _)| *r == req_id)
            .map(|(_, h)| *h)
    }

    /// Record an answer, evicting the member's own oldest when its share is full.
    pub fn insert(&mut self, (pid, client, req_id): (u16, u16, u32), reply: Header) {
        let q = self.members.entry((pid, client)).or_default();
        if q.len() >= REPLY_CACHE_PER_MEMBER {
            q.pop_front();
        }
        q.push_back((req_id, reply));
    }

    /// A member departed: forget its answers.
    pub fn forget_member(&mut self, pid: u16, client: u16) {
        self.members.remove(&(pid, client));
    }

    /// A RAS was torn down: forget every member's answers.
    pub fn forget_ras(&mut self, pid: u16) {
        self.members.retain(|(p, _), _| *p != pid);
    }

    /// Answers held, in all.
    pub fn len(&self) -> usize {
        self.members.values().map(VecDeque::len).sum()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_proto::{Opcode, Status};

    fn answer(v: u64) -> Header {
        Header {
            arg0: v,
            ..Header::request(Opcode::Alloc, 1, 1, 0).response_to(Status::Ok)
        }
    }

    #[test]
    fn a_flood_of_one_member_never_evicts_another() {
        let mut c = ReplyCache::default();
        c.insert((1, 1, 7), answer(70));
        for r in 0..10_000 {
            c.insert((2, 1, r), answer(0));
        }
        assert_eq!(c.get((1, 1, 7)).map(|h| h.arg0), Some(70));
        assert_eq!(c.len(), 1 + REPLY_CACHE_PER_MEMBER);
        assert!(c.get((2, 1, 0)).is_none(), "the flooder evicted its own");
        assert!(c.get((2, 1, 9_999)).is_some());
    }

    #[test]
    fn answers_die_with_their_member_and_their_ras() {
        let mut c = ReplyCache::default();
        c.insert((1, 1, 7), answer(1));
        c.insert((1, 2, 7), answer(2));
        c.insert((3, 1, 7), answer(3));
        c.forget_member(1, 1);
        assert!(c.get((1, 1, 7)).is_none());
        assert!(c.get((1, 2, 7)).is_some());
        c.forget_ras(1);
        assert!(c.get((1, 2, 7)).is_none());
        assert_eq!(c.get((3, 1, 7)).map(|h| h.arg0), Some(3));
    }
}
