//! Durable writes and rpersist through CLib against a node with a persistence domain (a
//! memory file) and one without.

use clio_clib::{Client, ClioError};
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
    assert_eq!(n.durable_writes, 64);
    assert!(n.durable_flushes >= 1 && n.durable_flushes <= 64, "{n:?}");
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
