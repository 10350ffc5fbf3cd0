//! Raw Ethernet frames (EtherType 0x88B5) through `pnet` datalink (AF_PACKET): kernel
//! bypass of the IP stack as in the paper; needs root or CAP_NET_RAW.

use super::Transport;
use crate::error::{ClioError, Result};
use clio_proto::frame::{emit_frame, parse_frame, Encap, Route};
use pnet_datalink::{self as dl, Channel, DataLinkReceiver, DataLinkSender};
use std::io::ErrorKind;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Frames to one memory node's MAC on one interface.
pub struct RawEthernetTransport {
    tx: Mutex<Box<dyn DataLinkSender>>,
    rx: Mutex<Box<dyn DataLinkReceiver>>,
    route: Route,
}

impl RawEthernetTransport {
    /// Open `iface` and address frames to `node_mac`.
    pub fn open(iface: &str, node_mac: [u8; 6]) -> Result<RawEthernetTransport> {
        let itf = dl::interfaces()
            .into_iter()
            .find(|i| i.name == iface)
            .ok_or_else(|| ClioError::Transport(format!("no network interface named {iface:?}")))?;
        let mac = itf.mac.map(|m| m.octets()).ok_or_else(|| {
            ClioError::Transport(format!("interface {iface:?} has no MAC address"))
        })?;
        let cfg = dl::Config {
            read_timeout: Some(Duration::from_millis(1)),
            ..Default::default()
        };
        let (tx, rx) = match dl::channel(&itf, cfg) {
            Ok(Channel::Ethernet(tx, rx)) => (tx, rx),
            Ok(_) => {
                return Err(ClioError::Transport(format!(
                    "interface {iface:?} is not Ethernet"
                )))
            }
            Err(e) => {
                return Err(ClioError::io(
                    &format!("opening a raw channel on {iface} (root or CAP_NET_RAW needed)"),
                    e,
                ))
            }
        };
        let route = Route {
            encap: Encap::RawEthernet,
            peer_mac: node_mac,
            local_mac: mac,
            ..Route::default()
        };
        Ok(RawEthernetTransport {
            tx: Mutex::new(tx),
            rx: Mutex::new(rx),
            route,
        })
    }

    /// This end's MAC address.
    pub fn local_mac(&self) -> [u8; 6] {
        self.route.local_mac
    }
}

impl Transport for RawEthernetTransport {
    /// pnet leaves AF_PACKET's default receive buffer (about 208 KiB of kernel accounting,
    /// roughly 90 full-size frames): answers of 64 KiB fit with room to spare.
    fn burst_capacity(&self) -> Option<usize> {
        Some(64 << 10)
    }

    fn send(&self, packet: &[u8]) -> Result<()> {
        let frame = emit_frame(&self.route, packet);
        let mut tx = self.tx.lock().unwrap_or_else(|e| e.into_inner());
        match tx.send_to(&frame, None) {
            Some(Ok(())) => Ok(()),
            // A full queue is a loss; the request is retried.
            Some(Err(e)) if e.kind() == ErrorKind::WouldBlock || e.raw_os_error() == Some(105) => {
                Ok(())
            }
            Some(Err(e)) => Err(ClioError::io("sending a frame", e)),
            None => Err(ClioError::Transport(
                "the raw channel refused the frame".into(),
            )),
        }
    }

    fn recv(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
        let deadline = Instant::now() + timeout;
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match rx.next() {
                Ok(frame) => {
                    // AF_PACKET shows our own transmissions too: keep only frames from the
                    // node to us.
                    if let Ok((r, clio)) = parse_frame(frame, None) {
                        if r.encap == Encap::RawEthernet
                            && r.peer_mac == self.route.peer_mac
                            && r.local_mac == self.route.local_mac
                        {
                            return Ok(Some(clio.to_vec()));
                        }
                    }
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
                    ) => {}
                Err(e) => return Err(ClioError::io("receiving a frame", e)),
            }
            if Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    fn name(&self) -> &'static str {
        "raw-ethernet"
    }
}
