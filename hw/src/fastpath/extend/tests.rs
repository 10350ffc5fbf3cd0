//! The extend port alone: its own parts (the units have their testbenches beside them). 600 KV
//! requests with payloads of 0..=1024 bytes (random opcodes and framing: the unit drains the
//! payload whatever it answers), the read port free at random, the answers taken at random,
//! pointer-chase requests in between; the store configured, cleared by reset. Every payload
//! beat reaches Clio-KV whole and in order (the slot's blocks 0.., `pay_last` on the final
//! one, none for an empty payload, a fetch only while the port is free); the bundle's outputs
//! are the active unit's and `mem_ready` / `rsp_ready` reach it alone; `clear` and a chase make
//! the chaser the request's unit.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::Opcode;

/// The slot's block `k`: its bytes name it.
fn block(k: u64) -> Vec<u8> {
    (0..64)
        .map(|i| (k as u8).wrapping_mul(31) ^ i as u8)
        .collect()
}

#[test]
fn payloads_reach_clio_kv_whole_and_in_order() {
    let mut r = Rng(0xE7E0);
    let mut b = Bench::new(Extend::default());
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    b.settle();
    assert!(!b.uut.kv_en.val(), "no store after reset");
    b.uut.cfg_at.load.next = true;
    b.uut.cfg_at.pid.next = 7u64.to_bits();
    b.uut.cfg.status.next = (Status::RetryLater as u64).to_bits();
    b.tick();
    b.uut.cfg_at.load.next = false;
    b.settle();
    assert!(b.uut.kv_en.val() && b.uut.kv_pid.val().to_u64() == 7);
    let ops = [Opcode::KvGet, Opcode::KvPut, Opcode::KvDelete];
    let (mut kv_reqs, mut chases, mut beats_seen) = (0, 0, 0u64);
    let mut cycle = 0u64;
    while kv_reqs < 600 {
        // A request: Clio-KV with a payload, or the chaser (a request it refuses at once).
        let kv = r.below(4) != 0;
        let pay_len = if r.below(5) == 0 {
            0
        } else {
            1 + r.below(1024)
        };
        while !(if kv {
            b.uut.start.kv_ready.val()
        } else {
            b.uut.start.chase_ready.val()
        }) {
            b.tick();
        }
        b.uut.req.opcode.next = (ops[r.below(3) as usize] as u64).to_bits();
        b.uut.req.pid.next = 1u64.to_bits();
        b.uut.req.va.next = 0u64.to_bits();
        b.uut.req.arg0.next = r.below(64).to_bits();
        b.uut.req.arg1.next = r.below(64).to_bits();
        b.uut.req.total_len.next = r.below(1100).to_bits();
        b.uut.req.payload_len.next = pay_len.to_bits();
        b.uut.req.pkt_count.next = 1u64.to_bits();
        b.uut.req.pkt_index.next = 0u64.to_bits();
        b.uut.start.kv.next = kv;
        b.uut.start.chase.next = !kv;
        b.tick();
        b.uut.start.kv.next = false;
        b.uut.start.chase.next = false;
        b.settle();
        assert_eq!(b.uut.kv.val(), kv, "the request's unit");
        let want_beats = if kv { pay_len.div_ceil(64) } else { 0 };
        let mut got = 0u64;
        let mut fetched: Option<u64> = None;
        let mut answered = false;
        let start = cycle;
        while !answered {
            assert!(cycle - start < 20_000, "request {kv_reqs} stuck");
            let free = r.below(3) != 0;
            b.uut.pay_free.next = free;
            b.uut.buf_data.next = match fetched {
                Some(k) => bytes_to_bits(&block(k)),
                None => bytes_to_bits(&[0xEE; 64]),
            };
            // The executor serves the memory port with a failure at once (the status comes
            // with mem_done the next cycle), and takes answers at random.
            b.uut.active.mem_ready.next = r.below(2) == 0;
            b.uut.active.rsp_ready.next = r.below(2) == 0;
            b.settle();
            let u = &b.uut;
            // Routing: the active unit's outputs, its readies only.
            let unit_kv = u.kv.val();
            assert_eq!(unit_kv, kv);
            let (mv, rv) = if unit_kv {
                (
                    u.clio_kv.port.mem_valid.val(),
                    u.clio_kv.port.rsp_valid.val(),
                )
            } else {
                (u.chase.port.mem_valid.val(), u.chase.port.rsp_valid.val())
            };
            assert_eq!(
                (u.active.mem_valid.val(), u.active.rsp_valid.val()),
                (mv, rv)
            );
            assert_eq!(
                u.clio_kv.port.mem_ready.val(),
                u.active.mem_ready.val() && unit_kv
            );
            assert_eq!(
                u.chase.port.rsp_ready.val(),
                u.active.rsp_ready.val() && !unit_kv
            );
            assert!(!u.active.once_valid.val() || unit_kv);
            // The payload.
            if u.clio_kv.kv_port.pay_valid.val() && u.clio_kv.port.pay_ready.val() {
                assert!(got < want_beats, "a beat too many");
                assert_eq!(
                    bits_to_bytes(u.clio_kv.kv_port.pay_data.val()),
                    block(got),
                    "beat {got}"
                );
                assert_eq!(
                    u.clio_kv.kv_port.pay_last.val(),
                    got + 1 == want_beats,
                    "pay_last"
                );
                got += 1;
                beats_seen += 1;
            }
            fetched = None;
            if u.pay_fetch.val() {
                assert!(free, "a fetch while the write-data stage has the port");
                fetched = Some(u.pay_block.val().to_u64());
            }
            let mem = u.active.mem_valid.val() && u.active.mem_ready.val();
            if u.active.rsp_valid.val() && u.active.rsp_ready.val() {
                assert!(!u.active.rsp_replay.val() || unit_kv);
                answered = true;
            }
            b.tick();
            cycle += 1;
            // A memory request is answered with a failure, so the unit answers soon.
            b.uut.active.mem_done.next = mem;
            b.uut.active.mem_status.next = (Status::Unmapped as u64).to_bits();
        }
        b.uut.active.mem_done.next = false;
        assert_eq!(got, want_beats, "every beat before the answer");
        if kv {
            kv_reqs += 1;
        } else {
            chases += 1;
        }
        if r.below(4) == 0 {
            // The executor takes the next frame: the chaser is the request's unit again.
            b.uut.clear.next = true;
            b.tick();
            b.uut.clear.next = false;
            b.settle();
            assert!(!b.uut.kv.val());
        }
    }
    assert!(chases > 100 && beats_seen > 3000, "{chases} {beats_seen}");
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    b.settle();
    assert!(!b.uut.kv_en.val(), "reset forgets the store");
}
