//! Cosimulation: the verilated RTL TLB against the model's TLB, op by op, under random
//! lookups, inserts and invalidations over more keys than entries (LRU thrash).
#![cfg(feature = "rtl")]

use clio_proto::pte::Pte;
use clio_sim::model::tlb::Tlb;
use clio_sim::rtl::{Rtl, TLB};
use rand::{Rng, SeedableRng};

#[test]
fn rtl_tlb_matches_the_model() {
    let mut rtl = Rtl::new(&TLB, None);
    let p = |n: &str| rtl.port(n);
    let (reset, lk_valid, lk_pid, lk_vpn) = (p("reset"), p("lk_valid"), p("lk_pid"), p("lk_vpn"));
    let (res_valid, res_hit, res_pfn, res_perms, res_gen) = (
        p("res_valid"),
        p("res_hit"),
        p("res_pfn"),
        p("res_perms"),
        p("res_gen"),
    );
    let (up_valid, up_inval, up_pid, up_vpn, up_pfn, up_perms, up_gen) = (
        p("up_valid"),
        p("up_inval"),
        p("up_pid"),
        p("up_vpn"),
        p("up_pfn"),
        p("up_perms"),
        p("up_gen"),
    );
    rtl.set(reset, 1);
    rtl.tick();
    rtl.tick();
    rtl.set(reset, 0);

    let mut model = Tlb::default();
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    let (mut hits, mut misses) = (0, 0);
    for _ in 0..20_000 {
        let pid = rng.gen_range(1..3u16);
        let vpn = rng.gen_range(0..60u64);
        if rng.gen_ratio(1, 20) {
            rtl.set(up_valid, 1);
            rtl.set(up_inval, 1);
            rtl.set(up_pid, pid as u128);
            rtl.set(up_vpn, vpn as u128);
            rtl.tick();
            rtl.set(up_valid, 0);
            model.invalidate(pid, vpn);
            continue;
        }
        rtl.set(lk_valid, 1);
        rtl.set(lk_pid, pid as u128);
        rtl.set(lk_vpn, vpn as u128);
        rtl.tick();
        rtl.set(lk_valid, 0);
        rtl.tick();
        assert_eq!(rtl.get(res_valid), 1);
        let want = model.lookup(pid, vpn);
        assert_eq!(
            rtl.get(res_hit) == 1,
            want.is_some(),
            "hit/miss of ({pid}, {vpn}) after {} ops",
            hits + misses
        );
        match want {
            Some(pte) => {
                hits += 1;
                assert_eq!(rtl.get(res_pfn) as u64, pte.pfn);
                assert_eq!(rtl.get(res_perms) as u8, pte.perms);
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
                rtl.set(up_valid, 1);
                rtl.set(up_inval, 0);
                rtl.set(up_pid, pid as u128);
                rtl.set(up_vpn, vpn as u128);
                rtl.set(up_pfn, pte.pfn as u128);
                rtl.set(up_perms, pte.perms as u128);
                rtl.set(up_gen, rtl.get(res_gen));
                rtl.tick();
                rtl.set(up_valid, 0);
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
