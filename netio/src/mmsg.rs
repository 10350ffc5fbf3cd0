//! Batched datagram I/O on a UDP socket, shared by CLib's UDP transport and the node's UDP
//! front end:
//!
//! * `recvmmsg` / `sendmmsg`: many datagrams per system call;
//! * UDP segmentation offload (GSO, `UDP_SEGMENT`): consecutive equal-size datagrams to one
//!   peer leave as one message, which the kernel cuts into datagrams late (on loopback not
//!   at all, when the receiver coalesces); receive coalescing (GRO, `UDP_GRO`): such a run
//!   arrives as one buffer with its segment size, split here. The kernel's per-datagram
//!   cost (routing, headers, the loopback softirq, socket queueing) is paid once per run.
//!   Both are tried and dropped for plain I/O when the kernel refuses (decided once per
//!   socket, said at debug level); `CLIO_UDP_GSO=off` turns them off (see [`offload_wanted`]);
//! * kernel receive timestamps (`SO_TIMESTAMPNS`): when a datagram reached the socket, not when
//!   a thread got round to reading it, so a descheduled receiver does not inflate RTT samples;
//! * waits with `ppoll` (high-resolution timers) instead of `SO_RCVTIMEO`, whose sleeps are
//!   rounded up to the kernel tick (4 ms at `HZ=250`).
//!
//! Everything arriving here is hostile: lengths come from the kernel and are checked against
//! the buffers before any slice is taken; a truncated datagram (longer than a slot) is
//! dropped, never passed on cut; a coalesced buffer is split with bounds checks whatever
//! segment size its control message claims.

use std::io;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;
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
    set_int_option(sock, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// `setsockopt(sock, level, name, value)` for an `int` option.
fn set_int_option(
    sock: &UdpSocket,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: `sock` is an open socket for the whole call; `value` is a live c_int and the
    // length passed is its size.
    let r = unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            level,
            name,
            (&value as *const libc::c_int).cast(),
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

/// Room for the control messages of one received datagram: `SCM_TIMESTAMPNS` (a
/// `timespec`) and `UDP_GRO` (an `int`), generously aligned.
const CMSG_SPACE: usize = 128;

/// `SOL_UDP` options of `linux/udp.h` (not among every libc target's constants).
const UDP_SEGMENT: libc::c_int = 103;
const UDP_GRO: libc::c_int = 104;

/// Most datagrams one GSO send carries (the kernel's `UDP_MAX_SEGMENTS`: 64 on older
/// kernels, 128 on newer ones).
const GSO_MAX_SEGMENTS: usize = 64;

/// Most payload bytes one GSO send carries (an IPv4 datagram's limit).
const GSO_MAX_BYTES: usize = 65_507;

/// A receive slot with `UDP_GRO` on: the largest UDP payload, so a coalesced buffer is never
/// truncated.
const GRO_SLOT_BYTES: usize = 65_536;

/// Whether UDP segmentation offload (GSO) and receive coalescing (GRO) are wanted: yes unless
/// the environment variable `CLIO_UDP_GSO` is `0`, `off`, `no` or `false` (read once per
/// process; CLib and the node both follow it, so an A/B run can turn both off).
pub fn offload_wanted() -> bool {
    static WANTED: OnceLock<bool> = OnceLock::new();
    *WANTED.get_or_init(|| {
        !matches!(
            std::env::var("CLIO_UDP_GSO").as_deref(),
            Ok("0" | "off" | "no" | "false")
        )
    })
}

/// Whether sends on one socket may use GSO (`UDP_SEGMENT`): on until the kernel refuses it
/// once (old kernel, a device without checksum offload, a route whose MTU is below the
/// segment), then off for good: the sends fall back to plain `sendmmsg`.
#[derive(Debug)]
pub struct Gso {
    on: AtomicBool,
}

impl Gso {
    /// GSO tried (`true`) or never used (`false`).
    pub fn new(on: bool) -> Gso {
        Gso {
            on: AtomicBool::new(on),
        }
    }

    /// Whether sends still use GSO.
    pub fn on(&self) -> bool {
        self.on.load(Ordering::Relaxed)
    }

    /// The kernel refused a GSO send with `e`: plain sends from now on (said once).
    fn refused(&self, e: &io::Error) {
        if self.on.swap(false, Ordering::Relaxed) {
            log::debug!("UDP GSO refused by the kernel ({e}): plain sendmmsg from now on");
        }
    }
}

/// Whether `e` is the kernel refusing GSO (rather than a full buffer or a lost peer).
fn is_gso_refusal(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EIO | libc::EINVAL | libc::ENOPROTOOPT | libc::EOPNOTSUPP)
    )
}

/// Ask the kernel to hand equal-size datagrams that arrive together (a peer's GSO send) as
/// one buffer with a `UDP_GRO` control message giving the segment size.
pub fn enable_gro(sock: &UdpSocket) -> io::Result<()> {
    set_int_option(sock, libc::SOL_UDP, UDP_GRO, 1)
}

/// The datagrams of one received buffer: with a `UDP_GRO` segment size, pieces of that size
/// (the last may be shorter, as GSO cuts them); without one (or a size of 0, or one not
/// smaller than the buffer), the buffer itself. Every piece lies inside `buf`, whatever the
/// size says.
pub fn split_segments(buf: &[u8], segment: Option<usize>) -> impl Iterator<Item = &[u8]> {
    let step = match segment {
        Some(s) if s > 0 && s < buf.len() => s,
        _ => buf.len().max(1),
    };
    // An empty datagram is still one datagram.
    let empty = buf.is_empty().then_some(buf);
    buf.chunks(step).chain(empty)
}

/// Buffers for `recvmmsg`, owned by the one thread that receives on a socket.
pub struct Receiver {
    bufs: Vec<u8>,
    ctrl: Vec<u64>,
    addrs: Vec<libc::sockaddr_in>,
    iov: Vec<libc::iovec>,
    hdrs: Vec<libc::mmsghdr>,
    batch: usize,
    slot: usize,
    gro: bool,
    coalesced: u64,
}

// SAFETY: the raw pointers inside `iov`/`hdrs` are rebuilt from `bufs`/`ctrl`/`addrs` at the
// start of every call and never dereferenced outside it; the struct owns everything they
// point into, so moving it to another thread is sound.
unsafe impl Send for Receiver {}

impl Receiver {
    /// Buffers for up to `batch` datagrams per call (at least 1).
    pub fn new(batch: usize) -> Receiver {
        Receiver::with_slots(batch, SLOT_BYTES, false)
    }

    /// Like [`Receiver::new`], with `UDP_GRO` turned on for `sock` when `want` is set and the
    /// kernel agrees (each of the `batch` slots then holds a coalesced buffer of up to 64 KiB,
    /// split into its datagrams on receipt). When the kernel refuses, a plain receiver (said
    /// at debug level).
    pub fn with_gro(sock: &UdpSocket, batch: usize, want: bool) -> Receiver {
        if !want {
            return Receiver::new(batch);
        }
        match enable_gro(sock) {
            Ok(()) => Receiver::with_slots(batch, GRO_SLOT_BYTES, true),
            Err(e) => {
                log::debug!("UDP GRO refused by the kernel ({e}): plain recvmmsg");
                Receiver::new(batch)
            }
        }
    }

    fn with_slots(batch: usize, slot: usize, gro: bool) -> Receiver {
        let batch = batch.max(1);
        Receiver {
            bufs: vec![0; batch * slot],
            ctrl: vec![0; batch * CMSG_SPACE / 8],
            // SAFETY: sockaddr_in is plain old data; all-zero is a valid value.
            addrs: vec![unsafe { std::mem::zeroed() }; batch],
            // SAFETY: as above, iovec and mmsghdr are plain old data (null pointers, zeros).
            iov: vec![unsafe { std::mem::zeroed() }; batch],
            hdrs: vec![unsafe { std::mem::zeroed() }; batch],
            batch,
            slot,
            gro,
            coalesced: 0,
        }
    }

    /// Whether the socket coalesces datagrams (`UDP_GRO` on).
    pub fn gro(&self) -> bool {
        self.gro
    }

    /// Buffers received so far that held more than one datagram.
    pub fn coalesced(&self) -> u64 {
        self.coalesced
    }

    /// Receive the datagrams already queued on `sock` (at most the batch of buffers, each
    /// possibly a coalesced run of datagrams) without waiting, and hand each datagram to
    /// `f`. Returns how many datagrams were handed on (0 when none was queued).
    pub fn recv_now(
        &mut self,
        sock: &UdpSocket,
        mut f: impl FnMut(Datagram<'_>),
    ) -> io::Result<usize> {
        let slot = self.slot;
        for i in 0..self.batch {
            self.iov[i] = libc::iovec {
                iov_base: self.bufs[i * slot..].as_mut_ptr().cast(),
                iov_len: slot,
            };
            let h = &mut self.hdrs[i].msg_hdr;
            h.msg_name = (&mut self.addrs[i] as *mut libc::sockaddr_in).cast();
            h.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
            h.msg_iov = &mut self.iov[i];
            h.msg_iovlen = 1;
            h.msg_control = self.ctrl[i * CMSG_SPACE / 8..].as_mut_ptr().cast();
            h.msg_controllen = CMSG_SPACE as _;
            h.msg_flags = 0;
            self.hdrs[i].msg_len = 0;
        }
        // SAFETY: every header points into buffers this struct owns, with the lengths set
        // just above (`slot` bytes per iovec, CMSG_SPACE per control buffer, one sockaddr_in
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
        let mut handed = 0;
        for i in 0..n {
            let h = &self.hdrs[i];
            let flags = h.msg_hdr.msg_flags;
            if flags & libc::MSG_TRUNC != 0 {
                continue; // longer than any Clio packet: not ours
            }
            let cm = control(&h.msg_hdr);
            if self.gro && flags & libc::MSG_CTRUNC != 0 && cm.segment.is_none() {
                continue; // possibly coalesced, but the segment size was cut off: unsplittable
            }
            let len = h.msg_len as usize;
            assert!(len <= slot, "datagram longer than its slot");
            let peer = (h.msg_hdr.msg_namelen as usize >= std::mem::size_of::<libc::sockaddr_in>()
                && self.addrs[i].sin_family == libc::AF_INET as libc::sa_family_t)
                .then(|| {
                    let a = &self.addrs[i];
                    SocketAddrV4::new(
                        Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)),
                        u16::from_be(a.sin_port),
                    )
                });
            let arrived = cm.stamp.and_then(|ts| arrival(ts, now, wall));
            self.coalesced += cm.segment.is_some_and(|s| s > 0 && s < len) as u64;
            for bytes in split_segments(&self.bufs[i * slot..i * slot + len], cm.segment) {
                if bytes.len() > SLOT_BYTES {
                    continue; // as without GRO: longer than any Clio packet, not ours
                }
                f(Datagram {
                    bytes,
                    peer,
                    arrived,
                });
                handed += 1;
            }
        }
        Ok(handed)
    }
}

/// What the control messages of one received datagram say.
#[derive(Debug, Default)]
struct Control {
    /// The kernel arrival timestamp (`SCM_TIMESTAMPNS`).
    stamp: Option<libc::timespec>,
    /// The segment size of a coalesced buffer (`UDP_GRO`).
    segment: Option<usize>,
}

/// Read the control messages of `h` (filled by `recvmmsg`). Each one's data is read only
/// where it lies wholly inside the control buffer we gave the kernel.
fn control(h: &libc::msghdr) -> Control {
    let mut out = Control::default();
    let base = h.msg_control as usize;
    #[allow(clippy::unnecessary_cast)] // socklen_t on some targets
    let end = base.saturating_add(h.msg_controllen as usize);
    // SAFETY: `h` was filled by recvmmsg; its control buffer and length are the kernel's,
    // within the CMSG_SPACE bytes we gave it, and the CMSG_* macros stay inside
    // `msg_controllen`. Each data read is checked against `end` first and is unaligned.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            let data = libc::CMSG_DATA(c);
            let data_len = ((*c).cmsg_len as usize).saturating_sub(data as usize - c as usize);
            let fits = |n: usize| data_len >= n && (data as usize).saturating_add(n) <= end;
            match ((*c).cmsg_level, (*c).cmsg_type) {
                (libc::SOL_SOCKET, libc::SCM_TIMESTAMPNS)
                    if fits(std::mem::size_of::<libc::timespec>()) =>
                {
                    out.stamp = Some(std::ptr::read_unaligned(data.cast()));
                }
                // The kernel gives the size as an int; a u16 is read if that is all there is.
                (libc::SOL_UDP, UDP_GRO) if fits(std::mem::size_of::<libc::c_int>()) => {
                    let s: libc::c_int = std::ptr::read_unaligned(data.cast());
                    out.segment = usize::try_from(s).ok();
                }
                (libc::SOL_UDP, UDP_GRO) if fits(2) => {
                    out.segment = Some(std::ptr::read_unaligned::<u16>(data.cast()) as usize);
                }
                _ => {}
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    out
}

/// A kernel timestamp as an `Instant`.
fn arrival(ts: libc::timespec, now: Instant, wall: SystemTime) -> Option<Instant> {
    let at = UNIX_EPOCH
        + Duration::new(
            ts.tv_sec.max(0) as u64,
            ts.tv_nsec.clamp(0, 999_999_999) as u32,
        );
    // How long ago it arrived; a timestamp "in the future" (clock step) is now.
    let age = wall.duration_since(at).unwrap_or(Duration::ZERO);
    now.checked_sub(age)
}

/// One message of a send: packets `start..end` of the batch, to one peer; with `segment`,
/// one GSO super-packet of that segment size (every packet that size but the last, which
/// is not longer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    start: usize,
    end: usize,
    segment: Option<u16>,
}

/// Cut `packets[from..]` into at most `max_runs` messages: with `gso`, each run of at least
/// two packets to the same peer that GSO can carry as one (equal sizes but a shorter last
/// one, at most [`GSO_MAX_SEGMENTS`] and [`GSO_MAX_BYTES`]) is one message; every other
/// packet is a message of its own.
fn plan(
    packets: &[&[u8]],
    peers: Option<&[SocketAddrV4]>,
    from: usize,
    gso: bool,
    max_runs: usize,
) -> Vec<Run> {
    let mut runs = Vec::new();
    let mut i = from;
    while i < packets.len() && runs.len() < max_runs {
        let size = packets[i].len();
        let mut end = i + 1;
        if gso && size > 0 && size <= u16::MAX as usize {
            let mut total = size;
            while end < packets.len()
                && end - i < GSO_MAX_SEGMENTS
                && peers.is_none_or(|p| p[end] == p[i])
                && packets[end].len() <= size
                && !packets[end].is_empty()
                && total + packets[end].len() <= GSO_MAX_BYTES
            {
                total += packets[end].len();
                end += 1;
                if packets[end - 1].len() < size {
                    break; // a shorter one ends a GSO run
                }
            }
        }
        let segment = (end - i > 1).then_some(size as u16);
        runs.push(Run {
            start: i,
            end,
            segment,
        });
        i = end;
    }
    runs
}

/// Send `packets` in as few system calls as the kernel allows (`sendmmsg`), to `peers[i]`
/// each, or on a connected socket when `peers` is `None`. While `gso` is on, consecutive
/// packets to one peer that GSO can carry together leave as one message (`UDP_SEGMENT`):
/// the kernel cuts them into the same datagrams, at a fraction of the per-datagram cost;
/// if it refuses, `gso` goes off and the rest leaves plainly. Returns how many were sent; a
/// datagram the kernel refuses (full buffer, ICMP error of an earlier one) ends the call
/// early and the caller treats the rest as lost (the transport above retries).
pub fn send_batch(
    sock: &UdpSocket,
    packets: &[&[u8]],
    peers: Option<&[SocketAddrV4]>,
    gso: &Gso,
) -> io::Result<usize> {
    if let Some(p) = peers {
        assert_eq!(p.len(), packets.len(), "one peer per packet");
    }
    let mut sent = 0;
    const CHUNK: usize = 64;
    while sent < packets.len() {
        let use_gso = gso.on();
        let runs = plan(packets, peers, sent, use_gso, CHUNK);
        match send_runs(sock, packets, peers, &runs) {
            Ok(r) => {
                assert!(r <= runs.len(), "sendmmsg sent more than asked");
                let done = runs.last().map_or(sent, |run| run.end);
                sent = runs.get(r).map_or(done, |run| run.start);
                // A plain datagram refused: the buffer is full, the rest is lost. A GSO one:
                // try again, and the error tells a refusal of GSO from a full buffer.
                if runs.get(r).is_some_and(|run| run.segment.is_none()) {
                    break;
                }
            }
            Err(e) if use_gso && runs[0].segment.is_some() && is_gso_refusal(&e) => {
                gso.refused(&e);
            }
            Err(e) => {
                return match e.kind() {
                    io::ErrorKind::WouldBlock
                    | io::ErrorKind::ConnectionRefused
                    | io::ErrorKind::Interrupted => Ok(sent),
                    _ if e.raw_os_error() == Some(libc::ENOBUFS) => Ok(sent),
                    _ => Err(e),
                };
            }
        }
    }
    Ok(sent)
}

/// One `sendmmsg` of `runs` (a message each); returns how many messages the kernel took.
fn send_runs(
    sock: &UdpSocket,
    packets: &[&[u8]],
    peers: Option<&[SocketAddrV4]>,
    runs: &[Run],
) -> io::Result<usize> {
    let (Some(first), Some(last)) = (runs.first(), runs.last()) else {
        return Ok(0);
    };
    let iov: Vec<libc::iovec> = packets[first.start..last.end]
        .iter()
        .map(|p| libc::iovec {
            iov_base: p.as_ptr() as *mut libc::c_void,
            iov_len: p.len(),
        })
        .collect();
    let mut addrs: Vec<libc::sockaddr_in> = peers
        .map(|p| runs.iter().map(|r| sockaddr(&p[r.start])).collect())
        .unwrap_or_default();
    // One aligned control buffer of 4 u64 (32 bytes >= CMSG_SPACE(2)) per message.
    const CTRL_WORDS: usize = 4;
    let mut ctrl: Vec<u64> = vec![0; runs.len() * CTRL_WORDS];
    // SAFETY: mmsghdr is plain old data; all-zero is a valid (empty) header.
    let mut hdrs: Vec<libc::mmsghdr> = vec![unsafe { std::mem::zeroed() }; runs.len()];
    for (k, (h, r)) in hdrs.iter_mut().zip(runs).enumerate() {
        let m = &mut h.msg_hdr;
        assert!(
            r.start < r.end && r.end <= last.end,
            "runs lie inside the batch"
        );
        m.msg_iov = iov[r.start - first.start..].as_ptr() as *mut libc::iovec;
        m.msg_iovlen = (r.end - r.start) as _;
        if let Some(a) = addrs.get_mut(k) {
            m.msg_name = (a as *mut libc::sockaddr_in).cast();
            m.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as _;
        }
        if let Some(seg) = r.segment {
            // SAFETY: CMSG_SPACE is a pure size computation.
            let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<u16>() as u32) } as usize;
            assert!(space <= CTRL_WORDS * 8, "room for a UDP_SEGMENT cmsg");
            m.msg_control = ctrl[k * CTRL_WORDS..].as_mut_ptr().cast();
            m.msg_controllen = space as _;
            // SAFETY: `m` has a control buffer of `space` bytes (8-aligned, inside `ctrl`),
            // room for one cmsghdr with a u16 of data, so CMSG_FIRSTHDR is not null and
            // CMSG_DATA points inside the buffer; the u16 is written unaligned.
            unsafe {
                let c = libc::CMSG_FIRSTHDR(m);
                assert!(!c.is_null(), "control buffer holds a cmsghdr");
                (*c).cmsg_level = libc::SOL_UDP;
                (*c).cmsg_type = UDP_SEGMENT;
                (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<u16>() as u32) as _;
                std::ptr::write_unaligned(libc::CMSG_DATA(c).cast::<u16>(), seg);
            }
        }
    }
    // SAFETY: `runs.len()` headers, each with its iovecs over live packet slices (the
    // kernel only reads them), when addressed one live sockaddr_in, and when GSO one live
    // control buffer; all outlive the call.
    let r = unsafe { libc::sendmmsg(sock.as_raw_fd(), hdrs.as_mut_ptr(), runs.len() as _, 0) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
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
mod tests;
