//! The transmit stage alone: random responses (1 to 17 beats, any length) loaded as soon as
//! the stage is free or after random gaps, from alternating txbuf slots (a registered-read
//! buffer model in the testbench), with random `tx_ready` back-pressure. Every response comes
//! out whole and in order (beat 0 from the load, the rest from its slot, trimmed to its length,
//! its route on every beat); back to back loads leave no idle cycle between responses.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::tb::StreamSink;
use crate::util::{bits_to_bytes, bytes_to_bits};
use std::collections::VecDeque;

fn run(seed: u64, always_ready: bool, back_to_back: bool) -> (usize, u64, u64) {
    let mut r = Rng(seed);
    let mut b = Bench::new(Transmit::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;

    // Responses to send: bytes and route.
    let mut todo: VecDeque<(Vec<u8>, [u8; 32])> = (0..200)
        .map(|_| {
            let len = 1 + r.below(1088) as usize;
            let mut route = [0u8; 32];
            route.copy_from_slice(&r.bytes(32));
            (r.bytes(len), route)
        })
        .collect();
    let want: Vec<(Vec<u8>, [u8; 32])> = todo.iter().cloned().collect();
    let mut buf = vec![[0u8; 64]; 64];
    let mut read_data = [0u8; 64];
    let mut slot = false;
    let mut sink: StreamSink<[u8; 32]> = StreamSink::default();
    let mut got: Vec<(Vec<u8>, [u8; 32])> = Vec::new();
    let (mut cycles, mut beats) = (0u64, 0u64);
    while got.len() < want.len() {
        assert!(cycles < 100_000, "stuck after {} responses", got.len());
        b.uut.buf_data.next = bytes_to_bits(&read_data);
        b.uut.tx_ready.next = always_ready || r.below(4) != 0;
        b.uut.job.valid.next = false;
        b.settle();
        let load = b.uut.free.val() && !todo.is_empty() && (back_to_back || r.below(3) == 0);
        if load {
            let (bytes, route) = todo.pop_front().expect("a response");
            // Beat 0 from the load; beats 1.. into the slot (the read-data stage's job).
            let mut beat0 = [0u8; 64];
            let n0 = bytes.len().min(64);
            beat0[..n0].copy_from_slice(&bytes[..n0]);
            for (k, chunk) in bytes.chunks(64).enumerate().skip(1) {
                let mut beat = [0xA5u8; 64];
                beat[..chunk.len()].copy_from_slice(chunk);
                buf[(slot as usize) << 5 | k] = beat;
            }
            b.uut.job.valid.next = true;
            b.uut.job.len.next = (bytes.len() as u64).to_bits();
            b.uut.job.route.next = bytes_to_bits(&route);
            b.uut.job.beat0.next = bytes_to_bits(&beat0);
            b.uut.job.slot.next = slot;
            slot = !slot;
            b.settle();
        }
        if b.uut.tx_valid.val() && b.uut.tx_ready.val() {
            beats += 1;
            let data: [u8; 64] = bits_to_bytes(b.uut.tx_data.val())
                .try_into()
                .expect("64 bytes");
            let route: [u8; 32] = bits_to_bytes(b.uut.tx_route.val())
                .try_into()
                .expect("32 bytes");
            let keep = b.uut.tx_keep.val().to_u64();
            if let Some((meta, f)) = sink.take(&data, keep, b.uut.tx_last.val(), || route) {
                assert_eq!(meta, route, "route of response {}", got.len());
                got.push((f, meta));
            }
            assert_eq!(b.uut.sent.val(), b.uut.tx_last.val());
        }
        // The buffer's registered read: the address of this cycle is the data of the next.
        read_data = buf[b.uut.buf_address.val().to_u64() as usize];
        b.tick();
        cycles += 1;
    }
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert_eq!(g.0.len(), w.0.len(), "length of response {i}");
        assert!(g.0 == w.0, "bytes of response {i}");
        assert_eq!(g.1, w.1, "route of response {i}");
    }
    (got.len(), cycles, beats)
}

#[test]
fn responses_leave_whole_and_in_order_under_back_pressure() {
    for seed in [1u64, 0xdead_beef, 0x1234_5678_9abc] {
        run(seed, false, false);
        run(seed, false, true);
    }
}

#[test]
fn back_to_back_responses_leave_no_idle_cycle() {
    let (n, cycles, beats) = run(7, true, true);
    assert_eq!(n, 200);
    // One cycle to load the first; then one beat every cycle.
    assert!(
        cycles <= beats + 2,
        "{cycles} cycles for {beats} beats of {n} responses"
    );
}
