//! AF_XDP for raw Ethernet frames (EtherType 0x88B5): the kernel bypass of the paper's CN side,
//! and the node's XDP front end. Frames move through a UMEM shared with the kernel instead of
//! through socket buffers: zero-copy where the driver allows it, copy mode (one copy in the
//! driver, none through the stack) elsewhere, e.g. on veth.
//!
//! Built over `libc` alone (see docs/clib.md, "Kernel bypass (AF_XDP)", for why not
//! `xsk-rs`, `afxdp`, `aya` or `libbpf-rs`): `bpf` loads a 15-instruction XDP program that
//! steers only Clio frames to the socket's queue through an XSKMAP and passes everything else
//! to the kernel; `socket` is the AF_XDP socket. Needs root (or CAP_NET_RAW + CAP_BPF +
//! CAP_NET_ADMIN) and Linux >= 5.9 (`bpf_link` for XDP).

mod bpf;
mod socket;

pub use bpf::AttachMode;
pub use socket::{XdpMode, XdpSocket, RX_FRAMES, RX_SPIN};

use crate::{NetError, Result};

/// Index and MAC address of the interface `iface` in this thread's network namespace.
pub fn interface(iface: &str) -> Result<(u32, [u8; 6])> {
    let itf = pnet_datalink::interfaces()
        .into_iter()
        .find(|i| i.name == iface)
        .ok_or_else(|| NetError(format!("no network interface named {iface:?}")))?;
    let mac = itf
        .mac
        .map(|m| m.octets())
        .ok_or_else(|| NetError(format!("interface {iface:?} has no MAC address")))?;
    Ok((itf.index, mac))
}
