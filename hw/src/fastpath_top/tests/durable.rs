//! Durable writes: the persist handshake before the answer.

use super::*;

/// Durable writes (`FLAG_DURABLE`): without a persistence domain they are answered
/// UNSUPPORTED and write nothing; with one, the response leaves only after every B
/// response of the write and a persist handshake per page piece for exactly its bytes; a
/// failed handshake answers RETRY_LATER.
#[test]
fn durable_writes_wait_for_the_persist_handshake() {
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    map_second_page(&mut e, pid);
    let durable = |id: u32, va: u64, data: &[u8]| {
        let (mut h, _) = write_req(pid, id, va, data);
        h.durable = true;
        (h, h.to_packet(data))
    };
    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
    let va = 0x10 * PS + 100;
    // No persistence domain (cfg_persist low): refused, nothing reaches DRAM.
    let (h, f) = durable(1, va, &data);
    let aws = e.dram_traffic().1;
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Unsupported, &[])]);
    assert_eq!(e.dram_traffic().1, aws, "a refused durable write wrote");
    assert!(e.persists.is_empty());
    assert_eq!(e.dram.mem().bytes(5 * PS + 100, 300), vec![0; 300]);

    e.b.uut.cfg_persist.next = true;
    e.persist_delay = 40;
    let (h, f) = write_req(pid, 2, va, &data);
    let (out, plain) = e.request(&f);
    assert_eq!(out, vec![resp(&h, Status::Ok, &[])]);
    assert!(e.persists.is_empty(), "a plain write asked for a persist");
    let (h, f) = durable(3, va, &data);
    let (out, lat) = e.request(&f);
    assert_eq!(out, vec![resp(&h, Status::Ok, &[])]);
    assert_eq!(e.dram.mem().bytes(5 * PS + 100, 300), data);
    assert_eq!(e.persists.len(), 1);
    let (at, addr, len, due) = e.persists[0];
    assert_eq!((addr, len), (5 * PS + 100, 300), "persisted range");
    assert_eq!(due, 0, "persist asked before the write's B responses");
    assert!(
        e.first_tx_cycle.is_some_and(|t| t > at),
        "the response left before its data was durable"
    );
    assert!(lat >= plain + 40, "durable {lat} cycles, plain {plain}");
    println!("write of 300 B: plain {plain} cycles, durable {lat} (persist answered after 40)");

    // Across a page boundary: one handshake per piece, the first ending at the boundary.
    e.persists.clear();
    let (h, f) = durable(4, 0x11 * PS - 40, &data[..100]);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Ok, &[])]);
    let ranges: Vec<(u64, u64)> = e.persists.iter().map(|p| (p.1, p.2)).collect();
    assert_eq!(ranges, vec![(6 * PS - 40, 40), (9 * PS, 60)]);
    assert_eq!(e.dram.mem().bytes(6 * PS - 40, 40), data[..40]);
    assert_eq!(e.dram.mem().bytes(9 * PS, 60), data[40..100]);

    // The board could not make it durable: the client is told to retry.
    e.persist_fails = true;
    let (h, f) = durable(5, va, &data);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::RetryLater, &[])]);
}
