//! Batched datagram I/O on a UDP socket, shared by CLib's UDP transport and the node's UDP
//! front end:
//!
//! * `recvmmsg` / `sendmmsg`: many datagrams per system call;
//! * kernel receive timestamps (`SO_TIMESTAMPNS`): when a datagram reached the socket, not when
//!   a thread got round to reading it, so a descheduled receiver does not inflate RTT samples;
//! * waits with `ppoll` (high-resolution timers) instead of `SO_RCVTIMEO`, whose sleeps are
//!   rounded up to the kernel tick (4 ms at `HZ=250`).
//!
//! Everything arriving here is hostile: lengths come from the kernel and are checked against
//! the buffers before any slice is taken; a truncated datagram (longer than a slot) is
//! dropped, never passed on cut.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Largest datagram a slot holds: a Clio header and one full payload with room to spare
/// (longer datagrams are not Clio packets and are dropped).
const SLOT_BYTES: usize = 2048;

/// One received datagram, borrowed from the receiver's buffers.
#[derive(Debug)]
pub struct Datagram<'a> {
    /// Its bytes.
    pub bytes: &'a [u8],
    /// The sender (IPv4 only; `None` for other families).
    pub peer: Option<SocketAddrV4>,
    /// When it reached the socket (kernel timestamp), if the kernel said.
    pub arrived: Option<Instant>,
}

/// Ask the kernel to timestamp every datagram as it arrives (`SO_TIMESTAMPNS`). Best effort:
/// without it datagrams simply carry no arrival time.
pub fn enable_timestamps(sock: &UdpSocket) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: `sock` is an open socket for the whole call; `on` is a live c_int and the
    // length passed is its size.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_TIMESTAMPNS,
            (&on as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Wait until `sock` is readable or `timeout` passes, with microsecond resolution. Returns
/// whether it is readable. An interrupted wait counts as a timeout (the caller loops).
pub fn wait_readable(sock: &UdpSocket, timeout: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd: sock.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: timeout.as_secs().min(i32::MAX as u64) as libc::time_t,
        tv_nsec: timeout.subsec_nanos() as libc::c_long,
    };
    // SAFETY: one valid pollfd for the length 1 passed; `ts` lives across the call; a null
    // signal mask leaves the thread's mask as it is.
    let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    match r {
        n if n > 0 => Ok(true),
        0 => Ok(false),
        _ => {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            }
        }
    }
}

/// Room for one `SCM_TIMESTAMPNS` control message (a `timespec`), generously aligned.
const CMSG_SPACE: usize = 64;

/// Buffers for `recvmmsg`, owned by the one thread that receives on a socket.
pub struct Receiver {
    bufs: Vec<u8>,
    ctrl: Vec<u8>,
    addrs: Vec<libc::sockaddr_in>,
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    batch: usize,
}

// SAFETY: the raw pointers inside `iov`/`hdrs` are rebuilt from `bufs`/`ctrl`/`addrs` at the
// start of every call and never dereferenced outside it; the struct owns everything they
// point into, so moving it to another thread is sound.
unsafe impl Send for Receiver {}

impl Receiver {
    /// Buffers for up to `batch` datagrams per call (at least 1).
    pub fn new(batch: usize) -> Receiver {
        let batch = batch.max(1);
        Receiver {
            bufs: vec![0; batch * SLOT_BYTES],
            ctrl: vec![0; batch * CMSG_SPACE],
            // SAFETY: sockaddr_in is plain old data; all-zero is a valid value.
            addrs: vec![unsafe { std::mem::zeroed() }; batch],
            // SAFETY: as above, iovec and mmsghdr are plain old data (null pointers, zeros).
            iov: vec![unsafe { std::mem::zeroed() }; batch],
            hdrs: vec![unsafe { std::mem::zeroed() }; batch],
            batch,
        }
    }

    /// Receive the datagrams already queued on `sock` (at most the batch) without waiting,
    /// and hand each to `f`. Returns how many were received (0 when none was queued).
    pub fn recv_now(
        &mut self,
        sock: &UdpSocket,
        mut f: impl FnMut(Datagram<'_>),
    ) -> io::Result<usize> {
        for i in 0..self.batch {
            self.iov[i] = libc::iovec {
                iov_base: self.bufs[i * SLOT_BYTES..].as_mut_ptr().cast(),
                iov_len: SLOT_BYTES,
            };
            let h = &mut self.hdrs[i].msg_hdr;
            h.msg_name = (&mut self.addrs[i] as *mut libc::sockaddr_in).cast();
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            h.msg_iov = &mut self.iov[i];
            h.msg_iovlen = 1;
            h.msg_control = self.ctrl[i * CMSG_SPACE..].as_mut_ptr().cast();
            h.msg_controllen = CMSG_SPACE as _;
            h.msg_flags = 0;
            self.hdrs[i].msg_len = 0;
        }
        // SAFETY: every header points into buffers this struct owns, with the lengths set
        // just above (SLOT_BYTES per iovec, CMSG_SPACE per control buffer, one sockaddr_in
        // each); `batch` headers exist. The kernel writes at most those lengths.
        let n = unsafe {
            libc::recvmmsg(
                sock.as_raw_fd(),
                self.hdrs.as_mut_ptr(),
                self.batch as libc::c_uint,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted => Ok(0),
                _ => Err(e),
            };
        }
        let n = n as usize;
        assert!(n <= self.batch, "recvmmsg returned more than asked");
        let (now, wall) = (Instant::now(), SystemTime::now());
        for i in 0..n {
            let h = &self.hdrs[i];
            if h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 {
                continue; // longer than any Clio packet: not ours
            }
            let len = h.msg_len as usize;
            assert!(len <= SLOT_BYTES, "datagram longer than its slot");
            let peer = (h.msg_hdr.msg_namelen as usize >= std::mem::size_of::<libc::sockaddr_in>()
                && self.addrs[i].sin_family == libc::AF_INET as libc::sa_family_t)
                .then(|| {
                    let a = &self.addrs[i];
                    SocketAddrV4::new(
                        Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
                        u16::from_be(a.sin_port),
                    )
                });
            let arrived = arrival(&h.msg_hdr, now, wall);
            f(Datagram {
                bytes: &self.bufs[i * SLOT_BYTES..i * SLOT_BYTES + len],
                peer,
                arrived,
            });
        }
        Ok(n)
    }
}

/// The kernel timestamp of a received message, as an `Instant`.
fn arrival(h: &libc::msghdr, now: Instant, wall: SystemTime) -> Option<Instant> {
    // SAFETY: `h` was filled by recvmmsg; its control buffer and length are the kernel's,
    // within the CMSG_SPACE bytes we gave it, and the CMSG_* macros stay inside
    // `msg_controllen`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                let at = UNIX_EPOCH
                    + Duration::new(
                        ts.tv_sec.max(0) as u64,
                        ts.tv_nsec.clamp(0, 999_999_999) as u32,
                    );
                // How long ago it arrived; a timestamp "in the future" (clock step) is now.
                let age = wall.duration_since(at).unwrap_or(Duration::ZERO);
                return now.checked_sub(age);
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    None
}

/// Send `packets` in as few system calls as the kernel allows (`sendmmsg`), to `peers[i]`
/// each, or on a connected socket when `peers` is `None`. Returns how many were sent; a
/// datagram the kernel refuses (full buffer, ICMP error of an earlier one) ends the call
/// early and the caller treats the rest as lost (the transport above retries).
pub fn send_batch(
    sock: &UdpSocket,
    packets: &[&[u8]],
    peers: Option<&[SocketAddrV4]>,
) -> io::Result<usize> {
    if let Some(p) = peers {
        assert_eq!(p.len(), packets.len(), "one peer per packet");
    }
    let mut sent = 0;
    const CHUNK: usize = 64;
    while sent < packets.len() {
        let n = (packets.len() - sent).min(CHUNK);
        let mut iov: Vec<libc::iovec> = packets[sent..sent + n]
            .iter()
            .map(|p| libc::iovec {
                iov_base: p.as_ptr() as *mut libc::c_void,
                iov_len: p.len(),
            })
            .collect();
        let mut addrs: Vec<libc::sockaddr_in> = peers
            .map(|p| p[sent..sent + n].iter().map(sockaddr).collect())
            .unwrap_or_default();
        // SAFETY: mmsghdr is plain old data; all-zero is a valid (empty) header.
        let mut hdrs: Vec<libc::mmsghdr> = vec![unsafe { std::mem::zeroed() }; n];
        for (i, h) in hdrs.iter_mut().enumerate() {
            h.msg_hdr.msg_iov = &mut iov[i];
            h.msg_hdr.msg_iovlen = 1;
            if let Some(a) = addrs.get_mut(i) {
                h.msg_hdr.msg_name = (a as *mut libc::sockaddr_in).cast();
                h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as _;
            }
        }
        // SAFETY: `n` headers, each with one iovec over a live packet slice (the kernel only
        // reads it) and, when addressed, one live sockaddr_in; all outlive the call.
        let r = unsafe { libc::sendmmsg(sock.as_raw_fd(), hdrs.as_mut_ptr(), n as _, 0) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock
                | io::ErrorKind::ConnectionRefused
                | io::ErrorKind::Interrupted => Ok(sent),
                _ if e.raw_os_error() == Some(libc::ENOBUFS) => Ok(sent),
                _ => Err(e),
            };
        }
        let r = r as usize;
        assert!(r <= n, "sendmmsg sent more than asked");
        sent += r;
        if r < n {
            break;
        }
    }
    Ok(sent)
}

fn sockaddr(a: &SocketAddrV4) -> libc::sockaddr_in {
    // SAFETY: sockaddr_in is plain old data; all-zero is valid before the fields are set.
    let mut s: libc::sockaddr_in = unsafe { std::mem::zeroed() };
    s.sin_family = libc::AF_INET as libc::sa_family_t;
    s.sin_port = a.port().to_be();
    s.sin_addr.s_addr = u32::from(*a.ip()).to_be();
    s
}

#[cfg(test)]
mod tests {
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
        assert_eq!(send_batch(&a, &refs, None).unwrap(), 100);
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
        assert_eq!(send_batch(&c, &[b"hello"], Some(&[to])).unwrap(), 1);
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
    }

    #[test]
    fn waits_end_with_data_or_at_the_timeout() {
        let (a, b) = pair();
        assert!(!wait_readable(&b, Duration::from_micros(200)).unwrap());
        a.send(b"x").unwrap();
        assert!(wait_readable(&b, Duration::from_secs(5)).unwrap());
    }
}
