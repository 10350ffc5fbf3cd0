//! Network front ends: put a memory node on UDP (kernel sockets, no root) or on raw Ethernet
//! (`pnet` datalink, root). The node keeps no connection state: every packet is answered
//! along the route it arrived on.

use crate::model::board::Outgoing;
use crate::node::MemoryNode;
use clio_netio::mmsg::{self, Datagram, Gso, Receiver};
use clio_proto::frame::{emit_frame, parse_frame, Route};
use std::io;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};
use thiserror::Error;

mod thread_stats;
pub use thread_stats::ServingStats;
use thread_stats::{Held, ThreadStats};

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
    /// The serving threads (one, or `--threads` for UDP).
    joins: Vec<JoinHandle<Result<(), ServerError>>>,
    /// Each UDP serving thread's counters.
    served: Arc<Vec<ThreadStats>>,
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

    /// Serving threads.
    pub fn threads(&self) -> usize {
        self.joins.len()
    }

    /// Datagrams each serving thread took so far (UDP; zeros for other front ends): how the
    /// kernel spread the clients' flows over the threads.
    pub fn served_per_thread(&self) -> Vec<u64> {
        self.serving_stats().iter().map(|s| s.datagrams).collect()
    }

    /// Each serving thread's counters so far (UDP; zeros for other front ends): datagrams,
    /// and the time it waited for and held the node's lock.
    pub fn serving_stats(&self) -> Vec<ServingStats> {
        self.served.iter().map(ThreadStats::snapshot).collect()
    }

    fn stop_inner(&mut self) -> Result<(), ServerError> {
        self.stop.store(true, Ordering::Release);
        // Every thread is joined; the first error is reported.
        let mut first = Ok(());
        for j in self.joins.drain(..) {
            let r = j.join().unwrap_or(Ok(()));
            if first.is_ok() {
                first = r;
            }
        }
        first
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
    spawn_udp_serving(board, listen, spin, offload, 1)
}

/// [`spawn_udp`] on `threads` serving threads (see [`spawn_udp_serving`]).
pub fn spawn_udp_threads(
    board: impl MemoryNode + 'static,
    listen: SocketAddr,
    threads: usize,
) -> Result<ServerHandle, ServerError> {
    spawn_udp_serving(board, listen, UDP_SPIN, mmsg::offload_wanted(), threads)
}

/// Serve `board` over UDP on `threads` threads (at least one), each with a socket of its
/// own bound to the one address with `SO_REUSEPORT`: the kernel spreads the clients' flows
/// (one per CLib lane, i.e. per client thread) over the sockets by their addresses, so a
/// lane's requests always reach the same thread, and each thread receives and sends its
/// batches (the kernel's UDP path, most of a request's cost) beside the others. The node
/// itself is one: a thread holds its lock while its batch runs through the model, so the
/// answers are those of one model seeing the requests in some arrival order (what network
/// reordering could give it anyway), and everything exact stays exact. Another process of
/// the same user could bind the port with `SO_REUSEPORT` too and share its traffic: the
/// kernel allows that only to the same effective user.
pub fn spawn_udp_serving(
    board: impl MemoryNode + 'static,
    listen: SocketAddr,
    spin: Duration,
    offload: bool,
    threads: usize,
) -> Result<ServerHandle, ServerError> {
    let board: Box<dyn MemoryNode> = Box::new(board);
    let threads = threads.max(1);
    let first = bind_udp(listen, threads > 1)?;
    let local = first.local_addr().map_err(|source| ServerError::Io {
        what: "reading the bound address".into(),
        source,
    })?;
    let SocketAddr::V4(local4) = local else {
        return Err(ServerError::NotIpv4(local));
    };
    let mut sockets = vec![first];
    for _ in 1..threads {
        // The port `listen` resolved to (port 0 picks one on the first bind).
        sockets.push(bind_udp(local, true)?);
    }
    // Kernel arrival times are not needed here; waits use ppoll, not SO_RCVTIMEO.
    let served: Arc<Vec<ThreadStats>> =
        Arc::new((0..threads).map(|_| ThreadStats::default()).collect());
    let loops: Vec<_> = sockets
        .into_iter()
        .enumerate()
        .map(|(i, socket)| {
            let served = served.clone();
            move |b: &Mutex<Box<dyn MemoryNode>>, s: &AtomicBool| {
                serve_udp(b, &socket, local4, spin, offload, s, &served[i])
            }
        })
        .collect();
    let mut h = spawn_loops(
        "clio-node-udp",
        board,
        local.to_string(),
        Some(local),
        loops,
    )?;
    h.served = served;
    Ok(h)
}

/// A UDP socket bound to `addr`, with `SO_REUSEPORT` set first when `shared` (several
/// serving threads bind the same address).
fn bind_udp(addr: SocketAddr, shared: bool) -> Result<UdpSocket, ServerError> {
    let io = |source| ServerError::Io {
        what: format!("binding UDP {addr}"),
        source,
    };
    if !shared {
        return UdpSocket::bind(addr).map_err(io);
    }
    let sock = socket2::Socket::new(
        socket2::Domain::for_address(addr),
        socket2::Type::DGRAM,
        Some(socket2::Protocol::UDP),
    )
    .map_err(io)?;
    sock.set_reuse_port(true).map_err(io)?;
    sock.bind(&addr.into()).map_err(io)?;
    Ok(sock.into())
}

/// Run a serving loop over `board` in a named thread until the handle stops it.
pub(crate) fn spawn_loop<F>(
    name: &str,
    board: Box<dyn MemoryNode>,
    local: String,
    udp_addr: Option<SocketAddr>,
    serve: F,
) -> Result<ServerHandle, ServerError>
where
    F: FnOnce(&Mutex<Box<dyn MemoryNode>>, &AtomicBool) -> Result<(), ServerError> + Send + 'static,
{
    spawn_loops(name, board, local, udp_addr, vec![serve])
}

/// Run one serving loop per element of `serves` over the one `board`, each in a thread of
/// its own (named `name`, `name-1`, ...), until the handle stops them.
pub(crate) fn spawn_loops<F>(
    name: &str,
    board: Box<dyn MemoryNode>,
    local: String,
    udp_addr: Option<SocketAddr>,
    serves: Vec<F>,
) -> Result<ServerHandle, ServerError>
where
    F: FnOnce(&Mutex<Box<dyn MemoryNode>>, &AtomicBool) -> Result<(), ServerError> + Send + 'static,
{
    let board = Arc::new(Mutex::new(board));
    let stop = Arc::new(AtomicBool::new(false));
    let mut handle = ServerHandle {
        local,
        udp_addr,
        board: board.clone(),
        stop: stop.clone(),
        joins: Vec::new(),
        served: Arc::new((0..serves.len()).map(|_| ThreadStats::default()).collect()),
    };
    for (i, serve) in serves.into_iter().enumerate() {
        let (b, s) = (board.clone(), stop.clone());
        let thread = if i == 0 {
            name.to_string()
        } else {
            format!("{name}-{i}")
        };
        let join = std::thread::Builder::new()
            .name(thread)
            .spawn(move || serve(&b, &s))
            .map_err(|source| ServerError::Io {
                what: "starting a node thread".into(),
                source,
            })?;
        // On an error the handle's drop stops and joins the threads already started.
        handle.joins.push(join);
    }
    Ok(handle)
}

/// Datagrams the UDP loop takes per `recvmmsg`.
const UDP_BATCH: usize = 64;

/// How long the UDP loop spins for the next datagram before it blocks, by default:
/// back-to-back requests (a client's next one, another client's) then cost no wake-up.
pub const UDP_SPIN: Duration = Duration::from_micros(20);

/// The UDP serving loop of one thread (runs until `stop`): every datagram already queued on
/// its socket is taken with one `recvmmsg`, then handled under one lock of the node (taken
/// after the system call, so threads receive beside each other); the answers leave with one
/// `sendmmsg` after the lock is given up.
/// With `offload`, where the kernel allows: a client's GSO batch of requests arrives as one
/// buffer (GRO), and the answers to one client of one size leave as one GSO message (the
/// kernel's per-datagram cost, most of this loop's time, is paid once per run).
/// It spins briefly for more work, then blocks in `ppoll` (microsecond timers, so an
/// external slow path's replies wait at most [`POLL_INTERVAL`], not a kernel tick).
/// What it does is counted in `stats`.
fn serve_udp(
    board: &Mutex<Box<dyn MemoryNode>>,
    socket: &UdpSocket,
    local: SocketAddrV4,
    spin: Duration,
    offload: bool,
    stop: &AtomicBool,
    stats: &ThreadStats,
) -> Result<(), ServerError> {
    let mut rx = Receiver::with_gro(socket, UDP_BATCH, offload);
    let gso = Gso::new(offload);
    let mut out: Vec<Outgoing> = Vec::new();
    let mut idle_since = Instant::now();
    let mut awaited = 0u32;
    while !stop.load(Ordering::Acquire) {
        let mut held = None;
        let n = take_queued(&mut rx, socket, local, board, stats, &mut held, &mut out)?;
        if held.as_ref().is_some_and(|b| b.holds_responses()) {
            // Durable writes wait for a flush: take what is already queued too, so that one
            // flush makes them all durable (plain traffic never comes here).
            take_queued(&mut rx, socket, local, board, stats, &mut held, &mut out)?;
        }
        let now = Instant::now();
        if n > 0 {
            stats.took(n);
            held.get_or_insert_with(|| stats.lock(board))
                .service(&mut out);
            idle_since = now;
            awaited = 0;
        } else if now.duration_since(idle_since) >= spin {
            // While a slow-path thread owes replies, look again soon, backing off (a long
            // allocation must not cost the node 50,000 wake-ups a second).
            let wait = if stats.lock(board).awaits_slow_path() {
                let w = (SLOW_PATH_POLL * (1 << awaited)).min(POLL_INTERVAL);
                awaited = (awaited + 1).min(5);
                w
            } else {
                awaited = 0;
                POLL_INTERVAL
            };
            let ready = mmsg::wait_readable(socket, wait).map_err(|source| ServerError::Io {
                what: "waiting for packets".into(),
                source,
            })?;
            if !ready {
                stats.lock(board).service(&mut out);
            }
        } else {
            std::thread::yield_now(); // lets a client on this core run
        }
        drop(held);
        send_out(socket, &mut out, &gso);
    }
    Ok(())
}

/// Handle the datagrams queued on `socket` (one `recvmmsg`, no waiting); returns how many.
/// The node's lock is taken into `held` once the first datagram is there (and kept).
fn take_queued<'a>(
    rx: &mut Receiver,
    socket: &UdpSocket,
    local: SocketAddrV4,
    board: &'a Mutex<Box<dyn MemoryNode>>,
    stats: &'a ThreadStats,
    held: &mut Option<Held<'a>>,
    out: &mut Vec<Outgoing>,
) -> Result<usize, ServerError> {
    let r = rx.recv_now(socket, |d: Datagram<'_>| {
        if let Some(peer) = d.peer {
            let b = held.get_or_insert_with(|| stats.lock(board));
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
