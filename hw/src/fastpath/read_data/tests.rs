//! The read-data stage alone: random jobs (reads of 1 byte to 1 KiB at any lane offset, and
//! payload-less responses) offered back to back or after random gaps, R beats from a DRAM
//! model that holds a read's blocks in order behind the earlier reads' and offers them with
//! random gaps, and a transmit-stage model that takes responses when free and reads each beat
//! of its txbuf slot as it sends it, under random back-pressure. Every response comes out
//! whole, in order, with its route and CRC; `r.idle` is exact every cycle; back-to-back
//! one-beat reads with the DRAM always ready take two cycles each.

use super::*;
use crate::bench::Bench;
use crate::tb::{ResponseJob, Rng};
use crate::util::{bits_to_bytes, bytes_to_bits};
use std::collections::VecDeque;

/// A job as the executor hands it over, and the response it must produce.
type Job = ResponseJob;

fn job(r: &mut Rng, only: bool, max_payload: u64) -> Job {
    ResponseJob::random(r, only, max_payload)
}

struct Run {
    responses: usize,
    cycles: u64,
    /// The job queue was full in some cycle (so `room`'s check saw both values).
    full_seen: bool,
}

/// `jobs` jobs; `only_every`: one in that many is payload-less (0: none); the rest as named.
fn run(seed: u64, jobs: usize, max_payload: u64, only_every: u64, eager: bool) -> Run {
    let mut r = Rng(seed);
    let mut b = Bench::new(ReadData::default());
    b.uut.reset.next = true;
    b.tick();
    b.tick();
    b.uut.reset.next = false;

    let mut todo: VecDeque<Job> = (0..jobs)
        .map(|_| {
            let only = only_every != 0 && r.below(only_every) == 0;
            job(&mut r, only, max_payload)
        })
        .collect();
    let want: Vec<(Vec<u8>, [u8; 32])> = todo.iter().map(|j| (j.want.clone(), j.route)).collect();
    // R beats the DRAM owes, in order (a read's blocks behind the earlier reads'), and the
    // reads whose beats are not all taken yet (for `r.idle`).
    let mut dram: VecDeque<[u8; 64]> = VecDeque::new();
    let mut buf = vec![[0u8; 64]; 64];
    // The transmit model: the response being sent (beat 0, slot, beats, route) and its beat.
    let mut sending: Option<([u8; 64], bool, usize, [u8; 32])> = None;
    let mut beat = 0usize;
    let mut frame: Vec<u8> = Vec::new();
    let mut got: Vec<(Vec<u8>, [u8; 32])> = Vec::new();
    let mut cycles = 0u64;
    let mut full_seen = false;
    while got.len() < want.len() {
        assert!(cycles < 200_000, "stuck after {} responses", got.len());
        let ready = eager || r.below(4) != 0;
        let send_now = sending.is_some() && ready;
        let last_now = send_now && sending.as_ref().is_some_and(|s| beat + 1 == s.2);
        b.uut.xmit_free.next = sending.is_none() || last_now;
        let r_valid = !dram.is_empty() && (eager || r.below(3) != 0);
        b.uut.r.valid.next = r_valid;
        b.uut.r.data.next = bytes_to_bits(dram.front().unwrap_or(&[0u8; 64]));
        let offer = !todo.is_empty() && (eager || r.below(2) == 0);
        b.uut.job.valid.next = offer;
        if let Some(j) = todo.front() {
            b.uut.job.only.next = j.only;
            b.uut.job.o.next = j.o.to_bits();
            b.uut.job.kt.next = j.kt.to_bits();
            b.uut.job.len.next = j.len.to_bits();
            b.uut.job.hdr.next = bytes_to_bits(&j.hdr);
            b.uut.job.route.next = bytes_to_bits(&j.route);
        }
        b.settle();
        // `r.idle`: no read has R beats to come (its address is out once its job is
        // offered and taken).
        assert_eq!(
            b.uut.r.idle.val(),
            dram.is_empty(),
            "reads_idle at cycle {cycles}"
        );
        // The queue's room comes from its count: it must be the FIFO's own "not full" every
        // cycle (a count one off would lose a job into a full FIFO, or waste an entry).
        assert_eq!(
            b.uut.room.val(),
            !b.uut.queue.full.val(),
            "room at cycle {cycles}"
        );
        full_seen |= b.uut.queue.full.val();
        // The transmit model sends a beat: beat 0 from the load, the rest from its slot.
        if send_now {
            let (beat0, slot, n, route) = sending.expect("sending");
            let data = if beat == 0 {
                beat0
            } else {
                buf[(slot as usize) << 5 | beat]
            };
            frame.extend_from_slice(&data);
            beat += 1;
            if beat == n {
                let len = want[got.len()].0.len();
                frame.truncate(len);
                got.push((std::mem::take(&mut frame), route));
                sending = None;
            }
        }
        if b.uut.tx.valid.val() {
            assert!(sending.is_none(), "load while the transmit stage is busy");
            let len = b.uut.tx.len.val().to_u64() as usize;
            let beat0: [u8; 64] = bits_to_bytes(b.uut.tx.beat0.val())
                .try_into()
                .expect("64 bytes");
            let route: [u8; 32] = bits_to_bytes(b.uut.tx.route.val())
                .try_into()
                .expect("32 bytes");
            sending = Some((beat0, b.uut.tx.slot.val(), len.div_ceil(64), route));
            beat = 0;
        }
        if r_valid && b.uut.r.ready.val() {
            dram.pop_front();
        }
        if offer && b.uut.job.ready.val() {
            let j = todo.pop_front().expect("a job");
            dram.extend(j.blocks.iter().copied());
        }
        if b.uut.buf_write_enable.val() {
            let a = b.uut.buf_write_address.val().to_u64() as usize;
            buf[a] = bits_to_bytes(b.uut.buf_write_data.val())
                .try_into()
                .expect("64 bytes");
        }
        b.tick();
        cycles += 1;
    }
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.0.len(), w.0.len(), "length of response {i}");
        assert!(
            g.0 == w.0,
            "bytes of response {i}: {:02x?} != {:02x?}",
            g.0,
            w.0
        );
        assert_eq!(g.1, w.1, "route of response {i}");
    }
    Run {
        responses: got.len(),
        cycles,
        full_seen,
    }
}

#[test]
fn responses_are_built_whole_and_in_order() {
    let mut full_seen = false;
    for seed in [1u64, 0xdead_beef, 0x1234_5678_9abc] {
        full_seen |= run(seed, 150, MAX_PAYLOAD as u64, 4, false).full_seen;
        full_seen |= run(seed, 150, 200, 3, true).full_seen;
    }
    assert!(full_seen, "no run filled the job queue");
}

#[test]
fn payload_less_responses_alone() {
    let out = run(3, 100, 1, 1, false);
    assert_eq!(out.responses, 100);
}

#[test]
fn back_to_back_one_beat_reads_take_two_cycles_each() {
    // Reads of 1..=16 bytes at lane offsets < 48 fit one DRAM block and a 2-beat response:
    // the stage's R beat and flush cycle, the transmit stage's two beats.
    let mut r = Rng(11);
    let n = 200;
    let out = run(r.next(), n, 16, 0, true);
    assert_eq!(out.responses, n);
    // Blocks may straddle (offset + length > 64): two R beats then, so allow some slack.
    assert!(
        out.cycles <= 2 * n as u64 + n as u64 / 2 + 8,
        "{} cycles for {n} one-beat reads",
        out.cycles
    );
}
