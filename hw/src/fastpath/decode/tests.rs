//! The decode alone: 20,000 headers (written by `Header::emit_header`, then bytes of them
//! overwritten at random: versions, opcode and status bytes, lengths, counts and VAs at their
//! limits), with Clio-KV on and off. Every field against `proto::header::Packet`'s accessors,
//! `parse_ok` against `Header::parse` (with the match-action table's rule for extend opcodes),
//! `read_ok` against `check_read`, `write_ok` against `check_write_segment`, and the other
//! checks against their rules in the module doc.

use super::*;
use crate::tb::Rng;
use crate::util::bytes_to_bits;
use clio_proto::header::{check_read, check_write_segment, Header, Packet, HEADER_LEN};
use clio_proto::kv::is_kv;
use clio_proto::offload::in_hardware;
use clio_proto::opcode::{path_of, Path};

/// A value near one of `limits`, or anything.
fn near(r: &mut Rng, limits: &[u64]) -> u64 {
    match r.below(4) {
        0 => r.next(),
        _ => {
            let l = limits[r.below(limits.len() as u64) as usize];
            l.wrapping_add(r.below(3)).wrapping_sub(1)
        }
    }
}

/// A request header's 64 bytes.
fn header(r: &mut Rng) -> [u8; HEADER_LEN] {
    let ops = [
        Opcode::Read,
        Opcode::Write,
        Opcode::Append,
        Opcode::FetchAdd,
        Opcode::CompareAndSwap,
        Opcode::PointerChase,
        Opcode::KvPut,
        Opcode::Fence,
        Opcode::Alloc,
    ];
    let op = ops[r.below(ops.len() as u64) as usize];
    let va = near(
        r,
        &[
            0,
            8,
            1 << 20,
            VA_LIMIT - 4096,
            VA_LIMIT - 1024,
            VA_LIMIT - 2048,
            VA_LIMIT - (1 << 27),
            VA_LIMIT - (1 << 32),
            VA_LIMIT - (1 << 32) + (1 << 27),
            VA_LIMIT,
            1 << 63,
        ],
    );
    let mut h = Header::request(op, r.below(4) as u16, r.next() as u32, va);
    h.total_len = near(
        r,
        &[
            0,
            1,
            8,
            1024,
            2048,
            replog::MAX_RECORD as u64,
            MAX_REQUEST_LEN as u64,
            1 << 27,
            u32::MAX as u64,
        ],
    ) as u32;
    h.pkt_count = match r.below(3) {
        0 => clio_proto::header::packet_count(h.total_len),
        1 => 1,
        _ => r.below(5) as u16,
    };
    h.pkt_index = match r.below(8) {
        0..=3 => 0,
        4 => r.next() as u16,
        _ => r.below(5) as u16,
    };
    h.payload_len = match r.below(4) {
        0 => 0,
        1 => (h.total_len as u16).min(1024),
        2 => near(r, &[1024, 1, 8]) as u16,
        _ => clio_proto::header::segment(h.total_len, h.pkt_index).map_or(0, |s| s.1),
    };
    h.durable = r.below(4) == 0;
    h.arg0 = r.next();
    h.arg1 = r.next();
    let mut b = [0u8; HEADER_LEN];
    h.emit_header(&mut b);
    match r.below(8) {
        0 => b[field::VERSION] = r.next() as u8,
        1 => b[field::OPCODE] = r.next() as u8,
        2 => b[field::STATUS] = r.next() as u8,
        3 => b[field::FLAGS] = r.next() as u8,
        _ => {}
    }
    b
}

#[test]
fn fields_and_checks_are_protos() {
    let mut r = Rng(0xDEC0);
    let mut d = Decode::default();
    d.connect_all();
    let mut passed = [0u32; 6];
    for i in 0..30_000 {
        let b = header(&mut r);
        let kv_en = r.below(2) == 0;
        d.hdr.next = bytes_to_bits(&b[..48]);
        d.kv_en.next = kv_en;
        assert!(simulate(&mut d, 1000));
        let p = Packet::new_unchecked(&b[..]);
        let at = format!("header {i}: {:02x?}", &b[..48]);
        assert_eq!(
            d.fields.opcode.val().to_u64(),
            p.opcode_raw() as u64,
            "{at}"
        );
        assert_eq!(d.durable.val(), p.flags() & FLAG_DURABLE != 0, "{at}");
        assert_eq!(d.fields.pid.val().to_u64(), p.pid() as u64, "{at}");
        assert_eq!(
            d.fields.pkt_index.val().to_u64(),
            p.pkt_index() as u64,
            "{at}"
        );
        assert_eq!(
            d.fields.pkt_count.val().to_u64(),
            p.pkt_count() as u64,
            "{at}"
        );
        assert_eq!(
            d.fields.payload_len.val().to_u64(),
            p.payload_len() as u64,
            "{at}"
        );
        assert_eq!(d.req_id.val().to_u64(), p.req_id() as u64, "{at}");
        assert_eq!(d.fields.va.val().to_u64(), p.va(), "{at}");
        assert_eq!(
            d.fields.total_len.val().to_u64(),
            p.total_len() as u64,
            "{at}"
        );
        assert_eq!(d.fields.arg0.val().to_u64(), p.arg0(), "{at}");
        assert_eq!(d.fields.arg1.val().to_u64(), p.arg1(), "{at}");
        // Header::parse, with the table's rule for extend opcodes (those without a unit
        // here do not parse; Clio-KV's only while it is enabled).
        let op = p.opcode_raw();
        let known = Opcode::from_u8(op).is_some_and(|o| {
            path_of(op) != Some(Path::Extend) || (in_hardware(o) && (!is_kv(o) || kv_en))
        });
        // (The packet as it arrived: its payload after the header, so the length check holds.)
        let mut whole = b.to_vec();
        whole.resize(HEADER_LEN + p.payload_len() as usize, 0);
        let parsed = Header::parse(&Packet::new_unchecked(&whole[..]));
        assert_eq!(
            d.parse_ok.val(),
            parsed.is_ok() && known,
            "{at}: {parsed:?}"
        );
        // The class checks, on the fields whatever the opcode.
        let mut h = Header::request(Opcode::Read, p.pid(), p.req_id(), p.va());
        h.pkt_index = p.pkt_index();
        h.pkt_count = p.pkt_count();
        h.payload_len = p.payload_len();
        h.total_len = p.total_len();
        let (va, tlen, plen) = (p.va(), p.total_len(), p.payload_len());
        let data_va = if op == Opcode::Write as u8 {
            // Summed in the VA's 48 bits: exact whenever the write's checks hold.
            let sum = (va & (VA_LIMIT - 1)) + ((p.pkt_index() as u64) << 10);
            (va & !(VA_LIMIT - 1)) | (sum & (VA_LIMIT - 1))
        } else {
            va
        };
        let checks = [
            (d.read_ok.val(), check_read(&h), "read_ok"),
            (d.write_ok.val(), check_write_segment(&h), "write_ok"),
            (
                d.write_in_va.val(),
                va as u128 + ((p.pkt_index() as u128) << 10) + plen as u128 <= VA_LIMIT as u128,
                "write_in_va",
            ),
            (
                d.append_ok.val(),
                va % 8 == 0
                    && p.pkt_count() == 1
                    && tlen > 0
                    && tlen <= replog::MAX_RECORD
                    && plen as u32 == tlen,
                "append_ok",
            ),
            (d.atomic_ok.val(), va % 8 == 0 && plen == 0, "atomic_ok"),
            (
                d.chase_ok.val(),
                plen == 0 && p.pkt_count() == 1,
                "chase_ok",
            ),
        ];
        for (k, (got, want, what)) in checks.into_iter().enumerate() {
            assert_eq!(got, want, "{what}, {at}");
            passed[k] += want as u32;
        }
        assert_eq!(d.data_va.val().to_u64(), data_va, "{at}");
        if d.write_ok.val() && d.write_in_va.val() && op == Opcode::Write as u8 {
            let exact = va + ((p.pkt_index() as u64) << 10);
            assert_eq!(
                d.data_va.val().to_u64(),
                exact,
                "{at}: exact inside the VA space"
            );
        }
    }
    // Each check passed and failed often enough to mean something.
    assert!(passed.iter().all(|&n| n > 500 && n < 29_500), "{passed:?}");
}
