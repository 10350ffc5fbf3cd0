//! IPv4/UDP through kernel sockets: no root, routable; the development default.

use super::Transport;
use crate::error::{ClioError, Result};
use socket2::{Domain, Protocol, Socket, Type};
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Socket buffer we ask for: large enough for a full incast window of 1 KiB packets with
/// kernel overhead. The kernel caps it at `net.core.rmem_max`.
const SOCKET_BUFFER: usize = 4 << 20;

/// A connected UDP socket to one memory node.
pub struct UdpTransport {
    socket: UdpSocket,
    /// The receive timeout currently set on the socket, in microseconds (avoids one
    /// `setsockopt` per receive).
    timeout_us: AtomicU64,
}

impl UdpTransport {
    /// Bind an ephemeral local port and connect it to `node` (so only the node's datagrams
    /// are received).
    pub fn connect(node: SocketAddr) -> Result<UdpTransport> {
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
        Ok(UdpTransport {
            socket,
            timeout_us: AtomicU64::new(0),
        })
    }

    /// The local address of the socket.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.socket
            .local_addr()
            .map_err(|e| ClioError::io("reading the local address", e))
    }
}

impl Transport for UdpTransport {
    fn send(&self, packet: &[u8]) -> Result<()> {
        match self.socket.send(packet) {
            Ok(_) => Ok(()),
            // A full socket buffer or an ICMP error from an earlier datagram is a loss like
            // any other: the request times out and is retried.
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::ConnectionRefused
                ) =>
            {
                Ok(())
            }
            Err(e) if e.raw_os_error() == Some(105) => Ok(()), // ENOBUFS
            Err(e) => Err(ClioError::io("sending", e)),
        }
    }

    fn recv(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
        // Round to 100 us so the timeout rarely changes; the kernel timer is coarser anyway.
        let us = (timeout.as_micros() as u64).div_ceil(100).max(1) * 100;
        if self.timeout_us.swap(us, Ordering::Relaxed) != us {
            self.socket
                .set_read_timeout(Some(Duration::from_micros(us)))
                .map_err(|e| ClioError::io("setting the receive timeout", e))?;
        }
        let mut buf = vec![0u8; 2048];
        match self.socket.recv(&mut buf) {
            Ok(n) => {
                buf.truncate(n);
                Ok(Some(buf))
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            // ICMP port unreachable: the node is not (yet) there. Same as silence.
            Err(e) if e.kind() == ErrorKind::ConnectionRefused => {
                std::thread::sleep(timeout.min(Duration::from_millis(1)));
                Ok(None)
            }
            Err(e) => Err(ClioError::io("receiving", e)),
        }
    }

    fn name(&self) -> &'static str {
        "udp"
    }
}
