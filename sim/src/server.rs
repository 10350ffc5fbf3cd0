//! Network front ends: put a memory node on UDP (kernel sockets, no root) or on raw Ethernet
//! (`pnet` datalink, root). The node keeps no connection state: every packet is answered
//! along the route it arrived on.

use crate::model::board::Outgoing;
use crate::node::MemoryNode;
use clio_clib::transport::mmsg::{self, Datagram, Gso, Receiver};
use clio_proto::frame::{emit_frame, parse_frame, Route};
use std::io;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use thiserror::Error;

/// How long a receive waits before the node services its rings again. Slow-path replies from
/// an external daemon wait at most this long.
pub const POLL_INTERVAL: Duration = Duration::from_micros(500);

/// The first wait instead of [`POLL_INTERVAL`] while a slow-path thread owes replies
/// ([`MemoryNode::awaits_slow_path`]); it doubles with each empty wait, up to
/// [`POLL_INTERVAL`].
pub const SLOW_PATH_POLL: Duration = Duration::from_micros(20);

/// Errors of the network front ends.
#[derive(Debug, Error)]
pub enum ServerError {
    /// Socket or interface I/O.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// Cause.
        source: io::Error,
    },
    /// Only IPv4 is spoken.
    #[error("the node speaks IPv4 only; {0} is not an IPv4 address")]
    NotIpv4(SocketAddr),
    /// No such interface.
    #[error("no network interface named {0:?} (see `ip link`)")]
    NoInterface(String),
    /// The interface gave a non-Ethernet channel.
    #[error("interface {0:?} is not an Ethernet device")]
    NotEthernet(String),
}

/// A running node server.
pub struct ServerHandle {
    /// The address it listens on (UDP) or the interface's MAC (raw).
    pub local: String,
    /// The UDP socket address, for UDP servers.
    pub udp_addr: Option<SocketAddr>,
    board: Arc<Mutex<Box<dyn MemoryNode>>>,
    stop: Arc<AtomicBool>,
    join: Option<JoinHandle<Result<(), ServerError>>>,
}

impl ServerHandle {
    /// The node (lock it to read counters or memory images).
    pub fn board(&self) -> Arc<Mutex<Box<dyn MemoryNode>>> {
        self.board.clone()
    }

    /// Stop serving and wait for the thread.
    pub fn stop(mut self) -> Result<(), ServerError> {
        self.stop_inner()
    }

    fn stop_inner(&mut self) -> Result<(), ServerError> {
        self.stop.store(true, Ordering::Release);
        match self.join.take() {
            Some(j) => j.join().unwrap_or(Ok(())),
            None => Ok(()),
        }
    }
}

impl Drop for ServerHandle {
    fn drop(&mut self) {
        let _ = self.stop_inner();
    }
}

pub(crate) fn lock(
    b: &Mutex<Box<dyn MemoryNode>>,
) -> std::sync::MutexGuard<'_, Box<dyn MemoryNode>> {
    // A panic while holding the lock would already have failed the node; keep serving.
    b.lock().unwrap_or_else(|e| e.into_inner())
}

/// Serve `board` over UDP on `listen` in a background thread (spinning [`UDP_SPIN`] for
/// more work before it blocks).
pub fn spawn_udp(
    board: impl MemoryNode + 'static,
    listen: SocketAddr,
) -> Result<ServerHandle, ServerError> {
    spawn_udp_spinning(board, listen, UDP_SPIN)
}

/// [`spawn_udp`], spinning `spin` for more work before the loop blocks (`Duration::ZERO`:
/// block at once, leaving the CPU to others sooner).
pub fn spawn_udp_spinning(
    board: impl MemoryNode + 'static,
    listen: SocketAddr,
    spin: Duration,
) -> Result<ServerHandle, ServerError> {
    spawn_udp_with(board, listen, spin, mmsg::offload_wanted())
}

/// [`spawn_udp_spinning`], with UDP GSO and GRO tried (`offload`, the default unless
/// `CLIO_UDP_GSO=off`) or never used.
pub fn spawn_udp_with(
    board: impl MemoryNode + 'static,
    listen: SocketAddr,
    spin: Duration,
    offload: bool,
) -> Result<ServerHandle, ServerError> {
    let board: Box<dyn MemoryNode> = Box::new(board);
    let socket = UdpSocket::bind(listen).map_err(|source| ServerError::Io {
        what: format!("binding UDP {listen}"),
        source,
    })?;
    let local = socket.local_addr().map_err(|source| ServerError::Io {
        what: "reading the bound address".into(),
        source,
    })?;
    let SocketAddr::V4(local4) = local else {
        return Err(ServerError::NotIpv4(local));
    };
    // Kernel arrival times are not needed here; waits use ppoll, not SO_RCVTIMEO.
    spawn_loop(
        "clio-node-udp",
        board,
        local.to_string(),
        Some(local),
        move |b, s| serve_udp(b, &socket, local4, spin, offload, s),
    )
}

/// Run a serving loop over `board` in a named thread until the handle stops it.
pub(crate) fn spawn_loop(
    name: &str,
    board: Box<dyn MemoryNode>,
    local: String,
    udp_addr: Option<SocketAddr>,
    serve: impl FnOnce(&Mutex<Box<dyn MemoryNode>>, &AtomicBool) -> Result<(), ServerError>
        + Send
        + 'static,
) -> Result<ServerHandle, ServerError> {
    let board = Arc::new(Mutex::new(board));
    let stop = Arc::new(AtomicBool::new(false));
    let (b, s) = (board.clone(), stop.clone());
    let join = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || serve(&b, &s))
        .map_err(|source| ServerError::Io {
            what: "starting the node thread".into(),
            source,
        })?;
    Ok(ServerHandle {
        local,
        udp_addr,
        board,
        stop,
        join: Some(join),
    })
}

/// Datagrams the UDP loop takes per `recvmmsg`.
const UDP_BATCH: usize = 64;

/// How long the UDP loop spins for the next datagram before it blocks, by default:
/// back-to-back requests (a client's next one, another client's) then cost no wake-up.
pub const UDP_SPIN: Duration = Duration::from_micros(20);

/// The UDP serving loop (runs until `stop`): every datagram already queued is taken with one
/// `recvmmsg` and handled under one lock of the node; the answers leave with one `sendmmsg`.
/// With `offload`, where the kernel allows: a client's GSO batch of requests arrives as one
/// buffer (GRO), and the answers to one client of one size leave as one GSO message (the
/// kernel's per-datagram cost, most of this loop's time, is paid once per run).
/// It spins briefly for more work, then blocks in `ppoll` (microsecond timers, so an
/// external slow path's replies wait at most [`POLL_INTERVAL`], not a kernel tick).
pub fn serve_udp(
    board: &Mutex<Box<dyn MemoryNode>>,
    socket: &UdpSocket,
    local: SocketAddrV4,
    spin: Duration,
    offload: bool,
    stop: &AtomicBool,
) -> Result<(), ServerError> {
    let mut rx = Receiver::with_gro(socket, UDP_BATCH, offload);
    let gso = Gso::new(offload);
    let mut out: Vec<Outgoing> = Vec::new();
    let mut idle_since = Instant::now();
    let mut awaited = 0u32;
    while !stop.load(Ordering::Acquire) {
        let mut b = lock(board);
        let n = take_queued(&mut rx, socket, local, &mut **b, &mut out)?;
        if n > 0 && b.holds_responses() {
            // Durable writes wait for a flush: take what is already queued too, so that one
            // flush makes them all durable (plain traffic never comes here).
            take_queued(&mut rx, socket, local, &mut **b, &mut out)?;
        }
        let now = Instant::now();
        if n > 0 {
            b.service(&mut out);
            idle_since = now;
            awaited = 0;
        } else if now.duration_since(idle_since) >= spin {
            // While a slow-path thread owes replies, look again soon, backing off (a long
            // allocation must not cost the node 50,000 wake-ups a second).
            let wait = if b.awaits_slow_path() {
                let w = (SLOW_PATH_POLL * (1 << awaited)).min(POLL_INTERVAL);
                awaited = (awaited + 1).min(5);
                w
            } else {
                awaited = 0;
                POLL_INTERVAL
            };
            drop(b);
            let ready = mmsg::wait_readable(socket, wait).map_err(|source| ServerError::Io {
                what: "waiting for packets".into(),
                source,
            })?;
            if !ready {
                lock(board).service(&mut out);
            }
        } else {
            std::thread::yield_now(); // lets a client on this core run
        }
        send_out(socket, &mut out, &gso);
    }
    Ok(())
}

/// Handle the datagrams queued on `socket` (one `recvmmsg`, no waiting); returns how many.
fn take_queued(
    rx: &mut Receiver,
    socket: &UdpSocket,
    local: SocketAddrV4,
    b: &mut dyn MemoryNode,
    out: &mut Vec<Outgoing>,
) -> Result<usize, ServerError> {
    let r = rx.recv_now(socket, |d: Datagram<'_>| {
        if let Some(peer) = d.peer {
            b.handle(&Route::udp(peer, local), d.bytes, out);
        }
    });
    match r {
        Ok(n) => Ok(n),
        // ICMP port-unreachable from a vanished client surfaces here on Linux: not fatal.
        Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => Ok(0),
        Err(source) => Err(ServerError::Io {
            what: "receiving".into(),
            source,
        }),
    }
}

/// Send the answers in `out` (one `sendmmsg`), and clear it: grouped by client (in order
/// within a client), so that a client's answers of one size form a GSO run. A send failure
/// concerns one client only; it will time out and retry.
fn send_out(socket: &UdpSocket, out: &mut Vec<Outgoing>, gso: &Gso) {
    if out.is_empty() {
        return;
    }
    let mut order: Vec<(SocketAddrV4, usize)> = out
        .iter()
        .enumerate()
        .map(|(i, (r, _))| (r.peer_socket(), i))
        .collect();
    // Stable: a client's answers keep their order.
    order.sort_by_key(|&(p, _)| (u32::from(*p.ip()), p.port()));
    let peers: Vec<SocketAddrV4> = order.iter().map(|&(p, _)| p).collect();
    let pkts: Vec<&[u8]> = order.iter().map(|&(_, i)| out[i].1.as_slice()).collect();
    let _ = mmsg::send_batch(socket, &pkts, Some(&peers), gso);
    out.clear();
}

/// Serve `board` on raw Ethernet on interface `iface` in a background thread (needs root or
/// CAP_NET_RAW). Accepts Clio frames (EtherType 0x88B5) and, on `udp_port`, IPv4/UDP frames
/// addressed to the interface, answering each in its own encapsulation.
pub fn spawn_raw(
    board: impl MemoryNode + 'static,
    iface: &str,
    udp_port: u16,
) -> Result<ServerHandle, ServerError> {
    let board: Box<dyn MemoryNode> = Box::new(board);
    use pnet_datalink::{self as dl, Channel};
    let itf = dl::interfaces()
        .into_iter()
        .find(|i| i.name == iface)
        .ok_or_else(|| ServerError::NoInterface(iface.into()))?;
    let mac = itf.mac.map(|m| m.octets()).unwrap_or([0; 6]);
    let cfg = dl::Config {
        read_timeout: Some(POLL_INTERVAL),
        ..Default::default()
    };
    let (mut tx, mut rx) = match dl::channel(&itf, cfg) {
        Ok(Channel::Ethernet(tx, rx)) => (tx, rx),
        Ok(_) => return Err(ServerError::NotEthernet(iface.into())),
        Err(source) => {
            return Err(ServerError::Io {
                what: format!("opening a raw channel on {iface} (root needed)"),
                source,
            })
        }
    };
    let local = format!(
        "{iface} ({})",
        mac.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":")
    );
    spawn_loop("clio-node-raw", board, local, None, move |b, s| {
        let mut out: Vec<Outgoing> = Vec::new();
        while !s.load(Ordering::Acquire) {
            match rx.next() {
                Ok(frame) => {
                    // AF_PACKET also shows our own transmissions: ignore them, and frames
                    // for other stations.
                    if frame.len() < 12
                        || frame[6..12] == mac
                        || (frame[0..6] != mac && frame[0] & 1 == 0)
                    {
                        continue;
                    }
                    if let Ok((route, clio)) = parse_frame(frame, Some(udp_port)) {
                        let mut g = lock(b);
                        g.handle(&route, clio, &mut out);
                        g.service(&mut out);
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) =>
                {
                    lock(b).service(&mut out);
                }
                Err(source) => {
                    return Err(ServerError::Io {
                        what: "receiving a frame".into(),
                        source,
                    })
                }
            }
            for (route, bytes) in out.drain(..) {
                let mut r = route;
                r.local_mac = mac;
                let frame = emit_frame(&r, &bytes);
                let _ = tx.send_to(&frame, None);
            }
        }
        Ok(())
    })
}
