//! An AF_XDP socket over `libc`: UMEM registration, the four rings mapped from the kernel,
//! `XDP_USE_NEED_WAKEUP`, zero-copy where the driver allows and copy mode otherwise.
//!
//! The UMEM is split in two fixed halves: receive frames circulate fill ring -> kernel -> RX
//! ring -> fill ring, transmit frames circulate free list -> TX ring -> kernel -> completion
//! ring -> free list. The halves never mix, so receiving and sending take separate locks.

use super::bpf::{AttachMode, Steering};
use crate::{NetError, Result};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

const AF_XDP: libc::c_int = 44;
const SOL_XDP: libc::c_int = 283;
const XDP_MMAP_OFFSETS: libc::c_int = 1;
const XDP_RX_RING: libc::c_int = 2;
const XDP_TX_RING: libc::c_int = 3;
const XDP_UMEM_REG: libc::c_int = 4;
const XDP_UMEM_FILL_RING: libc::c_int = 5;
const XDP_UMEM_COMPLETION_RING: libc::c_int = 6;
const XDP_OPTIONS: libc::c_int = 8;
const XDP_OPTIONS_ZEROCOPY: u32 = 1;
const XDP_COPY: u16 = 1 << 1;
const XDP_USE_NEED_WAKEUP: u16 = 1 << 3;
const XDP_RING_NEED_WAKEUP: u32 = 1;
const XDP_PGOFF_RX_RING: libc::off_t = 0;
const XDP_PGOFF_TX_RING: libc::off_t = 0x8000_0000;
const XDP_UMEM_PGOFF_FILL_RING: libc::off_t = 0x1_0000_0000;
const XDP_UMEM_PGOFF_COMPLETION_RING: libc::off_t = 0x1_8000_0000;

/// Bytes of one UMEM frame (a chunk): one Ethernet frame of up to this size.
pub(crate) const FRAME_SIZE: usize = 2048;
/// Frames in the receive half (also the fill and RX ring sizes).
pub const RX_FRAMES: u32 = 1024;
/// Frames in the transmit half (also the TX and completion ring sizes).
const TX_FRAMES: u32 = 1024;
const UMEM_LEN: usize = (RX_FRAMES + TX_FRAMES) as usize * FRAME_SIZE;
/// Descriptors taken from the RX ring per pass.
const RX_BATCH: u32 = 64;
/// How long a receive spins on the RX ring before it sleeps in `ppoll`.
pub const RX_SPIN: Duration = Duration::from_micros(20);
/// How long `open` retries a bind the kernel calls busy.
const BIND_BUSY_WAIT: Duration = Duration::from_millis(500);

#[repr(C)]
#[derive(Default)]
struct UmemReg {
    addr: u64,
    len: u64,
    chunk_size: u32,
    headroom: u32,
    flags: u32,
    tx_metadata_len: u32,
}

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct RingOffset {
    producer: u64,
    consumer: u64,
    desc: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct MmapOffsets {
    rx: RingOffset,
    tx: RingOffset,
    fr: RingOffset,
    cr: RingOffset,
}

#[repr(C)]
struct SockaddrXdp {
    family: u16,
    flags: u16,
    ifindex: u32,
    queue_id: u32,
    shared_umem_fd: u32,
}

/// An RX/TX descriptor (`struct xdp_desc`).
#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Desc {
    addr: u64,
    len: u32,
    options: u32,
}

fn os_err(step: &str, e: io::Error) -> NetError {
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => " (needs root or CAP_NET_RAW)",
        Some(libc::EAFNOSUPPORT) => " (the kernel has no AF_XDP: CONFIG_XDP_SOCKETS)",
        Some(libc::EBUSY) => " (another AF_XDP socket is bound to this interface queue)",
        Some(libc::ENODEV) => " (no such interface or queue)",
        Some(libc::EOPNOTSUPP) => " (the driver does not support this AF_XDP mode)",
        _ => "",
    };
    NetError(format!("AF_XDP: {step}: {e}{hint}"))
}

fn check(step: &str, r: libc::c_int) -> Result<()> {
    if r < 0 {
        Err(os_err(step, io::Error::last_os_error()))
    } else {
        Ok(())
    }
}

/// A memory mapping unmapped on drop.
struct Mapping {
    ptr: *mut u8,
    len: usize,
}

impl Mapping {
    fn new(step: &str, len: usize, fd: libc::c_int, offset: libc::off_t) -> Result<Mapping> {
        let (flags, fd) = if fd < 0 {
            (libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1)
        } else {
            (libc::MAP_SHARED | libc::MAP_POPULATE, fd)
        };
        // SAFETY: a fresh mapping chosen by the kernel (no fixed address), so no existing
        // memory is affected; the result is checked before use.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                offset,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(os_err(step, io::Error::last_os_error()));
        }
        Ok(Mapping {
            ptr: p as *mut u8,
            len,
        })
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` are exactly what mmap returned, unmapped only here.
        unsafe { libc::munmap(self.ptr as *mut libc::c_void, self.len) };
    }
}

/// One ring shared with the kernel: producer and consumer indices, flags and `size`
/// descriptors of type `T`, all inside `map`.
struct Ring<T: Copy> {
    map: Mapping,
    off: RingOffset,
    size: u32,
    /// Our copy of our own index (producer for fill/TX, consumer for RX/completion).
    cached: u32,
    _t: std::marker::PhantomData<T>,
}

// SAFETY: the ring's memory is a process-wide mapping, not tied to a thread; every ring lives
// behind a Mutex of its socket, so only one thread touches our side of it at a time.
unsafe impl<T: Copy> Send for Ring<T> {}

impl<T: Copy> Ring<T> {
    fn map(
        step: &str,
        fd: libc::c_int,
        off: RingOffset,
        size: u32,
        pgoff: libc::off_t,
    ) -> Result<Self> {
        let len = off.desc as usize + size as usize * std::mem::size_of::<T>();
        assert!(off.producer as usize + 4 <= len && off.consumer as usize + 4 <= len);
        assert!(off.flags as usize + 4 <= len);
        let map = Mapping::new(step, len, fd, pgoff)?;
        let mut r = Ring {
            map,
            off,
            size,
            cached: 0,
            _t: std::marker::PhantomData,
        };
        r.cached = r.index(off.producer).load(Ordering::Relaxed);
        Ok(r)
    }

    fn index(&self, at: u64) -> &AtomicU32 {
        assert!(at as usize + 4 <= self.map.len && at.is_multiple_of(4));
        // SAFETY: in bounds and 4-aligned (checked above; the mapping is page-aligned); the
        // kernel updates this u32 concurrently, which is what AtomicU32 is for.
        unsafe { &*(self.map.ptr.add(at as usize) as *const AtomicU32) }
    }

    fn producer(&self) -> &AtomicU32 {
        self.index(self.off.producer)
    }

    fn consumer(&self) -> &AtomicU32 {
        self.index(self.off.consumer)
    }

    fn needs_wakeup(&self) -> bool {
        self.index(self.off.flags).load(Ordering::Relaxed) & XDP_RING_NEED_WAKEUP != 0
    }

    fn slot(&self, i: u32) -> *mut T {
        let k = (i & (self.size - 1)) as usize;
        let at = self.off.desc as usize + k * std::mem::size_of::<T>();
        assert!(k < self.size as usize && at + std::mem::size_of::<T>() <= self.map.len);
        // SAFETY: `at` is inside the mapping (checked above).
        unsafe { self.map.ptr.add(at) as *mut T }
    }

    fn read(&self, i: u32) -> T {
        // SAFETY: `slot` is in bounds and aligned (the desc area is 64-byte aligned and T
        // is 8 or 16 bytes); the kernel published it before the producer index we read.
        unsafe { std::ptr::read_volatile(self.slot(i)) }
    }

    fn write(&self, i: u32, v: T) {
        // SAFETY: as in `read`; the slot is ours until we publish the producer index.
        unsafe { std::ptr::write_volatile(self.slot(i), v) }
    }
}

struct RxSide {
    rx: Ring<Desc>,
    fill: Ring<u64>,
    /// Receive frames we are done with that did not fit the fill ring yet. The kernel
    /// publishes its fill-ring consumer index lazily (when its cached view runs dry), so the
    /// ring can look full while the kernel has in fact taken frames we already got back.
    spare: Vec<u64>,
}

struct TxSide {
    tx: Ring<Desc>,
    comp: Ring<u64>,
    free: Vec<u64>,
}

/// What an open socket runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct XdpMode {
    /// The XDP program runs in the driver (else generic XDP).
    pub native: bool,
    /// Frames go to and from the UMEM without a copy (else the kernel copies them).
    pub zero_copy: bool,
}

/// An AF_XDP socket bound to one queue of one interface, with the steering program that
/// sends it every Clio frame (EtherType 0x88B5) arriving there; other traffic goes on to
/// the kernel's stack. One per interface: the program and the queue are exclusive.
pub struct XdpSocket {
    // Field order is drop order: detach the program, then close the socket, then unmap.
    _steering: Steering,
    fd: OwnedFd,
    rx: Mutex<RxSide>,
    tx: Mutex<TxSide>,
    umem: Mapping,
    mode: XdpMode,
}

// SAFETY: the UMEM mapping is process-wide memory; its receive half is only touched under the
// `rx` lock and its transmit half only under the `tx` lock (see the module comment).
unsafe impl Sync for XdpSocket {}
// SAFETY: as above; nothing in the socket is tied to the thread that opened it.
unsafe impl Send for XdpSocket {}

impl XdpSocket {
    /// Open an AF_XDP socket on `queue` of the interface with index `ifindex`. Needs root
    /// (or CAP_NET_RAW + CAP_BPF + CAP_NET_ADMIN). `force_copy` asks for copy mode even
    /// where zero-copy would work.
    pub fn open(ifindex: u32, queue: u32, force_copy: bool) -> Result<XdpSocket> {
        // SAFETY: plain system call, result checked.
        let raw = unsafe { libc::socket(AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        check("creating the AF_XDP socket", raw)?;
        // SAFETY: `raw` is a new descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let s = fd.as_raw_fd();

        let umem = Mapping::new("allocating the UMEM", UMEM_LEN, -1, 0)?;
        let reg = UmemReg {
            addr: umem.ptr as u64,
            len: UMEM_LEN as u64,
            chunk_size: FRAME_SIZE as u32,
            ..Default::default()
        };
        setsockopt(s, XDP_UMEM_REG, &reg, "registering the UMEM")?;
        setsockopt(s, XDP_UMEM_FILL_RING, &RX_FRAMES, "sizing the fill ring")?;
        setsockopt(
            s,
            XDP_UMEM_COMPLETION_RING,
            &TX_FRAMES,
            "sizing the completion ring",
        )?;
        setsockopt(s, XDP_RX_RING, &RX_FRAMES, "sizing the RX ring")?;
        setsockopt(s, XDP_TX_RING, &TX_FRAMES, "sizing the TX ring")?;
        let mut off = MmapOffsets::default();
        let len = getsockopt(s, XDP_MMAP_OFFSETS, &mut off)
            .map_err(|e| os_err("reading the ring offsets", e))?;
        if len != std::mem::size_of::<MmapOffsets>() {
            return Err(NetError(
                "AF_XDP: the kernel's ring offsets have no flags field (kernel older than 5.4)"
                    .into(),
            ));
        }
        let rx = Ring::<Desc>::map(
            "mapping the RX ring",
            s,
            off.rx,
            RX_FRAMES,
            XDP_PGOFF_RX_RING,
        )?;
        let tx = Ring::<Desc>::map(
            "mapping the TX ring",
            s,
            off.tx,
            TX_FRAMES,
            XDP_PGOFF_TX_RING,
        )?;
        let fill = Ring::<u64>::map(
            "mapping the fill ring",
            s,
            off.fr,
            RX_FRAMES,
            XDP_UMEM_PGOFF_FILL_RING,
        )?;
        let comp = Ring::<u64>::map(
            "mapping the completion ring",
            s,
            off.cr,
            TX_FRAMES,
            XDP_UMEM_PGOFF_COMPLETION_RING,
        )?;
        // Every receive frame goes to the kernel before the bind, so frames can land at once.
        let mut side = RxSide {
            rx,
            fill,
            spare: Vec::with_capacity(RX_FRAMES as usize),
        };
        for k in 0..RX_FRAMES {
            let i = side.fill.cached;
            side.fill.write(i, k as u64 * FRAME_SIZE as u64);
            side.fill.cached = i.wrapping_add(1);
        }
        side.fill
            .producer()
            .store(side.fill.cached, Ordering::Release);
        side.rx.cached = side.rx.consumer().load(Ordering::Relaxed);
        let free = (RX_FRAMES..RX_FRAMES + TX_FRAMES)
            .rev()
            .map(|k| k as u64 * FRAME_SIZE as u64)
            .collect();
        let mut tside = TxSide { tx, comp, free };
        tside.comp.cached = tside.comp.consumer().load(Ordering::Relaxed);

        let steering = Steering::attach(ifindex, queue + 1)?;
        let mut addr = SockaddrXdp {
            family: AF_XDP as u16,
            flags: XDP_USE_NEED_WAKEUP | if force_copy { XDP_COPY } else { 0 },
            ifindex,
            queue_id: queue,
            shared_umem_fd: 0,
        };
        let bind = |a: &SockaddrXdp| {
            // SAFETY: `a` is a valid sockaddr_xdp of the size passed.
            unsafe {
                libc::bind(
                    s,
                    a as *const SockaddrXdp as *const libc::sockaddr,
                    std::mem::size_of::<SockaddrXdp>() as libc::socklen_t,
                )
            }
        };
        // A queue whose socket closed a moment ago stays busy until the kernel's deferred
        // release has run: retry EBUSY for a while.
        let busy_until = Instant::now() + BIND_BUSY_WAIT;
        let mut r = bind(&addr);
        while r < 0
            && io::Error::last_os_error().raw_os_error() == Some(libc::EBUSY)
            && Instant::now() < busy_until
        {
            std::thread::sleep(Duration::from_millis(5));
            r = bind(&addr);
        }
        if r < 0 {
            let first = io::Error::last_os_error();
            // Some drivers refuse the default (zero-copy attempt) outright: ask for copy mode.
            if force_copy || first.raw_os_error() == Some(libc::EBUSY) {
                return Err(os_err(
                    &format!("binding to queue {queue} of interface {ifindex}"),
                    first,
                ));
            }
            addr.flags |= XDP_COPY;
            check(
                &format!("binding to queue {queue} of interface {ifindex} (copy mode)"),
                bind(&addr),
            )?;
        }
        steering.insert(queue, s)?;
        let mut opts: u32 = 0;
        let zero_copy =
            getsockopt(s, XDP_OPTIONS, &mut opts).is_ok() && opts & XDP_OPTIONS_ZEROCOPY != 0;
        let native = steering.mode == AttachMode::Driver;
        Ok(XdpSocket {
            _steering: steering,
            fd,
            rx: Mutex::new(side),
            tx: Mutex::new(tside),
            umem,
            mode: XdpMode { native, zero_copy },
        })
    }

    /// Where the program runs and whether frames are copied.
    pub fn mode(&self) -> XdpMode {
        self.mode
    }

    /// Bytes of the UMEM frame at `addr` (a kernel-given descriptor), checked to lie inside
    /// `half` (the receive or transmit frames).
    fn frame(&self, addr: u64, len: usize, half: std::ops::Range<u32>) -> *mut u8 {
        let lo = half.start as u64 * FRAME_SIZE as u64;
        let hi = half.end as u64 * FRAME_SIZE as u64;
        assert!(
            addr >= lo && addr < hi,
            "UMEM address {addr:#x} outside its half"
        );
        // In copy mode the kernel may put the data at an offset inside the chunk: the frame
        // must end inside the same chunk.
        let chunk_end = (addr / FRAME_SIZE as u64 + 1) * FRAME_SIZE as u64;
        assert!(
            addr + len as u64 <= chunk_end,
            "UMEM frame crosses its chunk"
        );
        assert!(chunk_end as usize <= self.umem.len);
        // SAFETY: `addr + len` lies inside the UMEM mapping (checked above).
        unsafe { self.umem.ptr.add(addr as usize) }
    }

    fn kick(&self, flags: libc::c_int) {
        // SAFETY: a zero-length send/receive with no buffers only wakes the kernel side of
        // the socket; errors (EAGAIN, ENOBUFS, EBUSY) mean "try later" and are ignored.
        unsafe {
            if flags == 0 {
                libc::sendto(
                    self.fd.as_raw_fd(),
                    std::ptr::null(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null(),
                    0,
                );
            } else {
                libc::recvfrom(
                    self.fd.as_raw_fd(),
                    std::ptr::null_mut(),
                    0,
                    libc::MSG_DONTWAIT,
                    std::ptr::null_mut(),
                    std::ptr::null_mut(),
                );
            }
        }
    }

    /// Wait up to `timeout` for frames (spinning on the ring for up to `spin` first, then
    /// sleeping in `ppoll`), then hand every frame already there (up to a batch) to `f`, in
    /// arrival order, straight from the UMEM. Returns how many frames were handed over.
    pub fn recv_frames(
        &self,
        timeout: Duration,
        spin: Duration,
        mut f: impl FnMut(&[u8]),
    ) -> Result<usize> {
        let deadline = Instant::now() + timeout;
        let spin_until = Instant::now() + spin.min(timeout);
        let mut side = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            let ready = side
                .rx
                .producer()
                .load(Ordering::Acquire)
                .wrapping_sub(side.rx.cached);
            if ready > 0 {
                assert!(ready <= side.rx.size, "RX ring overrun: {ready} entries");
                let n = ready.min(RX_BATCH);
                for k in 0..n {
                    let d = side.rx.read(side.rx.cached.wrapping_add(k));
                    let p = self.frame(d.addr, d.len as usize, 0..RX_FRAMES);
                    // SAFETY: `frame` checked the range; the kernel handed this frame to us
                    // and does not write it until we give it back through the fill ring.
                    let bytes = unsafe { std::slice::from_raw_parts(p, d.len as usize) };
                    f(bytes);
                    // Back to the kernel (below): the chunk's base address.
                    side.spare.push(d.addr - d.addr % FRAME_SIZE as u64);
                }
                side.rx.cached = side.rx.cached.wrapping_add(n);
                side.rx.consumer().store(side.rx.cached, Ordering::Release);
                Self::refill(&mut side);
                if side.fill.needs_wakeup() {
                    self.kick(1);
                }
                return Ok(n as usize);
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(0);
            }
            if now < spin_until {
                std::hint::spin_loop();
                continue;
            }
            Self::refill(&mut side);
            if side.fill.needs_wakeup() {
                self.kick(1);
            }
            let mut pfd = libc::pollfd {
                fd: self.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            };
            let left = deadline - now;
            let ts = libc::timespec {
                tv_sec: left.as_secs() as libc::time_t,
                tv_nsec: left.subsec_nanos() as libc::c_long,
            };
            // SAFETY: one valid pollfd and a valid timespec; no signal mask change.
            let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(os_err("waiting for frames", e));
                }
            }
        }
    }

    /// Give the receive frames we are done with back to the kernel, as far as the fill ring
    /// has room.
    fn refill(side: &mut RxSide) {
        assert!(
            side.spare.len() <= RX_FRAMES as usize,
            "more spare frames than frames"
        );
        let used = side
            .fill
            .cached
            .wrapping_sub(side.fill.consumer().load(Ordering::Acquire));
        assert!(used <= side.fill.size, "fill ring overrun: {used} entries");
        let room = (side.fill.size - used) as usize;
        let n = room.min(side.spare.len());
        if n == 0 {
            return;
        }
        for addr in side.spare.drain(..n) {
            let i = side.fill.cached;
            side.fill.write(i, addr);
            side.fill.cached = i.wrapping_add(1);
        }
        side.fill
            .producer()
            .store(side.fill.cached, Ordering::Release);
    }

    /// Take back transmit frames the kernel has finished with.
    fn reclaim(&self, side: &mut TxSide) {
        let prod = side.comp.producer().load(Ordering::Acquire);
        let n = prod.wrapping_sub(side.comp.cached);
        assert!(n <= side.comp.size, "completion ring overrun: {n} entries");
        for k in 0..n {
            let addr = side.comp.read(side.comp.cached.wrapping_add(k));
            self.frame(addr, 0, RX_FRAMES..RX_FRAMES + TX_FRAMES);
            side.free.push(addr);
        }
        side.comp.cached = prod;
        side.comp.consumer().store(prod, Ordering::Release);
        assert!(side.free.len() <= TX_FRAMES as usize);
    }

    /// Send frames, each the concatenation of its parts, with one wake-up of the kernel.
    /// Returns how many went out; the rest found no free transmit frame (a loss: the caller
    /// retries at its own pace).
    pub fn send_frames(&self, frames: &[&[&[u8]]]) -> Result<usize> {
        let mut side = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        self.reclaim(&mut side);
        if side.free.len() < frames.len() {
            self.kick(0);
            self.reclaim(&mut side);
        }
        let mut sent = 0;
        for parts in frames {
            let len: usize = parts.iter().map(|p| p.len()).sum();
            if len > FRAME_SIZE {
                return Err(NetError(format!(
                    "AF_XDP: a frame of {len} bytes does not fit a {FRAME_SIZE}-byte UMEM frame"
                )));
            }
            let Some(addr) = side.free.pop() else { break };
            let p = self.frame(addr, len, RX_FRAMES..RX_FRAMES + TX_FRAMES);
            let mut at = 0;
            for part in parts.iter() {
                // SAFETY: `p[at..at + part.len()]` is inside the frame (`len` checked by
                // `frame`); the frame came from the free list, so the kernel is not using it.
                unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), p.add(at), part.len()) };
                at += part.len();
            }
            let i = side.tx.cached;
            let used = i.wrapping_sub(side.tx.consumer().load(Ordering::Acquire));
            assert!(used <= side.tx.size, "TX ring overrun: {used} entries");
            if used == side.tx.size {
                // The kernel publishes its consumer index lazily: the ring may look full
                // with frames to spare. The rest of the batch is a loss; callers retry.
                side.free.push(addr);
                break;
            }
            side.tx.write(
                i,
                Desc {
                    addr,
                    len: len as u32,
                    options: 0,
                },
            );
            side.tx.cached = i.wrapping_add(1);
            sent += 1;
        }
        side.tx.producer().store(side.tx.cached, Ordering::Release);
        if sent > 0 && (side.tx.needs_wakeup() || !self.mode.zero_copy) {
            self.kick(0);
        }
        Ok(sent)
    }
}

fn setsockopt<T>(s: libc::c_int, opt: libc::c_int, v: &T, step: &str) -> Result<()> {
    // SAFETY: `v` is a live value of the size passed.
    let r = unsafe {
        libc::setsockopt(
            s,
            SOL_XDP,
            opt,
            v as *const T as *const libc::c_void,
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    };
    check(step, r)
}

/// Reads socket option `opt` into `v`; the length the kernel wrote.
fn getsockopt<T>(s: libc::c_int, opt: libc::c_int, v: &mut T) -> io::Result<usize> {
    let mut len = std::mem::size_of::<T>() as libc::socklen_t;
    // SAFETY: `v` is a writable value of `len` bytes.
    let r =
        unsafe { libc::getsockopt(s, SOL_XDP, opt, v as *mut T as *mut libc::c_void, &mut len) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(len as usize)
    }
}
