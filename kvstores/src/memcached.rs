//! A memcached client (text protocol over TCP, or over UDP with memcached's 8-byte frame
//! header), so the same YCSB driver can run against a CPU key-value server: the reference
//! the paper compares with (HERD there; memcached on the same host here).
//!
//! Every response is parsed defensively: lines and values have length limits, and the value
//! block must end exactly where its header says.

use crate::store::{
    check_key, check_value, Cost, KvError, KvResult, KvStore, StoreFactory, StoreSpec,
};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

/// Name in specs and tables.
pub const NAME: &str = "memcached";
const PEER: &str = "memcached";
const MAX_LINE: usize = 512;
const UDP_HEADER: usize = 8;
const UDP_TIMEOUT: Duration = Duration::from_millis(200);
const UDP_TRIES: u32 = 20;

/// TCP or UDP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Proto {
    /// One TCP connection per handle.
    Tcp,
    /// One UDP socket per handle (memcached must run with `-U PORT`). Lost requests are
    /// resent; memcached does not deduplicate, so a resent set may be applied twice (harmless
    /// for a set of the same value, but not linearizable in general).
    Udp,
}

/// Opens handles to one memcached server.
pub struct MemcachedFactory {
    addr: SocketAddr,
    proto: Proto,
    max_value: usize,
}

impl MemcachedFactory {
    /// A server at `addr`.
    pub fn new(addr: SocketAddr, proto: Proto, max_value: usize) -> MemcachedFactory {
        MemcachedFactory {
            addr,
            proto,
            max_value,
        }
    }

    /// Open from a spec.
    pub fn from_spec(s: &StoreSpec) -> KvResult<MemcachedFactory> {
        let proto = match s.get("proto")? {
            "tcp" => Proto::Tcp,
            "udp" => Proto::Udp,
            p => return Err(KvError::Spec(format!("memcached proto `{p}`"))),
        };
        Ok(MemcachedFactory::new(
            s.parse("addr")?,
            proto,
            s.parse("maxv")?,
        ))
    }
}

/// The spec of a server.
pub fn spec(addr: SocketAddr, proto: Proto, max_value: usize) -> StoreSpec {
    let mut f = BTreeMap::new();
    f.insert("addr".into(), addr.to_string());
    f.insert(
        "proto".into(),
        if proto == Proto::Tcp { "tcp" } else { "udp" }.into(),
    );
    f.insert("maxv".into(), max_value.to_string());
    StoreSpec {
        system: NAME.into(),
        fields: f,
    }
}

impl StoreFactory for MemcachedFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn open(&self) -> KvResult<Box<dyn KvStore>> {
        let conn = match self.proto {
            Proto::Tcp => {
                let s = TcpStream::connect(self.addr)?;
                s.set_nodelay(true)?;
                s.set_read_timeout(Some(Duration::from_secs(10)))?;
                Conn::Tcp(BufReader::new(s))
            }
            Proto::Udp => {
                let s = UdpSocket::bind("127.0.0.1:0")?;
                s.connect(self.addr)?;
                Conn::Udp {
                    s,
                    req: rand::random(),
                }
            }
        };
        Ok(Box::new(Memcached {
            conn,
            max_value: self.max_value,
            requests: 0,
        }))
    }
}

enum Conn {
    Tcp(BufReader<TcpStream>),
    Udp { s: UdpSocket, req: u16 },
}

/// One thread's connection.
pub struct Memcached {
    conn: Conn,
    max_value: usize,
    requests: u64,
}

fn bad(detail: impl Into<String>) -> KvError {
    KvError::Corrupt {
        from: PEER,
        detail: detail.into(),
    }
}

fn check_mc_key(key: &[u8]) -> KvResult<()> {
    check_key(key)?;
    if key.iter().any(|&b| b <= b' ' || b == 0x7f) {
        return Err(KvError::BadKey {
            len: key.len(),
            max: 250,
        });
    }
    Ok(())
}

/// Parse a complete response to a get: `Ok(None)` for a miss. `r` yields the response bytes.
fn parse_get(r: &mut impl BufRead, key: &[u8], max: usize) -> KvResult<Option<Vec<u8>>> {
    let line = read_line(r)?;
    if line == b"END" {
        return Ok(None);
    }
    let text = std::str::from_utf8(&line).map_err(|_| bad("non-UTF-8 header"))?;
    let f: Vec<&str> = text.split(' ').collect();
    if f.len() < 4 || f[0] != "VALUE" || f[1].as_bytes() != key {
        return Err(bad(format!("unexpected get response `{text}`")));
    }
    let n: usize = f[3].parse().map_err(|_| bad("bad value length"))?;
    if n > max {
        return Err(bad(format!("value of {n} bytes (limit {max})")));
    }
    let mut v = vec![0u8; n + 2];
    r.read_exact(&mut v)?;
    if &v[n..] != b"\r\n" {
        return Err(bad("value block not terminated"));
    }
    v.truncate(n);
    if read_line(r)? != b"END" {
        return Err(bad("no END after the value"));
    }
    Ok(Some(v))
}

fn read_line(r: &mut impl BufRead) -> KvResult<Vec<u8>> {
    let mut line = Vec::new();
    let n = r.take(MAX_LINE as u64).read_until(b'\n', &mut line)?;
    if n == 0 {
        return Err(KvError::Io(std::io::Error::new(
            ErrorKind::UnexpectedEof,
            "memcached closed the connection",
        )));
    }
    if !line.ends_with(b"\r\n") {
        return Err(bad("response line too long or unterminated"));
    }
    line.truncate(line.len() - 2);
    Ok(line)
}

impl Memcached {
    /// Send `req`, return a reader over the whole response.
    fn exchange(&mut self, req: &[u8], get: Option<(&[u8], usize)>) -> KvResult<Response> {
        self.requests += 1;
        match &mut self.conn {
            Conn::Tcp(r) => {
                r.get_mut().write_all(req)?;
                Ok(match get {
                    Some((key, max)) => Response::Value(parse_get(r, key, max)?),
                    None => Response::Line(read_line(r)?),
                })
            }
            Conn::Udp { s, req: id } => {
                for _ in 0..UDP_TRIES {
                    *id = id.wrapping_add(1);
                    let mut d = Vec::with_capacity(UDP_HEADER + req.len());
                    d.extend_from_slice(&id.to_be_bytes());
                    d.extend_from_slice(&[0, 0, 0, 1, 0, 0]);
                    d.extend_from_slice(req);
                    s.send(&d)?;
                    if let Some(bytes) = udp_response(s, *id)? {
                        let mut r = std::io::Cursor::new(bytes);
                        return Ok(match get {
                            Some((key, max)) => Response::Value(parse_get(&mut r, key, max)?),
                            None => Response::Line(read_line(&mut r)?),
                        });
                    }
                }
                Err(KvError::Timeout {
                    peer: PEER,
                    tries: UDP_TRIES,
                })
            }
        }
    }
}

enum Response {
    Line(Vec<u8>),
    Value(Option<Vec<u8>>),
}

/// Collect the datagrams of response `id` (in any order); `None` on timeout.
fn udp_response(s: &UdpSocket, id: u16) -> KvResult<Option<Vec<u8>>> {
    let deadline = Instant::now() + UDP_TIMEOUT;
    let mut parts: BTreeMap<u16, Vec<u8>> = BTreeMap::new();
    let mut total = None;
    let mut buf = vec![0u8; 65536];
    loop {
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        s.set_read_timeout(Some(deadline - now))?;
        let n = match s.recv(&mut buf) {
            Ok(n) => n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Ok(None)
            }
            Err(e) => return Err(e.into()),
        };
        if n < UDP_HEADER || u16::from_be_bytes([buf[0], buf[1]]) != id {
            continue; // a late answer to an earlier try, or garbage
        }
        let seq = u16::from_be_bytes([buf[2], buf[3]]);
        let t = u16::from_be_bytes([buf[4], buf[5]]);
        if t == 0 || seq >= t || total.is_some_and(|x| x != t) {
            continue;
        }
        total = Some(t);
        parts.insert(seq, buf[UDP_HEADER..n].to_vec());
        if parts.len() == t as usize {
            return Ok(Some(parts.into_values().flatten().collect()));
        }
    }
}

impl KvStore for Memcached {
    fn get(&mut self, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        check_mc_key(key)?;
        let mut req = b"get ".to_vec();
        req.extend_from_slice(key);
        req.extend_from_slice(b"\r\n");
        match self.exchange(&req, Some((key, self.max_value)))? {
            Response::Value(v) => Ok(v),
            Response::Line(_) => Err(bad("line for a get")),
        }
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> KvResult<()> {
        check_mc_key(key)?;
        check_value(value, self.max_value)?;
        let mut req = format!(
            "set {} 0 0 {}\r\n",
            String::from_utf8_lossy(key),
            value.len()
        )
        .into_bytes();
        req.extend_from_slice(value);
        req.extend_from_slice(b"\r\n");
        match self.exchange(&req, None)? {
            Response::Line(l) if l == b"STORED" => Ok(()),
            Response::Line(l) => Err(KvError::Refused {
                peer: PEER,
                detail: String::from_utf8_lossy(&l).into_owned(),
            }),
            Response::Value(_) => Err(bad("value for a set")),
        }
    }

    fn delete(&mut self, key: &[u8]) -> KvResult<()> {
        check_mc_key(key)?;
        let mut req = b"delete ".to_vec();
        req.extend_from_slice(key);
        req.extend_from_slice(b"\r\n");
        match self.exchange(&req, None)? {
            Response::Line(l) if l == b"DELETED" || l == b"NOT_FOUND" => Ok(()),
            Response::Line(l) => Err(KvError::Refused {
                peer: PEER,
                detail: String::from_utf8_lossy(&l).into_owned(),
            }),
            Response::Value(_) => Err(bad("value for a delete")),
        }
    }

    fn cost(&mut self) -> KvResult<Cost> {
        Ok(Cost {
            node_requests: 0,
            rpc_requests: self.requests,
            round_trips: self.requests,
            retransmits: 0,
        })
    }
}

/// Start `memcached` on a free loopback port (TCP and UDP on the same port) if it is on
/// PATH; `Ok(None)` if it is not installed. The child is killed when the guard drops.
pub fn spawn_server(threads: usize, memory_mb: usize) -> KvResult<Option<ServerGuard>> {
    let Some(bin) = find_on_path("memcached") else {
        return Ok(None);
    };
    for _ in 0..20 {
        let port = {
            let probe = std::net::TcpListener::bind("127.0.0.1:0")?;
            probe.local_addr()?.port()
        };
        let mut cmd = std::process::Command::new(&bin);
        cmd.args([
            "-l",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            &port.to_string(),
            "-t",
            &threads.max(1).to_string(),
            "-m",
            &memory_mb.max(64).to_string(),
        ]);
        // memcached refuses to run as root without -u.
        if std::env::var("USER").is_ok_and(|u| u == "root") || is_root() {
            cmd.args(["-u", "root"]);
        }
        cmd.stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        let mut child = cmd.spawn()?;
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if TcpStream::connect(addr).is_ok() {
                // The listener may be another process's that took the port after the probe
                // (our memcached then exits): it is ours only if ours is still running.
                std::thread::sleep(Duration::from_millis(20));
                if child.try_wait()?.is_none() {
                    return Ok(Some(ServerGuard { child, addr }));
                }
                break;
            }
            if child.try_wait()?.is_some() {
                break; // the port was taken meanwhile: try another
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    Err(KvError::Refused {
        peer: PEER,
        detail: "memcached did not start".into(),
    })
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

/// The full path of `prog` if it is on PATH.
pub fn find_on_path(prog: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join(prog))
            .find(|f| f.is_file())
    })
}

/// A memcached child process; killed on drop.
pub struct ServerGuard {
    child: std::process::Child,
    /// Its address (TCP and UDP).
    pub addr: SocketAddr,
}

impl Drop for ServerGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_responses_are_errors_not_panics() {
        let ok = b"VALUE k 0 3\r\nabc\r\nEND\r\n";
        assert_eq!(
            parse_get(&mut &ok[..], b"k", 10).unwrap(),
            Some(b"abc".to_vec())
        );
        assert_eq!(parse_get(&mut &b"END\r\n"[..], b"k", 10).unwrap(), None);
        for bad in [
            &b"VALUE k 0 3\r\nabcd\r\nEND\r\n"[..],
            b"VALUE k 0 99\r\nabc\r\nEND\r\n",
            b"VALUE k 0 3\r\nabc\r\n",
            b"VALUE other 0 3\r\nabc\r\nEND\r\n",
            b"VALUE k 0 -1\r\n",
            b"VALUE k 0 3",
            b"",
            b"SERVER_ERROR out of memory\r\n",
        ] {
            assert!(parse_get(&mut &bad[..], b"k", 10).is_err(), "{bad:?}");
        }
        assert!(parse_get(&mut &ok[..], b"k", 2).is_err(), "over the limit");
        let long = vec![b'x'; 2000];
        assert!(read_line(&mut &long[..]).is_err());
        assert!(check_mc_key(b"has space").is_err());
        assert!(check_mc_key(b"fine").is_ok());
    }
}
