//! Append: the log tail reserved and the framed record written once.

use super::*;

/// Append (`proto::replog`): the tail reserved and the framed record written in one
/// operation, records at every 8-byte lane (the payload moves from its ingest lanes through
/// the write-data stage's funnel) and across a page boundary, the pad zero although the
/// frame bytes past `tkeep` are not (the testbench fills them with 0xC3), a retry answered
/// from the ring with the same offset and nothing appended, and a full log or a malformed
/// request writing nothing. The log image is checked against `replog`'s own framing.
#[test]
fn append_reserves_the_tail_and_writes_the_record_once() {
    use clio_proto::replog;
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    map_second_page(&mut e, pid);
    // The log starts 0xB08 into page 0x10 and runs on into page 0x11 (pfn 9).
    let log = 0x10 * PS + 0xB08;
    let cap = 2 * PS - 0xB08;
    let pa = |va: u64| {
        if va < 0x11 * PS {
            5 * PS + va - 0x10 * PS
        } else {
            9 * PS + va - 0x11 * PS
        }
    };
    let image = |e: &Env, n: u64| -> Vec<u8> {
        (0..n)
            .map(|i| e.dram.mem().bytes(pa(log + i), 1)[0])
            .collect()
    };
    let mut want = vec![0u8; replog::LOG_HEAD as usize];
    let mut tail = 0u64;
    let lens = [
        1u32, 5, 8, 13, 56, 64, 100, 511, 1000, 1024, 3, 17, 24, 1024,
    ];
    for (i, &len) in lens.iter().enumerate() {
        let payload: Vec<u8> = (0..len)
            .map(|k| (k as u8).wrapping_mul(31) ^ i as u8 ^ 0x5A)
            .collect();
        let mut h = req(Opcode::Append, pid, 100 + i as u32, log);
        h.total_len = len;
        h.arg0 = cap;
        let pkt = h.to_packet(&payload);
        let fp = replog::footprint(len);
        let ok = Header {
            arg0: tail,
            arg1: tail + fp,
            ..h.response_to(Status::Ok)
        }
        .to_packet(&[]);
        assert_eq!(
            e.request(&pkt).0,
            vec![ok.clone()],
            "append {i} ({len} bytes)"
        );
        if i % 3 == 0 {
            // A retry: the same answer from the ring, nothing appended.
            assert_eq!(e.request(&pkt).0, vec![ok], "retry of append {i}");
        }
        // Acknowledged, as CLib does (a member's row holds 16 unacknowledged results).
        let mut ack = req(Opcode::CnAck, pid, 0x8000_0000 | h.req_id, 0);
        ack.arg0 = u64::from(h.req_id);
        assert_eq!(
            e.request(&ack.to_packet(&[])).0,
            vec![resp(&ack, Status::Ok, &[])]
        );
        let at = replog::place(cap, tail, len).expect("fits");
        assert_eq!(at, replog::LOG_HEAD + tail);
        want.extend_from_slice(&replog::frame(len));
        want.extend_from_slice(&payload);
        want.resize((at + fp) as usize, 0);
        tail += fp;
        assert_eq!(word(&e, pa(log)), tail, "tail after append {i}");
    }
    assert!(
        replog::LOG_HEAD + tail > PS - 0xB08,
        "the log crossed the page"
    );
    want[..8].copy_from_slice(&tail.to_le_bytes());
    assert_eq!(image(&e, replog::LOG_HEAD + tail), want, "log image");
    let data = &want[replog::LOG_HEAD as usize..];
    let recs = replog::records(data).expect("a well-formed log");
    assert_eq!(recs.len(), lens.len());
    // Cost (testbench DRAM latency 5, pages in the TLB): a 100-byte write against a
    // 100-byte append, last request beat to first response beat.
    let (_, write_cycles) = e.request(&write_req(pid, 300, 0x11 * PS + 0xF00, &[9u8; 100]).1);
    let mut h = req(Opcode::Append, pid, 301, log);
    h.total_len = 100;
    h.arg0 = cap;
    let (r, append_cycles) = e.request(&h.to_packet(&[3u8; 100]));
    assert_eq!(r.len(), 1);
    eprintln!("100 B write: {write_cycles} cycles, 100 B append: {append_cycles} cycles");
    assert!(
        append_cycles > write_cycles,
        "an append reads the tail first"
    );
    tail += replog::footprint(100);
    // A record that does not fit: LogFull, arg0 0, nothing written.
    let before = image(&e, cap);
    let mut h = req(Opcode::Append, pid, 200, log);
    h.total_len = 100;
    h.arg0 = replog::LOG_HEAD + tail + 64;
    let full = Header {
        arg0: 0,
        arg1: replog::footprint(100),
        ..h.response_to(Status::LogFull)
    }
    .to_packet(&[]);
    assert_eq!(e.request(&h.to_packet(&[7u8; 100])).0, vec![full]);
    // Malformed: a misaligned log, a length that is not the payload's.
    let mut bad = req(Opcode::Append, pid, 201, log + 4);
    bad.total_len = 16;
    bad.arg0 = cap;
    assert_eq!(
        e.request(&bad.to_packet(&[1u8; 16])).0,
        vec![resp(&bad, Status::BadRequest, &[])]
    );
    let mut lie = req(Opcode::Append, pid, 202, log);
    lie.total_len = 17;
    lie.arg0 = cap;
    assert_eq!(
        e.request(&lie.to_packet(&[1u8; 16])).0,
        vec![resp(
            &Header {
                payload_len: 16,
                ..lie
            },
            Status::BadRequest,
            &[]
        )]
    );
    assert_eq!(image(&e, cap), before, "refused appends wrote nothing");
}
