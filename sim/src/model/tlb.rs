//! TLB: fully associative over `(pid, vpn)`, LRU replacement, [`TLB_ENTRIES`] entries.

use clio_proto::consts::TLB_ENTRIES;
use clio_proto::pte::Pte;

#[derive(Debug, Clone, Copy)]
struct Entry {
    pid: u16,
    vpn: u64,
    pte: Pte,
    last_use: u64,
}

/// The translation cache.
#[derive(Debug, Clone)]
pub struct Tlb {
    entries: Vec<Entry>,
    clock: u64,
    capacity: usize,
}

impl Default for Tlb {
    fn default() -> Self {
        Tlb::new(TLB_ENTRIES)
    }
}

impl Tlb {
    /// An empty TLB of `capacity` entries.
    pub fn new(capacity: usize) -> Tlb {
        Tlb {
            entries: Vec::with_capacity(capacity),
            clock: 0,
            capacity,
        }
    }

    /// Look up a translation, refreshing its LRU age on a hit.
    pub fn lookup(&mut self, pid: u16, vpn: u64) -> Option<Pte> {
        self.lookup_among(pid, vpn).0
    }

    /// [`Tlb::lookup`], and in the same pass whether another process's translation of page
    /// `vpn` is cached (where a TLB tagged by page only would answer `pid` with it).
    pub fn lookup_among(&mut self, pid: u16, vpn: u64) -> (Option<Pte>, bool) {
        self.clock += 1;
        let mut hit = None;
        let mut other = false;
        for e in self.entries.iter_mut().filter(|e| e.vpn == vpn) {
            if e.pid == pid {
                e.last_use = self.clock;
                hit = Some(e.pte);
            } else {
                other = true;
            }
        }
        (hit, other)
    }

    /// Insert or update a translation, evicting the least recently used entry when full.
    pub fn insert(&mut self, pid: u16, vpn: u64, pte: Pte) {
        self.clock += 1;
        let e = Entry {
            pid,
            vpn,
            pte,
            last_use: self.clock,
        };
        if let Some(old) = self
            .entries
            .iter_mut()
            .find(|x| x.pid == pid && x.vpn == vpn)
        {
            *old = e;
        } else if self.entries.len() < self.capacity {
            self.entries.push(e);
        } else if let Some(lru) = self.entries.iter_mut().min_by_key(|x| x.last_use) {
            *lru = e;
        }
    }

    /// Drop a translation (TLB shootdown). Returns whether it was cached.
    pub fn invalidate(&mut self, pid: u16, vpn: u64) -> bool {
        let before = self.entries.len();
        self.entries.retain(|e| !(e.pid == pid && e.vpn == vpn));
        before != self.entries.len()
    }

    /// Number of cached translations.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lru_evicts_the_least_recently_used() {
        let mut t = Tlb::new(2);
        let p = Pte::allocated(1, 0, 3);
        t.insert(1, 1, p);
        t.insert(1, 2, p);
        assert!(t.lookup(1, 1).is_some()); // 2 is now LRU
        t.insert(1, 3, p);
        assert!(t.lookup(1, 2).is_none());
        assert!(t.lookup(1, 1).is_some() && t.lookup(1, 3).is_some());
        assert!(t.invalidate(1, 1) && !t.invalidate(1, 1));
        assert!(t.lookup(2, 3).is_none(), "other pid never hits");
    }
}
