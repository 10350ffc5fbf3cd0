//! Network front ends: put a memory node on UDP (kernel sockets, no root) or on raw Ethernet
//! (`pnet` datalink, root). The node keeps no connection state: every packet is answered
//! along the route it arrived on.

use crate::model::board::Outgoing;
use crate::node::MemoryNode;
use clio_proto::frame::{emit_frame, parse_frame, Route};
use std::io;
use std::net::{SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;
use thiserror::Error;

/// How long a receive waits before the node services its rings again. Slow-path replies from
/// an external daemon wait at most this long.
pub const POLL_INTERVAL: Duration = Duration::from_micros(500);

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

fn lock(b: &Mutex<Box<dyn MemoryNode>>) -> std::sync::MutexGuard<'_, Box<dyn MemoryNode>> {
    // A panic while holding the lock would already have failed the node; keep serving.
    b.lock().unwrap_or_else(|e| e.into_inner())
}

/// Serve `board` over UDP on `listen` in a background thread.
pub fn spawn_udp(
    board: impl MemoryNode + 'static,
    listen: SocketAddr,
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
    socket
        .set_read_timeout(Some(POLL_INTERVAL))
        .map_err(|source| ServerError::Io {
            what: "setting the receive timeout".into(),
            source,
        })?;
    spawn_loop(
        "clio-node-udp",
        board,
        local.to_string(),
        Some(local),
        move |b, s| serve_udp(b, &socket, local4, s),
    )
}

/// Run a serving loop over `board` in a named thread until the handle stops it.
fn spawn_loop(
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

/// The UDP serving loop (runs until `stop`).
pub fn serve_udp(
    board: &Mutex<Box<dyn MemoryNode>>,
    socket: &UdpSocket,
    local: SocketAddrV4,
    stop: &AtomicBool,
) -> Result<(), ServerError> {
    let mut buf = vec![0u8; 65536];
    let mut out: Vec<Outgoing> = Vec::new();
    while !stop.load(Ordering::Acquire) {
        match socket.recv_from(&mut buf) {
            Ok((n, SocketAddr::V4(peer))) => {
                let route = Route::udp(peer, local);
                let mut b = lock(board);
                b.handle(&route, &buf[..n], &mut out);
                if b.holds_responses() {
                    // Durable writes wait for a flush: take what is already queued first, so
                    // that one flush makes them all durable (plain traffic never comes here).
                    drain_queued(&mut **b, socket, local, &mut buf, &mut out);
                }
                b.service(&mut out);
            }
            Ok((_, SocketAddr::V6(_))) => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock
                        | io::ErrorKind::TimedOut
                        | io::ErrorKind::Interrupted
                ) =>
            {
                lock(board).service(&mut out);
            }
            // ICMP port-unreachable from a vanished client surfaces here on Linux: not fatal.
            Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => {}
            Err(source) => {
                return Err(ServerError::Io {
                    what: "receiving".into(),
                    source,
                })
            }
        }
        for (route, bytes) in out.drain(..) {
            // A send failure concerns one client only; it will time out and retry.
            let _ = socket.send_to(&bytes, route.peer_socket());
        }
    }
    Ok(())
}

/// Handle the datagrams already queued on `socket` (at most a batch), without waiting.
fn drain_queued(
    b: &mut dyn MemoryNode,
    socket: &UdpSocket,
    local: SocketAddrV4,
    buf: &mut [u8],
    out: &mut Vec<Outgoing>,
) {
    const BATCH: usize = 64;
    if socket.set_nonblocking(true).is_err() {
        return;
    }
    for _ in 0..BATCH {
        match socket.recv_from(buf) {
            Ok((n, SocketAddr::V4(peer))) => b.handle(&Route::udp(peer, local), &buf[..n], out),
            Ok(_) => continue,
            Err(_) => break,
        }
    }
    // Back to blocking with the poll timeout; if this failed the loop would spin, so a
    // failure here is reported by the next blocking receive's error path.
    let _ = socket.set_nonblocking(false);
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
