//! Durable writes in the model: acknowledged only after the flush, several waiting writes
//! share one flush, a node without a persistence domain refuses them and writes nothing.

mod common;

use clio_proto::frame::Route;
use clio_proto::header::parse_verified;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::{Header, Opcode, Status};
use clio_sim::{BoardConfig, CBoard};
use common::{Wire, PAGE, PAGE_SHIFT};

fn file_node(dir: &tempfile::TempDir) -> CBoard {
    CBoard::new(&BoardConfig {
        dram_bytes: 64 << 20,
        page_shift: PAGE_SHIFT,
        memory_file: Some(dir.path().join("mem")),
        ..BoardConfig::default()
    })
    .unwrap()
}

fn durable_write(w: &mut Wire, id: u32, va: u64, data: &[u8]) -> Vec<u8> {
    Header {
        total_len: data.len() as u32,
        durable: true,
        ..w.request(Opcode::Write, id, va)
    }
    .to_packet(data)
}

#[test]
fn durable_writes_wait_for_one_shared_flush() {
    let dir = tempfile::tempdir().unwrap();
    let mut w = Wire::new(file_node(&dir));
    w.register(1);
    let va = w.alloc(4 * PAGE, PERM_READ | PERM_WRITE).unwrap();
    let mut out = Vec::new();
    for (i, word) in [b"first!!!", b"second!!", b"third!!!"].iter().enumerate() {
        let p = durable_write(&mut w, 100 + i as u32, va + i as u64 * PAGE, *word);
        w.node.handle(&Route::default(), &p, &mut out);
    }
    assert!(out.is_empty(), "no acknowledgement before the flush");
    assert!(w.node.holds_responses());
    w.node.service(&mut out);
    let acks: Vec<Header> = out
        .iter()
        .map(|(_, b)| parse_verified(b).unwrap().0)
        .collect();
    assert_eq!(acks.len(), 3);
    assert!(acks.iter().all(|h| h.status == Status::Ok && !h.durable));
    let c = w.node.counters();
    assert_eq!(
        (c.durable_writes, c.durable_flushes),
        (3, 1),
        "one flush for three writes"
    );
    assert_eq!(w.read(va + PAGE, 8).unwrap(), b"second!!");
    // Plain writes are not held.
    assert_eq!(w.write(va, b"plain"), Status::Ok);
    assert!(!w.node.holds_responses());
    // Persist of earlier plain writes, served by the slow path.
    let id = 900;
    let persist = Header {
        total_len: (2 * PAGE) as u32,
        ..w.request(Opcode::Persist, id, va)
    };
    assert_eq!(w.call(persist).status, Status::Ok);
    assert_eq!(w.node.slowpath_stats().unwrap().persists, 1);
    let outside = Header {
        total_len: 8,
        ..w.request(Opcode::Persist, id + 1, va + 64 * PAGE)
    };
    assert_eq!(w.call(outside).status, Status::Unmapped);
}

#[test]
fn a_node_without_a_persistence_domain_refuses_durable_writes() {
    let mut w = Wire::new(common::node());
    w.register(1);
    let va = w.alloc(PAGE, PERM_READ | PERM_WRITE).unwrap();
    let image = w.dram();
    let p = durable_write(&mut w, 5, va, b"must not land");
    let r = w.send_raw(&p);
    assert_eq!(r[0].0.status, Status::Unsupported);
    assert_eq!(w.dram(), image, "nothing written");
    let persist = Header {
        total_len: 8,
        ..w.request(Opcode::Persist, 6, va)
    };
    assert_eq!(w.call(persist).status, Status::Unsupported);
}
