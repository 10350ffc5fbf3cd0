//! The node's AF_XDP front end: Clio frames (EtherType 0x88B5) on one interface queue reach
//! the node through CLib's [`XdpSocket`] (UMEM rings, an XDP program that steers only Clio
//! frames; everything else still reaches the kernel). Needs root.
//!
//! Also [`NetnsPair`]: two network namespaces joined by a veth pair, the rig the AF_XDP test
//! and `clio bench --transports` run the node and the client on.

use crate::model::board::Outgoing;
use crate::node::MemoryNode;
use crate::server::{lock, spawn_loop, ServerError, ServerHandle, POLL_INTERVAL};
use clio_netio::xdp::{interface, XdpSocket, RX_SPIN};
use clio_proto::frame::{emit_frame, parse_frame, Encap};
use std::io;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Command;
use std::sync::atomic::Ordering;

fn io_err(what: String, e: impl std::fmt::Display) -> ServerError {
    ServerError::Io {
        what,
        source: io::Error::other(e.to_string()),
    }
}

/// Serve `board` over AF_XDP on queue `queue` of `iface` in a background thread. Frames
/// whose destination is neither this interface's MAC nor a group address are ignored.
pub fn spawn_xdp(
    board: impl MemoryNode + 'static,
    iface: &str,
    queue: u32,
) -> Result<ServerHandle, ServerError> {
    let board: Box<dyn MemoryNode> = Box::new(board);
    let (ifindex, mac) =
        interface(iface).map_err(|_| ServerError::NoInterface(iface.to_string()))?;
    let socket = XdpSocket::open(ifindex, queue, false)
        .map_err(|e| io_err(format!("opening AF_XDP on {iface} queue {queue}"), e))?;
    let m = socket.mode();
    let local = format!(
        "{iface} ({}) AF_XDP queue {queue}, {} XDP, {}",
        mac.iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":"),
        if m.native { "native" } else { "generic" },
        if m.zero_copy {
            "zero-copy"
        } else {
            "copy mode"
        }
    );
    spawn_loop("clio-node-xdp", board, local, None, move |b, s| {
        let mut out: Vec<Outgoing> = Vec::new();
        let mut frames: Vec<Vec<u8>> = Vec::new();
        while !s.load(Ordering::Acquire) {
            let mut guard = None;
            socket
                .recv_frames(POLL_INTERVAL, RX_SPIN, |f| {
                    // Untrusted bytes: `parse_frame` checks lengths; keep frames for us.
                    let Ok((route, clio)) = parse_frame(f, None) else {
                        return;
                    };
                    let group = route.local_mac[0] & 1 != 0;
                    if route.encap == Encap::RawEthernet && (route.local_mac == mac || group) {
                        guard
                            .get_or_insert_with(|| lock(b))
                            .handle(&route, clio, &mut out);
                    }
                })
                .map_err(|e| io_err("receiving frames".into(), e))?;
            guard.get_or_insert_with(|| lock(b)).service(&mut out);
            drop(guard);
            if out.is_empty() {
                continue;
            }
            frames.clear();
            for (route, bytes) in out.drain(..) {
                let mut r = route;
                r.local_mac = mac;
                frames.push(emit_frame(&r, &bytes));
            }
            let parts: Vec<[&[u8]; 1]> = frames.iter().map(|f| [f.as_slice()]).collect();
            let list: Vec<&[&[u8]]> = parts.iter().map(|p| &p[..]).collect();
            // Frames that find no free transmit slot are losses; clients retry.
            socket
                .send_frames(&list)
                .map_err(|e| io_err("sending frames".into(), e))?;
        }
        Ok(())
    })
}

/// One end of a [`NetnsPair`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// The client's end.
    A,
    /// The node's end.
    B,
}

/// Two network namespaces joined by a veth pair, with IPv4 addresses and fixed MACs; both
/// namespaces (and so the pair) are deleted on drop. Needs root and `ip` (iproute2).
pub struct NetnsPair {
    ns: [String; 2],
    /// Interface name inside each namespace (the same in both).
    pub iface: &'static str,
}

/// Runs `ip` with `args`; whether it succeeded.
fn ip(args: &[&str]) -> io::Result<()> {
    let out = Command::new("ip").args(args).output()?;
    if out.status.success() {
        Ok(())
    } else {
        Err(io::Error::other(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

impl NetnsPair {
    /// Create the pair; `tag` (with the process id) names the namespaces.
    pub fn create(tag: &str) -> io::Result<NetnsPair> {
        let id = std::process::id();
        let ns = [format!("clio-{tag}-{id}-a"), format!("clio-{tag}-{id}-b")];
        ip(&["netns", "add", &ns[0]])?;
        // From here on, drop cleans up whatever exists.
        let p = NetnsPair { ns, iface: "clio0" };
        ip(&["netns", "add", &p.ns[1]])?;
        let link = format!(
            "link add {i} netns {} address {} type veth peer name {i} netns {} address {}",
            p.ns[0],
            fmt_mac(p.mac(Side::A)),
            p.ns[1],
            fmt_mac(p.mac(Side::B)),
            i = p.iface
        );
        ip(&link.split_whitespace().collect::<Vec<_>>())?;
        for side in [Side::A, Side::B] {
            let n = p.ns(side);
            let addr = format!("{}/24", p.ip(side));
            ip(&["-n", n, "addr", "add", &addr, "dev", p.iface])?;
            ip(&["-n", n, "link", "set", p.iface, "up"])?;
            ip(&["-n", n, "link", "set", "lo", "up"])?;
        }
        Ok(p)
    }

    /// The namespace's name.
    pub fn ns(&self, side: Side) -> &str {
        &self.ns[side as usize]
    }

    /// The MAC address of the veth end on `side`.
    pub fn mac(&self, side: Side) -> [u8; 6] {
        [0x02, 0xc1, 0x10, 0, 0, 0x0a + side as u8]
    }

    /// The IPv4 address of the veth end on `side` (10.199.0.1 and .2, one /24).
    pub fn ip(&self, side: Side) -> Ipv4Addr {
        Ipv4Addr::new(10, 199, 0, 1 + side as u8)
    }

    /// Move the calling thread into the namespace of `side` until the guard drops. Sockets
    /// opened meanwhile stay in that namespace for good; threads spawned meanwhile start there.
    pub fn enter(&self, side: Side) -> io::Result<NetnsGuard> {
        let home = std::fs::File::open("/proc/thread-self/ns/net")?;
        let target = std::fs::File::open(format!("/run/netns/{}", self.ns(side)))?;
        setns(target.as_raw_fd())?;
        Ok(NetnsGuard { home: home.into() })
    }
}

fn setns(fd: i32) -> io::Result<()> {
    // SAFETY: plain system call on an open namespace descriptor; only this thread moves.
    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn fmt_mac(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

impl Drop for NetnsPair {
    fn drop(&mut self) {
        for n in &self.ns {
            let _ = ip(&["netns", "del", n]);
        }
    }
}

/// Returns the thread to the namespace it came from on drop.
pub struct NetnsGuard {
    home: OwnedFd,
}

impl Drop for NetnsGuard {
    fn drop(&mut self) {
        // Failing to go home would leave the thread in a namespace about to be deleted;
        // nothing better to do than report it.
        if let Err(e) = setns(self.home.as_raw_fd()) {
            eprintln!("returning to the original network namespace: {e}");
        }
    }
}
