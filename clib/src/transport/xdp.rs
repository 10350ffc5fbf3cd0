//! Raw Ethernet frames (EtherType 0x88B5) through AF_XDP: the kernel bypass of the paper's
//! CN side. Same framing as [`RawEthernetTransport`](super::RawEthernetTransport)
//! (`clio_proto::frame`, [`Encap::RawEthernet`]), but frames move through a UMEM shared with
//! the kernel instead of through socket buffers (the socket and its steering program are
//! `clio_netio::xdp`, shared with the node's XDP front end). Needs root (or CAP_NET_RAW +
//! CAP_BPF + CAP_NET_ADMIN) and Linux >= 5.9 (`bpf_link` for XDP).

pub use clio_netio::xdp::{interface, AttachMode, XdpMode, XdpSocket, RX_FRAMES, RX_SPIN};

use super::{Received, Transport};
use crate::error::{ClioError, Result};
use clio_netio::NetError;
use clio_proto::frame::{emit_frame, parse_frame, Encap, Route, ETH_HEADER_LEN};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Clio frames to one memory node's MAC over an AF_XDP socket on one interface queue.
pub struct XdpTransport {
    socket: XdpSocket,
    /// The Ethernet header of every frame to the node.
    header: [u8; ETH_HEADER_LEN],
    route: Route,
    /// Packets taken off the RX ring but not yet returned by `recv`.
    pending: Mutex<VecDeque<Vec<u8>>>,
    /// Whether a receive may spin on the RX ring before it sleeps (the engine's hint).
    spin_ok: AtomicBool,
}

impl XdpTransport {
    /// Open queue `queue` of `iface` and address frames to `node_mac`. The interface must
    /// have no other XDP program attached.
    pub fn open(iface: &str, node_mac: [u8; 6], queue: u32) -> Result<XdpTransport> {
        let (ifindex, mac) = interface(iface)?;
        let socket = XdpSocket::open(ifindex, queue, false).map_err(|NetError(m)| {
            ClioError::Transport(format!("{m} [on {iface} queue {queue}]"))
        })?;
        let route = Route {
            encap: Encap::RawEthernet,
            peer_mac: node_mac,
            local_mac: mac,
            ..Route::default()
        };
        let h = emit_frame(&route, &[]);
        let header: [u8; ETH_HEADER_LEN] = h
            .as_slice()
            .try_into()
            .map_err(|_| ClioError::Transport("unexpected Ethernet header length".into()))?;
        Ok(XdpTransport {
            socket,
            header,
            route,
            pending: Mutex::new(VecDeque::new()),
            spin_ok: AtomicBool::new(true),
        })
    }

    /// This end's MAC address.
    pub fn local_mac(&self) -> [u8; 6] {
        self.route.local_mac
    }

    /// Where the program runs and whether frames are copied.
    pub fn mode(&self) -> XdpMode {
        self.socket.mode()
    }

    /// The Clio packet in `frame` if it comes from the node to us (frames from the network
    /// are untrusted: anything short or garbled is dropped, never a panic).
    fn accept<'a>(&self, frame: &'a [u8]) -> Option<&'a [u8]> {
        let (r, clio) = parse_frame(frame, None).ok()?;
        (r.encap == Encap::RawEthernet
            && r.peer_mac == self.route.peer_mac
            && r.local_mac == self.route.local_mac)
            .then_some(clio)
    }
}

impl XdpTransport {
    /// Wait up to `timeout` until `pending` holds a packet from the node (taking every
    /// frame already on the RX ring).
    fn fill(&self, pending: &mut VecDeque<Vec<u8>>, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let spin = if self.spin_ok.load(Ordering::Relaxed) {
            RX_SPIN
        } else {
            Duration::ZERO
        };
        while pending.is_empty() {
            let left = deadline.saturating_duration_since(Instant::now());
            self.socket.recv_frames(left, spin, |f| {
                if let Some(clio) = self.accept(f) {
                    pending.push_back(clio.to_vec());
                }
            })?;
            if Instant::now() >= deadline {
                break;
            }
        }
        Ok(())
    }
}

impl Transport for XdpTransport {
    fn send(&self, packet: &[u8]) -> Result<()> {
        self.send_batch(&[packet])
    }

    /// Half the receive frames of the UMEM (the fill ring is refilled as the engine takes
    /// frames, so a burst of up to half of them always finds room).
    fn burst_capacity(&self) -> Option<usize> {
        Some(RX_FRAMES as usize / 2 * clio_proto::consts::MAX_PAYLOAD)
    }

    fn send_batch(&self, packets: &[&[u8]]) -> Result<()> {
        // One kick of the kernel for the whole batch. Packets that find no free transmit
        // frame are losses: the engine retries them.
        let parts: Vec<[&[u8]; 2]> = packets.iter().map(|p| [&self.header[..], p]).collect();
        let frames: Vec<&[&[u8]]> = parts.iter().map(|p| &p[..]).collect();
        self.socket.send_frames(&frames)?;
        Ok(())
    }

    fn recv(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        self.fill(&mut pending, timeout)?;
        Ok(pending.pop_front())
    }

    fn recv_batch(&self, timeout: Duration, out: &mut Vec<Received>) -> Result<()> {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        self.fill(&mut pending, timeout)?;
        out.extend(pending.drain(..).map(|bytes| Received {
            bytes,
            arrived: None,
        }));
        Ok(())
    }

    fn spin_hint(&self, spin: bool) {
        self.spin_ok.store(spin, Ordering::Relaxed);
    }

    fn name(&self) -> &'static str {
        "af-xdp"
    }
}
