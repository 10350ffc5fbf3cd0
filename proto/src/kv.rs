//! Clio-KV (Clio section 4.6): a key-value store that runs at the memory node as an offload,
//! in an address space of its own. What its requests carry and answer ([`KvRequest`]), and how
//! the store lays its chained hash table and records out in its own RAS ([`StoreLayout`],
//! [`RecordHeader`]). `docs/protocol.md` section 10 and `docs/offloads.md` describe it.
//!
//! Requests ([`crate::Opcode::KvGet`], [`crate::Opcode::KvPut`], [`crate::Opcode::KvDelete`]):
//! one packet, `va` = `arg0` = `arg1` = 0, `total_len` = `payload_len`, payload =
//! `key_len: u16 LE ++ value_len: u16 LE ++ key ++ value` ([`PREFIX_BYTES`] + key + value;
//! gets and deletes carry no value). The key is namespaced by the request's RAS (`pid`): a
//! tenant can never see or change another RAS's keys; members that joined one RAS share its
//! keys.
//!
//! Answers (status [`crate::Status::Ok`]; `arg0` = [`HIT`] or [`MISS`]):
//! * get: hit = payload is the whole committed value (possibly empty); miss = no such key;
//! * put (create or update): hit = an old value was replaced, miss = the key was created;
//! * delete: hit = the key was removed (its record freed), miss = there was no such key.
//!
//! Values longer than one packet leaves room for (up to [`MAX_STAGED_VALUE`], the paper's
//! 1 KiB) travel as a staged put ([`crate::Opcode::KvPutStaged`], [`KvStagedPut`]): the client
//! writes the value into its own RAS, then sends the key with the value's address, length and
//! [`value_check`]; the node reads the value through the caller's translation and applies the
//! put only if the check matches (else [`crate::Status::RetryLater`]: the write has not landed
//! yet; nothing changes, nothing is recorded). Both requests go out back to back, so a staged
//! put costs one round trip when they arrive in order.
//!
//! Errors: [`crate::Status::BadRequest`] for a malformed request (nothing changes),
//! [`crate::Status::OutOfMemory`] when a put needs a record and the store has none free
//! (nothing changes), [`crate::Status::QuotaExceeded`] with `arg1` =
//! [`crate::quota::Quota::KvRecords`] when a put needs a record and its RAS holds its quota
//! ([`SB_RAS_RECORDS`]; nothing changes, nothing is recorded in the idempotence ring),
//! [`crate::Status::RetryLater`] while the store's own RAS is being set
//! up or the idempotence ring is full, [`crate::Status::Unsupported`] on a node without
//! offloads.

use crate::consts::{KEY_TABLE_ENTRIES, MAX_PAYLOAD};
use crate::Header;
use thiserror::Error;

/// Bytes before the key in a request payload: key length and value length, u16 LE each.
pub const PREFIX_BYTES: usize = 4;
/// Longest key (bytes). Keys are 1..=`MAX_KEY` bytes.
pub const MAX_KEY: usize = 64;
/// Longest value (bytes) a put carries in its packet: a put of the longest key and value is
/// one packet.
pub const MAX_VALUE: usize = MAX_PAYLOAD - PREFIX_BYTES - MAX_KEY;
/// Longest value of a staged put ([`KvStagedPut`]), and so of any stored value: what one get
/// answer carries (the paper's YCSB values are 1 KiB).
pub const MAX_STAGED_VALUE: usize = MAX_PAYLOAD;

/// Default bytes of the store's region (the slow path's `--kv-store-bytes`): 16 MiB, room for
/// `StoreLayout::fit(_, DEFAULT_STORE_BYTES).records` = 15,048 records of up to
/// [`MAX_STAGED_VALUE`] bytes.
pub const DEFAULT_STORE_BYTES: u64 = 16 << 20;

/// The check a staged put carries for its value: xxh64 of the value, seed
/// [`VALUE_CHECK_SEED`]. The node applies the put only if the bytes it reads hash to it.
pub fn value_check(value: &[u8]) -> u64 {
    xxhash_rust::xxh64::xxh64(value, VALUE_CHECK_SEED)
}

/// Seed of [`value_check`] (ASCII "CKVSTAGE").
pub const VALUE_CHECK_SEED: u64 = u64::from_le_bytes(*b"CKVSTAGE");

/// A staged put ([`crate::Opcode::KvPutStaged`]), borrowed from its packet: the key in the
/// payload (`key_len u16 LE ++ value_len u16 LE ++ key`), the value `len` bytes at `va` of the
/// caller's RAS, `check` = [`value_check`] of it in `arg1`; `arg0` zero, one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvStagedPut<'a> {
    /// The key (1..=[`MAX_KEY`] bytes).
    pub key: &'a [u8],
    /// Where the value is in the caller's RAS.
    pub va: u64,
    /// The value's length (1..=[`MAX_STAGED_VALUE`]).
    pub len: usize,
    /// [`value_check`] of the value.
    pub check: u64,
}

impl<'a> KvStagedPut<'a> {
    /// A staged put of `value` (staged at `va`), checked against the bounds.
    pub fn new(key: &'a [u8], va: u64, value: &[u8]) -> Result<Self, KvFormatError> {
        if key.is_empty() || key.len() > MAX_KEY {
            return Err(KvFormatError::KeyLength(key.len()));
        }
        if value.is_empty() || value.len() > MAX_STAGED_VALUE {
            return Err(KvFormatError::ValueLength(value.len()));
        }
        Ok(KvStagedPut {
            key,
            va,
            len: value.len(),
            check: value_check(value),
        })
    }

    /// The payload bytes (prefix and key).
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(PREFIX_BYTES + self.key.len());
        p.extend_from_slice(&(self.key.len() as u16).to_le_bytes());
        p.extend_from_slice(&(self.len as u16).to_le_bytes());
        p.extend_from_slice(self.key);
        p
    }

    /// The request header (one packet; the caller adds credentials).
    pub fn header(&self, pid: u16, req_id: u32) -> Header {
        let len = PREFIX_BYTES + self.key.len();
        Header {
            total_len: len as u32,
            payload_len: len as u16,
            arg1: self.check,
            ..Header::request(crate::Opcode::KvPutStaged, pid, req_id, self.va)
        }
    }

    /// Check a received staged put (hostile until this says otherwise).
    pub fn decode(h: &Header, payload: &'a [u8]) -> Result<Self, KvFormatError> {
        if h.opcode != crate::Opcode::KvPutStaged {
            return Err(KvFormatError::NotKv);
        }
        if h.pkt_count != 1 || h.pkt_index != 0 {
            return Err(KvFormatError::Framing("one packet per request"));
        }
        if h.arg0 != 0 {
            return Err(KvFormatError::Framing("arg0 must be zero"));
        }
        if h.total_len as usize != payload.len() || h.payload_len as usize != payload.len() {
            return Err(KvFormatError::Framing("total_len must equal the payload"));
        }
        let (prefix, key) = payload
            .split_first_chunk::<PREFIX_BYTES>()
            .ok_or(KvFormatError::Framing("shorter than the length prefix"))?;
        let key_len = u16::from_le_bytes([prefix[0], prefix[1]]) as usize;
        let len = u16::from_le_bytes([prefix[2], prefix[3]]) as usize;
        if key_len != key.len() {
            return Err(KvFormatError::Framing(
                "key length disagrees with the payload",
            ));
        }
        if key.is_empty() || key.len() > MAX_KEY {
            return Err(KvFormatError::KeyLength(key.len()));
        }
        if len == 0 || len > MAX_STAGED_VALUE {
            return Err(KvFormatError::ValueLength(len));
        }
        Ok(KvStagedPut {
            key,
            va: h.va,
            len,
            check: h.arg1,
        })
    }
}
/// `arg0` of an answer: the key was there (get: value returned; put: replaced; delete: removed).
pub const HIT: u64 = 1;
/// `arg0` of an answer: the key was not there (get/delete: nothing; put: created).
pub const MISS: u64 = 0;

/// Why a KV request is malformed (the node answers [`crate::Status::BadRequest`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum KvFormatError {
    /// The key is empty or longer than [`MAX_KEY`].
    #[error("key of {0} bytes (1..={MAX_KEY})")]
    KeyLength(usize),
    /// The value is longer than [`MAX_VALUE`], or a get/delete carries one.
    #[error("value of {0} bytes not allowed here (puts: 0..={MAX_VALUE}, gets and deletes: 0)")]
    ValueLength(usize),
    /// The payload is not `PREFIX_BYTES + key_len + value_len` bytes, or the header's
    /// lengths, segmentation or operand fields disagree with it.
    #[error("payload framing: {0}")]
    Framing(&'static str),
    /// Not a KV opcode.
    #[error("not a KV opcode")]
    NotKv,
}

/// One KV request, borrowed from its packet (zero-copy).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvRequest<'a> {
    /// The key (1..=[`MAX_KEY`] bytes).
    pub key: &'a [u8],
    /// The value (puts only; empty for gets and deletes).
    pub value: &'a [u8],
}

/// Whether an opcode is one of Clio-KV's.
pub fn is_kv(op: crate::Opcode) -> bool {
    matches!(
        op,
        crate::Opcode::KvGet
            | crate::Opcode::KvPut
            | crate::Opcode::KvDelete
            | crate::Opcode::KvPutStaged
    )
}

impl<'a> KvRequest<'a> {
    /// A request, checked against the bounds (`op` decides whether a value is allowed).
    pub fn new(op: crate::Opcode, key: &'a [u8], value: &'a [u8]) -> Result<Self, KvFormatError> {
        if !is_kv(op) {
            return Err(KvFormatError::NotKv);
        }
        if op == crate::Opcode::KvPutStaged {
            return Err(KvFormatError::Framing("a staged put is a KvStagedPut"));
        }
        if key.is_empty() || key.len() > MAX_KEY {
            return Err(KvFormatError::KeyLength(key.len()));
        }
        let value_max = if op == crate::Opcode::KvPut {
            MAX_VALUE
        } else {
            0
        };
        if value.len() > value_max {
            return Err(KvFormatError::ValueLength(value.len()));
        }
        Ok(KvRequest { key, value })
    }

    /// The payload bytes (prefix, key, value).
    pub fn encode(&self) -> Vec<u8> {
        let mut p = Vec::with_capacity(PREFIX_BYTES + self.key.len() + self.value.len());
        p.extend_from_slice(&(self.key.len() as u16).to_le_bytes());
        p.extend_from_slice(&(self.value.len() as u16).to_le_bytes());
        p.extend_from_slice(self.key);
        p.extend_from_slice(self.value);
        p
    }

    /// The request header (one packet; the caller adds credentials).
    pub fn header(&self, op: crate::Opcode, pid: u16, req_id: u32) -> Header {
        let len = PREFIX_BYTES + self.key.len() + self.value.len();
        Header {
            total_len: len as u32,
            payload_len: len as u16,
            ..Header::request(op, pid, req_id, 0)
        }
    }

    /// Check a received request (header and payload from the network: hostile until this
    /// says otherwise).
    pub fn decode(h: &Header, payload: &'a [u8]) -> Result<Self, KvFormatError> {
        if h.pkt_count != 1 || h.pkt_index != 0 {
            return Err(KvFormatError::Framing("one packet per request"));
        }
        if h.va != 0 || h.arg0 != 0 || h.arg1 != 0 {
            return Err(KvFormatError::Framing("va, arg0 and arg1 must be zero"));
        }
        if h.total_len as usize != payload.len() || h.payload_len as usize != payload.len() {
            return Err(KvFormatError::Framing("total_len must equal the payload"));
        }
        let (prefix, rest) = payload
            .split_first_chunk::<PREFIX_BYTES>()
            .ok_or(KvFormatError::Framing("shorter than the length prefix"))?;
        let key_len = u16::from_le_bytes([prefix[0], prefix[1]]) as usize;
        let value_len = u16::from_le_bytes([prefix[2], prefix[3]]) as usize;
        if key_len + value_len != rest.len() {
            return Err(KvFormatError::Framing(
                "key and value lengths disagree with the payload",
            ));
        }
        let (key, value) = rest.split_at(key_len);
        KvRequest::new(h.opcode, key, value)
    }
}

/// Where the store's structures sit in its own RAS, from the base of its one allocation:
/// a superblock ([`SUPERBLOCK_BYTES`]: the `SB_*` words, u64 LE each), the count table
/// ([`COUNT_TABLE_BYTES`]: the live records of each RAS, a u64 LE per PID, [`StoreLayout::count`]),
/// `buckets` chain heads (u64 LE: the address of a record, 0 = empty), then `records` record
/// slots of [`RECORD_BYTES`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLayout {
    /// Base address of the region in the store's RAS.
    pub base: u64,
    /// Chain heads (a power of two).
    pub buckets: u64,
    /// Record slots.
    pub records: u64,
}

/// Bytes of the superblock.
pub const SUPERBLOCK_BYTES: u64 = 64;
/// Superblock word: magic ([`STORE_MAGIC`]).
pub const SB_MAGIC: u64 = 0;
/// Superblock word: head of the free-record list (an address, 0 = empty).
pub const SB_FREE_HEAD: u64 = 8;
/// Superblock word: records handed out from the never-used tail so far.
pub const SB_HIGH_WATER: u64 = 16;
/// Superblock word: live records.
pub const SB_LIVE: u64 = 24;
/// Superblock word: the records one RAS may hold ([`crate::quota::Quota::KvRecords`]; 0: no
/// limit), written by the slow path as it formats the store. A put that needs a record while
/// its RAS's count ([`StoreLayout::count`]) is at it is answered QUOTA_EXCEEDED.
pub const SB_RAS_RECORDS: u64 = 32;
/// Magic of an initialised store ("CLIOKV02": the layout with the count table).
pub const STORE_MAGIC: u64 = u64::from_le_bytes(*b"CLIOKV02");
/// An empty store's superblock: the magic and `ras_records` (the records one RAS may hold, 0:
/// no limit); free-list head, high-water mark and live count zero. With the count table, heads
/// and records on zeroed memory, that is a formatted store.
pub fn empty_superblock(ras_records: u64) -> [u8; SUPERBLOCK_BYTES as usize] {
    let mut sb = [0u8; SUPERBLOCK_BYTES as usize];
    for (word, v) in [(SB_MAGIC, STORE_MAGIC), (SB_RAS_RECORDS, ras_records)] {
        sb[word as usize..word as usize + 8].copy_from_slice(&v.to_le_bytes());
    }
    sb
}
/// Bytes of the count table: a u64 per PID of the key table (a request's PID is below
/// `KEY_TABLE_ENTRIES` once its key is checked).
pub const COUNT_TABLE_BYTES: u64 = KEY_TABLE_ENTRIES as u64 * 8;
/// Offset of the chain heads from the store's base: the superblock, then the count table.
pub const HEADS_OFFSET: u64 = SUPERBLOCK_BYTES + COUNT_TABLE_BYTES;
/// Bytes of a record's header ([`RecordHeader`]).
pub const RECORD_HEADER_BYTES: usize = 16;
/// Bytes of one record slot: header, the longest key, the longest (staged) value, 8-byte
/// aligned.
pub const RECORD_BYTES: u64 =
    ((RECORD_HEADER_BYTES + MAX_KEY + MAX_STAGED_VALUE) as u64).next_multiple_of(8);

impl StoreLayout {
    /// The largest layout that fits `bytes` at `base`: records take what the superblock and
    /// a power-of-two table of at least one head per record leave. `None` if not even one
    /// record fits.
    pub fn fit(base: u64, bytes: u64) -> Option<StoreLayout> {
        let room = bytes.checked_sub(HEADS_OFFSET)?;
        // Each record needs RECORD_BYTES plus at most 16 bytes of (power-of-two) heads.
        let mut records = room / (RECORD_BYTES + 8);
        loop {
            if records == 0 {
                return None;
            }
            let buckets = records.next_power_of_two();
            if buckets * 8 + records * RECORD_BYTES <= room {
                return Some(StoreLayout {
                    base,
                    buckets,
                    records,
                });
            }
            records -= 1;
        }
    }

    /// Bytes the layout spans.
    pub fn bytes(&self) -> u64 {
        HEADS_OFFSET + self.buckets * 8 + self.records * RECORD_BYTES
    }

    /// Address of the count of live records of the RAS `owner` (its PID's low bits: PIDs
    /// that pass the key check are below `KEY_TABLE_ENTRIES`).
    pub fn count(&self, owner: u16) -> u64 {
        self.base + SUPERBLOCK_BYTES + 8 * (owner as u64 & (KEY_TABLE_ENTRIES as u64 - 1))
    }

    /// Address of the chain head of `bucket`.
    pub fn head(&self, bucket: u64) -> u64 {
        self.base + HEADS_OFFSET + 8 * (bucket & (self.buckets - 1))
    }

    /// Address of record slot `i`.
    pub fn record(&self, i: u64) -> u64 {
        self.base + HEADS_OFFSET + self.buckets * 8 + i * RECORD_BYTES
    }

    /// Whether `va` is the address of a record slot (a chain or free-list link read back
    /// from memory is checked with this before it is followed).
    pub fn is_record(&self, va: u64) -> bool {
        let first = self.record(0);
        va >= first && va < self.record(self.records) && (va - first).is_multiple_of(RECORD_BYTES)
    }

    /// The bucket of `key` in the RAS `owner`.
    pub fn bucket(&self, owner: u16, key: &[u8]) -> u64 {
        key_hash(owner, key) & (self.buckets - 1)
    }
}

/// The hash a key is placed by: xxh32 of `owner as u16 LE ++ key`, seed [`KEY_HASH_SEED`].
pub fn key_hash(owner: u16, key: &[u8]) -> u64 {
    let mut h = xxhash_rust::xxh32::Xxh32::new(KEY_HASH_SEED);
    h.update(&owner.to_le_bytes());
    h.update(key);
    h.digest() as u64
}

/// Seed of [`key_hash`] (ASCII "CKV1").
pub const KEY_HASH_SEED: u32 = 0x434B_5631;

/// A record's header: `next` (u64 LE: the next record of the chain or of the free list, 0 =
/// end), then `owner` (the RAS pid whose key it is), `key_len`, `value_len` (u16 LE each),
/// 2 bytes zero; key and value follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordHeader {
    /// The next record.
    pub next: u64,
    /// The RAS the key belongs to.
    pub owner: u16,
    /// Key bytes.
    pub key_len: u16,
    /// Value bytes.
    pub value_len: u16,
}

impl RecordHeader {
    /// Its bytes.
    pub fn encode(&self) -> [u8; RECORD_HEADER_BYTES] {
        let mut b = [0u8; RECORD_HEADER_BYTES];
        b[..8].copy_from_slice(&self.next.to_le_bytes());
        b[8..10].copy_from_slice(&self.owner.to_le_bytes());
        b[10..12].copy_from_slice(&self.key_len.to_le_bytes());
        b[12..14].copy_from_slice(&self.value_len.to_le_bytes());
        b
    }

    /// Read one back (from the store's own memory, still checked: lengths within bounds).
    pub fn decode(b: &[u8; RECORD_HEADER_BYTES]) -> Option<RecordHeader> {
        let word = |i: usize| u16::from_le_bytes([b[i], b[i + 1]]);
        let mut next = [0u8; 8];
        next.copy_from_slice(&b[..8]);
        let h = RecordHeader {
            next: u64::from_le_bytes(next),
            owner: word(8),
            key_len: word(10),
            value_len: word(12),
        };
        (h.key_len as usize <= MAX_KEY && h.value_len as usize <= MAX_STAGED_VALUE).then_some(h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Opcode;

    #[test]
    fn requests_round_trip_and_the_longest_fits_one_packet() {
        let key = [7u8; MAX_KEY];
        let value = vec![9u8; MAX_VALUE];
        let r = KvRequest::new(Opcode::KvPut, &key, &value).unwrap();
        let p = r.encode();
        assert_eq!(p.len(), MAX_PAYLOAD);
        let h = r.header(Opcode::KvPut, 3, 1);
        assert_eq!(KvRequest::decode(&h, &p), Ok(r));
        let g = KvRequest::new(Opcode::KvGet, b"k", b"").unwrap();
        let gp = g.encode();
        assert_eq!(gp, [1, 0, 0, 0, b'k']);
        assert_eq!(
            KvRequest::decode(&g.header(Opcode::KvGet, 3, 2), &gp),
            Ok(g)
        );
    }

    #[test]
    fn malformed_requests_are_refused() {
        use KvFormatError::*;
        assert_eq!(KvRequest::new(Opcode::KvGet, b"", b""), Err(KeyLength(0)));
        assert_eq!(
            KvRequest::new(Opcode::KvGet, &[0; MAX_KEY + 1], b""),
            Err(KeyLength(MAX_KEY + 1))
        );
        assert_eq!(
            KvRequest::new(Opcode::KvDelete, b"k", b"v"),
            Err(ValueLength(1))
        );
        assert_eq!(
            KvRequest::new(Opcode::KvPut, b"k", &[0; MAX_VALUE + 1]),
            Err(ValueLength(MAX_VALUE + 1))
        );
        assert_eq!(KvRequest::new(Opcode::Read, b"k", b""), Err(NotKv));
        let ok = KvRequest::new(Opcode::KvPut, b"key", b"value").unwrap();
        let h = ok.header(Opcode::KvPut, 1, 1);
        let p = ok.encode();
        let framing = |h: &Header, p: &[u8]| matches!(KvRequest::decode(h, p), Err(Framing(_)));
        assert!(framing(&Header { arg0: 1, ..h }, &p));
        assert!(framing(&Header { va: 8, ..h }, &p));
        assert!(framing(&Header { pkt_count: 2, ..h }, &p));
        assert!(framing(&Header { total_len: 3, ..h }, &p));
        let short = Header {
            total_len: 3,
            payload_len: 3,
            ..h
        };
        assert!(framing(&short, &p[..3]));
        // Lengths that claim more (or less) than the payload holds.
        let mut bad = p.clone();
        bad[0] = 200;
        assert!(framing(&h, &bad));
        bad[0] = 2;
        assert!(framing(&h, &bad));
        // Every prefix of a valid payload, and every length pair, is refused or exact.
        for k in 0..=u8::MAX {
            let mut q = p.clone();
            q[0] = k;
            let r = KvRequest::decode(&h, &q);
            assert!(r.is_err() || k == 3, "{k}");
        }
    }

    #[test]
    fn layouts_fit_their_region_and_name_only_record_slots() {
        assert_eq!(StoreLayout::fit(0x1000, HEADS_OFFSET), None);
        const { assert!(KEY_TABLE_ENTRIES.is_power_of_two()) };
        for bytes in [HEADS_OFFSET + 4096, 1 << 20, 16 << 20, (16 << 20) + 12345] {
            let l = StoreLayout::fit(0x40_0000, bytes).unwrap();
            assert!(l.bytes() <= bytes, "{l:?}");
            assert!(l.buckets.is_power_of_two() && l.buckets >= l.records);
            // one more record would not fit
            let more = StoreLayout {
                records: l.records + 1,
                buckets: (l.records + 1).next_power_of_two(),
                ..l
            };
            assert!(more.bytes() > bytes);
            assert!(l.is_record(l.record(0)) && l.is_record(l.record(l.records - 1)));
            assert!(!l.is_record(l.record(l.records)));
            assert!(!l.is_record(l.record(0) + 8) && !l.is_record(0));
            // The count table lies between the superblock and the heads.
            assert_eq!(l.count(0), l.base + SUPERBLOCK_BYTES);
            assert_eq!(l.count(KEY_TABLE_ENTRIES as u16 - 1) + 8, l.head(0));
        }
        assert_eq!(
            StoreLayout::fit(0, DEFAULT_STORE_BYTES).map(|l| l.records),
            Some(15_048)
        );
        assert_eq!(RECORD_BYTES % 8, 0);
        let h = RecordHeader {
            next: 0x1234_5678,
            owner: 9,
            key_len: 3,
            value_len: MAX_VALUE as u16,
        };
        assert_eq!(RecordHeader::decode(&h.encode()), Some(h));
        let bad = RecordHeader {
            key_len: MAX_KEY as u16 + 1,
            ..h
        };
        assert_eq!(RecordHeader::decode(&bad.encode()), None);
        assert_ne!(key_hash(1, b"k"), key_hash(2, b"k"));
    }

    /// A staged put round-trips through its header and payload; the node's decode refuses
    /// every field a hostile sender could bend (lengths, operands, segmentation, bounds).
    #[test]
    fn staged_puts_round_trip_and_malformed_ones_are_refused() {
        let value = vec![0x5Au8; MAX_STAGED_VALUE];
        let p = KvStagedPut::new(b"user0000000042", 0x40_0000, &value).unwrap();
        assert_eq!(p.check, value_check(&value));
        let h = p.header(3, 9);
        let payload = p.encode();
        assert_eq!(KvStagedPut::decode(&h, &payload), Ok(p));
        assert!(
            KvRequest::decode(&h, &payload).is_err(),
            "not an inline request"
        );
        assert!(KvStagedPut::new(b"k", 8, &[]).is_err());
        assert!(KvStagedPut::new(b"k", 8, &vec![0; MAX_STAGED_VALUE + 1]).is_err());
        assert!(KvStagedPut::new(&[1; MAX_KEY + 1], 8, b"v").is_err());
        let bad = |h: Header, payload: &[u8]| KvStagedPut::decode(&h, payload).is_err();
        assert!(bad(Header { arg0: 1, ..h }, &payload));
        assert!(bad(Header { pkt_count: 2, ..h }, &payload));
        assert!(bad(
            Header {
                total_len: h.total_len + 1,
                ..h
            },
            &payload
        ));
        assert!(bad(
            Header {
                opcode: Opcode::KvPut,
                ..h
            },
            &payload
        ));
        let mut longer = payload.clone();
        longer[0] += 1; // key length one more than the key
        assert!(bad(h, &longer));
        let mut zero = payload.clone();
        zero[2..4].copy_from_slice(&0u16.to_le_bytes());
        assert!(bad(h, &zero));
        let mut huge = payload.clone();
        huge[2..4].copy_from_slice(&(MAX_STAGED_VALUE as u16 + 1).to_le_bytes());
        assert!(bad(h, &huge));
        assert_ne!(value_check(b"a"), value_check(b"b"));
    }
}
