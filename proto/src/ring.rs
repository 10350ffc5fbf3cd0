//! The FPGA <-> ARM interface: a register block and two descriptor rings in one memory window.
//!
//! On the board the window is a UIO-mapped region the fast path and the ARM share; in
//! simulation it is a shared-memory file with exactly the same layout. Little-endian.
//!
//! ```text
//! 0x0000 register block (4 KiB, see [`reg`]; each head/tail on its own 64-byte line)
//! 0x1000 RX ring: entries x 128-byte descriptors (fast path -> ARM)
//!        TX ring: entries x 128-byte descriptors (ARM -> fast path)
//! ```
//!
//! Heads and tails are free-running u32 counters; the slot is `counter & (entries - 1)`. The
//! producer writes the descriptor, then publishes it by storing the new head (release); the
//! consumer reads the head (acquire), the descriptor, then stores the new tail.
//!
//! Free-page flow control needs no register: the ARM pushes [`Descriptor::FreePage`] and the
//! fast path reports every page it consumes with [`Descriptor::PageMapped`], so the ARM keeps
//! `pushed - mapped <= FREE_PAGE_FIFO_DEPTH` and the fast path's FIFO never overflows.

use crate::consts::PTE_BYTES;
use crate::frame::{Route, ROUTE_BYTES};
use crate::header::{Header, Packet, WireError, HEADER_LEN, ROUTED_HEADER_LEN};
use crate::le::{le16, le32, le64};
use crate::pte::Pte;

/// Magic value of the register block ("CLRG").
pub const RING_MAGIC: u32 = 0x434C_5247;
/// Layout version (3: the ring-owner descriptor in place of the ring release).
pub const RING_VERSION: u32 = 3;
/// Bytes per descriptor (two 512-bit beats).
pub const DESC_BYTES: usize = 128;
/// `Descriptor::RingOwner`'s pid that hands a row to nobody (a member left; PIDs are never 0).
pub const RING_NO_OWNER: u16 = 0;
/// Default entries per ring.
pub const DEFAULT_RING_ENTRIES: u32 = 256;
/// Most entries per ring: the fast path records the source of every RX descriptor not yet
/// taken in a table this deep (the per-source share, [`rx_source_bucket`]).
pub const MAX_RING_ENTRIES: u32 = 256;
/// Source buckets of the RX ring's per-source share: a slow-path request from a source
/// (its bucket, [`rx_source_bucket`]) is pushed only while the source holds fewer RX
/// descriptors than are free past [`RX_RESERVED_FOR_NOTICES`] (else RETRY_LATER). So a
/// source never holds more than half of the ring's usable room, and a source that holds
/// nothing finds room however many others flood: with `k` of them at their share, a
/// `1 / (k + 1)` part of the usable room is still free (`k < RX_SOURCE_BUCKETS`).
pub const RX_SOURCE_BUCKETS: usize = 16;

/// The source bucket of a request's route: the XOR of the nibbles of its address's
/// [`crate::route_cookie::route_message`] (the IPv4 address for UDP, the MAC for raw
/// Ethernet; ports left out, so every lane of a host is one source) below its length byte.
pub fn rx_source_bucket(route: &Route) -> usize {
    rx_source_bucket_of_message(crate::route_cookie::route_message(route))
}

/// [`rx_source_bucket`] of a route message: the XOR of its low 12 nibbles.
pub fn rx_source_bucket_of_message(message: u64) -> usize {
    (0..12).fold(0, |b, i| b ^ ((message >> (4 * i)) & 0xF) as usize)
}

/// Whether a source that holds `held` RX descriptors may push a slow-path request while the
/// ring has `free` slots: it holds fewer than are free past the notices' reserve.
pub fn rx_share_admits(held: u32, free: u32) -> bool {
    free > RX_RESERVED_FOR_NOTICES && held < free - RX_RESERVED_FOR_NOTICES
}
/// Bytes of the register block.
pub const REGS_BYTES: usize = 0x1000;
/// RX slots kept free for [`Descriptor::PageMapped`] notices: the fast path refuses a
/// slow-path request (retry-later) rather than let requests crowd out notices.
pub const RX_RESERVED_FOR_NOTICES: u32 = crate::consts::FREE_PAGE_FIFO_DEPTH as u32;

/// Byte offsets of the registers.
pub mod reg {
    /// u32 [`super::RING_MAGIC`], written by the fast path at reset.
    pub const MAGIC: usize = 0x00;
    /// u32 [`super::RING_VERSION`].
    pub const VERSION: usize = 0x04;
    /// u32 entries per ring (power of two).
    pub const ENTRIES: usize = 0x08;
    /// u32 bytes per descriptor.
    pub const DESC_BYTES: usize = 0x0C;
    /// u64 DRAM bytes of the node.
    pub const DRAM_BYTES: usize = 0x10;
    /// u32 log2 page size.
    pub const PAGE_SHIFT: usize = 0x18;
    /// u32 depth of the free-page FIFO.
    pub const FIFO_DEPTH: usize = 0x1C;
    /// u32 RX head (fast path produces).
    pub const RX_HEAD: usize = 0x40;
    /// u32 RX tail (ARM consumes).
    pub const RX_TAIL: usize = 0x80;
    /// u32 TX head (ARM produces).
    pub const TX_HEAD: usize = 0xC0;
    /// u32 TX tail (fast path consumes).
    pub const TX_TAIL: usize = 0x100;
    /// u32 daemon state, see [`super::daemon_state`].
    pub const DAEMON_STATE: usize = 0x140;
    /// u32 incremented by the daemon on every poll loop (liveness).
    pub const DAEMON_HEARTBEAT: usize = 0x144;
    /// u32 the epoch of the node's pool view (`crate::epoch::wire`; 0: none), written by
    /// whoever follows the pool's configuration store for the node (`clio board --etcd
    /// --pool`): the slow path raises every fenced RAS (epoch not 0) that holds an older epoch
    /// to it, so a node out of a view refuses the old view's clients by itself.
    pub const POOL_EPOCH: usize = 0x148;
}

/// Values of the [`reg::DAEMON_STATE`] register.
pub mod daemon_state {
    /// No daemon has attached since reset.
    pub const ABSENT: u32 = 0;
    /// The daemon is serving the rings.
    pub const RUNNING: u32 = 1;
    /// The daemon stopped cleanly.
    pub const STOPPED: u32 = 2;
    /// The fast-path side asks the daemon to stop (it answers with `STOPPED`).
    pub const STOP_REQUESTED: u32 = 3;
}

/// Geometry of a ring window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingLayout {
    /// Entries per ring (power of two).
    pub entries: u32,
}

impl RingLayout {
    /// A layout with `entries` per ring; `None` unless a power of two in 2..=65536.
    pub fn new(entries: u32) -> Option<RingLayout> {
        (entries.is_power_of_two() && (2..=MAX_RING_ENTRIES).contains(&entries))
            .then_some(RingLayout { entries })
    }
    /// Offset of the RX ring.
    pub fn rx_base(&self) -> usize {
        REGS_BYTES
    }
    /// Offset of the TX ring.
    pub fn tx_base(&self) -> usize {
        REGS_BYTES + self.entries as usize * DESC_BYTES
    }
    /// Total bytes of the window.
    pub fn total_bytes(&self) -> usize {
        REGS_BYTES + 2 * self.entries as usize * DESC_BYTES
    }
    /// Offset of descriptor `counter` in the ring at `base`.
    pub fn slot_offset(&self, base: usize, counter: u32) -> usize {
        base + (counter & (self.entries - 1)) as usize * DESC_BYTES
    }
}

impl Default for RingLayout {
    fn default() -> Self {
        RingLayout {
            entries: DEFAULT_RING_ENTRIES,
        }
    }
}

/// Descriptor kinds (u16 at offset 0).
pub mod kind {
    /// RX: a slow-path request (alloc/free/register), with its route and header.
    pub const REQUEST: u16 = 0x01;
    /// RX: the fast path mapped a free page on a fault.
    pub const PAGE_MAPPED: u16 = 0x02;
    /// TX: send this response header along this route.
    pub const REPLY: u16 = 0x81;
    /// TX: write a PTE into a page-table slot.
    pub const PTE_WRITE: u16 = 0x82;
    /// TX: drop a translation from the TLB.
    pub const TLB_INVALIDATE: u16 = 0x83;
    /// TX: push a free frame into the async free-page buffer (the ARM cleared it first).
    pub const FREE_PAGE: u16 = 0x84;
    /// TX: set the key-table entry of a PID (key 0 removes the RAS: every request denied).
    pub const KEY_WRITE: u16 = 0x85;
    /// TX: empty the idempotence-table row of a client id and hand it to a RAS (a new member)
    /// or to nobody (a member that left or whose lease ended).
    pub const RING_OWNER: u16 = 0x86;
    /// TX: Clio-KV's store is set up (or its status changed): the executor latches its RAS,
    /// layout and status (`offload::clio_kv` in hardware).
    pub const KV_CONFIG: u16 = 0x87;
    /// TX: the node's route-cookie secret (`crate::route_cookie`); from then on the fast path
    /// checks the cookie of every request whose answer can exceed twice its size.
    pub const ROUTE_KEY: u16 = 0x88;
    /// TX: each member's share of the idempotence ring (`crate::quota::Quota::RingShare`;
    /// 0, the fast path's state after reset, leaves the ring unshared).
    pub const RING_SHARE: u16 = 0x89;
}

/// Field offsets inside a descriptor.
pub mod desc {
    /// u16 kind.
    pub const KIND: usize = 0;
    /// u16 client: the RAS member that sent a REQUEST (header bytes 56..58; the key is not
    /// carried: the fast path checked it).
    pub const CLIENT: usize = 2;
    /// [`crate::frame::ROUTE_BYTES`] route (REQUEST, REPLY).
    pub const ROUTE: usize = 8;
    /// The first [`crate::header::ROUTED_HEADER_LEN`] (48) bytes of the Clio header, wire
    /// format (REQUEST, REPLY).
    pub const HEADER: usize = 40;
    /// The kind-specific body: its fields are [`body`]'s.
    pub const BODY: usize = 88;

    /// The body's fields, byte ranges of the slot (little-endian), each with the kinds that
    /// carry it. Every implementer (this module's codec, the RTL's `slow_path_desc`, the
    /// board's ring check through the generated Verilog header) takes them from here.
    pub mod body {
        use super::BODY;
        use core::ops::Range;

        /// u16 pid: PAGE_MAPPED, TLB_INVALIDATE, KEY_WRITE, RING_OWNER, KV_CONFIG.
        pub const PID: Range<usize> = BODY..BODY + 2;
        /// u16 client: RING_OWNER.
        pub const CLIENT: Range<usize> = BODY + 2..BODY + 4;
        /// u16 epoch: KEY_WRITE (`crate::epoch`; 0 leaves the RAS unfenced).
        pub const EPOCH: Range<usize> = BODY + 2..BODY + 4;
        /// u8 status: KV_CONFIG.
        pub const STATUS: usize = BODY + 2;
        /// u64 bucket: PTE_WRITE.
        pub const BUCKET: Range<usize> = BODY..BODY + 8;
        /// u64 vpn: PAGE_MAPPED, TLB_INVALIDATE.
        pub const VPN: Range<usize> = BODY + 8..BODY + 16;
        /// u64 key: KEY_WRITE.
        pub const KEY: Range<usize> = BODY + 8..BODY + 16;
        /// u64 base: KV_CONFIG.
        pub const BASE: Range<usize> = BODY + 8..BODY + 16;
        /// u32 slot: PTE_WRITE.
        pub const SLOT: Range<usize> = BODY + 8..BODY + 12;
        /// u64 pfn: PAGE_MAPPED, FREE_PAGE.
        pub const PFN: Range<usize> = BODY + 16..BODY + 24;
        /// The 16-byte PTE: PTE_WRITE.
        pub const PTE: Range<usize> = BODY + 16..BODY + 16 + crate::consts::PTE_BYTES;
        /// u64 buckets: KV_CONFIG.
        pub const BUCKETS: Range<usize> = BODY + 16..BODY + 24;
        /// u32 records: KV_CONFIG.
        pub const RECORDS: Range<usize> = BODY + 24..BODY + 28;
        /// u64 the secret's first word: ROUTE_KEY.
        pub const SECRET0: Range<usize> = BODY + 8..BODY + 16;
        /// u64 the secret's second word: ROUTE_KEY.
        pub const SECRET1: Range<usize> = BODY + 16..BODY + 24;
        /// u8 entries one member may hold: RING_SHARE.
        pub const SHARE: usize = BODY;

        // Every field inside the slot.
        const _: () =
            assert!(RECORDS.end <= super::super::DESC_BYTES && PTE.end <= super::super::DESC_BYTES);
    }
}

/// A decoded ring descriptor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Descriptor {
    /// RX: slow-path request.
    Request {
        /// Where it came from.
        route: Route,
        /// Its header.
        header: Header,
    },
    /// RX: the fast path faulted `(pid, vpn)` in with frame `pfn`.
    PageMapped {
        /// Process.
        pid: u16,
        /// Virtual page.
        vpn: u64,
        /// Frame taken from the free-page buffer.
        pfn: u64,
    },
    /// TX: response to send.
    Reply {
        /// Route of the original request (as received).
        route: Route,
        /// Response header.
        header: Header,
    },
    /// TX: page-table write.
    PteWrite {
        /// Bucket index.
        bucket: u64,
        /// Slot in the bucket.
        slot: u32,
        /// New slot content.
        pte: Pte,
    },
    /// TX: TLB invalidation.
    TlbInvalidate {
        /// Process.
        pid: u16,
        /// Virtual page.
        vpn: u64,
    },
    /// TX: a free frame for the async buffer.
    FreePage {
        /// Frame number.
        pfn: u64,
    },
    /// TX: program the key table.
    KeyWrite {
        /// The RAS's PID (the table index).
        pid: u16,
        /// Its secret; 0 removes the RAS.
        key: u64,
        /// Its epoch (`crate::epoch`; 0: not fenced).
        epoch: u16,
    },
    /// TX: the idempotence-table row of client id `client` is emptied and now belongs to
    /// `pid` (a member the slow path just created), or to nobody ([`RING_NO_OWNER`]: the
    /// member left). Sent before the Register or Join that created the member is answered,
    /// so a member's row never holds anything of a previous holder of its client id.
    RingOwner {
        /// The RAS that owns the row, or [`RING_NO_OWNER`].
        pid: u16,
        /// The client id (the row), below `consts::RING_MEMBERS`.
        client: u16,
    },
    /// TX: Clio-KV's store (`kv::StoreLayout` in the RAS `pid`) and the status KV requests
    /// get (`Status::Ok` once it is allocated, touched and formatted).
    KvConfig {
        /// The store's own RAS.
        pid: u16,
        /// `StoreLayout::base`.
        base: u64,
        /// `StoreLayout::buckets` (a power of two).
        buckets: u64,
        /// `StoreLayout::records` (below 2^32).
        records: u32,
        /// OK when ready, else the status KV requests get.
        status: u8,
    },
    /// TX: the node's route-cookie secret (`crate::route_cookie::RouteSecret`).
    RouteKey {
        /// SipHash's key.
        secret: [u64; 2],
    },
    /// TX: the idempotence-ring entries one member may hold (0: no limit).
    RingShare {
        /// Entries, at most `IDEMPOTENCE_RING_ENTRIES`.
        share: u8,
    },
}

impl Descriptor {
    /// Encode into one descriptor slot.
    pub fn encode(&self) -> [u8; DESC_BYTES] {
        let mut b = [0u8; DESC_BYTES];
        use desc::body;
        let k = match self {
            Descriptor::Request { route, header } | Descriptor::Reply { route, header } => {
                b[desc::ROUTE..desc::ROUTE + ROUTE_BYTES].copy_from_slice(&route.to_bytes());
                let mut h = [0u8; HEADER_LEN];
                header.emit_header(&mut h);
                b[desc::HEADER..desc::HEADER + ROUTED_HEADER_LEN]
                    .copy_from_slice(&h[..ROUTED_HEADER_LEN]);
                b[desc::CLIENT..desc::CLIENT + 2].copy_from_slice(&header.client.to_le_bytes());
                if matches!(self, Descriptor::Request { .. }) {
                    kind::REQUEST
                } else {
                    kind::REPLY
                }
            }
            Descriptor::PageMapped { pid, vpn, pfn } => {
                b[body::PID].copy_from_slice(&pid.to_le_bytes());
                b[body::VPN].copy_from_slice(&vpn.to_le_bytes());
                b[body::PFN].copy_from_slice(&pfn.to_le_bytes());
                kind::PAGE_MAPPED
            }
            Descriptor::PteWrite { bucket, slot, pte } => {
                b[body::BUCKET].copy_from_slice(&bucket.to_le_bytes());
                b[body::SLOT].copy_from_slice(&slot.to_le_bytes());
                b[body::PTE].copy_from_slice(&pte.to_bytes());
                kind::PTE_WRITE
            }
            Descriptor::TlbInvalidate { pid, vpn } => {
                b[body::PID].copy_from_slice(&pid.to_le_bytes());
                b[body::VPN].copy_from_slice(&vpn.to_le_bytes());
                kind::TLB_INVALIDATE
            }
            Descriptor::FreePage { pfn } => {
                b[body::PFN].copy_from_slice(&pfn.to_le_bytes());
                kind::FREE_PAGE
            }
            Descriptor::KeyWrite { pid, key, epoch } => {
                b[body::PID].copy_from_slice(&pid.to_le_bytes());
                b[body::EPOCH].copy_from_slice(&epoch.to_le_bytes());
                b[body::KEY].copy_from_slice(&key.to_le_bytes());
                kind::KEY_WRITE
            }
            Descriptor::RingOwner { pid, client } => {
                b[body::PID].copy_from_slice(&pid.to_le_bytes());
                b[body::CLIENT].copy_from_slice(&client.to_le_bytes());
                kind::RING_OWNER
            }
            Descriptor::KvConfig {
                pid,
                base,
                buckets,
                records,
                status,
            } => {
                b[body::PID].copy_from_slice(&pid.to_le_bytes());
                b[body::STATUS] = *status;
                b[body::BASE].copy_from_slice(&base.to_le_bytes());
                b[body::BUCKETS].copy_from_slice(&buckets.to_le_bytes());
                b[body::RECORDS].copy_from_slice(&records.to_le_bytes());
                kind::KV_CONFIG
            }
            Descriptor::RouteKey { secret } => {
                b[body::SECRET0].copy_from_slice(&secret[0].to_le_bytes());
                b[body::SECRET1].copy_from_slice(&secret[1].to_le_bytes());
                kind::ROUTE_KEY
            }
            Descriptor::RingShare { share } => {
                b[body::SHARE] = *share;
                kind::RING_SHARE
            }
        };
        b[desc::KIND..desc::KIND + 2].copy_from_slice(&k.to_le_bytes());
        b
    }

    /// Decode one descriptor slot.
    pub fn decode(b: &[u8; DESC_BYTES]) -> Result<Descriptor, WireError> {
        use desc::body;
        let k = u16::from_le_bytes([b[0], b[1]]);
        let route_and_header = || -> Result<(Route, Header), WireError> {
            let mut r = [0u8; ROUTE_BYTES];
            r.copy_from_slice(&b[desc::ROUTE..desc::ROUTE + ROUTE_BYTES]);
            let route = Route::from_bytes(&r)?;
            // The header is stored without payload, key and client: parse it with payload_len
            // taken as zero, then put the client back.
            let mut h = [0u8; HEADER_LEN];
            h[..ROUTED_HEADER_LEN]
                .copy_from_slice(&b[desc::HEADER..desc::HEADER + ROUTED_HEADER_LEN]);
            h[crate::header::field::PAYLOAD_LEN].fill(0);
            let header = Header {
                client: u16::from_le_bytes([b[desc::CLIENT], b[desc::CLIENT + 1]]),
                ..Header::parse(&Packet::new_unchecked(&h[..]))?
            };
            Ok((route, header))
        };
        Ok(match k {
            kind::REQUEST => {
                let (route, header) = route_and_header()?;
                Descriptor::Request { route, header }
            }
            kind::REPLY => {
                let (route, header) = route_and_header()?;
                Descriptor::Reply { route, header }
            }
            kind::PAGE_MAPPED => Descriptor::PageMapped {
                pid: le16(b, body::PID.start),
                vpn: le64(b, body::VPN.start),
                pfn: le64(b, body::PFN.start),
            },
            kind::PTE_WRITE => {
                let mut p = [0u8; PTE_BYTES];
                p.copy_from_slice(&b[body::PTE]);
                Descriptor::PteWrite {
                    bucket: le64(b, body::BUCKET.start),
                    slot: le32(b, body::SLOT.start),
                    pte: Pte::from_bytes(&p),
                }
            }
            kind::TLB_INVALIDATE => Descriptor::TlbInvalidate {
                pid: le16(b, body::PID.start),
                vpn: le64(b, body::VPN.start),
            },
            kind::FREE_PAGE => Descriptor::FreePage {
                pfn: le64(b, body::PFN.start),
            },
            kind::KEY_WRITE => Descriptor::KeyWrite {
                pid: le16(b, body::PID.start),
                key: le64(b, body::KEY.start),
                epoch: le16(b, body::EPOCH.start),
            },
            kind::RING_OWNER => Descriptor::RingOwner {
                pid: le16(b, body::PID.start),
                client: le16(b, body::CLIENT.start),
            },
            kind::KV_CONFIG => Descriptor::KvConfig {
                pid: le16(b, body::PID.start),
                status: b[body::STATUS],
                base: le64(b, body::BASE.start),
                buckets: le64(b, body::BUCKETS.start),
                records: le32(b, body::RECORDS.start),
            },
            kind::ROUTE_KEY => Descriptor::RouteKey {
                secret: [le64(b, body::SECRET0.start), le64(b, body::SECRET1.start)],
            },
            kind::RING_SHARE => Descriptor::RingShare {
                share: b[body::SHARE],
            },
            _ => return Err(WireError::Frame("unknown ring descriptor kind")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opcode::Opcode;
    use crate::status::Status;

    /// The share's promise: one source takes at most half the usable room, and with every
    /// other bucket flooding, a source that holds nothing still finds room.
    #[test]
    fn rx_share_bounds_each_source() {
        let usable = DEFAULT_RING_ENTRIES - RX_RESERVED_FOR_NOTICES;
        // One flooder alone.
        let mut held = 0;
        while rx_share_admits(held, DEFAULT_RING_ENTRIES - held) {
            held += 1;
        }
        assert_eq!(held, usable / 2);
        // Every bucket but one floods, in turn, until none is admitted.
        let mut held = [0u32; RX_SOURCE_BUCKETS];
        loop {
            let mut pushed = false;
            for b in 1..RX_SOURCE_BUCKETS {
                let free = DEFAULT_RING_ENTRIES - held.iter().sum::<u32>();
                if rx_share_admits(held[b], free) {
                    held[b] += 1;
                    pushed = true;
                }
            }
            if !pushed {
                break;
            }
        }
        let free = DEFAULT_RING_ENTRIES - held.iter().sum::<u32>();
        assert!(free - RX_RESERVED_FOR_NOTICES >= usable / RX_SOURCE_BUCKETS as u32);
        assert!(rx_share_admits(0, free), "the quiet source is admitted");
        // Buckets: a host's lanes are one source; hosts differing in one octet are not.
        let host = |ip: [u8; 4], port| Route {
            peer_ip: ip.into(),
            peer_port: port,
            ..Route::default()
        };
        assert_eq!(
            rx_source_bucket(&host([10, 0, 0, 1], 1)),
            rx_source_bucket(&host([10, 0, 0, 1], 2))
        );
        assert_ne!(
            rx_source_bucket(&host([10, 0, 0, 1], 1)),
            rx_source_bucket(&host([10, 0, 0, 2], 1))
        );
        assert!(RingLayout::new(MAX_RING_ENTRIES * 2).is_none());
    }

    #[test]
    fn descriptors_round_trip() {
        let route = Route {
            peer_port: 7,
            local_port: 8,
            ..Route::default()
        };
        let mut header = Header::request(Opcode::Alloc, 3, 99, 0);
        header.arg0 = 1 << 22;
        header.client = 0x1234;
        let reply = Header {
            va: 0x40_0000,
            ..header.response_to(Status::Ok)
        };
        let all = [
            Descriptor::Request { route, header },
            Descriptor::Reply {
                route,
                header: reply,
            },
            Descriptor::PageMapped {
                pid: 3,
                vpn: 5,
                pfn: 9,
            },
            Descriptor::PteWrite {
                bucket: 12,
                slot: 15,
                pte: Pte::allocated(3, 5, 3),
            },
            Descriptor::TlbInvalidate { pid: 3, vpn: 5 },
            Descriptor::FreePage { pfn: 1234 },
            Descriptor::KeyWrite {
                pid: 4095,
                key: 0xDEAD_BEEF_0123_4567,
                epoch: 0xBEEF,
            },
            Descriptor::RingOwner { pid: 7, client: 9 },
            Descriptor::KvConfig {
                pid: 9,
                base: 0x40_0000,
                buckets: 1 << 20,
                records: 0x8000_0001,
                status: Status::RetryLater as u8,
            },
            Descriptor::RouteKey {
                secret: [0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210],
            },
            Descriptor::RingShare { share: 32 },
        ];
        for d in all {
            assert_eq!(Descriptor::decode(&d.encode()).unwrap(), d);
        }
        // The key never reaches the slow path: a request's descriptor drops it.
        let keyed = Descriptor::Request {
            route,
            header: header.with_credentials(0x5EC2E7, 0x1234),
        };
        assert_eq!(Descriptor::decode(&keyed.encode()).unwrap(), all[0]);
        assert!(Descriptor::decode(&[0u8; DESC_BYTES]).is_err());
    }

    #[test]
    fn layout_is_contiguous() {
        let l = RingLayout::new(256).unwrap();
        assert_eq!(l.rx_base(), 0x1000);
        assert_eq!(l.tx_base(), 0x1000 + 256 * 128);
        assert_eq!(l.total_bytes(), 0x1000 + 2 * 256 * 128);
        assert_eq!(l.slot_offset(l.tx_base(), 257), l.tx_base() + 128);
        assert!(RingLayout::new(3).is_none());
    }
}

/// The register and descriptor layout as a Verilog header (`localparam`s), so the board top
/// and any hand-written RTL take their offsets from this spec instead of retyping them.
pub fn verilog_header() -> String {
    let mut s = String::from("// Generated from clio-proto (proto/src/ring.rs). Do not edit.\n");
    let mut p = |name: &str, v: u64| s.push_str(&format!("localparam CLIO_{name} = {v};\n"));
    p("RING_MAGIC", RING_MAGIC as u64);
    p("RING_VERSION", RING_VERSION as u64);
    p("DESC_BYTES", DESC_BYTES as u64);
    p("REGS_BYTES", REGS_BYTES as u64);
    p("DEFAULT_RING_ENTRIES", DEFAULT_RING_ENTRIES as u64);
    p("WINDOW_BYTES", RingLayout::default().total_bytes() as u64);
    p("RX_BASE", RingLayout::default().rx_base() as u64);
    p("TX_BASE", RingLayout::default().tx_base() as u64);
    for (n, v) in [
        ("REG_MAGIC", reg::MAGIC),
        ("REG_VERSION", reg::VERSION),
        ("REG_ENTRIES", reg::ENTRIES),
        ("REG_DESC_BYTES", reg::DESC_BYTES),
        ("REG_DRAM_BYTES", reg::DRAM_BYTES),
        ("REG_PAGE_SHIFT", reg::PAGE_SHIFT),
        ("REG_FIFO_DEPTH", reg::FIFO_DEPTH),
        ("REG_RX_HEAD", reg::RX_HEAD),
        ("REG_RX_TAIL", reg::RX_TAIL),
        ("REG_TX_HEAD", reg::TX_HEAD),
        ("REG_TX_TAIL", reg::TX_TAIL),
        ("REG_DAEMON_STATE", reg::DAEMON_STATE),
        ("REG_DAEMON_HEARTBEAT", reg::DAEMON_HEARTBEAT),
        ("REG_POOL_EPOCH", reg::POOL_EPOCH),
    ] {
        p(n, v as u64);
    }
    for (n, v) in [
        ("KIND_REQUEST", kind::REQUEST),
        ("KIND_PAGE_MAPPED", kind::PAGE_MAPPED),
        ("KIND_REPLY", kind::REPLY),
        ("KIND_PTE_WRITE", kind::PTE_WRITE),
        ("KIND_TLB_INVALIDATE", kind::TLB_INVALIDATE),
        ("KIND_FREE_PAGE", kind::FREE_PAGE),
        ("KIND_KEY_WRITE", kind::KEY_WRITE),
        ("KIND_RING_OWNER", kind::RING_OWNER),
        ("KIND_KV_CONFIG", kind::KV_CONFIG),
        ("KIND_ROUTE_KEY", kind::ROUTE_KEY),
        ("KIND_RING_SHARE", kind::RING_SHARE),
    ] {
        p(n, v as u64);
    }
    p("DESC_KIND", desc::KIND as u64);
    p("DESC_CLIENT", desc::CLIENT as u64);
    p("DESC_ROUTE", desc::ROUTE as u64);
    p("DESC_HEADER", desc::HEADER as u64);
    p("DESC_BODY", desc::BODY as u64);
    for (n, v) in [
        ("DESC_BODY_PID", desc::body::PID.start),
        ("DESC_BODY_CLIENT", desc::body::CLIENT.start),
        ("DESC_BODY_EPOCH", desc::body::EPOCH.start),
        ("DESC_BODY_STATUS", desc::body::STATUS),
        ("DESC_BODY_BUCKET", desc::body::BUCKET.start),
        ("DESC_BODY_VPN", desc::body::VPN.start),
        ("DESC_BODY_KEY", desc::body::KEY.start),
        ("DESC_BODY_BASE", desc::body::BASE.start),
        ("DESC_BODY_SLOT", desc::body::SLOT.start),
        ("DESC_BODY_PFN", desc::body::PFN.start),
        ("DESC_BODY_PTE", desc::body::PTE.start),
        ("DESC_BODY_BUCKETS", desc::body::BUCKETS.start),
        ("DESC_BODY_RECORDS", desc::body::RECORDS.start),
        ("DESC_BODY_SECRET0", desc::body::SECRET0.start),
        ("DESC_BODY_SECRET1", desc::body::SECRET1.start),
        ("DESC_BODY_SHARE", desc::body::SHARE),
    ] {
        p(n, v as u64);
    }
    s
}
