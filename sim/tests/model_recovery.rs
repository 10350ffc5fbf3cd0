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

fn node(file: &Path, dram: u64) -> Result<CBoard, BoardError> {
    CBoard::new(&BoardConfig {
        dram_bytes: dram,
        page_shift: PAGE_SHIFT,
        memory_file: Some(file.to_path_buf()),
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
