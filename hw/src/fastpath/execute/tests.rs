//! The core alone, with the other sides played by the testbench. A frame of a slow-path
//! opcode offered by the receive side is taken, admitted by the RX ring's share and pushed to
//! the slow-path port with its client, route and header (the flags and checksum cleared, as a
//! REQUEST descriptor carries it), and the frame is done; a REPLY descriptor the slow-path
//! port offers is taken, acted on, and leaves as a payload-less response on the job port,
//! along its route with its status and flags. The translation's pid is the decoded
//! request's. The decode, the response header and the
//! executor are wired to each other and to the sides' links.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::header::{field, Header, HEADER_LEN};
use clio_proto::Opcode;

fn bench() -> Bench<Execute> {
    let mut b = Bench::new(Execute::default());
    let u = &mut b.uut;
    u.piece_shift.next = 12u64.to_bits();
    u.recv.keys.ok.next = true;
    u.recv.keys.epoch_ok.next = true;
    u.recv.keys.ready.next = true;
    u.recv.routes.ok.next = true;
    u.recv.routes.done.next = true;
    u.recv.ahead.parse_ok.next = true;
    u.mem.order.read_clear.next = true;
    u.mem.order.write_clear.next = true;
    u.mem.order.atomic_clear.next = true;
    u.mem.order.fence_clear.next = true;
    u.slow.rx_ok.next = true;
    u.slow.rx_ready.next = true;
    u.job.ready.next = true;
    u.ar.ready.next = true;
    u.aw.ready.next = true;
    u.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    b.settle();
    b
}

#[test]
fn a_slow_path_frame_is_pushed_and_a_reply_descriptor_answered() {
    let mut r = Rng(0xe8ec_u64);
    let mut b = bench();
    for i in 0..8 {
        let mut h = Header::request(Opcode::Alloc, 1 + r.below(4000) as u16, r.next() as u32, 0);
        h.client = 1 + r.below(1000) as u16;
        h.arg0 = 4096;
        let mut hb = [0u8; HEADER_LEN];
        h.emit_header(&mut hb);
        let route: [u8; 32] = r.bytes(32).try_into().expect("32 bytes");
        b.uut.recv.frame.full.next = true;
        b.uut.recv.frame.hdr.next = bytes_to_bits(&hb[..48]);
        b.uut.recv.frame.client.next = (h.client as u64).to_bits();
        b.uut.recv.frame.route.next = bytes_to_bits(&route);
        b.settle();
        assert!(b.uut.recv.queue.take.val(), "frame {i} taken");
        b.tick();
        b.uut.recv.frame.full.next = false;
        let mut pushed = false;
        let mut done = false;
        for _ in 0..12 {
            b.settle();
            let u = &b.uut;
            assert!(
                !u.job.valid.val(),
                "a pushed request has no response of the fast path"
            );
            if u.slow.push.val() {
                assert_eq!(u.slow.client.val().to_u64(), h.client as u64);
                assert_eq!(bits_to_bytes(u.slow.route.val()), route.to_vec());
                let mut want = hb[..48].to_vec();
                want[field::FLAGS] = 0;
                want[field::CHECKSUM].fill(0);
                assert_eq!(bits_to_bytes(u.slow.header.val()), want, "frame {i}");
                // The decoded fields: the translation's pid is the request's.
                assert_eq!(u.mem.pid.val().to_u64(), h.pid as u64, "frame {i} pid");
                pushed = true;
            }
            done |= u.recv.queue.done.val();
            b.tick();
        }
        assert!(pushed && done, "frame {i}: pushed {pushed}, done {done}");

        // A REPLY descriptor.
        let status = r.below(4);
        let desc_route: [u8; 32] = r.bytes(32).try_into().expect("32 bytes");
        b.uut.slow.tx_valid.next = true;
        b.uut.slow.sptx.reply.next = true;
        b.uut.slow.desc.header.next = bytes_to_bits(&hb[..48]);
        b.uut.slow.desc.route.next = bytes_to_bits(&desc_route);
        b.uut.slow.desc.reply_status.next = status.to_bits();
        b.uut.slow.desc.reply_flags.next = 0x81u64.to_bits();
        b.settle();
        assert!(
            b.uut.slow.take.val() && b.uut.slow.tx_ready.val(),
            "reply {i} taken"
        );
        b.tick();
        b.uut.slow.tx_valid.next = false;
        let mut answered = false;
        for _ in 0..8 {
            b.settle();
            let u = &b.uut;
            if u.job.valid.val() {
                assert!(u.job.only.val(), "payload-less");
                assert_eq!(u.job.len.val().to_u64(), HEADER_LEN as u64);
                assert_eq!(bits_to_bytes(u.job.route.val()), desc_route.to_vec());
                let hdr = bits_to_bytes(u.job.hdr.val());
                assert_eq!(hdr[field::STATUS] as u64, status, "reply {i} status");
                assert_eq!(hdr[field::FLAGS], 0x81, "reply {i} flags");
                assert_eq!(hdr[field::PID], hb[field::PID], "reply {i} pid");
                answered = true;
            }
            b.tick();
            b.uut.slow.sptx.reply.next = false;
            if answered {
                break;
            }
        }
        assert!(answered, "reply {i} answered");
        for _ in 0..2 {
            b.tick();
        }
    }
}
