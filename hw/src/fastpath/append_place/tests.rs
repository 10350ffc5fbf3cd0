//! Append's placement alone: 20,000 tail words against `proto::replog::place` and the model's
//! rule after it (`sim::model::board::append`: the record's VA must not wrap, LOG_FULL; its
//! range must end inside the VA space, BAD_REQUEST). Logs near the end of the VA space and of
//! the 64-bit space, capacities at and around the exact end of the record, unaligned and
//! huge tails, every record length 1..=MAX_RECORD; loads two cycles apart and more, with other
//! words on `tail` between (the result holds until the next load). The request's fields are
//! presented from the cycle before its load.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use clio_proto::replog::place;
use clio_proto::Status;

/// The model's verdict: the record's VA, or the status.
fn want(va: u64, capacity: u64, tail: u64, len: u32) -> Result<u64, Status> {
    let at = place(capacity, tail, len).ok_or(Status::LogFull)?;
    let rva = va.checked_add(at).ok_or(Status::LogFull)?;
    rva.checked_add(footprint(len))
        .filter(|e| *e <= VA_LIMIT)
        .ok_or(Status::BadRequest)?;
    Ok(rva)
}

#[test]
fn placement_follows_replog_place() {
    let mut r = Rng(0x00A9_9E4D);
    let mut b = Bench::new(AppendPlace::default());
    let mut counts = [0u32; 3];
    for i in 0..20_000u32 {
        let len = match r.below(4) {
            0 => MAX_RECORD - r.below(8) as u32,
            1 => 1 + r.below(16) as u32,
            _ => 1 + r.below(MAX_RECORD as u64) as u32,
        };
        // The log's VA: 8-byte aligned (`append_ok`), anywhere, near the end of the VA space
        // or of the 64-bit space (only reachable by a record VA that wraps).
        let va = match r.below(4) {
            0 => VA_LIMIT - 8 * r.below(300),
            1 => u64::MAX - 7 - 8 * r.below(300),
            _ => r.below(VA_LIMIT) & !7,
        };
        let tail = match r.below(8) {
            0 => r.next(),
            1 => u64::MAX - r.below(2048),
            2 => 8 * r.below(300) + 1 + r.below(7),
            // The record ends 8 bytes before, at, or 8 bytes past `VA_LIMIT`.
            3 => VA_LIMIT
                .wrapping_sub(va)
                .wrapping_sub(LOG_HEAD)
                .wrapping_sub(footprint(len))
                .wrapping_add(8 * r.below(3))
                .wrapping_sub(8),
            _ => 8 * r.below(1 << 20),
        };
        let end = LOG_HEAD.wrapping_add(tail).wrapping_add(footprint(len));
        let capacity = match r.below(3) {
            0 => end.wrapping_add(r.below(17)).wrapping_sub(8),
            1 => r.next(),
            _ => end.wrapping_add(r.below(1 << 16)),
        };
        let pa = r.next();
        let lane = 8 * r.below(8);
        b.uut.req.va.next = va.to_bits();
        b.uut.req.arg0.next = capacity.to_bits();
        b.uut.req.total_len.next = (len as u64).to_bits();
        // The request's fields hold from the cycle before the load (the room is registered),
        // as the executor's do from Dispatch on; the last request's result holds meanwhile.
        b.uut.exec.load.next = false;
        b.uut.tail.next = r.next().to_bits();
        b.tick();
        b.uut.exec.load.next = true;
        b.uut.tail.next = tail.to_bits();
        b.uut.exec.tail_pa.next = pa.to_bits();
        b.uut.exec.slot_word.next = (lane / 8).to_bits();
        b.settle();
        assert_eq!(
            b.uut.placed.footprint.val().to_u64(),
            footprint(len),
            "len {len}"
        );
        b.tick();
        // Other words on the tail port now and then: nothing is loaded without `load` (with no
        // idle cycle, the next request is presented in the cycle after this one).
        let idle = r.below(3);
        b.uut.exec.load.next = false;
        for _ in 0..idle {
            b.uut.tail.next = r.next().to_bits();
            b.uut.exec.tail_pa.next = r.next().to_bits();
            b.uut.exec.slot_word.next = r.below(8).to_bits();
            b.tick();
        }
        b.settle();
        let u = &b.uut;
        let what = format!("#{i}: va {va:#x} capacity {capacity:#x} tail {tail:#x} len {len}");
        let got = if u.placed.log_full.val() {
            Err(Status::LogFull)
        } else if u.placed.past_va.val() {
            Err(Status::BadRequest)
        } else {
            Ok(u.placed.record_va.val().to_u64())
        };
        assert_eq!(got, want(va, capacity, tail, len), "{what}");
        assert_eq!(u.placed.old_tail.val().to_u64(), tail, "{what}: old tail");
        assert_eq!(u.tail_word_pa.val().to_u64(), pa, "{what}: tail PA");
        if let Ok(rva) = got {
            counts[0] += 1;
            assert_eq!(
                u.placed.new_tail.val().to_u64(),
                tail + footprint(len),
                "{what}: new tail"
            );
            assert_eq!(
                u.shift.val().to_u64(),
                (56 + lane - rva % 64) / 8,
                "{what}: slot-to-record shift"
            );
        } else if got == Err(Status::LogFull) {
            counts[1] += 1;
        } else {
            counts[2] += 1;
        }
    }
    // Every verdict, each often enough (the exact-capacity cases are about a tenth of them).
    assert!(
        counts.iter().all(|&c| c > 1000),
        "placed / full / past the VA space: {counts:?}"
    );
}
