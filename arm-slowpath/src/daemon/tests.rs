//! Unit tests of the slow path's operations.

use super::*;
use clio_proto::consts::BUCKET_SLOTS;

fn small() -> SlowPath {
    SlowPath::new(MemoryLayout::new(64 << 20, 12).unwrap())
}

#[test]
fn alloc_places_every_page_and_free_returns_everything() {
    let mut sp = small();
    let pid = sp.register(42).unwrap();
    assert_eq!(sp.register(42).unwrap(), pid, "same nonce, same pid");
    let o = sp
        .alloc(pid, 10 * 4096 + 1, PERM_READ | PERM_WRITE)
        .unwrap();
    assert_eq!(o.pages, 11);
    assert_eq!(o.ptes.len(), 11);
    assert_ne!(o.va, 0, "page 0 is never handed out");
    for (i, &(bucket, _slot, pte)) in o.ptes.iter().enumerate() {
        assert_eq!(pte.vpn, (o.va >> 12) + i as u64);
        assert_eq!(
            bucket,
            clio_proto::pt_hash::bucket_index(pid, pte.vpn, sp.layout().bucket_bits)
        );
    }
    sp.page_mapped(pid, o.va >> 12, 999);
    let f = sp.free(pid, o.va).unwrap();
    assert_eq!((f.pages, f.frames_returned, f.cleared.len()), (11, 1, 11));
    assert!(sp.shadow().is_empty());
    assert_eq!(sp.free(pid, o.va), Err(AllocError::NotAllocated(o.va)));
}

#[test]
fn refuses_bad_and_unknown() {
    let mut sp = small();
    assert_eq!(sp.alloc(9, 4096, 3), Err(AllocError::UnknownProcess(9)));
    let pid = sp.register(1).unwrap();
    assert_eq!(sp.alloc(pid, 0, 3), Err(AllocError::BadRequest));
    assert_eq!(sp.alloc(pid, 4096, 0), Err(AllocError::BadRequest));
    let too_much = (sp.layout().data_pages + 1) * 4096;
    assert_eq!(sp.alloc(pid, too_much, 3), Err(AllocError::OutOfMemory));
    assert_eq!(sp.stats().alloc_failures, 4);
}

#[test]
fn no_bucket_ever_overflows() {
    let mut sp = small();
    let pid = sp.register(1).unwrap();
    while sp.alloc(pid, 7 * 4096, PERM_READ).is_ok() {}
    for b in 0..sp.shadow().bucket_count() {
        assert!(sp.shadow().free_slots(b) <= BUCKET_SLOTS as u32);
    }
    assert!(sp.utilisation() > 0.9, "filled to {}", sp.utilisation());
}

fn drain(sp: &mut SlowPath) -> Vec<Descriptor> {
    sp.outbox.drain(..).collect()
}

#[test]
fn register_programs_the_key_and_the_last_member_out_tears_down() {
    let t0 = Instant::now();
    let mut sp = SlowPath::with_config(
        MemoryLayout::new(64 << 20, 12).unwrap(),
        SlowPathConfig {
            keys: KeySource::seeded(7),
            lease: Duration::from_secs(5),
            ..SlowPathConfig::default()
        },
    );
    // The route-cookie secret and the ring share go to the fast path before anything else.
    let secret = sp.route_secret.0;
    assert_eq!(
        drain(&mut sp),
        vec![
            Descriptor::RouteKey { secret },
            Descriptor::RingShare {
                share: clio_proto::quota::DEFAULT_RING_SHARE
            }
        ]
    );
    let (pid, key, c1) = sp.register_at(1, t0).unwrap();
    assert_eq!(
        drain(&mut sp),
        vec![
            Descriptor::KeyWrite { pid, key, epoch: 0 },
            Descriptor::RingOwner { pid, client: c1 }
        ],
        "the key, then the member's row"
    );
    let c2 = sp.join_at(pid, 2, t0).unwrap();
    assert_eq!(
        drain(&mut sp),
        vec![Descriptor::RingOwner { pid, client: c2 }]
    );
    // SetEpoch: forward only, the same epoch again changes nothing, 0 is never set again.
    assert_eq!(sp.set_epoch(pid, 3), Ok(3));
    assert_eq!(
        drain(&mut sp),
        vec![Descriptor::KeyWrite { pid, key, epoch: 3 }]
    );
    assert_eq!(sp.set_epoch(pid, 3), Ok(3));
    assert_eq!(sp.set_epoch(pid, 2), Err(AllocError::StaleEpoch(3)));
    assert_eq!(sp.set_epoch(pid, 0), Err(AllocError::StaleEpoch(3)));
    assert_eq!(sp.set_epoch(pid, 1 << 16), Err(AllocError::BadRequest));
    assert_eq!(
        sp.set_epoch(pid + 1, 4),
        Err(AllocError::UnknownProcess(pid + 1))
    );
    assert_eq!(drain(&mut sp), vec![], "nothing written");
    assert_eq!(sp.stats.epoch_raises, 1);
    let o = sp.alloc(pid, 3 * 4096, PERM_READ | PERM_WRITE).unwrap();
    let frame = sp.frames.alloc().unwrap();
    sp.page_mapped(pid, o.va >> 12, frame);
    let free_before = sp.free_frames();
    sp.unregister(pid, c1, false).unwrap();
    assert_eq!(
        drain(&mut sp),
        vec![Descriptor::RingOwner {
            pid: clio_proto::ring::RING_NO_OWNER,
            client: c1
        }],
        "one member left: the RAS stays"
    );
    sp.unregister(pid, c2, false).unwrap();
    let d = drain(&mut sp);
    assert_eq!(
        d[0],
        Descriptor::RingOwner {
            pid: clio_proto::ring::RING_NO_OWNER,
            client: c2
        }
    );
    assert_eq!(
        d[1],
        Descriptor::KeyWrite {
            pid,
            key: 0,
            epoch: 0
        },
        "key removed first"
    );
    assert_eq!(d.len(), 2 + 2 * 3, "then every page cleared and shot down");
    assert_eq!(
        sp.free_frames(),
        free_before + 1,
        "the mapped frame is back"
    );
    assert!(sp.shadow().is_empty() && sp.registry().is_empty());
    assert_eq!(sp.stats().teardowns, 1);
}

#[test]
fn refill_clears_every_frame_it_hands_out() {
    let layout = MemoryLayout::new(1 << 20, 12).unwrap();
    let mut sp = SlowPath::new(layout);
    let mut mem = vec![0xAAu8; 1 << 20];
    sp.refill(&mut mem);
    let pushed: Vec<u64> = drain(&mut sp)
        .into_iter()
        .filter_map(|d| match d {
            Descriptor::FreePage { pfn } => Some(pfn),
            _ => None,
        })
        .collect();
    assert_eq!(pushed.len(), FREE_PAGE_FIFO_DEPTH);
    for pfn in pushed {
        let pa = layout.phys_addr(pfn, 0) as usize;
        assert!(
            mem[pa..pa + 4096].iter().all(|b| *b == 0),
            "frame {pfn} cleared"
        );
    }
    assert_eq!(sp.stats().frames_cleared, FREE_PAGE_FIFO_DEPTH as u64);
    // Memory that refuses (out of range) gets nothing pushed.
    let mut sp = SlowPath::new(layout);
    drain(&mut sp); // ROUTE_KEY, RING_SHARE
    let mut tiny = vec![0u8; 16];
    sp.refill(&mut tiny);
    assert!(drain(&mut sp).is_empty());
    assert_eq!(sp.stats().clear_failures, 1);
}

/// The node's pool moved on (`reg::POOL_EPOCH`, written by whoever follows the pool's store):
/// the next round raises every fenced RAS that is behind to it, as its members' SetEpoch
/// would, and leaves unfenced ones (no pool client) and ones already ahead alone.
#[test]
fn the_pool_epoch_register_raises_every_fenced_ras_that_is_behind() {
    use clio_proto::ring::{reg, RingLayout};
    use std::sync::atomic::Ordering;
    let mut sp = small();
    let ring = crate::RingWindow::anonymous(RingLayout::default()).unwrap();
    let mut mem = vec![0u8; 64 << 20];
    let t0 = Instant::now();
    let (fenced, key, _) = sp.register_at(1, t0).unwrap();
    let (ahead, _, _) = sp.register_at(2, t0).unwrap();
    let (unfenced, _, _) = sp.register_at(3, t0).unwrap();
    sp.set_epoch(fenced, 3).unwrap();
    sp.set_epoch(ahead, 9).unwrap();
    sp.poll_at(&ring, &mut mem, t0);
    while ring.pop_tx().is_some() {}
    ring.reg(reg::POOL_EPOCH).store(5, Ordering::Release);
    sp.poll_at(&ring, &mut mem, t0);
    assert_eq!(sp.registry().epoch(fenced), Some(5));
    assert_eq!(sp.registry().epoch(ahead), Some(9), "never lowered");
    assert_eq!(sp.registry().epoch(unfenced), Some(0), "not in a pool");
    let mut written = Vec::new();
    while let Some(d) = ring.pop_tx() {
        written.push(d.unwrap());
    }
    assert_eq!(
        written,
        vec![Descriptor::KeyWrite {
            pid: fenced,
            key,
            epoch: 5
        }]
    );
    // The same value again is no news; the raise is logged like a SetEpoch.
    sp.poll_at(&ring, &mut mem, t0);
    assert!(ring.pop_tx().is_none());
    assert_eq!(sp.raise_fenced(4), 0, "older than every fenced RAS");
    assert_eq!(sp.stats().epoch_raises, 3);
}
