//! IPv4/UDP through kernel sockets: no root, routable; the development default.
//!
//! Datagrams go out with `sendmmsg` (a multi-packet request is one system call) and come in
//! with `recvmmsg`, every datagram already queued at once, each with its kernel arrival
//! timestamp. A receive first spins for a short while (`UdpTransport::with_spin`: the
//! answer to a request on a fast path usually comes back within it, and a blocked thread's
//! wake-up costs more than the spin), then blocks in `ppoll` with a microsecond timeout.
//!
//! Where the kernel allows, the socket uses UDP GSO and GRO (see [`mmsg`]): a batch of
//! equal-size requests leaves as one message, and the node's answers to a batch of them
//! arrive as one buffer. `UdpTransport::connect_with` (or `CLIO_UDP_GSO=off`) turns that off;
//! a kernel that refuses either gets plain `sendmmsg`/`recvmmsg`.

use super::mmsg::{self, Gso, Receiver};
use super::{Received, Transport};
use crate::error::{ClioError, Result};
use socket2::{Domain, Protocol, Socket, Type};
use std::collections::VecDeque;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Socket buffer we ask for: large enough for a full incast window of 1 KiB packets with
/// kernel overhead. The kernel caps it at `net.core.rmem_max`.
const SOCKET_BUFFER: usize = 4 << 20;

/// Datagrams taken per `recvmmsg`.
const BATCH: usize = 32;

/// How long a receive spins before it blocks, by default.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(30);

struct Rx {
    r: Receiver,
    /// Datagrams received by a batch but not yet handed out by `recv`.
    pending: VecDeque<Received>,
}

/// A connected UDP socket to one memory node.
pub struct UdpTransport {
    socket: UdpSocket,
    rx: Mutex<Rx>,
    spin: Duration,
    /// The engine's hint: no other thread waits, so spinning keeps nobody off the CPU.
    spin_ok: AtomicBool,
    /// Whether GSO/GRO were asked for (lanes opened from this one ask the same).
    offload: bool,
    /// Whether sends still use GSO.
    gso: Gso,
    /// The receive buffer the kernel granted, bytes (its accounting, not payload).
    rcvbuf: usize,
}

/// Receive-buffer bytes one 1 KiB answer datagram costs in the kernel's accounting (its
/// socket buffer's true size: payload, headers and the buffer's own overhead).
const DATAGRAM_TRUESIZE: usize = 2304;

impl UdpTransport {
    /// Bind an ephemeral local port and connect it to `node` (so only the node's datagrams
    /// are received); GSO and GRO where the kernel allows, unless `CLIO_UDP_GSO=off`.
    pub fn connect(node: SocketAddr) -> Result<UdpTransport> {
        UdpTransport::connect_with(node, mmsg::offload_wanted())
    }

    /// [`UdpTransport::connect`], with UDP GSO and GRO tried (`offload`) or never used.
    pub fn connect_with(node: SocketAddr, offload: bool) -> Result<UdpTransport> {
        let domain = if node.is_ipv4() {
            Domain::IPV4
        } else {
            Domain::IPV6
        };
        let s = Socket::new(domain, Type::DGRAM, Some(Protocol::UDP))
            .map_err(|e| ClioError::io("creating a UDP socket", e))?;
        // Best effort: a smaller buffer only means more drops that the transport retries.
        let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
        let _ = s.set_send_buffer_size(SOCKET_BUFFER);
        let any: SocketAddr = if node.is_ipv4() {
            "0.0.0.0:0".parse()
        } else {
            "[::]:0".parse()
        }
        .map_err(|_| ClioError::InvalidArgument("local address"))?;
        s.bind(&any.into())
            .map_err(|e| ClioError::io("binding a UDP socket", e))?;
        s.connect(&node.into())
            .map_err(|e| ClioError::io(&format!("connecting to {node}"), e))?;
        let socket: UdpSocket = s.into();
        // Best effort: without timestamps RTT samples are taken when a thread reads.
        let _ = mmsg::enable_timestamps(&socket);
        let r = Receiver::with_gro(&socket, BATCH, offload);
        let rcvbuf = socket2::SockRef::from(&socket)
            .recv_buffer_size()
            .unwrap_or(SOCKET_BUFFER);
        Ok(UdpTransport {
            rcvbuf,
            socket,
            rx: Mutex::new(Rx {
                r,
                pending: VecDeque::new(),
            }),
            spin: DEFAULT_SPIN,
            spin_ok: AtomicBool::new(true),
            offload,
            gso: Gso::new(offload),
        })
    }

    /// Spin this long in a receive before blocking (`Duration::ZERO`: block at once).
    pub fn with_spin(mut self, spin: Duration) -> UdpTransport {
        self.spin = spin;
        self
    }

    /// The local address of the socket.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.socket
            .local_addr()
            .map_err(|e| ClioError::io("reading the local address", e))
    }

    /// Whether sends still use GSO and receives GRO (both off when not asked for or refused).
    pub fn offload(&self) -> (bool, bool) {
        let gro = self.rx.lock().unwrap_or_else(|e| e.into_inner()).r.gro();
        (self.gso.on(), gro)
    }

    /// Move what is queued on the socket (if anything) into `rx.pending`.
    fn take_queued(&self, rx: &mut Rx) -> Result<usize> {
        let Rx { r, pending } = rx;
        match r.recv_now(&self.socket, |d| {
            pending.push_back(Received {
                bytes: d.bytes.to_vec(),
                arrived: d.arrived,
            })
        }) {
            Ok(n) => Ok(n),
            // ICMP port unreachable: the node is not (yet) there. Same as silence.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => Ok(0),
            Err(e) => Err(ClioError::io("receiving", e)),
        }
    }

    /// Fill `rx.pending` within `timeout`: spin, then block in `ppoll`.
    fn fill(&self, rx: &mut Rx, timeout: Duration) -> Result<()> {
        if !rx.pending.is_empty() {
            return Ok(());
        }
        let start = Instant::now();
        let deadline = start + timeout;
        let spin = if self.spin_ok.load(Ordering::Relaxed) {
            self.spin.min(timeout)
        } else {
            Duration::ZERO
        };
        let spin_until = start + spin;
        loop {
            self.take_queued(rx)?;
            if !rx.pending.is_empty() {
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(());
            }
            if now < spin_until {
                // Yield, not a pure spin: on a busy host the node (or the thread this one waits
                // for) may share this core, and a pure spin would keep it off until the spin ends.
                std::thread::yield_now();
                continue;
            }
            let readable = mmsg::wait_readable(&self.socket, deadline - now)
                .map_err(|e| ClioError::io("waiting for the node", e))?;
            if !readable {
                return Ok(());
            }
        }
    }
}

impl Transport for UdpTransport {
    fn send(&self, packet: &[u8]) -> Result<()> {
        self.send_batch(&[packet])
    }

    fn send_batch(&self, packets: &[&[u8]]) -> Result<()> {
        // A full socket buffer or an ICMP error from an earlier datagram is a loss like any
        // other: the request times out and is retried (mmsg::send_batch stops early then).
        mmsg::send_batch(&self.socket, packets, None, &self.gso)
            .map(|_| ())
            .map_err(|e| ClioError::io("sending", e))
    }

    fn recv(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        self.fill(&mut rx, timeout)?;
        Ok(rx.pending.pop_front().map(|r| r.bytes))
    }

    fn recv_batch(&self, timeout: Duration, out: &mut Vec<Received>) -> Result<()> {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        self.fill(&mut rx, timeout)?;
        out.extend(rx.pending.drain(..));
        Ok(())
    }

    fn name(&self) -> &'static str {
        "udp"
    }

    fn spin_hint(&self, spin: bool) {
        self.spin_ok.store(spin, Ordering::Relaxed);
    }

    fn burst_capacity(&self) -> Option<usize> {
        Some(self.rcvbuf / DATAGRAM_TRUESIZE * clio_proto::consts::MAX_PAYLOAD)
    }

    fn open_lane(&self) -> Option<Box<dyn Transport>> {
        // Best effort: without another socket the thread shares one.
        let node = self.socket.peer_addr().ok()?;
        let t = UdpTransport::connect_with(node, self.offload)
            .ok()?
            .with_spin(self.spin);
        Some(Box::new(t))
    }
}
