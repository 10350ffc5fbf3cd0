//! The `clio-slowpath` daemon as a separate process, driven through a shared-memory ring file
//! with the board's layout: this test plays the fast path.

use clio_proto::frame::Route;
use clio_proto::ring::{daemon_state, reg, Descriptor, RingLayout};
use clio_proto::{Header, Opcode, Status};
use clio_slowpath::RingWindow;
use std::process::Command;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

fn wait_for<T>(what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// A node's ring file (64 entries, 64 MiB of DRAM in 64 KiB pages) and its DRAM file, full of
/// an old tenant's data (the daemon must clear each frame before it hands it out), with the
/// daemon attached to them in its own process and a Clio-KV store of `kv_store_bytes`.
fn node_with_daemon(
    kv_store_bytes: u64,
) -> (
    tempfile::TempDir,
    RingWindow,
    std::path::PathBuf,
    std::process::Child,
) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rings");
    let ring = RingWindow::create_file(&path, RingLayout::new(64).unwrap()).unwrap();
    ring.init_fast_path(64 << 20, 16);
    let dram = dir.path().join("rings.dram");
    std::fs::write(&dram, vec![0xEEu8; 64 << 20]).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_clio-slowpath"))
        .arg("--ring-file")
        .arg(&path)
        .args(["--idle-sleep-us", "50", "--kv-store-bytes"])
        .arg(kv_store_bytes.to_string())
        .spawn()
        .unwrap();
    (dir, ring, dram, child)
}

#[test]
fn daemon_serves_the_rings_from_another_process() {
    // No Clio-KV store here (its set-up is `daemon_sets_up_the_kv_store_and_announces_it`).
    let (_dir, ring, dram, mut child) = node_with_daemon(0);

    wait_for("the daemon to attach", || {
        (ring.reg(reg::DAEMON_STATE).load(Ordering::Acquire) == daemon_state::RUNNING).then_some(())
    });
    // It fills the async free-page buffer ahead of demand.
    let mut free_pages = Vec::new();
    let pop_all = |ring: &RingWindow, sink: &mut Vec<Descriptor>| {
        while let Some(d) = ring.pop_tx() {
            sink.push(d.unwrap());
        }
    };
    let mut seen = Vec::new();
    wait_for("32 free pages", || {
        pop_all(&ring, &mut seen);
        (seen.len() >= 34).then_some(())
    });
    for d in seen.drain(..) {
        match d {
            Descriptor::FreePage { pfn } => free_pages.push(pfn),
            // The route-cookie secret, first of all.
            Descriptor::RouteKey { secret } if free_pages.is_empty() => {
                assert_ne!(secret, [0, 0])
            }
            // The ring share, second.
            Descriptor::RingShare { share } if free_pages.is_empty() => {
                assert_eq!(share, clio_proto::quota::DEFAULT_RING_SHARE)
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(free_pages.len(), 32);
    let mem = std::fs::read(&dram).unwrap();
    for pfn in &free_pages {
        let pa = (*pfn as usize) << 16;
        assert!(
            mem[pa..pa + (1 << 16)].iter().all(|b| *b == 0),
            "frame {pfn} handed out without being cleared"
        );
    }
    assert!(
        mem[(64 << 20) - 1] == 0xEE,
        "frames not handed out are left alone"
    );

    // Register, then allocate 3 pages.
    let route = Route {
        peer_port: 4000,
        local_port: 48850,
        ..Route::default()
    };
    let reg_req = Header {
        arg0: 0xfeed,
        ..Header::request(Opcode::Register, 0, 1, 0)
    };
    ring.push_rx(&Descriptor::Request {
        route,
        header: reg_req,
    })
    .unwrap();
    let (pid, key) = wait_for("the registration reply", || {
        pop_all(&ring, &mut seen);
        seen.iter().find_map(|d| match d {
            Descriptor::Reply { header, route: r } if header.req_id == 1 => {
                assert_eq!(*r, route);
                assert_eq!(header.status, Status::Ok);
                Some((header.pid, header.arg0))
            }
            _ => None,
        })
    });
    assert_ne!(pid, 0);
    assert_ne!(key, 0);
    assert!(
        seen.contains(&Descriptor::KeyWrite { pid, key, epoch: 0 }),
        "the key table is programmed with the key the process got"
    );
    seen.clear();
    let alloc = Header {
        arg0: 3 << 16,
        arg1: 3,
        ..Header::request(Opcode::Alloc, pid, 2, 0)
    }
    .with_credentials(key, 1);
    ring.push_rx(&Descriptor::Request {
        route,
        header: alloc,
    })
    .unwrap();
    let va = wait_for("the allocation reply", || {
        pop_all(&ring, &mut seen);
        seen.iter().find_map(|d| match d {
            Descriptor::Reply { header, .. } if header.req_id == 2 => Some(header.va),
            _ => None,
        })
    });
    let ptes: Vec<_> = seen
        .iter()
        .filter_map(|d| {
            if let Descriptor::PteWrite { pte, .. } = d {
                Some(*pte)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(ptes.len(), 3, "one PTE write per page, before the reply");
    assert!(ptes.iter().all(|p| p.used && !p.valid && p.pid == pid));
    assert_eq!(ptes[0].vpn, va >> 16);

    // A fault consumed a frame: the daemon tops the buffer up again.
    seen.clear();
    ring.push_rx(&Descriptor::PageMapped {
        pid,
        vpn: va >> 16,
        pfn: free_pages[0],
    })
    .unwrap();
    wait_for("a refill", || {
        pop_all(&ring, &mut seen);
        seen.iter()
            .any(|d| matches!(d, Descriptor::FreePage { .. }))
            .then_some(())
    });

    ring.reg(reg::DAEMON_STATE)
        .store(daemon_state::STOP_REQUESTED, Ordering::Release);
    let status = wait_for("the daemon to exit", || child.try_wait().unwrap());
    assert!(status.success());
    assert_eq!(
        ring.reg(reg::DAEMON_STATE).load(Ordering::Acquire),
        daemon_state::STOPPED
    );
}

#[test]
fn daemon_refuses_to_run_without_the_nodes_dram() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rings");
    let ring = RingWindow::create_file(&path, RingLayout::new(64).unwrap()).unwrap();
    ring.init_fast_path(64 << 20, 16);
    let out = Command::new(env!("CARGO_BIN_EXE_clio-slowpath"))
        .arg("--ring-file")
        .arg(&path)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("DRAM"), "a clear reason: {err}");
}

/// At start the daemon sets Clio-KV's store up in a RAS of its own and tells the fast path:
/// the store's key, every page mapped with a cleared frame (valid PTEs), then KV_CONFIG; the
/// superblock's magic is in the DRAM file.
#[test]
fn daemon_sets_up_the_kv_store_and_announces_it() {
    use clio_proto::kv::{StoreLayout, STORE_MAGIC};
    let bytes = 2u64 << 16;
    let (_dir, ring, dram, mut child) = node_with_daemon(bytes);
    let mut seen = Vec::new();
    let config = wait_for("KV_CONFIG", || {
        while let Some(d) = ring.pop_tx() {
            seen.push(d.unwrap());
        }
        seen.iter().find_map(|d| match *d {
            Descriptor::KvConfig {
                pid,
                base,
                buckets,
                records,
                status,
            } => Some((pid, base, buckets, records, status)),
            _ => None,
        })
    });
    ring.reg(reg::DAEMON_STATE)
        .store(daemon_state::STOP_REQUESTED, Ordering::Release);
    assert!(child.wait().unwrap().success());
    let (pid, base, buckets, records, status) = config;
    assert_eq!(status, Status::Ok as u8);
    let l = StoreLayout::fit(base, bytes).unwrap();
    assert_eq!((buckets, records as u64), (l.buckets, l.records));
    assert!(
        matches!(seen[0], Descriptor::RouteKey { .. }),
        "the secret first"
    );
    assert!(
        matches!(seen[1], Descriptor::RingShare { .. }),
        "the ring share second"
    );
    assert!(
        matches!(seen[2], Descriptor::KeyWrite { pid: p, key, epoch: 0 } if p == pid && key != 0)
    );
    let ptes: Vec<_> = seen
        .iter()
        .filter_map(|d| match d {
            Descriptor::PteWrite { pte, .. } if pte.pid == pid => Some(*pte),
            _ => None,
        })
        .collect();
    assert_eq!(ptes.len(), 2, "{seen:?}");
    assert!(ptes.iter().all(|p| p.valid));
    let mem = std::fs::read(&dram).unwrap();
    let first = ptes.iter().find(|p| p.vpn == base >> 16).unwrap();
    let pa = (first.pfn << 16) as usize;
    assert_eq!(mem[pa..pa + 8], STORE_MAGIC.to_le_bytes());
    // The per-RAS record limit (the default, half the records); the rest is zero.
    let q = pa + clio_proto::kv::SB_RAS_RECORDS as usize;
    let limit = clio_proto::quota::default_ras_kv_records(l.records);
    assert_eq!(mem[q..q + 8], limit.to_le_bytes());
    assert!(mem[pa + 8..q].iter().all(|&b| b == 0));
    assert!(mem[q + 8..pa + (1 << 16)].iter().all(|&b| b == 0));
}
