//! The TX descriptor's actions against a model, on random kinds (one flag, or none for an
//! unknown kind), decodes and free-list states, acting or not: every cycle the pulses, and the
//! cycle after an act the TLB update (or none).

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;

/// The TLB update the model expects: (inval, pid, vpn, and for an insert pfn, perms, alloc).
type Update = (bool, u64, u64, Option<(u64, u64, bool)>);

#[test]
fn each_kind_does_its_one_thing() {
    let mut r = Rng(0x5_1A7C);
    let mut b = Bench::new(SlowPathTx::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    let mut pending: Option<Update> = None;
    let mut seen = [0u32; 11];
    for cycle in 0..20_000 {
        let act = r.below(4) != 0;
        // Kind 0..7 as SlowPathDesc's flags (8 = ROUTE_KEY, 9 = RING_SHARE), 7 = unknown (no
        // flag).
        let kind = r.below(10);
        let (pid, vpn, fits) = (r.below(1 << 16), r.below(1 << 36), r.below(3) != 0);
        let (pte_ok, pte_inval, pte_alloc) = (r.below(3) != 0, r.below(2) == 0, r.below(2) == 0);
        let (ppid, pvpn, ppfn, pperms) = (
            r.below(1 << 16),
            r.below(1 << 36),
            r.below(1 << 40),
            r.below(4),
        );
        let fp_full = r.below(4) == 0;
        let u = &mut b.uut;
        let flags = [
            &mut u.desc.pte_write,
            &mut u.desc.tlb_invalidate,
            &mut u.desc.free_page,
            &mut u.desc.key_write,
            &mut u.desc.kv_config,
            &mut u.desc.ring_owner,
            &mut u.desc.reply,
        ];
        for (k, f) in flags.into_iter().enumerate() {
            f.next = kind == k as u64;
        }
        u.desc.route_key.next = kind == 8;
        u.desc.ring_share.next = kind == 9;
        let (key, epoch, secret1, share, pfn) = (
            r.next(),
            r.below(1 << 16),
            r.next(),
            r.below(256),
            r.below(1 << 40),
        );
        u.desc.key.next = key.to_bits();
        u.desc.epoch.next = epoch.to_bits();
        u.desc.secret1.next = secret1.to_bits();
        u.desc.share.next = share.to_bits();
        u.desc.pfn.next = pfn.to_bits();
        u.exec.act.next = act;
        u.desc.pid.next = pid.to_bits();
        u.desc.vpn.next = vpn.to_bits();
        u.desc.vpn_fits.next = fits;
        u.pte.ok.next = pte_ok;
        u.pte.inval.next = pte_inval;
        u.pte.pid.next = ppid.to_bits();
        u.pte.vpn.next = pvpn.to_bits();
        u.pte.pfn.next = ppfn.to_bits();
        u.pte.perms.next = pperms.to_bits();
        u.pte.alloc.next = pte_alloc;
        u.free.full.next = fp_full;
        b.settle();
        let u = &b.uut;
        let at = format!("cycle {cycle}: kind {kind} act {act}");
        // Last cycle's update.
        assert_eq!(u.up.valid.val(), pending.is_some(), "{at}: update");
        if let Some((inval, p, v, ins)) = pending {
            assert_eq!(u.up.inval.val(), inval, "{at}: inval");
            assert_eq!(
                (u.up.pid.val().to_u64(), u.up.vpn.val().to_u64()),
                (p, v),
                "{at}: page"
            );
            if let Some((pfn, perms, alloc)) = ins {
                assert_eq!(
                    (
                        u.up.pfn.val().to_u64(),
                        u.up.perms.val().to_u64(),
                        u.up.alloc.val()
                    ),
                    (pfn, perms, alloc),
                    "{at}: entry"
                );
            }
        }
        let does = |k: u64| act && kind == k;
        assert_eq!(u.exec.to_pte.val(), does(0) && pte_ok, "{at}: to_pte");
        assert_eq!(u.free.valid.val(), does(2) && !fp_full, "{at}: free_page");
        assert_eq!(u.keys.valid.val(), does(3), "{at}: key_write");
        assert_eq!(u.kv.load.val(), does(4), "{at}: kv_config");
        assert_eq!(u.ring.owner.val(), does(5), "{at}: ring_owner");
        assert_eq!(u.exec.reply.val(), does(6), "{at}: reply");
        assert_eq!(u.routes.valid.val(), does(8), "{at}: route_key");
        assert_eq!(u.ring.share_set.val(), does(9), "{at}: ring_share");
        // Each action carries its descriptor's fields.
        assert_eq!(u.free.pfn.val().to_u64(), pfn, "{at}: frame");
        assert_eq!(
            (
                u.keys.pid.val().to_u64(),
                u.keys.key.val().to_u64(),
                u.keys.epoch.val().to_u64()
            ),
            (pid, key, epoch),
            "{at}: key write"
        );
        assert_eq!(u.kv.pid.val().to_u64(), pid, "{at}: store's RAS");
        assert_eq!(u.ring.share.val().to_u64(), share, "{at}: share");
        assert_eq!(
            (u.routes.key0.val().to_u64(), u.routes.key1.val().to_u64()),
            (key, secret1),
            "{at}: route key"
        );
        pending = if does(0) && pte_ok {
            Some((pte_inval, ppid, pvpn, Some((ppfn, pperms, pte_alloc))))
        } else if does(1) && fits {
            Some((true, pid, vpn, None))
        } else {
            None
        };
        seen[if act { kind as usize } else { 10 }] += 1;
        b.tick();
    }
    assert!(seen.iter().all(|&n| n > 1000), "kinds seen: {seen:?}");
}
