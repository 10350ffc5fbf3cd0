//! The executor alone: its inputs driven as the stages would drive them, one request class at
//! a time, checking what it asks of the stages cycle by cycle (which frame it takes, its
//! lookups and translations, its AR/AW requests and when the ordering rules hold them, its
//! hand-overs and its response's fields). The whole fast path's behaviour against the model is
//! `fastpath_top`'s testbench and the RTL conformance runs; this bench pins the sequencing.

use super::*;
use crate::bench::Bench;
use clio_proto::consts::MAX_PAYLOAD;
use clio_proto::header::HEADER_LEN;
use clio_proto::Opcode;

const PAGE_SHIFT: u64 = 12;
const PAGE: u64 = 1 << PAGE_SHIFT;

/// The executor with every input at rest: keys swept, no frame, no descriptor, the ordering
/// rules clear, the stages free.
fn bench() -> Bench<Executor> {
    let mut b = Bench::new(Executor::default());
    let u = &mut b.uut;
    u.reset.next = true;
    // Pages of 4 KiB: a piece is the page.
    u.cfg_piece_shift.next = PAGE_SHIFT.to_bits();
    u.cfg_persist.next = true;
    u.frame.full.next = false;
    u.frame.verdict.next = 0.into();
    u.frame.hdr.next = 0.into();
    u.frame.client.next = 7.into();
    u.frame.ring_key.next = 0.into();
    u.frame.route.next = 0.into();
    u.frame.lane.next = 0.into();
    u.keys.ready.next = true;
    u.keys.ok.next = true;
    u.keys.epoch_ok.next = true;
    u.routes.need.next = false;
    u.routes.ok.next = true;
    u.routes.done.next = true;
    u.sp_tx_valid.next = false;
    u.desc.member.next = 0.into();
    u.sptx.to_pte.next = false;
    u.sptx.reply.next = false;
    u.desc.route.next = 0.into();
    u.desc.header.next = 0.into();
    u.desc.reply_status.next = 0.into();
    u.desc.reply_flags.next = 0.into();
    u.req.va.next = 0.into();
    u.ahead.va.next = 0.into();
    u.req.payload_len.next = 0.into();
    u.h_durable.next = false;
    u.ahead.parse_ok.next = true;
    u.ahead.chase_ok.next = false;
    u.ahead.append_ok.next = false;
    u.ahead.atomic_ok.next = false;
    u.ahead.rw.next = false;
    u.ahead.ok.next = false;
    u.ahead.pa.next = 0.into();
    u.ahead.read_ok.next = false;
    u.ahead.write_ok.next = false;
    u.ahead.write_in_va.next = false;
    u.ahead.len.next = 0.into();
    u.seg.count.next = 1.into();
    u.seg.next_va.next = 0.into();
    u.seg.next_len.next = 0.into();
    u.tr.only_hit.next = false;
    u.tr.hit_pa.next = 0.into();
    u.tr.done.next = false;
    u.tr.status.next = (Status::Ok as u64).to_bits();
    u.tr.pa.next = 0.into();
    u.order.read_clear.next = true;
    u.order.write_clear.next = true;
    u.order.atomic_clear.next = true;
    u.order.fence_clear.next = true;
    u.order.read_near.next = false;
    u.order.write_near.next = false;
    u.ar.ready.next = true;
    u.aw.ready.next = true;
    u.r_word.next = false;
    u.w_busy.next = false;
    u.beat_done.next = false;
    u.ring.verdict.hit.next = false;
    u.ring.verdict.stranger.next = false;
    u.ring.verdict.status.next = 0.into();
    u.ring.verdict.value.next = 0.into();
    u.alu_write.next = false;
    u.word.old.next = 0.into();
    u.place.log_full.next = false;
    u.place.past_va.next = false;
    u.place.record_va.next = 0.into();
    u.place.footprint.next = 0.into();
    u.place.old_tail.next = 0.into();
    u.place.new_tail.next = 0.into();
    u.persist.done.next = false;
    u.persist.failed.next = false;
    u.start.chase_ready.next = true;
    u.start.kv_ready.next = true;
    u.unit.accessing.next = false;
    u.unit.writing.next = false;
    u.unit.access.next = false;
    u.unit.access_va.next = 0.into();
    u.unit.access_write.next = false;
    u.unit.ring_lookup.next = false;
    u.unit.ring_record.next = false;
    u.unit.ring_status.next = 0.into();
    u.unit.ring_value.next = 0.into();
    u.unit.ans_valid.next = false;
    u.unit.ans_status.next = 0.into();
    u.unit.ans_arg0.next = 0.into();
    u.unit.ans_replay.next = false;
    u.unit.ans_read.next = false;
    u.unit.ans_read_va.next = 0.into();
    u.unit.ans_read_len.next = 0.into();
    u.rx_ok.next = true;
    u.sp_rx_ready.next = true;
    u.job.ready.next = true;
    u.rsp.response.next = 0x1111.into();
    u.rsp.response_ok.next = 0x2222.into();
    b.settle();
    b.tick();
    b.uut.reset.next = false;
    b.settle();
    b
}

/// Offer one frame of this opcode with this verdict; the executor takes it this cycle (it is
/// idle).
fn offer(b: &mut Bench<Executor>, op: Opcode, verdict: u64, lane: u64) {
    let u = &mut b.uut;
    let hdr = 0xAB_00CD | (op as u64) << 8;
    u.frame.full.next = true;
    u.frame.verdict.next = verdict.to_bits();
    u.frame.hdr.next = hdr.to_bits();
    u.frame.route.next = 0x77.into();
    u.frame.lane.next = lane.to_bits();
    u.frame.ring_key.next = 0x0001_0007_0000_0042.into();
    b.settle();
    assert!(
        b.uut.queue.take.val(),
        "an idle executor takes the waiting frame"
    );
    b.tick();
    b.uut.frame.full.next = false;
    b.settle();
    assert_eq!(
        b.uut.header.val().get_bits::<64>(0).to_u64(),
        hdr,
        "the frame's header is registered"
    );
    assert_eq!(b.uut.route.val().get_bits::<64>(0).to_u64(), 0x77);
    assert_eq!(b.uut.ring.key.val().to_u64(), 0x0001_0007_0000_0042);
}

/// The payload-less response now: a job with the header beat alone, taken, and the executor free.
fn expect_only_response(b: &mut Bench<Executor>, status: Status) {
    let u = &b.uut;
    assert_eq!(u.state(), State::Resp);
    assert!(u.job.valid.val() && u.job.only.val(), "payload-less job");
    assert_eq!(u.job.len.val().to_u64(), HEADER_LEN as u64);
    assert_eq!(
        u.job.hdr.val().get_bits::<64>(0).to_u64(),
        0x1111,
        "the built response header"
    );
    assert_eq!(u.rsp.status.val().to_u64(), status as u64, "status");
    assert!(
        u.queue.done.val(),
        "the request is done as its response is taken"
    );
}

#[test]
fn verdicts_drop_nack_and_dispatch() {
    let mut b = bench();
    // Dropped (bit 0): Drain, done, idle; no response.
    offer(&mut b, Opcode::Read, 1, 0);
    assert_eq!(b.uut.state(), State::Drain);
    assert!(b.uut.queue.done.val() && !b.uut.job.valid.val());
    b.tick();
    b.settle();
    assert!(b.uut.is_idle());
    // NACK (bit 1): counted as it is taken, answered NACK.
    b.uut.frame.full.next = true;
    b.uut.frame.verdict.next = 2.into();
    b.settle();
    assert!(b.uut.queue.take.val() && b.uut.ev.nack.val());
    b.tick();
    b.uut.frame.full.next = false;
    b.settle();
    expect_only_response(&mut b, Status::Nack);
    // The read-data stage's queue is full: the response waits, nothing is done.
    b.uut.job.ready.next = false;
    b.settle();
    assert!(b.uut.job.valid.val() && !b.uut.queue.done.val());
    b.tick();
    b.settle();
    assert_eq!(b.uut.state(), State::Resp, "waits for the read-data stage");
    b.uut.job.ready.next = true;
    b.settle();
    assert!(b.uut.queue.done.val());
    b.tick();
    b.settle();
    assert!(b.uut.is_idle());
}

#[test]
fn nothing_is_taken_before_the_key_sweep_and_descriptors_only_from_idle() {
    let mut b = bench();
    b.uut.keys.ready.next = false;
    b.uut.frame.full.next = true;
    b.uut.sp_tx_valid.next = true;
    b.settle();
    assert!(!b.uut.queue.take.val() && !b.uut.desc_take.val() && !b.uut.sp_tx_ready.val());
    b.uut.keys.ready.next = true;
    b.uut.desc.member.next = 0x0003_0009.into();
    b.uut.sptx.reply.next = true;
    b.uut.desc.header.next = 0x5150.into();
    b.uut.desc.route.next = 0x99.into();
    b.uut.desc.reply_status.next = (Status::Ok as u64).to_bits();
    b.uut.desc.reply_flags.next = 0x81.into();
    b.settle();
    // A descriptor goes before a frame.
    assert!(b.uut.desc_take.val() && b.uut.sp_tx_ready.val() && !b.uut.queue.take.val());
    b.tick();
    b.uut.sp_tx_valid.next = false;
    b.uut.frame.full.next = false;
    b.settle();
    assert_eq!(b.uut.state(), State::SpTx);
    assert!(b.uut.sptx.act.val());
    assert_eq!(
        b.uut.ring.key.val().to_u64(),
        0x0003_0009 << 32,
        "a RING_OWNER's member is the ring key"
    );
    b.tick();
    b.uut.sptx.reply.next = false;
    b.settle();
    // A REPLY: its header along its route, payload-less.
    assert_eq!(b.uut.header.val().get_bits::<64>(0).to_u64(), 0x5150);
    assert_eq!(b.uut.route.val().get_bits::<64>(0).to_u64(), 0x99);
    assert_eq!(b.uut.rsp.flags.val().to_u64(), 0x81);
    expect_only_response(&mut b, Status::Ok);
}

#[test]
fn a_denied_request_executes_nothing() {
    let mut b = bench();
    offer(&mut b, Opcode::Write, 0, 0);
    assert_eq!(b.uut.state(), State::Dispatch);
    b.uut.keys.ok.next = false;
    b.uut.ahead.rw.next = true;
    b.uut.ahead.write_ok.next = true;
    b.uut.ahead.write_in_va.next = true;
    b.uut.ahead.ok.next = true;
    b.settle();
    assert!(b.uut.ev.denied.val());
    assert!(!b.uut.tr.start.val() && !b.uut.ev.ahead_hit.val());
    b.tick();
    b.settle();
    expect_only_response(&mut b, Status::Denied);
    // The right key with an older epoch: STALE, counted as denied, nothing started.
    b.tick();
    b.settle();
    offer(&mut b, Opcode::Write, 0, 0);
    b.uut.keys.ok.next = true;
    b.uut.keys.epoch_ok.next = false;
    b.settle();
    assert!(b.uut.ev.denied.val());
    assert!(!b.uut.tr.start.val() && !b.uut.ev.ahead_hit.val());
    b.tick();
    b.settle();
    expect_only_response(&mut b, Status::Stale);
    b.uut.keys.epoch_ok.next = true;
    // And a frame the parser refuses is BAD_REQUEST (UNSUPPORTED for an extend opcode that
    // is off), before the key check.
    b.tick();
    b.settle();
    offer(&mut b, Opcode::KvGet, 0, 0);
    b.uut.ahead.parse_ok.next = false;
    b.settle();
    assert!(!b.uut.ev.denied.val());
    b.tick();
    b.settle();
    expect_only_response(&mut b, Status::Unsupported);
}

#[test]
fn a_read_translated_ahead_goes_straight_to_its_bursts_and_its_response() {
    let mut b = bench();
    let (va, pa, len) = (0x1_2345_0010u64, 0x40_0000u64, 200u64);
    offer(&mut b, Opcode::Read, 0, va & 63);
    let u = &mut b.uut;
    u.req.va.next = va.to_bits();
    u.ahead.rw.next = true;
    u.ahead.read_ok.next = true;
    u.ahead.ok.next = true;
    u.ahead.pa.next = (pa + (va & 63)).to_bits();
    u.ahead.len.next = len.to_bits();
    b.settle();
    assert!(
        b.uut.ev.ahead_hit.val(),
        "a look-ahead translation is a TLB hit"
    );
    assert!(!b.uut.ahead.lookup.val() && !b.uut.tr.start.val());
    // The read-after-write rule holds the address.
    b.uut.order.read_clear.next = false;
    b.tick();
    b.settle();
    assert_eq!(b.uut.state(), State::RAddr);
    assert!(
        b.uut.ar.own.val() && !b.uut.ar.valid.val(),
        "held by read-after-write"
    );
    b.tick();
    b.uut.order.read_clear.next = true;
    b.settle();
    let beats = ((va & 63) + len).div_ceil(64);
    assert!(b.uut.ar.valid.val());
    assert_eq!(b.uut.ar.addr.val().to_u64(), pa);
    assert_eq!(b.uut.ar.len.val().to_u64(), beats - 1);
    assert_eq!(b.uut.job.kt.val().to_u64(), beats);
    // Its last address goes out and the job is handed over in the same cycle.
    assert!(b.uut.job.valid.val() && !b.uut.job.only.val());
    assert_eq!(b.uut.job.len.val().to_u64(), len + HEADER_LEN as u64);
    assert_eq!(b.uut.rsp.payload_len.val().to_u64(), len);
    assert!(b.uut.rsp.seg_on.val() && b.uut.rsp.pkt_index.val().to_u64() == 0);
    assert!(b.uut.queue.done.val());
    b.tick();
    b.settle();
    assert!(b.uut.is_idle());
}

#[test]
fn a_long_read_goes_on_with_its_next_packet() {
    let mut b = bench();
    let (va, pa) = (0x8000u64, 0x10_0000u64);
    offer(&mut b, Opcode::Read, 0, 0);
    let u = &mut b.uut;
    u.req.va.next = va.to_bits();
    u.ahead.rw.next = true;
    u.ahead.read_ok.next = true;
    u.ahead.ok.next = true;
    u.ahead.pa.next = pa.to_bits();
    u.ahead.len.next = (MAX_PAYLOAD as u64).to_bits();
    u.seg.count.next = 2.into();
    u.seg.next_va.next = (va + MAX_PAYLOAD as u64).to_bits();
    u.seg.next_len.next = 100.into();
    b.settle();
    b.tick();
    b.settle();
    assert_eq!(b.uut.state(), State::RAddr);
    // Packet 0 handed over: packet 1 is translated next, not the next frame.
    assert!(b.uut.job.valid.val() && b.uut.queue.done.val());
    assert!(b.uut.tr.start.val());
    assert_eq!(b.uut.tr.start_va.val().to_u64(), va + MAX_PAYLOAD as u64);
    b.uut.frame.full.next = true;
    b.settle();
    assert!(
        !b.uut.queue.take.val(),
        "the answer's next packet goes first"
    );
    b.tick();
    b.uut.frame.full.next = false;
    b.settle();
    assert_eq!(b.uut.state(), State::Translate);
    assert_eq!(b.uut.rsp.pkt_index.val().to_u64(), 1);
    assert_eq!(
        b.uut.rsp.pkt_count.val().to_u64(),
        2,
        "pkt_count of every packet"
    );
    assert_eq!(b.uut.write.len.val().to_u64(), 100);
    assert_eq!(b.uut.rsp.payload_len.val().to_u64(), 100);
}

#[test]
fn a_write_missing_the_look_ahead_is_translated_then_handed_to_the_write_data_stage() {
    let mut b = bench();
    let (va, pa, plen) = (0x3000u64 + PAGE - 40, 0x9_0000u64, 100u64);
    offer(&mut b, Opcode::Write, 0, va & 63);
    let u = &mut b.uut;
    u.req.va.next = va.to_bits();
    u.ahead.va.next = va.to_bits();
    u.req.payload_len.next = plen.to_bits();
    u.ahead.rw.next = true;
    u.ahead.write_ok.next = true;
    u.ahead.write_in_va.next = true;
    b.settle();
    assert!(b.uut.ahead.lookup.val(), "Dispatch looks its page up");
    assert!(b.uut.tr.start.val());
    assert_eq!(b.uut.tr.start_va.val().to_u64(), va);
    b.tick();
    b.settle();
    assert_eq!(b.uut.state(), State::Translate);
    // The translate stage answers two cycles after its start at the earliest (the TLB's
    // lookup and answer): `page_rem` is registered from `vaq` by then.
    b.tick();
    b.settle();
    assert!(!b.uut.tr.start.val());
    // 40 bytes on the first page, 60 on the next: two pieces.
    b.uut.tr.done.next = true;
    b.uut.tr.pa.next = (pa + (va % PAGE)).to_bits();
    b.settle();
    assert!(b.uut.tr.start.val(), "the second page");
    assert_eq!(b.uut.tr.start_va.val().to_u64(), va + 40);
    b.tick();
    b.uut.tr.pa.next = 0x5_0000.into();
    b.settle();
    assert!(b.uut.write.two.val());
    assert_eq!(b.uut.write.n1.val().to_u64(), 40);
    b.tick();
    b.uut.tr.done.next = false;
    b.uut.order.write_clear.next = false;
    b.settle();
    assert_eq!(b.uut.state(), State::WAddr);
    assert!(
        b.uut.aw.own.val() && !b.uut.aw.valid.val(),
        "held by write-after-read"
    );
    b.tick();
    b.uut.order.write_clear.next = true;
    b.settle();
    // First piece: from the first page's PA.
    assert!(b.uut.aw.valid.val());
    assert_eq!(b.uut.aw.addr.val().to_u64(), (pa + (va % PAGE)) & !63);
    let k1 = ((va & 63) + 40) >> 6;
    assert_eq!(b.uut.aw.len.val().to_u64(), k1 - 1);
    b.tick();
    b.uut.w_busy.next = true;
    b.settle();
    // Second piece: the rest of the beats from the second page.
    let kt = ((va & 63) + plen).div_ceil(64);
    assert_eq!(b.uut.aw.addr.val().to_u64(), 0x5_0000);
    assert_eq!(b.uut.aw.len.val().to_u64(), kt - k1 - 1);
    // The write-data stage is busy: the data waits in WData.
    assert!(!b.uut.queue.pass.val());
    b.tick();
    b.settle();
    assert_eq!(b.uut.state(), State::WData);
    b.tick();
    b.settle();
    assert_eq!(b.uut.state(), State::WData);
    b.uut.w_busy.next = false;
    b.settle();
    // Handed over, and its OK answer goes to the read-data stage in the same cycle.
    assert!(b.uut.queue.pass.val() && b.uut.job.valid.val() && b.uut.job.only.val());
    assert_eq!(
        b.uut.job.hdr.val().get_bits::<64>(0).to_u64(),
        0x2222,
        "the OK response header"
    );
    b.tick();
    b.settle();
    assert!(b.uut.is_idle());
}

#[test]
fn a_durable_write_without_a_persistence_domain_is_unsupported() {
    let mut b = bench();
    b.uut.cfg_persist.next = false;
    offer(&mut b, Opcode::Write, 0, 0);
    let u = &mut b.uut;
    u.h_durable.next = true;
    u.req.payload_len.next = 64.into();
    u.ahead.rw.next = true;
    u.ahead.write_ok.next = true;
    u.ahead.write_in_va.next = true;
    u.ahead.ok.next = true;
    b.settle();
    assert!(!b.uut.ev.ahead_hit.val() && !b.uut.tr.start.val());
    b.tick();
    b.settle();
    expect_only_response(&mut b, Status::Unsupported);
}

/// An atomic presenting an older epoch than its RAS's looks for its ring entry: an earlier
/// attempt that executed is answered from it; else STALE, and nothing moves (no skip, no
/// translation) whatever the ring's other verdicts. Counted as denied either way.
#[test]
fn a_stale_atomic_is_answered_from_the_ring_or_stale() {
    let mut b = bench();
    let va = 0x2008u64;
    for hit in [true, false] {
        offer(&mut b, Opcode::FetchAdd, 0, va & 63);
        b.uut.req.va.next = va.to_bits();
        b.uut.ahead.atomic_ok.next = true;
        b.uut.keys.epoch_ok.next = false;
        b.settle();
        assert!(b.uut.ev.denied.val());
        assert!(b.uut.ring.lookup.val(), "the ring is asked");
        b.tick();
        assert_eq!(b.uut.state(), State::SyncWait);
        b.tick();
        b.tick();
        b.uut.ring.verdict.hit.next = hit;
        b.uut.ring.verdict.status.next = (Status::Ok as u64).to_bits();
        b.uut.ring.verdict.value.next = 0x77.into();
        b.uut.ring.verdict.quota.next = !hit;
        b.uut.ring.verdict.stranger.next = !hit;
        b.settle();
        assert_eq!(b.uut.state(), State::SyncCheck);
        assert!(!b.uut.tr.start.val());
        b.tick();
        b.uut.ring.verdict.hit.next = false;
        b.uut.ring.verdict.quota.next = false;
        b.uut.ring.verdict.stranger.next = false;
        b.uut.keys.epoch_ok.next = true;
        b.settle();
        if hit {
            assert!(b.uut.rsp.arg0_on.val());
            assert_eq!(b.uut.rsp.arg0.val().to_u64(), 0x77);
            expect_only_response(&mut b, Status::Ok);
        } else {
            assert!(!b.uut.rsp.arg0_on.val() && !b.uut.rsp_arg1_on.val());
            expect_only_response(&mut b, Status::Stale);
        }
        b.tick();
        b.settle();
    }
}

#[test]
fn an_atomic_asks_the_ring_then_reads_computes_and_writes_its_word() {
    let mut b = bench();
    let (va, pa) = (0x2008u64, 0x7_0008u64);
    // Replayed from the ring: the recorded answer, nothing executes.
    offer(&mut b, Opcode::FetchAdd, 0, va & 63);
    let u = &mut b.uut;
    u.req.va.next = va.to_bits();
    u.ahead.atomic_ok.next = true;
    b.settle();
    assert!(b.uut.ring.lookup.val());
    b.tick();
    // The ring's verdict is registered over the two cycles after the lookup
    // (`RING_VERDICT_LATENCY`).
    assert_eq!(b.uut.state(), State::SyncWait);
    b.tick();
    assert_eq!(b.uut.state(), State::SyncShare);
    b.tick();
    b.uut.ring.verdict.hit.next = true;
    b.uut.ring.verdict.status.next = (Status::Ok as u64).to_bits();
    b.uut.ring.verdict.value.next = 0x1234.into();
    b.settle();
    assert_eq!(b.uut.state(), State::SyncCheck);
    assert!(!b.uut.tr.start.val());
    b.tick();
    b.uut.ring.verdict.hit.next = false;
    b.settle();
    assert!(b.uut.rsp.arg0_on.val());
    assert_eq!(b.uut.rsp.arg0.val().to_u64(), 0x1234);
    expect_only_response(&mut b, Status::Ok);
    b.tick();
    b.settle();
    // Over its share: QUOTA_EXCEEDED, and nothing executes.
    offer(&mut b, Opcode::FetchAdd, 0, va & 63);
    b.tick();
    b.tick();
    b.tick();
    b.uut.ring.verdict.quota.next = true;
    b.settle();
    assert!(!b.uut.tr.start.val());
    b.tick();
    b.uut.ring.verdict.quota.next = false;
    b.settle();
    assert!(!b.uut.rsp.arg0_on.val());
    assert!(
        b.uut.rsp_arg1_on.val(),
        "the refusal names its quota in arg1"
    );
    assert_eq!(
        b.uut.rsp_arg1.val().to_u64(),
        clio_proto::quota::Quota::RingShare as u64
    );
    expect_only_response(&mut b, Status::QuotaExceeded);
    b.tick();
    b.settle();
    // A client id whose row is not the RAS's: DENIED, nothing executes.
    offer(&mut b, Opcode::FetchAdd, 0, va & 63);
    b.tick();
    b.tick();
    b.tick();
    b.uut.ring.verdict.stranger.next = true;
    b.settle();
    assert!(!b.uut.tr.start.val());
    b.tick();
    b.uut.ring.verdict.stranger.next = false;
    b.settle();
    expect_only_response(&mut b, Status::Denied);
    b.tick();
    b.settle();
    // Executed: translate, read the word (after the atomic's ordering rule), ALU, write back.
    offer(&mut b, Opcode::FetchAdd, 0, va & 63);
    b.tick();
    b.tick();
    b.tick();
    b.settle();
    assert!(b.uut.tr.start.val());
    b.tick();
    b.uut.tr.only_hit.next = true;
    b.uut.tr.hit_pa.next = pa.to_bits();
    b.settle();
    assert!(b.uut.tr.hit_take.val());
    b.tick();
    b.uut.tr.only_hit.next = false;
    b.uut.order.atomic_clear.next = false;
    b.settle();
    assert_eq!(b.uut.state(), State::SAddr);
    assert!(b.uut.ar.own.val() && !b.uut.ar.valid.val());
    b.uut.order.atomic_clear.next = true;
    b.settle();
    assert_eq!(b.uut.ar.addr.val().to_u64(), pa & !63);
    assert_eq!(b.uut.ar.len.val().to_u64(), 0);
    b.tick();
    b.settle();
    assert!(b.uut.word.sample.val());
    b.tick();
    b.settle();
    assert_eq!(b.uut.state(), State::SData, "waits for its R beat");
    b.uut.r_word.next = true;
    b.tick();
    b.uut.r_word.next = false;
    b.uut.word.old.next = 41.into();
    b.uut.alu_write.next = true;
    b.settle();
    assert_eq!(b.uut.state(), State::SAlu);
    assert!(b.uut.word.alu_load.val() && b.uut.ring.record.val());
    assert_eq!(
        b.uut.ring.rec_value.val().to_u64(),
        41,
        "the old word is recorded"
    );
    b.tick();
    b.settle();
    assert!(b.uut.beat_word.val());
    assert_eq!(b.uut.rsp.arg0.val().to_u64(), 41);
    b.tick();
    b.settle();
    assert_eq!(b.uut.state(), State::SWrite, "waits for the write-back");
    b.uut.beat_done.next = true;
    b.tick();
    b.uut.beat_done.next = false;
    b.settle();
    expect_only_response(&mut b, Status::Ok);
}

#[test]
fn a_failed_translation_is_the_response_and_slow_opcodes_are_pushed() {
    let mut b = bench();
    offer(&mut b, Opcode::Read, 0, 0);
    b.uut.ahead.rw.next = true;
    b.uut.ahead.read_ok.next = true;
    b.uut.ahead.len.next = 16.into();
    b.tick();
    b.uut.tr.done.next = true;
    b.uut.tr.status.next = (Status::Unmapped as u64).to_bits();
    b.tick();
    b.uut.tr.done.next = false;
    b.settle();
    assert_eq!(b.uut.rsp.payload_len.val().to_u64(), 0);
    expect_only_response(&mut b, Status::Unmapped);
    b.tick();
    b.settle();
    // A slow-path opcode: it waits a cycle in Dispatch, then is pushed as a REQUEST when its
    // source's share admits it then (`rx_ok` of the first cycle is another frame's).
    b.uut.rx_ok.next = false;
    offer(&mut b, Opcode::Alloc, 0, 0);
    b.uut.ahead.rw.next = false;
    b.uut.sp_rx_ready.next = false;
    assert_eq!(b.uut.state(), State::Dispatch);
    b.tick();
    b.uut.rx_ok.next = true;
    b.settle();
    assert_eq!(b.uut.state(), State::Dispatch, "a cycle for the share");
    assert!(!b.uut.sp_push.val());
    b.tick();
    b.settle();
    assert!(b.uut.sp_push.val());
    b.tick();
    b.settle();
    assert!(b.uut.sp_push.val(), "held until the ring takes it");
    b.uut.sp_rx_ready.next = true;
    b.tick();
    b.settle();
    assert_eq!(b.uut.state(), State::Drain);
    b.tick();
    b.settle();
    // Its source holds its share (or the ring has no room past the notices'): RETRY_LATER.
    offer(&mut b, Opcode::Alloc, 0, 0);
    b.tick();
    b.uut.rx_ok.next = false;
    b.tick();
    b.settle();
    expect_only_response(&mut b, Status::RetryLater);
}
