//! Reads of any length up to 1 MiB are one request: the node answers one packet per KiB,
//! CLib reassembles them in any order and retries the whole request when one is lost.

mod common;
use clio_clib::transport::InProcTransport;
use clio_clib::{Client, ClioError, Config, READ, WRITE};
use clio_proto::consts::MAX_REQUEST_LEN;
use clio_proto::header::parse_verified;
use clio_proto::Opcode;
use common::*;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn config() -> Config {
    Config {
        track_shift: PAGE_SHIFT,
        // In-process round trips take microseconds: a lost packet is retried quickly.
        min_rto: Duration::from_micros(300),
        initial_rto: Duration::from_millis(2),
        max_rto: Duration::from_millis(20),
        // No background heartbeats: the tests count requests.
        heartbeat: false,
        ..Config::default()
    }
}

/// A node whose answers to reads come back in reverse order, losing packet `lose` of the
/// first `losses` multi-packet answers.
fn lossy_client(lose: u16, losses: u32) -> (Client, Arc<AtomicU32>) {
    let b = Arc::new(Mutex::new(board()));
    let lost = Arc::new(AtomicU32::new(0));
    let l = lost.clone();
    let t = InProcTransport::direct(move |p| {
        let mut out = serve(&b, p);
        out.reverse();
        out.retain(|pkt| {
            let Ok((h, _)) = parse_verified(pkt) else {
                return true;
            };
            let hit = h.opcode == Opcode::Read && h.pkt_count > lose && h.pkt_index == lose;
            !(hit && l.fetch_add(1, Ordering::Relaxed) < losses)
        });
        out
    });
    (Client::connect(Box::new(t), config()).unwrap(), lost)
}

#[test]
fn reads_of_any_length_are_one_request() {
    let (c, _) = lossy_client(0, 0);
    let va = c.ralloc(20 * PAGE).unwrap();
    let data = pattern(20 * PAGE as usize, 11);
    c.rwrite(va, &data).unwrap();
    for (off, len) in [
        (3usize, 1usize),
        (0, 1024),
        (PAGE as usize - 1000, 1025),
        (77, 64 << 10),
        (PAGE as usize + 5, MAX_REQUEST_LEN as usize),
    ] {
        let before = c.stats().requests;
        let got = c.rread(va + off as u64, len).unwrap();
        assert!(got == data[off..off + len], "len {len} at +{off}");
        assert_eq!(c.stats().requests - before, 1, "len {len}: one request");
    }
    // The 1 MiB answer (1,114,112 bytes) is more than the incast window (96 KiB): it went
    // alone, and gave its bytes back.
    let s = c.stats();
    assert!(
        s.iwnd_limit < MAX_REQUEST_LEN as u64 && s.iwnd_used == 0,
        "{s:?}"
    );
    // Longer than one request: split at max_read_bytes.
    let before = c.stats().requests;
    let len = MAX_REQUEST_LEN as usize + 1000;
    assert!(c.rread(va + 9, len).unwrap() == data[9..9 + len]);
    assert_eq!(c.stats().requests - before, 2);
}

#[test]
fn a_lost_middle_packet_retries_the_whole_read() {
    let (c, lost) = lossy_client(31, 2);
    let va = c.ralloc(2 * PAGE).unwrap();
    let data = pattern(2 * PAGE as usize, 5);
    c.rwrite(va, &data).unwrap();
    let before = c.stats();
    assert!(c.rread(va + 100, 64 << 10).unwrap() == data[100..100 + (64 << 10)]);
    let s = c.stats();
    assert_eq!(lost.load(Ordering::Relaxed), 3, "lost twice, then answered");
    assert_eq!(s.requests - before.requests, 1);
    assert_eq!(
        s.retransmits - before.retransmits,
        2,
        "the same request twice more"
    );
    assert!(
        s.stale_responses - before.stale_responses >= 63,
        "the retries' duplicates of packets already in are ignored"
    );
}

#[test]
fn a_page_failing_midway_fails_the_read_and_keeps_nothing() {
    let (c, _) = lossy_client(0, 0);
    let a = c.ralloc_with(PAGE, READ | WRITE).unwrap();
    let b = c.ralloc_with(PAGE, WRITE).unwrap();
    assert_eq!(b, a + PAGE);
    assert_eq!(
        c.rread(a + 10, 2 * PAGE as usize),
        Err(ClioError::Permission { va: a + 10 })
    );
    c.rfree(b).unwrap();
    assert_eq!(
        c.rread(a, 3 * PAGE as usize),
        Err(ClioError::Unmapped { va: a })
    );
    // The readable part is still readable.
    assert_eq!(c.rread(a, PAGE as usize).unwrap().len(), PAGE as usize);
}

/// Client-visible latency of a 64 KiB read over UDP (loopback, a model node in this process)
/// as one request against 64 requests of 1 KiB (`max_read_bytes` = 1024: how CLib read before),
/// interleaved. A measurement, not a check: `cargo test --release -p clio-clib --test
/// long_reads latency -- --ignored --nocapture` (figures in docs/perf.md).
#[test]
#[ignore]
fn latency_of_a_64_kib_read_one_request_vs_64() {
    use clio_clib::transport::Transport;
    use clio_clib::TransportKind;
    use std::time::Instant;
    let server = clio_sim::server::spawn_udp(board(), "127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = server.udp_addr.unwrap();
    let open = |max_read_bytes: u32| {
        let t: Box<dyn Transport> = TransportKind::Udp(addr).open().unwrap();
        let cfg = Config {
            max_read_bytes,
            ..Config::default()
        };
        Client::connect(t, cfg).unwrap()
    };
    let (one, split) = (open(MAX_REQUEST_LEN), open(1024));
    let len = 64 << 10;
    let va1 = one.ralloc(2 * PAGE).unwrap();
    let va2 = split.ralloc(2 * PAGE).unwrap();
    one.rwrite(va1, &pattern(len, 1)).unwrap();
    split.rwrite(va2, &pattern(len, 1)).unwrap();
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for i in 0..2200 {
        let t = Instant::now();
        one.rread(va1 + 8, len).unwrap();
        let ta = t.elapsed();
        let t = Instant::now();
        split.rread(va2 + 8, len).unwrap();
        let tb = t.elapsed();
        if i >= 200 {
            a.push(ta);
            b.push(tb);
        }
    }
    a.sort();
    b.sort();
    let q = |v: &[Duration], p: f64| v[((v.len() as f64 * p) as usize).min(v.len() - 1)];
    for (name, v) in [("one request", &a), ("64 requests", &b)] {
        println!(
            "64 KiB read, {name}: median {:?} p99 {:?}",
            q(v, 0.5),
            q(v, 0.99)
        );
    }
    println!(
        "median ratio one/split {:.2}, retransmits {} / {}",
        q(&a, 0.5).as_secs_f64() / q(&b, 0.5).as_secs_f64(),
        one.stats().retransmits,
        split.stats().retransmits
    );
}

/// A transport that can take only 8 KiB of answer at once (a small receive buffer).
struct SmallBuffer(InProcTransport);

impl clio_clib::transport::Transport for SmallBuffer {
    fn send(&self, packet: &[u8]) -> clio_clib::Result<()> {
        self.0.send(packet)
    }
    fn recv(&self, timeout: Duration) -> clio_clib::Result<Option<Vec<u8>>> {
        self.0.recv(timeout)
    }
    fn name(&self) -> &'static str {
        "small-buffer"
    }
    fn burst_capacity(&self) -> Option<usize> {
        Some(8 << 10)
    }
}

#[test]
fn reads_are_cut_to_what_the_transport_can_receive_at_once() {
    let b = Arc::new(Mutex::new(board()));
    let t = InProcTransport::direct(move |p| serve(&b, p));
    let c = Client::connect(Box::new(SmallBuffer(t)), config()).unwrap();
    let va = c.ralloc(2 * PAGE).unwrap();
    let data = pattern(64 << 10, 5);
    c.rwrite(va, &data).unwrap();
    let before = c.stats().requests;
    assert!(c.rread(va, 64 << 10).unwrap() == data);
    assert_eq!(c.stats().requests - before, 8, "64 KiB in answers of 8 KiB");
}
