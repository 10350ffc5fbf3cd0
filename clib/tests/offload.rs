//! The extend path's pointer chaser through CLib: one request walks a linked list at the
//! node. Found, not found, hop bound (and a cycle), values across a page boundary, and the
//! attacker's side: a pointer into another RAS's memory, or into nothing, stops the walk
//! with an error and shows nothing; a node without offloads answers Unsupported.

mod common;
use clio_clib::{ChaseLayout, ChaseOutcome, Client, ClioError, Config};
use clio_sim::CBoard;
use common::*;
use std::sync::{Arc, Mutex};

const NODE: u64 = 256;
const LAYOUT: ChaseLayout = ChaseLayout {
    key_offset: 8,
    next_offset: 0,
    value_offset: 16,
    max_hops: 1000,
};

fn node(offloads: bool) -> Arc<Mutex<CBoard>> {
    offload_board(offloads, clio_sim::DEFAULT_KV_STORE_BYTES)
}

fn client(b: &Arc<Mutex<CBoard>>) -> Client {
    Client::connect(Box::new(direct(b.clone())), Config::default()).unwrap()
}

/// `n` nodes of `NODE` bytes from `base`, in a shuffled order so the list jumps around
/// (and across pages); node i has key 1000 + i and a value of `vlen` pattern bytes. The last
/// points at `tail`. Returns the first node's address.
fn build_list(c: &Client, base: u64, n: u64, vlen: usize, tail: u64) -> u64 {
    let order: Vec<u64> = (0..n).map(|i| (i * 7919) % n).collect();
    for (k, &slot) in order.iter().enumerate() {
        let at = base + slot * NODE;
        let next = order.get(k + 1).map_or(tail, |s| base + s * NODE);
        let mut bytes = next.to_le_bytes().to_vec();
        bytes.extend((1000 + k as u64).to_le_bytes());
        bytes.extend(pattern(vlen, k as u64));
        c.rwrite(at, &bytes).unwrap();
    }
    base + order[0] * NODE
}

#[test]
fn the_chaser_finds_misses_and_stops_at_its_bound() {
    let b = node(true);
    let c = client(&b);
    let n = 600; // 600 x 256 B: the list spans three 64 KiB pages
    let base = c.ralloc(n * NODE).unwrap();
    let head = build_list(&c, base, n, 200, 0);
    for k in [0u64, 1, 299, 599] {
        match c.rchase(head, 1000 + k, LAYOUT, 200).unwrap() {
            ChaseOutcome::Found { value, node, hops } => {
                assert_eq!(value, pattern(200, k));
                assert_eq!(hops, k + 1);
                assert_eq!(c.rread(node + 8, 8).unwrap(), (1000 + k).to_le_bytes());
            }
            other => panic!("key {k}: {other:?}"),
        }
    }
    assert_eq!(
        c.rchase(head, 5, LAYOUT, 8).unwrap(),
        ChaseOutcome::NotFound { hops: n }
    );
    // The bound: stops after 10 nodes and says where to go on; going on finds it.
    let short = ChaseLayout {
        max_hops: 10,
        ..LAYOUT
    };
    let ChaseOutcome::HopLimit { next } = c.rchase(head, 1000 + 25, short, 8).unwrap() else {
        panic!("expected the hop bound");
    };
    let ChaseOutcome::HopLimit { next } = c.rchase(next, 1000 + 25, short, 8).unwrap() else {
        panic!("expected the hop bound again");
    };
    assert!(matches!(
        c.rchase(next, 1000 + 25, short, 8).unwrap(),
        ChaseOutcome::Found { hops: 6, .. }
    ));
    // A cycle ends at the bound, not never.
    let ring = c.ralloc(4 * NODE).unwrap();
    let rhead = build_list(&c, ring, 4, 8, ring);
    assert!(matches!(
        c.rchase(rhead, 5, LAYOUT, 8).unwrap(),
        ChaseOutcome::HopLimit { .. }
    ));
    // One request per chase, whatever the length.
    let before = c.stats().requests;
    c.rchase(head, 1000 + 599, LAYOUT, 8).unwrap();
    assert_eq!(c.stats().requests, before + 1);
    assert!(b.lock().unwrap().counters().offload_requests >= 8);
}

#[test]
fn a_chase_cannot_read_what_its_caller_cannot() {
    let b = node(true);
    let victim = client(&b);
    let secret = victim.ralloc(PAGE).unwrap();
    let mut node_bytes = 0u64.to_le_bytes().to_vec();
    node_bytes.extend(42u64.to_le_bytes());
    node_bytes.extend(b"the victim's secret value");
    victim.rwrite(secret, &node_bytes).unwrap();
    assert!(matches!(
        victim.rchase(secret, 42, LAYOUT, 8).unwrap(),
        ChaseOutcome::Found { .. }
    ));

    let attacker = client(&b);
    let mine = attacker.ralloc(PAGE).unwrap();
    // Start at the victim's node directly: not mapped in the attacker's RAS (the same
    // virtual address means the attacker's memory there, not the victim's).
    let r = attacker.rchase(secret, 42, LAYOUT, 25);
    assert!(
        matches!(
            r,
            Err(ClioError::Unmapped { .. }) | Ok(ChaseOutcome::NotFound { .. })
        ),
        "{r:?}"
    );
    if let Ok(ChaseOutcome::NotFound { .. }) = r {
        // Same VA in the attacker's own RAS: its own (zeroed) memory, never the victim's.
        assert_eq!(attacker.rread(secret, 8).unwrap(), [0u8; 8]);
    }
    // A list of the attacker's that points into nothing: the walk stops with the error.
    let mut bytes = 0x7fff_0000_0000u64.to_le_bytes().to_vec();
    bytes.extend(1u64.to_le_bytes());
    attacker.rwrite(mine, &bytes).unwrap();
    assert!(matches!(
        attacker.rchase(mine, 2, LAYOUT, 8),
        Err(ClioError::Unmapped { .. })
    ));
    // Layouts the node must refuse are refused before they leave (and by the node, below).
    let bad = ChaseLayout {
        key_offset: 3,
        ..LAYOUT
    };
    assert!(matches!(
        attacker.rchase(mine, 2, bad, 8),
        Err(ClioError::InvalidArgument(_))
    ));
    assert!(matches!(
        attacker.rchase(mine, 2, LAYOUT, 0),
        Err(ClioError::InvalidArgument(_))
    ));
}

#[test]
fn hand_made_chase_requests_are_checked_by_the_node() {
    use clio_proto::{Header, Opcode, Packet, Status};
    let b = node(true);
    let c = client(&b);
    let va = c.ralloc(PAGE).unwrap();
    let (pid, key, client_id) = {
        let cr = c.credentials();
        (cr.pid, cr.key, c.stats().requests as u16)
    };
    let _ = client_id;
    let ask = |h: Header| -> Status {
        let out = serve(&b, &h.to_packet(&[]));
        let p = Packet::new_checked(&out[0][..]).unwrap();
        Header::parse(&p).unwrap().status
    };
    let base = Header {
        total_len: 8,
        arg0: 1,
        arg1: LAYOUT.pack(),
        ..Header::request(Opcode::PointerChase, pid, 77, va)
    }
    .with_credentials(key, 0)
    .with_cookie(c.route_cookie());
    assert_eq!(ask(base), Status::Ok);
    for bad in [
        Header {
            arg1: ChaseLayout {
                next_offset: 5,
                ..LAYOUT
            }
            .pack(),
            ..base
        },
        Header {
            total_len: 0,
            ..base
        },
        Header {
            total_len: 4096,
            ..base
        },
        Header {
            arg1: ChaseLayout {
                max_hops: 0,
                ..LAYOUT
            }
            .pack(),
            ..base
        },
    ] {
        assert_eq!(ask(bad), Status::BadRequest, "{bad:?}");
    }
    // A wrong key: denied before the unit runs.
    assert_eq!(ask(base.with_credentials(key ^ 1, 0)), Status::Denied);
}

#[test]
fn a_node_without_offloads_answers_unsupported() {
    let b = node(false);
    let c = client(&b);
    let va = c.ralloc(PAGE).unwrap();
    assert_eq!(c.rchase(va, 1, LAYOUT, 8), Err(ClioError::Unsupported));
}
