//! The TLB against a plain-Rust model of the same replacement and consistency rules: random
//! streams, the tree's victims, allocated-page entries, lookups racing updates, back-to-back
//! updates.

use super::*;
use crate::bench::Bench;

/// A plain-Rust model of the same TLB (same replacement and consistency rules).
#[derive(Clone)]
struct Model {
    key: [u64; ENTRIES],
    data: [u64; ENTRIES],
    valid: u64,
    /// The replacement tree, bit `n` for node `n` as in the RTL.
    plru: u64,
    gen: u16,
}

impl Model {
    fn new() -> Model {
        Model {
            key: [0; ENTRIES],
            data: [0; ENTRIES],
            valid: 0,
            plru: 0,
            gen: 0,
        }
    }
    fn find(&self, key: u64) -> Option<usize> {
        (0..ENTRIES).find(|&i| self.valid >> i & 1 == 1 && self.key[i] == key)
    }
    /// The entry whose key has `key`'s update tag (`clio_proto::consts::tlb_tag`).
    fn find_tag(&self, key: u64) -> Option<usize> {
        (0..ENTRIES).find(|&i| self.valid >> i & 1 == 1 && tag(self.key[i]) == tag(key))
    }
    /// Every node on `t`'s path points away from it.
    fn touch(&mut self, t: usize) {
        for l in 0..6 {
            let node = (ENTRIES + t) >> (6 - l);
            if (t >> (5 - l)) & 1 == 1 {
                self.plru &= !(1 << node);
            } else {
                self.plru |= 1 << node;
            }
        }
    }
    /// The leaf the bits lead to from the root.
    fn victim(&self) -> usize {
        let mut n = 1;
        while n < ENTRIES {
            n = 2 * n + (self.plru >> n & 1) as usize;
        }
        n - ENTRIES
    }
    fn insert(&mut self, key: u64, data: u64) -> usize {
        let t = self.find_tag(key).unwrap_or_else(|| {
            (0..ENTRIES)
                .find(|&i| self.valid >> i & 1 == 0)
                .unwrap_or_else(|| self.victim())
        });
        self.key[t] = key;
        self.data[t] = data;
        self.valid |= 1 << t;
        self.touch(t);
        t
    }
    fn invalidate(&mut self, key: u64) {
        if let Some(i) = self.find_tag(key) {
            self.valid &= !(1 << i);
        }
        self.gen = self.gen.wrapping_add(1);
    }
}

fn key(pid: u16, vpn: u64) -> u64 {
    (pid as u64) << 36 | vpn
}

/// A key's update tag, as `clio_proto::consts::tlb_tag` of its pid and page.
fn tag(key: u64) -> u16 {
    clio_proto::consts::tlb_tag((key >> 36) as u16, key & ((1 << 36) - 1))
}

/// A lookup of `(pid, vpn)` on one of the three sources, picked from the key: the translate
/// stage's, Dispatch's or the look-ahead's. The other sources carry other keys, and the
/// look-ahead asks too (for another page) when a source above it looks up, so a lookup
/// answered for the wrong source's key fails the caller's checks.
fn set_lookup(b: &mut Bench<Tlb>, v: bool, pid: u16, vpn: u64) {
    let src = (pid as u64 + vpn) % 3;
    let ports = [&mut b.uut.xlate, &mut b.uut.dispatch, &mut b.uut.ahead];
    for (k, p) in ports.into_iter().enumerate() {
        let mine = k as u64 == src;
        p.valid.next = v && (mine || k == 2);
        p.pid.next = if mine { pid } else { pid ^ 0x5A5A }.to_bits();
        p.vpn.next = if mine { vpn } else { vpn ^ 0x123 }.to_bits();
    }
    b.settle();
    assert_eq!(
        b.uut.ahead_free.val(),
        !(v && src < 2),
        "the look-ahead has the port when no other source looks up"
    );
}

#[allow(clippy::too_many_arguments)] // one argument per update port of the TLB
fn set_update(
    b: &mut Bench<Tlb>,
    v: bool,
    inval: bool,
    pid: u16,
    vpn: u64,
    pfn: u64,
    perms: u8,
    gen: u16,
) {
    // An invalidation comes from the slow path; an insert from the page-fault unit, with the
    // generation of its lookup.
    set_change(b, v && inval, inval, false, pid, vpn, pfn, perms);
    b.uut.walk.valid.next = v && !inval;
    b.uut.walk.pid.next = pid.to_bits();
    b.uut.walk.vpn.next = vpn.to_bits();
    b.uut.walk.pfn.next = pfn.to_bits();
    b.uut.walk.perms.next = (perms as u64).to_bits();
    b.uut.walk.gen.next = gen.to_bits();
}

/// The slow path's update port (`Tlb::slow`): current at any generation.
#[allow(clippy::too_many_arguments)] // one argument per field of the port
fn set_change(
    b: &mut Bench<Tlb>,
    v: bool,
    inval: bool,
    alloc: bool,
    pid: u16,
    vpn: u64,
    pfn: u64,
    perms: u8,
) {
    b.uut.slow.valid.next = v;
    b.uut.slow.inval.next = inval;
    b.uut.slow.alloc.next = alloc;
    b.uut.slow.pid.next = pid.to_bits();
    b.uut.slow.vpn.next = vpn.to_bits();
    b.uut.slow.pfn.next = pfn.to_bits();
    b.uut.slow.perms.next = (perms as u64).to_bits();
}

fn reset(b: &mut Bench<Tlb>) {
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
}

/// Random lookups, inserts and invalidations (with occasional stale-generation inserts)
/// on a small key space so that the 64 entries overflow and the replacement decides; every result is
/// compared with the model. Updates come back to back; lookups are issued in quiet cycles
/// (no update in the same or the next cycle; the update of the cycle before is visible
/// through the write stage's forward) so the model's linearisation is unambiguous; the
/// racing cases have their own tests below.
#[test]
fn matches_model_with_tree_replacement() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    let mut m = Model::new();
    let mut rng = 0x2545_F491_4F6C_DD1Du64;
    let mut rnd = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let (mut hits, mut misses, mut shared) = (0, 0, 0u32);
    for _ in 0..1200 {
        let r = rnd();
        let pid = (r % 3) as u16 + 1;
        // One page in three at bits 10..12 too, where pids 1..3 sit in the update tag: keys
        // of different pids share tags and replace each other.
        let high = if (r >> 30).is_multiple_of(3) {
            (r >> 33) % 4
        } else {
            0
        };
        let vpn = (r >> 8) % 40 | high << 10;
        match r >> 60 {
            0..=7 => {
                // insert, sometimes with a stale generation
                let stale = r >> 59 & 1 == 1 && m.gen > 0;
                let gen = if stale { m.gen.wrapping_sub(1) } else { m.gen };
                let pfn = (r >> 20) & 0xFF_FFFF;
                let perms = (r >> 50) as u8 & 3;
                set_update(&mut b, true, false, pid, vpn, pfn, perms, gen);
                b.tick();
                set_update(&mut b, false, false, 0, 0, 0, 0, 0);
                if !stale {
                    let k = key(pid, vpn);
                    shared += m.find_tag(k).is_some_and(|t| m.key[t] != k) as u32;
                    m.insert(k, perms as u64);
                    let t = m.find(key(pid, vpn)).unwrap();
                    m.data[t] = (perms as u64) << 40 | pfn;
                }
            }
            8..=9 => {
                set_update(&mut b, true, true, pid, vpn, 0, 0, 0);
                b.tick();
                set_update(&mut b, false, false, 0, 0, 0, 0, 0);
                m.invalidate(key(pid, vpn));
            }
            _ => {
                set_lookup(&mut b, true, pid, vpn);
                b.tick();
                set_lookup(&mut b, false, 0, 0);
                b.tick();
                b.settle();
                assert!(b.uut.res_valid.val());
                let want = m.find(key(pid, vpn));
                assert_eq!(b.uut.res.hit.val(), want.is_some(), "pid {pid} vpn {vpn}");
                assert_eq!(b.uut.res.gen.val().to_u16(), m.gen);
                if let Some(t) = want {
                    hits += 1;
                    assert_eq!(b.uut.res.pfn.val().to_u64(), m.data[t] & ((1 << 40) - 1));
                    assert_eq!(b.uut.res.perms.val().to_u64(), m.data[t] >> 40);
                    m.touch(t);
                } else {
                    misses += 1;
                }
                b.tick();
            }
        }
        assert_eq!(b.uut.gen.val().to_u16(), m.gen);
    }
    assert!(hits > 20 && misses > 20, "hits {hits} misses {misses}");
    assert!(
        shared > 5,
        "{shared} inserts replaced another key's entry of their tag"
    );
}

/// Fill all 64 entries, touch some, insert more: each insert takes the entry the tree leads
/// to (the model's), never the one touched last, and eight inserts in a row land in eight
/// different eighths of the table (each insert turns every node on its path away from it).
#[test]
fn evicts_where_the_tree_leads() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    let mut m = Model::new();
    for v in 0..64u64 {
        set_update(&mut b, true, false, 9, v, 1000 + v, 3, 0);
        m.insert(key(9, v), 0);
        b.tick();
    }
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    // Touch vpn 0..8 (the oldest inserts), lookups back to back.
    for v in 0..8u64 {
        set_lookup(&mut b, true, 9, v);
        m.touch(m.find(key(9, v)).unwrap());
        b.tick();
    }
    set_lookup(&mut b, false, 0, 0);
    b.tick();
    b.tick();
    let mut evicted = vec![];
    for v in 100..108u64 {
        let victim = m.victim();
        assert_ne!(victim, 7, "the entry touched last");
        evicted.push(m.key[victim] & 0xFFFF_FFFF);
        m.insert(key(9, v), 0);
        set_update(&mut b, true, false, 9, v, v, 1, 0);
        b.tick();
    }
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    let mut eighths: Vec<u64> = evicted.iter().map(|v| v / 8).collect();
    eighths.sort();
    eighths.dedup();
    assert_eq!(eighths.len(), 8, "evicted {evicted:?}");
    let mut present = vec![];
    for v in (0..64u64).chain(100..108) {
        set_lookup(&mut b, true, 9, v);
        b.tick();
        set_lookup(&mut b, false, 0, 0);
        b.tick();
        b.settle();
        present.push((v, b.uut.res.hit.val()));
        b.tick();
    }
    for (v, hit) in present {
        assert_eq!(hit, !evicted.contains(&v), "vpn {v} (evicted {evicted:?})");
    }
}

/// An allocated-page entry comes back as such with its location; overwriting it with the
/// mapping (same key) clears the flag.
#[test]
fn alloc_entries_round_trip() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    let look = |b: &mut Bench<Tlb>, vpn: u64| {
        set_lookup(b, true, 4, vpn);
        b.tick();
        set_lookup(b, false, 0, 0);
        b.tick();
        b.settle();
        let r = (
            b.uut.res.hit.val(),
            b.uut.res.alloc.val(),
            b.uut.res.pfn.val().to_u64(),
        );
        b.tick();
        r
    };
    // The slow path's PTE_WRITE of an allocated page, then the walk's insert of the mapped one.
    set_change(&mut b, true, false, true, 4, 7, (5 << 4) | 3, 3);
    b.tick();
    set_change(&mut b, false, false, false, 0, 0, 0, 0);
    b.tick();
    assert_eq!(look(&mut b, 7), (true, true, (5 << 4) | 3));
    set_update(&mut b, true, false, 4, 7, 77, 3, 0);
    b.tick();
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    assert_eq!(look(&mut b, 7), (true, false, 77));
}

/// In-flight consistency: a lookup racing with an invalidation or with an overwrite of its
/// entry misses; an insert carrying a pre-invalidation generation is dropped. An update
/// takes effect in its write stage, the cycle after it enters.
#[test]
fn in_flight_lookups_stay_consistent() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    set_update(&mut b, true, false, 1, 5, 77, 3, 0);
    b.tick();
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    // A lookup in the cycle an invalidation enters is before it: a hit.
    set_lookup(&mut b, true, 1, 5);
    set_update(&mut b, true, true, 1, 5, 0, 0, 0);
    b.tick();
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    // A lookup in its write stage (the compare still sees the tag) misses.
    b.tick();
    set_lookup(&mut b, false, 0, 0);
    b.settle();
    assert!(b.uut.res_valid.val() && b.uut.res.hit.val());
    assert_eq!(b.uut.gen.val().to_u16(), 1);
    b.tick();
    b.settle();
    assert!(b.uut.res_valid.val() && !b.uut.res.hit.val());
    // A walk that started before the invalidation tries to reinstate the old PTE: dropped.
    set_update(&mut b, true, false, 1, 5, 77, 3, 0);
    b.tick();
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    set_lookup(&mut b, true, 1, 5);
    b.tick();
    set_lookup(&mut b, false, 0, 0);
    b.tick();
    b.settle();
    assert!(!b.uut.res.hit.val());
    // Fill the TLB; the LRU entry (vpn 200) is looked up in the cycle its slot is rewritten
    // with vpn 999 (the insert's write stage): the compare saw the old tag, the data read
    // would see the new frame, so the lookup must miss.
    reset(&mut b);
    for v in 200..264u64 {
        set_update(&mut b, true, false, 2, v, v, 3, 0);
        b.tick();
    }
    set_update(&mut b, true, false, 2, 999, 5, 3, 0);
    b.tick();
    set_lookup(&mut b, true, 2, 200);
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    set_lookup(&mut b, false, 0, 0);
    b.tick();
    b.settle();
    assert!(
        b.uut.res_valid.val() && !b.uut.res.hit.val(),
        "stale entry returned"
    );
    // Rewritten one cycle after the compare: the read still sees the old, matching entry.
    set_lookup(&mut b, true, 2, 201);
    set_update(&mut b, true, false, 2, 998, 6, 3, 0);
    b.tick();
    set_lookup(&mut b, false, 0, 0);
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    b.settle();
    assert!(b.uut.res.hit.val());
    assert_eq!(b.uut.res.pfn.val().to_u64(), 201);
    // An insert is seen by a lookup in its write stage (forwarded: the tags do not hold
    // it yet), a new key and a rewrite of a present one alike, and is touched by it.
    for (vpn, pfn) in [(5000u64, 41u64), (5000, 42), (202, 43)] {
        set_update(&mut b, true, false, 2, vpn, pfn, 3, 0);
        b.tick();
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        set_lookup(&mut b, true, 2, vpn);
        b.tick();
        set_lookup(&mut b, false, 0, 0);
        b.tick();
        b.settle();
        assert!(b.uut.res.hit.val(), "vpn {vpn} in the write stage");
        assert_eq!(b.uut.res.pfn.val().to_u64(), pfn);
        b.tick();
    }
}

/// Updates back to back, every cycle, on a key space small enough that an update often
/// meets the key of the one ahead of it (insert after insert, insert after invalidation and
/// the reverse, an eviction of the key the next update names): afterwards every key's
/// presence and frame match the model, and no key is held twice (two entries on one key
/// would OR their frames, and the count of hits would exceed the model's entries).
#[test]
fn back_to_back_updates_match_model() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    let mut m = Model::new();
    let mut rng = crate::tb::Rng(0x9E37_79B9_7F4A_7C15);
    let mut rnd = || rng.next();
    let mut rounds_with_eviction = 0;
    for round in 0..40 {
        // Fill beyond capacity in some rounds so that evictions race too.
        let keys = if round % 4 == 3 { 80 } else { 6 };
        let burst = if round % 4 == 3 { 120 } else { 24 };
        for _ in 0..burst {
            let r = rnd();
            let vpn = r % keys;
            if r >> 61 == 0 {
                set_update(&mut b, true, true, 3, vpn, 0, 0, 0);
                m.invalidate(key(3, vpn));
            } else {
                let stale = r >> 58 & 7 == 0 && m.gen > 0;
                let gen = if stale { m.gen - 1 } else { m.gen };
                // `gen` must already count an invalidation in the write stage.
                assert_eq!(b.uut.gen.val().to_u16(), m.gen);
                let pfn = (r >> 16) & 0xFFFF;
                set_update(&mut b, true, false, 3, vpn, pfn, 3, gen);
                if !stale {
                    let t = m.insert(key(3, vpn), 0);
                    m.data[t] = 3 << 40 | pfn;
                }
            }
            b.tick();
        }
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        b.tick();
        if keys > 64 {
            rounds_with_eviction += 1;
        }
        let mut hits = 0;
        for vpn in 0..keys {
            set_lookup(&mut b, true, 3, vpn);
            b.tick();
            set_lookup(&mut b, false, 0, 0);
            b.tick();
            b.settle();
            let want = m.find(key(3, vpn));
            assert_eq!(
                b.uut.res.hit.val(),
                want.is_some(),
                "round {round} vpn {vpn}"
            );
            if let Some(t) = want {
                hits += 1;
                assert_eq!(
                    b.uut.res.pfn.val().to_u64(),
                    m.data[t] & 0xFF_FFFF_FFFF,
                    "round {round} vpn {vpn}"
                );
                m.touch(t);
            }
            b.tick();
        }
        assert!(hits <= ENTRIES);
    }
    assert!(rounds_with_eviction >= 10);
}
