//! The response header builder alone: 20,000 request headers (`Header::emit_header`, with
//! random flags, checksums and stray bytes) and random answers (status, flags, payload length,
//! each optional field on or off). The response against the request's bytes with each field
//! the answer names written at its `proto::header::field` range (big-endian), everything else
//! the request's; the forwarded header against `Header::emit_header` of the parsed request.

use super::*;
use crate::tb::Rng;
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::header::{Header, Packet, HEADER_LEN};
use clio_proto::Opcode;
use clio_proto::Status;

fn put(b: &mut [u8], at: std::ops::Range<usize>, v: u64) {
    let n = at.len();
    b[at].copy_from_slice(&v.to_be_bytes()[8 - n..]);
}

#[test]
fn responses_carry_what_the_answer_names() {
    let mut r = Rng(0x4E5B);
    let mut u = ResponseHeader::default();
    u.connect_all();
    let mut forwarded_checked = 0;
    for i in 0..20_000 {
        let ops = [
            Opcode::Read,
            Opcode::Write,
            Opcode::Alloc,
            Opcode::KvGet,
            Opcode::Append,
        ];
        let mut h = Header::request(
            ops[r.below(ops.len() as u64) as usize],
            r.next() as u16,
            r.next() as u32,
            r.next(),
        );
        h.pkt_index = r.next() as u16;
        h.pkt_count = r.next() as u16;
        h.payload_len = r.next() as u16;
        h.total_len = r.next() as u32;
        h.arg0 = r.next();
        h.arg1 = r.next();
        h.durable = r.below(2) == 0;
        let mut req = [0u8; HEADER_LEN];
        h.emit_header(&mut req);
        // A checksum and flags as they arrived.
        put(&mut req, field::CHECKSUM, r.next());
        req[field::FLAGS] = r.next() as u8;
        let (status, flags, plen) = (r.next() as u8, r.next() as u8, r.next() as u16);
        let (arg0_on, args_on, value_on, seg_on) = (
            r.below(2) == 0,
            r.below(3) == 0,
            r.below(3) == 0,
            r.below(3) == 0,
        );
        let (arg0, arg1, idx, cnt) = (r.next(), r.next(), r.next() as u16, r.next() as u16);
        u.request.next = bytes_to_bits(&req[..48]);
        u.exec.status.next = (status as u64).to_bits();
        u.exec.flags.next = (flags as u64).to_bits();
        u.exec.payload_len.next = (plen as u64).to_bits();
        u.exec.arg0_on.next = arg0_on;
        u.args_on.next = args_on;
        u.exec.arg0.next = arg0.to_bits();
        u.arg1.next = arg1.to_bits();
        u.value_len_on.next = value_on;
        u.exec.seg_on.next = seg_on;
        u.exec.pkt_index.next = (idx as u64).to_bits();
        u.exec.pkt_count.next = (cnt as u64).to_bits();
        assert!(simulate(&mut u, 1000));
        let mut want = req;
        want[field::STATUS] = status;
        want[field::FLAGS] = flags;
        put(&mut want, field::PAYLOAD_LEN, plen as u64);
        put(&mut want, field::CHECKSUM, 0);
        if arg0_on || args_on {
            put(&mut want, field::ARG0, arg0);
        }
        if args_on {
            put(&mut want, field::ARG1, arg1);
        }
        if value_on {
            put(&mut want, field::TOTAL_LEN, plen as u64);
        }
        if seg_on {
            put(&mut want, field::PKT_INDEX, idx as u64);
            put(&mut want, field::PKT_COUNT, cnt as u64);
        }
        assert_eq!(
            bits_to_bytes(u.exec.response.val()),
            want[..48].to_vec(),
            "response {i}"
        );
        // The same response answering OK (a plain write's early answer).
        want[field::STATUS] = Status::Ok as u8;
        assert_eq!(
            bits_to_bytes(u.exec.response_ok.val()),
            want[..48].to_vec(),
            "OK response {i}"
        );
        // The forwarded header: the parsed request emitted again (flags and checksum zero).
        let mut fwd = req;
        fwd[field::FLAGS] = 0;
        put(&mut fwd, field::CHECKSUM, 0);
        assert_eq!(
            bits_to_bytes(u.forwarded.val()),
            fwd[..48].to_vec(),
            "forwarded {i}"
        );
        let mut whole = req.to_vec();
        whole[field::FLAGS] = 0;
        whole.resize(
            HEADER_LEN + Packet::new_unchecked(&req[..]).payload_len() as usize,
            0,
        );
        if let Ok(p) = Header::parse(&Packet::new_unchecked(&whole[..])) {
            let mut emitted = [0u8; HEADER_LEN];
            p.emit_header(&mut emitted);
            assert_eq!(
                bits_to_bytes(u.forwarded.val()),
                emitted[..48].to_vec(),
                "emit {i}"
            );
            forwarded_checked += 1;
        }
    }
    assert!(forwarded_checked > 100, "{forwarded_checked}");
}
