//! The testbench's reference for the Clio-KV unit: what `sim::model::offload::clio_kv` and
//! the dispatch in `sim::model::board::extend` do with a request, over a byte image of the
//! store's region, written again from `clio_proto::kv` (clio-hw cannot depend on clio-sim).
//! A multi-byte access fails whole (nothing read or written) when any of its 64-byte blocks
//! is unmapped or marked bad, as the model's translation of a range does.

use crate::sync_unit::reference::{Ring, Verdict};
use clio_proto::kv::{
    KvRequest, RecordHeader, StoreLayout, HIT, MISS, RECORD_HEADER_BYTES, SB_FREE_HEAD,
    SB_HIGH_WATER, SB_LIVE, SB_MAGIC, STORE_MAGIC,
};
use clio_proto::{Header, Opcode, Status};
use std::collections::HashMap;

/// A memory status (0 = OK) or a result.
pub type R<T> = Result<T, u8>;

const UNMAPPED: u8 = Status::Unmapped as u8;

/// The store's region in its RAS: bytes from `base`; a block in `bad` answers its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// First byte's VA (64-byte aligned).
    pub base: u64,
    /// The bytes (a multiple of 64).
    pub bytes: Vec<u8>,
    /// Blocks (VA of their first byte) that answer a status instead.
    pub bad: HashMap<u64, u8>,
}

impl Region {
    /// A formatted store (`clio_kv::format`): zeros and the magic.
    pub fn formatted(l: &StoreLayout) -> Region {
        let mut r = Region {
            base: l.base,
            bytes: vec![0; l.bytes().next_multiple_of(64) as usize],
            bad: HashMap::new(),
        };
        r.bytes[..8].copy_from_slice(&STORE_MAGIC.to_le_bytes());
        r
    }

    /// The offset of `n` bytes at `va`, or the status of the first bad block among them.
    pub fn range(&self, va: u64, n: usize) -> R<usize> {
        let off = va.checked_sub(self.base).ok_or(UNMAPPED)?;
        let end = off.checked_add(n as u64).ok_or(UNMAPPED)?;
        if end > self.bytes.len() as u64 {
            return Err(UNMAPPED);
        }
        let mut blk = va & !63;
        while blk < va + n.max(1) as u64 {
            if let Some(&s) = self.bad.get(&blk) {
                return Err(s);
            }
            blk += 64;
        }
        Ok(off as usize)
    }

    /// `n` bytes at `va`.
    pub fn read(&self, va: u64, n: usize) -> R<Vec<u8>> {
        let o = self.range(va, n)?;
        Ok(self.bytes[o..o + n].to_vec())
    }

    /// Write `data` at `va`.
    pub fn write(&mut self, va: u64, data: &[u8]) -> R<()> {
        let o = self.range(va, data.len())?;
        self.bytes[o..o + data.len()].copy_from_slice(data);
        Ok(())
    }

    /// The u64 LE at `va`.
    pub fn word(&self, va: u64) -> R<u64> {
        let o = self.range(va, 8)?;
        let mut w = [0u8; 8];
        w.copy_from_slice(&self.bytes[o..o + 8]);
        Ok(u64::from_le_bytes(w))
    }

    /// Write the u64 LE `v` at `va`.
    pub fn set_word(&mut self, va: u64, v: u64) -> R<()> {
        self.write(va, &v.to_le_bytes())
    }
}

/// A request as the executor hands it to the unit.
#[derive(Debug, Clone)]
pub struct Req {
    pub op: Opcode,
    pub pid: u16,
    pub va: u64,
    pub arg0: u64,
    pub arg1: u64,
    pub total_len: u32,
    pub pkt_count: u16,
    pub pkt_index: u16,
    pub pay: Vec<u8>,
}

impl Req {
    /// A well-formed request of `op` for `(pid, key)` with `value`.
    pub fn new(op: Opcode, pid: u16, key: &[u8], value: &[u8]) -> Req {
        let mut pay = (key.len() as u16).to_le_bytes().to_vec();
        pay.extend_from_slice(&(value.len() as u16).to_le_bytes());
        pay.extend_from_slice(key);
        pay.extend_from_slice(value);
        Req {
            op,
            pid,
            va: 0,
            arg0: 0,
            arg1: 0,
            total_len: pay.len() as u32,
            pkt_count: 1,
            pkt_index: 0,
            pay,
        }
    }

    /// The header the executor received.
    pub fn header(&self) -> Header {
        Header {
            arg0: self.arg0,
            arg1: self.arg1,
            total_len: self.total_len,
            payload_len: self.pay.len() as u16,
            pkt_count: self.pkt_count,
            pkt_index: self.pkt_index,
            ..Header::request(self.op, self.pid, 1, self.va)
        }
    }
}

/// An answer: status, `arg0`, and the value's range (VA, length) in the store's RAS;
/// `replay`: it comes from the idempotence ring (`response_to(status)` with this `arg0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Answer {
    pub status: u8,
    pub arg0: u64,
    pub read: Option<(u64, u64)>,
    pub replay: bool,
}

/// The reference answer to `r` (the store's status `ready`, 0 = serving), and its effects,
/// with a ring that never holds the request (every request executes).
pub fn serve(m: &mut Region, l: &StoreLayout, ready: u8, r: &Req) -> Answer {
    serve_once(m, l, ready, &mut Ring::new(1), 0, 0, r)
}

/// The reference answer to `r` from member `client` with request id `req` (`extend.rs`):
/// the format and the store's status first, then, for a put or delete
/// (`Opcode::offload_uses_idempotence_ring`), the ring: a retry gets its recorded answer, a
/// full ring RETRY_LATER, and an executed request's answer is recorded, errors included
/// (value 0 then).
pub fn serve_once(
    m: &mut Region,
    l: &StoreLayout,
    ready: u8,
    ring: &mut Ring,
    client: u16,
    req: u32,
    r: &Req,
) -> Answer {
    let answer = |status: u8, arg0: u64, read: Option<(u64, u64)>, replay: bool| Answer {
        status,
        arg0,
        read,
        replay,
    };
    if !matches!(r.op, Opcode::KvGet | Opcode::KvPut | Opcode::KvDelete) {
        return answer(Status::Unsupported as u8, 0, None, false);
    }
    let Ok(q) = KvRequest::decode(&r.header(), &r.pay) else {
        return answer(Status::BadRequest as u8, 0, None, false);
    };
    if ready != 0 {
        return answer(ready, 0, None, false);
    }
    let once = r.op.offload_uses_idempotence_ring();
    if once {
        match ring.check(r.pid, client, req) {
            Verdict::Cached(s, v) => return answer(s, v, None, true),
            Verdict::Full => return answer(Status::RetryLater as u8, 0, None, true),
            Verdict::Execute => {}
        }
    }
    let a = match apply(m, l, r.op, r.pid, q.key, q.value) {
        Ok((arg0, read)) => answer(0, arg0, read, false),
        Err(status) => answer(status, 0, None, false),
    };
    if once {
        ring.record(r.pid, client, req, a.status, a.arg0);
    }
    a
}

/// The table's logic (`clio_kv::serve`): the HIT/MISS and a get's value range.
pub fn apply(
    m: &mut Region,
    l: &StoreLayout,
    op: Opcode,
    owner: u16,
    key: &[u8],
    value: &[u8],
) -> R<(u64, Option<(u64, u64)>)> {
    if m.word(l.base + SB_MAGIC)? != STORE_MAGIC {
        return Err(UNMAPPED);
    }
    let head = l.head(l.bucket(owner, key));
    let live = l.base + SB_LIVE;
    let found = find(m, l, head, owner, key)?;
    match (op, found) {
        (Opcode::KvGet, Some((_, at, hdr))) => {
            let va = at + (RECORD_HEADER_BYTES + key.len()) as u64;
            Ok((
                HIT,
                (hdr.value_len > 0).then_some((va, hdr.value_len as u64)),
            ))
        }
        (_, None) if op != Opcode::KvPut => Ok((MISS, None)),
        (Opcode::KvDelete, Some((link, at, hdr))) => {
            m.set_word(link, hdr.next)?;
            give(m, l, at)?;
            let n = m.word(live)?;
            m.set_word(live, n.saturating_sub(1))?;
            Ok((HIT, None))
        }
        (_, old) => {
            if old.is_none() && m.word(live)?.wrapping_add(1) >= l.records {
                return Err(Status::OutOfMemory as u8);
            }
            let slot = take(m, l)?;
            let (link, next) = match old {
                Some((link, _, hdr)) => (link, hdr.next),
                None => (head, m.word(head)?),
            };
            let h = RecordHeader {
                next,
                owner,
                key_len: key.len() as u16,
                value_len: value.len() as u16,
            };
            let mut rec = h.encode().to_vec();
            rec.extend_from_slice(key);
            rec.extend_from_slice(value);
            m.write(slot, &rec)?;
            m.set_word(link, slot)?;
            if let Some((_, at, _)) = old {
                give(m, l, at)?;
                return Ok((HIT, None));
            }
            let n = m.word(live)?;
            m.set_word(live, n.wrapping_add(1))?;
            Ok((MISS, None))
        }
    }
}

/// The key's (link to its record, record, header) on the chain from `head`: at most
/// `records + 1` links, each 0 or a slot, each header's lengths in bounds (else UNMAPPED).
type Found = (u64, u64, RecordHeader);

fn find(m: &Region, l: &StoreLayout, head: u64, owner: u16, key: &[u8]) -> R<Option<Found>> {
    let mut link = head;
    for _ in 0..=l.records {
        let at = m.word(link)?;
        if at == 0 {
            return Ok(None);
        }
        if !l.is_record(at) {
            return Err(UNMAPPED);
        }
        let mut hb = [0u8; RECORD_HEADER_BYTES];
        hb.copy_from_slice(&m.read(at, RECORD_HEADER_BYTES)?);
        let hdr = RecordHeader::decode(&hb).ok_or(UNMAPPED)?;
        if hdr.owner == owner
            && hdr.key_len as usize == key.len()
            && m.read(at + RECORD_HEADER_BYTES as u64, key.len())? == key
        {
            return Ok(Some((link, at, hdr)));
        }
        link = at;
    }
    Err(UNMAPPED)
}

/// `take_free`: the free list's head, else the high-water slot.
fn take(m: &mut Region, l: &StoreLayout) -> R<u64> {
    let free = l.base + SB_FREE_HEAD;
    match m.word(free)? {
        0 => {}
        at if l.is_record(at) => {
            let next = m.word(at)?;
            m.set_word(free, next)?;
            return Ok(at);
        }
        _ => return Err(UNMAPPED),
    }
    let used = m.word(l.base + SB_HIGH_WATER)?;
    if used >= l.records {
        return Err(Status::OutOfMemory as u8);
    }
    m.set_word(l.base + SB_HIGH_WATER, used + 1)?;
    Ok(l.record(used))
}

/// `give_free`: the record `at` becomes the free list's head.
fn give(m: &mut Region, l: &StoreLayout, at: u64) -> R<()> {
    let free = l.base + SB_FREE_HEAD;
    let head = m.word(free)?;
    let h = RecordHeader {
        next: head,
        owner: 0,
        key_len: 0,
        value_len: 0,
    };
    m.write(at, &h.encode())?;
    m.set_word(free, at)
}
