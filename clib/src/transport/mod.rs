//! Transports carry whole Clio packets (header + payload) between this compute node and one
//! memory node. The engine above them does reliability, windows and ordering, so a transport
//! is just "send a packet" and "wait for a packet".

mod fault;
mod inproc;
pub use clio_netio::mmsg;
mod raw;
mod udp;
pub mod xdp;

pub use fault::{FaultConfig, FaultStats, FaultyTransport};
pub use inproc::{InProcTransport, PacketHandler};
pub use raw::RawEthernetTransport;
pub use udp::{UdpTransport, DEFAULT_SPIN};
pub use xdp::XdpTransport;

use crate::error::Result;
use std::time::{Duration, Instant};

/// A packet from the node, with when it reached this host if the transport knows (a kernel
/// receive timestamp): RTT samples then leave out the time the packet waited for a thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Received {
    /// The packet.
    pub bytes: Vec<u8>,
    /// Arrival at this host.
    pub arrived: Option<Instant>,
}

/// A datagram path to one memory node.
///
/// The engine calls `recv`/`recv_batch` from one thread at a time; `send` may run
/// concurrently with it.
pub trait Transport: Send + Sync {
    /// Send one Clio packet.
    fn send(&self, packet: &[u8]) -> Result<()>;
    /// Wait up to about `timeout` for one packet from the node; `Ok(None)` when none came.
    /// Transports with a coarse timer may return `None` earlier or somewhat later.
    fn recv(&self, timeout: Duration) -> Result<Option<Vec<u8>>>;
    /// Short name for messages and statistics.
    fn name(&self) -> &'static str;
    /// Send several packets, in order (one system call where the transport can).
    fn send_batch(&self, packets: &[&[u8]]) -> Result<()> {
        packets.iter().try_for_each(|p| self.send(p))
    }
    /// Whether a receive may spin before it blocks (the engine says no while other threads
    /// wait for results: a spinning receiver would keep them off the CPU). Transports that
    /// never spin ignore it.
    fn spin_hint(&self, _spin: bool) {}
    /// Another path to the same node for another thread of the client (a socket of its own:
    /// the node answers each request where it came from), or `None` where the transport
    /// has one path only. See the engine's lanes.
    fn open_lane(&self) -> Option<Box<dyn Transport>> {
        None
    }
    /// Bytes of answer this transport can take in one burst without losing packets (its
    /// receive buffer), or `None` when it has no such bound. A read's answer arrives as one
    /// burst of up to `max_read_bytes` (1 MiB by default); the engine lowers that bound to
    /// this, so a long read is split into requests whose answers fit, instead of losing
    /// packets on every attempt until it times out.
    fn burst_capacity(&self) -> Option<usize> {
        None
    }
    /// Wait up to about `timeout` for packets and append every one already there (at least
    /// one unless the time ran out) to `out`.
    fn recv_batch(&self, timeout: Duration, out: &mut Vec<Received>) -> Result<()> {
        if let Some(bytes) = self.recv(timeout)? {
            out.push(Received {
                bytes,
                arrived: None,
            });
        }
        Ok(())
    }
}

// Smart pointers to a transport are transports (so one can be shared with a test harness).
macro_rules! forward_transport {
    ($($ptr:ident)::+) => {
        impl<T: Transport + ?Sized> Transport for $($ptr)::+<T> {
            fn send(&self, packet: &[u8]) -> Result<()> {
                (**self).send(packet)
            }
            fn recv(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
                (**self).recv(timeout)
            }
            fn name(&self) -> &'static str {
                (**self).name()
            }
            fn send_batch(&self, packets: &[&[u8]]) -> Result<()> {
                (**self).send_batch(packets)
            }
            fn recv_batch(&self, timeout: Duration, out: &mut Vec<Received>) -> Result<()> {
                (**self).recv_batch(timeout, out)
            }
            fn spin_hint(&self, spin: bool) {
                (**self).spin_hint(spin)
            }
            fn open_lane(&self) -> Option<Box<dyn Transport>> {
                (**self).open_lane()
            }
            fn burst_capacity(&self) -> Option<usize> {
                (**self).burst_capacity()
            }
        }
    };
}
forward_transport!(Box);
forward_transport!(std::sync::Arc);
