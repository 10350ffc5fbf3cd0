//! Just enough HTTP/1.1 for etcd's JSON gateway: a POST with a JSON body, and its answer read
//! whole (`Content-Length` or chunked) or as a stream of newline-separated JSON messages
//! (a watch). One connection per call (`Connection: close`): calls are rare (a fail-over, a
//! view read) and loopback or rack-local.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use thiserror::Error;

/// What can go wrong talking to the server.
#[derive(Debug, Error)]
pub enum HttpError {
    /// Connecting, sending or receiving failed.
    #[error("{addr}: {source}")]
    Io {
        /// The server.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
    /// The answer is not HTTP as expected (or not status 200).
    #[error("{addr}: {what}")]
    Protocol {
        /// The server.
        addr: SocketAddr,
        /// What was wrong.
        what: String,
    },
}

/// Longest an answer's line may be (a view or a watch event is far smaller).
const MAX_LINE: usize = 1 << 20;

/// An answer's body being read.
pub struct Body {
    addr: SocketAddr,
    r: BufReader<TcpStream>,
    /// Bytes left in the current chunk (chunked), or in the body (`Content-Length`).
    left: usize,
    chunked: bool,
    done: bool,
}

/// POST `body` (JSON) to `path` on `addr`; the answer's head is read and checked (status 200).
pub fn post(
    addr: SocketAddr,
    path: &str,
    body: &str,
    timeout: Duration,
) -> Result<Body, HttpError> {
    let io = |source| HttpError::Io { addr, source };
    let mut s = TcpStream::connect_timeout(&addr, timeout).map_err(io)?;
    s.set_read_timeout(Some(timeout)).map_err(io)?;
    s.set_write_timeout(Some(timeout)).map_err(io)?;
    s.set_nodelay(true).map_err(io)?;
    let req = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(req.as_bytes()).map_err(io)?;
    let mut r = BufReader::new(s);
    let mut line = String::new();
    read_line(&mut r, &mut line, addr)?;
    let status = line.split_whitespace().nth(1).unwrap_or("").to_string();
    if !line.starts_with("HTTP/1.") || status.is_empty() {
        return Err(HttpError::Protocol {
            addr,
            what: format!("not an HTTP answer: {}", line.trim_end()),
        });
    }
    let ok = status == "200";
    let (mut length, mut chunked) = (None, false);
    loop {
        line.clear();
        read_line(&mut r, &mut line, addr)?;
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            let v = v.trim();
            if k.eq_ignore_ascii_case("content-length") {
                length = Some(v.parse::<usize>().map_err(|_| HttpError::Protocol {
                    addr,
                    what: format!("bad Content-Length {v}"),
                })?);
            } else if k.eq_ignore_ascii_case("transfer-encoding") {
                chunked = v.eq_ignore_ascii_case("chunked");
            }
        }
    }
    let mut b = Body {
        addr,
        r,
        left: length.unwrap_or(0),
        chunked,
        done: !chunked && length.is_none(),
    };
    if !ok {
        let text = b.read_all().unwrap_or_default();
        return Err(HttpError::Protocol {
            addr,
            what: format!("status {status}: {}", String::from_utf8_lossy(&text)),
        });
    }
    Ok(b)
}

fn read_line(r: &mut impl BufRead, line: &mut String, addr: SocketAddr) -> Result<(), HttpError> {
    let n = r
        .by_ref()
        .take(MAX_LINE as u64)
        .read_line(line)
        .map_err(|source| HttpError::Io { addr, source })?;
    if n == 0 {
        return Err(HttpError::Protocol {
            addr,
            what: "connection closed early".into(),
        });
    }
    Ok(())
}

impl Body {
    /// Change how long a read may wait (a watch waits for good: `None`).
    pub fn set_timeout(&mut self, t: Option<Duration>) -> Result<(), HttpError> {
        self.r
            .get_ref()
            .set_read_timeout(t)
            .map_err(|source| HttpError::Io {
                addr: self.addr,
                source,
            })
    }

    /// A handle on the connection whose `shutdown` ends a read blocked on it (how a watch is
    /// stopped from another thread).
    pub fn connection(&self) -> Result<TcpStream, HttpError> {
        self.r
            .get_ref()
            .try_clone()
            .map_err(|source| HttpError::Io {
                addr: self.addr,
                source,
            })
    }

    /// Up to `buf.len()` bytes of the body; 0 at its end.
    fn read_some(&mut self, buf: &mut [u8]) -> Result<usize, HttpError> {
        let addr = self.addr;
        let io = |source| HttpError::Io { addr, source };
        if self.done {
            return Ok(0);
        }
        if self.chunked && self.left == 0 {
            let mut line = String::new();
            read_line(&mut self.r, &mut line, addr)?;
            let size = line.trim_end().split(';').next().unwrap_or("");
            self.left = usize::from_str_radix(size, 16).map_err(|_| HttpError::Protocol {
                addr,
                what: format!("bad chunk size {size:?}"),
            })?;
            if self.left == 0 {
                self.done = true;
                return Ok(0);
            }
        }
        if !self.chunked && self.left == 0 {
            self.done = true;
            return Ok(0);
        }
        let n = buf.len().min(self.left);
        let got = self.r.read(&mut buf[..n]).map_err(io)?;
        if got == 0 {
            return Err(HttpError::Protocol {
                addr,
                what: "connection closed inside the body".into(),
            });
        }
        self.left -= got;
        if self.chunked && self.left == 0 {
            let mut crlf = [0u8; 2];
            self.r.read_exact(&mut crlf).map_err(io)?;
        }
        Ok(got)
    }

    /// The whole body.
    pub fn read_all(&mut self) -> Result<Vec<u8>, HttpError> {
        let mut out = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            let n = self.read_some(&mut buf)?;
            if n == 0 {
                return Ok(out);
            }
            if out.len() + n > MAX_LINE {
                return Err(HttpError::Protocol {
                    addr: self.addr,
                    what: "answer too long".into(),
                });
            }
            out.extend_from_slice(&buf[..n]);
        }
    }

    /// The next newline-terminated message of a streamed body (`pending` keeps what was read
    /// past it); `None` at the body's end.
    pub fn next_message(&mut self, pending: &mut Vec<u8>) -> Result<Option<Vec<u8>>, HttpError> {
        loop {
            if let Some(i) = pending.iter().position(|&b| b == b'\n') {
                let msg: Vec<u8> = pending.drain(..=i).collect();
                return Ok(Some(msg));
            }
            if pending.len() > MAX_LINE {
                return Err(HttpError::Protocol {
                    addr: self.addr,
                    what: "streamed message too long".into(),
                });
            }
            let mut buf = [0u8; 8192];
            let n = self.read_some(&mut buf)?;
            if n == 0 {
                return Ok(None);
            }
            pending.extend_from_slice(&buf[..n]);
        }
    }
}
