//! The executor's side of the offload port alone, against the contract in the module doc
//! (written from the executor's and the unit's side, not from the block's registers):
//! 4,000 random answers with payload reads around the end of the VA space (the range check
//! against a 128-bit sum), taken only while serving and acted on the next cycle; 4,000 random
//! accesses (inside and past the VA space, reads and block writes, in and out of the store's
//! RAS) with each of their endings; the ring's one lookup per request, its verdict and skip;
//! `clear` forgetting an access and an answer's arguments.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use clio_proto::consts::VA_LIMIT;

const OK: u64 = Status::Ok as u64;
const BAD: u64 = Status::BadRequest as u64;

fn bench() -> Bench<OffloadService> {
    let mut b = Bench::new(OffloadService::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    b.uut.exec.serving.next = true;
    b.settle();
    b
}

/// A VA near the end of the VA space, or anywhere below it, or past it.
fn edge_va(r: &mut Rng) -> u64 {
    match r.below(4) {
        0 => VA_LIMIT - r.below(5000),
        1 => VA_LIMIT + r.below(3),
        2 => r.next() & (VA_LIMIT - 1),
        _ => r.next(),
    }
}

#[test]
fn answers_are_decided_and_registered() {
    let mut r = Rng(0x0FF_5E2);
    let mut b = bench();
    let mut reads = (0u32, 0u32);
    for i in 0..4000 {
        let status = if r.below(3) == 0 { r.below(12) } else { OK };
        let (read, replay, record, own) = (
            r.below(2) == 0,
            r.below(4) == 0,
            r.below(2) == 0,
            r.below(2) == 0,
        );
        let (va, len) = (edge_va(&mut r), r.below(4096));
        let (arg0, arg1) = (r.next(), r.next());
        // Not serving: the answer waits (not taken, nothing acted on).
        let idle = r.below(3);
        b.uut.exec.serving.next = false;
        b.uut.unit.rsp_valid.next = true;
        b.uut.unit.rsp_status.next = status.to_bits();
        b.uut.unit.rsp_arg0.next = arg0.to_bits();
        b.uut.unit.rsp_arg1.next = arg1.to_bits();
        b.uut.unit.rsp_read.next = read;
        b.uut.unit.rsp_read_own.next = own;
        b.uut.unit.rsp_read_va.next = va.to_bits();
        b.uut.unit.rsp_read_len.next = len.to_bits();
        b.uut.unit.rsp_record.next = record;
        b.uut.unit.rsp_replay.next = replay;
        for _ in 0..idle {
            b.settle();
            assert!(!b.uut.unit.rsp_ready.val(), "#{i}: taken while not serving");
            b.tick();
            b.settle();
            assert!(
                !b.uut.exec.ans_valid.val(),
                "#{i}: acted on while not serving"
            );
        }
        b.uut.exec.serving.next = true;
        b.settle();
        assert!(
            b.uut.unit.rsp_ready.val() && !b.uut.exec.ans_valid.val(),
            "#{i}"
        );
        b.tick();
        b.uut.unit.rsp_valid.next = false;
        b.settle();
        let inside = (va as u128) + (len as u128) <= VA_LIMIT as u128;
        let ok = status == OK;
        let want_status = if ok && read && !inside { BAD } else { status };
        assert!(b.uut.exec.ans_valid.val(), "#{i}: the answer a cycle later");
        assert!(
            !b.uut.unit.rsp_ready.val(),
            "#{i}: no second answer in its cycle"
        );
        assert_eq!(
            b.uut.exec.ans_status.val().to_u64(),
            want_status,
            "#{i} va {va:#x} len {len}"
        );
        assert_eq!(
            b.uut.exec.ans_read.val(),
            ok && read && inside,
            "#{i} va {va:#x} len {len}"
        );
        assert_eq!(
            b.uut.args_on.val(),
            ok && !(read && !inside) && !replay,
            "#{i}"
        );
        assert_eq!(b.uut.exec.ans_replay.val(), replay, "#{i}");
        assert_eq!(b.uut.exec.ans_arg0.val().to_u64(), arg0, "#{i}");
        assert_eq!(b.uut.arg1.val().to_u64(), arg1, "#{i}");
        assert_eq!(b.uut.exec.ring_record.val(), record, "#{i}");
        assert_eq!(
            b.uut.exec.ring_status.val().to_u64(),
            status,
            "#{i}: the unit's own status"
        );
        assert_eq!(b.uut.exec.ring_value.val().to_u64(), arg0, "#{i}");
        assert_eq!(b.uut.own.val(), own, "#{i}: the read's RAS");
        if b.uut.exec.ans_read.val() {
            assert_eq!(b.uut.exec.ans_read_va.val().to_u64(), va);
            assert_eq!(b.uut.exec.ans_read_len.val().to_u64(), len);
            reads.0 += 1;
        } else if ok && read {
            reads.1 += 1;
        }
        b.tick();
        b.settle();
        assert!(
            !b.uut.exec.ans_valid.val() && !b.uut.exec.ring_record.val(),
            "#{i}: one cycle"
        );
        assert_eq!(
            b.uut.args_on.val(),
            ok && !(read && !inside) && !replay,
            "#{i}: kept"
        );
        if ok && read && inside && r.below(2) == 0 {
            // The payload read's translation fails: the response carries its status alone.
            b.uut.exec.tr_fail.next = true;
            b.uut.tr_status.next = (Status::Unmapped as u64).to_bits();
            b.tick();
            b.uut.exec.tr_fail.next = false;
            b.settle();
            assert!(!b.uut.args_on.val(), "#{i}: the read failed: no arguments");
            assert!(!b.uut.unit.mem_done.val(), "#{i}: not the unit's access");
        }
        if r.below(2) == 0 {
            b.uut.exec.clear.next = true;
            b.tick();
            b.uut.exec.clear.next = false;
            b.settle();
            assert!(!b.uut.args_on.val() && !b.uut.own.val(), "#{i}: cleared");
        }
    }
    assert!(
        reads.0 > 300 && reads.1 > 300,
        "both sides of the range check: {reads:?}"
    );
}

#[test]
fn accesses_are_translated_and_end_with_their_status() {
    let mut r = Rng(0xACC_E55);
    let mut b = bench();
    let mut counts = [0u32; 4];
    for i in 0..4000 {
        let (write, own) = (r.below(2) == 0, r.below(2) == 0);
        let va = edge_va(&mut r) & !7;
        let wdata = r.bytes(64);
        let wstrb = r.next();
        // Not serving: the access waits.
        b.uut.exec.serving.next = false;
        b.uut.unit.mem_valid.next = true;
        b.uut.unit.mem_write.next = write;
        b.uut.unit.mem_own.next = own;
        b.uut.unit.mem_va.next = va.to_bits();
        b.uut.unit.mem_wdata.next = crate::util::bytes_to_bits(&wdata);
        b.uut.unit.mem_wstrb.next = wstrb.to_bits();
        b.settle();
        assert!(
            !b.uut.unit.mem_ready.val() && !b.uut.exec.access.val(),
            "#{i}"
        );
        b.tick();
        b.uut.exec.serving.next = true;
        b.settle();
        assert!(b.uut.unit.mem_ready.val(), "#{i}");
        let inside = va >> 48 == 0;
        assert_eq!(b.uut.exec.access.val(), inside, "#{i} va {va:#x}");
        assert_eq!(b.uut.exec.access_va.val().to_u64(), va);
        assert_eq!(b.uut.exec.access_write.val(), write);
        b.tick();
        b.uut.unit.mem_valid.next = false;
        b.uut.exec.serving.next = false;
        b.settle();
        if !inside {
            // Past the VA space: BAD_REQUEST the next cycle, no translation.
            assert!(
                b.uut.unit.mem_done.val() && !b.uut.exec.accessing.val(),
                "#{i}"
            );
            assert_eq!(b.uut.unit.mem_status.val().to_u64(), BAD);
            counts[0] += 1;
            b.tick();
            b.settle();
            assert!(!b.uut.unit.mem_done.val(), "#{i}: one done");
            continue;
        }
        assert!(
            b.uut.exec.accessing.val() && !b.uut.unit.mem_done.val(),
            "#{i}"
        );
        assert_eq!(b.uut.exec.writing.val(), write, "#{i}");
        assert_eq!(b.uut.block.valid.val(), write, "#{i}");
        assert_eq!(b.uut.own.val(), own, "#{i}");
        if write {
            assert_eq!(crate::util::bits_to_bytes(b.uut.block.data.val()), wdata);
            assert_eq!(b.uut.block.strb.val().to_u64(), wstrb);
        }
        for _ in 0..r.below(4) {
            b.tick();
            b.settle();
            assert!(
                b.uut.exec.accessing.val() && !b.uut.unit.mem_done.val(),
                "#{i}: held"
            );
        }
        // Its ending: a failed translation, the read word, the written block.
        let end = if r.below(3) == 0 {
            0
        } else if write {
            2
        } else {
            1
        };
        let st = 1 + r.below(10);
        match end {
            0 => {
                b.uut.exec.tr_fail.next = true;
                b.uut.tr_status.next = st.to_bits();
            }
            1 => b.uut.exec.word_in.next = true,
            _ => b.uut.exec.block_done.next = true,
        }
        b.settle();
        if end == 1 {
            // The word: done in the cycle its beat arrives.
            assert!(b.uut.unit.mem_done.val(), "#{i}");
            assert_eq!(b.uut.unit.mem_status.val().to_u64(), OK);
        } else {
            assert!(!b.uut.unit.mem_done.val(), "#{i}");
        }
        b.tick();
        b.uut.exec.tr_fail.next = false;
        b.uut.exec.word_in.next = false;
        b.uut.exec.block_done.next = false;
        b.uut.exec.serving.next = true;
        b.settle();
        if end != 1 {
            assert!(b.uut.unit.mem_done.val(), "#{i}: the cycle after");
            let want = if end == 0 { st } else { OK };
            assert_eq!(b.uut.unit.mem_status.val().to_u64(), want, "#{i}");
        } else {
            assert!(!b.uut.unit.mem_done.val(), "#{i}: one done");
        }
        counts[1 + end as usize] += 1;
        b.tick();
        b.settle();
        assert!(!b.uut.unit.mem_done.val(), "#{i}: one done");
        // The answer ends the access (or a new frame does).
        if r.below(2) == 0 {
            b.uut.exec.clear.next = true;
        } else {
            b.uut.unit.rsp_valid.next = true;
            b.uut.unit.rsp_read_own.next = false;
        }
        b.tick();
        b.uut.exec.clear.next = false;
        b.uut.unit.rsp_valid.next = false;
        b.settle();
        assert!(
            !b.uut.exec.accessing.val() && !b.uut.exec.writing.val() && !b.uut.own.val(),
            "#{i}"
        );
        b.tick();
    }
    assert!(counts.iter().all(|&c| c > 200), "every ending: {counts:?}");
}

#[test]
fn the_ring_is_asked_once_per_request() {
    let mut r = Rng(0x21A6);
    let mut b = bench();
    for i in 0..500 {
        b.uut.unit.once_valid.next = true;
        b.settle();
        assert!(
            b.uut.exec.ring_lookup.val() && !b.uut.unit.once_done.val(),
            "#{i}"
        );
        // The sync unit registers its verdict: no verdict yet, no second lookup.
        for _ in 1..crate::sync_unit::RING_VERDICT_LATENCY {
            b.tick();
            b.settle();
            assert!(
                !b.uut.unit.once_done.val() && !b.uut.exec.ring_lookup.val(),
                "#{i}"
            );
        }
        b.tick();
        b.settle();
        // The verdict: the unit's now (it reads it from the sync unit), the lookup not made
        // again while it is.
        assert!(
            b.uut.unit.once_done.val() && !b.uut.exec.ring_lookup.val(),
            "#{i}"
        );
        b.uut.unit.once_valid.next = false;
        b.tick();
        b.settle();
        assert!(!b.uut.unit.once_done.val(), "#{i}");
        let _ = r.below(2);
        // Not serving: no lookup.
        b.uut.exec.serving.next = false;
        b.uut.unit.once_valid.next = true;
        b.settle();
        assert!(!b.uut.exec.ring_lookup.val(), "#{i}");
        b.uut.unit.once_valid.next = false;
        b.uut.exec.serving.next = true;
        b.tick();
    }
}
