//! Intra-thread ordering of asynchronous operations (paper 4.5): every incomplete operation
//! is recorded with the range of tracking units (pages) it touches; a new operation that
//! reads a unit an earlier incomplete one writes (RAW), or writes a unit an earlier one
//! reads or writes (WAR, WAW), waits until the earlier one completes. Reads never wait for
//! reads. `rfree` is recorded as a write of its whole range, so no access to the range
//! starts until it finishes.

use std::collections::BTreeMap;

#[derive(Debug, Clone, Copy)]
struct Entry {
    first: u64,
    last: u64,
    write: bool,
    blocked: bool,
}

/// Incomplete tracked operations, in program (id) order.
#[derive(Debug, Default)]
pub struct Tracker {
    entries: BTreeMap<u64, Entry>,
}

impl Tracker {
    fn conflicts_before(&self, id: u64, first: u64, last: u64, write: bool) -> bool {
        self.entries
            .range(..id)
            .any(|(_, e)| e.first <= last && first <= e.last && (e.write || write))
    }

    /// Record operation `id` over units `first..=last`; returns whether it may start now
    /// (`false`: it depends on an earlier incomplete operation).
    pub fn insert(&mut self, id: u64, first: u64, last: u64, write: bool) -> bool {
        let blocked = self.conflicts_before(id, first, last, write);
        self.entries.insert(
            id,
            Entry {
                first,
                last,
                write,
                blocked,
            },
        );
        !blocked
    }

    /// Operation `id` completed; returns the operations that may start now, in order.
    pub fn remove(&mut self, id: u64) -> Vec<u64> {
        if self.entries.remove(&id).is_none() {
            return Vec::new();
        }
        let blocked: Vec<(u64, Entry)> = self
            .entries
            .iter()
            .filter(|(_, e)| e.blocked)
            .map(|(k, e)| (*k, *e))
            .collect();
        let mut ready = Vec::new();
        for (k, e) in blocked {
            if !self.conflicts_before(k, e.first, e.last, e.write) {
                if let Some(x) = self.entries.get_mut(&k) {
                    x.blocked = false;
                }
                ready.push(k);
            }
        }
        ready
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_war_waw_wait_and_reads_share() {
        let mut t = Tracker::default();
        assert!(t.insert(1, 0, 0, true)); // write page 0
        assert!(!t.insert(2, 0, 0, false), "RAW waits");
        assert!(t.insert(3, 1, 1, true), "other page runs");
        assert!(!t.insert(4, 0, 1, true), "WAW/WAR over both pages waits");
        assert!(t.insert(5, 2, 2, false));
        assert!(t.insert(6, 2, 2, false), "read after read does not wait");
        assert!(!t.insert(7, 2, 2, true), "WAR waits");
        assert_eq!(
            t.remove(1),
            vec![2],
            "4 still waits for 2 (WAR) and 3 (WAW)"
        );
        assert_eq!(t.remove(3), Vec::<u64>::new());
        assert_eq!(t.remove(2), vec![4]);
        assert_eq!(t.remove(5), Vec::<u64>::new());
        assert_eq!(t.remove(6), vec![7]);
        assert_eq!(t.remove(99), Vec::<u64>::new());
    }

    #[test]
    fn a_blocked_op_keeps_later_conflicting_ops_behind_it() {
        let mut t = Tracker::default();
        assert!(t.insert(1, 0, 0, true));
        assert!(!t.insert(2, 0, 5, true)); // waits for 1
        assert!(!t.insert(3, 5, 5, false), "conflicts with blocked op 2");
        assert_eq!(t.remove(1), vec![2]);
        assert_eq!(t.remove(2), vec![3]);
        assert_eq!(t.entries.len(), 1);
    }
}
