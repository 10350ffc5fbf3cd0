//! The word-access data path alone: 5,000 word reads at every aligned lane of random beats (the
//! word registered only while sampling, held otherwise, with whether it equals the expected
//! value: the word itself, another word of the beat, or one bit off it), write-backs of the ALU's and Append's
//! words at the atomic's or the tail's lane (bytes and strobes against the lane arithmetic
//! written out here), and offload blocks passed through as given.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};

#[test]
fn words_are_read_and_written_at_their_lanes() {
    let mut r = Rng(0x30D_ACC5);
    let mut b = Bench::new(WordAccess::default());
    let mut held: Option<(u64, bool)> = None;
    for i in 0..5000 {
        let pa = (r.next() & 0xFF_FFFF_FFC0) | (8 * r.below(8));
        let beat = r.bytes(64);
        let lane = (pa & 63) as usize;
        let word = u64::from_le_bytes(beat[lane..lane + 8].try_into().expect("8 bytes"));
        // Read: registered while sampling, held otherwise.
        let sample = r.below(3) != 0;
        // The expected value: the word itself half the time, else a word of the beat or a
        // random one (one bit off the word at times).
        let expect = match r.below(4) {
            0 | 1 => word,
            2 => u64::from_le_bytes(beat[8 * r.below(8) as usize..][..8].try_into().expect("8")),
            _ => word ^ (1 << r.below(64)),
        };
        b.uut.cmp_word.next = expect.to_bits();
        b.uut.exec.pa.next = pa.to_bits();
        b.uut.r_data.next = bytes_to_bits(&beat);
        b.uut.exec.sample.next = sample;
        b.uut.exec.alu_load.next = false;
        b.uut.exec.tail_load.next = false;
        b.tick();
        b.uut.exec.sample.next = false;
        b.settle();
        b.uut.cmp_word.next = r.next().to_bits();
        b.settle();
        if sample {
            held = Some((word, word == expect));
        }
        if let Some((w, eq)) = held {
            assert_eq!(b.uut.old.val().to_u64(), w, "#{i}: the word at lane {lane}");
            assert_eq!(
                b.uut.exec.old.val(),
                b.uut.old.val(),
                "#{i}: the executor's copy"
            );
            assert_eq!(
                b.uut.old_eq.val(),
                eq,
                "#{i}: the word equals the expected value"
            );
        }
        // Write-back: the ALU's word or Append's new tail, at the atomic's or the tail's lane.
        let (new, append) = (r.next(), r.below(2) == 0);
        let tail_pa = (r.next() & 0xFF_FFFF_FFC0) | (8 * r.below(8));
        b.uut.exec.alu_load.next = !append;
        b.uut.alu_new.next = new.to_bits();
        b.uut.exec.tail_load.next = append;
        b.uut.new_tail.next = new.to_bits();
        b.tick();
        b.uut.exec.alu_load.next = false;
        b.uut.exec.tail_load.next = false;
        b.uut.alu_new.next = r.next().to_bits();
        b.uut.new_tail.next = r.next().to_bits();
        b.uut.exec.tail.next = append;
        b.uut.tail_pa.next = tail_pa.to_bits();
        let block = r.below(5) == 0;
        let (bdata, bstrb) = (r.bytes(64), r.next());
        b.uut.block.valid.next = block;
        b.uut.block.data.next = bytes_to_bits(&bdata);
        b.uut.block.strb.next = bstrb.to_bits();
        b.settle();
        let at = if append { tail_pa } else { pa };
        assert_eq!(
            b.uut.wr.addr.val().to_u64(),
            at,
            "#{i}: the write's address"
        );
        let data = bits_to_bytes(b.uut.wr.data.val());
        let strb = b.uut.wr.strb.val().to_u64();
        if block {
            assert_eq!(
                (data, strb),
                (bdata, bstrb),
                "#{i}: the offload's block as given"
            );
        } else {
            let l = (at & 63) as usize;
            let mut want = vec![0u8; 64];
            want[l..l + 8].copy_from_slice(&new.to_le_bytes());
            assert_eq!(data, want, "#{i}: the word at lane {l}");
            assert_eq!(strb, 0xFFu64 << l, "#{i}: its strobes");
        }
        b.uut.block.valid.next = false;
    }
}
