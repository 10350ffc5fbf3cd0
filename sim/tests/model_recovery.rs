//! A node restarted on its memory file comes back with its remote address spaces, keys,
//! members, regions and data; files it cannot trust are refused with a clear error.

mod common;

use clio_proto::persist::META_BYTES;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::Status;
use clio_sim::{BoardConfig, BoardError, CBoard};
use common::{Wire, PAGE, PAGE_SHIFT};
use std::path::Path;

const DRAM: u64 = 64 << 20;
const RW: u8 = PERM_READ | PERM_WRITE;

/// A node on a memory file. Without offloads: Clio-KV's store is the slow path's own RAS,
/// rebuilt at each start (the previous one is recovered like any RAS and torn down when its
/// lease ends), so it would add one space, member and region to every count below.
fn node(file: &Path, dram: u64) -> Result<CBoard, BoardError> {
    CBoard::new(&BoardConfig {
        dram_bytes: dram,
        page_shift: PAGE_SHIFT,
        memory_file: Some(file.to_path_buf()),
        offloads: clio_sim::Offloads::None,
        ..BoardConfig::default()
    })
}

#[test]
fn a_restarted_node_serves_the_same_spaces_keys_and_data() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mem");
    let mut w = Wire::new(node(&file, DRAM).unwrap());
    let owner = w.register(1);
    let a = w.alloc(4 * PAGE, RW).unwrap();
    let b = w.alloc(2 * PAGE, PERM_READ).unwrap();
    for i in 0..4 {
        assert_eq!(
            w.write(a + i * PAGE + 8, format!("page {i}").as_bytes()),
            Status::Ok
        );
    }
    let mut peer = Wire::new(common::node());
    std::mem::swap(&mut peer.node, &mut w.node);
    let member = peer.join(owner, 2).unwrap();
    std::mem::swap(&mut peer.node, &mut w.node);
    let mut other = Wire::new(common::node());
    std::mem::swap(&mut other.node, &mut w.node);
    let stranger = other.register(3);
    let theirs = other.alloc(PAGE, RW).unwrap();
    assert_eq!(other.write(theirs, b"theirs"), Status::Ok);
    assert_eq!(
        other.unregister(false),
        Status::Ok,
        "torn down before the crash"
    );
    std::mem::swap(&mut other.node, &mut w.node);

    // The node stops without a goodbye (the model's DRAM and metadata are the file's pages).
    drop(w.node);
    let n = node(&file, DRAM).unwrap();
    let rep = n.recovery().expect("recovered");
    assert_eq!((rep.spaces, rep.members, rep.regions), (1, 2, 2));
    assert_eq!(rep.mapped_pages, 4);
    let mut w = Wire::new(n);
    w.m = owner;
    for i in 0..4 {
        let want = format!("page {i}");
        assert_eq!(
            w.read(a + i * PAGE + 8, want.len() as u32).unwrap(),
            want.as_bytes()
        );
    }
    assert_eq!(
        w.write(b, b"x"),
        Status::Permission,
        "permissions came back too"
    );
    // The joined member's credentials still open the RAS; the torn-down one's do not.
    w.m = member;
    assert_eq!(w.read(a + 8, 6).unwrap(), b"page 0");
    w.m = stranger;
    assert_eq!(w.read(theirs, 6), Err(Status::Denied));
    // New allocations and first touches do not clash with what was recovered.
    w.m = owner;
    let c = w.alloc(8 * PAGE, RW).unwrap();
    for i in 0..8 {
        assert_eq!(w.write(c + i * PAGE, &[0xC5; 64]), Status::Ok);
    }
    for i in 0..4 {
        let want = format!("page {i}");
        assert_eq!(
            w.read(a + i * PAGE + 8, want.len() as u32).unwrap(),
            want.as_bytes()
        );
    }
    // A third life: everything still there, including the allocation of the second.
    drop(w.node);
    let mut w = Wire::new(node(&file, DRAM).unwrap());
    w.m = owner;
    assert_eq!(w.read(c + 7 * PAGE, 64).unwrap(), [0xC5; 64]);
}

#[test]
fn files_it_cannot_trust_are_refused_not_reinitialised() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mem");
    let mut w = Wire::new(node(&file, DRAM).unwrap());
    w.register(1);
    let va = w.alloc(PAGE, RW).unwrap();
    assert_eq!(w.write(va, b"precious"), Status::Ok);
    drop(w);
    // Another geometry.
    let e = node(&file, DRAM * 2).unwrap_err();
    assert!(e.to_string().contains("bytes of DRAM"), "{e}");
    // A foreign file: random bytes where the metadata should be.
    let foreign = dir.path().join("foreign");
    std::fs::write(&foreign, vec![0x42u8; (DRAM + META_BYTES) as usize]).unwrap();
    let e = node(&foreign, DRAM).unwrap_err();
    assert!(e.to_string().contains("not a Clio memory file"), "{e}");
    // A file of the format before metadata: a page table and no metadata area.
    let old = dir.path().join("old");
    let bytes = std::fs::read(&file).unwrap();
    std::fs::write(&old, &bytes[..DRAM as usize]).unwrap();
    let e = node(&old, DRAM).unwrap_err();
    assert!(matches!(e, BoardError::OldFormat(_)), "{e}");
    // None of that touched the good file: it still recovers.
    assert_eq!(std::fs::read(&file).unwrap(), bytes);
    assert!(node(&file, DRAM).unwrap().recovery().is_some());
}

/// Clio-KV's store is rebuilt at each start: after a restart on the same memory file the old
/// store's RAS is recovered like any other and torn down when its lease ends (the slow path
/// renews only the store it built), which returns its frames; the new store serves.
#[test]
fn the_previous_store_is_torn_down_when_its_lease_ends() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mem");
    let with_store = |lease_ms| BoardConfig {
        dram_bytes: DRAM,
        page_shift: PAGE_SHIFT,
        memory_file: Some(file.clone()),
        offloads: clio_sim::Offloads::All,
        kv_store_bytes: 2 * PAGE,
        lease: std::time::Duration::from_millis(lease_ms),
        ..BoardConfig::default()
    };
    drop(CBoard::new(&with_store(60_000)).unwrap());
    let mut n = CBoard::new(&with_store(200)).unwrap();
    let rep = n.recovery().expect("recovered");
    assert_eq!((rep.spaces, rep.members), (1, 1), "the old store's RAS");
    assert_eq!(n.slowpath_stats().unwrap().teardowns, 0);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let mut out = Vec::new();
    n.service(&mut out);
    let sp = n.slowpath_stats().unwrap();
    assert_eq!(sp.teardowns, 1, "the old store's RAS is gone: {sp:?}");
    assert_eq!(sp.frees, 1, "its region was freed: {sp:?}");
    // The new store still serves (its membership is renewed by the slow path).
    let mut w = Wire::new(n);
    w.register(1);
    let mut p = clio_proto::kv::KvRequest::new(clio_proto::Opcode::KvPut, b"k", b"v")
        .unwrap()
        .header(clio_proto::Opcode::KvPut, w.m.pid, 77);
    p = p.with_credentials(w.m.key, w.m.client);
    let payload = clio_proto::kv::KvRequest::new(clio_proto::Opcode::KvPut, b"k", b"v")
        .unwrap()
        .encode();
    let r = w.send_raw(&p.to_packet(&payload));
    assert_eq!(r[0].0.status, clio_proto::Status::Ok);
}
