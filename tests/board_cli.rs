//! `clio board` as a user runs it: a real process answering real UDP on loopback.

mod common;

use clio_proto::header::parse_verified;
use clio_proto::{Header, Opcode, Status};
use common::spawn_board_piped;
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Child, Command};
use std::time::{Duration, Instant};

struct Board {
    child: Child,
    addr: String,
    output: BufReader<std::process::ChildStdout>,
}

fn start(extra: &[&str]) -> (Board, Duration) {
    let t0 = Instant::now();
    let (child, out, line) = spawn_board_piped(
        &[
            "--listen",
            "127.0.0.1:0",
            "--memory",
            "256M",
            "--page-size",
            "1M",
            "--duration",
            "60",
        ]
        .into_iter()
        .chain(extra.iter().copied())
        .collect::<Vec<_>>(),
    );
    let ready = t0.elapsed();
    let addr = line
        .trim()
        .strip_prefix("clio board: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    (
        Board {
            child,
            addr,
            output: out,
        },
        ready,
    )
}

impl Board {
    /// Ctrl-C, then the counters the node prints on a clean stop.
    fn interrupt(mut self) -> String {
        Command::new("kill")
            .args(["-INT", &self.child.id().to_string()])
            .status()
            .unwrap();
        let mut rest = String::new();
        for l in self.output.lines() {
            rest.push_str(&l.unwrap());
            rest.push('\n');
        }
        assert!(self.child.wait().unwrap().success());
        rest
    }
}

fn call(sock: &UdpSocket, node: &str, h: Header, payload: &[u8]) -> Vec<(Header, Vec<u8>)> {
    sock.send_to(&h.to_packet(payload), node).unwrap();
    let mut buf = [0u8; 2048];
    let mut got = Vec::new();
    loop {
        let n = sock
            .recv(&mut buf)
            .expect("the node answers within the timeout");
        let (r, p) = parse_verified(&buf[..n]).unwrap();
        assert_eq!(r.req_id, h.req_id);
        let last = r.pkt_count;
        got.push((r, p.to_vec()));
        if got.len() == last as usize {
            return got;
        }
    }
}

/// A process on 127.0.0.1 that registered (nonce `nonce`) and allocated 1 MiB at `va`.
struct Tenant {
    sock: UdpSocket,
    pid: u16,
    key: u64,
    client: u16,
    /// Its address's route cookie, from Register's answer.
    cookie: u32,
    va: u64,
}

fn tenant(node: &str, nonce: u64) -> Tenant {
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let reg = call(
        &sock,
        node,
        Header {
            arg0: nonce,
            ..Header::request(Opcode::Register, 0, 1, 0)
        },
        &[],
    )[0]
    .0;
    assert_eq!(reg.status, Status::Ok);
    let (pid, key, client) = (reg.pid, reg.arg0, reg.arg1 as u16);
    let alloc = call(
        &sock,
        node,
        Header {
            arg0: 1 << 20,
            arg1: 3,
            ..Header::request(Opcode::Alloc, pid, 2, 0)
        }
        .with_credentials(key, client),
        &[],
    )[0]
    .0;
    assert_eq!(alloc.status, Status::Ok);
    Tenant {
        sock,
        pid,
        key,
        client,
        cookie: clio_proto::route_cookie::cookie_of_answer(reg.arg1),
        va: alloc.va,
    }
}

fn workload(node: &str) {
    let Tenant {
        sock,
        pid,
        key,
        client,
        va,
        ..
    } = tenant(node, 99);
    // Every later request presents the RAS's key and this member's client id.
    let call =
        |h: Header, payload: &[u8]| call(&sock, node, h.with_credentials(key, client), payload);
    let w = call(
        Header {
            total_len: 5,
            ..Header::request(Opcode::Write, pid, 3, va + 10)
        },
        b"hello",
    );
    assert_eq!(w[0].0.status, Status::Ok);
    let r = call(
        Header {
            total_len: 5,
            ..Header::request(Opcode::Read, pid, 4, va + 10)
        },
        &[],
    );
    assert_eq!(r[0].1, b"hello");
}

#[test]
fn board_starts_fast_and_answers_udp() {
    let (board, ready) = start(&[]);
    eprintln!("clio board was ready after {ready:?}");
    // Generous bound: the node maps sparse memory and binds a socket; it is typically ready
    // in milliseconds, and a second would already be a regression worth seeing.
    assert!(
        ready < Duration::from_secs(1),
        "clio board took {ready:?} to start"
    );
    workload(&board.addr);
    let summary = board.interrupt();
    assert!(summary.contains("page_faults: 1"), "{summary}");
}

/// Run the workload against `clio board <extra>` with the slow-path daemon in its own process
/// on a shared-memory ring file; the node's closing output.
fn with_the_daemon_process(extra: &[&str]) -> String {
    let daemon = std::path::Path::new(env!("CARGO_BIN_EXE_clio")).with_file_name("clio-slowpath");
    if !daemon.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        assert!(Command::new(cargo)
            .args(["build", "-p", "clio-slowpath"])
            .status()
            .unwrap()
            .success());
    }
    let dir = tempfile::tempdir().unwrap();
    let ring = dir.path().join("rings");
    let mut args = extra.to_vec();
    args.extend([
        "--slowpath",
        "external",
        "--spawn-slowpath",
        "--ring-file",
        ring.to_str().unwrap(),
    ]);
    let (board, _) = start(&args);
    workload(&board.addr);
    board.interrupt()
}

#[test]
fn board_with_the_slow_path_daemon_in_its_own_process() {
    let summary = with_the_daemon_process(&[]);
    assert!(summary.contains("slowpath_requests: 2"), "{summary}");
}

#[test]
fn bad_flags_give_clear_errors() {
    for (args, needle) in [
        (&["board", "--memory", "4X"][..], "unknown size suffix"),
        (&["board", "--page-size", "3M"][..], "power of two"),
        (&["board", "--transport", "raw"][..], "--iface"),
        (&["board", "--spawn-slowpath"][..], "--slowpath external"),
        (&["board", "--memory", "1M"][..], "too small"),
    ] {
        let out = Command::new(env!("CARGO_BIN_EXE_clio"))
            .args(args)
            .args(["--listen", "127.0.0.1:0"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
    }
}

/// The RTL node (`--backend rtl`, the fast path's Verilog under Verilator) behind UDP, with
/// the slow-path daemon in its own process on the shared-memory ring file, as on the board.
#[cfg(feature = "rtl")]
#[test]
fn rtl_board_with_the_slow_path_daemon_in_its_own_process() {
    let summary = with_the_daemon_process(&["--backend", "rtl"]);
    assert!(summary.contains("backend Rtl"), "{summary}");
    assert!(summary.contains("slowpath_requests: 2"), "{summary}");
}

/// The RTL node on a memory file honours durability: a durable write is acknowledged (after
/// the fast path's persist handshake, which the harness answers with an msync), the node is
/// stopped and started again on the same file, prints what it recovered, and the RAS, its
/// key and the data are back.
#[cfg(feature = "rtl")]
#[test]
fn rtl_board_honours_durable_writes_and_recovers_from_its_memory_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("node.img");
    // No Clio-KV store: the slow path builds a new one at each start, and the old one's RAS
    // would be recovered too (a second space in the report below).
    let args = [
        "--backend",
        "rtl",
        "--memory-file",
        file.to_str().unwrap(),
        "--kv-store-size",
        "0",
    ];
    let (board, _) = start(&args);
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let reg = call(
        &sock,
        &board.addr,
        Header {
            arg0: 7,
            ..Header::request(Opcode::Register, 0, 1, 0)
        },
        &[],
    );
    let (pid, key, client) = (reg[0].0.pid, reg[0].0.arg0, reg[0].0.arg1 as u16);
    let keyed = |h: Header| h.with_credentials(key, client);
    let alloc = call(
        &sock,
        &board.addr,
        keyed(Header {
            arg0: 1 << 20,
            arg1: 3,
            ..Header::request(Opcode::Alloc, pid, 2, 0)
        }),
        &[],
    );
    let va = alloc[0].0.va;
    let data: Vec<u8> = (0..1500u32).map(|i| (i * 13 + 5) as u8).collect();
    // Two packets (1024 + 476 bytes), each acknowledged once durable (a write packet's
    // response echoes its index and count).
    let mut buf = [0u8; 2048];
    for (i, chunk) in data.chunks(1024).enumerate() {
        let h = keyed(Header {
            total_len: data.len() as u32,
            pkt_index: i as u16,
            pkt_count: 2,
            durable: true,
            ..Header::request(Opcode::Write, pid, 3, va + 100)
        });
        sock.send_to(&h.to_packet(chunk), &board.addr).unwrap();
        let n = sock
            .recv(&mut buf)
            .expect("the node answers within the timeout");
        let (r, _) = parse_verified(&buf[..n]).unwrap();
        assert_eq!((r.req_id, r.pkt_index), (3, i as u16));
        assert_eq!(r.status, Status::Ok, "durable write packet {i}");
    }
    let summary = board.interrupt();
    assert!(summary.contains("durable_flushes: 2"), "{summary}");

    let (mut board, _) = start(&args);
    let mut line = String::new();
    board.output.read_line(&mut line).unwrap();
    assert!(
        line.contains("recovered") && line.contains("1 spaces"),
        "no recovery report: {line:?}"
    );
    // The restarted slow path drew a new route-cookie secret: a read of more than 64 bytes
    // is refused until a heartbeat (any answer of the slow path's to this address) brings
    // the new cookie, as CLib does on its own.
    let read = |cookie| {
        keyed(Header {
            total_len: 1000,
            ..Header::request(Opcode::Read, pid, 4, va + 100)
        })
        .with_cookie(cookie)
    };
    let old_cookie = clio_proto::route_cookie::cookie_of_answer(reg[0].0.arg1);
    let r = call(&sock, &board.addr, read(old_cookie), &[]);
    assert_eq!(r[0].0.status, Status::RouteUnverified);
    let hb = call(
        &sock,
        &board.addr,
        keyed(Header::request(Opcode::Heartbeat, pid, 5, 0)),
        &[],
    );
    assert_eq!(hb[0].0.status, Status::Ok);
    let cookie = clio_proto::route_cookie::cookie_of_answer(hb[0].0.arg1);
    let r = call(&sock, &board.addr, read(cookie), &[]);
    assert_eq!(r[0].0.status, Status::Ok);
    assert_eq!(r[0].1, data[..1000]);
    board.interrupt();
}

/// The attacks that worked before requests were authenticated: a host that never registered
/// reads, overwrites and atomically modifies another process's memory by putting that
/// process's pid (handed out 1, 2, 3...) and its first allocation's address (page 1) in
/// hand-made packets with valid CRCs. Against a real `clio board` process, all are denied and
/// memory is unchanged.
#[test]
fn an_unregistered_host_cannot_touch_another_process_memory() {
    let (board, _) = start(&[]);
    let node = board.addr.as_str();
    let Tenant {
        sock: victim,
        pid,
        key,
        client,
        va,
        ..
    } = tenant(node, 7);
    let secret = b"the victim's secret";
    let w = Header {
        total_len: secret.len() as u32,
        ..Header::request(Opcode::Write, pid, 3, va)
    }
    .with_credentials(key, client);
    assert_eq!(call(&victim, node, w, secret)[0].0.status, Status::Ok);

    // The attacker guesses the pid and the address; it has no key (0), or a made-up one.
    let attacker = UdpSocket::bind("127.0.0.1:0").unwrap();
    attacker
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    for (i, guess) in [0u64, 1, 0xDEAD_BEEF, key.rotate_left(1)]
        .into_iter()
        .enumerate()
    {
        let id = 100 + 10 * i as u32;
        let read = Header {
            total_len: secret.len() as u32,
            ..Header::request(Opcode::Read, pid, id, va)
        }
        .with_credentials(guess, 1);
        let r = call(&attacker, node, read, &[]);
        assert_eq!(r[0].0.status, Status::Denied, "read with key guess {i}");
        assert!(r[0].1.is_empty(), "no data leaks with a denial");
        let overwrite = Header {
            total_len: 6,
            ..Header::request(Opcode::Write, pid, id + 1, va)
        }
        .with_credentials(guess, 1);
        let r = call(&attacker, node, overwrite, b"pwned!");
        assert_eq!(r[0].0.status, Status::Denied, "write with key guess {i}");
        let faa = Header {
            arg0: 1,
            ..Header::request(Opcode::FetchAdd, pid, id + 2, va)
        }
        .with_credentials(guess, 1);
        assert_eq!(call(&attacker, node, faa, &[])[0].0.status, Status::Denied);
    }
    let back = Header {
        total_len: secret.len() as u32,
        ..Header::request(Opcode::Read, pid, 4, va)
    }
    .with_credentials(key, client);
    assert_eq!(
        call(&victim, node, back, &[])[0].1,
        secret,
        "memory unchanged"
    );
    let summary = board.interrupt();
    assert!(summary.contains("denied: 12"), "{summary}");
}

/// Amplification, tried as an attacker would against a real `clio board` process: a tenant
/// with valid credentials and its own route cookie sends a 64-byte request for 1 MiB from
/// another address (on loopback the attacker's "spoofed" source is simply a second address,
/// 127.0.0.2, which stands for the victim). The victim's address receives one header per
/// request, never more than twice what was sent; from its own address the tenant reads 64 KiB
/// in one round trip (a socket's default receive buffer holds that much of an answer).
#[test]
fn an_admitted_host_cannot_aim_large_answers_at_another_address() {
    let (board, _) = start(&[]);
    let node = board.addr.as_str();
    let t = tenant(node, 11);
    let (pid, key, client, cookie, va) = (t.pid, t.key, t.client, t.cookie, t.va);
    let tenant = t.sock;
    let read = |id: u32, len: u32| {
        Header {
            total_len: len,
            ..Header::request(Opcode::Read, pid, id, va)
        }
        .with_credentials(key, client)
        .with_cookie(cookie)
    };
    // The victim's address: whatever arrives there is counted.
    let victim = UdpSocket::bind("127.0.0.2:0").expect("a second loopback address");
    victim
        .set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let (mut sent, mut received) = (0usize, 0usize);
    for (i, len) in [65u32, 1024, 1 << 20].into_iter().enumerate() {
        for cookie_kind in 0..3 {
            let mut h = read(10 + 3 * i as u32 + cookie_kind, len);
            h.cookie = match cookie_kind {
                0 => cookie,  // the tenant's own: it proves 127.0.0.1, not 127.0.0.2
                1 => 0,       // none
                _ => !cookie, // made up
            };
            let p = h.to_packet(&[]);
            victim.send_to(&p, node).unwrap();
            sent += p.len();
            let mut buf = [0u8; 2048];
            while let Ok(n) = victim.recv(&mut buf) {
                received += n;
                let (r, payload) = parse_verified(&buf[..n]).unwrap();
                assert_eq!(r.status, Status::RouteUnverified, "len {len}");
                assert!(payload.is_empty());
            }
        }
    }
    assert!(
        received <= 2 * sent,
        "the victim got {received} bytes for {sent} sent"
    );
    assert_eq!(received, sent, "one bare header per request");
    // 64 bytes need no cookie: an answer of twice the request.
    let mut small = read(40, 64);
    small.cookie = 0;
    let r = call(&victim, node, small, &[]);
    assert_eq!((r[0].0.status, r[0].1.len()), (Status::Ok, 64));
    // The tenant itself, with its cookie: 64 KiB in one request.
    let whole = call(&tenant, node, read(41, 64 << 10), &[]);
    assert!(whole.iter().all(|(h, _)| h.status == Status::Ok));
    assert_eq!(whole.iter().map(|(_, p)| p.len()).sum::<usize>(), 64 << 10);
    let summary = board.interrupt();
    assert!(summary.contains("route_unverified: 9"), "{summary}");
}

/// State dies with its RAS on a real `clio board` (the slow path on its own thread): a
/// tenant's Clio-KV records are freed once it leaves, while another tenant's stay and keep
/// answering; when it leaves too, its record goes as well; the node's stop report counts the
/// records the purge freed.
#[test]
fn a_departed_tenants_kv_records_are_freed_by_a_real_node() {
    let (board, _) = start(&[]);
    let addr: std::net::SocketAddr = board.addr.parse().unwrap();
    let leaver = clio_clib::Client::connect_udp(addr).unwrap();
    let stayer = clio_clib::Client::connect_udp(addr).unwrap();
    for i in 0..10 {
        leaver
            .kv_put(format!("k{i}").as_bytes(), b"gone soon")
            .unwrap();
    }
    stayer.kv_put(b"mine", b"still here").unwrap();
    leaver.unregister(false).unwrap();
    // The pass runs on the slow path's thread: KV requests meanwhile are retried by CLib.
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(300) {
        assert_eq!(
            stayer.kv_get(b"mine").unwrap().as_deref(),
            Some(&b"still here"[..])
        );
    }
    // The other tenant leaves too (its one record goes as well).
    stayer.unregister(false).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let summary = board.interrupt();
    assert!(summary.contains("kv_records_purged: 11,"), "{summary}");
    assert!(summary.contains("kv_purges: 2,"), "{summary}");
    assert!(summary.contains("kv_purge_failures: 0,"), "{summary}");
}

/// One tenant cannot fill a real node's Clio-KV store (`--max-ras-kv-records 5`): its sixth
/// new key is refused with an error that names the limit and its flag, while another tenant
/// still puts its own; replacing a value always works, and a delete gives a record back.
#[test]
fn one_tenant_cannot_fill_the_kv_store_of_a_real_node() {
    use clio_clib::ClioError;
    use clio_proto::quota::Quota;
    let (board, _) = start(&["--max-ras-kv-records", "5"]);
    let addr: std::net::SocketAddr = board.addr.parse().unwrap();
    let hog = clio_clib::Client::connect_udp(addr).unwrap();
    let other = clio_clib::Client::connect_udp(addr).unwrap();
    for i in 0..5 {
        hog.kv_put(format!("h{i}").as_bytes(), b"v").unwrap();
    }
    let err = hog.kv_put(b"h5", b"v").unwrap_err();
    assert_eq!(
        err,
        ClioError::QuotaExceeded {
            quota: Some(Quota::KvRecords)
        }
    );
    assert!(err.to_string().contains("--max-ras-kv-records"), "{err}");
    assert_eq!(hog.kv_get(b"h5").unwrap(), None, "nothing stored");
    for i in 0..5 {
        other.kv_put(format!("o{i}").as_bytes(), b"v").unwrap();
    }
    hog.kv_put(b"h0", b"replaced").unwrap();
    assert!(hog.kv_delete(b"h1").unwrap());
    hog.kv_put(b"h5", b"v").unwrap();
    assert_eq!(hog.kv_get(b"h5").unwrap().as_deref(), Some(&b"v"[..]));
    board.interrupt();
}

/// One member's share of its idempotence-table row on a real `clio board` (default share: the
/// row's 16 entries): a tenant that never acknowledges its FetchAdds gets 16 executed and the
/// rest refused `QuotaExceeded` (nothing executed: its word counts 16), while another
/// tenant's atomics execute at once (its own row); the node's stop report counts the
/// refusals.
#[test]
fn one_member_cannot_hold_the_whole_idempotence_ring_of_a_real_node() {
    let (board, _) = start(&[]);
    let node = board.addr.as_str();
    let share = usize::from(clio_proto::quota::DEFAULT_RING_SHARE);
    let hog = tenant(node, 21);
    let faa = |t: &Tenant, id: u32, va: u64| {
        Header {
            arg0: 1,
            ..Header::request(Opcode::FetchAdd, t.pid, id, va)
        }
        .with_credentials(t.key, t.client)
        .with_cookie(t.cookie)
    };
    let mut statuses = Vec::new();
    for id in 0..share as u32 + 8 {
        let r = call(&hog.sock, node, faa(&hog, 100 + id, hog.va), &[])[0].0;
        if r.status == Status::QuotaExceeded {
            assert_eq!(
                clio_proto::quota::Quota::from_u64(r.arg1),
                Some(clio_proto::quota::Quota::RingShare),
                "the refusal names the share"
            );
        }
        statuses.push(r.status);
    }
    assert!(
        statuses[..share].iter().all(|s| *s == Status::Ok),
        "{statuses:?}"
    );
    assert!(
        statuses[share..]
            .iter()
            .all(|s| *s == Status::QuotaExceeded),
        "{statuses:?}"
    );
    let read = Header {
        total_len: 8,
        ..Header::request(Opcode::Read, hog.pid, 500, hog.va)
    }
    .with_credentials(hog.key, hog.client)
    .with_cookie(hog.cookie);
    let word = call(&hog.sock, node, read, &[]);
    assert_eq!(
        word[0].1,
        (share as u64).to_le_bytes(),
        "the refused ones did nothing"
    );
    let other = tenant(node, 22);
    for id in 0..8 {
        let r = call(&other.sock, node, faa(&other, 200 + id, other.va), &[]);
        assert_eq!(r[0].0.status, Status::Ok, "another tenant's atomics go on");
    }
    let summary = board.interrupt();
    assert!(
        summary.contains("idempotence_ring_over_share: 8"),
        "{summary}"
    );
}

/// The slow-path RX ring shared by source, tried against a real `clio board` whose slow path
/// is not running yet (`--slowpath external`, no daemon: nothing is taken from the ring). One
/// host (127.0.0.1) floods Registers: it holds half the ring's room past the notices' reserve
/// (112 of 256) and the rest are RETRY_LATER; another host (127.0.0.2) still gets its
/// requests into the ring (none refused), and once the daemon starts they are answered. With
/// the share taken out the flooder fills the ring up to the reserve and the other host's
/// requests are RETRY_LATER.
#[test]
fn a_host_flooding_the_slow_path_cannot_crowd_out_another_host() {
    use clio_proto::ring::{rx_source_bucket, DEFAULT_RING_ENTRIES, RX_RESERVED_FOR_NOTICES};
    let dir = tempfile::tempdir().unwrap();
    let rings = dir.path().join("rings");
    let (board, _) = start(&[
        "--slowpath",
        "external",
        "--ring-file",
        rings.to_str().unwrap(),
    ]);
    let node = board.addr.as_str();
    let flooder = UdpSocket::bind("127.0.0.1:0").unwrap();
    let other = UdpSocket::bind("127.0.0.2:0").expect("a second loopback address");
    let route = |s: &UdpSocket| {
        let std::net::SocketAddr::V4(a) = s.local_addr().unwrap() else {
            unreachable!()
        };
        clio_proto::frame::Route::udp(a, "127.0.0.1:1".parse().unwrap())
    };
    assert_ne!(
        rx_source_bucket(&route(&flooder)),
        rx_source_bucket(&route(&other))
    );
    let register = |s: &UdpSocket, id: u32| {
        let h = Header {
            arg0: id as u64,
            ..Header::request(Opcode::Register, 0, id, 0)
        };
        s.send_to(&h.to_packet(&[]), node).unwrap();
    };
    // The answers, (status, request id): waited for until `want` came (at most 30 s), then
    // any more that arrive within `quiet` of the last.
    let answers = |s: &UdpSocket, want: usize, quiet: Duration| {
        let (mut got, mut buf) = (Vec::new(), [0u8; 2048]);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let wait = if got.len() < want && Instant::now() < deadline {
                Duration::from_millis(100)
            } else {
                quiet
            };
            s.set_read_timeout(Some(wait)).unwrap();
            match s.recv(&mut buf) {
                Ok(n) => {
                    let (h, _) = parse_verified(&buf[..n]).expect("a valid answer");
                    got.push((h.status, h.req_id));
                }
                Err(_) if got.len() < want && Instant::now() < deadline => {}
                Err(_) => return got,
            }
        }
    };
    let flood = DEFAULT_RING_ENTRIES;
    for id in 1..=flood {
        register(&flooder, id);
    }
    let held = (DEFAULT_RING_ENTRIES - RX_RESERVED_FOR_NOTICES) / 2;
    let refused = answers(
        &flooder,
        (flood - held) as usize,
        Duration::from_millis(300),
    );
    assert_eq!(refused.len() as u32, flood - held, "{refused:?}");
    assert!(refused.iter().all(|&(s, _)| s == Status::RetryLater));
    // The other host's requests reach the ring: nothing refused (no answer yet: no daemon).
    for id in 1000..1008 {
        register(&other, id);
    }
    assert_eq!(
        answers(&other, 0, Duration::from_millis(300)),
        vec![],
        "refused"
    );
    // The slow path comes: the other host's Registers are answered, each once.
    let daemon_bin = common::slowpath_daemon_bin();
    let daemon = Command::new(&daemon_bin)
        .arg("--ring-file")
        .arg(&rings)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _procs = common::Boards(vec![daemon, board.child]);
    let mut served = answers(&other, 8, Duration::from_millis(300));
    served.sort_by_key(|&(_, id)| id);
    assert_eq!(
        served,
        (1000..1008).map(|id| (Status::Ok, id)).collect::<Vec<_>>()
    );
}
