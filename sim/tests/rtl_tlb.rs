//! Cosimulation: the verilated RTL TLB against the model's TLB, op by op, under random
//! lookups, inserts and invalidations over more keys than entries (LRU thrash).
#![cfg(feature = "rtl")]

use clio_proto::pte::Pte;
use clio_sim::model::tlb::Tlb;
use clio_sim::rtl::ports::tlb::*;
use clio_sim::rtl::{Rtl, TLB};
use rand::{Rng, SeedableRng};

#[test]
fn rtl_tlb_matches_the_model() {
    let mut rtl = Rtl::new(&TLB, None);
    rtl.set(RESET, 1);
    rtl.tick();
    rtl.tick();
    rtl.set(RESET, 0);

    let mut model = Tlb::default();
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let (mut hits, mut misses) = (0, 0);
    for _ in 0..20_000 {
        let pid = rng.gen_range(1..3u16);
        let vpn = rng.gen_range(0..60u64);
        if rng.gen_ratio(1, 20) {
            // An invalidation: the slow path's port.
            rtl.set(SLOW_VALID, 1);
            rtl.set(SLOW_INVAL, 1);
            rtl.set(SLOW_PID, pid as u128);
            rtl.set(SLOW_VPN, vpn as u128);
            rtl.tick();
            rtl.set(SLOW_VALID, 0);
            // The update is written in its second cycle; lookups see it from the next.
            rtl.tick();
            model.invalidate(pid, vpn);
            continue;
        }
        // The lookup on the translate stage's source (the miss path a walk follows).
        rtl.set(XLATE_VALID, 1);
        rtl.set(XLATE_PID, pid as u128);
        rtl.set(XLATE_VPN, vpn as u128);
        rtl.tick();
        rtl.set(XLATE_VALID, 0);
        rtl.tick();
        assert_eq!(rtl.get(RES_VALID), 1);
        let want = model.lookup(pid, vpn);
        assert_eq!(
            rtl.get(RES_HIT) == 1,
            want.is_some(),
            "hit/miss of ({pid}, {vpn}) after {} ops",
            hits + misses
        );
        match want {
            Some(pte) => {
                hits += 1;
                assert_eq!(rtl.get(RES_PFN) as u64, pte.pfn);
                assert_eq!(rtl.get(RES_PERMS) as u8, pte.perms);
            }
            None => {
                misses += 1;
                // The walk's result goes into both TLBs.
                let pte = Pte {
                    used: true,
                    valid: true,
                    perms: rng.gen_range(1..4),
                    pid,
                    vpn,
                    pfn: rng.gen_range(0..1 << 40),
                };
                // The walk's insert: the page-fault unit's port, with the lookup's generation.
                rtl.set(WALK_VALID, 1);
                rtl.set(WALK_PID, pid as u128);
                rtl.set(WALK_VPN, vpn as u128);
                rtl.set(WALK_PFN, pte.pfn as u128);
                rtl.set(WALK_PERMS, pte.perms as u128);
                rtl.set(WALK_GEN, rtl.get(RES_GEN));
                rtl.tick();
                rtl.set(WALK_VALID, 0);
                rtl.tick();
                model.insert(pid, vpn, pte);
            }
        }
    }
    assert!(
        hits > 1000 && misses > 1000,
        "the stream exercises both ({hits} hits, {misses} misses)"
    );
    eprintln!("{} cycles, {hits} hits, {misses} misses", rtl.cycles);
}
