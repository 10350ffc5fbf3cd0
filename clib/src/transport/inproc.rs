//! In-process transport: packets go to a handler supplied by the caller (typically a
//! memory-node model), without a network. CLib does not know what is behind the handler.

use super::Transport;
use crate::error::{ClioError, Result};
use std::collections::VecDeque;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Serves one request packet and returns the response packets.
pub type PacketHandler = dyn Fn(&[u8]) -> Vec<Vec<u8>> + Send + Sync;

struct Inbox {
    queue: Mutex<VecDeque<Vec<u8>>>,
    ready: Condvar,
}

impl Inbox {
    fn push_all(&self, packets: Vec<Vec<u8>>) {
        if packets.is_empty() {
            return;
        }
        let mut q = self.queue.lock().unwrap_or_else(|e| e.into_inner());
        q.extend(packets);
        self.ready.notify_one();
    }
}

enum Mode {
    /// The handler runs in the sending thread; `lanes`: [`Transport::open_lane`] gives each
    /// lane an inbox of its own before the same handler.
    Direct {
        handler: Arc<PacketHandler>,
        lanes: bool,
    },
    /// A thread owns the handler; requests queue up in front of it like at a real node.
    Threaded(Mutex<mpsc::Sender<Vec<u8>>>),
}

/// Packets are handed to a function (directly, or through a thread that owns it).
pub struct InProcTransport {
    mode: Mode,
    inbox: Arc<Inbox>,
}

impl InProcTransport {
    /// Call `handler` in the sending thread for every packet (fastest; what the
    /// fault-injection tests use).
    pub fn direct(
        handler: impl Fn(&[u8]) -> Vec<Vec<u8>> + Send + Sync + 'static,
    ) -> InProcTransport {
        Self::direct_with(Arc::new(handler), false)
    }

    /// [`InProcTransport::direct`] with lanes, as UDP has them: each lane a path of its own
    /// (its own inbox), so a lane's answers reach only the thread that drives that lane.
    pub fn direct_lanes(
        handler: impl Fn(&[u8]) -> Vec<Vec<u8>> + Send + Sync + 'static,
    ) -> InProcTransport {
        Self::direct_with(Arc::new(handler), true)
    }

    fn direct_with(handler: Arc<PacketHandler>, lanes: bool) -> InProcTransport {
        InProcTransport {
            mode: Mode::Direct { handler, lanes },
            inbox: Arc::new(Inbox {
                queue: Mutex::new(VecDeque::new()),
                ready: Condvar::new(),
            }),
        }
    }

    /// Start a thread that owns `handler` and serves packets one at a time, in arrival
    /// order: a node with a queue, so a slow handler builds up delay as a real one would.
    /// The thread ends when the transport is dropped.
    pub fn threaded(
        mut handler: impl FnMut(&[u8]) -> Vec<Vec<u8>> + Send + 'static,
    ) -> Result<InProcTransport> {
        let inbox = Arc::new(Inbox {
            queue: Mutex::new(VecDeque::new()),
            ready: Condvar::new(),
        });
        let (tx, rx) = mpsc::channel::<Vec<u8>>();
        let ib = inbox.clone();
        std::thread::Builder::new()
            .name("clio-inproc-node".into())
            .spawn(move || {
                while let Ok(p) = rx.recv() {
                    ib.push_all(handler(&p));
                }
            })
            .map_err(|e| ClioError::io("starting the in-process node thread", e))?;
        Ok(InProcTransport {
            mode: Mode::Threaded(Mutex::new(tx)),
            inbox,
        })
    }
}

impl Transport for InProcTransport {
    fn send(&self, packet: &[u8]) -> Result<()> {
        match &self.mode {
            Mode::Direct { handler, .. } => self.inbox.push_all(handler(packet)),
            Mode::Threaded(tx) => {
                let tx = tx.lock().unwrap_or_else(|e| e.into_inner());
                tx.send(packet.to_vec()).map_err(|_| {
                    ClioError::Transport("the in-process node thread has stopped".into())
                })?;
            }
        }
        Ok(())
    }

    fn recv(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
        let deadline = Instant::now() + timeout;
        let mut q = self.inbox.queue.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(p) = q.pop_front() {
                return Ok(Some(p));
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            q = self
                .inbox
                .ready
                .wait_timeout(q, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    fn open_lane(&self) -> Option<Box<dyn Transport>> {
        match &self.mode {
            Mode::Direct {
                handler,
                lanes: true,
            } => Some(Box::new(Self::direct_with(handler.clone(), true))),
            _ => None,
        }
    }

    fn name(&self) -> &'static str {
        "in-process"
    }
}
