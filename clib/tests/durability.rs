//! Durable writes, rpersist and transactions through CLib against a node with a persistence
//! domain (a memory file) and one without.

use clio_clib::{Client, ClioError, READ, WRITE};
use clio_sim::server::spawn_udp;
use clio_sim::{BoardConfig, CBoard};

fn node(memory_file: Option<std::path::PathBuf>) -> clio_sim::server::ServerHandle {
    let cfg = BoardConfig {
        dram_bytes: 64 << 20,
        page_shift: 16,
        memory_file,
        ..BoardConfig::default()
    };
    spawn_udp(CBoard::new(&cfg).unwrap(), "127.0.0.1:0".parse().unwrap()).unwrap()
}

#[test]
fn durable_writes_and_rpersist_on_a_node_with_a_memory_file() {
    let dir = tempfile::tempdir().unwrap();
    let s = node(Some(dir.path().join("mem")));
    let c = Client::connect_udp(s.udp_addr.unwrap()).unwrap();
    let va = c.ralloc(1 << 20).unwrap();
    // Many durable writes in flight at once: the node acknowledges each after a flush, and
    // writes that wait together share one.
    let hs: Vec<_> = (0..64u64)
        .map(|i| {
            c.rwrite_durable_async(va + i * 4096, &i.to_le_bytes().repeat(100))
                .unwrap()
        })
        .collect();
    c.rpoll(&hs).unwrap();
    // A write retried after a timeout (a flush slower than the RTO on a loaded host) lands,
    // and is counted, twice: idempotent, and nothing is lost on loopback. (Other requests,
    // the allocation or a lease heartbeat, may have been retried too, hence the range.)
    let retried = c.stats().retransmits;
    for i in 0..64u64 {
        assert_eq!(
            c.rread(va + i * 4096, 800).unwrap(),
            i.to_le_bytes().repeat(100)
        );
    }
    c.rwrite(va + (512 << 10), b"plain, then persisted")
        .unwrap();
    c.rpersist(va + (512 << 10), 21).unwrap();
    let n = s.board().lock().unwrap().counters();
    assert!(
        (64..=64 + retried).contains(&n.durable_writes),
        "{n:?} {:?}",
        c.stats()
    );
    assert!(
        n.durable_flushes >= 1 && n.durable_flushes <= 64 + retried,
        "{n:?}"
    );
    drop(c);
    s.stop().unwrap();
}

#[test]
fn a_node_without_a_memory_file_refuses_durability() {
    let s = node(None);
    let c = Client::connect_udp(s.udp_addr.unwrap()).unwrap();
    let va = c.ralloc(4096).unwrap();
    assert_eq!(c.rwrite_durable(va, b"nope"), Err(ClioError::Unsupported));
    assert_eq!(c.rread(va, 4).unwrap(), [0; 4], "nothing was written");
    assert_eq!(c.rpersist(va, 4), Err(ClioError::Unsupported));
    drop(c);
    s.stop().unwrap();
}

#[test]
fn transactions_commit_whole_and_refuse_what_is_not_theirs() {
    let dir = tempfile::tempdir().unwrap();
    let s = node(Some(dir.path().join("mem")));
    let c = Client::connect_udp(s.udp_addr.unwrap()).unwrap();
    // Four pages of 64 KiB, never touched: the commit has the node map them.
    let va = c.ralloc(4 << 16).unwrap();
    let mut log = c.rtx_log(16 << 10).unwrap();
    assert_eq!(log.next_seq(), 1);
    let mut tx = c.rtx_begin(&mut log);
    for p in 0..4u64 {
        tx.rtx_write(va + (p << 16) + 100, &[p as u8 + 1; 1500])
            .unwrap();
    }
    assert_eq!(tx.len(), 4);
    tx.rtx_commit().unwrap();
    for p in 0..4u64 {
        assert_eq!(
            c.rread(va + (p << 16) + 100, 1000).unwrap(),
            vec![p as u8 + 1; 1000]
        );
    }
    // A later write to the same bytes wins; an abandoned transaction writes nothing.
    let mut tx = c.rtx_begin(&mut log);
    tx.rtx_write(va, b"one").unwrap();
    tx.rtx_write(va, b"two").unwrap();
    tx.rtx_commit().unwrap();
    let mut tx = c.rtx_begin(&mut log);
    tx.rtx_write(va, b"xxx").unwrap();
    drop(tx);
    assert_eq!(c.rread(va, 3).unwrap(), b"two");
    // Bounds are checked before anything is sent.
    let mut tx = c.rtx_begin(&mut log);
    assert!(matches!(
        tx.rtx_write(va, &vec![0u8; 17 << 10]),
        Err(ClioError::InvalidArgument(_))
    ));
    assert!(matches!(
        tx.rtx_write(va, &[]),
        Err(ClioError::InvalidArgument(_))
    ));
    drop(tx);
    // A read-only target: refused by the node, nothing of the transaction written.
    let ro = c.ralloc_with(4096, READ).unwrap();
    let mut tx = c.rtx_begin(&mut log);
    tx.rtx_write(va + 8, b"not this").unwrap();
    tx.rtx_write(ro, b"nor this").unwrap();
    assert!(matches!(tx.rtx_commit(), Err(ClioError::Permission { .. })));
    assert_eq!(
        c.rread(va + 8, 8).unwrap(),
        [0u8; 8],
        "the writable part was not applied"
    );
    // A new handle on the same log (a restarted process) numbers above everything resolved.
    let again = c.rtx_log_open(log.va(), log.bytes()).unwrap();
    assert!(again.next_seq() >= log.next_seq() - 1);
    let rw = c.ralloc_with(4096, READ | WRITE).unwrap();
    let mut log = again;
    let mut tx = c.rtx_begin(&mut log);
    tx.rtx_write(rw, b"after reopen").unwrap();
    tx.rtx_commit().unwrap();
    assert_eq!(c.rread(rw, 12).unwrap(), b"after reopen");
    assert!(s.board().lock().unwrap().counters().page_faults >= 5);
    drop(c);
    s.stop().unwrap();
}

#[test]
fn a_node_without_a_memory_file_refuses_transactions() {
    let s = node(None);
    let c = Client::connect_udp(s.udp_addr.unwrap()).unwrap();
    assert!(matches!(c.rtx_log(4096), Err(ClioError::Unsupported)));
    drop(c);
    s.stop().unwrap();
}
