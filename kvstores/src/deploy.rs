//! Setting a store up on a memory node: allocate its remote structures, start its server
//! process (pDPM-Central's coordinator, Clover's metadata server, memcached), and produce the
//! [`StoreSpec`] every compute node opens it with. Used by the test suite and `clio bench ycsb`.

use crate::store::{KvError, KvResult, NodeLink, StoreSpec};
use crate::{clio_kv, clover, memcached, pdpm_central, pdpm_direct};
use clio_clib::Client;
use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::time::Duration;

/// The stores that can be set up.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum System {
    /// [`pdpm_direct`].
    PdpmDirect,
    /// [`pdpm_central`].
    PdpmCentral,
    /// [`clover`].
    Clover,
    /// [`memcached`] (a CPU KV server process on this host).
    Memcached,
    /// [`clio_kv`]: the memory node's own KV offload (values up to
    /// [`clio_kv::KV_MAX_VALUE`] bytes).
    ClioKv,
}

impl System {
    /// Every system, in table order.
    pub const ALL: [System; 5] = [
        System::PdpmDirect,
        System::PdpmCentral,
        System::Clover,
        System::Memcached,
        System::ClioKv,
    ];

    /// Its name in specs, tables and on the command line.
    pub fn name(&self) -> &'static str {
        match self {
            System::PdpmDirect => pdpm_direct::NAME,
            System::PdpmCentral => pdpm_central::NAME,
            System::Clover => clover::NAME,
            System::Memcached => memcached::NAME,
            System::ClioKv => clio_kv::NAME,
        }
    }
}

impl std::fmt::Display for System {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for System {
    type Err = String;
    fn from_str(s: &str) -> Result<System, String> {
        System::ALL
            .into_iter()
            .find(|x| x.name() == s.trim())
            .ok_or_else(|| {
                format!(
                    "unknown system `{s}` (pdpm-direct, pdpm-central, clover, memcached, clio-kv)"
                )
            })
    }
}

/// Which server process to start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// pDPM-Central's coordinator.
    Coordinator,
    /// Clover's metadata server.
    MetadataServer,
}

/// Parameters of a store to set up.
#[derive(Debug, Clone)]
pub struct Setup {
    /// Keys the store must hold (pDPM-Direct sizes its table from it).
    pub keys: u64,
    /// Largest value.
    pub max_value: usize,
    /// Clover's GC epoch in milliseconds.
    pub epoch_ms: u64,
    /// memcached worker threads.
    pub memcached_threads: usize,
}

/// A store that is set up: its spec and the processes serving it (stopped on drop).
pub struct Deployment {
    /// What compute nodes open.
    pub spec: StoreSpec,
    server: Option<ServerProcess>,
    _memcached: Option<memcached::ServerGuard>,
}

/// A server child: its standard input is held open; closing it ends the server.
pub struct ServerProcess {
    child: Child,
    stdin: Option<ChildStdin>,
    /// Where it listens.
    pub addr: SocketAddr,
}

impl ServerProcess {
    /// Start `cmd` (a coordinator or MS command line) and wait for its `listening ADDR`.
    pub fn start(mut cmd: Command) -> KvResult<ServerProcess> {
        cmd.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = cmd.spawn()?;
        let stdin = child.stdin.take();
        let out = child
            .stdout
            .take()
            .ok_or_else(|| KvError::Spec("no stdout".into()))?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let mut r = BufReader::new(out);
            let _ = tx.send(r.read_line(&mut line).map(|_| line));
            // Keep draining so the child never blocks on a full pipe.
            let mut sink = String::new();
            while r.read_line(&mut sink).is_ok_and(|n| n > 0) {
                sink.clear();
            }
        });
        let line = match rx.recv_timeout(Duration::from_secs(20)) {
            Ok(Ok(l)) => l,
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(KvError::Refused {
                    peer: "server process",
                    detail: "did not announce its address".into(),
                });
            }
        };
        let addr = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|a| a.parse().ok())
            .ok_or_else(|| KvError::Refused {
                peer: "server process",
                detail: format!("said `{}`", line.trim()),
            })?;
        Ok(ServerProcess { child, stdin, addr })
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.stdin.take();
        for _ in 0..100 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Set `system` up in the RAS of `creator` (which must outlive the deployment). `link` says
/// how compute nodes reach the node (its faults, if any, also apply to the server processes'
/// links and the CN-server links). `server` builds the command line of a server process from
/// its role and arguments. `Ok(None)`: the system's tool is missing (memcached not on PATH).
pub fn deploy(
    system: System,
    creator: &Client,
    link: &NodeLink,
    setup: &Setup,
    server: &dyn Fn(Role, Vec<String>) -> Command,
) -> KvResult<Option<Deployment>> {
    let mut server_proc = None;
    let mut mc = None;
    let spec = match system {
        System::PdpmDirect => {
            let cap = setup.keys.saturating_mul(3) / 2 + 16;
            let l = pdpm_direct::create(creator, cap, setup.max_value)?;
            pdpm_direct::spec(link, &l)
        }
        System::PdpmCentral => {
            let p = ServerProcess::start(server(
                Role::Coordinator,
                pdpm_central::coordinator_args(link, setup.max_value),
            ))?;
            let s =
                pdpm_central::spec(p.addr, setup.max_value, link.reseeded(0xCE).faults.as_ref());
            server_proc = Some(p);
            s
        }
        System::Clover => {
            let p = ServerProcess::start(server(
                Role::MetadataServer,
                clover::ms_args(link, setup.max_value, setup.epoch_ms),
            ))?;
            let s = clover::spec(link, p.addr, setup.max_value, setup.epoch_ms);
            server_proc = Some(p);
            s
        }
        System::Memcached => {
            let mem_mb = (setup.keys as usize * (setup.max_value + 200)) / (1 << 20) * 2 + 64;
            let Some(g) = memcached::spawn_server(setup.memcached_threads, mem_mb)? else {
                return Ok(None);
            };
            let s = memcached::spec(g.addr, memcached::Proto::Tcp, setup.max_value);
            mc = Some(g);
            s
        }
        // Nothing to allocate or start: the store is the node's own; CNs join `creator`'s
        // RAS, whose namespace holds the keys.
        System::ClioKv => clio_kv::spec(link, setup.max_value)?,
    };
    Ok(Some(Deployment {
        spec,
        server: server_proc,
        _memcached: mc,
    }))
}

impl Deployment {
    /// The server process's address (coordinator or MS), if the store has one.
    pub fn server_addr(&self) -> Option<SocketAddr> {
        self.server.as_ref().map(|s| s.addr)
    }
}
