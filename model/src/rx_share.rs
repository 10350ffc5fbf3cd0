//! The RX ring's per-source share (`clio_proto::ring::rx_share_admits`): a request for the
//! slow path is pushed only while its source (`clio_proto::ring::rx_source_bucket`) holds
//! fewer RX descriptors than are free past the notices' reserve; else it is RETRY_LATER. So
//! one source flooding the slow path (heartbeats, say) holds at most half the ring, and the
//! others' requests still reach the slow path.
//!
//! The model of `hw/src/fastpath/rx_share.rs`: the source of every descriptor pushed and not
//! yet taken, oldest first (a PAGE_MAPPED notice is nobody's), and each source's count of
//! them. The ring is a FIFO, so the descriptors still in it are the newest `used` pushed.

use clio_proto::ring::{rx_share_admits, RX_SOURCE_BUCKETS};
use std::collections::VecDeque;

/// The descriptors each source holds in the RX ring.
#[derive(Debug, Clone, Default)]
pub struct RxShare {
    /// Source bucket of every descriptor pushed and not yet taken, oldest first.
    tags: VecDeque<Option<usize>>,
    held: [u32; RX_SOURCE_BUCKETS],
}

impl RxShare {
    /// The slow path has taken all but the newest `used` descriptors pushed.
    pub fn taken_up_to(&mut self, used: u32) {
        while self.tags.len() > used as usize {
            if let Some(Some(b)) = self.tags.pop_front() {
                self.held[b] -= 1;
            }
        }
    }

    /// Whether a request from `bucket` may be pushed while the ring has `free` slots.
    pub fn admits(&self, bucket: usize, free: u32) -> bool {
        rx_share_admits(self.held[bucket % RX_SOURCE_BUCKETS], free)
    }

    /// A descriptor pushed: a request from `bucket`, or a notice (`None`).
    pub fn pushed(&mut self, bucket: Option<usize>) {
        let bucket = bucket.map(|b| b % RX_SOURCE_BUCKETS);
        if let Some(b) = bucket {
            self.held[b] += 1;
        }
        self.tags.push_back(bucket);
    }

    /// Descriptors `bucket` holds.
    pub fn held(&self, bucket: usize) -> u32 {
        self.held[bucket % RX_SOURCE_BUCKETS]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_proto::ring::RX_RESERVED_FOR_NOTICES;

    #[test]
    fn a_source_holds_at_most_what_is_free_and_gets_it_back_as_it_is_taken() {
        let entries = 64;
        let mut s = RxShare::default();
        let mut used = 0;
        while s.admits(3, entries - used) {
            s.pushed(Some(3));
            used += 1;
        }
        assert_eq!(used, (entries - RX_RESERVED_FOR_NOTICES) / 2);
        // A notice is nobody's; another source still finds room.
        s.pushed(None);
        used += 1;
        assert!(s.admits(4, entries - used));
        // The slow path takes the three oldest: source 3 holds three fewer.
        let before = s.held(3);
        used -= 3;
        s.taken_up_to(used);
        assert_eq!(s.held(3), before - 3);
        assert!(s.admits(3, entries - used));
        // Everything taken: nothing held.
        s.taken_up_to(0);
        assert_eq!(s.held(3), 0);
    }
}
