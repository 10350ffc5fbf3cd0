//! `clio bench isolation`, part 3: a victim's FetchAdds (through CLib) while a neighbour
//! tenant fills the node's idempotence table with results it never acknowledges (issue 40),
//! quiet and hogged in one run: the neighbour joins [`HOG_MEMBERS`] members and each sends
//! FetchAdds until the node refuses one for its row's share. Every member has its own row of
//! the table, so the victim's atomics are not in the neighbour's way.

use super::super::harness::{hist, Hist};
use anyhow::{bail, Context, Result};
use clio_clib::Client;
use clio_proto::header::parse_verified;
use clio_proto::route_cookie::cookie_of_answer;
use clio_proto::{Header, Opcode, Status};
use clio_sim::server::spawn_udp;
use clio_sim::{BoardConfig, CBoard};
use clio_slowpath::Limits;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// The lease of the run's node: how long a neighbour's members hold their rows.
pub const LEASE: Duration = Duration::from_secs(2);
/// Members the neighbour's RAS has (its first and the ones it joins).
pub const HOG_MEMBERS: u16 = 9;

/// One state of the run: the victim's FetchAdd latencies (ns) and the neighbour's requests
/// the node executed (the rest were refused).
pub struct RingState {
    /// The victim's latencies.
    pub victim: Hist,
    /// The neighbour's FetchAdds that executed.
    pub hog_executed: u64,
    /// The neighbour's FetchAdds sent.
    pub hog_sent: u64,
}

/// Quiet, then hogged, on a node whose members may hold `share` unacknowledged results (0:
/// the row): `ops` victim FetchAdds in each state.
pub fn ring_run(share: u8, ops: u64) -> Result<(RingState, RingState)> {
    let cfg = BoardConfig {
        dram_bytes: 256 << 20,
        page_shift: 12,
        lease: LEASE,
        limits: Limits {
            ring_share: share,
            ..Limits::default()
        },
        ..BoardConfig::default()
    };
    let node = spawn_udp(CBoard::new(&cfg)?, "127.0.0.1:0".parse()?)?;
    let addr = node.udp_addr.context("node has no UDP address")?;
    let victim = Client::connect_udp(addr)?;
    let va = victim.ralloc(4096)?;
    let quiet = victim_faas(&victim, va, ops, 0, 0)?;
    let (sent, executed) = hog(addr)?;
    let hogged = victim_faas(&victim, va, ops, sent, executed)?;
    Ok((quiet, hogged))
}

fn victim_faas(c: &Client, va: u64, ops: u64, sent: u64, executed: u64) -> Result<RingState> {
    let mut h = hist()?;
    for _ in 0..ops {
        let t = Instant::now();
        c.fetch_add(va, 1).context("the victim's fetch-add")?;
        h.record(t.elapsed().as_nanos().max(1) as u64)?;
    }
    Ok(RingState {
        victim: h,
        hog_executed: executed,
        hog_sent: sent,
    })
}

/// The neighbour: raw members (no CLib: they never acknowledge) of one RAS that registers,
/// allocates a page and joins [`HOG_MEMBERS`] - 1 more members; each member sends FetchAdds
/// until the node refuses one for its share (or 100 have gone out, more than a row holds);
/// returns what they sent and what executed.
fn hog(node: SocketAddr) -> Result<(u64, u64)> {
    let sock = UdpSocket::bind("127.0.0.1:0")?;
    sock.set_read_timeout(Some(Duration::from_secs(2)))?;
    let call = |h: Header| -> Result<Header> {
        sock.send_to(&h.to_packet(&[]), node)?;
        let mut buf = [0u8; 2048];
        loop {
            let n = sock.recv(&mut buf).context("the node did not answer")?;
            let (r, _) = parse_verified(&buf[..n]).context("a corrupt answer")?;
            if r.req_id == h.req_id {
                return Ok(r);
            }
        }
    };
    let reg = call(Header {
        arg0: 0x5EED,
        ..Header::request(Opcode::Register, 0, 1, 0)
    })?;
    if reg.status != Status::Ok {
        bail!("the neighbour's Register: {:?}", reg.status);
    }
    let (pid, key, client, cookie) = (
        reg.pid,
        reg.arg0,
        reg.arg1 as u16,
        cookie_of_answer(reg.arg1),
    );
    let alloc = call(
        Header {
            arg0: 4096,
            arg1: 3,
            ..Header::request(Opcode::Alloc, pid, 2, 0)
        }
        .with_credentials(key, client),
    )?;
    if alloc.status != Status::Ok {
        bail!("the neighbour's Alloc: {:?}", alloc.status);
    }
    let mut members = vec![client];
    for n in 1..HOG_MEMBERS {
        let j = call(
            Header {
                arg0: 0x5EED + u64::from(n),
                ..Header::request(Opcode::Join, pid, 10 + u32::from(n), 0)
            }
            .with_credentials(key, client)
            .with_cookie(cookie),
        )?;
        if j.status != Status::Ok {
            bail!("the neighbour's Join: {:?}", j.status);
        }
        members.push(j.arg1 as u16);
    }
    let (mut sent, mut executed) = (0, 0);
    for member in members {
        for id in 0..100u32 {
            let r = call(
                Header {
                    arg0: 1,
                    ..Header::request(Opcode::FetchAdd, pid, 100 + id, alloc.va)
                }
                .with_credentials(key, member)
                .with_cookie(cookie),
            )?;
            sent += 1;
            match r.status {
                Status::Ok => executed += 1,
                Status::QuotaExceeded => break,
                _ => {}
            }
        }
    }
    Ok((sent, executed))
}
