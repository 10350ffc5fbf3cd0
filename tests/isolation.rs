//! Tenants of a real `clio board` process cannot hurt each other (docs/security.md,
//! "Isolation"): one tenant's slow-path work never stalls another's data requests, members
//! that heartbeat through it are not expired, and quotas answer with the limit and its flag.

mod common;

use clio_proto::header::parse_verified;
use clio_proto::quota::Quota;
use clio_proto::{Header, Opcode, Status};
use common::spawn_board_piped;
use std::io::BufRead;
use std::net::UdpSocket;
use std::process::Child;
use std::time::{Duration, Instant};

struct Node {
    child: Child,
    addr: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(args: &[&str]) -> Node {
    let (child, out, line) = spawn_board_piped(
        &["--listen", "127.0.0.1:0", "--duration", "120"]
            .into_iter()
            .chain(args.iter().copied())
            .collect::<Vec<_>>(),
    );
    std::thread::spawn(move || for _ in out.lines() {});
    let addr = line
        .trim()
        .strip_prefix("clio board: listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    Node { child, addr }
}

/// A tenant speaking the wire protocol by hand (so a test controls every request).
struct Tenant {
    sock: UdpSocket,
    node: String,
    pid: u16,
    key: u64,
    client: u16,
    next: u32,
}

impl Tenant {
    fn register(node: &Node, secret: u64) -> Result<Tenant, Header> {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut t = Tenant {
            sock,
            node: node.addr.clone(),
            pid: 0,
            key: 0,
            client: 0,
            next: 1,
        };
        let h = Header {
            arg0: rand::random(),
            arg1: secret,
            ..Header::request(Opcode::Register, 0, 0, 0)
        };
        let r = t.call(h, &[]).0;
        if r.status != Status::Ok {
            return Err(r);
        }
        (t.pid, t.key, t.client) = (r.pid, r.arg0, r.arg1 as u16);
        Ok(t)
    }

    fn send(&mut self, h: Header, payload: &[u8]) -> u32 {
        let id = self.next;
        self.next += 1;
        let h = Header {
            req_id: id,
            pid: if h.opcode == Opcode::Register {
                0
            } else {
                self.pid
            },
            ..h
        }
        .with_credentials(self.key, self.client);
        self.sock
            .send_to(&h.to_packet(payload), &self.node)
            .unwrap();
        id
    }

    /// The answer to `id` (earlier answers are skipped), or `None` after the timeout.
    fn answer(&self, id: u32) -> Option<(Header, Vec<u8>)> {
        let mut buf = [0u8; 2048];
        loop {
            let n = self.sock.recv(&mut buf).ok()?;
            let (r, p) = parse_verified(&buf[..n]).unwrap();
            if r.req_id == id {
                return Some((r, p.to_vec()));
            }
        }
    }

    fn call(&mut self, h: Header, payload: &[u8]) -> (Header, Vec<u8>) {
        let id = self.send(h, payload);
        self.answer(id).expect("an answer")
    }

    fn alloc(&mut self, bytes: u64) -> Header {
        self.call(
            Header {
                arg0: bytes,
                arg1: 3,
                ..Header::request(Opcode::Alloc, 0, 0, 0)
            },
            &[],
        )
        .0
    }
}

/// The attack: at 4 KiB pages, a tenant's allocations of 256 MiB fill the node until
/// placement needs many retries. Meanwhile another tenant's 16-byte reads keep their answers
/// (within 100 ms each, against seconds of slow-path work), which `--slowpath in-process`
/// (the slow path on the serving thread) fails.
#[test]
fn a_long_allocation_never_stalls_another_tenants_reads() {
    let node = start(&[
        "--memory",
        "1G",
        "--page-size",
        "4K",
        "--max-ras-memory",
        "1G",
        "--placement-budget",
        "18446744073709551615",
    ]);
    let mut victim = Tenant::register(&node, 0).unwrap();
    let r = victim.alloc(1 << 20);
    assert_eq!(r.status, Status::Ok);
    let va = r.va;
    let mut hog = Tenant::register(&node, 0).unwrap();
    // The hog's allocations go out back to back; the victim reads all along.
    let mut pending: Vec<u32> = (0..6)
        .map(|_| {
            hog.send(
                Header {
                    arg0: 256 << 20,
                    arg1: 3,
                    ..Header::request(Opcode::Alloc, 0, 0, 0)
                },
                &[],
            )
        })
        .collect();
    let t0 = Instant::now();
    let mut worst = Duration::ZERO;
    let mut reads = 0;
    while t0.elapsed() < Duration::from_secs(3) {
        let t = Instant::now();
        let (h, data) = victim.call(
            Header {
                total_len: 16,
                ..Header::request(Opcode::Read, 0, 0, va)
            },
            &[],
        );
        worst = worst.max(t.elapsed());
        assert_eq!((h.status, data.len()), (Status::Ok, 16));
        reads += 1;
    }
    hog.sock
        .set_read_timeout(Some(Duration::from_millis(10)))
        .unwrap();
    while let Some((h, _)) = hog.answer(u32::MAX) {
        pending.retain(|id| *id != h.req_id);
    }
    assert!(
        !pending.is_empty(),
        "the hog's allocations finished too soon to show anything"
    );
    assert!(
        worst < Duration::from_millis(100),
        "a read waited {worst:?} behind the slow path ({reads} reads)"
    );
}

/// Quotas answer QUOTA_EXCEEDED with the limit in `arg1`; the admission secret keeps
/// strangers out.
#[test]
fn quotas_and_the_admission_secret_against_a_real_node() {
    let dir = tempfile::tempdir().unwrap();
    let secret_file = dir.path().join("secret");
    std::fs::write(&secret_file, "0x5ec2e7\n").unwrap();
    let node = start(&[
        "--memory",
        "64M",
        "--page-size",
        "4K",
        "--max-ras-per-source",
        "2",
        "--max-ras-memory",
        "8M",
        "--admission-secret-file",
        secret_file.to_str().unwrap(),
    ]);
    let stranger = Tenant::register(&node, 0).err().expect("refused");
    assert_eq!((stranger.status, stranger.pid), (Status::Denied, 0));
    let mut a = Tenant::register(&node, 0x5ec2e7).unwrap();
    let _b = Tenant::register(&node, 0x5ec2e7).unwrap();
    let third = Tenant::register(&node, 0x5ec2e7).err().expect("refused");
    assert_eq!(third.status, Status::QuotaExceeded);
    assert_eq!(Quota::from_u64(third.arg1), Some(Quota::RasPerSource));
    let big = a.alloc(9 << 20);
    assert_eq!(big.status, Status::QuotaExceeded);
    assert_eq!(Quota::from_u64(big.arg1), Some(Quota::MemoryPerRas));
    assert_eq!(a.alloc(8 << 20).status, Status::Ok);
}
