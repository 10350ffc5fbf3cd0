//! AF_XDP end to end: a node served through the XDP front end in one network namespace, a
//! CLib client over `XdpTransport` in another, joined by a veth pair the test creates (and
//! deletes, also on failure). Checks the API over AF_XDP, that hostile frames do not hurt the
//! node, that Clio frames bypass the kernel (an AF_PACKET tap on the node's side sees none)
//! and that other traffic (UDP, both ways) still reaches the kernel's stack.
//! Skips with one printed line only when not root or the kernel has no AF_XDP.

mod common;
use clio_clib::transport::{Transport, XdpTransport};
use clio_clib::{Client, Config, Output};
use clio_proto::consts::ETHERTYPE_CLIO;
use clio_sim::xdp_server::{spawn_xdp, NetnsPair, Side};
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Why AF_XDP cannot run here, if it cannot.
fn unsupported() -> Option<String> {
    // SAFETY: plain system calls.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not root (AF_XDP, XDP programs and network namespaces need it)".into());
    }
    // SAFETY: plain system call; the descriptor is closed at once.
    let fd = unsafe { libc::socket(44, libc::SOCK_RAW, 0) };
    if fd < 0 {
        return Some(format!(
            "the kernel refuses AF_XDP sockets: {}",
            std::io::Error::last_os_error()
        ));
    }
    // SAFETY: `fd` is ours.
    unsafe { libc::close(fd) };
    None
}

/// Counts frames of the Clio EtherType from `from` that an AF_PACKET tap sees on `iface`
/// in this namespace (XDP runs before taps: redirected frames never show here).
struct Tap {
    seen: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Tap {
    fn open(iface: &str, from: [u8; 6]) -> Tap {
        use pnet_datalink::{self as dl, Channel};
        let itf = dl::interfaces()
            .into_iter()
            .find(|i| i.name == iface)
            .expect("tap interface");
        let cfg = dl::Config {
            read_timeout: Some(Duration::from_millis(5)),
            ..Default::default()
        };
        let Ok(Channel::Ethernet(_, mut rx)) = dl::channel(&itf, cfg) else {
            panic!("AF_PACKET tap on {iface}");
        };
        let (seen, stop) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicBool::new(false)),
        );
        let (s, st) = (seen.clone(), stop.clone());
        std::thread::spawn(move || {
            while !st.load(Ordering::Relaxed) {
                if let Ok(f) = rx.next() {
                    if f.len() >= 14
                        && f[6..12] == from
                        && f[12..14] == ETHERTYPE_CLIO.to_be_bytes()
                    {
                        s.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        });
        Tap { seen, stop }
    }
}

impl Drop for Tap {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// An AF_PACKET sender on `iface` in this namespace.
fn raw_sender(iface: &str) -> Box<dyn pnet_datalink::DataLinkSender> {
    use pnet_datalink::{self as dl, Channel};
    let itf = dl::interfaces()
        .into_iter()
        .find(|i| i.name == iface)
        .expect("interface");
    match dl::channel(&itf, dl::Config::default()) {
        Ok(Channel::Ethernet(tx, _)) => tx,
        _ => panic!("AF_PACKET sender on {iface}"),
    }
}

/// Sends one datagram from `tx` to `to` until `rx` gets it (at most 2 s): the kernel path works.
fn udp_passes(tx: &UdpSocket, rx: &UdpSocket, to: SocketAddr, msg: &[u8]) -> bool {
    rx.set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    let mut buf = [0u8; 64];
    while Instant::now() < deadline {
        tx.send_to(msg, to).unwrap();
        if let Ok(n) = rx.recv(&mut buf) {
            return &buf[..n] == msg;
        }
    }
    false
}

#[test]
fn af_xdp_round_trip_between_two_namespaces() {
    if let Some(why) = unsupported() {
        println!("SKIP af_xdp: {why}");
        return;
    }
    let pair = NetnsPair::create("xdpt").expect("creating two namespaces and a veth pair");
    let iface = pair.iface;

    // The node's side: the XDP front end, a kernel UDP socket and a tap.
    let (server, udp_b, tap, mut inject) = {
        let _in_b = pair.enter(Side::B).unwrap();
        let server = spawn_xdp(common::board(), iface, 0).expect("AF_XDP front end");
        let udp_b = UdpSocket::bind((pair.ip(Side::B), 0)).unwrap();
        (
            server,
            udp_b,
            Tap::open(iface, pair.mac(Side::A)),
            raw_sender(iface),
        )
    };
    assert!(server.local.contains("AF_XDP"), "{}", server.local);

    // The client's side.
    let _in_a = pair.enter(Side::A).unwrap();
    let t = XdpTransport::open(iface, pair.mac(Side::B), 0).expect("AF_XDP transport");
    assert_eq!(t.local_mac(), pair.mac(Side::A));
    // veth: the program runs in the driver; frames are copied (no zero-copy on veth).
    assert!(t.mode().native && !t.mode().zero_copy, "{:?}", t.mode());
    let t = Arc::new(t);
    let c = Client::connect(
        Box::new(t.clone()),
        Config {
            track_shift: common::PAGE_SHIFT,
            ..Config::default()
        },
    )
    .expect("register over AF_XDP");
    assert_eq!(c.transport_name(), "af-xdp");
    let va = c.ralloc(2 * common::PAGE).unwrap();
    let d = common::pattern(9000, 5);
    c.rwrite(va + 100, &d).unwrap();
    assert_eq!(c.rread(va + 100, d.len()).unwrap(), d);
    for size in [16usize, 1024, 4096] {
        assert_eq!(c.rread(va + 100, size).unwrap(), d[..size]);
    }
    // More frames than either UMEM half holds (1024): the rings wrap several times and
    // every frame goes back through the fill and completion rings, on both sides.
    // 16 B reads answer with one frame, 4 KiB reads with four back to back.
    for i in 0..3000u64 {
        let len = if i % 2 == 0 { 16 } else { 4096 };
        let at = (i * 16) % 4096;
        assert_eq!(
            c.rread(va + 100 + at, len).unwrap(),
            d[at as usize..at as usize + len]
        );
    }
    // Batches: 64 outstanding reads leave together and come back together.
    let hs: Vec<_> = (0..64u64)
        .map(|i| c.rread_async(va + 100 + i * 64, 64).unwrap())
        .collect();
    for (i, h) in hs.into_iter().enumerate() {
        let Output::Data(got) = c.rpoll_one(h).unwrap() else {
            panic!("a read returned no data");
        };
        assert_eq!(got, d[i * 64..i * 64 + 64]);
    }
    assert_eq!(c.fetch_add(va, 3).unwrap(), 0);
    assert_eq!(c.fetch_add(va, 3).unwrap(), 3);
    assert_eq!(c.compare_and_swap(va, 6, 40).unwrap(), 6);
    assert_eq!(c.compare_and_swap(va, 6, 50).unwrap(), 40);

    // Hostile Clio frames: empty, short and garbled payloads. The node must keep serving.
    let before = server.board().lock().unwrap().counters();
    t.send(&[]).unwrap();
    t.send(&[1, 2, 3]).unwrap();
    t.send(&common::pattern(300, 9)).unwrap();
    assert_eq!(c.rread(va + 100, 64).unwrap(), d[..64]);
    let after = server.board().lock().unwrap().counters();
    assert!(
        after.rx_packets > before.rx_packets + 1,
        "{before:?} -> {after:?}"
    );

    // Hostile frames to the client: a bare header, a few bytes, a garbled Clio header, all
    // with the Clio EtherType, from the node's MAC (so they pass the address filter).
    let mut hdr = Vec::new();
    hdr.extend_from_slice(&pair.mac(Side::A));
    hdr.extend_from_slice(&pair.mac(Side::B));
    hdr.extend_from_slice(&ETHERTYPE_CLIO.to_be_bytes());
    for extra in [0usize, 3, 40, 200] {
        let mut f = hdr.clone();
        f.extend_from_slice(&common::pattern(extra, extra as u64));
        inject
            .send_to(&f, None)
            .expect("AF_PACKET send")
            .expect("AF_PACKET send");
    }
    assert_eq!(c.rread(va + 100, 256).unwrap(), d[..256]);

    // Kernel bypass: none of those Clio frames reached the node side's kernel tap.
    assert_eq!(
        tap.seen.load(Ordering::Relaxed),
        0,
        "Clio frames reached AF_PACKET on the node side"
    );

    // Everything else still reaches the kernel, both ways, with both programs attached.
    let udp_a = UdpSocket::bind((pair.ip(Side::A), 0)).unwrap();
    let to_b = udp_b.local_addr().unwrap();
    assert!(
        udp_passes(&udp_a, &udp_b, to_b, b"to the node's kernel"),
        "UDP A -> B lost"
    );
    let to_a = udp_a.local_addr().unwrap();
    assert!(
        udp_passes(&udp_b, &udp_a, to_a, b"to the client's kernel"),
        "UDP B -> A lost"
    );

    let stats = c.stats();
    drop(c);
    server.stop().unwrap();
    assert!(stats.requests > 0);
}

#[test]
fn a_second_socket_on_the_same_queue_is_refused_with_a_reason() {
    if let Some(why) = unsupported() {
        println!("SKIP af_xdp: {why}");
        return;
    }
    let pair = NetnsPair::create("xdpq").expect("creating two namespaces and a veth pair");
    let _in_a = pair.enter(Side::A).unwrap();
    let first = XdpTransport::open(pair.iface, pair.mac(Side::B), 0).expect("first socket");
    let Err(e) = XdpTransport::open(pair.iface, pair.mac(Side::B), 0) else {
        panic!("a second AF_XDP socket on the same interface was accepted");
    };
    let msg = e.to_string();
    assert!(msg.contains("AF_XDP") && msg.contains("clio0"), "{msg}");
    drop(first);
    // Once the first is gone the interface is free again (the program detached with it). The
    // kernel releases a closed bpf_link after a grace period, not within close(): an open in
    // that window is refused EBUSY like the second socket above, so the reopen may take a few
    // tries (a CI run met it once).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        match XdpTransport::open(pair.iface, pair.mac(Side::B), 0) {
            Ok(_) => break,
            Err(e) if std::time::Instant::now() < deadline && e.to_string().contains("busy") => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => panic!("reopen after close: {e}"),
        }
    }
}

#[test]
fn the_c_api_connects_over_af_xdp() {
    use clio_clib::capi::*;
    use std::ffi::CString;
    if let Some(why) = unsupported() {
        println!("SKIP af_xdp: {why}");
        return;
    }
    // No such interface: NULL and a message that says so.
    let bogus = CString::new("no-such-if0").unwrap();
    let mac = [2u8, 0, 0, 0, 0, 1];
    assert!(clio_connect_xdp(bogus.as_ptr(), mac.as_ptr(), 0).is_null());
    // SAFETY: clio_last_error returns a NUL-terminated string owned by CLib.
    let msg = unsafe { std::ffi::CStr::from_ptr(clio_last_error()) }.to_string_lossy();
    assert!(msg.contains("no-such-if0"), "{msg}");

    let pair = NetnsPair::create("xdpc").expect("creating two namespaces and a veth pair");
    let server = {
        let _in_b = pair.enter(Side::B).unwrap();
        spawn_xdp(common::board(), pair.iface, 0).expect("AF_XDP front end")
    };
    let _in_a = pair.enter(Side::A).unwrap();
    let iface = CString::new(pair.iface).unwrap();
    let node_mac = pair.mac(Side::B);
    let c = clio_connect_xdp(iface.as_ptr(), node_mac.as_ptr(), 0);
    assert!(!c.is_null(), "connect over AF_XDP from C");
    let mut va = 0u64;
    assert_eq!(clio_ralloc(c, 4096, &mut va), ClioStatus::ClioOk);
    let d = common::pattern(3000, 11);
    assert_eq!(
        clio_rwrite(c, va, d.as_ptr().cast(), d.len()),
        ClioStatus::ClioOk
    );
    let mut back = vec![0u8; d.len()];
    assert_eq!(
        clio_rread(c, va, back.as_mut_ptr().cast(), back.len()),
        ClioStatus::ClioOk
    );
    assert_eq!(back, d);
    clio_close(c);
    server.stop().unwrap();
}
