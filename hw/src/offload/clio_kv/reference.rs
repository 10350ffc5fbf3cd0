//! The testbench's view of the golden model's Clio-KV (`clio_model::offload::clio_kv`, the
//! same code the software node runs): a byte image of the store's region it serves from, the
//! request as the executor hands it to the unit, and the answer as the unit gives it. The
//! dispatch in front of the table (the opcode, the request's format, the store's status, in
//! the order `sim`'s `board/extend.rs` checks them) is the only logic here; the table and the
//! idempotence ring are the model's. A multi-byte access fails whole (nothing read or written)
//! when any of its 64-byte blocks is unmapped or marked bad, as the model's translation of a
//! range does.

use clio_model::coverage::Coverage;
use clio_model::offload::clio_kv::{self, Once};
use clio_model::offload::OffloadMemory;
use clio_model::sync_unit::SyncUnit;
use clio_proto::kv::{KvRequest, StoreLayout};
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
    /// A formatted store (`clio_kv::format`): zeros and the magic, no per-RAS limit.
    pub fn formatted(l: &StoreLayout) -> Region {
        Region::formatted_limited(l, 0)
    }

    /// A formatted store whose RASes may hold `ras_records` records each.
    pub fn formatted_limited(l: &StoreLayout, ras_records: u64) -> Region {
        let mut r = Region {
            base: l.base,
            bytes: vec![0; l.bytes().next_multiple_of(64) as usize],
            bad: HashMap::new(),
        };
        clio_kv::format(&mut r, l, ras_records).expect("the region holds the superblock");
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

/// The model reads and writes the region as it reads the store's RAS.
impl OffloadMemory for Region {
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), Status> {
        let o = self.range(va, buf.len()).map_err(status)?;
        buf.copy_from_slice(&self.bytes[o..o + buf.len()]);
        Ok(())
    }
    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), Status> {
        Region::write(self, va, data).map_err(status)
    }
}

/// A bad block's status as the model's (a testbench marks blocks only with real statuses).
fn status(s: u8) -> Status {
    Status::from_u8(s).expect("a bad block's status is a status")
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
    /// `arg1`: 0, but the quota a refusal names (`proto::quota::Quota`).
    pub arg1: u64,
}

/// The reference answer to `r` (the store's status `ready`, 0 = serving), and its effects,
/// with a ring that never holds the request (every request executes).
pub fn serve(m: &mut Region, l: &StoreLayout, ready: u8, r: &Req) -> Answer {
    let mut ring = SyncUnit::default();
    ring.set_owner(1, r.pid);
    serve_once(m, l, ready, &mut ring, 1, 0, r)
}

/// The reference answer to `r` from member `client` with request id `req`: the format and
/// the store's status first, then the model's table behind its idempotence ring
/// (`clio_kv::decide_once`: a retry of a put or delete gets its recorded answer, a client id
/// not of the RAS DENIED, a member over its share QUOTA_EXCEEDED, an executed one's answer is
/// recorded, errors included but the record quota's refusal).
pub fn serve_once(
    m: &mut Region,
    l: &StoreLayout,
    ready: u8,
    ring: &mut SyncUnit,
    client: u16,
    req: u32,
    r: &Req,
) -> Answer {
    let answer = |status: u8, arg0: u64, read: Option<(u64, u64)>, replay: bool| Answer {
        status,
        arg0,
        read,
        replay,
        arg1: 0,
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
    let cov = &mut Coverage::default();
    match clio_kv::decide_once(m, l, ring, r.op, r.pid, client, req, q, cov) {
        Once::Replayed(s, v) => answer(s as u8, v, None, true),
        Once::Stranger => answer(Status::Denied as u8, 0, None, true),
        Once::OverShare => Answer {
            arg1: clio_proto::quota::Quota::RingShare as u64,
            ..answer(Status::QuotaExceeded as u8, 0, None, false)
        },
        Once::Ran(Ok(d)) => answer(0, d.arg0, d.value_at, false),
        Once::Ran(Err(s)) => Answer {
            arg1: clio_kv::refusal_quota(s).map_or(0, |q| q as u64),
            ..answer(s as u8, 0, None, false)
        },
    }
}

/// The model's table alone (`clio_kv::decide`): the HIT/MISS and a get's value range.
pub fn apply(
    m: &mut Region,
    l: &StoreLayout,
    op: Opcode,
    owner: u16,
    key: &[u8],
    value: &[u8],
) -> R<(u64, Option<(u64, u64)>)> {
    let req = KvRequest { key, value };
    clio_kv::decide(m, l, op, owner, req, &mut Coverage::default())
        .map(|d| (d.arg0, d.value_at))
        .map_err(|s| s as u8)
}
