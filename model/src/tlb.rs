//! TLB: set associative over `(pid, vpn)`, [`TLB_SETS`] sets of [`TLB_WAYS`] ways, a tree
//! pseudo-LRU per set, as the RTL's (`hw/src/tlb.rs`): a key lives only in its set
//! (`clio_proto::consts::tlb_set`); a lookup matches the whole `(pid, vpn)` among the set's
//! ways; an insert takes the way that holds its key, else the set's lowest free way, else the
//! way the set's tree leads to; an invalidation drops the way that holds its key; a hit and an
//! insert touch their way, turning every node on its path away from it.

use clio_proto::consts::{tlb_set, TLB_SETS, TLB_WAYS};
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
    /// The entries, `set * ways + way` (`None`: free).
    slots: Vec<Option<Entry>>,
    /// Per set, its replacement tree in heap order (node 1 the root, node `n`'s halves `2n`
    /// and `2n + 1`, way `w` the leaf `ways + w`; bit `n` of the word for node `n`): set when
    /// the victim is in the node's upper half.
    trees: Vec<u64>,
    sets: usize,
    ways: usize,
}

impl Default for Tlb {
    fn default() -> Self {
        Tlb::new(TLB_SETS, TLB_WAYS)
    }
}

impl Tlb {
    /// An empty TLB of `sets` sets (a power of two, at most [`TLB_SETS`]: a key's set is
    /// `tlb_set` modulo `sets`) of `ways` ways each (a power of two, 2 to 32: the tree's
    /// leaves).
    pub fn new(sets: usize, ways: usize) -> Tlb {
        assert!(
            sets.is_power_of_two() && sets <= TLB_SETS,
            "TLB sets {sets}: a power of two, at most {TLB_SETS}"
        );
        assert!(
            (2..=32).contains(&ways) && ways.is_power_of_two(),
            "TLB ways {ways}: a power of two, 2 to 32"
        );
        Tlb {
            slots: vec![None; sets * ways],
            trees: vec![0; sets],
            sets,
            ways,
        }
    }

    /// The set of `(pid, vpn)`.
    pub fn set_of(&self, pid: u16, vpn: u64) -> usize {
        tlb_set(pid, vpn) & (self.sets - 1)
    }

    /// Where `(pid, vpn)` is cached: its set and way.
    pub fn slot_of(&self, pid: u16, vpn: u64) -> Option<(usize, usize)> {
        let s = self.set_of(pid, vpn);
        (0..self.ways)
            .find(|&w| {
                matches!(self.slots[s * self.ways + w], Some(e) if e.pid == pid && e.vpn == vpn)
            })
            .map(|w| (s, w))
    }

    /// Look up a translation, touching its way on a hit.
    pub fn lookup(&mut self, pid: u16, vpn: u64) -> Option<Pte> {
        self.lookup_among(pid, vpn).0
    }

    /// [`Tlb::lookup`], and in the same pass whether another process's translation of page
    /// `vpn` is cached (where a TLB tagged by page only would answer `pid` with it).
    pub fn lookup_among(&mut self, pid: u16, vpn: u64) -> (Option<Pte>, bool) {
        let other = self
            .slots
            .iter()
            .flatten()
            .any(|e| e.vpn == vpn && e.pid != pid);
        let hit = self.slot_of(pid, vpn);
        let pte = hit.and_then(|(s, w)| self.slots[s * self.ways + w].map(|e| e.pte));
        if let Some((s, w)) = hit {
            self.touch(s, w);
        }
        (pte, other)
    }

    /// Insert or update a translation: it takes the way of its set that holds its key, else
    /// the set's lowest free way, else the way the set's tree leads to. Returns the set and
    /// way.
    pub fn insert(&mut self, pid: u16, vpn: u64, pte: Pte) -> (usize, usize) {
        let s = self.set_of(pid, vpn);
        let w = match self.slot_of(pid, vpn) {
            Some((_, w)) => w,
            None => (0..self.ways)
                .find(|&w| self.slots[s * self.ways + w].is_none())
                .unwrap_or_else(|| self.victim(s)),
        };
        self.slots[s * self.ways + w] = Some(Entry { pid, vpn, pte });
        self.touch(s, w);
        (s, w)
    }

    /// Drop a translation (TLB shootdown). Returns whether it was cached.
    pub fn invalidate(&mut self, pid: u16, vpn: u64) -> bool {
        match self.slot_of(pid, vpn) {
            Some((s, w)) => {
                self.slots[s * self.ways + w] = None;
                true
            }
            None => false,
        }
    }

    /// Number of ways of set `s` that hold a translation.
    pub fn set_len(&self, s: usize) -> usize {
        self.slots[s * self.ways..(s + 1) * self.ways]
            .iter()
            .filter(|e| e.is_some())
            .count()
    }

    /// Number of cached translations.
    pub fn len(&self) -> usize {
        self.slots.iter().filter(|e| e.is_some()).count()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Turn every node on way `w`'s path in set `s` away from it.
    pub fn touch(&mut self, s: usize, w: usize) {
        let mut n = self.ways + w;
        while n > 1 {
            // `n` is its parent's upper half when odd: the parent then points down.
            let parent = 1u64 << (n / 2);
            if n.is_multiple_of(2) {
                self.trees[s] |= parent;
            } else {
                self.trees[s] &= !parent;
            }
            n /= 2;
        }
    }

    /// The way set `s`'s tree leads to from the root.
    pub fn victim(&self, s: usize) -> usize {
        let mut n = 1;
        while n < self.ways {
            n = 2 * n + (self.trees[s] >> n & 1) as usize;
        }
        n - self.ways
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_way_not_touched_last() {
        let mut t = Tlb::new(1, 2);
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

    /// Keys of one set replace each other; the other sets keep theirs; an insert of a cached
    /// key rewrites its way; an invalidation drops only its own key.
    #[test]
    fn a_set_replaces_only_its_own_ways() {
        let mut t = Tlb::default();
        let p = Pte::allocated(1, 0, 3);
        // Pages 16 apart share a set.
        let same: Vec<u64> = (0..5).map(|k| 3 + 16 * k).collect();
        for &v in &same[..4] {
            t.insert(1, v, p);
        }
        t.insert(1, 4, p);
        assert_eq!(t.insert(1, same[1], p), t.slot_of(1, same[1]).unwrap());
        assert_eq!(t.len(), 5);
        assert!(t.lookup(1, same[0]).is_some());
        // The set's tree: way 0 touched last but one, way 1 last; the victim is in the upper pair.
        let victim = t.victim(t.set_of(1, 3));
        assert!(victim >= 2, "victim way {victim}");
        t.insert(1, same[4], p);
        assert_eq!(t.len(), 5, "replaced within the set");
        assert!(t.lookup(1, 4).is_some(), "another set's key stays");
        assert!(t.lookup(1, same[0]).is_some() && t.lookup(1, same[1]).is_some());
        assert!(t.invalidate(1, same[4]) && !t.invalidate(1, same[4]));
        assert!(t.lookup(1, same[0]).is_some(), "only its own key dropped");
    }

    /// Full, with the set's first two ways touched after the fill: the next insert goes to
    /// the other pair, the one after back to the first pair's way touched less recently (a
    /// tree, not a true LRU); a freed way is taken before any victim.
    #[test]
    fn a_full_set_spreads_its_victims() {
        let mut t = Tlb::default();
        let p = Pte::allocated(1, 0, 3);
        for v in 0..64 {
            t.insert(1, v, p);
        }
        assert_eq!(t.len(), 64, "64 consecutive pages fill every way");
        let s = t.set_of(1, 5);
        for v in [5, 21] {
            assert!(t.lookup(1, v).is_some());
        }
        let victims: Vec<usize> = [69u64, 85]
            .iter()
            .map(|&v| {
                let w = t.victim(s);
                t.insert(1, v, p);
                w
            })
            .collect();
        assert_eq!(victims, [2, 0]);
        assert!(t.lookup(1, 5).is_none() && t.lookup(1, 37).is_none());
        assert!(t.lookup(1, 21).is_some() && t.lookup(1, 69).is_some());
        assert!(t.invalidate(1, 21));
        t.insert(1, 101, p);
        assert_eq!(t.slot_of(1, 101), Some((s, 1)), "the freed way");
        assert!(t.lookup(1, 85).is_some() && t.lookup(1, 53).is_some());
        assert_eq!(t.len(), 64);
    }
}
