//! The idempotence ring: replayed unlocks, the skip policy of a full ring and RING_RELEASE.

use super::*;

/// Unlock is recorded in the idempotence ring: its retry gets the recorded old word and
/// does not release a lock another member took meanwhile. Members of one RAS are told
/// apart by their client id, also when their request ids collide.
#[test]
fn unlock_is_replayed_from_the_ring() {
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    let pa = 5 * PS + 0x100;
    let other = |h: Header| Header {
        client: CLIENT + 1,
        ..h
    };
    let ok = |h: &Header, old: u64| {
        vec![Header {
            arg0: old,
            ..h.response_to(Status::Ok)
        }
        .to_packet(&[])]
    };
    let tas = req(Opcode::TestAndSet, pid, 1, WORD);
    assert_eq!(e.request(&tas.to_packet(&[])).0, ok(&tas, 0));
    let unlock = req(Opcode::Unlock, pid, 2, WORD);
    assert_eq!(e.request(&unlock.to_packet(&[])).0, ok(&unlock, 1));
    assert_eq!(word(&e, pa), 0);
    // The other member takes the lock, with the same request id as the unlock.
    let tas2 = other(req(Opcode::TestAndSet, pid, 2, WORD));
    assert_eq!(e.request(&tas2.to_packet(&[])).0, ok(&tas2, 0));
    assert_eq!(word(&e, pa), 1);
    // The unlock's retry is replayed: same answer, the lock stays taken.
    assert_eq!(e.request(&unlock.to_packet(&[])).0, ok(&unlock, 1));
    assert_eq!(
        word(&e, pa),
        1,
        "a retried unlock must not release the lock again"
    );
    // The other member's retry is its own entry.
    assert_eq!(e.request(&tas2.to_packet(&[])).0, ok(&tas2, 0));
}

/// The ring's skip policy and RING_RELEASE end to end: a member that never acknowledges
/// fills the ring; another member's request gets RETRY_LATER and moves the write pointer
/// one slot per attempt; the slow path's RING_RELEASE of the dead member frees every slot.
#[test]
fn ring_skip_policy_and_release() {
    use crate::sync_unit::RING_ENTRIES;
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    let pa = 5 * PS + 0x100;
    let dead = CLIENT + 7;
    for id in 0..RING_ENTRIES as u32 {
        let mut f = req(Opcode::FetchAdd, pid, id, WORD);
        f.client = dead;
        f.arg0 = 1;
        let out = e.request(&f.to_packet(&[])).0;
        assert_eq!(out[0][field::STATUS], Status::Ok as u8);
    }
    assert_eq!(word(&e, pa), RING_ENTRIES as u64);
    let wp = |e: &Env| e.b.uut.sync.wp.q.val().to_u64();
    assert_eq!(wp(&e), 0);
    let mut f = req(Opcode::FetchAdd, pid, 5, WORD);
    f.arg0 = 100;
    for attempt in 1..=3 {
        assert_eq!(
            e.request(&f.to_packet(&[])).0,
            vec![resp(&f, Status::RetryLater, &[])]
        );
        assert_eq!(wp(&e), attempt, "the write pointer moves past the slot");
    }
    assert_eq!(word(&e, pa), RING_ENTRIES as u64, "nothing executed");
    // The dead member's entry with the same request id is still answered to it alone.
    let mut d5 = req(Opcode::FetchAdd, pid, 5, WORD);
    d5.client = dead;
    d5.arg0 = 1;
    assert_eq!(
        e.request(&d5.to_packet(&[])).0,
        vec![Header {
            arg0: 5,
            ..d5.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    // RING_RELEASE of another member frees nothing; of the dead member, everything.
    e.sp_tx.push_back(
        Descriptor::RingRelease {
            pid,
            client: CLIENT,
        }
        .encode(),
    );
    e.run();
    assert_eq!(
        e.request(&f.to_packet(&[])).0,
        vec![resp(&f, Status::RetryLater, &[])]
    );
    e.sp_tx
        .push_back(Descriptor::RingRelease { pid, client: dead }.encode());
    e.run();
    let old = word(&e, pa);
    assert_eq!(
        e.request(&f.to_packet(&[])).0,
        vec![Header {
            arg0: old,
            ..f.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    assert_eq!(word(&e, pa), old + 100);
    // Released entries stay until overwritten: a late duplicate is still replayed.
    assert_eq!(
        e.request(&d5.to_packet(&[])).0[0][field::ARG0.start..field::ARG0.end],
        5u64.to_be_bytes()
    );
    // The RAS torn down (RING_RELEASE of RING_PURGE_ALL): its entries are forgotten, so the
    // same key (what a next owner of the pid could send) executes instead of being replayed.
    e.sp_tx.push_back(
        Descriptor::RingRelease {
            pid,
            client: clio_proto::ring::RING_PURGE_ALL,
        }
        .encode(),
    );
    e.run();
    let before = word(&e, pa);
    assert_eq!(
        e.request(&d5.to_packet(&[])).0,
        vec![Header {
            arg0: before,
            ..d5.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    assert_eq!(
        word(&e, pa),
        before + 1,
        "executed again, for the new owner"
    );
}
