//! The translate stage alone, against a TLB model (answers two cycles after the lookup, like
//! `crate::tlb::Tlb`, and takes the page-fault unit's inserts), the AXI DRAM model holding a
//! crowded page table of 8 buckets (built with `proto::pte`), a free-page FIFO filled and left
//! empty at random, and a slow-path ring whose room and readiness change at random. 4,000
//! translations of pages of three RASes: TLB hits (mapped, allocated-unmapped, missing
//! permissions), walks (valid, allocated, missing, forbidden PTEs), faults with and without a
//! free page or room for the notice; the page looked up by the executor (Dispatch's
//! `start_looked`) or by the stage a cycle later; a hit taken
//! by the executor (`hit_take`) or left to `done`; back-to-back starts in the `done` cycle; half
//! of Dispatch's pages hashed by the look-ahead (`start_ahead`, the hash ready 0..15 cycles
//! after the start): such a miss's bucket read goes out the cycle after the later of the hash
//! and the TLB's answer (not after a hash of its own); a walked page that is mapped and
//! permitted is offered as `only_hit` in the walk's result cycle (its TLB insert the cycle
//! after), and taken or left to `done`.
//!
//! Every result (status, PA) against what `proto` implies for the state at the start; every
//! fault's PTE write-back (address, bytes), PAGE_MAPPED notice (decoded by
//! `proto::ring::Descriptor`) and TLB insert; a hit's latency (`only_hit` 2 or 4 cycles after
//! `start`, `done` one later).

use super::*;
use crate::bench::Bench;
use crate::tb::{AxiDram, Memory, Rng, SparseMemory};
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::consts::{BUCKET_BYTES, PTE_BYTES};
use clio_proto::pt_hash::bucket_index;
use clio_proto::pte::{bucket_lookup, BucketLookup, Pte};
use std::collections::{HashMap, VecDeque};

const SHIFT: u32 = 12;
const BUCKET_BITS: u32 = 3;

/// A TLB entry of the model: frame (or the PTE's location when allocated), permissions.
#[derive(Clone, Copy, Debug)]
struct Entry {
    pfn: u64,
    perms: u8,
    alloc: bool,
}

/// What a translation must give.
#[derive(Clone, Debug, PartialEq)]
struct Want {
    status: Status,
    /// The frame when OK.
    pfn: Option<u64>,
    /// A TLB hit on a mapped, permitted page (`only_hit`).
    only_hit: bool,
    /// A fault: the PTE's location (`bucket << 4 | slot`), its permissions, the frame taken.
    fault: Option<(u64, u8, u64)>,
}

struct World {
    tlb: HashMap<(u16, u64), Entry>,
    /// Every PTE placed: pid, vpn, its location `bucket << 4 | slot`, permissions.
    placed: Vec<(u16, u64, u64, u8)>,
    dram: AxiDram<SparseMemory>,
    free: VecDeque<u64>,
}

impl World {
    fn want(&self, pid: u16, vpn: u64, need: u8, room: bool) -> Want {
        let fault = |loc: u64, perms: u8| match self.free.front() {
            _ if !room => Want {
                status: Status::RetryLater,
                pfn: None,
                only_hit: false,
                fault: None,
            },
            None => Want {
                status: Status::RetryLater,
                pfn: None,
                only_hit: false,
                fault: None,
            },
            Some(&pfn) => Want {
                status: Status::Ok,
                pfn: Some(pfn),
                only_hit: false,
                fault: Some((loc, perms, pfn)),
            },
        };
        let fail = |status| Want {
            status,
            pfn: None,
            only_hit: false,
            fault: None,
        };
        if let Some(e) = self.tlb.get(&(pid, vpn)) {
            if e.perms & need != need {
                return fail(Status::Permission);
            }
            if e.alloc {
                return fault(e.pfn, e.perms);
            }
            return Want {
                status: Status::Ok,
                pfn: Some(e.pfn),
                only_hit: true,
                fault: None,
            };
        }
        let bucket = bucket_index(pid, vpn, BUCKET_BITS);
        let img: [u8; BUCKET_BYTES] = self
            .dram
            .mem()
            .bytes(bucket * BUCKET_BYTES as u64, BUCKET_BYTES)
            .try_into()
            .expect("a bucket");
        match bucket_lookup(&img, pid, vpn) {
            BucketLookup::Missing => fail(Status::Unmapped),
            BucketLookup::Found(_, p) if p.perms & need != need => fail(Status::Permission),
            BucketLookup::Found(i, p) if !p.valid => fault(bucket << 4 | i as u64, p.perms),
            BucketLookup::Found(_, p) => Want {
                status: Status::Ok,
                pfn: Some(p.pfn),
                only_hit: false,
                fault: None,
            },
        }
    }
}

/// A page table of 8 buckets with PTEs of pids 1..=3, vpns 0..48 (a quarter missing; some
/// allocated, some mapped; permissions at random); some allocated PTEs and some mapped ones
/// also in the TLB (as their PTE_WRITE puts them there).
fn world(r: &mut Rng) -> World {
    let mut mem = SparseMemory::default();
    let mut tlb = HashMap::new();
    let mut placed = vec![];
    let mut fill = [0u64; 8];
    for pid in 1..=3u16 {
        for vpn in 0..48u64 {
            if r.below(4) == 0 {
                continue;
            }
            let bucket = bucket_index(pid, vpn, BUCKET_BITS);
            if fill[bucket as usize] == 16 {
                continue;
            }
            let slot = fill[bucket as usize];
            fill[bucket as usize] += 1;
            let mut p = Pte::allocated(pid, vpn, r.below(4) as u8);
            if r.below(2) == 0 {
                p.valid = true;
                p.pfn = 0x100 + r.below(1 << 20);
            }
            mem.write(bucket * BUCKET_BYTES as u64 + slot * 16, &p.to_bytes());
            placed.push((pid, vpn, bucket << 4 | slot, p.perms));
            if r.below(3) == 0 {
                let pfn = if p.valid { p.pfn } else { bucket << 4 | slot };
                tlb.insert(
                    (pid, vpn),
                    Entry {
                        pfn,
                        perms: p.perms,
                        alloc: !p.valid,
                    },
                );
            }
        }
    }
    World {
        tlb,
        placed,
        dram: AxiDram::new(mem, 5, 0),
        free: VecDeque::new(),
    }
}

/// The request under way.
struct Cur {
    pid: u16,
    vpn: u64,
    va: u64,
    need: u8,
    want: Want,
    start: u64,
    issue: bool,
    take: bool,
    seen_hit: bool,
    pte: Option<(u64, [u8; PTE_BYTES])>,
    notices: u32,
    inserted: bool,
    /// Hashed ahead: the cycle its hash is ready (`hashed.ok`).
    ahead: Option<u64>,
    /// A bucket read went out.
    walked: bool,
    /// A walk finds the page mapped and permitted: offered as `only_hit` before `done`.
    walk_hit: bool,
}

#[test]
fn translations_match_the_page_table() {
    let mut r = Rng(0x7A4E);
    let mut w = world(&mut r);
    let mut b = Bench::new(Translate::default());
    b.uut.page_shift.next = (SHIFT as u64).to_bits();
    b.uut.bucket_mask.next = ((1u64 << BUCKET_BITS) - 1).to_bits();
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    // TLB lookups (pid, vpn) in flight, answered two cycles after.
    let mut lookups: VecDeque<(u64, u16, u64)> = VecDeque::new();
    let mut cur: Option<Cur> = None;
    let mut room = true;
    let mut next_frame = 0x8000_0000u64;
    let (mut done_n, mut hits, mut walks, mut faults, mut taken) = (0u32, 0u32, 0u32, 0u32, 0u32);
    let mut statuses: HashMap<u8, u32> = HashMap::new();
    let mut pte_held = 0u64;
    let mut pte_delay = 0u64;
    let mut ahead_walks = 0u32;
    let mut walk_hits = 0u32;
    // A walked page taken as a hit this cycle: (pid, vpn, frame) of its TLB insert, due next.
    let mut taken_walk: Option<(u16, u64, Option<u64>)> = None;
    let mut cycle = 0u64;
    while done_n < 4000 {
        assert!(cycle < 400_000, "stuck after {done_n} translations");
        // The environment: the TLB's answer, the DRAM's R channel, the ring, the writer.
        let (hit, e) = match lookups.front() {
            Some(&(t, pid, vpn)) if t + 2 == cycle => {
                lookups.pop_front();
                match w.tlb.get(&(pid, vpn)) {
                    Some(e) => (true, *e),
                    None => (
                        false,
                        Entry {
                            pfn: r.next() & 0xFF_FFFF_FFFF,
                            perms: 3,
                            alloc: false,
                        },
                    ),
                }
            }
            _ => (
                false,
                Entry {
                    pfn: r.next() & 0xFF_FFFF_FFFF,
                    perms: 3,
                    alloc: r.below(2) == 0,
                },
            ),
        };
        b.uut.tlb.hit.next = hit;
        b.uut.tlb.alloc.next = e.alloc;
        b.uut.tlb.perms.next = (e.perms as u64).to_bits();
        b.uut.tlb.pfn.next = e.pfn.to_bits();
        b.uut.tlb.gen.next = 0u64.to_bits();
        let d = w.dram.drive(cycle);
        b.uut.r.valid.next = d.r_valid;
        b.uut.r.last.next = d.r_last;
        b.uut.r.data.next = bytes_to_bits(w.dram.r_data());
        b.uut.ar.ready.next = r.below(4) != 0;
        b.uut.notice_room.next = room;
        b.uut.notice_ready.next = r.below(3) != 0;
        b.uut.w_free.next = r.below(4) != 0;
        b.uut.pte_done.next = pte_held > 0 && pte_held >= pte_delay;
        b.uut.exec.start.next = false;
        b.uut.start_looked.next = false;
        b.uut.exec.hit_take.next = false;
        b.uut.fp.valid.next = false;
        b.uut.start_ahead.next = false;
        b.uut.hashed.ok.next = false;
        if let Some(c) = &cur {
            b.uut.pid.next = (c.pid as u64).to_bits();
            b.uut.exec.need.next = (c.need as u64).to_bits();
            b.uut.hashed.ok.next = c.ahead.is_some_and(|t| cycle >= t);
            b.uut.hashed.value.next = (clio_proto::pt_hash::pt_hash(c.pid, c.vpn) as u64).to_bits();
        }
        b.settle();
        // The page-fault unit's TLB insert: the translation's under way, or (the cycle after)
        // that of a walked page the executor took as `only_hit` in the walk's result cycle.
        let u = &b.uut;
        let pending = taken_walk.take();
        if u.ti.valid.val() {
            let (pid, vpn, want_pfn) = match (pending, &cur) {
                (Some(p), _) => p,
                (None, Some(c)) => (c.pid, c.vpn, c.want.pfn),
                (None, None) => panic!("an insert belongs to a translation"),
            };
            assert_eq!(
                (u.ti.pid.val().to_u64(), u.ti.vpn.val().to_u64()),
                (pid as u64, vpn)
            );
            let pfn = u.ti.pfn.val().to_u64();
            assert_eq!(Some(pfn), want_pfn, "the frame inserted");
            w.tlb.insert(
                (pid, vpn),
                Entry {
                    pfn,
                    perms: u.ti.perms.val().to_u64() as u8,
                    alloc: false,
                },
            );
            if let (None, Some(c)) = (pending, &mut cur) {
                c.inserted = true;
            }
        } else {
            assert!(
                pending.is_none(),
                "a walked page taken as a hit is inserted the next cycle"
            );
        }
        // The result of the request under way.
        let mut finished = false;
        if let Some(c) = &mut cur {
            let u = &b.uut;
            if u.exec.only_hit.val() {
                assert!(
                    c.want.only_hit || c.walk_hit,
                    "only_hit for {:?}, want {:?}",
                    (c.pid, c.vpn),
                    c.want
                );
                assert!(!c.seen_hit);
                c.seen_hit = true;
                let lat = cycle - c.start;
                if c.want.only_hit {
                    assert_eq!(lat, if c.issue { 2 } else { 4 }, "only_hit latency");
                } else {
                    assert!(
                        c.walked && !c.inserted,
                        "a walked page, before its TLB insert"
                    );
                    walk_hits += 1;
                }
                let pa = u.exec.hit_pa.val().to_u64();
                assert_eq!(pa, c.want.pfn.expect("a frame") << SHIFT | (c.va & 0xFFF));
                if c.take {
                    b.uut.exec.hit_take.next = true;
                    finished = true;
                    taken += 1;
                }
            }
            let u = &b.uut;
            if u.exec.done.val() {
                assert!(!finished, "done after the hit was taken");
                let st = u.exec.status.val().to_u64() as u8;
                assert_eq!(
                    st,
                    c.want.status as u8,
                    "status of {:?} need {}: {:?}",
                    (c.pid, c.vpn),
                    c.need,
                    c.want
                );
                if let Some(pfn) = c.want.pfn {
                    assert_eq!(
                        u.exec.pa.val().to_u64(),
                        pfn << SHIFT | (c.va & 0xFFF),
                        "pa"
                    );
                }
                assert_eq!(
                    c.seen_hit,
                    c.want.only_hit || c.walk_hit,
                    "only_hit offered"
                );
                if c.want.only_hit {
                    assert_eq!(cycle - c.start, if c.issue { 3 } else { 5 }, "hit latency");
                }
                if let Some((loc, perms, pfn)) = c.want.fault {
                    let (addr, bytes) = c.pte.expect("a fault writes its PTE back");
                    assert_eq!(addr, loc << 4, "the PTE's address");
                    let mut p = Pte::allocated(c.pid, c.vpn, perms);
                    p.valid = true;
                    p.pfn = pfn;
                    assert_eq!(Pte::from_bytes(&bytes), p, "the PTE written back");
                    assert_eq!(c.notices, 1, "one PAGE_MAPPED notice");
                    faults += 1;
                } else {
                    assert!(c.pte.is_none() && c.notices == 0, "no fault, no write-back");
                }
                *statuses.entry(st).or_default() += 1;
                finished = true;
            }
        }
        if finished {
            let c = cur.take().expect("a request");
            if c.want.status == Status::Ok && c.want.fault.is_none() && !c.want.only_hit {
                if c.seen_hit && c.take {
                    // Taken in the walk's result cycle: its insert comes next cycle.
                    taken_walk = Some((c.pid, c.vpn, c.want.pfn));
                } else {
                    assert!(c.inserted, "a walked PTE goes into the TLB");
                }
            }
            done_n += 1;
        }
        // Between translations: the free FIFO and the ring's room change.
        if cur.is_none() && !finished {
            if r.below(6) == 0 {
                // The slow path unmaps a page: its PTE allocated again (a PTE_WRITE), the TLB
                // forgets it or holds the allocated entry, so it faults once more.
                let (pid, vpn, loc, perms) = w.placed[r.below(w.placed.len() as u64) as usize];
                w.dram
                    .mem_mut()
                    .write(loc << 4, &Pte::allocated(pid, vpn, perms).to_bytes());
                w.tlb.remove(&(pid, vpn));
                if r.below(2) == 0 {
                    w.tlb.insert(
                        (pid, vpn),
                        Entry {
                            pfn: loc,
                            perms,
                            alloc: true,
                        },
                    );
                }
            }
            if r.below(40) == 0 {
                room = !room || r.below(4) == 0;
            }
            if w.free.len() < 30 && r.below(if w.free.is_empty() { 8 } else { 3 }) == 0 {
                b.uut.fp.valid.next = true;
                b.uut.fp.pfn.next = next_frame.to_bits();
                w.free.push_back(next_frame);
                next_frame += 1;
            }
        }
        // A new translation: from idle, or in the cycle the last one is done (not in the cycle
        // a walked page is taken as a hit: the executor then goes to the access, and `pid` and
        // `need` hold for the page-fault unit's insert).
        if cur.is_none() && taken_walk.is_none() && r.below(3) != 0 && !b.uut.fp.valid.val() {
            let pid = 1 + r.below(3) as u16;
            let vpn = r.below(52);
            let va = vpn << SHIFT | r.below(1 << SHIFT);
            let need = 1 + r.below(3) as u8;
            let want = w.want(pid, vpn, need, room);
            let tlb_hit = w.tlb.contains_key(&(pid, vpn));
            if tlb_hit {
                hits += 1;
            } else {
                walks += 1;
            }
            let walk_hit = !tlb_hit && want.status == Status::Ok && want.fault.is_none();
            let issue = r.below(2) == 0;
            let ahead = (issue && r.below(2) == 0).then(|| cycle + r.below(16));
            b.uut.exec.start.next = true;
            b.uut.start_looked.next = issue;
            b.uut.start_ahead.next = ahead.is_some();
            b.uut.hashed.ok.next = ahead == Some(cycle);
            b.uut.hashed.value.next = (clio_proto::pt_hash::pt_hash(pid, vpn) as u64).to_bits();
            b.uut.exec.start_va.next = va.to_bits();
            if issue {
                // Dispatch's own lookup of the page, this cycle (the stage issues none).
                lookups.push_back((cycle, pid, vpn));
            }
            b.uut.pid.next = (pid as u64).to_bits();
            b.uut.exec.need.next = (need as u64).to_bits();
            cur = Some(Cur {
                pid,
                vpn,
                va,
                need,
                want,
                start: cycle,
                issue,
                take: r.below(2) == 0,
                seen_hit: false,
                pte: None,
                notices: 0,
                inserted: false,
                ahead,
                walked: false,
                walk_hit,
            });
        }
        b.settle();
        // What the stage does this cycle.
        let u = &b.uut;
        if u.lk.valid.val() {
            let c = cur.as_ref().expect("a lookup belongs to a translation");
            assert!(!c.issue, "a second lookup of a page the executor looked up");
            assert_eq!(u.lk.pid.val().to_u64(), c.pid as u64);
            assert_eq!(u.lk.vpn.val().to_u64(), c.vpn, "lookup of the start page");
            lookups.push_back((cycle, c.pid, c.vpn));
        }
        if u.pte.load.val() {
            let c = cur.as_mut().expect("a PTE belongs to a translation");
            let bytes: [u8; PTE_BYTES] = bits_to_bytes(u.pte.data.val()).try_into().expect("16");
            c.pte = Some((u.pte.addr.val().to_u64(), bytes));
        }
        if u.notice_valid.val() && u.notice_ready.val() {
            let c = cur.as_mut().expect("a notice belongs to a translation");
            let (_, _, pfn) = c.want.fault.expect("a notice only for a fault");
            // (`SlowPathDesc` encodes it; its bench checks that against `Descriptor::encode`.)
            assert_eq!(
                (
                    u.notice.pid.val().to_u64(),
                    u.notice.vpn.val().to_u64(),
                    u.notice.pfn.val().to_u64()
                ),
                (c.pid as u64, c.vpn, pfn),
                "the PAGE_MAPPED notice"
            );
            c.notices += 1;
        }
        if u.notice_valid.val() || u.pte_write.val() {
            assert!(cur.as_ref().is_some_and(|c| c.want.fault.is_some()));
        }
        if u.notice_valid.val() {
            assert!(
                u.w_free.val(),
                "the notice waits with the write-back for the W channel"
            );
        }
        if u.pte_write.val() {
            if pte_held == 0 {
                pte_delay = r.below(4);
            }
            if u.pte_done.val() {
                // The write-back lands: later walks see the valid PTE.
                let (addr, bytes) = cur.as_ref().and_then(|c| c.pte).expect("a PTE loaded");
                w.dram.mem_mut().write(addr, &bytes);
            }
            pte_held += 1;
        } else {
            pte_held = 0;
        }
        if u.fp.valid.val() {
            assert!(!u.fp.full.val());
        }
        // The fault's frame leaves the FIFO with the page-fault unit's answer.
        if u.pte.load.val() && cur.as_ref().is_some_and(|c| c.want.fault.is_some()) {
            w.free.pop_front();
        }
        if u.ar.valid.val() {
            let c = cur.as_mut().expect("a walk belongs to a translation");
            if let (Some(ready), false) = (c.ahead, c.walked) {
                // Hashed ahead: the bucket read the cycle after the later of the hash and the
                // TLB's answer (2 cycles after the start): the walker's request, then its AR.
                assert_eq!(
                    cycle,
                    ready.max(c.start + 2) + 1,
                    "the walk of a page hashed ahead (start {}, hash ready {ready})",
                    c.start
                );
                ahead_walks += 1;
            }
            c.walked = true;
        }
        if u.ar.valid.val() && u.ar.ready.val() {
            assert!(u.ar.own.val());
            w.dram.ar(
                cycle,
                u.ar.addr.val().to_u64(),
                u.ar.len.val().to_u64() as u8,
            );
        }
        if u.ar.own.val() && u.r.valid.val() {
            w.dram.r_ready();
        }
        b.tick();
        cycle += 1;
    }
    // Every class was seen.
    assert!(
        hits > 800
            && walks > 800
            && faults > 100
            && taken > 100
            && ahead_walks > 150
            && walk_hits > 20,
        "{hits} {walks} {faults} {taken} {ahead_walks} {walk_hits}"
    );
    for s in [
        Status::Ok,
        Status::Permission,
        Status::Unmapped,
        Status::RetryLater,
    ] {
        assert!(
            statuses.get(&(s as u8)).copied().unwrap_or(0) > 50,
            "{s:?}: {statuses:?}"
        );
    }
}
