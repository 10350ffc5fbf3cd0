//! The pointer-chasing offload through the top.

use super::*;

/// The pointer-chasing offload through the top (`proto::offload::chase`): nodes written by
/// the fast path in two pages, a match whose value straddles them, not found, the hop bound,
/// a next pointer to an unmapped page, malformed requests, and an extend opcode without a
/// unit (UNSUPPORTED). Every answer byte-exact with the model's rule.
#[test]
fn pointer_chase_walks_nodes_through_the_translation() {
    use clio_proto::offload::{chase, ChaseLayout};
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    map_second_page(&mut e, pid);
    let l = ChaseLayout {
        key_offset: 0,
        next_offset: 8,
        value_offset: 16,
        max_hops: 8,
    };
    // Five nodes: key 100 + i, the value 100 bytes of i; node 3 sits at the end of page 0x10
    // so its value runs into page 0x11.
    let nodes = [
        0x10 * PS + 0x100,
        0x11 * PS + 0x80,
        0x10 * PS + 0x800,
        0x10 * PS + 0xFE8,
        0x11 * PS + 0x400,
    ];
    let value = |i: usize| vec![0xA0 ^ i as u8; 100];
    for (i, &n) in nodes.iter().enumerate() {
        let next = nodes.get(i + 1).copied().unwrap_or(0);
        let mut node = (100 + i as u64).to_le_bytes().to_vec();
        node.extend_from_slice(&next.to_le_bytes());
        node.extend_from_slice(&value(i));
        let (_, w) = write_req(pid, 10 + i as u32, n, &node);
        assert_eq!(e.request(&w).0.len(), 1, "node {i} written");
    }
    let chase_req = |id: u32, start: u64, key: u64, l: ChaseLayout, len: u32| {
        let mut h = req(Opcode::PointerChase, pid, id, start);
        h.arg0 = key;
        h.arg1 = l.pack();
        h.total_len = len;
        h
    };
    let answer = |h: &Header, arg0: u64, arg1: u64, payload: &[u8]| {
        Header {
            arg0,
            arg1,
            ..h.response_to(Status::Ok)
        }
        .to_packet(payload)
    };
    let mut cycles = Vec::new();
    for (i, &n) in nodes.iter().enumerate() {
        let h = chase_req(100 + i as u32, nodes[0], 100 + i as u64, l, 100);
        let (r, c) = e.request(&h.to_packet(&[]));
        assert_eq!(
            r,
            vec![answer(&h, i as u64 + 1, n, &value(i))],
            "key of node {i}"
        );
        cycles.push(c);
    }
    eprintln!("pointer chase, match at hop 1..=5 (value 100 B): {cycles:?} cycles");
    assert!(
        cycles.windows(2).all(|w| w[1] > w[0]),
        "each hop costs cycles"
    );
    let h = chase_req(110, nodes[0], 7, l, 100);
    assert_eq!(
        e.request(&h.to_packet(&[])).0,
        vec![answer(&h, 5, 0, &[])],
        "not found"
    );
    let short = ChaseLayout { max_hops: 2, ..l };
    let h = chase_req(111, nodes[0], 7, short, 100);
    assert_eq!(
        e.request(&h.to_packet(&[])).0,
        vec![answer(&h, 2, nodes[2], &[])],
        "the bound: where to go on"
    );
    // A next pointer into an unmapped page ends the walk with UNMAPPED, nothing else.
    let (_, w) = write_req(pid, 20, nodes[4] + 8, &(0x13 * PS).to_le_bytes());
    e.request(&w);
    let h = chase_req(112, nodes[0], 7, l, 100);
    assert_eq!(
        e.request(&h.to_packet(&[])).0,
        vec![resp(&h, Status::Unmapped, &[])]
    );
    // Malformed: layout, lengths, a payload, an unaligned node, past the VA space.
    let bad_layout = ChaseLayout { key_offset: 4, ..l };
    for (id, h, payload) in [
        (120, chase_req(120, nodes[0], 7, bad_layout, 8), vec![]),
        (121, chase_req(121, nodes[0], 7, l, 0), vec![]),
        (
            122,
            chase_req(122, nodes[0], 7, l, chase::MAX_VALUE + 1),
            vec![],
        ),
        (123, chase_req(123, nodes[0] + 4, 7, l, 8), vec![]),
        (124, chase_req(124, 1 << 48, 7, l, 8), vec![]),
        (125, chase_req(125, nodes[0], 7, l, 8), vec![1u8; 8]),
    ] {
        let mut h = h;
        h.payload_len = payload.len() as u16;
        let pkt = h.to_packet(&payload);
        assert_eq!(
            e.request(&pkt).0,
            vec![resp(&h, Status::BadRequest, &[])],
            "malformed chase {id}"
        );
    }
    // An extend opcode this fast path has no unit for.
    let mut h = req(Opcode::KvGet, pid, 130, 0);
    h.total_len = 8;
    assert_eq!(
        e.request(&h.to_packet(&[0u8; 8])).0,
        vec![resp(&h, Status::Unsupported, &[])]
    );
}

/// An offload's answer whose payload read would end past the 48-bit VA space is refused
/// (BAD_REQUEST, nothing read; the executor's range check on the unit's answer), and one
/// that ends exactly at `VA_LIMIT` is answered: two nodes in the VA space's last page.
#[test]
fn pointer_chase_answer_reads_stop_at_the_end_of_the_va_space() {
    use clio_proto::consts::VA_LIMIT;
    use clio_proto::offload::ChaseLayout;
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    e.put_pte(Pte {
        used: true,
        valid: true,
        perms: PERM_READ | PERM_WRITE,
        pid,
        vpn: VA_LIMIT / PS - 1,
        pfn: 12,
    });
    let l = ChaseLayout {
        key_offset: 0,
        next_offset: 8,
        value_offset: 16,
        max_hops: 8,
    };
    // Node B at VA_LIMIT - 32 (key 201, its value the 16 bytes of node C), node C at
    // VA_LIMIT - 16 (key 200; its value would start at VA_LIMIT).
    let (b, c) = (VA_LIMIT - 32, VA_LIMIT - 16);
    let mut nodes = 201u64.to_le_bytes().to_vec();
    nodes.extend_from_slice(&0u64.to_le_bytes());
    nodes.extend_from_slice(&200u64.to_le_bytes());
    nodes.extend_from_slice(&0u64.to_le_bytes());
    let (_, w) = write_req(pid, 1, b, &nodes);
    assert_eq!(e.request(&w).0.len(), 1, "nodes written");
    let chase_req = |id: u32, start: u64, key: u64, len: u32| {
        let mut h = req(Opcode::PointerChase, pid, id, start);
        h.arg0 = key;
        h.arg1 = l.pack();
        h.total_len = len;
        h
    };
    let h = chase_req(2, b, 201, 16);
    let ok = Header {
        arg0: 1,
        arg1: b,
        ..h.response_to(Status::Ok)
    }
    .to_packet(&nodes[16..32]);
    assert_eq!(e.request(&h.to_packet(&[])).0, vec![ok], "ends at VA_LIMIT");
    let h = chase_req(3, c, 200, 8);
    assert_eq!(
        e.request(&h.to_packet(&[])).0,
        vec![resp(&h, Status::BadRequest, &[])],
        "ends past VA_LIMIT"
    );
}
