//! The TLB look-ahead alone, against a TLB model in the testbench (results two cycles after
//! the lookup, like `crate::tlb::Tlb`): random reads, writes and other requests in the four
//! slots (pages near their ends, lengths up to a few KiB, hits, misses, allocated-unmapped
//! pages, missing permissions), the executor's port use at random. Every slot's
//! `ok` and `pa` against what the executor's own lookup would give, and the key of that lookup
//! (`dlk.pid`, `dlk.vpn`, for reads and writes: `use_rw`); a TLB change forgets
//! everything, including a lookup on its way; a freed slot forgets its entry. The class checks
//! kept per slot (read, write, parse with Clio-KV on or off, Append, atomics, pointer chase)
//! against the dispatch decode of the same header.

use super::*;
use crate::bench::Bench;
use crate::fastpath::piece_shift::AXI_BOUNDARY_SHIFT;
use crate::tb::Rng;
use crate::util::bytes_to_bits;
use clio_proto::consts::{MAX_PAYLOAD, MAX_REQUEST_LEN, VA_LIMIT};
use clio_proto::header::{check_read, check_write_segment, field};
use clio_proto::Header;
use std::collections::{HashMap, VecDeque};

const SHIFT: u32 = 12;

/// A TLB entry of the model: frame, permissions, allocated-unmapped.
#[derive(Clone, Copy, Debug)]
struct Entry {
    pfn: u64,
    perms: u8,
    alloc: bool,
}

/// One request in a slot.
#[derive(Clone, Debug)]
struct Req {
    h: Header,
    hdr: [u8; 48],
    op: Opcode,
    pid: u16,
    va: u64,
    len: u64,
}

fn request(r: &mut Rng, i: u32, shift: u32) -> Req {
    let op = match r.below(16) {
        0..=7 => Opcode::Read,
        8..=13 => Opcode::Write,
        // The other classes, for the rest of Dispatch's checks (no lookup for them).
        _ => [
            Opcode::FetchAdd,
            Opcode::CompareAndSwap,
            Opcode::Append,
            Opcode::PointerChase,
            Opcode::KvGet,
            Opcode::KvPut,
            Opcode::Alloc,
        ][r.below(7) as usize],
    };
    let pid = 1 + r.below(3) as u16;
    let page = r.below(6);
    let inpage = match r.below(6) {
        0 => (1 << shift) - 1 - r.below(64),
        // Just below a 4 KiB boundary inside the page.
        1 => (r.below(1 << shift) | 0xFFF) - r.below(64),
        _ => r.below(1 << shift),
    };
    let mut h = Header::request(op, pid, i, (page << shift) | inpage);
    let mut len;
    match op {
        Opcode::Write => {
            h.pkt_index = r.below(3) as u16;
            h.payload_len = 1 + r.below(1024) as u16;
            h.total_len = 4096;
            len = h.payload_len as u64;
        }
        _ => {
            h.total_len = 1 + r.below(4096) as u32;
            len = (h.total_len as u64).min(1024);
        }
    }
    // Now and then a header the dispatch checks refuse: a length of 0 or past
    // MAX_REQUEST_LEN, a segment count that does not match, a range past the VA space.
    // (The packet's first byte stays inside the VA space: the look-ahead's VPN is 36 bits.)
    match r.below(10) {
        0 => h.total_len = [0, MAX_REQUEST_LEN + 1][r.below(2) as usize],
        1 => h.pkt_count = h.pkt_count.wrapping_add(1),
        2 if op == Opcode::Write => {
            h.va = VA_LIMIT - ((h.pkt_index as u64) << 10) - 1 - r.below(h.payload_len as u64)
        }
        2 => h.va = VA_LIMIT - 1 - r.below(h.total_len as u64 + 8),
        _ => {}
    }
    if op != Opcode::Write {
        len = (h.total_len as u64).min(1024);
    }
    let va = h.va + ((h.pkt_index as u64) << 10) * (op == Opcode::Write) as u64;
    if op == Opcode::Append {
        // A record of the header's length, in the packet; now and then misaligned.
        h.total_len = 1 + r.below(1024) as u32;
        h.payload_len = h.total_len as u16;
        h.va &= !7;
        if r.below(4) == 0 {
            h.va |= 1 + r.below(7);
        }
    }
    if !matches!(op, Opcode::Read | Opcode::Write | Opcode::Append) && r.below(4) == 0 {
        // A payload where the class takes none, or an unaligned atomic word.
        h.payload_len = 1 + r.below(64) as u16;
    }
    // Now and then a header `Header::parse` refuses (below): a wrong version, an undefined
    // opcode, a status past the last, a payload past MAX_PAYLOAD.
    let spoil = r.below(24);
    if spoil == 3 {
        h.payload_len = 2000;
    }
    let mut hdr = [0u8; 48];
    hdr.copy_from_slice(&h.to_packet(&[])[..48]);
    // The header as a write packet carries it (`to_packet` takes the length of the payload
    // given, none here).
    hdr[field::PAYLOAD_LEN].copy_from_slice(&h.payload_len.to_be_bytes());
    match spoil {
        0 => hdr[field::VERSION] ^= 1,
        // (Not a read's or write's: the lookup follows the opcode.)
        1 if !matches!(op, Opcode::Read | Opcode::Write) => hdr[field::OPCODE] = 0xEE,
        2 => hdr[field::STATUS] = 0xFF,
        _ => {}
    }
    Req {
        h,
        hdr,
        op,
        pid,
        va,
        len,
    }
}

/// What the executor's lookup gives for `q` with the TLB `tlb`.
fn expect(q: &Req, tlb: &HashMap<(u16, u64), Entry>, shift: u32) -> Option<u64> {
    let need = if q.op == Opcode::Write { 2 } else { 1 };
    let e = tlb.get(&(q.pid, q.va >> shift))?;
    let off = q.va & ((1 << shift) - 1);
    // It fits in one piece: the page, at most 4 KiB (an AXI burst crosses no 4 KiB boundary).
    let piece = shift.min(AXI_BOUNDARY_SHIFT as u32);
    let poff = q.va & ((1 << piece) - 1);
    (!e.alloc && e.perms & need == need && poff + q.len <= 1 << piece)
        .then_some((e.pfn << shift) | off)
}

fn random_tlb(r: &mut Rng) -> HashMap<(u16, u64), Entry> {
    let mut t = HashMap::new();
    for pid in 1..4u16 {
        for vpn in 0..7u64 {
            if r.below(4) != 0 {
                t.insert(
                    (pid, vpn),
                    Entry {
                        pfn: 0x100 + r.below(1 << 20),
                        perms: [1, 2, 3, 3][r.below(4) as usize],
                        alloc: r.below(6) == 0,
                    },
                );
            }
        }
    }
    t
}

/// Pages of 4 KiB, 2 MiB and the largest `page_shift` (2 GiB): the offsets, the fit of the
/// packet's first bytes in the page and the physical address at each.
#[test]
fn looks_ahead_like_the_executors_lookup() {
    for shift in [SHIFT, 21, 31] {
        look_ahead_at(shift);
    }
}

fn look_ahead_at(shift: u32) {
    let mut r = Rng(0x1234_5678_9abc_def1);
    let mut b = Bench::new(TranslateAhead::default());
    b.uut.page_shift.next = (shift as u64).to_bits();
    b.uut.piece_shift.next = (shift as u64).min(AXI_BOUNDARY_SHIFT).to_bits();
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;

    let mut tlb = random_tlb(&mut r);
    let mut slots: [Option<Req>; 4] = Default::default();
    let mut taken = 0u64;
    let mut head = 0usize;
    // Results of lookups issued 0, 1 cycles ago (delivered at 2).
    let mut pipe: VecDeque<Option<Option<Entry>>> = VecDeque::from(vec![None, None]);
    let (mut checked, mut used, mut kills, mut lookups) = (0u64, 0u64, 0u64, 0u64);
    let mut refused = 0u64;
    let mut next_fill = 0usize;
    let mut id = 0u32;
    let mut busy_run = 0u64;
    // The cycle each slot's header came in; dispatches that found the page's hash in.
    let mut arrived = [0u64; 4];
    let mut hashes = 0u64;
    // The dispatch stage's decode, as the reference for the class checks kept per slot; and
    // Clio-KV's enable, which changes now and then (a KV_CONFIG between a header and its
    // dispatch counts).
    let mut dec = crate::fastpath::decode::Decode::default();
    dec.connect_all();
    let mut kv_en = false;
    let mut class_ok = [0u64; 4];
    for cycle in 0..6000u64 {
        if r.below(64) == 0 {
            kv_en = !kv_en;
        }
        b.uut.kv_en.next = kv_en;
        // Frames arrive in slot order; the executor takes and frees them in order.
        let mut freed = 0u64;
        // A frame's header comes in (the ingest stage's first beat): its slot is `headed` from
        // the next cycle.
        let mut arriving: Option<usize> = None;
        if slots[next_fill].is_none() && r.below(3) == 0 {
            let q = request(&mut r, id, shift);
            id += 1;
            b.uut.hdr.data.next = bytes_to_bits(&q.hdr);
            slots[next_fill] = Some(q);
            arriving = Some(next_fill);
            arrived[next_fill] = cycle;
            next_fill = (next_fill + 1) % 4;
        }
        b.uut.hdr.valid.next = arriving.is_some();
        b.uut.hdr.slot.next = (arriving.unwrap_or(0) as u64).to_bits();
        // (The executor dispatches a frame three cycles or more after its first beat: the
        // ingest stage's flush and the take come first.)
        if slots[head].is_some() && r.below(4) == 0 && cycle >= arrived[head] + 3 {
            if taken & (1 << head) == 0 {
                // The executor dispatches it: the look-ahead's answer must be right if it
                // says ok (and it must not say ok for a request that cannot use it).
                b.uut.queue.slot.next = (head as u64).to_bits();
                b.settle();
                let q = slots[head].as_ref().expect("slot");
                // What Dispatch looks up itself when `ok` is low: the packet's first page.
                let rw = matches!(q.op, Opcode::Read | Opcode::Write);
                assert_eq!(b.uut.slot.rw.val(), rw, "cycle {cycle} slot {head}: {q:?}");
                // Its first byte, exact whenever Dispatch uses it (a read; a write whose
                // segment checks hold and ends inside the VA space).
                let wr_exact = q.op == Opcode::Write
                    && check_write_segment(&q.h)
                    && q.h.va as u128 + ((q.h.pkt_index as u128) << 10) + q.h.payload_len as u128
                        <= VA_LIMIT as u128;
                if q.op == Opcode::Read || wr_exact {
                    assert_eq!(
                        b.uut.slot.va.val().to_u64(),
                        q.va,
                        "cycle {cycle} slot {head}: the first byte of {q:?}"
                    );
                }
                if q.op == Opcode::Read {
                    // Its answer's first packet's length (Dispatch's access and response).
                    assert_eq!(
                        b.uut.slot.len.val().to_u64(),
                        (q.h.total_len as u64).min(MAX_PAYLOAD as u64) & 0xFFF,
                        "cycle {cycle} slot {head}: the first packet's length of {q:?}"
                    );
                }
                if rw {
                    let vpn = (q.va >> shift) & ((1 << 36) - 1);
                    assert_eq!(
                        (b.uut.dlk.pid.val().to_u64(), b.uut.dlk.vpn.val().to_u64()),
                        (q.pid as u64, vpn),
                        "cycle {cycle} slot {head}: the executor's lookup of {q:?}"
                    );
                    // The page's hash: in from HASH_LATENCY + 1 cycles after the header at
                    // the latest, and then `proto::pt_hash` of that lookup's key.
                    let due = arrived[head] + crate::hash_unit::HASH_LATENCY as u64 + 1;
                    assert!(
                        b.uut.use_hash.ok.val() || cycle < due,
                        "cycle {cycle} slot {head}: no hash {} cycles after the header",
                        cycle - arrived[head]
                    );
                    if b.uut.use_hash.ok.val() {
                        assert_eq!(
                            b.uut.use_hash.value.val().to_u64(),
                            clio_proto::pt_hash::pt_hash(q.pid, vpn) as u64,
                            "cycle {cycle} slot {head}: the page hash of {q:?}"
                        );
                        hashes += 1;
                    }
                }
                // The dispatch checks, decoded as the header arrived.
                let h = &q.h;
                let in_va = h.va as u128 + ((h.pkt_index as u128) << 10) + h.payload_len as u128
                    <= VA_LIMIT as u128;
                assert_eq!(
                    (
                        b.uut.slot.read_ok.val(),
                        b.uut.slot.write_ok.val(),
                        b.uut.slot.write_in_va.val()
                    ),
                    (check_read(h), check_write_segment(h), in_va),
                    "cycle {cycle} slot {head}: checks of {h:?}"
                );
                refused += !(check_read(h) || check_write_segment(h)) as u64;
                dec.hdr.next = bytes_to_bits(&q.hdr);
                dec.kv_en.next = kv_en;
                assert!(simulate(&mut dec, 1000));
                let flags = (
                    b.uut.slot.parse_ok.val(),
                    b.uut.slot.append_ok.val(),
                    b.uut.slot.atomic_ok.val(),
                    b.uut.slot.chase_ok.val(),
                );
                assert_eq!(
                    flags,
                    (
                        dec.parse_ok.val(),
                        dec.append_ok.val(),
                        dec.atomic_ok.val(),
                        dec.chase_ok.val()
                    ),
                    "cycle {cycle} slot {head} kv_en {kv_en}: class checks of {h:?}"
                );
                for (k, f) in [flags.0, flags.1, flags.2, flags.3].into_iter().enumerate() {
                    class_ok[k] += f as u64;
                }
                if b.uut.slot.ok.val() {
                    let want = expect(q, &tlb, shift);
                    assert_eq!(
                        Some(b.uut.slot.pa.val().to_u64()),
                        want,
                        "cycle {cycle} slot {head}: {q:?}"
                    );
                    used += 1;
                }
                checked += 1;
                taken |= 1 << head;
            } else {
                // Done with it: freed.
                slots[head] = None;
                taken &= !(1 << head);
                freed |= 1 << head;
                head = (head + 1) % 4;
            }
        }
        // A TLB change now and then (an insert, an invalidation).
        let update = r.below(150) == 0;
        if update {
            tlb = random_tlb(&mut r);
            kills += 1;
        }
        let headed: u64 = (0..4)
            .filter(|&k| slots[k].is_some() && arriving != Some(k))
            .map(|k| 1 << k)
            .sum();
        b.uut.headed.next = headed.to_bits();
        b.uut.queue.taken.next = taken.to_bits();
        b.uut.freed.next = freed.to_bits();
        let first_untaken = (0..4)
            .map(|d| (head + d) % 4)
            .find(|&k| taken & (1 << k) == 0)
            .unwrap_or(head);
        b.uut.queue.head.next = (first_untaken as u64).to_bits();
        // The slot the executor holds next cycle (its key is registered for Dispatch).
        b.uut.queue.next_slot.next = (head as u64).to_bits();
        // The executor takes the port now and then, sometimes for a long stretch (a walk's
        // retries), so prepared lookups wait while their slots are taken and freed.
        if busy_run > 0 {
            busy_run -= 1;
            b.uut.port_free.next = false;
        } else {
            if r.below(10) == 0 {
                busy_run = r.below(24);
            }
            b.uut.port_free.next = r.below(4) != 0;
        }
        b.uut.tlb_update.next = update;
        // The TLB's answer to the lookup of two cycles ago.
        let res = pipe.pop_front().flatten();
        b.uut.res.hit.next = matches!(res, Some(Some(_)));
        let e = res.flatten().unwrap_or(Entry {
            pfn: r.below(1 << 30),
            perms: r.below(4) as u8,
            alloc: r.below(2) == 0,
        });
        b.uut.res.pfn.next = e.pfn.to_bits();
        b.uut.res.perms.next = (e.perms as u64).to_bits();
        b.uut.res.alloc.next = e.alloc;
        b.settle();
        if b.uut.lk.valid.val() {
            assert!(
                b.uut.port_free.val(),
                "looked up while the executor uses the port"
            );
            lookups += 1;
            let key = (
                b.uut.lk.pid.val().to_u64() as u16,
                b.uut.lk.vpn.val().to_u64(),
            );
            // The TLB this lookup sees is the one after this cycle's change (none in a
            // change's cycle: the block must not look up then).
            assert!(!update, "looked up in the cycle of a TLB change");
            pipe.push_back(Some(tlb.get(&key).copied()));
        } else {
            pipe.push_back(None);
        }
        b.tick();
        // After a change, nothing is ok until looked up again.
        if update {
            for k in 0..4 {
                b.uut.queue.slot.next = (k as u64).to_bits();
                b.settle();
                assert!(!b.uut.slot.ok.val(), "slot {k} still ok after a TLB change");
            }
        }
        for k in 0..4 {
            if freed & (1 << k) != 0 {
                b.uut.queue.slot.next = (k as u64).to_bits();
                b.settle();
                assert!(!b.uut.slot.ok.val(), "freed slot {k} still ok");
            }
        }
    }
    // The look-ahead did its job, not just stayed silent.
    assert!(checked > 500, "{checked} dispatches");
    assert!(hashes > 200, "{hashes} dispatches found their page hashed");
    assert!(
        refused > checked / 20,
        "{refused} of {checked} refused by the checks"
    );
    assert!(
        used > checked / 5,
        "{used} of {checked} dispatches translated ahead"
    );
    assert!(
        kills > 10 && lookups > 500,
        "{kills} kills, {lookups} lookups"
    );
    // Each class check seen passing (and, above, failing: `refused`, malformed headers).
    assert!(
        class_ok.iter().all(|&n| n > 5),
        "parse, append, atomic, chase passed {class_ok:?} times"
    );
}

/// A slot refilled while its earlier frame's page hash is still in the hash unit: the earlier
/// hash (coming out first) is never offered for the new frame; the new frame's is, once out.
#[test]
fn a_refilled_slot_never_offers_the_earlier_frames_hash() {
    let mut r = Rng(0x4A5_4B1D);
    let mut b = Bench::new(TranslateAhead::default());
    b.uut.page_shift.next = (SHIFT as u64).to_bits();
    b.uut.piece_shift.next = (SHIFT as u64).min(AXI_BOUNDARY_SHIFT).to_bits();
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    let rw = |r: &mut Rng, i| loop {
        let q = request(r, i, SHIFT);
        if q.op == Opcode::Read && q.pid == 1 {
            return q;
        }
    };
    let mut stale = 0;
    for i in 0..300u32 {
        let (first, second) = (rw(&mut r, 2 * i), rw(&mut r, 2 * i + 1));
        let gap = 1 + r.below(10);
        b.uut.queue.slot.next = 0u64.to_bits();
        b.uut.hdr.slot.next = 0u64.to_bits();
        b.uut.hdr.data.next = bytes_to_bits(&first.hdr);
        b.uut.hdr.valid.next = true;
        b.tick();
        b.uut.hdr.valid.next = false;
        // Freed and refilled `gap` cycles later (the executor took the first frame at once).
        for _ in 0..gap - 1 {
            b.tick();
        }
        b.uut.freed.next = 1u64.to_bits();
        b.tick();
        b.uut.freed.next = 0u64.to_bits();
        b.uut.hdr.data.next = bytes_to_bits(&second.hdr);
        b.uut.hdr.valid.next = true;
        b.tick();
        b.uut.hdr.valid.next = false;
        let want = clio_proto::pt_hash::pt_hash(second.pid, second.va >> SHIFT) as u64;
        let old = clio_proto::pt_hash::pt_hash(first.pid, first.va >> SHIFT) as u64;
        let mut seen = false;
        for c in 0..20 {
            b.settle();
            if b.uut.use_hash.ok.val() {
                assert_eq!(
                    b.uut.use_hash.value.val().to_u64(),
                    want,
                    "#{i}: cycle {c} after the refill (gap {gap}): the earlier frame's hash"
                );
                seen = true;
            } else {
                assert!(!seen, "#{i}: the hash went away");
            }
            b.tick();
        }
        assert!(seen, "#{i}: the new frame's hash never came");
        stale += (want != old) as u32;
        b.uut.freed.next = 1u64.to_bits();
        b.tick();
        b.uut.freed.next = 0u64.to_bits();
    }
    assert!(stale > 200, "frames with a different hash: {stale}");
}
