//! The response side alone: random jobs (reads of 1 byte to 1 KiB at any lane offset, and
//! payload-less responses) with their R beats from an in-order DRAM model, under random TX
//! back-pressure. Every response leaves the TX port whole, in order, with its route and CRC:
//! the read-data stage, the TX buffer and the transmit stage are wired to each other.

use super::*;
use crate::bench::Bench;
use crate::tb::{ResponseJob, Rng, StreamSink};
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::consts::MAX_PAYLOAD;
use std::collections::VecDeque;

#[test]
fn responses_leave_the_tx_port_whole_and_in_order() {
    for seed in [3u64, 0x5eed_0f7e] {
        let mut r = Rng(seed);
        let mut b = Bench::new(Respond::default());
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        let mut todo: VecDeque<ResponseJob> = (0..120)
            .map(|_| {
                let only = r.below(4) == 0;
                ResponseJob::random(&mut r, only, MAX_PAYLOAD as u64)
            })
            .collect();
        let want: Vec<(Vec<u8>, [u8; 32])> =
            todo.iter().map(|j| (j.want.clone(), j.route)).collect();
        let mut dram: VecDeque<[u8; 64]> = VecDeque::new();
        let mut sink: StreamSink<[u8; 32]> = StreamSink::default();
        let mut got: Vec<(Vec<u8>, [u8; 32])> = Vec::new();
        let mut cycles = 0u64;
        while got.len() < want.len() {
            assert!(cycles < 100_000, "stuck after {} responses", got.len());
            b.uut.tx_ready.next = r.below(4) != 0;
            let r_valid = !dram.is_empty() && r.below(3) != 0;
            b.uut.r.valid.next = r_valid;
            b.uut.r.data.next = bytes_to_bits(dram.front().unwrap_or(&[0u8; 64]));
            let offer = !todo.is_empty() && r.below(2) == 0;
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
            assert_eq!(b.uut.r.idle.val(), dram.is_empty(), "r.idle at {cycles}");
            if b.uut.tx_valid.val() && b.uut.tx_ready.val() {
                let data: [u8; 64] = bits_to_bytes(b.uut.tx_data.val())
                    .try_into()
                    .expect("64 bytes");
                let route: [u8; 32] = bits_to_bytes(b.uut.tx_route.val())
                    .try_into()
                    .expect("32 bytes");
                let keep = b.uut.tx_keep.val().to_u64();
                let last = b.uut.tx_last.val();
                assert_eq!(b.uut.sent.val(), last, "sent with the last beat");
                if let Some((meta, frame)) = sink.take(&data, keep, last, || route) {
                    got.push((frame, meta));
                }
            }
            if r_valid && b.uut.r.ready.val() {
                dram.pop_front();
            }
            if offer && b.uut.job.ready.val() {
                let j = todo.pop_front().expect("a job");
                dram.extend(j.blocks.iter().copied());
            }
            b.tick();
            cycles += 1;
        }
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(g.0 == w.0, "bytes of response {i}");
            assert_eq!(g.1, w.1, "route of response {i}");
        }
        for _ in 0..4 {
            b.tick();
        }
        assert!(b.uut.is_idle());
    }
}
