//! The Clio header: a zero-copy typed view over packet bytes ([`Packet`]) and its high-level
//! representation ([`Header`]), in the style of `smoltcp::wire`.
//!
//! Every packet (request or response, any size) starts with the same 64-byte header (exactly
//! one 512-bit beat of the fast path), in network byte order, followed by `payload_len`
//! payload bytes:
//!
//! ```text
//!  0 version   1 opcode   2 status   3 flags
//!  4 pid (u16)            6 pkt_index (u16)
//!  8 pkt_count (u16)     10 payload_len (u16)
//! 12 req_id (u32)
//! 16 va (u64)
//! 24 total_len (u32)
//! 28 checksum (u32, CRC-32C over header with this field zero, then payload)
//! 32 arg0 (u64)
//! 40 arg1 (u64)
//! 48 key (u64, the RAS secret; zero in responses and in Register requests)
//! 56 client (u16, member of the RAS that sent it; zero in responses)
//! 58 epoch (u16, the sender's view of its RAS's epoch: `crate::epoch`; zero in responses)
//! 60 cookie (u32, the return-routability cookie of the sender's address; zero in responses)
//! 64 payload ...
//! ```
//!
//! The fields up to `arg1` (the first [`ROUTED_HEADER_LEN`] bytes) are what the ring
//! descriptors carry to the slow path; the key is checked by the fast path and never leaves it.

pub mod checksum;

use crate::consts::{MAX_PAYLOAD, MAX_PAYLOAD_SHIFT, MAX_REQUEST_LEN, VA_LIMIT};
use crate::opcode::Opcode;
use crate::status::Status;
use thiserror::Error;

/// Header format version carried in byte 0 (2: the 64-byte header with key and client).
pub const VERSION: u8 = 2;
/// Length of the Clio header in bytes: one 512-bit beat, so the payload starts beat-aligned.
pub const HEADER_LEN: usize = 64;
const _: () = assert!(
    HEADER_LEN == crate::consts::BEAT_BYTES,
    "the header is one beat"
);
/// The leading header bytes (through `arg1`) that ring descriptors carry; the key, client and
/// epoch after them are the fast path's business (client travels separately).
pub const ROUTED_HEADER_LEN: usize = 48;
/// Flag bit: this packet is a response (from the memory node).
pub const FLAG_RESPONSE: u8 = 0x01;
/// Flag bit (Write requests): answer only once the data is in the node's persistence domain
/// (see docs/durability.md). A node without one answers `Unsupported` and writes nothing.
pub const FLAG_DURABLE: u8 = 0x02;

/// Byte ranges of every field (one definition, used by the view, the docs tests and the RTL).
pub mod field {
    #![allow(missing_docs)]
    pub type Field = core::ops::Range<usize>;
    pub const VERSION: usize = 0;
    pub const OPCODE: usize = 1;
    pub const STATUS: usize = 2;
    pub const FLAGS: usize = 3;
    pub const PID: Field = 4..6;
    pub const PKT_INDEX: Field = 6..8;
    pub const PKT_COUNT: Field = 8..10;
    pub const PAYLOAD_LEN: Field = 10..12;
    pub const REQ_ID: Field = 12..16;
    pub const VA: Field = 16..24;
    pub const TOTAL_LEN: Field = 24..28;
    pub const CHECKSUM: Field = 28..32;
    pub const ARG0: Field = 32..40;
    pub const ARG1: Field = 40..48;
    pub const KEY: Field = 48..56;
    pub const CLIENT: Field = 56..58;
    pub const EPOCH: Field = 58..60;
    pub const COOKIE: Field = 60..64;
    pub const PAYLOAD: usize = super::HEADER_LEN;
}

/// Why bytes were rejected as a Clio packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum WireError {
    /// Fewer bytes than the header, or than header + payload_len.
    #[error("truncated packet: {have} bytes, need {need}")]
    Truncated {
        /// Bytes available.
        have: usize,
        /// Bytes required.
        need: usize,
    },
    /// Unknown header version.
    #[error("unsupported header version {0}")]
    BadVersion(u8),
    /// Undefined opcode byte.
    #[error("unknown opcode 0x{0:02x}")]
    UnknownOpcode(u8),
    /// Undefined status byte.
    #[error("unknown status {0}")]
    UnknownStatus(u8),
    /// Payload longer than [`MAX_PAYLOAD`].
    #[error("payload of {0} bytes exceeds the maximum")]
    PayloadTooLong(u16),
    /// `pkt_count` is zero or `pkt_index >= pkt_count`.
    #[error("packet index {index} outside count {count}")]
    BadPacketIndex {
        /// Packet index.
        index: u16,
        /// Packet count.
        count: u16,
    },
    /// Checksum mismatch.
    #[error("checksum mismatch: carried {carried:08x}, computed {computed:08x}")]
    Checksum {
        /// The value in the header.
        carried: u32,
        /// The value computed over the bytes.
        computed: u32,
    },
    /// A frame (Ethernet / IPv4 / UDP) around the packet was not acceptable.
    #[error("bad frame: {0}")]
    Frame(&'static str),
}

/// A read/write view of a Clio packet over a byte buffer.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

fn be16(b: &[u8], r: field::Field) -> u16 {
    u16::from_be_bytes([b[r.start], b[r.start + 1]])
}
fn be32(b: &[u8], r: field::Field) -> u32 {
    let mut a = [0u8; 4];
    a.copy_from_slice(&b[r]);
    u32::from_be_bytes(a)
}
fn be64(b: &[u8], r: field::Field) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[r]);
    u64::from_be_bytes(a)
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap a buffer without checking it. Accessors may panic on a short buffer: call
    /// [`Packet::check_len`] first, or use [`Packet::new_checked`].
    pub const fn new_unchecked(buffer: T) -> Packet<T> {
        Packet { buffer }
    }

    /// Wrap a buffer after [`Packet::check_len`].
    pub fn new_checked(buffer: T) -> Result<Packet<T>, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Ensure the buffer holds the header and the `payload_len` bytes it announces, so that
    /// no accessor can panic. Extra trailing bytes (Ethernet padding) are allowed.
    pub fn check_len(&self) -> Result<(), WireError> {
        let have = self.buffer.as_ref().len();
        if have < HEADER_LEN {
            return Err(WireError::Truncated {
                have,
                need: HEADER_LEN,
            });
        }
        let need = HEADER_LEN + self.payload_len() as usize;
        if have < need {
            return Err(WireError::Truncated { have, need });
        }
        Ok(())
    }

    /// Consume the view, returning the buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    /// Header version (byte 0).
    pub fn version(&self) -> u8 {
        self.buffer.as_ref()[field::VERSION]
    }
    /// Raw opcode byte.
    pub fn opcode_raw(&self) -> u8 {
        self.buffer.as_ref()[field::OPCODE]
    }
    /// Raw status byte.
    pub fn status_raw(&self) -> u8 {
        self.buffer.as_ref()[field::STATUS]
    }
    /// Flags byte.
    pub fn flags(&self) -> u8 {
        self.buffer.as_ref()[field::FLAGS]
    }
    /// Process id.
    pub fn pid(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PID)
    }
    /// Index of this packet within its request or response.
    pub fn pkt_index(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PKT_INDEX)
    }
    /// Number of packets in this request or response.
    pub fn pkt_count(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PKT_COUNT)
    }
    /// Payload bytes in this packet.
    pub fn payload_len(&self) -> u16 {
        be16(self.buffer.as_ref(), field::PAYLOAD_LEN)
    }
    /// Request id chosen by the client.
    pub fn req_id(&self) -> u32 {
        be32(self.buffer.as_ref(), field::REQ_ID)
    }
    /// Base virtual address of the request.
    pub fn va(&self) -> u64 {
        be64(self.buffer.as_ref(), field::VA)
    }
    /// Total data length of the request.
    pub fn total_len(&self) -> u32 {
        be32(self.buffer.as_ref(), field::TOTAL_LEN)
    }
    /// Carried checksum.
    pub fn checksum(&self) -> u32 {
        be32(self.buffer.as_ref(), field::CHECKSUM)
    }
    /// First operand.
    pub fn arg0(&self) -> u64 {
        be64(self.buffer.as_ref(), field::ARG0)
    }
    /// Second operand.
    pub fn arg1(&self) -> u64 {
        be64(self.buffer.as_ref(), field::ARG1)
    }
    /// The RAS secret the request presents.
    pub fn key(&self) -> u64 {
        be64(self.buffer.as_ref(), field::KEY)
    }
    /// Member of the RAS that sent the request.
    pub fn client(&self) -> u16 {
        be16(self.buffer.as_ref(), field::CLIENT)
    }
    /// The epoch of the sender's view (`crate::epoch`).
    pub fn epoch(&self) -> u16 {
        be16(self.buffer.as_ref(), field::EPOCH)
    }
    /// The sender's route cookie (`crate::route_cookie`).
    pub fn cookie(&self) -> u32 {
        be32(self.buffer.as_ref(), field::COOKIE)
    }
    /// The payload (exactly `payload_len` bytes).
    pub fn payload(&self) -> &[u8] {
        let n = self.payload_len() as usize;
        &self.buffer.as_ref()[HEADER_LEN..HEADER_LEN + n]
    }
    /// Header and payload, without trailing padding.
    pub fn as_bytes(&self) -> &[u8] {
        let n = self.payload_len() as usize;
        &self.buffer.as_ref()[..HEADER_LEN + n]
    }
    /// Compute the CRC-32C this packet should carry.
    pub fn compute_checksum(&self) -> u32 {
        checksum::packet_crc(self.as_bytes())
    }
    /// Whether the carried checksum matches the bytes.
    pub fn verify_checksum(&self) -> bool {
        self.checksum() == self.compute_checksum()
    }
}

fn put16(b: &mut [u8], r: field::Field, v: u16) {
    b[r].copy_from_slice(&v.to_be_bytes());
}
fn put32(b: &mut [u8], r: field::Field, v: u32) {
    b[r].copy_from_slice(&v.to_be_bytes());
}
fn put64(b: &mut [u8], r: field::Field, v: u64) {
    b[r].copy_from_slice(&v.to_be_bytes());
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    /// Set the status byte (used by the node to turn a request into a response).
    pub fn set_status(&mut self, s: Status) {
        self.buffer.as_mut()[field::STATUS] = s as u8;
    }
    /// Set the flags byte.
    pub fn set_flags(&mut self, f: u8) {
        self.buffer.as_mut()[field::FLAGS] = f;
    }
    /// Set the route cookie (then [`Packet::fill_checksum`]).
    pub fn set_cookie(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::COOKIE, v);
    }
    /// Set the checksum field.
    pub fn set_checksum(&mut self, v: u32) {
        put32(self.buffer.as_mut(), field::CHECKSUM, v);
    }
    /// Recompute and store the checksum.
    pub fn fill_checksum(&mut self) {
        let c = self.compute_checksum();
        self.set_checksum(c);
    }
    /// Mutable payload.
    pub fn payload_mut(&mut self) -> &mut [u8] {
        let n = self.payload_len() as usize;
        &mut self.buffer.as_mut()[HEADER_LEN..HEADER_LEN + n]
    }
}

/// The decoded header of a Clio packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Header {
    /// Operation.
    pub opcode: Opcode,
    /// Response status (`Ok` in requests).
    pub status: Status,
    /// Whether this packet is a response.
    pub response: bool,
    /// A write that must be durable before it is acknowledged ([`FLAG_DURABLE`]).
    pub durable: bool,
    /// Global process id (0 before registration).
    pub pid: u16,
    /// Index of this packet in its request/response.
    pub pkt_index: u16,
    /// Number of packets in the request/response.
    pub pkt_count: u16,
    /// Payload bytes carried by this packet.
    pub payload_len: u16,
    /// Client-chosen request id; unique per PID among in-flight requests.
    pub req_id: u32,
    /// Base virtual address of the request.
    pub va: u64,
    /// Total data length of the request (read or write length).
    pub total_len: u32,
    /// First operand (see [`Opcode`]).
    pub arg0: u64,
    /// Second operand.
    pub arg1: u64,
    /// The remote address space's secret (requests; zero in responses and Register).
    pub key: u64,
    /// The RAS member that sent the request (assigned at Register/Join; zero in responses).
    /// Tags idempotence-ring entries together with `pid` and `req_id`.
    pub client: u16,
    /// The epoch of the sender's view (`crate::epoch`; 0 outside a pool, and in responses).
    /// A request older than its RAS's epoch is refused with `Status::Stale`.
    pub epoch: u16,
    /// The return-routability cookie of the sender's address (`crate::route_cookie`; zero in
    /// responses). Needed where an answer can be larger than twice its request.
    pub cookie: u32,
}

impl Header {
    /// A single-packet request with no payload.
    pub fn request(opcode: Opcode, pid: u16, req_id: u32, va: u64) -> Header {
        Header {
            opcode,
            status: Status::Ok,
            response: false,
            durable: false,
            pid,
            pkt_index: 0,
            pkt_count: 1,
            payload_len: 0,
            req_id,
            va,
            total_len: 0,
            arg0: 0,
            arg1: 0,
            key: 0,
            client: 0,
            epoch: 0,
            cookie: 0,
        }
    }

    /// The same request carrying the route cookie of its sender's address.
    pub fn with_cookie(self, cookie: u32) -> Header {
        Header { cookie, ..self }
    }

    /// The same request carrying the epoch of its sender's view (`crate::epoch`).
    pub fn with_epoch(self, epoch: u16) -> Header {
        Header { epoch, ..self }
    }

    /// The same request presenting the RAS credentials `(key, client)`.
    pub fn with_credentials(self, key: u64, client: u16) -> Header {
        Header {
            key,
            client,
            ..self
        }
    }

    /// The response header for this request packet: same identity, response flag, `status`,
    /// no payload, key, client, epoch and cookie zero (a response never echoes the secret); callers set
    /// `payload_len`, `pkt_index`, `pkt_count`, `arg0` as needed.
    pub fn response_to(&self, status: Status) -> Header {
        Header {
            status,
            response: true,
            durable: false,
            payload_len: 0,
            key: 0,
            client: 0,
            epoch: 0,
            cookie: 0,
            ..*self
        }
    }

    /// Parse and validate a packet (length, version, opcode, status, segmentation; not the
    /// checksum, which the ack layer checks first with [`Packet::verify_checksum`]).
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Header, WireError> {
        p.check_len()?;
        if p.version() != VERSION {
            return Err(WireError::BadVersion(p.version()));
        }
        let opcode =
            Opcode::from_u8(p.opcode_raw()).ok_or(WireError::UnknownOpcode(p.opcode_raw()))?;
        let status =
            Status::from_u8(p.status_raw()).ok_or(WireError::UnknownStatus(p.status_raw()))?;
        if p.payload_len() as usize > MAX_PAYLOAD {
            return Err(WireError::PayloadTooLong(p.payload_len()));
        }
        if p.pkt_count() == 0 || p.pkt_index() >= p.pkt_count() {
            return Err(WireError::BadPacketIndex {
                index: p.pkt_index(),
                count: p.pkt_count(),
            });
        }
        Ok(Header {
            opcode,
            status,
            response: p.flags() & FLAG_RESPONSE != 0,
            durable: p.flags() & FLAG_DURABLE != 0,
            pid: p.pid(),
            pkt_index: p.pkt_index(),
            pkt_count: p.pkt_count(),
            payload_len: p.payload_len(),
            req_id: p.req_id(),
            va: p.va(),
            total_len: p.total_len(),
            arg0: p.arg0(),
            arg1: p.arg1(),
            key: p.key(),
            client: p.client(),
            epoch: p.epoch(),
            cookie: p.cookie(),
        })
    }

    /// Write the header fields (checksum left zero) into the first [`HEADER_LEN`] bytes.
    pub fn emit_header(&self, buf: &mut [u8]) {
        let b = &mut buf[..HEADER_LEN];
        b[field::VERSION] = VERSION;
        b[field::OPCODE] = self.opcode as u8;
        b[field::STATUS] = self.status as u8;
        b[field::FLAGS] = if self.response { FLAG_RESPONSE } else { 0 }
            | if self.durable { FLAG_DURABLE } else { 0 };
        put16(b, field::PID, self.pid);
        put16(b, field::PKT_INDEX, self.pkt_index);
        put16(b, field::PKT_COUNT, self.pkt_count);
        put16(b, field::PAYLOAD_LEN, self.payload_len);
        put32(b, field::REQ_ID, self.req_id);
        put64(b, field::VA, self.va);
        put32(b, field::TOTAL_LEN, self.total_len);
        put32(b, field::CHECKSUM, 0);
        put64(b, field::ARG0, self.arg0);
        put64(b, field::ARG1, self.arg1);
        put64(b, field::KEY, self.key);
        put16(b, field::CLIENT, self.client);
        put16(b, field::EPOCH, self.epoch);
        put32(b, field::COOKIE, self.cookie);
    }

    /// Build a complete packet: header, `payload` (its length overrides `payload_len`) and a
    /// correct checksum. Panics only if `payload` exceeds [`MAX_PAYLOAD`] (a caller bug).
    pub fn to_packet(&self, payload: &[u8]) -> Vec<u8> {
        assert!(payload.len() <= MAX_PAYLOAD, "payload exceeds MAX_PAYLOAD");
        let mut h = *self;
        h.payload_len = payload.len() as u16;
        let mut v = vec![0u8; HEADER_LEN + payload.len()];
        h.emit_header(&mut v);
        v[HEADER_LEN..].copy_from_slice(payload);
        let mut p = Packet::new_unchecked(&mut v[..]);
        p.fill_checksum();
        v
    }

    /// The request's identity in the idempotence ring and the slow path's reply cache:
    /// `(pid, client, req_id)` (several processes share a pid once they join one RAS).
    pub fn identity(&self) -> (u16, u16, u32) {
        (self.pid, self.client, self.req_id)
    }
}

/// Parse, validate and checksum-verify bytes in one step (what a client does with a response).
pub fn parse_verified(bytes: &[u8]) -> Result<(Header, &[u8]), WireError> {
    let p = Packet::new_checked(bytes)?;
    if !p.verify_checksum() {
        return Err(WireError::Checksum {
            carried: p.checksum(),
            computed: p.compute_checksum(),
        });
    }
    let h = Header::parse(&p)?;
    let n = h.payload_len as usize;
    Ok((h, &bytes[HEADER_LEN..HEADER_LEN + n]))
}

/// Number of packets that carry `total_len` data bytes (at least one).
pub fn packet_count(total_len: u32) -> u16 {
    let n = (total_len as usize).div_ceil(MAX_PAYLOAD).max(1);
    n.min(u16::MAX as usize) as u16
}

/// Byte offset and length of packet `index` of a request of `total_len` bytes; `None` if
/// the index is outside the request.
pub fn segment(total_len: u32, index: u16) -> Option<(u32, u16)> {
    let off = (index as u64) << MAX_PAYLOAD_SHIFT;
    if index >= packet_count(total_len) || (off > total_len as u64) {
        return None;
    }
    let len = (total_len as u64 - off).min(MAX_PAYLOAD as u64);
    Some((off as u32, len as u16))
}

/// Check the segmentation of a data-carrying request packet (write): total length within
/// limits, count matching the length, payload of exactly the expected size.
pub fn check_write_segment(h: &Header) -> bool {
    h.total_len > 0
        && h.total_len <= MAX_REQUEST_LEN
        && h.pkt_count == packet_count(h.total_len)
        && segment(h.total_len, h.pkt_index).map(|(_, l)| l) == Some(h.payload_len)
}

/// Check a read request: one packet without payload, `1..=MAX_REQUEST_LEN` bytes, the whole
/// range inside the 48-bit VA space. Anything else is answered `BadRequest` (one packet, the
/// request's `pkt_index`/`pkt_count`) and nothing is translated.
pub fn check_read(h: &Header) -> bool {
    h.payload_len == 0
        && h.pkt_count == 1
        && h.total_len > 0
        && h.total_len <= MAX_REQUEST_LEN
        && h.va
            .checked_add(h.total_len as u64)
            .is_some_and(|end| end <= VA_LIMIT)
}

/// Header of response packet `index` of a read that passed [`check_read`]: `pkt_count` =
/// `ceil(total_len / MAX_PAYLOAD)`, `pkt_index` = `index`. With `Ok` the packet carries
/// `segment(total_len, index)` of the data; with an error it carries nothing and is the last
/// packet of the answer: packets `0..index` went out with their data, the range from packet
/// `index` on failed (the page that packet reaches first and cannot be read).
pub fn read_response(h: &Header, status: Status, index: u16) -> Header {
    Header {
        pkt_index: index,
        pkt_count: packet_count(h.total_len),
        ..h.response_to(status)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn arb_header() -> impl Strategy<Value = Header> {
        (
            prop::sample::select(Opcode::ALL.to_vec()),
            prop::sample::select(Status::ALL.to_vec()),
            (any::<bool>(), any::<bool>()),
            any::<u16>(),
            (1u16..=u16::MAX).prop_flat_map(|c| (0..c, Just(c))),
            any::<u32>(),
            any::<u64>(),
            any::<u32>(),
            any::<u64>(),
            (
                any::<u64>(),
                any::<u64>(),
                (any::<u16>(), any::<u16>()),
                any::<u32>(),
            ),
        )
            .prop_map(
                |(
                    opcode,
                    status,
                    (response, durable),
                    pid,
                    (pkt_index, pkt_count),
                    req_id,
                    va,
                    total_len,
                    arg0,
                    (arg1, key, (client, epoch), cookie),
                )| Header {
                    opcode,
                    status,
                    response,
                    durable,
                    pid,
                    pkt_index,
                    pkt_count,
                    payload_len: 0,
                    req_id,
                    va,
                    total_len,
                    arg0,
                    arg1,
                    key,
                    client,
                    epoch,
                    cookie,
                },
            )
    }

    proptest! {
        #[test]
        fn header_round_trips(h in arb_header(), payload in prop::collection::vec(any::<u8>(), 0..=MAX_PAYLOAD)) {
            let bytes = h.to_packet(&payload);
            let (back, pl) = parse_verified(&bytes).expect("valid packet parses");
            prop_assert_eq!(back, Header { payload_len: payload.len() as u16, ..h });
            prop_assert_eq!(pl, &payload[..]);
        }

        #[test]
        fn garbage_never_panics_and_is_rejected_with_a_reason(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            // Random bytes essentially never carry a valid CRC; whatever happens, no panic.
            match parse_verified(&bytes) {
                Ok((h, pl)) => prop_assert_eq!(pl.len(), h.payload_len as usize),
                Err(e) => prop_assert!(!e.to_string().is_empty()),
            }
            let p = Packet::new_unchecked(&bytes[..]);
            if p.check_len().is_ok() {
                let _ = Header::parse(&p);
                let _ = p.verify_checksum();
            }
        }

        #[test]
        fn any_single_bit_flip_is_detected(h in arb_header(), payload in prop::collection::vec(any::<u8>(), 0..64), bit in any::<prop::sample::Index>()) {
            let mut bytes = h.to_packet(&payload);
            let i = bit.index(bytes.len() * 8);
            bytes[i / 8] ^= 1 << (i % 8);
            prop_assert!(parse_verified(&bytes).is_err());
        }

        #[test]
        fn segments_tile_the_request(total in 1u32..=MAX_REQUEST_LEN) {
            let n = packet_count(total);
            let mut next = 0u32;
            for i in 0..n {
                let (off, len) = segment(total, i).unwrap();
                prop_assert_eq!(off, next);
                prop_assert!(len as usize <= MAX_PAYLOAD && len > 0);
                next += len as u32;
            }
            prop_assert_eq!(next, total);
            prop_assert!(segment(total, n).is_none());
        }
    }

    #[test]
    fn reads_up_to_a_mebibyte_inside_the_va_space() {
        let read = |va: u64, len: u32| Header {
            total_len: len,
            ..Header::request(Opcode::Read, 1, 2, va)
        };
        for len in [1, 1024, 1025, 64 << 10, MAX_REQUEST_LEN] {
            assert!(check_read(&read(0x1000, len)), "{len}");
            let r = read_response(&read(0x1000, len), Status::Ok, 0);
            assert_eq!(r.pkt_count as usize, (len as usize).div_ceil(MAX_PAYLOAD));
            assert!(r.response && r.status == Status::Ok && r.pkt_index == 0);
        }
        // Hostile lengths and ranges: empty, one byte too long, ending past the VA space or
        // wrapping 2^64.
        assert!(!check_read(&read(0x1000, 0)));
        assert!(!check_read(&read(0x1000, MAX_REQUEST_LEN + 1)));
        assert!(!check_read(&read(0x1000, u32::MAX)));
        assert!(check_read(&read(VA_LIMIT - 4096, 4096)));
        assert!(!check_read(&read(VA_LIMIT - 4096, 4097)));
        assert!(!check_read(&read(VA_LIMIT, 1)));
        assert!(!check_read(&read(u64::MAX - 10, 1024)));
        // One request packet, no payload.
        assert!(!check_read(&Header {
            pkt_count: 2,
            ..read(0x1000, 2048)
        }));
        assert!(!check_read(&Header {
            payload_len: 1,
            ..read(0x1000, 2048)
        }));
        // An error packet names the first packet that did not go out.
        let e = read_response(&read(0x1000, 5000), Status::Unmapped, 3);
        assert_eq!((e.pkt_index, e.pkt_count, e.payload_len), (3, 5, 0));
    }

    #[test]
    fn short_buffers_are_truncated() {
        for n in 0..HEADER_LEN {
            let v = vec![0u8; n];
            assert!(matches!(
                Packet::new_checked(&v[..]),
                Err(WireError::Truncated { .. })
            ));
        }
        let mut v = Header::request(Opcode::Read, 1, 2, 3).to_packet(&[1, 2, 3]);
        v.pop();
        assert!(matches!(
            parse_verified(&v),
            Err(WireError::Truncated { have: 66, need: 67 })
        ));
    }

    #[test]
    fn rejects_bad_fields_with_reasons() {
        let good = Header::request(Opcode::Read, 1, 2, 3).to_packet(&[]);
        let reject = |i: usize, v: u8| {
            let mut b = good.clone();
            b[i] = v;
            let mut p = Packet::new_unchecked(&mut b[..]);
            p.fill_checksum();
            parse_verified(&b).unwrap_err()
        };
        assert_eq!(reject(0, 9), WireError::BadVersion(9));
        assert_eq!(reject(1, 0x99), WireError::UnknownOpcode(0x99));
        assert_eq!(reject(2, 77), WireError::UnknownStatus(77));
        assert_eq!(
            reject(9, 0),
            WireError::BadPacketIndex { index: 0, count: 0 }
        );
    }
}
