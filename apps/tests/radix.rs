//! The radix tree over a model node with the pointer-chasing offload: both searches agree
//! with a local map on present and absent keys, and the offloaded one costs one request per
//! level while the compute node's costs one per node visited.

use clio_apps::radix::{RadixTree, LEVELS};
use clio_clib::transport::InProcTransport;
use clio_clib::{Client, Config};
use clio_proto::frame::Route;
use clio_sim::{BoardConfig, CBoard};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

fn client() -> Client {
    let b = Arc::new(Mutex::new(
        CBoard::new(&BoardConfig {
            dram_bytes: 256 << 20,
            page_shift: 16,
            ring_entries: 256,
            offloads: clio_sim::Offloads::All,
            ..BoardConfig::default()
        })
        .unwrap(),
    ));
    let t = InProcTransport::direct(move |p| {
        let mut out = Vec::new();
        let mut g = b.lock().unwrap();
        g.handle(&Route::default(), p, &mut out);
        g.service(&mut out);
        out.into_iter().map(|(_, p)| p).collect()
    });
    Client::connect(Box::new(t), Config::default()).unwrap()
}

#[test]
fn both_searches_agree_and_the_offload_takes_one_request_per_level() {
    let c = client();
    let mut x = 0x9E37_79B9u32;
    let mut entries = BTreeMap::new();
    for i in 0..3000u64 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        entries.insert(x, i + 1);
    }
    let t = RadixTree::build(&c, &entries).unwrap();
    assert!(t.nodes() > entries.len() as u64);
    let (mut off, mut cn) = (0u64, 0u64);
    for (&k, &v) in entries.iter().step_by(7) {
        let (a, ca) = t.get_offloaded(&c, k).unwrap();
        let (b, cb) = t.get_from_cn(&c, k).unwrap();
        assert_eq!((a, b), (Some(v), Some(v)), "key {k:#x}");
        assert_eq!(ca.requests, LEVELS as u64);
        off += ca.requests;
        cn += cb.requests;
    }
    for k in [0u32, 1, 0xFFFF_FFFF, 0x1234_5678] {
        if entries.contains_key(&k) {
            continue;
        }
        assert_eq!(t.get_offloaded(&c, k).unwrap().0, None);
        assert_eq!(t.get_from_cn(&c, k).unwrap().0, None);
    }
    // 3000 keys: about 256 root siblings and ~12 per second-level list to walk.
    assert!(
        cn > 10 * off,
        "compute-node search {cn} requests vs offloaded {off}"
    );
}
