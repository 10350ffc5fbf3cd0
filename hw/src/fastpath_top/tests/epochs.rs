//! The key check's epoch fence (`docs/protocol.md` section 7, "Epochs"): a request that
//! presents its RAS's key with an epoch older than the RAS's is STALE and executes nothing; the
//! RAS's epoch and newer ones pass; a wrong key is DENIED whatever its epoch; an unfenced RAS
//! (epoch 0) lets every epoch in. The epochs come with the key through the ring (KEY_WRITE), as
//! the slow path installs them.

use super::*;

/// A write of `word` (8 bytes at `WORD`) and an 8-byte read there, at `epoch`, with the RAS's
/// key.
fn write_at(pid: u16, id: u32, epoch: u16, word: u64) -> (Header, Vec<u8>) {
    let (h, _) = write_req(pid, id, WORD, &word.to_le_bytes());
    let h = h.with_epoch(epoch);
    (h, h.to_packet(&word.to_le_bytes()))
}

fn read_at(pid: u16, id: u32, epoch: u16) -> (Header, Vec<u8>) {
    let (h, _) = read_req(pid, id, WORD, 8);
    let h = h.with_epoch(epoch);
    (h, h.to_packet(&[]))
}

/// Unfenced, fenced at E, raised to E + 2: at each step older epochs are STALE (writes, reads,
/// an atomic, a fence, a slow-path opcode), nothing executes for them (memory, DRAM traffic,
/// TLB, the idempotence ring and the slow path untouched), each counts in `stat_denied` like a
/// DENIED, and E and newer pass; a wrong key is DENIED at any epoch; Register needs no key.
#[test]
fn older_epochs_are_stale_and_execute_nothing() {
    const E: u16 = 7;
    let a = 3u16;
    let mut e = env_with_page(&[a]);
    e.sp_rx.clear();
    let pa = 5 * PS + 0x100;
    let mut id = 0u32;
    let mut next = || {
        id += 1;
        id
    };
    let mut refused = 0u32;
    // Unfenced: every epoch passes, 0 (outside a pool) included.
    for ep in [0u16, 1, E - 1, 0x8000, 0xFFFF] {
        let v = 0x1000 + ep as u64;
        let (h, f) = write_at(a, next(), ep, v);
        assert_eq!(
            e.request(&f).0,
            vec![resp(&h, Status::Ok, &[])],
            "unfenced, {ep}"
        );
        assert_eq!(word(&e, pa), v);
        let (h, f) = read_at(a, next(), ep);
        assert_eq!(
            e.request(&f).0,
            vec![resp(&h, Status::Ok, &v.to_le_bytes())],
            "unfenced read, {ep}"
        );
    }
    assert_eq!(e.b.uut.stat_denied.val().to_u32(), 0);

    // Fenced at E (the same key, the epoch written beside it).
    e.grant_epoch(a, key_of(a), E);
    let before = word(&e, pa);
    let traffic = e.dram_traffic();
    let tlb = |e: &Env| {
        (
            e.b.uut.stat_tlb_hits.val().to_u32(),
            e.b.uut.stat_tlb_misses.val().to_u32(),
        )
    };
    let tlb0 = tlb(&e);
    let mut refuse = |e: &mut Env, h: Header, payload: &[u8], s: Status, what: &str| {
        let (out, _) = e.request(&h.to_packet(payload));
        assert_eq!(out, vec![resp(&h, s, &[])], "{what}");
        assert!(out[0][field::KEY.start..HEADER_LEN].iter().all(|&x| x == 0));
        refused += 1;
        assert_eq!(
            e.b.uut.stat_denied.val().to_u32(),
            refused,
            "{what}: counted"
        );
    };
    let stale = [E - 1, 1, 0, E.wrapping_sub(0x7FFF)];
    for ep in stale {
        let (h, _) = write_at(a, next(), ep, 0xBAD);
        refuse(&mut e, h, &0xBADu64.to_le_bytes(), Status::Stale, "write");
        let (h, _) = read_at(a, next(), ep);
        refuse(&mut e, h, &[], Status::Stale, "read");
    }
    let mut faa = req(Opcode::FetchAdd, a, next(), WORD).with_epoch(E - 1);
    faa.arg0 = 1;
    refuse(&mut e, faa, &[], Status::Stale, "FAA");
    let fence = req(Opcode::Fence, a, next(), 0).with_epoch(E - 1);
    refuse(&mut e, fence, &[], Status::Stale, "fence");
    for op in [Opcode::Alloc, Opcode::SetEpoch, Opcode::Heartbeat] {
        let h = req(op, a, next(), 0).with_epoch(E - 1);
        refuse(&mut e, h, &[], Status::Stale, "slow path");
    }
    // A wrong key is DENIED first, whatever its epoch.
    for ep in [E - 1, E, E + 1, 0] {
        let (h, _) = write_at(a, next(), ep, 0xBAD);
        let h = Header {
            key: key_of(a) ^ 1,
            ..h
        };
        refuse(
            &mut e,
            h,
            &0xBADu64.to_le_bytes(),
            Status::Denied,
            "wrong key",
        );
    }
    // Nothing executed.
    assert_eq!(
        word(&e, pa),
        before,
        "a stale write leaves memory unchanged"
    );
    assert_eq!(
        e.dram_traffic(),
        traffic,
        "no DRAM access for a stale request"
    );
    assert_eq!(tlb(&e), tlb0, "no translation for a stale request");
    assert!(e.sp_rx.is_empty(), "no slow-path descriptor: {:?}", e.sp_rx);
    // The ring saw nothing: the same FAA (same request id) at the RAS's epoch executes.
    let faa = faa.with_epoch(E);
    let (out, _) = e.request(&faa.to_packet(&[]));
    assert_eq!(
        out,
        vec![Header {
            arg0: before,
            ..faa.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    assert_eq!(word(&e, pa), before + 1);
    // E and newer pass (the RAS's epoch stays E: a newer client does not raise it).
    for ep in [E, E + 1, E + 0x7FFF, E] {
        let v = 0x2000 + ep as u64;
        let (h, f) = write_at(a, next(), ep, v);
        assert_eq!(
            e.request(&f).0,
            vec![resp(&h, Status::Ok, &[])],
            "epoch {ep}"
        );
        assert_eq!(word(&e, pa), v);
        let (h, f) = read_at(a, next(), ep);
        assert_eq!(
            e.request(&f).0,
            vec![resp(&h, Status::Ok, &v.to_le_bytes())],
            "read at {ep}"
        );
    }
    // Register needs no key, so no epoch either.
    let reg = Header {
        arg0: 42,
        ..Header::request(Opcode::Register, 0, next(), 0)
    };
    assert!(e.request(&reg.to_packet(&[])).0.is_empty());
    assert_eq!(e.sp_rx.len(), 1, "Register goes to the slow path");
    e.sp_rx.clear();

    // A later KEY_WRITE raises the epoch: what passed at E is STALE now.
    e.grant_epoch(a, key_of(a), E + 2);
    let now = word(&e, pa);
    for ep in [E, E + 1] {
        let (h, _) = write_at(a, next(), ep, 0xBAD);
        refuse(
            &mut e,
            h,
            &0xBADu64.to_le_bytes(),
            Status::Stale,
            "after the raise",
        );
    }
    assert_eq!(word(&e, pa), now);
    let (h, f) = write_at(a, next(), E + 2, 0x3000);
    assert_eq!(
        e.request(&f).0,
        vec![resp(&h, Status::Ok, &[])],
        "the new epoch"
    );
    assert_eq!(word(&e, pa), 0x3000);
    // Unfenced again (epoch 0 written): every epoch passes.
    e.grant_epoch(a, key_of(a), 0);
    let (h, f) = write_at(a, next(), 1, 0x4000);
    assert_eq!(
        e.request(&f).0,
        vec![resp(&h, Status::Ok, &[])],
        "unfenced again"
    );
    assert_eq!(word(&e, pa), 0x4000);
    assert!(e.sp_rx.is_empty());
}

/// The fence across the wrap: at epoch 1 (the wire epoch after 65535), 65535 is older and
/// STALE, 1 and 2 pass; at 65535, 1 is newer and passes.
#[test]
fn the_fence_keeps_its_order_across_the_wrap() {
    let a = 5u16;
    let mut e = env_with_page(&[a]);
    let pa = 5 * PS + 0x100;
    e.grant_epoch(a, key_of(a), 0xFFFF);
    let (h, f) = write_at(a, 1, 1, 11);
    assert_eq!(
        e.request(&f).0,
        vec![resp(&h, Status::Ok, &[])],
        "1 after 65535"
    );
    let (h, f) = write_at(a, 2, 0xFFFE, 12);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Stale, &[])], "65534");
    assert_eq!(word(&e, pa), 11);
    e.grant_epoch(a, key_of(a), 1);
    let (h, f) = write_at(a, 3, 0xFFFF, 13);
    assert_eq!(
        e.request(&f).0,
        vec![resp(&h, Status::Stale, &[])],
        "65535 before 1"
    );
    assert_eq!(word(&e, pa), 11);
    for (id, ep) in [(4u32, 1u16), (5, 2)] {
        let (h, f) = write_at(a, id, ep, 20 + ep as u64);
        assert_eq!(
            e.request(&f).0,
            vec![resp(&h, Status::Ok, &[])],
            "epoch {ep}"
        );
        assert_eq!(word(&e, pa), 20 + ep as u64);
    }
    assert_eq!(e.b.uut.stat_denied.val().to_u32(), 2);
}
