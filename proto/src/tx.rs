//! Transactions: the redo record a client writes into a transaction log in its remote address
//! space, and that the node's slow path applies (docs/durability.md, "Transactions").
//!
//! A *transaction log* is a region of the client's RAS registered with [`crate::Opcode::TxLog`].
//! It holds one record at a time, at its first byte. A commit is two round trips:
//!
//! 1. the client writes the whole record with one multi-packet durable write
//!    ([`crate::header::FLAG_DURABLE`]); once every packet is acknowledged the record is in the
//!    persistence domain, sealed by its CRC: the transaction is **committed**;
//! 2. [`crate::Opcode::TxApply`] asks the slow path to apply it: it reads the record from DRAM,
//!    checks it, checks every target (in the RAS, writable, page mapped) before it writes any,
//!    writes all entries, flushes them, and records `applied = seq` in the node's metadata log
//!    before it answers.
//!
//! Recovery applies a committed record whose sequence number is above the log's applied one
//! and drops a torn one (its CRC does not check). Record layout, little-endian:
//!
//! ```text
//! +0   magic u32 "CLTX"      +4  version u16      +6  reserved u16 (0)
//! +8   seq u64 (> 0, increasing per log)
//! +16  entries u32           +20 body_len u32 (bytes after this 32-byte header)
//! +24  crc u32: CRC-32C of bytes 0..24 then the body
//! +28  reserved u32 (0)
//! body: entries x { va u64, len u32, reserved u32 (0), data[len], zero pad to 8 bytes }
//! ```

use crate::checksum::{crc32c, crc32c_append};
use crate::consts::VA_LIMIT;
use thiserror::Error;

/// "CLTX".
pub const TX_MAGIC: u32 = u32::from_le_bytes(*b"CLTX");
/// Record format version.
pub const TX_VERSION: u16 = 1;
/// Bytes of the record header.
pub const TX_HEADER_BYTES: usize = 32;
/// Bytes of an entry's header (va, len, reserved).
pub const TX_ENTRY_HEADER_BYTES: usize = 16;
/// Most entries in one record.
pub const TX_MAX_ENTRIES: usize = 256;
/// Largest record (header + body): the bound the slow path reads and a log region must hold.
pub const TX_MAX_RECORD_BYTES: usize = 256 << 10;
/// Transaction logs one RAS may register.
pub const TX_MAX_LOGS_PER_RAS: usize = 64;

/// Why bytes are not a committed record.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum TxError {
    /// Shorter than a header, or than its own body length.
    #[error("record truncated: {have} bytes, needs {need}")]
    Truncated {
        /// Bytes available.
        have: usize,
        /// Bytes the record says it has.
        need: usize,
    },
    /// Not a record (magic) or another version.
    #[error("not a transaction record of version {TX_VERSION}")]
    NotARecord,
    /// The CRC does not check: torn (crashed mid-write) or overwritten.
    #[error("record torn: its CRC does not check")]
    Torn,
    /// Sealed, but the entries do not parse exactly into the body (or break a bound).
    #[error("record malformed: {0}")]
    Malformed(&'static str),
}

/// One write of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxEntry<'a> {
    /// Target virtual address in the RAS.
    pub va: u64,
    /// Bytes to write there.
    pub data: &'a [u8],
}

/// A checked record: a view over bytes read from a log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxRecord<'a> {
    /// Sequence number.
    pub seq: u64,
    /// Entries, in order (a later one wins where two overlap).
    pub entries: Vec<TxEntry<'a>>,
}

fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// Bytes of a record with entries of these lengths (what a log region must hold).
pub fn record_len(lens: impl IntoIterator<Item = usize>) -> usize {
    TX_HEADER_BYTES
        + lens
            .into_iter()
            .map(|l| TX_ENTRY_HEADER_BYTES + pad8(l))
            .sum::<usize>()
}

/// The body length a header declares, if `head` starts like a record (magic and version): what
/// a reader must fetch after the header. `None` if it is not a record.
pub fn declared_len(head: &[u8]) -> Option<usize> {
    if head.len() < TX_HEADER_BYTES
        || u32::from_le_bytes(head[0..4].try_into().ok()?) != TX_MAGIC
        || u16::from_le_bytes(head[4..6].try_into().ok()?) != TX_VERSION
    {
        return None;
    }
    let body = u32::from_le_bytes(head[20..24].try_into().ok()?) as usize;
    Some(TX_HEADER_BYTES.saturating_add(body))
}

/// Encode a record. Panics (a caller bug, not input) if an entry is empty, targets beyond the
/// VA space, or the record breaks [`TX_MAX_ENTRIES`] / [`TX_MAX_RECORD_BYTES`]: CLib checks
/// those first and returns an error.
pub fn encode(seq: u64, entries: &[TxEntry<'_>]) -> Vec<u8> {
    assert!(seq > 0, "sequence numbers start at 1");
    assert!(entries.len() <= TX_MAX_ENTRIES, "too many entries");
    let total = record_len(entries.iter().map(|e| e.data.len()));
    assert!(total <= TX_MAX_RECORD_BYTES, "record too large");
    let mut b = vec![0u8; total];
    b[0..4].copy_from_slice(&TX_MAGIC.to_le_bytes());
    b[4..6].copy_from_slice(&TX_VERSION.to_le_bytes());
    b[8..16].copy_from_slice(&seq.to_le_bytes());
    b[16..20].copy_from_slice(&(entries.len() as u32).to_le_bytes());
    b[20..24].copy_from_slice(&((total - TX_HEADER_BYTES) as u32).to_le_bytes());
    let mut at = TX_HEADER_BYTES;
    for e in entries {
        assert!(!e.data.is_empty(), "empty entry");
        assert!(
            e.va.checked_add(e.data.len() as u64)
                .is_some_and(|end| end <= VA_LIMIT),
            "entry beyond the VA space"
        );
        b[at..at + 8].copy_from_slice(&e.va.to_le_bytes());
        b[at + 8..at + 12].copy_from_slice(&(e.data.len() as u32).to_le_bytes());
        at += TX_ENTRY_HEADER_BYTES;
        b[at..at + e.data.len()].copy_from_slice(e.data);
        at += pad8(e.data.len());
    }
    let crc = crc32c_append(crc32c(&b[0..24]), &b[TX_HEADER_BYTES..]);
    b[24..28].copy_from_slice(&crc.to_le_bytes());
    b
}

/// Check and parse a record at the start of `b` (bytes after it are ignored). Everything in `b`
/// is untrusted: a client writes its own log, so lengths are checked before use.
pub fn parse(b: &[u8]) -> Result<TxRecord<'_>, TxError> {
    if b.len() < TX_HEADER_BYTES {
        return Err(TxError::Truncated {
            have: b.len(),
            need: TX_HEADER_BYTES,
        });
    }
    let total = declared_len(b).ok_or(TxError::NotARecord)?;
    if total > TX_MAX_RECORD_BYTES {
        return Err(TxError::Malformed("longer than TX_MAX_RECORD_BYTES"));
    }
    if b.len() < total {
        return Err(TxError::Truncated {
            have: b.len(),
            need: total,
        });
    }
    let word = |o: usize| u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    // The only bytes the CRC does not cover: they must be zero.
    if word(28) != 0 {
        return Err(TxError::Malformed("reserved header bytes set"));
    }
    let crc = crc32c_append(crc32c(&b[0..24]), &b[TX_HEADER_BYTES..total]);
    if crc != word(24) {
        return Err(TxError::Torn);
    }
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&b[8..16]);
    let seq = u64::from_le_bytes(seq);
    if seq == 0 {
        return Err(TxError::Malformed("sequence number 0"));
    }
    let n = word(16) as usize;
    if n == 0 || n > TX_MAX_ENTRIES {
        return Err(TxError::Malformed("entry count out of range"));
    }
    let mut entries = Vec::with_capacity(n);
    let mut at = TX_HEADER_BYTES;
    for _ in 0..n {
        if total - at < TX_ENTRY_HEADER_BYTES {
            return Err(TxError::Malformed("entry header past the body"));
        }
        let mut va = [0u8; 8];
        va.copy_from_slice(&b[at..at + 8]);
        let va = u64::from_le_bytes(va);
        let len = word(at + 8) as usize;
        at += TX_ENTRY_HEADER_BYTES;
        if len == 0 || pad8(len) > total - at {
            return Err(TxError::Malformed("entry length out of range"));
        }
        if va.checked_add(len as u64).is_none_or(|end| end > VA_LIMIT) {
            return Err(TxError::Malformed("entry beyond the VA space"));
        }
        entries.push(TxEntry {
            va,
            data: &b[at..at + len],
        });
        at += pad8(len);
    }
    if at != total {
        return Err(TxError::Malformed("bytes after the last entry"));
    }
    Ok(TxRecord { seq, entries })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<u8> {
        encode(
            7,
            &[
                TxEntry {
                    va: 0x40_0000,
                    data: b"hello",
                },
                TxEntry {
                    va: 0x80_0010,
                    data: &[9u8; 24],
                },
            ],
        )
    }

    #[test]
    fn round_trip() {
        let b = sample();
        assert_eq!(b.len(), record_len([5, 24]));
        assert_eq!(declared_len(&b), Some(b.len()));
        let r = parse(&b).unwrap();
        assert_eq!(r.seq, 7);
        assert_eq!(r.entries.len(), 2);
        assert_eq!(r.entries[0].data, b"hello");
        assert_eq!(r.entries[1].va, 0x80_0010);
        // trailing bytes (the rest of the log region) are ignored
        let mut longer = b.clone();
        longer.extend_from_slice(&[0xEE; 100]);
        assert_eq!(parse(&longer).unwrap(), r);
    }

    #[test]
    fn every_torn_prefix_and_every_flipped_byte_is_refused() {
        let b = sample();
        for cut in 0..b.len() {
            // a crash mid-write leaves a prefix of the new record over zeros (a fresh log)
            let mut torn = vec![0u8; b.len()];
            torn[..cut].copy_from_slice(&b[..cut]);
            assert!(parse(&torn).is_err(), "prefix of {cut} bytes accepted");
        }
        for i in 0..b.len() {
            let mut bad = b.clone();
            bad[i] ^= 0x20;
            assert!(parse(&bad).is_err(), "byte {i} flipped accepted");
        }
    }

    #[test]
    fn hostile_sealed_records_are_refused() {
        // A client seals whatever it likes: lengths must still be checked.
        let reseal = |mut b: Vec<u8>| {
            let crc = crc32c_append(crc32c(&b[0..24]), &b[TX_HEADER_BYTES..]);
            b[24..28].copy_from_slice(&crc.to_le_bytes());
            b
        };
        let mut b = sample();
        b[16..20].copy_from_slice(&3u32.to_le_bytes()); // one entry more than the body holds
        assert!(matches!(parse(&reseal(b)), Err(TxError::Malformed(_))));
        let mut b = sample();
        b[TX_HEADER_BYTES + 8..TX_HEADER_BYTES + 12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(parse(&reseal(b)), Err(TxError::Malformed(_))));
        let mut b = sample();
        b[TX_HEADER_BYTES..TX_HEADER_BYTES + 8].copy_from_slice(&(VA_LIMIT - 2).to_le_bytes());
        assert!(matches!(parse(&reseal(b)), Err(TxError::Malformed(_))));
        let mut b = sample();
        b[20..24].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(parse(&reseal(b)), Err(TxError::Malformed(_))));
        let mut b = sample();
        b[8..16].copy_from_slice(&0u64.to_le_bytes());
        assert!(matches!(parse(&reseal(b)), Err(TxError::Malformed(_))));
        let mut b = sample();
        b[16..20].copy_from_slice(&1u32.to_le_bytes()); // bytes left after the last entry
        assert!(matches!(parse(&reseal(b)), Err(TxError::Malformed(_))));
        assert_eq!(parse(&[0u8; 64]), Err(TxError::NotARecord));
    }
}
