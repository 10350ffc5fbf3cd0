//! The TLB against the golden model's (`clio_model::tlb::Tlb`: the same sets, ways and
//! replacement): random streams, the trees' victims, allocated-page entries, lookups racing
//! updates, back-to-back updates.

use super::*;
use crate::bench::Bench;
use clio_model::tlb::Tlb as Model;
use clio_proto::pte::Pte;

/// The model's entry for a translation: frame and permissions, as the RTL answers them.
fn pte(pid: u16, vpn: u64, pfn: u64, perms: u8) -> Pte {
    Pte {
        used: true,
        valid: true,
        perms,
        pid,
        vpn,
        pfn,
    }
}

/// Look `(pid, vpn)` up alone (no update in its two cycles): hit, frame, permissions, generation.
fn look(b: &mut Bench<Tlb>, pid: u16, vpn: u64) -> (bool, u64, u64, u16) {
    set_lookup(b, true, pid, vpn);
    b.tick();
    set_lookup(b, false, 0, 0);
    b.tick();
    b.settle();
    assert!(b.uut.res_valid.val());
    let r = (
        b.uut.res.hit.val(),
        b.uut.res.pfn.val().to_u64(),
        b.uut.res.perms.val().to_u64(),
        b.uut.res.gen.val().to_u16(),
    );
    b.tick();
    r
}

/// The RTL's answer for `(pid, vpn)` against the model's (which the lookup touches, as the
/// RTL's does).
fn check(b: &mut Bench<Tlb>, m: &mut Model, gen: u16, pid: u16, vpn: u64, what: &str) -> bool {
    let (hit, pfn, perms, g) = look(b, pid, vpn);
    let want = m.lookup(pid, vpn);
    assert_eq!(hit, want.is_some(), "{what}: pid {pid} vpn {vpn}");
    assert_eq!(g, gen, "{what}: generation");
    if let Some(p) = want {
        assert_eq!(
            (pfn, perms),
            (p.pfn, p.perms as u64),
            "{what}: pid {pid} vpn {vpn}"
        );
    }
    hit
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

/// Random lookups, inserts and invalidations (with occasional stale-generation inserts) on a
/// key space that overflows its sets (pages 16 apart share a set), so the trees decide; every
/// result is compared with the model. Updates come back to back; lookups are issued in quiet
/// cycles (no update in the same or the next cycle; the update of the cycle before is
/// visible) so the model's linearisation is unambiguous; the racing cases have their own
/// tests below.
#[test]
fn matches_model_with_tree_replacement() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    let mut m = Model::default();
    let mut gen = 0u16;
    let mut rng = crate::tb::Rng(0x2545_F491_4F6C_DD1D);
    let (mut hits, mut misses, mut evictions) = (0, 0, 0u32);
    for _ in 0..1500 {
        let r = rng.next();
        let pid = (r % 3) as u16 + 1;
        let vpn = (r >> 8) % 12 + 16 * ((r >> 16) % 7);
        match r >> 60 {
            0..=7 => {
                // insert, sometimes with a stale generation
                let stale = r >> 59 & 1 == 1 && gen > 0;
                let g = if stale { gen.wrapping_sub(1) } else { gen };
                let pfn = (r >> 20) & 0xFF_FFFF;
                let perms = (r >> 50) as u8 & 3;
                set_update(&mut b, true, false, pid, vpn, pfn, perms, g);
                b.tick();
                set_update(&mut b, false, false, 0, 0, 0, 0, 0);
                if !stale {
                    let s = m.set_of(pid, vpn);
                    let full = set_full(&m, s);
                    evictions += (full && m.slot_of(pid, vpn).is_none()) as u32;
                    m.insert(pid, vpn, pte(pid, vpn, pfn, perms));
                }
            }
            8..=9 => {
                set_update(&mut b, true, true, pid, vpn, 0, 0, 0);
                b.tick();
                set_update(&mut b, false, false, 0, 0, 0, 0, 0);
                m.invalidate(pid, vpn);
                gen = gen.wrapping_add(1);
            }
            _ => {
                if check(&mut b, &mut m, gen, pid, vpn, "random") {
                    hits += 1;
                } else {
                    misses += 1;
                }
            }
        }
        assert_eq!(b.uut.gen.val().to_u16(), gen);
    }
    assert!(hits > 20 && misses > 20, "hits {hits} misses {misses}");
    assert!(evictions > 20, "{evictions} inserts evicted a way");
}

/// Whether every way of set `s` holds a translation (the model's view).
fn set_full(m: &Model, s: usize) -> bool {
    m.set_len(s) == WAYS
}

/// Fill all 64 entries (64 consecutive pages: four to a set), touch some, insert more pages:
/// each insert takes the way its set's tree leads to (the model's), never the one touched
/// last, and every other set keeps its pages.
#[test]
fn evicts_where_the_tree_leads() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    let mut m = Model::default();
    for v in 0..64u64 {
        set_update(&mut b, true, false, 9, v, 1000 + v, 3, 0);
        m.insert(9, v, pte(9, v, 1000 + v, 3));
        b.tick();
    }
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    assert!((0..16).all(|s| set_full(&m, s)));
    // Touch pages 16..24 and 40..44, lookups back to back.
    for v in (16..24u64).chain(40..44) {
        set_lookup(&mut b, true, 9, v);
        assert!(m.lookup(9, v).is_some());
        b.tick();
    }
    set_lookup(&mut b, false, 0, 0);
    b.tick();
    b.tick();
    // Two rounds of 16 new pages, one per set each round.
    for v in 100..132u64 {
        let s = m.set_of(9, v);
        let victim = m.victim(s);
        let (_, w) = m.insert(9, v, pte(9, v, v, 1));
        assert_eq!(w, victim);
        set_update(&mut b, true, false, 9, v, v, 1, 0);
        b.tick();
    }
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    let mut kept = 0;
    for v in (0..64u64).chain(100..132) {
        kept += check(&mut b, &mut m, 0, 9, v, "after the evictions") as u32;
    }
    assert_eq!(kept, 64);
    for v in 16..24u64 {
        assert!(
            m.slot_of(9, v).is_some(),
            "page {v}, touched after the fill, was kept"
        );
    }
}

/// A hit's touch is applied the cycle after its compare; an insert choosing its victim in
/// that cycle takes it into account in the hit's set only. A full table; page 9 (set 0, way 0)
/// is looked up, so set 0's victim is in its upper pair (way 2, page 41); then page 38 (set
/// 15, way 2) hits in the cycle before page 73's insert into set 0 picks its victim: still way
/// 2 (a pending touch read from the wrong set would turn it to the lower pair, page 25).
#[test]
fn a_pending_touch_counts_in_its_own_set_only() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    let mut m = Model::default();
    for v in 0..64u64 {
        set_update(&mut b, true, false, 9, v, v, 3, 0);
        m.insert(9, v, pte(9, v, v, 3));
        b.tick();
    }
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    assert!(check(&mut b, &mut m, 0, 9, 9, "page 9"));
    assert_eq!((m.set_of(9, 73), m.slot_of(9, 41)), (0, Some((0, 2))));
    assert_eq!(m.slot_of(9, 38), Some((15, 2)));
    set_lookup(&mut b, true, 9, 38);
    b.tick();
    set_lookup(&mut b, false, 0, 0);
    set_update(&mut b, true, false, 9, 73, 73, 3, 0);
    b.tick();
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    b.tick();
    assert!(m.lookup(9, 38).is_some());
    m.insert(9, 73, pte(9, 73, 73, 3));
    for v in [9u64, 25, 41, 57, 73, 38] {
        check(&mut b, &mut m, 0, 9, v, "after the insert");
    }
    assert!(m.slot_of(9, 41).is_none() && m.slot_of(9, 25).is_some());
}

/// Lookups and inserts interleaved every cycle on 80 keys (five to a set): each insert
/// enters the cycle after a lookup, so it picks its victim while that lookup's touch is
/// pending, in the same set or another; every answer matches the model's (lookup, insert,
/// lookup, ... in that order).
#[test]
fn lookups_and_inserts_interleaved_match_model() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    let mut m = Model::default();
    let mut rng = crate::tb::Rng(0x0DDB_A11C_0FFE_E123);
    let (mut same_set, mut hits) = (0, 0);
    set_lookup(&mut b, true, 5, 0);
    let mut looked = 0u64;
    for _ in 0..3000 {
        b.tick();
        let r = rng.next();
        let ins = r % 80;
        let pfn = (r >> 8) & 0xFFFF;
        set_lookup(&mut b, false, 0, 0);
        set_update(&mut b, true, false, 5, ins, pfn, 3, 0);
        b.tick();
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        b.settle();
        let want = m.lookup(5, looked);
        assert_eq!(b.uut.res.hit.val(), want.is_some(), "page {looked}");
        if let Some(p) = want {
            hits += 1;
            assert_eq!(b.uut.res.pfn.val().to_u64(), p.pfn, "page {looked}");
        }
        same_set += (m.set_of(5, ins) == m.set_of(5, looked)) as u32;
        m.insert(5, ins, pte(5, ins, pfn, 3));
        looked = (r >> 32) % 80;
        set_lookup(&mut b, true, 5, looked);
    }
    assert!(
        same_set > 100 && hits > 1000,
        "{same_set} in one set, {hits} hits"
    );
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
/// entry sees the TLB as it is at the start of its second cycle; an insert carrying a
/// pre-invalidation generation is dropped. An update takes effect in its write stage, the
/// cycle after it enters.
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
    // A lookup in its write stage misses.
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
    assert!(!look(&mut b, 1, 5).0);
    // Fill the TLB; the victim of page 999's set is looked up in the cycle page 999's insert
    // rewrites its way (the insert's write stage, the lookup's first cycle): the lookup's
    // second cycle reads the keys after the write, so it misses.
    reset(&mut b);
    let mut m = Model::default();
    for v in 200..264u64 {
        set_update(&mut b, true, false, 2, v, v, 3, 0);
        m.insert(2, v, pte(2, v, v, 3));
        b.tick();
    }
    let in_victim = |m: &Model, v: u64| {
        let s = m.set_of(2, v);
        let w = m.victim(s);
        (200..264u64)
            .find(|&x| m.slot_of(2, x) == Some((s, w)))
            .expect("a full set")
    };
    let old = in_victim(&m, 999);
    set_update(&mut b, true, false, 2, 999, 5, 3, 0);
    m.insert(2, 999, pte(2, 999, 5, 3));
    b.tick();
    set_lookup(&mut b, true, 2, old);
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    set_lookup(&mut b, false, 0, 0);
    b.tick();
    b.settle();
    assert!(
        b.uut.res_valid.val() && !b.uut.res.hit.val(),
        "stale entry returned"
    );
    b.tick();
    // Rewritten in the lookup's second cycle: it still sees the old, matching entry and its
    // frame (the translation RAM reads the word before the write).
    let old = in_victim(&m, 998);
    set_lookup(&mut b, true, 2, old);
    set_update(&mut b, true, false, 2, 998, 6, 3, 0);
    b.tick();
    set_lookup(&mut b, false, 0, 0);
    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
    b.tick();
    b.settle();
    assert!(b.uut.res.hit.val());
    assert_eq!(b.uut.res.pfn.val().to_u64(), old);
    b.tick();
    assert!(!look(&mut b, 2, old).0, "evicted by page 998");
    assert_eq!(look(&mut b, 2, 998).1, 6);
    // An insert is seen by a lookup in its write stage, a new key and a rewrite of a present
    // one alike.
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
/// presence and frame match the model, and no key is held twice (two ways on one key would
/// OR their indices and read another way's frame).
#[test]
fn back_to_back_updates_match_model() {
    let mut b = Bench::new(Tlb::default());
    reset(&mut b);
    let mut m = Model::default();
    let mut gen = 0u16;
    let mut rng = crate::tb::Rng(0x9E37_79B9_7F4A_7C15);
    let mut rounds_with_eviction = 0;
    for round in 0..40 {
        // Overflow the sets in some rounds so that evictions race too: 6 pages of one set,
        // or 80 pages (five to a set).
        let crowded = round % 4 == 3;
        let burst = if crowded { 120 } else { 24 };
        let page = |r: u64| if crowded { r % 80 } else { 7 + 16 * (r % 6) };
        for _ in 0..burst {
            let r = rng.next();
            let vpn = page(r);
            if r >> 61 == 0 {
                set_update(&mut b, true, true, 3, vpn, 0, 0, 0);
                m.invalidate(3, vpn);
                gen = gen.wrapping_add(1);
            } else {
                let stale = r >> 58 & 7 == 0 && gen > 0;
                let g = if stale { gen - 1 } else { gen };
                // `gen` must already count an invalidation in the write stage.
                assert_eq!(b.uut.gen.val().to_u16(), gen);
                let pfn = (r >> 16) & 0xFFFF;
                set_update(&mut b, true, false, 3, vpn, pfn, 3, g);
                if !stale {
                    m.insert(3, vpn, pte(3, vpn, pfn, 3));
                }
            }
            b.tick();
        }
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        b.tick();
        rounds_with_eviction += crowded as u32;
        let mut hits = 0;
        let pages: Vec<u64> = if crowded {
            (0..80).collect()
        } else {
            (0..6).map(|k| 7 + 16 * k).collect()
        };
        for vpn in pages {
            hits += check(&mut b, &mut m, gen, 3, vpn, &format!("round {round}")) as usize;
        }
        assert!(hits <= ENTRIES);
    }
    assert!(rounds_with_eviction >= 10);
}
