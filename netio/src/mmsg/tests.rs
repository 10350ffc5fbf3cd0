//! Batched sends and receives over loopback: addressing, arrival times, waits, GSO runs and
//! GRO splitting, the fallback when the kernel refuses GSO, hostile control messages.

use super::*;

fn pair() -> (UdpSocket, UdpSocket) {
    let a = UdpSocket::bind("127.0.0.1:0").unwrap();
    let b = UdpSocket::bind("127.0.0.1:0").unwrap();
    a.connect(b.local_addr().unwrap()).unwrap();
    (a, b)
}

#[test]
fn batches_round_trip_with_peers_and_arrival_times() {
    let (a, b) = pair();
    enable_timestamps(&b).unwrap();
    let pkts: Vec<Vec<u8>> = (0..100u8).map(|i| vec![i; 1 + i as usize * 10]).collect();
    let refs: Vec<&[u8]> = pkts.iter().map(|p| p.as_slice()).collect();
    let before = Instant::now();
    assert_eq!(send_batch(&a, &refs, None, &Gso::new(true)).unwrap(), 100);
    assert!(wait_readable(&b, Duration::from_secs(1)).unwrap());
    let mut r = Receiver::new(32);
    let mut got = Vec::new();
    while got.len() < 100 {
        let n = r
            .recv_now(&b, |d| {
                assert_eq!(
                    d.peer,
                    Some(match a.local_addr().unwrap() {
                        std::net::SocketAddr::V4(v) => v,
                        _ => unreachable!(),
                    })
                );
                let t = d.arrived.expect("kernel timestamp");
                assert!(t + Duration::from_millis(50) >= before && t <= Instant::now());
                got.push(d.bytes.to_vec());
            })
            .unwrap();
        assert!(n <= 32);
        if n == 0 {
            assert!(wait_readable(&b, Duration::from_secs(1)).unwrap());
        }
    }
    assert_eq!(got, pkts);
    // Nothing queued: no wait, nothing received.
    assert_eq!(r.recv_now(&b, |_| panic!("nothing was sent")).unwrap(), 0);
}

#[test]
fn addressed_sends_and_oversized_datagrams() {
    let (a, b) = pair();
    let to = match b.local_addr().unwrap() {
        std::net::SocketAddr::V4(v) => v,
        _ => unreachable!(),
    };
    let c = UdpSocket::bind("127.0.0.1:0").unwrap();
    let big = vec![7u8; SLOT_BYTES + 1];
    // One too long for a slot, then a normal one from an unconnected socket.
    a.send(&big).unwrap();
    assert_eq!(
        send_batch(&c, &[b"hello"], Some(&[to]), &Gso::new(true)).unwrap(),
        1
    );
    let mut r = Receiver::new(4);
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(1);
    while got.is_empty() && Instant::now() < deadline {
        wait_readable(&b, Duration::from_millis(100)).unwrap();
        r.recv_now(&b, |d| got.push(d.bytes.to_vec())).unwrap();
    }
    assert_eq!(
        got,
        vec![b"hello".to_vec()],
        "the truncated datagram is dropped"
    );
    // With GRO (64 KiB slots) too: nothing longer than a plain slot is passed on.
    let mut r = Receiver::with_gro(&b, 4, true);
    a.send(&big).unwrap();
    let two = [&big[..SLOT_BYTES + 1], &big[..SLOT_BYTES + 1], b"bye"];
    assert_eq!(
        send_batch(&c, &two, Some(&[to; 3]), &Gso::new(true)).unwrap(),
        3
    );
    assert_eq!(recv_all(&mut r, &b, 1), vec![b"bye".to_vec()]);
}

#[test]
fn waits_end_with_data_or_at_the_timeout() {
    let (a, b) = pair();
    assert!(!wait_readable(&b, Duration::from_micros(200)).unwrap());
    a.send(b"x").unwrap();
    assert!(wait_readable(&b, Duration::from_secs(5)).unwrap());
}

fn v4(s: &UdpSocket) -> SocketAddrV4 {
    match s.local_addr().unwrap() {
        std::net::SocketAddr::V4(v) => v,
        _ => unreachable!(),
    }
}

/// Receive on `r` until `want` datagrams came (or 2 s passed).
fn recv_all(r: &mut Receiver, s: &UdpSocket, want: usize) -> Vec<Vec<u8>> {
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(2);
    while got.len() < want && Instant::now() < deadline {
        wait_readable(s, Duration::from_millis(100)).unwrap();
        r.recv_now(s, |d| got.push(d.bytes.to_vec())).unwrap();
    }
    got
}

/// `n` frames of `size` bytes, then one of `last` bytes; each frame's bytes say its index.
fn frames(n: usize, size: usize, last: usize) -> Vec<Vec<u8>> {
    let mut v: Vec<Vec<u8>> = (0..n).map(|i| vec![i as u8; size]).collect();
    v.push(vec![0xEE; last]);
    v
}

#[test]
fn gro_buffers_split_exactly_and_hostile_sizes_stay_inside() {
    let f = frames(7, 100, 37);
    let buf: Vec<u8> = f.concat();
    let got: Vec<&[u8]> = split_segments(&buf, Some(100)).collect();
    assert_eq!(got.len(), 8);
    for (g, want) in got.iter().zip(&f) {
        assert_eq!(g, &want.as_slice());
    }
    // Exactly N full segments.
    let full: Vec<u8> = frames(4, 64, 64).concat();
    let got: Vec<&[u8]> = split_segments(&full, Some(64)).collect();
    assert_eq!(got.len(), 5);
    assert!(got.iter().all(|g| g.len() == 64));
    // Sizes that do not describe the buffer: the buffer whole, never past its end.
    for seg in [
        None,
        Some(0),
        Some(buf.len()),
        Some(buf.len() + 1),
        Some(usize::MAX),
    ] {
        let got: Vec<&[u8]> = split_segments(&buf, seg).collect();
        assert_eq!(got, vec![buf.as_slice()], "segment {seg:?}");
    }
    // A size of 1: every byte its own datagram.
    assert_eq!(split_segments(&buf[..5], Some(1)).count(), 5);
    // An empty datagram is one (empty) datagram.
    let empty: Vec<&[u8]> = split_segments(&[], Some(8)).collect();
    assert_eq!(empty, vec![&[][..]]);
}

#[test]
fn plan_groups_equal_sizes_to_one_peer() {
    let p = frames(5, 100, 40);
    let refs: Vec<&[u8]> = p.iter().map(|x| x.as_slice()).collect();
    let run = |start, end, segment| Run {
        start,
        end,
        segment,
    };
    assert_eq!(plan(&refs, None, 0, true, 64), vec![run(0, 6, Some(100))]);
    assert_eq!(plan(&refs, None, 4, true, 64), vec![run(4, 6, Some(100))]);
    // GSO off: one message a packet, at most max_runs.
    assert_eq!(plan(&refs, None, 0, false, 64).len(), 6);
    assert_eq!(
        plan(&refs, None, 0, false, 4),
        (0..4).map(|i| run(i, i + 1, None)).collect::<Vec<_>>()
    );
    // A longer packet starts a new run; a shorter one ends one.
    let mixed: Vec<&[u8]> = vec![&[1; 10], &[1; 10], &[1; 20], &[1; 20], &[1; 5], &[1; 5]];
    assert_eq!(
        plan(&mixed, None, 0, true, 64),
        vec![run(0, 2, Some(10)), run(2, 5, Some(20)), run(5, 6, None)]
    );
    // Different peers, different messages.
    let a: SocketAddrV4 = "127.0.0.1:1".parse().unwrap();
    let b: SocketAddrV4 = "127.0.0.1:2".parse().unwrap();
    let peers = [a, a, b, b, b, a];
    assert_eq!(
        plan(&refs, Some(&peers), 0, true, 64),
        vec![run(0, 2, Some(100)), run(2, 5, Some(100)), run(5, 6, None)]
    );
    // At most GSO_MAX_SEGMENTS datagrams and GSO_MAX_BYTES bytes a message.
    let many = vec![vec![0u8; 10]; 150];
    let refs: Vec<&[u8]> = many.iter().map(|x| x.as_slice()).collect();
    let runs = plan(&refs, None, 0, true, 64);
    assert_eq!(
        runs.iter().map(|r| r.end - r.start).collect::<Vec<_>>(),
        vec![64, 64, 22]
    );
    let big = vec![vec![0u8; 1500]; 50];
    let refs: Vec<&[u8]> = big.iter().map(|x| x.as_slice()).collect();
    let runs = plan(&refs, None, 0, true, 64);
    assert!(runs
        .iter()
        .all(|r| (r.end - r.start) * 1500 <= GSO_MAX_BYTES));
    assert_eq!(runs.last().unwrap().end, 50);
}

#[test]
fn a_gso_send_arrives_as_separate_frames_at_plain_and_gro_receivers() {
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let plain = UdpSocket::bind("127.0.0.1:0").unwrap();
    let coalescing = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut rp = Receiver::new(64);
    let mut rg = Receiver::with_gro(&coalescing, 8, true);
    assert!(rg.gro(), "this kernel supports UDP_GRO");
    let a = frames(20, 100, 37);
    let b = frames(9, 64, 64);
    // One batch: `a` to the plain receiver, `b` to the coalescing one, then `a` again to
    // the coalescing one: three GSO messages in one sendmmsg.
    let mut batch: Vec<&[u8]> = Vec::new();
    let mut peers = Vec::new();
    for (f, to) in [
        (&a, v4(&plain)),
        (&b, v4(&coalescing)),
        (&a, v4(&coalescing)),
    ] {
        batch.extend(f.iter().map(|x| x.as_slice()));
        peers.extend(std::iter::repeat_n(to, f.len()));
    }
    assert_eq!(plan(&batch, Some(&peers), 0, true, 64).len(), 3);
    let gso = Gso::new(true);
    assert_eq!(
        send_batch(&tx, &batch, Some(&peers), &gso).unwrap(),
        batch.len()
    );
    assert!(gso.on(), "the kernel took the GSO sends");
    assert_eq!(recv_all(&mut rp, &plain, a.len()), a);
    let mut want = b.clone();
    want.extend(a.iter().cloned());
    assert_eq!(recv_all(&mut rg, &coalescing, want.len()), want);
    assert!(
        rg.coalesced() >= 1,
        "the GRO receiver got coalesced buffers"
    );
    assert_eq!(rp.coalesced(), 0);
    // A connected socket too.
    tx.connect(coalescing.local_addr().unwrap()).unwrap();
    let refs: Vec<&[u8]> = a.iter().map(|x| x.as_slice()).collect();
    assert_eq!(send_batch(&tx, &refs, None, &gso).unwrap(), a.len());
    assert_eq!(recv_all(&mut rg, &coalescing, a.len()), a);
    // Nothing more arrived than was sent.
    assert_eq!(
        rg.recv_now(&coalescing, |_| panic!("extra datagram"))
            .unwrap(),
        0
    );
    assert_eq!(
        rp.recv_now(&plain, |_| panic!("extra datagram")).unwrap(),
        0
    );
}

#[test]
fn refused_gso_falls_back_to_plain_sends_once() {
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
    tx.connect(rx.local_addr().unwrap()).unwrap();
    // Without UDP checksums the kernel refuses GSO (EINVAL) but sends plain datagrams.
    set_int_option(&tx, libc::SOL_SOCKET, libc::SO_NO_CHECK, 1).unwrap();
    let mut r = Receiver::with_gro(&rx, 8, true);
    let f = frames(12, 80, 3);
    let refs: Vec<&[u8]> = f.iter().map(|x| x.as_slice()).collect();
    let gso = Gso::new(true);
    assert_eq!(send_batch(&tx, &refs, None, &gso).unwrap(), f.len());
    assert!(!gso.on(), "the refusal turned GSO off");
    assert_eq!(recv_all(&mut r, &rx, f.len()), f);
    // And it stays off: the next batch goes plainly at once.
    assert_eq!(send_batch(&tx, &refs, None, &gso).unwrap(), f.len());
    assert_eq!(recv_all(&mut r, &rx, f.len()), f);
    assert_eq!(r.coalesced(), 0, "plain datagrams are never coalesced");
    // GSO never tried, GRO not wanted: plain on both sides.
    let off = Gso::new(false);
    let tx2 = UdpSocket::bind("127.0.0.1:0").unwrap();
    let rx2 = UdpSocket::bind("127.0.0.1:0").unwrap();
    tx2.connect(rx2.local_addr().unwrap()).unwrap();
    let mut r2 = Receiver::with_gro(&rx2, 8, false);
    assert!(!r2.gro());
    assert_eq!(send_batch(&tx2, &refs, None, &off).unwrap(), f.len());
    assert_eq!(recv_all(&mut r2, &rx2, f.len()), f);
}

/// A msghdr over `ctrl[..len]` holding one cmsg (level, type) whose header claims
/// `claimed` data bytes and whose data starts with `value` (native-endian).
fn hdr_with(
    ctrl: &mut [u64; 8],
    len: usize,
    level: i32,
    ty: i32,
    claimed: u32,
    value: i32,
) -> libc::msghdr {
    // SAFETY: msghdr is plain old data.
    let mut h: libc::msghdr = unsafe { std::mem::zeroed() };
    h.msg_control = ctrl.as_mut_ptr().cast();
    h.msg_controllen = len as _;
    // SAFETY: `ctrl` is 64 aligned bytes, room for a cmsghdr and an int; the header was
    // given at least a cmsghdr's length, so CMSG_FIRSTHDR is not null.
    unsafe {
        let c = libc::CMSG_FIRSTHDR(&h);
        assert!(!c.is_null());
        (*c).cmsg_level = level;
        (*c).cmsg_type = ty;
        (*c).cmsg_len = libc::CMSG_LEN(claimed) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<i32>(), value);
    }
    h
}

#[test]
fn control_messages_are_read_only_inside_the_buffer() {
    let mut ctrl = [0u64; 8];
    // SAFETY: pure size computations.
    let (hdr, full) = unsafe { (libc::CMSG_LEN(0) as usize, libc::CMSG_SPACE(4) as usize) };
    let h = hdr_with(&mut ctrl, full, libc::SOL_UDP, UDP_GRO, 4, 1072);
    assert_eq!(control(&h).segment, Some(1072));
    // The kernel's length cut short (MSG_CTRUNC): the size is not read past the buffer.
    let h = hdr_with(&mut ctrl, hdr, libc::SOL_UDP, UDP_GRO, 4, 1072);
    assert_eq!(control(&h).segment, None);
    // Only two bytes there: read as a u16.
    let h = hdr_with(&mut ctrl, hdr + 2, libc::SOL_UDP, UDP_GRO, 2, 1072);
    assert_eq!(control(&h).segment, Some(1072));
    // A negative size is no size; other levels and types are not the segment size.
    let h = hdr_with(&mut ctrl, full, libc::SOL_UDP, UDP_GRO, 4, -5);
    assert_eq!(control(&h).segment, None);
    let h = hdr_with(&mut ctrl, full, libc::SOL_SOCKET, UDP_GRO, 4, 1072);
    assert_eq!(control(&h).segment, None);
    // A timestamp whose data does not fit is not read either.
    let h = hdr_with(
        &mut ctrl,
        full,
        libc::SOL_SOCKET,
        libc::SCM_TIMESTAMPNS,
        4,
        1,
    );
    assert!(control(&h).stamp.is_none());
}
