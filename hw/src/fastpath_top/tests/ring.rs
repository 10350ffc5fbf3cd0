//! The idempotence table: replayed unlocks, rows per member and RING_OWNER.

use super::*;

/// Unlock is recorded in the idempotence ring: its retry gets the recorded old word and
/// does not release a lock another member took meanwhile. Members of one RAS are told
/// apart by their client id, also when their request ids collide.
#[test]
fn unlock_is_replayed_from_the_ring() {
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    let pa = 5 * PS + 0x100;
    let second = client_of(pid) + 0x200;
    e.own_row(second, pid);
    let other = |h: Header| Header {
        client: second,
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

/// The idempotence table's rows end to end: a member that never acknowledges fills its own
/// row and is then refused (QUOTA_EXCEEDED, nothing executes) while another RAS's member
/// executes at once; under the first member's client id another RAS is denied; the slow
/// path's RING_OWNER takes the row back (the member's requests denied) and hands it on
/// emptied (nothing replayed to the next holder).
#[test]
fn rows_are_per_member_and_emptied_when_handed_on() {
    use clio_proto::consts::{ring_way, RING_WAYS};
    let (pid, other) = (3, 4);
    let mut e = env_with_page(&[pid, other]);
    let pa = 5 * PS + 0x100;
    let faa = |pid: u16, id: u32, client: u16| Header {
        arg0: 1,
        client,
        ..req(Opcode::FetchAdd, pid, id, WORD)
    };
    // Ids 0x100.. each take their own entry (`ring_way`).
    let ids: Vec<u32> = (0x100..0x100 + RING_WAYS as u32).collect();
    for &id in &ids {
        let out = e.request(&faa(pid, id, client_of(pid)).to_packet(&[])).0;
        assert_eq!(out[0][field::STATUS], Status::Ok as u8);
    }
    assert_eq!(word(&e, pa), RING_WAYS as u64);
    let next = faa(pid, 0x100 + RING_WAYS as u32, client_of(pid));
    assert_eq!(ring_way(next.req_id), ring_way(ids[1]));
    let out = e.request(&next.to_packet(&[])).0;
    assert_eq!(out[0][field::STATUS], Status::QuotaExceeded as u8);
    assert_eq!(word(&e, pa), RING_WAYS as u64, "nothing executed");
    // Another RAS's member: its own row, executed at once (its own page, frame 6).
    let theirs = faa(other, ids[0], client_of(other));
    let out = e.request(&theirs.to_packet(&[])).0;
    assert_eq!(out[0][field::STATUS], Status::Ok as u8);
    // Under the first member's client id: denied, not answered from its row.
    let stranger = faa(other, ids[0], client_of(pid));
    assert_eq!(
        e.request(&stranger.to_packet(&[])).0,
        vec![resp(&stranger, Status::Denied, &[])]
    );
    // The member's retry of a recorded request is still answered from its row.
    let again = faa(pid, ids[3], client_of(pid));
    assert_eq!(
        e.request(&again.to_packet(&[])).0[0][field::ARG0.start..field::ARG0.end],
        3u64.to_be_bytes()
    );
    // RING_OWNER to nobody: the member left; its requests are denied.
    e.own_row(client_of(pid), 0);
    assert_eq!(
        e.request(&again.to_packet(&[])).0,
        vec![resp(&again, Status::Denied, &[])]
    );
    // Handed to the RAS again (a new member): emptied, the same key executes.
    e.own_row(client_of(pid), pid);
    let before = word(&e, pa);
    assert_eq!(
        e.request(&again.to_packet(&[])).0,
        vec![Header {
            arg0: before,
            ..again.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    assert_eq!(word(&e, pa), before + 1, "executed, not replayed");
}
