//! The XDP program that steers Clio frames to an AF_XDP socket, written as raw eBPF
//! instructions and loaded with the `bpf()` system call (no clang, no libbpf, no ELF object).
//!
//! ```text
//!  0: r2 = *(u32 *)(r1 + 0)          ; ctx->data
//!  1: r3 = *(u32 *)(r1 + 4)          ; ctx->data_end
//!  2: r4 = r2
//!  3: r4 += 14
//!  4: if r4 > r3 goto pass            ; shorter than an Ethernet header
//!  5: r4 = *(u16 *)(r2 + 12)         ; EtherType, as it lies in memory
//!  6: if r4 != 0x88B5 goto pass       ; (compared in memory order)
//!  7: r2 = *(u32 *)(r1 + 16)         ; ctx->rx_queue_index
//!  8: r1 = map_fd ll                  ; the XSKMAP (two instruction slots)
//! 10: r3 = XDP_PASS                   ; what to do if no socket sits on this queue
//! 11: call bpf_redirect_map
//! 12: exit
//! 13: pass: r0 = XDP_PASS
//! 14: exit
//! ```

use crate::{NetError, Result};
use clio_proto::consts::ETHERTYPE_CLIO;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
/// `enum bpf_attach_type`: BPF_XDP.
const BPF_XDP: u32 = 37;
const BPF_FUNC_REDIRECT_MAP: i32 = 51;
const BPF_PSEUDO_MAP_FD: u8 = 1;
const XDP_PASS: i32 = 2;
/// `XDP_FLAGS_SKB_MODE`: generic XDP (after the driver built an skb; any device).
const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
/// `XDP_FLAGS_DRV_MODE`: in the driver's receive path (veth and most 10G+ NICs).
const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

/// One eBPF instruction (`struct bpf_insn`).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Insn {
    code: u8,
    /// dst in the low nibble, src in the high one (little- and big-endian hosts alike
    /// agree on this byte for the kernel's bitfield on the host's byte order; Linux on x86-64
    /// and aarch64 is little-endian).
    regs: u8,
    off: i16,
    imm: i32,
}

const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn {
        code,
        regs: (dst & 0xf) | (src << 4),
        off,
        imm,
    }
}

// Opcodes (class | size/op | mode/source).
const LDX_W: u8 = 0x61; // BPF_LDX | BPF_MEM | BPF_W
const LDX_H: u8 = 0x69; // BPF_LDX | BPF_MEM | BPF_H
const MOV64_X: u8 = 0xbf;
const MOV64_K: u8 = 0xb7;
const ADD64_K: u8 = 0x07;
const JGT_X: u8 = 0x2d;
const JNE_K: u8 = 0x55;
const LD_DW_IMM: u8 = 0x18;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;

/// The steering program for an XSKMAP whose descriptor is `map_fd`.
fn program(map_fd: RawFd) -> [Insn; 15] {
    // A 16-bit load reads the two EtherType bytes in memory order on this host.
    let ethertype = u16::from_ne_bytes(ETHERTYPE_CLIO.to_be_bytes()) as i32;
    [
        insn(LDX_W, 2, 1, 0, 0),
        insn(LDX_W, 3, 1, 4, 0),
        insn(MOV64_X, 4, 2, 0, 0),
        insn(ADD64_K, 4, 0, 0, 14),
        insn(JGT_X, 4, 3, 8, 0),
        insn(LDX_H, 4, 2, 12, 0),
        insn(JNE_K, 4, 0, 6, ethertype),
        insn(LDX_W, 2, 1, 16, 0),
        insn(LD_DW_IMM, 1, BPF_PSEUDO_MAP_FD, 0, map_fd),
        insn(0, 0, 0, 0, 0),
        insn(MOV64_K, 3, 0, 0, XDP_PASS),
        insn(CALL, 0, 0, 0, BPF_FUNC_REDIRECT_MAP),
        insn(EXIT, 0, 0, 0, 0),
        insn(MOV64_K, 0, 0, 0, XDP_PASS),
        insn(EXIT, 0, 0, 0, 0),
    ]
}

#[repr(C)]
#[derive(Default)]
struct MapCreateAttr {
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
    map_flags: u32,
}

#[repr(C)]
#[derive(Default)]
struct MapUpdateAttr {
    map_fd: u32,
    _pad: u32,
    key: u64,
    value: u64,
    flags: u64,
}

#[repr(C)]
#[derive(Default)]
struct ProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    prog_name: [u8; 16],
    prog_ifindex: u32,
    expected_attach_type: u32,
}

#[repr(C)]
#[derive(Default)]
struct LinkCreateAttr {
    prog_fd: u32,
    target_ifindex: u32,
    attach_type: u32,
    flags: u32,
    _rest: [u64; 4],
}

/// `bpf(cmd, attr, sizeof attr)`; a new descriptor for commands that return one.
fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a live, initialised #[repr(C)] struct laid out as the kernel's
    // `union bpf_attr` member for `cmd`, and its size is passed along; pointers inside it
    // (instructions, license, log, key, value) point at memory the caller keeps alive for
    // the duration of the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut T as *mut libc::c_void,
            std::mem::size_of::<T>() as libc::c_uint,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn owned(fd: libc::c_long) -> OwnedFd {
    // SAFETY: `fd` was just returned by a successful bpf() call that creates a descriptor,
    // so it is open and owned by nobody else.
    unsafe { OwnedFd::from_raw_fd(fd as RawFd) }
}

fn refused(step: &str, e: io::Error) -> NetError {
    let hint = match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => {
            " (needs root, or CAP_BPF + CAP_NET_ADMIN + CAP_NET_RAW)"
        }
        Some(libc::ENOSYS) | Some(libc::EINVAL) => {
            " (the kernel lacks CONFIG_BPF_SYSCALL / CONFIG_XDP_SOCKETS or is older than 5.9)"
        }
        Some(libc::EBUSY) | Some(libc::EEXIST) => {
            " (another XDP program is already attached to the interface)"
        }
        _ => "",
    };
    NetError(format!("AF_XDP: {step}: {e}{hint}"))
}

/// How the program is attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttachMode {
    /// In the driver's receive path (native XDP).
    Driver,
    /// Generic XDP on the skb (every device; slower).
    Generic,
}

/// The loaded steering program, its XSKMAP and the link that attaches it to an interface.
/// Dropping it detaches the program (the link is the only reference).
pub struct Steering {
    map: OwnedFd,
    _prog: OwnedFd,
    _link: OwnedFd,
    /// How it was attached.
    pub mode: AttachMode,
}

impl Steering {
    /// Load the program with an XSKMAP of `entries` queues and attach it to `ifindex`
    /// (native first, generic if the driver refuses native).
    pub fn attach(ifindex: u32, entries: u32) -> Result<Steering> {
        let mut m = MapCreateAttr {
            map_type: BPF_MAP_TYPE_XSKMAP,
            key_size: 4,
            value_size: 4,
            max_entries: entries.max(1),
            map_flags: 0,
        };
        let map =
            owned(bpf(BPF_MAP_CREATE, &mut m).map_err(|e| refused("creating the XSKMAP", e))?);
        let insns = program(map.as_raw_fd());
        let license = c"Dual MIT/GPL";
        let mut name = [0u8; 16];
        name[..8].copy_from_slice(b"clio_xsk");
        let mut p = ProgLoadAttr {
            prog_type: BPF_PROG_TYPE_XDP,
            insn_cnt: insns.len() as u32,
            insns: insns.as_ptr() as u64,
            license: license.as_ptr() as u64,
            prog_name: name,
            expected_attach_type: BPF_XDP,
            ..Default::default()
        };
        let prog = match bpf(BPF_PROG_LOAD, &mut p) {
            Ok(fd) => owned(fd),
            Err(e) => {
                // Load again with the verifier's log, to say why.
                let mut log = vec![0u8; 1 << 16];
                p.log_level = 1;
                p.log_size = log.len() as u32;
                p.log_buf = log.as_mut_ptr() as u64;
                let _ = bpf(BPF_PROG_LOAD, &mut p);
                let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
                let text = String::from_utf8_lossy(&log[..end]);
                let err = refused("loading the XDP program", e);
                return Err(if text.trim().is_empty() {
                    err
                } else {
                    NetError(format!("{err}; verifier: {}", text.trim()))
                });
            }
        };
        let mut last = None;
        for (flags, mode) in [
            (XDP_FLAGS_DRV_MODE, AttachMode::Driver),
            (XDP_FLAGS_SKB_MODE, AttachMode::Generic),
        ] {
            let mut l = LinkCreateAttr {
                prog_fd: prog.as_raw_fd() as u32,
                target_ifindex: ifindex,
                attach_type: BPF_XDP,
                flags,
                ..Default::default()
            };
            match bpf(BPF_LINK_CREATE, &mut l) {
                Ok(fd) => {
                    return Ok(Steering {
                        map,
                        _prog: prog,
                        _link: owned(fd),
                        mode,
                    })
                }
                // An attached program is busy in every mode: say so at once.
                Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                    return Err(refused("attaching the XDP program (bpf_link)", e))
                }
                Err(e) => last = Some(e),
            }
        }
        Err(refused(
            "attaching the XDP program (bpf_link, native and generic)",
            last.unwrap_or_else(|| io::Error::from_raw_os_error(libc::EINVAL)),
        ))
    }

    /// Steer frames that arrive on `queue` to the AF_XDP socket `xsk`.
    pub fn insert(&self, queue: u32, xsk: RawFd) -> Result<()> {
        let key = queue;
        let value = xsk as u32;
        let mut u = MapUpdateAttr {
            map_fd: self.map.as_raw_fd() as u32,
            key: &key as *const u32 as u64,
            value: &value as *const u32 as u64,
            ..Default::default()
        };
        bpf(BPF_MAP_UPDATE_ELEM, &mut u).map(|_| ()).map_err(|e| {
            refused(
                &format!("putting the socket into the XSKMAP at queue {queue}"),
                e,
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jumps_land_on_the_pass_branch() {
        let p = program(7);
        for (i, ins) in p.iter().enumerate() {
            if ins.code == JGT_X || ins.code == JNE_K {
                let target = i as i64 + 1 + ins.off as i64;
                assert_eq!(target, 13, "jump at {i}");
                assert_eq!(p[13], insn(MOV64_K, 0, 0, 0, XDP_PASS));
            }
        }
        assert_eq!(p[8].imm, 7);
        assert_eq!(p[8].regs, 1 | (BPF_PSEUDO_MAP_FD << 4));
        assert_eq!(std::mem::size_of::<Insn>(), 8);
        // The EtherType constant compares equal to a frame's two bytes loaded natively.
        let frame_bytes = [0x88u8, 0xB5];
        assert_eq!(u16::from_ne_bytes(frame_bytes) as i32, p[6].imm);
    }
}
