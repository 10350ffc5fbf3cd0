//! The one-beat writer alone: 2,000 writes (each the word-access path's or the PTE writer's,
//! the other maker's beat different), each held (`go`) until `done` and then for a random
//! while longer (as a fault's write-back waits for its PAGE_MAPPED notice), with random AW and
//! W readiness and the W channel taken by the write-data stage at random. Every write sends
//! exactly one AW (its block address) and one W beat (its data and strobes), never while the
//! channel is the stage's, and `done` rises exactly when the second handshake is taken.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};

#[test]
fn each_write_sends_one_aw_and_one_w() {
    let mut r = Rng(0xBEA7);
    let mut b = Bench::new(BeatWriter::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    let mut writes = 0u32;
    let mut cycles = 0u64;
    while writes < 2000 {
        let addr = r.next();
        let data: [u8; 64] = r.bytes(64).try_into().expect("64 bytes");
        let strb = r.next();
        let linger = r.below(4);
        let word = r.below(2) == 0;
        let (mut aws, mut ws) = (0u32, 0u32);
        let mut done_at: Option<u64> = None;
        let mut held = 0u64;
        loop {
            assert!(cycles < 1_000_000, "stuck at write {writes}");
            b.uut.go.next = true;
            // The write is one of the two makers' beats; the other carries noise.
            let (mine, other) = if word {
                (&mut b.uut.word, &mut b.uut.pte)
            } else {
                (&mut b.uut.pte, &mut b.uut.word)
            };
            mine.addr.next = addr.to_bits();
            mine.data.next = bytes_to_bits(&data);
            mine.strb.next = strb.to_bits();
            other.addr.next = (!addr).to_bits();
            other.data.next = bytes_to_bits(&[0x5A; 64]);
            other.strb.next = (!strb).to_bits();
            b.uut.word_sel.next = word;
            let w_free = r.below(4) != 0;
            b.uut.w_free.next = w_free;
            b.uut.aw.ready.next = r.below(2) == 0;
            b.uut.w.ready.next = r.below(2) == 0;
            b.settle();
            let u = &b.uut;
            assert_eq!(u.aw.own.val(), w_free);
            if !w_free {
                assert!(!u.aw.valid.val() && !u.w.valid.val(), "W channel not ours");
            }
            assert_eq!(u.w.own.val(), u.aw.own.val());
            assert!(u.w.last.val() && u.aw.len.val() == 0, "one beat, last");
            if u.aw.valid.val() && u.aw.ready.val() {
                aws += 1;
                assert_eq!(u.aw.addr.val().to_u64(), addr & !63);
            }
            if u.w.valid.val() && u.w.ready.val() {
                ws += 1;
                assert_eq!(bits_to_bytes(u.w.data.val()), data.to_vec());
                assert_eq!(u.w.strb.val().to_u64(), strb);
            }
            assert_eq!(u.done.val(), aws == 1 && ws == 1, "done of write {writes}");
            assert!(aws <= 1 && ws <= 1, "write {writes} sent twice");
            if u.done.val() {
                done_at.get_or_insert(cycles);
                held += 1;
            }
            b.tick();
            cycles += 1;
            if held > linger {
                break;
            }
        }
        // Dropped for a cycle or more: the next go is a new write.
        for _ in 0..1 + r.below(2) {
            b.uut.go.next = false;
            b.uut.w_free.next = true;
            b.uut.aw.ready.next = true;
            b.uut.w.ready.next = true;
            b.settle();
            assert!(
                !b.uut.aw.valid.val() && !b.uut.w.valid.val(),
                "sent without go"
            );
            b.tick();
            cycles += 1;
        }
        writes += 1;
    }
}
