//! Transports carry whole Clio packets (header + payload) between this compute node and one
//! memory node. The engine above them does reliability, windows and ordering, so a transport
//! is just "send a packet" and "wait for a packet".

mod fault;
mod inproc;
mod raw;
mod udp;

pub use fault::{FaultConfig, FaultStats, FaultyTransport};
pub use inproc::{InProcTransport, PacketHandler};
pub use raw::RawEthernetTransport;
pub use udp::UdpTransport;

use crate::error::Result;
use std::time::Duration;

/// A datagram path to one memory node.
///
/// The engine calls `recv` from one thread at a time; `send` may run concurrently with it.
pub trait Transport: Send + Sync {
    /// Send one Clio packet.
    fn send(&self, packet: &[u8]) -> Result<()>;
    /// Wait up to about `timeout` for one packet from the node; `Ok(None)` when none came.
    /// Transports with a coarse timer may return `None` earlier or somewhat later.
    fn recv(&self, timeout: Duration) -> Result<Option<Vec<u8>>>;
    /// Short name for messages and statistics.
    fn name(&self) -> &'static str;
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
        }
    };
}
forward_transport!(Box);
forward_transport!(std::sync::Arc);
