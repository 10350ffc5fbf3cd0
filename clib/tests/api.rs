//! The API end to end over the in-process transport and over UDP to a model node.

mod common;
use clio_clib::{Client, ClioError, Config, Output, READ};
use common::*;
use std::sync::{Arc, Mutex};

fn client() -> (Client, Arc<Mutex<clio_sim::CBoard>>) {
    let b = Arc::new(Mutex::new(board()));
    let c = Client::connect(
        Box::new(direct(b.clone())),
        Config {
            track_shift: PAGE_SHIFT,
            ..Config::default()
        },
    )
    .expect("connect");
    (c, b)
}

#[test]
fn register_alloc_write_read_free() {
    let (c, _b) = client();
    assert_ne!(c.pid(), 0, "the node assigned a PID");
    let va = c.ralloc(3 * PAGE).unwrap();
    assert_eq!(c.allocation_len(va), Some(3 * PAGE));
    // Small, unaligned, multi-packet, multi-request (> max_request_bytes) and page-crossing.
    for (off, len, seed) in [
        (0u64, 16usize, 1u64),
        (5, 1, 2),
        (1000, 1025, 3),
        (PAGE - 700, 40_000, 4),
        (17, 3 * PAGE as usize - 17, 5),
    ] {
        let d = pattern(len, seed);
        c.rwrite(va + off, &d).unwrap();
        assert_eq!(c.rread(va + off, len).unwrap(), d, "len {len} at +{off}");
    }
    let mut buf = [0u8; 4];
    c.rwrite(va, b"abcd").unwrap();
    c.rread_into(va, &mut buf).unwrap();
    assert_eq!(&buf, b"abcd");
    c.rfree(va).unwrap();
    assert_eq!(c.rread(va, 4), Err(ClioError::Unmapped { va }));
    assert_eq!(c.allocation_len(va), None);
}

#[test]
fn typed_errors_and_local_checks() {
    let (c, _b) = client();
    let ro = c.ralloc_with(PAGE, READ).unwrap();
    assert_eq!(c.rwrite(ro, b"x"), Err(ClioError::Permission { va: ro }));
    assert_eq!(c.rread(ro, 3).unwrap(), vec![0, 0, 0]);
    assert_eq!(
        c.rread(1 << 40, 8),
        Err(ClioError::Unmapped { va: 1 << 40 })
    );
    assert_eq!(c.ralloc(1 << 46), Err(ClioError::OutOfMemory));
    assert!(matches!(c.rread(ro, 0), Err(ClioError::InvalidArgument(_))));
    assert!(matches!(
        c.rwrite(u64::MAX - 2, b"abcd"),
        Err(ClioError::InvalidArgument(_))
    ));
    assert!(matches!(
        c.fetch_add(ro + 3, 1),
        Err(ClioError::InvalidArgument(_))
    ));
    assert!(matches!(
        c.ralloc_with(PAGE, 0),
        Err(ClioError::InvalidArgument(_))
    ));
    assert!(matches!(
        c.rpoll_one(clio_clib::Handle(999_999)),
        Err(ClioError::UnknownHandle(999_999))
    ));
    let s = c.stats();
    assert_eq!(s.retransmits, 0, "a clean transport retries nothing");
}

#[test]
fn atomics_and_async_poll() {
    let (c, _b) = client();
    let va = c.ralloc(PAGE).unwrap();
    assert_eq!(c.fetch_add(va, 5).unwrap(), 0);
    assert_eq!(c.fetch_add(va, 7).unwrap(), 5);
    assert_eq!(
        c.compare_and_swap(va, 1, 99).unwrap(),
        12,
        "failed CAS returns the old value"
    );
    assert_eq!(c.compare_and_swap(va, 12, 99).unwrap(), 12);
    assert_eq!(c.rread(va, 8).unwrap(), 99u64.to_le_bytes());
    let hs: Vec<_> = (0..10)
        .map(|_| c.fetch_add_async(va + 8, 1).unwrap())
        .collect();
    let mut olds: Vec<u64> = c
        .rpoll(&hs)
        .unwrap()
        .into_iter()
        .map(|o| {
            if let Output::Value(v) = o {
                v
            } else {
                u64::MAX
            }
        })
        .collect();
    olds.sort();
    assert_eq!(olds, (0..10).collect::<Vec<_>>());
    // The client acked every non-idempotent result back to the node.
    c.rrelease();
    assert!(c.stats().cn_acks >= 12);
    c.rlock(va + 16).unwrap();
    assert_eq!(c.test_and_set(va + 16).unwrap(), 1, "held");
    c.runlock(va + 16).unwrap();
    assert_eq!(c.test_and_set(va + 16).unwrap(), 0, "released");
    c.rfence().unwrap();
    let h = c.ralloc_async(PAGE, READ).unwrap();
    assert!(matches!(c.rpoll_one(h), Ok(Output::Va(_))));
}

#[test]
fn udp_many_threads_share_a_lock() {
    let server =
        clio_sim::server::spawn_udp_threads(board(), "127.0.0.1:0".parse().unwrap(), 4).unwrap();
    let addr = server.udp_addr.unwrap();
    let c = Client::connect_udp(addr).unwrap();
    let va = c.ralloc(PAGE).unwrap();
    let (lock, counter) = (va, va + 64);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let c = c.clone();
            std::thread::spawn(move || {
                for _ in 0..50 {
                    c.rlock(lock).unwrap();
                    let v = u64::from_le_bytes(c.rread(counter, 8).unwrap().try_into().unwrap());
                    // Asynchronous write inside the critical section: runlock must release it.
                    let h = c.rwrite_async(counter, &(v + 1).to_le_bytes()).unwrap();
                    c.runlock(lock).unwrap();
                    c.rpoll_one(h).unwrap();
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(c.rread(counter, 8).unwrap(), 200u64.to_le_bytes());
    // A second process (another client, another PID) sees the same node, not the memory.
    let other = Client::connect_udp(addr).unwrap();
    assert_ne!(other.pid(), c.pid());
    assert!(matches!(
        other.rread(counter, 8),
        Err(ClioError::Unmapped { .. })
    ));
    server.stop().unwrap();
}

/// Over UDP each thread gets a socket of its own (a lane), so the answers to its requests
/// come back to it and no other thread has to receive and hand them over. Operations cross
/// lanes freely: one thread waits for another's asynchronous operations, also after that
/// thread has ended.
#[test]
fn udp_threads_get_lanes_and_wait_across_them() {
    let server =
        clio_sim::server::spawn_udp_threads(board(), "127.0.0.1:0".parse().unwrap(), 4).unwrap();
    let c = Client::connect_udp(server.udp_addr.unwrap()).unwrap();
    let va = c.ralloc(PAGE).unwrap();
    c.rwrite(va, &pattern(4096, 7)).unwrap();
    // The threads hold their lanes at once (a thread that ends gives its lane back).
    let all = std::sync::Arc::new(std::sync::Barrier::new(3));
    let threads: Vec<_> = (0..3u64)
        .map(|t| {
            let (c, all) = (c.clone(), all.clone());
            std::thread::spawn(move || {
                for i in 0..200u64 {
                    let at = va + 64 * ((t * 7 + i) % 64);
                    assert_eq!(c.rread(at, 64).unwrap().len(), 64);
                }
                all.wait();
                // Started here, finished by the main thread after this thread is gone.
                (0..8)
                    .map(|i| c.rread_async(va + 512 * i, 512).unwrap())
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut handles = Vec::new();
    for t in threads {
        handles.extend(t.join().unwrap());
    }
    assert_eq!(
        c.stats().lanes,
        4,
        "the main thread and three more: {:?}",
        c.stats()
    );
    // The answers wait on the ended threads' sockets: read there (retries would go the
    // same way and never reach the main thread's socket).
    let want = pattern(4096, 7);
    for (i, out) in c.rpoll(&handles).unwrap().into_iter().enumerate() {
        let at = 512 * (i % 8);
        assert_eq!(out, Output::Data(want[at..at + 512].to_vec()));
    }
    server.stop().unwrap();
}

/// Batched reads over UDP, with GSO/GRO at either end or neither: every answer arrives
/// whole and in its place, whether the node's answers come coalesced or not, and neither end
/// gives up GSO on loopback.
#[test]
fn udp_batched_reads_with_and_without_gso_at_either_end() {
    use clio_clib::transport::UdpTransport;
    for (node_gso, client_gso) in [(true, true), (true, false), (false, true), (false, false)] {
        let server = clio_sim::server::spawn_udp_with(
            board(),
            "127.0.0.1:0".parse().unwrap(),
            clio_sim::server::UDP_SPIN,
            node_gso,
        )
        .unwrap();
        let t = Arc::new(UdpTransport::connect_with(server.udp_addr.unwrap(), client_gso).unwrap());
        let c = Client::connect(Box::new(t.clone()), Config::default()).unwrap();
        let va = c.ralloc(PAGE).unwrap();
        let data = pattern(16384, 3);
        c.rwrite(va, &data).unwrap();
        // 64 equal reads (one GSO run each way), then reads of several sizes in one batch.
        let reads: Vec<(u64, usize)> = (0..64u64).map(|i| (va + 64 * i, 64)).collect();
        let mixed = [
            (va + 5, 1000),
            (va + 100, 4096),
            (va + 7, 1),
            (va + 9000, 2500),
        ];
        for batch in [&reads[..], &mixed[..]] {
            let hs = c.rread_many_async(batch).unwrap();
            assert_eq!(hs.len(), batch.len());
            for (&(at, len), out) in batch.iter().zip(c.rpoll(&hs).unwrap()) {
                let o = (at - va) as usize;
                assert_eq!(
                    out,
                    Output::Data(data[o..o + len].to_vec()),
                    "{node_gso} {client_gso}"
                );
            }
        }
        // A bad argument sends nothing and fails the whole batch.
        assert!(c.rread_many_async(&[(va, 64), (va, 0)]).is_err());
        assert_eq!(
            t.offload(),
            (client_gso, client_gso),
            "GSO and GRO kept where asked"
        );
        drop(c);
        server.stop().unwrap();
    }
}

#[test]
fn deferred_sends_leave_together_at_the_next_wait() {
    // A window that admits 20 small reads at once.
    let c = Client::connect(
        Box::new(direct(Arc::new(Mutex::new(board())))),
        Config {
            track_shift: PAGE_SHIFT,
            initial_cwnd: 64.0,
            ..Config::default()
        },
    )
    .expect("connect");
    let va = c.ralloc(PAGE).unwrap();
    let data = pattern(4096, 9);
    c.rwrite(va, &data).unwrap();
    c.set_deferred_sends(true);
    let before = c.stats();
    let hs: Vec<_> = (0..20)
        .map(|i| c.rread_async(va + i * 64, 64).unwrap())
        .collect();
    let queued = c.stats();
    assert_eq!(queued.packets_sent, before.packets_sent, "nothing left yet");
    // The first wait sends the queue as one batch.
    let out = c.rpoll(&hs).unwrap();
    for (i, o) in out.iter().enumerate() {
        assert_eq!(
            o,
            &Output::Data(data[i * 64..(i + 1) * 64].to_vec()),
            "read {i}"
        );
    }
    let after = c.stats();
    assert_eq!(after.packets_sent - before.packets_sent, 20);
    assert_eq!(after.send_batches - before.send_batches, 1, "one batch");
    // rflush sends without waiting; a synchronous operation sends what is queued before it.
    let h = c.rread_async(va, 16).unwrap();
    c.rflush();
    assert_eq!(c.stats().packets_sent, after.packets_sent + 1);
    let h2 = c.rread_async(va + 16, 16).unwrap();
    c.rwrite(va + 32, b"x").unwrap();
    assert_eq!(c.rpoll_one(h).unwrap(), Output::Data(data[..16].to_vec()));
    assert_eq!(
        c.rpoll_one(h2).unwrap(),
        Output::Data(data[16..32].to_vec())
    );
    // Without deferred sends, each start leaves at once.
    c.set_deferred_sends(false);
    let b = c.stats().send_batches;
    let hs: Vec<_> = (0..5)
        .map(|i| c.rread_async(va + i * 64, 64).unwrap())
        .collect();
    assert_eq!(c.stats().send_batches - b, 5);
    c.rpoll(&hs).unwrap();
}
