//! A small request/response protocol over UDP for the two server processes the baselines
//! need (pDPM-Central's coordinator, Clover's metadata server).
//!
//! Message: `magic u32 | client u64 | seq u64 | kind u8 | body | crc32c u32` (little endian;
//! the CRC covers everything before it). A client handle has one request outstanding, retries
//! it with the same sequence number until answered, and drops anything that is not the
//! answer to it. The server runs each client's requests one at a time and keeps its last
//! answer, so a retried (or duplicated) request is answered again, never executed twice.
//! The client side is a CLib [`Transport`], so CLib's fault injector can sit in between.

use crate::store::{fault_string, loopback_config, parse_faults, KvError, KvResult, NodeLink};
use clio_clib::transport::{FaultConfig, FaultyTransport, Transport};
use clio_clib::{Client, Credentials};
use clio_proto::checksum::crc32c;
use std::collections::HashMap;
use std::io::ErrorKind;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const MAGIC: u32 = 0x4B56_5231; // "KVR1"
const HEAD: usize = 4 + 8 + 8 + 1;
/// Largest datagram either side sends or accepts.
pub const MAX_DATAGRAM: usize = 60_000;

/// A parsed message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Msg {
    /// Sender's client id.
    pub client: u64,
    /// Request sequence number (the answer carries the same).
    pub seq: u64,
    /// Operation or answer kind (per protocol).
    pub kind: u8,
    /// Body.
    pub body: Vec<u8>,
}

impl Msg {
    /// Encode with its CRC.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(HEAD + self.body.len() + 4);
        b.extend_from_slice(&MAGIC.to_le_bytes());
        b.extend_from_slice(&self.client.to_le_bytes());
        b.extend_from_slice(&self.seq.to_le_bytes());
        b.push(self.kind);
        b.extend_from_slice(&self.body);
        let c = crc32c(&b);
        b.extend_from_slice(&c.to_le_bytes());
        b
    }

    /// Decode; `None` for anything short, foreign or corrupt.
    pub fn decode(b: &[u8]) -> Option<Msg> {
        if b.len() < HEAD + 4 || b.len() > MAX_DATAGRAM {
            return None;
        }
        let (data, crc) = b.split_at(b.len() - 4);
        if crc32c(data).to_le_bytes() != crc {
            return None;
        }
        if u32::from_le_bytes(data[0..4].try_into().ok()?) != MAGIC {
            return None;
        }
        Some(Msg {
            client: u64::from_le_bytes(data[4..12].try_into().ok()?),
            seq: u64::from_le_bytes(data[12..20].try_into().ok()?),
            kind: data[20],
            body: data[HEAD..].to_vec(),
        })
    }
}

/// Reads fields out of a message body, failing (not panicking) when it runs short.
pub struct Reader<'a> {
    b: &'a [u8],
    from: &'static str,
}

impl<'a> Reader<'a> {
    /// Read `b`, naming `from` in errors.
    pub fn new(b: &'a [u8], from: &'static str) -> Reader<'a> {
        Reader { b, from }
    }
    fn short(&self) -> KvError {
        KvError::Corrupt {
            from: self.from,
            detail: "message too short".into(),
        }
    }
    /// Next `n` bytes.
    pub fn bytes(&mut self, n: usize) -> KvResult<&'a [u8]> {
        if self.b.len() < n {
            return Err(self.short());
        }
        let (h, t) = self.b.split_at(n);
        self.b = t;
        Ok(h)
    }
    /// A little-endian u64.
    pub fn u64(&mut self) -> KvResult<u64> {
        let b = self.bytes(8)?;
        Ok(u64::from_le_bytes(b.try_into().map_err(|_| self.short())?))
    }
    /// A little-endian u32.
    pub fn u32(&mut self) -> KvResult<u32> {
        let b = self.bytes(4)?;
        Ok(u32::from_le_bytes(b.try_into().map_err(|_| self.short())?))
    }
    /// A u32 length then that many bytes, at most `max`.
    pub fn blob(&mut self, max: usize) -> KvResult<&'a [u8]> {
        let n = self.u32()? as usize;
        if n > max {
            return Err(KvError::Corrupt {
                from: self.from,
                detail: format!("field of {n} bytes (limit {max})"),
            });
        }
        self.bytes(n)
    }
    /// Whatever is left.
    pub fn rest(&mut self) -> &'a [u8] {
        std::mem::take(&mut self.b)
    }
}

/// Append a u32 length and the bytes.
pub fn put_blob(out: &mut Vec<u8>, b: &[u8]) {
    out.extend_from_slice(&(b.len() as u32).to_le_bytes());
    out.extend_from_slice(b);
}

/// A connected UDP socket that receives datagrams of any size (CLib's own UDP transport is
/// sized for Clio packets).
pub struct DatagramTransport {
    socket: UdpSocket,
}

impl DatagramTransport {
    /// Bind an ephemeral port and connect to `peer`.
    pub fn connect(peer: SocketAddr) -> KvResult<DatagramTransport> {
        let socket = UdpSocket::bind(if peer.is_ipv4() {
            "0.0.0.0:0"
        } else {
            "[::]:0"
        })?;
        socket.connect(peer)?;
        Ok(DatagramTransport { socket })
    }
}

impl Transport for DatagramTransport {
    fn send(&self, packet: &[u8]) -> clio_clib::Result<()> {
        match self.socket.send(packet) {
            Ok(_) => Ok(()),
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock | ErrorKind::ConnectionRefused
                ) =>
            {
                Ok(())
            }
            Err(e) => Err(clio_clib::ClioError::Transport(format!("send: {e}"))),
        }
    }
    fn recv(&self, timeout: Duration) -> clio_clib::Result<Option<Vec<u8>>> {
        let _ = self
            .socket
            .set_read_timeout(Some(timeout.max(Duration::from_micros(100))));
        let mut buf = vec![0u8; MAX_DATAGRAM + 1];
        match self.socket.recv(&mut buf) {
            Ok(n) => {
                buf.truncate(n);
                Ok(Some(buf))
            }
            Err(e)
                if matches!(
                    e.kind(),
                    ErrorKind::WouldBlock
                        | ErrorKind::TimedOut
                        | ErrorKind::Interrupted
                        | ErrorKind::ConnectionRefused
                ) =>
            {
                if e.kind() == ErrorKind::ConnectionRefused {
                    std::thread::sleep(Duration::from_millis(1));
                }
                Ok(None)
            }
            Err(e) => Err(clio_clib::ClioError::Transport(format!("recv: {e}"))),
        }
    }
    fn name(&self) -> &'static str {
        "kv-rpc-udp"
    }
}

/// The client end: one outstanding request, retried until answered.
pub struct RpcClient {
    t: Box<dyn Transport>,
    peer: &'static str,
    client: u64,
    seq: u64,
    /// Requests issued (first attempts).
    pub requests: u64,
    /// Retransmissions.
    pub retransmits: u64,
}

/// Resend a request after this long without an answer (doubling up to 64x).
const RPC_RTO: Duration = Duration::from_millis(2);
/// Sends of one request before giving up.
const RPC_TRIES: u32 = 60;

impl RpcClient {
    /// A client of `peer` (named `name` in errors), with faults injected if asked.
    pub fn connect(
        addr: SocketAddr,
        name: &'static str,
        faults: Option<FaultConfig>,
    ) -> KvResult<RpcClient> {
        let d = DatagramTransport::connect(addr)?;
        let t: Box<dyn Transport> = match faults {
            Some(f) => Box::new(FaultyTransport::new(d, f)),
            None => Box::new(d),
        };
        Ok(RpcClient {
            t,
            peer: name,
            client: rand::random::<u64>() | 1,
            seq: 0,
            requests: 0,
            retransmits: 0,
        })
    }

    /// Send `kind`+`body`; return the answer's kind and body.
    pub fn call(&mut self, kind: u8, body: Vec<u8>) -> KvResult<(u8, Vec<u8>)> {
        self.seq += 1;
        self.requests += 1;
        let req = Msg {
            client: self.client,
            seq: self.seq,
            kind,
            body,
        }
        .encode();
        if req.len() > MAX_DATAGRAM {
            return Err(KvError::Spec(format!(
                "request of {} bytes exceeds a datagram",
                req.len()
            )));
        }
        let mut rto = RPC_RTO;
        for attempt in 0..RPC_TRIES {
            if attempt > 0 {
                self.retransmits += 1;
            }
            self.t.send(&req)?;
            let deadline = Instant::now() + rto;
            loop {
                let now = Instant::now();
                if now >= deadline {
                    break;
                }
                let Some(p) = self.t.recv(deadline - now)? else {
                    continue;
                };
                match Msg::decode(&p) {
                    Some(m) if m.client == self.client && m.seq == self.seq => {
                        return Ok((m.kind, m.body))
                    }
                    _ => continue, // stale, duplicate, corrupt or foreign
                }
            }
            rto = (rto * 2).min(RPC_RTO * 64);
        }
        Err(KvError::Timeout {
            peer: self.peer,
            tries: RPC_TRIES,
        })
    }
}

/// Handles one request: `(client, kind, body) -> (kind, body)`.
pub type Handler = dyn Fn(u64, u8, &[u8]) -> (u8, Vec<u8>) + Send + Sync;

#[derive(Default)]
struct Session {
    seq: u64,
    answer: Vec<u8>,
}

/// Serve requests on `socket` with `threads` threads until `stop` is set. Returns when all
/// threads ended.
pub fn serve(
    socket: UdpSocket,
    threads: usize,
    handler: Arc<Handler>,
    stop: Arc<AtomicBool>,
) -> std::io::Result<()> {
    socket.set_read_timeout(Some(Duration::from_millis(20)))?;
    let socket = Arc::new(socket);
    let sessions: Arc<Mutex<HashMap<u64, Arc<Mutex<Session>>>>> = Arc::default();
    let mut joins = Vec::new();
    for i in 0..threads.max(1) {
        let (s, h, st, ss) = (
            socket.clone(),
            handler.clone(),
            stop.clone(),
            sessions.clone(),
        );
        joins.push(
            std::thread::Builder::new()
                .name(format!("kv-rpc-{i}"))
                .spawn(move || serve_loop(&s, &*h, &st, &ss))?,
        );
    }
    for j in joins {
        let _ = j.join();
    }
    Ok(())
}

fn serve_loop(
    s: &UdpSocket,
    handler: &Handler,
    stop: &AtomicBool,
    sessions: &Mutex<HashMap<u64, Arc<Mutex<Session>>>>,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM + 1];
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, peer)) = s.recv_from(&mut buf) else {
            continue;
        };
        let Some(m) = Msg::decode(&buf[..n]) else {
            continue; // corrupt or foreign: the client retries
        };
        let sess = {
            let mut g = sessions.lock().unwrap_or_else(|e| e.into_inner());
            g.entry(m.client).or_default().clone()
        };
        let mut g = sess.lock().unwrap_or_else(|e| e.into_inner());
        if m.seq < g.seq {
            continue; // an old duplicate: its client has moved on
        }
        if m.seq > g.seq {
            let (kind, body) = handler(m.client, m.kind, &m.body);
            g.seq = m.seq;
            g.answer = Msg {
                client: m.client,
                seq: m.seq,
                kind,
                body,
            }
            .encode();
        }
        let _ = s.send_to(&g.answer, peer);
    }
}

/// Kind of an error answer (body: UTF-8 message), common to both servers.
pub const ERR: u8 = 0xEE;

/// Turn an error answer into [`KvError::Refused`].
pub fn refused(peer: &'static str, kind: u8, body: &[u8]) -> KvError {
    if kind == ERR {
        KvError::Refused {
            peer,
            detail: String::from_utf8_lossy(body).into_owned(),
        }
    } else {
        KvError::Corrupt {
            from: peer,
            detail: format!("unexpected answer kind {kind}"),
        }
    }
}

/// What every server process (pDPM-Central's coordinator, Clover's metadata server) is told
/// on its command line.
#[derive(clap::Args, Debug, Clone)]
pub struct ServerArgs {
    /// The memory node (UDP).
    #[arg(long)]
    pub node: SocketAddr,
    /// Credentials of the remote address space to join (`PID:KEYHEX`).
    #[arg(long)]
    pub creds: Credentials,
    /// Where to listen for compute nodes.
    #[arg(long, default_value = "127.0.0.1:0")]
    pub listen: SocketAddr,
    /// Largest value.
    #[arg(long, default_value_t = 1024)]
    pub max_value: usize,
    /// Request-handling threads.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// Faults on the server's link to the node: `drop/dup/reorder/corrupt/seed`.
    #[arg(long)]
    pub faults: Option<String>,
}

impl ServerArgs {
    /// The command-line arguments for a server of `link`'s RAS (its fault seed changed by
    /// `salt`, so the server's faults differ from every CN's).
    pub fn for_link(link: &NodeLink, max_value: usize, salt: u64) -> Vec<String> {
        let mut v = vec![
            "--node".to_string(),
            link.node.to_string(),
            "--creds".into(),
            link.creds.to_string(),
            "--max-value".into(),
            max_value.to_string(),
        ];
        if let Some(f) = &link.reseeded(salt).faults {
            v.push("--faults".into());
            v.push(fault_string(f));
        }
        v
    }

    /// Join the RAS, bind and announce (`listening ADDR` on stdout, which the parent reads),
    /// then serve `handle` until `stop` is set; its errors are sent back as [`ERR`] answers.
    pub fn run<H>(&self, stop: Arc<AtomicBool>, handle: impl FnOnce(Client) -> H) -> KvResult<()>
    where
        H: Fn(u8, &[u8]) -> KvResult<(u8, Vec<u8>)> + Send + Sync + 'static,
    {
        if self.max_value == 0 || self.max_value > MAX_DATAGRAM - 1024 {
            return Err(KvError::Spec(format!(
                "--max-value must be 1..={}",
                MAX_DATAGRAM - 1024
            )));
        }
        let link = NodeLink {
            node: self.node,
            creds: self.creds,
            config: loopback_config(),
            faults: self.faults.as_deref().map(parse_faults).transpose()?,
        };
        let handle = handle(link.join()?);
        let socket = UdpSocket::bind(self.listen)?;
        println!("listening {}", socket.local_addr()?);
        use std::io::Write;
        std::io::stdout().flush()?;
        let h: Arc<Handler> = Arc::new(move |_client, kind, body| match handle(kind, body) {
            Ok(x) => x,
            Err(e) => (ERR, e.to_string().into_bytes()),
        });
        serve(socket, self.threads, h, stop)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_corruption_is_rejected() {
        let m = Msg {
            client: 7,
            seq: 9,
            kind: 3,
            body: b"hello".to_vec(),
        };
        let e = m.encode();
        assert_eq!(Msg::decode(&e), Some(m));
        for bit in 0..e.len() * 8 {
            let mut c = e.clone();
            c[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(Msg::decode(&c), None, "bit {bit}");
        }
        assert_eq!(Msg::decode(&e[..10]), None);
        let mut r = Reader::new(&[5, 0, 0, 0, 1, 2], "t");
        assert!(r.blob(100).is_err(), "length beyond the message");
        let mut r = Reader::new(&[255, 255, 255, 255], "t");
        assert!(r.blob(100).is_err(), "length beyond the limit");
    }

    #[test]
    fn a_duplicated_request_is_executed_once() {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = sock.local_addr().unwrap();
        let count = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let c2 = count.clone();
        let h: Arc<Handler> = Arc::new(move |_, k, b| {
            c2.fetch_add(1, Ordering::SeqCst);
            (k, b.to_vec())
        });
        let stop = Arc::new(AtomicBool::new(false));
        let st = stop.clone();
        let j = std::thread::spawn(move || serve(sock, 2, h, st));
        let faults = FaultConfig {
            drop: 0.2,
            duplicate: 0.2,
            reorder: 0.1,
            corrupt: 0.1,
            seed: 3,
        };
        let mut c = RpcClient::connect(addr, "echo", Some(faults)).unwrap();
        for i in 0..200u32 {
            let (k, b) = c.call(1, i.to_le_bytes().to_vec()).unwrap();
            assert_eq!((k, b), (1, i.to_le_bytes().to_vec()));
        }
        assert_eq!(count.load(Ordering::SeqCst), 200);
        assert!(c.retransmits > 0);
        stop.store(true, Ordering::Relaxed);
        j.join().unwrap().unwrap();
    }
}
