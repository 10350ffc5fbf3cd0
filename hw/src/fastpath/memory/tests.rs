//! The memory side alone. (1) Writes handed over by the core stream their slot's blocks,
//! read through the receive side's `wbuf` port, out on the write-data stage's W with their
//! byte strobes, while the receive side and the core see the stage busy, its slot and the
//! slot given back with the last beat; a one-beat word write asked for meanwhile waits for
//! the W channel and then goes out on the one-beat writer's AW and W, and the core hears it
//! done. (2) A TLB insert from the slow path is seen by the receive side's TLB lookup and by
//! the core's translation of the page; after the slow path invalidates it, the look-ahead's
//! lookup misses and the core's translation walks: its bucket read goes out on the walk's AR,
//! at the page's bucket (`proto::pt_hash` under the bucket mask).

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::consts::BUCKET_BYTES;
use clio_proto::pt_hash::pt_hash;

const SHIFT: u64 = 12;
const BUCKET_MASK: u64 = (1 << 10) - 1;

fn bench() -> Bench<Memory> {
    let mut b = Bench::new(Memory::default());
    b.uut.page_shift.next = SHIFT.to_bits();
    b.uut.bucket_mask.next = BUCKET_MASK.to_bits();
    b.uut.slow.room.next = true;
    b.uut.slow.ready.next = true;
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    b.settle();
    b
}

#[test]
fn writes_stream_from_their_slot_and_a_word_write_waits_for_the_w_channel() {
    let mut r = Rng(0x3e30_0001);
    let mut b = bench();
    b.uut.stream_w.ready.next = true;
    b.uut.beat_aw.ready.next = true;
    b.uut.beat_w.ready.next = true;
    for i in 0..20u64 {
        let slot = i % 4;
        let (o, len) = (r.below(64), 1 + r.below(1024));
        let blocks: Vec<[u8; 64]> = (0..32)
            .map(|_| r.bytes(64).try_into().expect("64 bytes"))
            .collect();
        let beats = (o + len).div_ceil(64);
        b.uut.recv.slot.next = slot.to_bits();
        b.uut.core.write.start.next = true;
        b.uut.core.write.two.next = false;
        b.uut.core.write.o.next = o.to_bits();
        b.uut.core.write.n1.next = len.to_bits();
        b.uut.core.write.len.next = len.to_bits();
        b.uut.core.write.append.next = false;
        b.uut.core.payload_len.next = len.to_bits();
        b.settle();
        assert!(!b.uut.recv.w_busy.val());
        b.tick();
        b.uut.core.write.start.next = false;
        // A word write asked for while the stage streams.
        let (waddr, wdata) = (r.next() & !63, r.bytes(64));
        b.uut.core.beat_word.next = true;
        b.uut.core.word.addr.next = waddr.to_bits();
        b.uut.core.word.data.next = bytes_to_bits(&wdata);
        b.uut.core.word.strb.next = 0xFFu64.to_bits();
        // In the start cycle the receive side's `wbuf` port read block 0 of the executor's slot
        // (its address while the stage is idle).
        let (mut got, mut read_data, mut released) = (0u64, blocks[0], false);
        let (mut aw_seen, mut w_seen, mut done_seen) = (false, false, false);
        for cycle in 0..200 {
            b.uut.recv.buf_data.next = bytes_to_bits(&read_data);
            b.settle();
            let u = &b.uut;
            let busy = u.stream_w.own.val();
            assert_eq!(u.recv.w_busy.val(), busy, "write {i} cycle {cycle}");
            assert_eq!(u.core.w_busy.val(), busy);
            if busy {
                assert_eq!(u.recv.w_slot.val().to_u64(), slot);
                assert!(
                    !u.beat_w.own.val(),
                    "the word write waits for the W channel"
                );
            }
            if u.stream_w.valid.val() {
                let data = bits_to_bytes(u.stream_w.data.val());
                let strb = u.stream_w.strb.val().to_u64();
                for l in 0..64u64 {
                    let at = 64 * got + l;
                    let want = at >= o && at < o + len;
                    assert_eq!(strb >> l & 1 == 1, want, "write {i} beat {got} lane {l}");
                    if want {
                        assert_eq!(data[l as usize], blocks[got as usize][l as usize]);
                    }
                }
                got += 1;
                assert_eq!(u.stream_w.last.val(), got == beats);
            }
            let freed = u.recv.w_release.val().to_u64();
            if freed != 0 {
                assert_eq!(freed, 1 << slot, "the slot given back");
                assert_eq!(got, beats, "given back with the last beat");
                released = true;
            }
            if u.beat_aw.valid.val() {
                assert_eq!(u.beat_aw.addr.val().to_u64(), waddr);
                aw_seen = true;
            }
            if u.beat_w.valid.val() {
                assert_eq!(bits_to_bytes(u.beat_w.data.val()), wdata);
                w_seen = true;
            }
            done_seen |= u.core.beat_done.val();
            // The `wbuf` read: the stage's address while it streams, else block 0 of the
            // executor's slot (the receive side's mux); the block comes the next cycle.
            let a = if busy {
                u.recv.w_address.val().to_u64()
            } else {
                slot << 5
            };
            read_data = if a >> 5 == slot {
                blocks[(a & 31) as usize]
            } else {
                [0xEE; 64]
            };
            b.tick();
            if done_seen {
                break;
            }
        }
        b.uut.core.beat_word.next = false;
        assert!(released && aw_seen && w_seen && done_seen, "write {i}");
        assert_eq!(got, beats);
        b.tick();
    }
}

#[test]
fn tlb_changes_reach_the_lookahead_and_the_translation() {
    let mut b = bench();
    let (pid, vpn, pfn, off) = (7u64, 0x1_2345u64, 0xabcdu64, 0x123u64);
    // The slow path inserts the page (mapped, read and write).
    b.uut.slow.up.valid.next = true;
    b.uut.slow.up.inval.next = false;
    b.uut.slow.up.pid.next = pid.to_bits();
    b.uut.slow.up.vpn.next = vpn.to_bits();
    b.uut.slow.up.pfn.next = pfn.to_bits();
    b.uut.slow.up.perms.next = 3u64.to_bits();
    b.uut.slow.up.alloc.next = false;
    b.settle();
    assert!(
        b.uut.recv.tlb_update.val(),
        "the look-ahead hears of the change"
    );
    b.tick();
    b.uut.slow.up.valid.next = false;
    for _ in 0..4 {
        b.tick();
    }
    let lookup = |b: &mut Bench<Memory>| -> (bool, u64) {
        b.settle();
        assert!(b.uut.recv.tlb_free.val(), "the port is the look-ahead's");
        b.uut.recv.tlb_ahead.valid.next = true;
        b.uut.recv.tlb_ahead.pid.next = pid.to_bits();
        b.uut.recv.tlb_ahead.vpn.next = vpn.to_bits();
        b.tick();
        b.uut.recv.tlb_ahead.valid.next = false;
        for _ in 1..crate::tlb::TLB_LATENCY {
            b.tick();
        }
        b.settle();
        (
            b.uut.recv.tlb_res.hit.val(),
            b.uut.recv.tlb_res.pfn.val().to_u64(),
        )
    };
    assert_eq!(lookup(&mut b), (true, pfn));
    // The core translates a byte of the page: a hit at the frame.
    b.uut.core.pid.next = pid.to_bits();
    b.uut.core.tr.need.next = 1u64.to_bits();
    b.uut.core.tr.start.next = true;
    b.uut.core.tr.start_va.next = (vpn << SHIFT | off).to_bits();
    b.tick();
    b.uut.core.tr.start.next = false;
    let mut pa = None;
    for _ in 0..10 {
        b.settle();
        let t = &b.uut.core.tr;
        if t.only_hit.val() {
            pa = Some(t.hit_pa.val().to_u64());
            b.uut.core.tr.hit_take.next = true;
        } else if t.done.val() {
            assert_eq!(t.status.val().to_u64(), 0, "translated");
            pa = Some(t.pa.val().to_u64());
        }
        b.tick();
        b.uut.core.tr.hit_take.next = false;
        if pa.is_some() {
            break;
        }
    }
    assert_eq!(pa, Some(pfn << SHIFT | off));
    // The slow path invalidates it: the look-ahead misses, the core's translation walks.
    b.uut.slow.up.valid.next = true;
    b.uut.slow.up.inval.next = true;
    b.tick();
    b.uut.slow.up.valid.next = false;
    for _ in 0..4 {
        b.tick();
    }
    assert!(!lookup(&mut b).0, "invalidated");
    b.uut.core.tr.start.next = true;
    b.tick();
    b.uut.core.tr.start.next = false;
    let bucket = pt_hash(pid as u16, vpn) as u64 & BUCKET_MASK;
    let mut walked = false;
    for _ in 0..60 {
        b.settle();
        if b.uut.walk_ar.valid.val() {
            assert_eq!(
                b.uut.walk_ar.addr.val().to_u64(),
                bucket * BUCKET_BYTES as u64
            );
            walked = true;
            break;
        }
        b.tick();
    }
    assert!(walked, "the miss walks");
}
