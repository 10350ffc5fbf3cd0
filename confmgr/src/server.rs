//! A local etcd for tests, demos and single-host pools: started on free loopback ports with a
//! data directory of its own, stopped (and its directory removed) when dropped.

use crate::etcd::Etcd;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Why a local etcd did not start.
#[derive(Debug, Error)]
pub enum ServerError {
    /// No etcd binary.
    #[error(
        "no etcd binary (looked for $CLIO_ETCD, then `etcd` on PATH): install it with \
         `make bench-deps` or `apt-get install etcd-server`"
    )]
    NotInstalled,
    /// Starting it failed.
    #[error("starting etcd: {0}")]
    Io(#[from] std::io::Error),
    /// It did not answer in time; its log is at the path.
    #[error("etcd did not answer within {0:?} (its log: {1})")]
    NoAnswer(Duration, String),
}

/// The etcd binary: `$CLIO_ETCD`, or `etcd` on `PATH`.
pub fn binary() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CLIO_ETCD") {
        return Some(PathBuf::from(p));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("etcd"))
        .find(|p| p.is_file())
}

/// A running local etcd.
pub struct EtcdServer {
    child: Child,
    client: SocketAddr,
    dir: tempfile::TempDir,
}

fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// How long a starting etcd may take to answer.
const START_WAIT: Duration = Duration::from_secs(20);

impl EtcdServer {
    /// Start one (a single-member cluster on loopback).
    pub fn start() -> Result<EtcdServer, ServerError> {
        let bin = binary().ok_or(ServerError::NotInstalled)?;
        let dir = tempfile::Builder::new().prefix("clio-etcd").tempdir()?;
        let (cp, pp) = (free_port()?, free_port()?);
        let client: SocketAddr = SocketAddr::from(([127, 0, 0, 1], cp));
        let peer = format!("http://127.0.0.1:{pp}");
        let log = std::fs::File::create(dir.path().join("etcd.log"))?;
        let child = Command::new(bin)
            .arg("--name")
            .arg("clio")
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .arg("--listen-client-urls")
            .arg(format!("http://{client}"))
            .arg("--advertise-client-urls")
            .arg(format!("http://{client}"))
            .arg("--listen-peer-urls")
            .arg(&peer)
            .arg("--initial-advertise-peer-urls")
            .arg(&peer)
            .arg("--initial-cluster")
            .arg(format!("clio={peer}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log)
            .spawn()?;
        let s = EtcdServer { child, client, dir };
        let etcd = Etcd::new(client);
        let t = Instant::now();
        while etcd.get(b"/clio/probe").is_err() {
            if t.elapsed() > START_WAIT {
                return Err(ServerError::NoAnswer(START_WAIT, s.log_path()));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(s)
    }

    /// For tests: start one, or `None` (after one line saying why) when there is no etcd
    /// binary and `CLIO_REQUIRE_ETCD` is not set; with it set (CI), a missing etcd is a
    /// panic, as is any other failure to start.
    pub fn start_or_skip() -> Option<EtcdServer> {
        match EtcdServer::start() {
            Ok(s) => Some(s),
            Err(e @ ServerError::NotInstalled)
                if std::env::var_os("CLIO_REQUIRE_ETCD").is_none() =>
            {
                eprintln!("skipped: {e}");
                None
            }
            Err(e) => panic!("{e}"),
        }
    }

    /// Its client address.
    pub fn addr(&self) -> SocketAddr {
        self.client
    }

    /// Where its log is.
    pub fn log_path(&self) -> String {
        self.dir.path().join("etcd.log").display().to_string()
    }
}

impl Drop for EtcdServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
