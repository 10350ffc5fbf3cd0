//! A UDP relay between clients and one node that lets a test act on the packets it passes:
//! drop one, or change the node's state (raise an epoch, change the pool's view) at the
//! moment a given request or answer goes by.

use clio_proto::header::FLAG_RESPONSE;
use clio_proto::Opcode;
use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the relay shows its hook of one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// An answer of the node (else a client's request).
    pub response: bool,
    /// Its opcode (`None`: not one of the protocol's).
    pub opcode: Option<Opcode>,
    /// Its status byte (an answer's status).
    pub status: u8,
}

impl Seen {
    fn of(pkt: &[u8]) -> Seen {
        Seen {
            response: pkt.len() > clio_proto::header::field::FLAGS
                && pkt[clio_proto::header::field::FLAGS] & FLAG_RESPONSE != 0,
            opcode: pkt
                .get(clio_proto::header::field::OPCODE)
                .and_then(|&b| Opcode::from_u8(b)),
            status: pkt
                .get(clio_proto::header::field::STATUS)
                .copied()
                .unwrap_or(0),
        }
    }
}

/// The hook: called for every packet in either direction; `false` drops it.
pub type Hook = dyn Fn(Seen) -> bool + Send + Sync;

/// Relays datagrams between the clients that send to [`Relay::addr`] and the node, each
/// client address through a socket of its own (so the node's answers find their way back).
pub struct Relay {
    pub addr: SocketAddr,
    stop: Arc<AtomicBool>,
}

impl Relay {
    pub fn start(node: SocketAddr, hook: impl Fn(Seen) -> bool + Send + Sync + 'static) -> Relay {
        let front = UdpSocket::bind("127.0.0.1:0").expect("relay socket");
        front
            .set_read_timeout(Some(Duration::from_millis(20)))
            .expect("timeout");
        let addr = front.local_addr().expect("relay address");
        let stop = Arc::new(AtomicBool::new(false));
        let hook: Arc<Hook> = Arc::new(hook);
        let s = stop.clone();
        std::thread::spawn(move || {
            let mut up: HashMap<SocketAddr, UdpSocket> = HashMap::new();
            let mut buf = vec![0u8; 65536];
            while !s.load(Ordering::Acquire) {
                let Ok((n, client)) = front.recv_from(&mut buf) else {
                    continue;
                };
                let sock = up.entry(client).or_insert_with(|| {
                    let u = UdpSocket::bind("127.0.0.1:0").expect("upstream socket");
                    u.connect(node).expect("connect");
                    u.set_read_timeout(Some(Duration::from_millis(20)))
                        .expect("timeout");
                    let (back, u2, hook, s) = (
                        front.try_clone().expect("clone"),
                        u.try_clone().expect("clone"),
                        hook.clone(),
                        s.clone(),
                    );
                    std::thread::spawn(move || {
                        let mut buf = vec![0u8; 65536];
                        while !s.load(Ordering::Acquire) {
                            if let Ok(n) = u2.recv(&mut buf) {
                                if hook(Seen::of(&buf[..n])) {
                                    let _ = back.send_to(&buf[..n], client);
                                }
                            }
                        }
                    });
                    u
                });
                if hook(Seen::of(&buf[..n])) {
                    let _ = sock.send(&buf[..n]);
                }
            }
        });
        Relay { addr, stop }
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Release);
    }
}
