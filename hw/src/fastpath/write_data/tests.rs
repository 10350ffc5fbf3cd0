//! The write-data stage alone: random writes (1 byte to 1 KiB at any lane offset, one or two
//! page pieces) and Append records (frame word, payload moved from its slot lane to the record's,
//! pad) handed over back to back or after gaps, from random slots of a registered-read payload
//! buffer model addressed as the top does (block 0 of the next write's slot while idle), under
//! random `w.ready` back-pressure. Every W beat carries the bytes the write must leave in DRAM
//! under exactly its strobes, `w.last` ends each piece, and the slot is given back once, with
//! the last beat.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};
use std::collections::VecDeque;

/// A write as the executor hands it over.
struct Write {
    slot: u64,
    two: bool,
    o: u64,
    n1: u64,
    len: u64,
    append: bool,
    shift: u64,
    payload_len: u64,
    /// The slot's 32 blocks (the payload in DRAM lanes).
    blocks: Vec<[u8; 64]>,
}

/// One W beat: data, strobes, last.
type WBeat = ([u8; 64], u64, bool);

impl Write {
    fn random(r: &mut Rng, append: bool) -> Write {
        let blocks: Vec<[u8; 64]> = (0..32)
            .map(|_| r.bytes(64).try_into().expect("64 bytes"))
            .collect();
        let slot = r.below(4);
        if append {
            // The record's lane and the payload's lane in the slot are multiples of 8.
            let o = 8 * r.below(8);
            let slot_lane = 8 * r.below(8);
            let payload_len = 1 + r.below(MAX_PAYLOAD as u64);
            let len = replog::footprint(payload_len as u32);
            let (two, n1) = split(r, o, len);
            Write {
                slot,
                two,
                o,
                n1,
                len,
                append,
                shift: (56 + slot_lane - o) / 8,
                payload_len,
                blocks,
            }
        } else {
            let o = r.below(64);
            let len = 1 + r.below(MAX_PAYLOAD as u64);
            let (two, n1) = split(r, o, len);
            Write {
                slot,
                two,
                o,
                n1,
                len,
                append,
                shift: 0,
                payload_len: 0,
                blocks,
            }
        }
    }

    /// Byte `p` of block space (`o + k` is the write's byte k) as DRAM must hold it.
    fn byte(&self, p: u64) -> u8 {
        let slot = |q: u64| self.blocks[(q / 64) as usize][(q % 64) as usize];
        if !self.append {
            return slot(p);
        }
        let r = p - self.o;
        let slot_lane = 8 * self.shift + self.o - 56;
        if r < 8 {
            replog::frame(self.payload_len as u32)[r as usize]
        } else if r < 8 + self.payload_len {
            slot(slot_lane + r - 8)
        } else {
            0
        }
    }

    /// The W beats, per piece: the blocks holding the piece's bytes, strobed to them.
    fn beats(&self) -> Vec<WBeat> {
        let pieces = if self.two {
            vec![
                (self.o, self.o + self.n1),
                (self.o + self.n1, self.o + self.len),
            ]
        } else {
            vec![(self.o, self.o + self.len)]
        };
        let mut out = Vec::new();
        for (lo, hi) in pieces {
            let (first, end) = (lo / 64, hi.div_ceil(64));
            for j in first..end {
                let mut data = [0u8; 64];
                let mut strb = 0u64;
                for (l, d) in data.iter_mut().enumerate() {
                    let p = 64 * j + l as u64;
                    if lo <= p && p < hi {
                        *d = self.byte(p);
                        strb |= 1 << l;
                    }
                }
                out.push((data, strb, j + 1 == end));
            }
        }
        out
    }
}

/// Two pieces when the write crosses a (64-byte aligned) page boundary: the first ends on a
/// block boundary.
fn split(r: &mut Rng, o: u64, len: u64) -> (bool, u64) {
    let first_block_end = 64 * (o / 64 + 1);
    if o + len > first_block_end && r.below(2) == 0 {
        let ends: Vec<u64> = (1..)
            .map(|k| 64 * k)
            .take_while(|&e| e < o + len)
            .filter(|&e| e > o)
            .collect();
        let e = ends[r.below(ends.len() as u64) as usize];
        (true, e - o)
    } else {
        (false, len)
    }
}

fn run(seed: u64, writes: usize, appends: bool, eager: bool) -> u64 {
    let mut r = Rng(seed);
    let mut b = Bench::new(WriteData::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;

    let mut todo: VecDeque<Write> = (0..writes)
        .map(|_| {
            let append = appends && r.below(2) == 0;
            Write::random(&mut r, append)
        })
        .collect();
    // The write being streamed: its slot image, expected beats and how many came.
    let mut cur: Option<(Write, Vec<WBeat>, usize)> = None;
    let mut read_data = [0u8; 64];
    let (mut done, mut cycles) = (0usize, 0u64);
    while done < writes {
        assert!(cycles < 100_000, "stuck after {done} writes");
        let busy_before = cur.is_some();
        b.uut.buf_data.next = bytes_to_bits(&read_data);
        b.uut.w.ready.next = eager || r.below(3) != 0;
        let start = !busy_before && !todo.is_empty() && (eager || r.below(2) == 0);
        b.uut.job.start.next = start;
        if let Some(w) = todo.front() {
            b.uut.start_slot.next = w.slot.to_bits();
            b.uut.job.two.next = w.two;
            b.uut.job.o.next = w.o.to_bits();
            b.uut.job.n1.next = w.n1.to_bits();
            b.uut.job.len.next = w.len.to_bits();
            b.uut.job.append.next = w.append;
            b.uut.start_shift.next = w.shift.to_bits();
            b.uut.start_payload_len.next = w.payload_len.to_bits();
        }
        b.settle();
        assert_eq!(b.uut.w.own.val(), busy_before, "busy at cycle {cycles}");
        let mut released = b.uut.freed.val().to_u64();
        if let Some((w, want, got)) = cur.as_mut() {
            assert_eq!(b.uut.slot.val().to_u64(), w.slot);
            if b.uut.w.valid.val() && b.uut.w.ready.val() {
                let data: [u8; 64] = bits_to_bytes(b.uut.w.data.val())
                    .try_into()
                    .expect("64 bytes");
                let strb = b.uut.w.strb.val().to_u64();
                let last = b.uut.w.last.val();
                let (wd, ws, wl) = want[*got];
                assert_eq!(strb, ws, "strobes of beat {got} of write {done}");
                for l in 0..64 {
                    if strb >> l & 1 == 1 {
                        assert_eq!(data[l], wd[l], "lane {l} of beat {got} of write {done}");
                    }
                }
                assert_eq!(last, wl, "last of beat {got} of write {done}");
                *got += 1;
                if *got == want.len() {
                    assert_eq!(released, 1 << w.slot, "release with the last beat");
                    released = 0;
                    cur = None;
                    done += 1;
                }
            }
        }
        assert_eq!(released, 0, "release at cycle {cycles}");
        // The payload buffer: the stage's address while busy, else block 0 of the next
        // write's slot (the top's idle address); the data comes back a cycle later.
        let address = if b.uut.w.own.val() {
            b.uut.buf_address.val().to_u64()
        } else {
            todo.front().map_or(0, |w| w.slot << 5)
        };
        let image = if start {
            todo.front()
        } else {
            cur.as_ref().map(|c| &c.0).or(todo.front())
        };
        read_data = match image {
            Some(w) if address >> 5 == w.slot => w.blocks[(address & 31) as usize],
            _ => [0xEE; 64],
        };
        if start {
            let w = todo.pop_front().expect("a write");
            let want = w.beats();
            cur = Some((w, want, 0));
        }
        b.tick();
        cycles += 1;
    }
    cycles
}

#[test]
fn writes_leave_their_bytes_under_their_strobes() {
    for seed in [1u64, 0xdead_beef, 0x1234_5678_9abc] {
        run(seed, 150, false, false);
        run(seed, 150, false, true);
    }
}

#[test]
fn append_records_are_framed_moved_and_padded() {
    for seed in [2u64, 0xfeed, 0x9abc_def0] {
        run(seed, 150, true, false);
        run(seed, 150, true, true);
    }
}
