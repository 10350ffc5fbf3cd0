//! One client over several memory nodes (in-process model nodes on loopback UDP):
//! capacity-aware placement, routing by address with a window per node, replication through
//! the backups' logs (compacted when full), and fail-over when a primary stops answering.

use clio_clib::{ClioError, MultiClient, MultiConfig, NodeSpec};
use clio_sim::server::{spawn_udp_spinning, ServerHandle};
use clio_sim::{BoardConfig, CBoard};
use std::time::{Duration, Instant};

const PAGE_SHIFT: u32 = 16;
const MIB: u64 = 1 << 20;

fn nodes(n: usize) -> Vec<ServerHandle> {
    (0..n)
        .map(|_| {
            let b = CBoard::new(&BoardConfig {
                dram_bytes: 64 * MIB,
                page_shift: PAGE_SHIFT,
                ..BoardConfig::default()
            })
            .unwrap();
            spawn_udp_spinning(b, "127.0.0.1:0".parse().unwrap(), Duration::ZERO).unwrap()
        })
        .collect()
}

fn specs(s: &[ServerHandle], caps: &[u64]) -> Vec<NodeSpec> {
    s.iter()
        .zip(caps)
        .map(|(h, &capacity)| NodeSpec {
            addr: h.udp_addr.unwrap(),
            capacity,
        })
        .collect()
}

fn fast() -> MultiConfig {
    let mut c = MultiConfig::default();
    c.node.heartbeat = false;
    // Fail-over alone: these tests count the replicas a failure leaves (healing is
    // multi_heal.rs's).
    c.auto_heal = false;
    c
}

#[test]
fn placement_follows_the_room_left_and_every_node_has_its_own_identity() {
    let s = nodes(3);
    let m = MultiClient::connect_udp(&specs(&s, &[8 * MIB, 2 * MIB, 4 * MIB]), fast()).unwrap();
    let creds = m.credentials();
    assert_eq!(creds.len(), 3);
    assert!(creds.iter().all(|(_, c)| c.key != 0));
    let mut regions = Vec::new();
    for i in 0..14u64 {
        let a = m.ralloc(MIB, 1).unwrap();
        let placed = m.placed();
        let room: Vec<u64> = [8, 2, 4]
            .iter()
            .zip(&placed)
            .map(|(c, p)| c * MIB - p)
            .collect();
        // The region went where the most room was: no node has more than one region's
        // worth of room above the least-filled choice.
        let max = *room.iter().max().unwrap();
        let min_of_chosen = room[m.replicas_of(a).unwrap()[0]];
        assert!(min_of_chosen + MIB >= max, "alloc {i}: room {room:?}");
        regions.push(a);
    }
    assert_eq!(m.placed(), vec![8 * MIB, 2 * MIB, 4 * MIB]);
    assert_eq!(
        m.ralloc(MIB, 1),
        Err(ClioError::OutOfMemory),
        "every node full"
    );
    m.rfree(regions[0]).unwrap();
    assert!(m.ralloc(MIB, 1).is_ok(), "freed room is used again");
    assert!(matches!(
        m.ralloc(MIB, 4),
        Err(ClioError::InvalidArgument(_))
    ));
}

#[test]
fn operations_are_routed_by_address_through_each_nodes_own_window() {
    let s = nodes(3);
    let m = MultiClient::connect_udp(&specs(&s, &[16 * MIB; 3]), fast()).unwrap();
    let regs: Vec<u64> = (0..6).map(|_| m.ralloc(256 << 10, 1).unwrap()).collect();
    for (i, &a) in regs.iter().enumerate() {
        m.rwrite(a + 1000, &vec![i as u8 + 1; 3000]).unwrap();
        assert_eq!(m.fetch_add(a + 8, 5).unwrap(), 0);
    }
    for (i, &a) in regs.iter().enumerate() {
        assert_eq!(m.rread(a + 1000, 3000).unwrap(), vec![i as u8 + 1; 3000]);
        assert_eq!(m.rread(a + 8, 8).unwrap(), 5u64.to_le_bytes());
    }
    let per_node: Vec<u64> = m.node_stats().iter().map(|s| s.requests).collect();
    assert!(
        per_node.iter().all(|&r| r > 8),
        "every node served its regions: {per_node:?}"
    );
    assert!(matches!(
        m.rread(regs[0] + (256 << 10) - 4, 8),
        Err(ClioError::Unmapped { .. })
    ));
    assert!(matches!(m.rread(1, 8), Err(ClioError::Unmapped { .. })));
}

#[test]
fn a_replicated_region_survives_its_primary_and_counters_stay_exact() {
    for replicas in [2, 3] {
        let mut s = nodes(3);
        let mut cfg = fast();
        cfg.log_bytes = 16 << 10; // small: the logs are applied and reset many times
        let m = MultiClient::connect_udp(&specs(&s, &[16 * MIB; 3]), cfg.clone()).unwrap();
        let a = m.ralloc(64 << 10, replicas).unwrap();
        let mut shadow = vec![0u8; 64 << 10];
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        let mut count = 0u64;
        for i in 0..300u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let off = 64 + (x % ((64 << 10) - 3000 - 64));
            let len = 1 + (x >> 20) as usize % 2500;
            let d: Vec<u8> = (0..len).map(|j| (i as usize * 31 + j) as u8).collect();
            m.rwrite(a + off, &d).unwrap();
            shadow[off as usize..off as usize + len].copy_from_slice(&d);
            assert_eq!(m.fetch_add(a, 1).unwrap(), count);
            count += 1;
        }
        assert!(
            m.stats().log_applies > 0,
            "a 16 KiB log filled and was applied"
        );
        // The primary stops answering.
        let primary = m.replicas_of(a).unwrap()[0];
        let t = Instant::now();
        drop(s.remove(primary)); // stops the server thread
        assert_eq!(
            m.fetch_add(a, 1).unwrap(),
            count,
            "the counter continues exactly"
        );
        let took = t.elapsed();
        count += 1;
        assert!(
            took < cfg.detection_bound() + Duration::from_secs(1),
            "fail-over took {took:?}"
        );
        assert!(m.node_dead(primary));
        assert_eq!(m.replicas_of(a).unwrap().len(), replicas - 1);
        let mut got = m.rread(a + 8, (64 << 10) - 8).unwrap();
        got.splice(0..0, count.to_le_bytes());
        shadow[..8].copy_from_slice(&count.to_le_bytes());
        assert!(
            got == shadow,
            "every acknowledged write is there after fail-over"
        );
        let st = m.stats();
        assert_eq!((st.failed_nodes, st.promotions), (1, 1));
    }
}

#[test]
fn an_unreplicated_region_on_a_dead_node_is_lost_not_silently_empty() {
    let mut s = nodes(2);
    let m = MultiClient::connect_udp(&specs(&s, &[16 * MIB, 8 * MIB]), fast()).unwrap();
    let a = m.ralloc(MIB, 1).unwrap();
    assert_eq!(m.replicas_of(a).unwrap(), vec![0]);
    drop(s.remove(0));
    assert_eq!(m.rread(a, 8), Err(ClioError::NodeLost { addr: a }));
    let b = m.ralloc(MIB, 1).unwrap();
    assert_eq!(
        m.replicas_of(b).unwrap(),
        vec![1],
        "placement skips the dead node"
    );
    assert_eq!(
        m.ralloc(MIB, 2),
        Err(ClioError::OutOfMemory),
        "one live node: no pair"
    );
}

#[test]
fn the_c_api_drives_a_replicated_region() {
    use clio_clib::capi::ClioStatus;
    use clio_clib::capi_multi::*;
    use std::ffi::CString;
    let s = nodes(2);
    let addrs: Vec<CString> = s
        .iter()
        .map(|h| CString::new(h.udp_addr.unwrap().to_string()).unwrap())
        .collect();
    let ptrs: Vec<*const std::ffi::c_char> = addrs.iter().map(|a| a.as_ptr()).collect();
    let caps = [16 * MIB, 16 * MIB];
    let m = clio_multi_connect_udp(ptrs.as_ptr(), caps.as_ptr(), 2, 0);
    assert!(!m.is_null());
    let mut a = 0u64;
    assert_eq!(clio_multi_ralloc(m, 1 << 16, 2, &mut a), ClioStatus::ClioOk);
    let data = [7u8; 1500];
    assert_eq!(
        clio_multi_rwrite(m, a + 8, data.as_ptr().cast(), data.len()),
        ClioStatus::ClioOk
    );
    let mut back = [0u8; 1500];
    assert_eq!(
        clio_multi_rread(m, a + 8, back.as_mut_ptr().cast(), back.len()),
        ClioStatus::ClioOk
    );
    assert_eq!(back, data);
    let mut old = 9u64;
    assert_eq!(clio_multi_fetch_add(m, a, 3, &mut old), ClioStatus::ClioOk);
    assert_eq!(old, 0);
    assert_eq!(
        clio_multi_compare_and_swap(m, a, 3, 4, &mut old),
        ClioStatus::ClioOk
    );
    assert_eq!(old, 3);
    assert_eq!(clio_multi_rlock(m, a + 2048), ClioStatus::ClioOk);
    assert_eq!(clio_multi_runlock(m, a + 2048), ClioStatus::ClioOk);
    assert_eq!(
        clio_multi_fetch_add(m, a + 4, 1, &mut old),
        ClioStatus::ClioErrInvalidArgument
    );
    assert_eq!(
        clio_multi_rread(m, a, std::ptr::null_mut(), 8),
        ClioStatus::ClioErrInvalidArgument
    );
    let mut added = 9u64;
    assert_eq!(clio_multi_heal(m, &mut added), ClioStatus::ClioOk);
    assert_eq!(added, 0, "nothing to heal");
    assert_eq!(clio_multi_heal(m, std::ptr::null_mut()), ClioStatus::ClioOk);
    assert_eq!(
        clio_multi_readmit(m, 0),
        ClioStatus::ClioOk,
        "a live node: nothing to do"
    );
    assert_eq!(clio_multi_readmit(m, 7), ClioStatus::ClioErrInvalidArgument);
    assert_eq!(clio_multi_rfree(m, a), ClioStatus::ClioOk);
    assert_eq!(clio_multi_rfree(m, a), ClioStatus::ClioErrUnmapped);
    assert_eq!(
        clio_multi_rfree(std::ptr::null_mut(), a),
        ClioStatus::ClioErrInvalidArgument
    );
    clio_multi_close(m);
    assert!(clio_multi_connect_udp(ptrs.as_ptr(), caps.as_ptr(), 0, 0).is_null());
}

#[test]
fn placement_that_meets_a_dead_node_declares_it_and_uses_the_next() {
    let mut s = nodes(2);
    let m = MultiClient::connect_udp(&specs(&s, &[16 * MIB, 8 * MIB]), fast()).unwrap();
    drop(s.remove(0)); // the roomiest node stops answering before any allocation
    let a = m.ralloc(MIB, 1).unwrap();
    assert_eq!(m.replicas_of(a).unwrap(), vec![1]);
    assert!(m.node_dead(0));
    assert_eq!(m.stats().failed_nodes, 1);
}

#[test]
fn a_write_larger_than_a_backups_log_goes_in_pieces() {
    let s = nodes(2);
    let mut cfg = fast();
    cfg.log_bytes = 16 << 10;
    let m = MultiClient::connect_udp(&specs(&s, &[16 * MIB; 2]), cfg).unwrap();
    let a = m.ralloc(MIB, 2).unwrap();
    // 300 KiB: about 40 logs' worth of records. It used to meet LogFull for ever.
    let data: Vec<u8> = (0..300 << 10)
        .map(|i: u32| (i * 7 + i / 1001) as u8)
        .collect();
    m.rwrite(a + 100, &data).unwrap();
    assert_eq!(m.rread(a + 100, data.len()).unwrap(), data);
    assert!(m.stats().log_applies >= 2);
    assert_eq!(
        m.rwrite(a + MIB - 10, &data),
        Err(ClioError::Unmapped { va: a + MIB - 10 }),
        "a write that leaves its region writes nothing"
    );
    assert_eq!(m.rread(a + MIB - 10, 10).unwrap(), vec![0u8; 10]);
}
