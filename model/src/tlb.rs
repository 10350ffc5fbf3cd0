//! TLB: fully associative over `(pid, vpn)`, [`TLB_ENTRIES`] entries, tree pseudo-LRU
//! replacement, as the RTL's (`hw/src/tlb.rs`): a lookup matches the whole `(pid, vpn)`; an
//! insert takes the entry whose key has its update tag (`clio_proto::consts::tlb_tag`), else
//! the lowest free entry, else the one the replacement tree leads to, and an invalidation
//! drops the entry with its tag; a hit and an insert touch their entry, turning every node
//! on its path away from it.

use clio_proto::consts::{tlb_tag, TLB_ENTRIES};
use clio_proto::pte::Pte;

#[derive(Debug, Clone, Copy)]
struct Entry {
    pid: u16,
    vpn: u64,
    pte: Pte,
}

/// The translation cache.
#[derive(Debug, Clone)]
pub struct Tlb {
    /// The entries, by index (`None`: free).
    slots: Vec<Option<Entry>>,
    /// The replacement tree in heap order (node 1 the root, node `n`'s halves `2n` and
    /// `2n + 1`, entry `i` the leaf `capacity + i`): `true` when the victim is in the upper half.
    tree: Vec<bool>,
}

impl Default for Tlb {
    fn default() -> Self {
        Tlb::new(TLB_ENTRIES)
    }
}

impl Tlb {
    /// An empty TLB of `capacity` entries (a power of two, at least 2: the tree's leaves).
    pub fn new(capacity: usize) -> Tlb {
        assert!(
            capacity >= 2 && capacity.is_power_of_two(),
            "TLB capacity {capacity}: a power of two, at least 2"
        );
        Tlb {
            slots: vec![None; capacity],
            tree: vec![false; capacity],
        }
    }

    /// Look up a translation, touching its entry on a hit.
    pub fn lookup(&mut self, pid: u16, vpn: u64) -> Option<Pte> {
        self.lookup_among(pid, vpn).0
    }

    /// [`Tlb::lookup`], and in the same pass whether another process's translation of page
    /// `vpn` is cached (where a TLB tagged by page only would answer `pid` with it).
    pub fn lookup_among(&mut self, pid: u16, vpn: u64) -> (Option<Pte>, bool) {
        let mut hit = None;
        let mut other = false;
        for (i, e) in self.slots.iter().enumerate() {
            match e {
                Some(e) if e.vpn == vpn && e.pid == pid => hit = Some((i, e.pte)),
                Some(e) if e.vpn == vpn => other = true,
                _ => {}
            }
        }
        if let Some((i, _)) = hit {
            self.touch(i);
        }
        (hit.map(|(_, pte)| pte), other)
    }

    /// Insert or update a translation: it takes the entry whose key has its update tag
    /// (`clio_proto::consts::tlb_tag`: its own key's, or another's that shares the tag),
    /// else the lowest free entry, else the one the tree leads to.
    pub fn insert(&mut self, pid: u16, vpn: u64, pte: Pte) {
        let tag = tlb_tag(pid, vpn);
        let held = self
            .slots
            .iter()
            .position(|e| matches!(e, Some(x) if tlb_tag(x.pid, x.vpn) == tag));
        let free = || self.slots.iter().position(Option::is_none);
        let t = held.or_else(free).unwrap_or_else(|| self.victim());
        self.slots[t] = Some(Entry { pid, vpn, pte });
        self.touch(t);
    }

    /// Drop a translation (TLB shootdown): the entry whose key has its update tag (its own,
    /// or another key's that shares the tag: a miss later, never a stale translation).
    /// Returns whether the translation itself was cached.
    pub fn invalidate(&mut self, pid: u16, vpn: u64) -> bool {
        let tag = tlb_tag(pid, vpn);
        match self
            .slots
            .iter_mut()
            .find(|e| matches!(e, Some(x) if tlb_tag(x.pid, x.vpn) == tag))
        {
            Some(e) => {
                let was = matches!(e, Some(x) if x.pid == pid && x.vpn == vpn);
                *e = None;
                was
            }
            None => false,
        }
    }

    /// Number of cached translations.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|e| e.is_some()).count()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Turn every node on entry `t`'s path away from it.
    fn touch(&mut self, t: usize) {
        let mut n = self.slots.len() + t;
        while n > 1 {
            // `n` is its parent's upper half when odd: the parent then points down.
            self.tree[n / 2] = n.is_multiple_of(2);
            n /= 2;
        }
    }

    /// The entry the tree leads to from the root.
    fn victim(&self) -> usize {
        let mut n = 1;
        while n < self.slots.len() {
            n = 2 * n + usize::from(self.tree[n]);
        }
        n - self.slots.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_entry_not_touched_last() {
        let mut t = Tlb::new(2);
        let p = Pte::allocated(1, 0, 3);
        t.insert(1, 1, p);
        t.insert(1, 2, p);
        assert!(t.lookup(1, 1).is_some()); // 2 is now the victim
        t.insert(1, 3, p);
        assert!(t.lookup(1, 2).is_none());
        assert!(t.lookup(1, 1).is_some() && t.lookup(1, 3).is_some());
        assert!(t.invalidate(1, 1) && !t.invalidate(1, 1));
        assert!(t.lookup(2, 3).is_none(), "other pid never hits");
    }

    /// Keys that share an update tag replace each other, and an invalidation of one drops
    /// the other (a miss later, never a stale translation); keys with other tags stay.
    #[test]
    fn keys_sharing_a_tag_replace_each_other() {
        let mut t = Tlb::default();
        let p = Pte::allocated(1, 0, 3);
        let (a, b) = ((1u16, 5u64), (2u16, 0xC05u64));
        assert_eq!(tlb_tag(a.0, a.1), tlb_tag(b.0, b.1));
        t.insert(a.0, a.1, p);
        t.insert(9, 9, p);
        t.insert(b.0, b.1, p);
        assert_eq!(t.len(), 2, "one entry per tag");
        assert!(t.lookup(a.0, a.1).is_none() && t.lookup(b.0, b.1).is_some());
        assert!(!t.invalidate(a.0, a.1), "a's translation was not cached");
        assert!(
            t.lookup(b.0, b.1).is_none(),
            "b's entry dropped with a's tag"
        );
        assert!(t.lookup(9, 9).is_some());
    }

    /// Full, with entries 0..8 touched after the fill: eight inserts go where the tree leads,
    /// one into each eighth of the table, the first into the upper half (the touches were all
    /// in the lower one); a freed entry is taken before any victim.
    #[test]
    fn a_full_table_spreads_its_victims() {
        let mut t = Tlb::default();
        let p = Pte::allocated(1, 0, 3);
        for v in 0..64 {
            t.insert(1, v, p);
        }
        for v in 0..8 {
            assert!(t.lookup(1, v).is_some());
        }
        let victims: Vec<usize> = (100..108)
            .map(|v| {
                let i = t.victim();
                t.insert(1, v, p);
                i
            })
            .collect();
        assert_eq!(victims, [32, 16, 48, 8, 40, 24, 56, 0]);
        assert_eq!(t.len(), 64);
        assert!(t.invalidate(1, 9));
        t.insert(1, 200, p);
        assert!(t.lookup(1, 200).is_some() && t.lookup(1, 10).is_some());
        assert_eq!(t.len(), 64);
    }
}
