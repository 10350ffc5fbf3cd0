//! The key check: requests whose key does not open their RAS are denied and execute nothing.

use super::*;

/// Requests with a valid CRC whose key does not open their pid's RAS: a forged key, a
/// missing key, another RAS's pid, pid 0, a pid beyond the table, a removed RAS. Each is
/// answered DENIED (payload-less, like any error response, key and client zero) and
/// nothing executes: no DRAM access, no translation, no ring entry, no slow-path
/// descriptor. Parse failures still come first; Register needs no key.
#[test]
fn wrong_keys_are_denied_and_execute_nothing() {
    let (a, b) = (3u16, 4u16);
    let mut e = env_with_page(&[a, b]);
    e.sp_rx.clear();
    let pa_a = 5 * PS + 0x100;
    let before = (word(&e, pa_a), word(&e, 6 * PS + 0x100));
    let traffic = e.dram_traffic();
    let tlb = (
        e.b.uut.stat_tlb_hits.val().to_u32(),
        e.b.uut.stat_tlb_misses.val().to_u32(),
    );
    let mut denied = 0;
    let mut check_denied = |e: &mut Env, h: Header, payload: &[u8], what: &str| {
        let (out, _) = e.request(&h.to_packet(payload));
        assert_eq!(out, vec![resp(&h, Status::Denied, &[])], "{what}");
        assert!(out[0][field::KEY.start..HEADER_LEN].iter().all(|&x| x == 0));
        denied += 1;
        assert_eq!(e.b.uut.stat_denied.val().to_u32(), denied, "{what}");
    };
    let forged = |h: Header, key: u64| Header { key, ..h };
    // Every opcode that needs a key, with a forged one (one bit off).
    let mut w = req(Opcode::Write, a, 1, WORD);
    w.total_len = 8;
    check_denied(
        &mut e,
        forged(w, key_of(a) ^ 1),
        &[0xEE; 8],
        "write, forged key",
    );
    let mut r = req(Opcode::Read, a, 2, WORD);
    r.total_len = 8;
    check_denied(
        &mut e,
        forged(r, key_of(a) ^ 1 << 63),
        &[],
        "read, forged key",
    );
    let mut faa = req(Opcode::FetchAdd, a, 3, WORD);
    faa.arg0 = 1;
    check_denied(&mut e, forged(faa, 0), &[], "FAA, missing key");
    for op in [Opcode::TestAndSet, Opcode::Unlock, Opcode::CompareAndSwap] {
        check_denied(
            &mut e,
            forged(req(op, a, 4, WORD), 0),
            &[],
            "atomic, no key",
        );
    }
    check_denied(&mut e, forged(req(Opcode::Fence, a, 5, 0), 0), &[], "fence");
    let mut ack = req(Opcode::CnAck, a, 6, 0);
    ack.arg0 = 3;
    check_denied(&mut e, forged(ack, 7), &[], "CN ack");
    for op in [
        Opcode::Alloc,
        Opcode::Free,
        Opcode::Join,
        Opcode::Unregister,
        Opcode::Heartbeat,
        Opcode::SetEpoch,
    ] {
        check_denied(&mut e, forged(req(op, a, 7, 0), 1), &[], "slow path");
    }
    // Another RAS's pid with this RAS's key (its own CRC valid), and the other way round.
    let mut w = req(Opcode::Write, b, 8, WORD);
    w.total_len = 8;
    check_denied(
        &mut e,
        forged(w, key_of(a)),
        &[0xEE; 8],
        "pid of another RAS",
    );
    check_denied(&mut e, forged(faa, key_of(b)), &[], "key of another RAS");
    // pid 0 (no RAS) and a pid beyond the table whose low bits name a RAS.
    check_denied(
        &mut e,
        forged(req(Opcode::Read, 0, 9, WORD), 0),
        &[],
        "pid 0",
    );
    let mut r = req(Opcode::Read, a | 0x1000, 10, WORD);
    r.total_len = 8;
    check_denied(&mut e, forged(r, key_of(a)), &[], "pid beyond the table");
    // Nothing executed: memory, DRAM traffic, TLB, slow path untouched.
    assert_eq!((word(&e, pa_a), word(&e, 6 * PS + 0x100)), before);
    assert_eq!(
        e.dram_traffic(),
        traffic,
        "no DRAM access for a denied request"
    );
    assert_eq!(
        (
            e.b.uut.stat_tlb_hits.val().to_u32(),
            e.b.uut.stat_tlb_misses.val().to_u32()
        ),
        tlb,
        "no translation for a denied request"
    );
    assert!(e.sp_rx.is_empty(), "no slow-path descriptor: {:?}", e.sp_rx);
    // The ring saw nothing: the same FAA with the right key executes (and is recorded).
    let (out, _) = e.request(&faa.to_packet(&[]));
    assert_eq!(
        out,
        vec![Header {
            arg0: before.0,
            ..faa.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    assert_eq!(word(&e, pa_a), before.0 + 1);
    // Parse failures come before the key check; Register needs no key.
    let mut bad = forged(req(Opcode::Read, a, 11, WORD), 0).to_packet(&[]);
    bad[field::VERSION] = 1;
    Packet::new_unchecked(&mut bad[..]).fill_checksum();
    let mut want = bad[..HEADER_LEN].to_vec();
    want[field::KEY.start..].fill(0);
    want[field::STATUS] = Status::BadRequest as u8;
    want[field::FLAGS] = 1;
    Packet::new_unchecked(&mut want[..]).fill_checksum();
    assert_eq!(
        e.request(&bad).0,
        vec![want],
        "old version, no key: BAD_REQUEST"
    );
    let mut ext = forged(req(Opcode::Read, a, 12, 0), 0).to_packet(&[]);
    ext[field::OPCODE] = 0x45;
    Packet::new_unchecked(&mut ext[..]).fill_checksum();
    let out = e.request(&ext).0;
    assert_eq!(out[0][field::STATUS], Status::Unsupported as u8);
    let reg = Header {
        arg0: 42,
        ..Header::request(Opcode::Register, 0, 13, 0)
    };
    assert!(e.request(&reg.to_packet(&[])).0.is_empty());
    assert_eq!(
        e.sp_rx,
        vec![Descriptor::Request {
            route: e.route,
            header: reg
        }]
    );
    // The RAS torn down (KEY_WRITE of 0): its own key is denied from now on.
    e.grant(a, 0);
    let mut r = req(Opcode::Read, a, 14, WORD);
    r.total_len = 8;
    check_denied(&mut e, r, &[], "RAS removed");
}
