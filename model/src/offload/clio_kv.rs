//! Clio-KV (`Opcode::KvGet/KvPut/KvDelete`, `proto::kv`): a chained hash table and its
//! records in the store's OWN address space, reached only through [`OffloadMemory`] (the
//! same translation as every other access). The slow path (`arm-slowpath/src/daemon/kv_store.rs`)
//! registers that address space, allocates and formats the region and announces it with the
//! `KvConfig` descriptor; the board (`sim/src/model/board/extend.rs`) hands each request
//! here; this module is the table's logic alone.
//!
//! A key is `(owner, key bytes)`: `owner` is the RAS (pid) of the request, so tenants never
//! meet each other's keys while the members of one RAS share theirs. Each request runs to
//! its end before the next starts (the node serves requests one at a time), and a put
//! writes the whole new record out of place before one word (the chain link) switches to
//! it: a get sees the old or the new value, whole, never a mix.

use super::{OffloadAnswer, OffloadMemory};
use crate::coverage::Coverage;
use crate::sync_unit::{RingCheck, SyncUnit};
use clio_proto::kv::{
    empty_superblock, KvRequest, RecordHeader, StoreLayout, HIT, MISS, RECORD_HEADER_BYTES,
    SB_FREE_HEAD, SB_HIGH_WATER, SB_LIVE, SB_MAGIC, SB_RAS_RECORDS, STORE_MAGIC,
};
use clio_proto::quota::Quota;
use clio_proto::rules::Rule;
use clio_proto::{Opcode, Status};

/// A record found on its chain: where the link to it is, where it is, and its header.
struct Found {
    link: u64,
    at: u64,
    header: RecordHeader,
}

/// Write an empty store's superblock (`proto::kv::empty_superblock`) with `ras_records`, the
/// records one RAS may hold (0: no limit); counts, chain heads and records are on fresh, zeroed
/// pages.
pub fn format(
    mem: &mut impl OffloadMemory,
    l: &StoreLayout,
    ras_records: u64,
) -> Result<(), Status> {
    mem.write(l.base, &empty_superblock(ras_records))
}

/// The quota a refusal of the table names in its answer's `arg1`: a put's QUOTA_EXCEEDED is the
/// RAS's record quota, the one quota the table applies.
pub fn refusal_quota(s: Status) -> Option<Quota> {
    (s == Status::QuotaExceeded).then_some(Quota::KvRecords)
}

/// Live records (the superblock's count).
pub fn live(mem: &mut impl OffloadMemory, l: &StoreLayout) -> Result<u64, Status> {
    mem.read_word(l.base + SB_LIVE)
}

fn check_magic(mem: &mut impl OffloadMemory, l: &StoreLayout) -> Result<(), Status> {
    if mem.read_word(l.base + SB_MAGIC)? == STORE_MAGIC {
        Ok(())
    } else {
        Err(Status::Unmapped) // not formatted: the board answers before this can happen
    }
}

/// A link read back from the store's memory, checked before it is followed.
fn link_target(l: &StoreLayout, v: u64) -> Result<Option<u64>, Status> {
    match v {
        0 => Ok(None),
        v if l.is_record(v) => Ok(Some(v)),
        _ => Err(Status::Unmapped),
    }
}

fn read_header(mem: &mut impl OffloadMemory, at: u64) -> Result<RecordHeader, Status> {
    let mut b = [0u8; RECORD_HEADER_BYTES];
    mem.read(at, &mut b)?;
    RecordHeader::decode(&b).ok_or(Status::Unmapped)
}

/// Walk `key`'s chain. A chain is at most `records` long; a longer walk means a cycle,
/// which only corrupt memory could make, and ends with an error instead of looping.
fn find(
    mem: &mut impl OffloadMemory,
    l: &StoreLayout,
    owner: u16,
    key: &[u8],
    cov: &mut Coverage,
) -> Result<Option<Found>, Status> {
    let mut link = l.head(l.bucket(owner, key));
    let mut stored = vec![0u8; key.len()];
    for _ in 0..=l.records {
        let Some(at) = link_target(l, mem.read_word(link)?)? else {
            return Ok(None);
        };
        let header = read_header(mem, at)?;
        cov.hit_if(header.owner != owner, Rule::KvOwner);
        if header.owner == owner && header.key_len as usize == key.len() {
            mem.read(at + RECORD_HEADER_BYTES as u64, &mut stored)?;
            if stored == key {
                return Ok(Some(Found { link, at, header }));
            }
        }
        link = at; // `next` is the record's first word
    }
    Err(Status::Unmapped)
}

/// What the table decided for one request, before a get's value is read: `arg0` (HIT or
/// MISS) and, for a hit of a non-empty value, where the value lies in the store's RAS (the
/// RTL's unit answers a hit by handing that range to the read datapath).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Decided {
    /// HIT or MISS.
    pub arg0: u64,
    /// A get's value: (VA, length); `None` for a miss, a write, or an empty value.
    pub value_at: Option<(u64, u64)>,
}

/// The table's logic for one request (`op` one of `KvGet`, `KvPut`, `KvDelete`) of the RAS
/// `owner`: every write it makes, and a get's value range (not read yet).
pub fn decide(
    mem: &mut impl OffloadMemory,
    l: &StoreLayout,
    op: Opcode,
    owner: u16,
    req: KvRequest<'_>,
    cov: &mut Coverage,
) -> Result<Decided, Status> {
    check_magic(mem, l)?;
    let found = find(mem, l, owner, req.key, cov)?;
    let decided = |arg0, value_at| Decided { arg0, value_at };
    match (op, found) {
        (Opcode::KvGet, Some(f)) => {
            let at = f.at + (RECORD_HEADER_BYTES + req.key.len()) as u64;
            let len = f.header.value_len as u64;
            Ok(decided(HIT, (len > 0).then_some((at, len))))
        }
        (Opcode::KvPut, old) => {
            let answer = put(mem, l, owner, req, old);
            cov.hit_if(answer == Err(Status::OutOfMemory), Rule::KvStoreFull);
            cov.hit_if(answer == Err(Status::QuotaExceeded), Rule::KvRecordQuota);
            answer.map(|a| decided(a.arg0, None))
        }
        (Opcode::KvDelete, Some(f)) => delete(mem, l, f).map(|a| decided(a.arg0, None)),
        (Opcode::KvGet | Opcode::KvDelete, None) => Ok(decided(MISS, None)),
        _ => Err(Status::Unsupported),
    }
}

/// Serve one request (`op` one of `KvGet`, `KvPut`, `KvDelete`) of the RAS `owner`: the
/// table's decision and a get's value.
pub fn serve(
    mem: &mut impl OffloadMemory,
    l: &StoreLayout,
    op: Opcode,
    owner: u16,
    req: KvRequest<'_>,
    cov: &mut Coverage,
) -> Result<OffloadAnswer, Status> {
    let d = decide(mem, l, op, owner, req, cov)?;
    answer_of(mem, d)
}

/// The answer to a decided request: `arg0`, and a get's value read from the store.
pub fn answer_of(mem: &mut impl OffloadMemory, d: Decided) -> Result<OffloadAnswer, Status> {
    let mut value = Vec::new();
    if let Some((at, len)) = d.value_at {
        value.resize(len as usize, 0);
        mem.read(at, &mut value)?;
    }
    Ok(answer(d.arg0, value))
}

/// How a request went through the idempotence ring ([`decide_once`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Once {
    /// A retry of an executed put or delete: its recorded status and `arg0`, nothing run.
    Replayed(Status, u64),
    /// The caller holds its share of unacknowledged results, or the request's entry holds
    /// another of them: QUOTA_EXCEEDED (`Quota::RingShare`), nothing run.
    OverShare,
    /// The caller's client id is not a member of its RAS: DENIED, nothing run.
    Stranger,
    /// Run ([`decide`]); a put's or delete's answer was recorded, errors included (value 0).
    Ran(Result<Decided, Status>),
}

/// [`decide`] with exactly-once for writes: a put or delete
/// (`Opcode::offload_uses_idempotence_ring`) asks the ring under the caller's
/// `(owner, client, req_id)` first and records its answer after
/// ([`SyncUnit::record_outcome`]), so a retry gets the first answer and never a second run; a
/// get runs as it is.
#[allow(clippy::too_many_arguments)]
pub fn decide_once(
    mem: &mut impl OffloadMemory,
    l: &StoreLayout,
    sync: &mut SyncUnit,
    op: Opcode,
    owner: u16,
    client: u16,
    req_id: u32,
    req: KvRequest<'_>,
    cov: &mut Coverage,
) -> Once {
    let once = op.offload_uses_idempotence_ring();
    if once {
        match sync.check(owner, client, req_id) {
            RingCheck::Cached(s, v) => return Once::Replayed(s, v),
            RingCheck::OverShare => return Once::OverShare,
            RingCheck::Stranger => return Once::Stranger,
            RingCheck::Execute => {}
        }
    }
    let d = decide(mem, l, op, owner, req, cov);
    if once {
        sync.record_outcome(owner, client, req_id, d.map(|d| d.arg0));
    }
    Once::Ran(d)
}

/// Create or replace `(owner, key)` with `value`: the new record is written whole in a free
/// slot, then the one link that led to the old record (or the chain head) switches to it,
/// then the old record goes to the free list. One slot is kept spare for that: a store holds
/// at most `records - 1` keys, so a replacement always finds a slot, and a creation beyond
/// that is refused with `OutOfMemory` before anything is written. A creation while the
/// owner's count is at the store's per-RAS limit (`SB_RAS_RECORDS`, 0: none) is refused with
/// `QuotaExceeded`, also before anything is written; a replacement needs no new record and is
/// never refused by it.
fn put(
    mem: &mut impl OffloadMemory,
    l: &StoreLayout,
    owner: u16,
    KvRequest { key, value }: KvRequest<'_>,
    old: Option<Found>,
) -> Result<OffloadAnswer, Status> {
    if old.is_none() {
        if live(mem, l)? + 1 >= l.records {
            return Err(Status::OutOfMemory);
        }
        let quota = mem.read_word(l.base + SB_RAS_RECORDS)?;
        if quota != 0 && mem.read_word(l.count(owner))? >= quota {
            return Err(Status::QuotaExceeded);
        }
    }
    let slot = take_free(mem, l)?;
    let (link, next) = match &old {
        Some(f) => (f.link, f.header.next),
        None => {
            let head = l.head(l.bucket(owner, key));
            (head, mem.read_word(head)?)
        }
    };
    let header = RecordHeader {
        next,
        owner,
        key_len: key.len() as u16,
        value_len: value.len() as u16,
    };
    let mut record = Vec::with_capacity(RECORD_HEADER_BYTES + key.len() + value.len());
    record.extend_from_slice(&header.encode());
    record.extend_from_slice(key);
    record.extend_from_slice(value);
    mem.write(slot, &record)?;
    mem.write_word(link, slot)?; // the commit point
    match old {
        Some(f) => {
            give_free(mem, l, f.at)?;
            Ok(answer(HIT, Vec::new()))
        }
        None => {
            let n = live(mem, l)?;
            mem.write_word(l.base + SB_LIVE, n + 1)?;
            let c = mem.read_word(l.count(owner))?;
            mem.write_word(l.count(owner), c + 1)?;
            Ok(answer(MISS, Vec::new()))
        }
    }
}

/// Remove a found record: unlink it and free it for reuse; the store's and its owner's
/// counts go down (saturating).
fn delete(
    mem: &mut impl OffloadMemory,
    l: &StoreLayout,
    f: Found,
) -> Result<OffloadAnswer, Status> {
    mem.write_word(f.link, f.header.next)?;
    give_free(mem, l, f.at)?;
    let n = live(mem, l)?;
    mem.write_word(l.base + SB_LIVE, n.saturating_sub(1))?;
    let c = mem.read_word(l.count(f.header.owner))?;
    mem.write_word(l.count(f.header.owner), c.saturating_sub(1))?;
    Ok(answer(HIT, Vec::new()))
}

fn answer(arg0: u64, payload: Vec<u8>) -> OffloadAnswer {
    OffloadAnswer {
        arg0,
        arg1: 0,
        payload,
    }
}

/// A free record slot: the free list's head, else the next never-used slot; out of memory
/// when neither (nothing is changed then).
fn take_free(mem: &mut impl OffloadMemory, l: &StoreLayout) -> Result<u64, Status> {
    if let Some(at) = link_target(l, mem.read_word(l.base + SB_FREE_HEAD)?)? {
        let next = mem.read_word(at)?;
        mem.write_word(l.base + SB_FREE_HEAD, next)?;
        return Ok(at);
    }
    let used = mem.read_word(l.base + SB_HIGH_WATER)?;
    if used >= l.records {
        return Err(Status::OutOfMemory);
    }
    mem.write_word(l.base + SB_HIGH_WATER, used + 1)?;
    Ok(l.record(used))
}

fn give_free(mem: &mut impl OffloadMemory, l: &StoreLayout, at: u64) -> Result<(), Status> {
    let head = mem.read_word(l.base + SB_FREE_HEAD)?;
    mem.write(
        at,
        &RecordHeader {
            next: head,
            owner: 0,
            key_len: 0,
            value_len: 0,
        }
        .encode(),
    )?;
    mem.write_word(l.base + SB_FREE_HEAD, at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_proto::kv::{HEADS_OFFSET, MAX_KEY, MAX_VALUE};
    use std::collections::HashMap;

    /// A byte-addressed memory over one region; anything outside is unmapped.
    struct Region {
        base: u64,
        bytes: Vec<u8>,
    }

    impl Region {
        fn range(&self, va: u64, n: usize) -> Result<std::ops::Range<usize>, Status> {
            let off = va.checked_sub(self.base).ok_or(Status::Unmapped)? as usize;
            let end = off.checked_add(n).ok_or(Status::Unmapped)?;
            (end <= self.bytes.len())
                .then_some(off..end)
                .ok_or(Status::Unmapped)
        }
    }

    impl OffloadMemory for Region {
        fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), Status> {
            let r = self.range(va, buf.len())?;
            buf.copy_from_slice(&self.bytes[r]);
            Ok(())
        }
        fn write(&mut self, va: u64, data: &[u8]) -> Result<(), Status> {
            let r = self.range(va, data.len())?;
            self.bytes[r].copy_from_slice(data);
            Ok(())
        }
    }

    /// A store whose heads and records take `bytes` (after the superblock and count table),
    /// with no per-RAS limit.
    fn store(bytes: u64) -> (Region, StoreLayout) {
        store_limited(bytes, 0)
    }

    fn store_limited(bytes: u64, ras_records: u64) -> (Region, StoreLayout) {
        let bytes = HEADS_OFFSET + bytes;
        let l = StoreLayout::fit(0x40_0000, bytes).unwrap();
        let mut m = Region {
            base: l.base,
            bytes: vec![0; bytes as usize],
        };
        format(&mut m, &l, ras_records).unwrap();
        (m, l)
    }

    fn req<'a>(op: Opcode, key: &'a [u8], value: &'a [u8]) -> KvRequest<'a> {
        KvRequest::new(op, key, value).unwrap()
    }

    type Answer = Result<OffloadAnswer, Status>;

    fn get(m: &mut Region, l: &StoreLayout, owner: u16, key: &[u8]) -> Answer {
        let cov = &mut Coverage::default();
        serve(
            m,
            l,
            Opcode::KvGet,
            owner,
            req(Opcode::KvGet, key, b""),
            cov,
        )
    }

    fn put(m: &mut Region, l: &StoreLayout, owner: u16, key: &[u8], value: &[u8]) -> Answer {
        let cov = &mut Coverage::default();
        serve(
            m,
            l,
            Opcode::KvPut,
            owner,
            req(Opcode::KvPut, key, value),
            cov,
        )
    }

    fn delete(m: &mut Region, l: &StoreLayout, owner: u16, key: &[u8]) -> Answer {
        serve(
            m,
            l,
            Opcode::KvDelete,
            owner,
            req(Opcode::KvDelete, key, b""),
            &mut Coverage::default(),
        )
    }

    fn value_of(m: &mut Region, l: &StoreLayout, owner: u16, key: &[u8]) -> Option<Vec<u8>> {
        let a = get(m, l, owner, key).unwrap();
        (a.arg0 == HIT).then_some(a.payload)
    }

    #[test]
    fn puts_gets_and_deletes_match_a_map_and_reuse_freed_records() {
        let (mut m, l) = store(64 * 1024); // a few dozen records, so chains form
        let mut model: HashMap<(u16, Vec<u8>), Vec<u8>> = HashMap::new();
        let mut x = 12345u64;
        for i in 0..5000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let owner = (x % 3) as u16 + 1;
            let key = format!("k{}", x % 40).into_bytes();
            let k = (owner, key.clone());
            match x % 4 {
                0 | 1 => {
                    let v = format!("v{i}").repeat((x % 50) as usize).into_bytes();
                    let v = &v[..v.len().min(MAX_VALUE)];
                    let a = put(&mut m, &l, owner, &key, v);
                    if model.len() as u64 + 1 == l.records && !model.contains_key(&k) {
                        assert_eq!(a, Err(Status::OutOfMemory));
                        continue;
                    }
                    let was = model.insert(k, v.to_vec());
                    assert_eq!(a.unwrap().arg0, if was.is_some() { HIT } else { MISS });
                }
                2 => {
                    let a = delete(&mut m, &l, owner, &key).unwrap();
                    let was = model.remove(&k);
                    assert_eq!(a.arg0, if was.is_some() { HIT } else { MISS });
                }
                _ => assert_eq!(value_of(&mut m, &l, owner, &key), model.get(&k).cloned()),
            }
            assert_eq!(live(&mut m, &l).unwrap(), model.len() as u64);
        }
        // Never more slots touched than records: deletes and replacements were reused.
        assert!(m.bytes.len() as u64 >= l.bytes());
        assert!(mem_high_water(&mut m, &l) <= l.records);
    }

    fn mem_high_water(m: &mut Region, l: &StoreLayout) -> u64 {
        m.read_word(l.base + SB_HIGH_WATER).unwrap()
    }

    #[test]
    fn owners_do_not_share_keys_and_a_full_store_changes_nothing() {
        let (mut m, l) = store(8 * 1024);
        assert!(l.records >= 2);
        put(&mut m, &l, 1, b"k", b"one").unwrap();
        assert_eq!(value_of(&mut m, &l, 2, b"k"), None);
        assert_eq!(delete(&mut m, &l, 2, b"k").unwrap().arg0, MISS);
        assert_eq!(put(&mut m, &l, 2, b"k", b"two").unwrap().arg0, MISS);
        assert_eq!(value_of(&mut m, &l, 1, b"k"), Some(b"one".to_vec()));
        assert_eq!(value_of(&mut m, &l, 2, b"k"), Some(b"two".to_vec()));
        for i in 3..l.records {
            put(&mut m, &l, 1, format!("f{i}").as_bytes(), b"x").unwrap();
        }
        assert_eq!(live(&mut m, &l).unwrap(), l.records - 1);
        let before = m.bytes.clone();
        assert_eq!(put(&mut m, &l, 1, b"new", b"x"), Err(Status::OutOfMemory));
        assert_eq!(m.bytes, before, "a refused put leaves memory as it was");
        // A full store still replaces values (out of place, in the spare slot).
        for v in [&b"uno"[..], b"eins", b"one"] {
            assert_eq!(put(&mut m, &l, 1, b"k", v).unwrap().arg0, HIT);
            assert_eq!(value_of(&mut m, &l, 1, b"k"), Some(v.to_vec()));
        }
        // A delete makes room.
        delete(&mut m, &l, 2, b"k").unwrap();
        assert_eq!(put(&mut m, &l, 1, b"new", b"y").unwrap().arg0, MISS);
        let longest = vec![0xA5; MAX_VALUE];
        delete(&mut m, &l, 1, b"new").unwrap();
        put(&mut m, &l, 1, &[b'q'; MAX_KEY], &longest).unwrap();
        assert_eq!(value_of(&mut m, &l, 1, &[b'q'; MAX_KEY]), Some(longest));
    }

    /// One RAS cannot take more than its quota of the store's records: its puts of new keys
    /// beyond it are refused and change nothing, its replacements and everyone else's puts go
    /// on, and a delete gives a record back.
    #[test]
    fn a_ras_holds_at_most_its_quota_of_records_and_deletes_give_them_back() {
        let (mut m, l) = store_limited(32 * 1024, 3);
        for i in 0..3 {
            assert_eq!(put(&mut m, &l, 1, &[b'a', i], b"x").unwrap().arg0, MISS);
        }
        let before = m.bytes.clone();
        let cov = &mut Coverage::default();
        let refused = decide(
            &mut m,
            &l,
            Opcode::KvPut,
            1,
            req(Opcode::KvPut, b"new", b"x"),
            cov,
        );
        assert_eq!(refused, Err(Status::QuotaExceeded));
        assert_eq!(cov.count(Rule::KvRecordQuota), 1);
        assert_eq!(m.bytes, before, "a refused put leaves memory as it was");
        // A replacement needs no new record; another RAS has its own count.
        assert_eq!(put(&mut m, &l, 1, &[b'a', 0], b"y").unwrap().arg0, HIT);
        for i in 0..3 {
            assert_eq!(put(&mut m, &l, 2, &[b'a', i], b"z").unwrap().arg0, MISS);
        }
        assert_eq!(m.read_word(l.count(1)), Ok(3));
        assert_eq!(m.read_word(l.count(2)), Ok(3));
        assert_eq!(delete(&mut m, &l, 1, &[b'a', 1]).unwrap().arg0, HIT);
        assert_eq!(m.read_word(l.count(1)), Ok(2));
        assert_eq!(put(&mut m, &l, 1, b"new", b"x").unwrap().arg0, MISS);
        assert_eq!(
            put(&mut m, &l, 1, b"newer", b"x"),
            Err(Status::QuotaExceeded)
        );
        assert_eq!(live(&mut m, &l), Ok(6));
    }

    /// A refusal by the record quota is not recorded in the idempotence ring: the retry of the
    /// same request runs again, and succeeds once a delete made room.
    #[test]
    fn a_quota_refusal_is_not_replayed() {
        let (mut m, l) = store_limited(32 * 1024, 1);
        let mut sync = SyncUnit::default();
        sync.set_owner(7, 1);
        let cov = &mut Coverage::default();
        let mut once = |m: &mut Region, sync: &mut SyncUnit, op, key: &[u8], id| {
            let value: &[u8] = if op == Opcode::KvPut { b"v" } else { b"" };
            decide_once(m, &l, sync, op, 1, 7, id, req(op, key, value), cov)
        };
        assert!(matches!(
            once(&mut m, &mut sync, Opcode::KvPut, b"a", 1),
            Once::Ran(Ok(_))
        ));
        for _ in 0..2 {
            let r = once(&mut m, &mut sync, Opcode::KvPut, b"b", 2);
            assert_eq!(r, Once::Ran(Err(Status::QuotaExceeded)));
        }
        assert!(matches!(
            once(&mut m, &mut sync, Opcode::KvDelete, b"a", 3),
            Once::Ran(Ok(_))
        ));
        let r = once(&mut m, &mut sync, Opcode::KvPut, b"b", 2);
        assert!(
            matches!(r, Once::Ran(Ok(Decided { arg0: MISS, .. }))),
            "{r:?}"
        );
    }

    #[test]
    fn corrupt_links_end_with_an_error_not_a_wild_access_or_a_loop() {
        let (mut m, l) = store(8 * 1024);
        put(&mut m, &l, 1, b"a", b"1").unwrap();
        let head = l.head(l.bucket(1, b"a"));
        // A link outside the record area.
        m.write_word(head, 0x10).unwrap();
        assert_eq!(get(&mut m, &l, 1, b"a"), Err(Status::Unmapped));
        // A record linked to itself: the walk is bounded.
        m.write_word(head, l.record(0)).unwrap();
        m.write_word(l.record(0), l.record(0)).unwrap();
        let same_bucket = (0..)
            .map(|i: u32| format!("z{i}").into_bytes())
            .find(|k| l.bucket(1, k) == l.bucket(1, b"a"))
            .unwrap();
        assert_eq!(get(&mut m, &l, 1, &same_bucket), Err(Status::Unmapped));
        // An unformatted region.
        let mut blank = Region {
            base: l.base,
            bytes: vec![0; 8192],
        };
        assert_eq!(get(&mut blank, &l, 1, b"a"), Err(Status::Unmapped));
    }
}
