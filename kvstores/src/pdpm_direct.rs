//! pDPM-Direct (Tsai et al., ATC '20, section 4.1): compute nodes access the memory node
//! directly with one-sided operations and coordinate among themselves through it.
//!
//! Every entry has a fixed slot: a directory part (the key), an 8-byte lock word, a committed
//! space (where reads go) and an uncommitted space (the redo copy). Records carry a CRC.
//!
//! * get: one read of the committed space; if its CRC fails, a write is in progress (or the
//!   bytes are damaged): read again. One round trip.
//! * put / delete: lock with compare-and-swap 0 -> 1 (spinning with backoff), write the record
//!   to the uncommitted space, then to the committed space, then unlock. Four round trips.
//!
//! What differs from the paper: the paper creates entries with a distributed consensus
//! protocol among CNs and keeps all metadata at every CN. Here an entry is created by
//! claiming a slot of an open-addressing table in remote memory with compare-and-swap (the
//! key's 64-bit tag), then writing the key with its CRC; CNs cache key -> slot after the
//! first lookup, so steady-state operations cost what the paper's do. A delete writes an
//! absent record; the slot stays the key's. Unlock is CLib's `runlock` (the node's Unlock,
//! exactly-once under retries) instead of a plain write of 0, which a duplicated packet could
//! replay after another CN took the lock.

use crate::store::{
    check_key, check_value, fnv1a64, Cost, KvError, KvResult, KvStore, NodeLink, StoreFactory,
    StoreSpec, MAX_KEY,
};
use clio_clib::{Client, Config};
use clio_proto::checksum::{crc32c, crc32c_append};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Name in specs and tables.
pub const NAME: &str = "pdpm-direct";

const KEY_AREA: u64 = 16 + MAX_KEY as u64; // tag, len, crc, key
const LOCK: u64 = 216;
const COMMITTED: u64 = 224;
const REC_HEAD: usize = 16; // flags, len, crc, pad
/// How long a writer keeps trying to take an entry's lock, or a reader to find a whole record.
const PATIENCE: Duration = Duration::from_secs(10);

/// Where the store lives in the shared remote address space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// First slot.
    pub base: u64,
    /// Number of slots (keys the store can hold).
    pub capacity: u64,
    /// Largest value.
    pub max_value: usize,
}

impl Layout {
    fn rec_len(&self) -> u64 {
        (REC_HEAD + self.max_value) as u64
    }
    /// Bytes per slot.
    pub fn slot_bytes(&self) -> u64 {
        (COMMITTED + 2 * self.rec_len()).div_ceil(64) * 64
    }
    fn slot(&self, i: u64) -> u64 {
        self.base + i * self.slot_bytes()
    }
}

/// Allocate the table (fresh memory from the node is zero: every slot empty).
pub fn create(c: &Client, capacity: u64, max_value: usize) -> KvResult<Layout> {
    if capacity == 0 || max_value == 0 || max_value > 1 << 20 {
        return Err(KvError::Spec(
            "capacity must be >= 1 and max value 1..=1 MiB".into(),
        ));
    }
    let mut l = Layout {
        base: 0,
        capacity,
        max_value,
    };
    l.base = c.ralloc(capacity * l.slot_bytes())?;
    Ok(l)
}

/// The spec another process opens the store with.
pub fn spec(link: &NodeLink, l: &Layout) -> StoreSpec {
    let mut f = BTreeMap::new();
    link.to_fields(&mut f);
    f.insert("base".into(), l.base.to_string());
    f.insert("cap".into(), l.capacity.to_string());
    f.insert("maxv".into(), l.max_value.to_string());
    StoreSpec {
        system: NAME.into(),
        fields: f,
    }
}

/// A compute node's view: its own member of the shared RAS and its metadata cache.
pub struct DirectFactory {
    client: Client,
    layout: Layout,
    cache: Arc<RwLock<HashMap<Vec<u8>, u64>>>,
}

impl DirectFactory {
    /// Join the RAS through `link` (a new CN).
    pub fn join(link: &NodeLink, layout: Layout) -> KvResult<DirectFactory> {
        Ok(DirectFactory {
            client: link.join()?,
            layout,
            cache: Arc::default(),
        })
    }

    /// Open from a spec.
    pub fn from_spec(s: &StoreSpec, config: Config) -> KvResult<DirectFactory> {
        let layout = Layout {
            base: s.parse("base")?,
            capacity: s.parse("cap")?,
            max_value: s.parse("maxv")?,
        };
        DirectFactory::join(&NodeLink::from_spec(s, config)?, layout)
    }
}

impl StoreFactory for DirectFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn open(&self) -> KvResult<Box<dyn KvStore>> {
        Ok(Box::new(Direct {
            c: self.client.clone(),
            l: self.layout,
            cache: self.cache.clone(),
            rounds: 0,
        }))
    }
}

/// One thread's handle.
pub struct Direct {
    c: Client,
    l: Layout,
    cache: Arc<RwLock<HashMap<Vec<u8>, u64>>>,
    rounds: u64,
}

fn u32_at(b: &[u8], o: usize) -> u32 {
    u32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]])
}

fn key_crc(key: &[u8]) -> u32 {
    crc32c(key) | 1 // never 0, so an unwritten key area never matches
}

fn backoff(attempt: u32) {
    std::thread::sleep(Duration::from_micros(2u64 << attempt.min(8)));
}

/// Encode a record: `present` flag, length, CRC over (flags, len, value).
fn record(present: bool, value: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(REC_HEAD + value.len());
    r.extend_from_slice(&u32::from(present).to_le_bytes());
    r.extend_from_slice(&(value.len() as u32).to_le_bytes());
    let c = crc32c_append(crc32c(&r), value);
    r.extend_from_slice(&c.to_le_bytes());
    r.extend_from_slice(&[0; 4]);
    r.extend_from_slice(value);
    r
}

/// Decode a record read from remote memory: `Ok(None)` if the CRC fails (a write in
/// progress), `Ok(Some(value or None))` for a whole record.
fn parse_record(b: &[u8], max: usize) -> Option<Option<Vec<u8>>> {
    if b.len() < REC_HEAD {
        return None;
    }
    let (flags, len, crc) = (u32_at(b, 0), u32_at(b, 4) as usize, u32_at(b, 8));
    if (flags, len, crc) == (0, 0, 0) {
        // Never written since the slot was claimed (fresh memory is zero): no value yet. A
        // written record's CRC is never 0 for these fields.
        return Some(None);
    }
    if flags > 1 || len > max || len > b.len() - REC_HEAD {
        return None;
    }
    let v = &b[REC_HEAD..REC_HEAD + len];
    if crc32c_append(crc32c(&b[..8]), v) != crc {
        return None;
    }
    Some((flags == 1).then(|| v.to_vec()))
}

impl Direct {
    fn read(&mut self, va: u64, len: usize) -> KvResult<Vec<u8>> {
        self.rounds += 1;
        let d = self.c.rread(va, len)?;
        if d.len() != len {
            return Err(KvError::Corrupt {
                from: "memory node",
                detail: format!("read of {len} bytes returned {}", d.len()),
            });
        }
        Ok(d)
    }

    fn cas(&mut self, va: u64, old: u64, new: u64) -> KvResult<u64> {
        self.rounds += 1;
        Ok(self.c.compare_and_swap(va, old, new)?)
    }

    fn write(&mut self, va: u64, data: &[u8]) -> KvResult<()> {
        self.rounds += 1;
        Ok(self.c.rwrite(va, data)?)
    }

    /// The key's slot; with `create`, claim one if it has none.
    fn lookup(&mut self, key: &[u8], create: bool) -> KvResult<Option<u64>> {
        if let Some(&i) = self.cache.read().map_err(poisoned)?.get(key) {
            return Ok(Some(i));
        }
        let tag = fnv1a64(key) | 1;
        let cap = self.l.capacity;
        let mut i = tag % cap;
        let mut probes = 0u64;
        let mut waits = 0u32;
        let started = Instant::now();
        while probes < cap {
            let va = self.l.slot(i);
            let area = self.read(va, KEY_AREA as usize)?;
            let mut t = u64::from_le_bytes(area[0..8].try_into().map_err(|_| short())?);
            if t == 0 {
                if !create {
                    return Ok(None);
                }
                let old = self.cas(va, 0, tag)?;
                if old == 0 {
                    let mut k = Vec::with_capacity(8 + key.len());
                    k.extend_from_slice(&(key.len() as u32).to_le_bytes());
                    k.extend_from_slice(&key_crc(key).to_le_bytes());
                    k.extend_from_slice(key);
                    self.write(va + 8, &k)?;
                    self.remember(key, i)?;
                    return Ok(Some(i));
                }
                t = old;
                if t == tag {
                    continue; // someone claimed it for a key with our tag: re-read
                }
            }
            if t == tag {
                let len = u32_at(&area, 8) as usize;
                let crc = u32_at(&area, 12);
                if len == 0 || len > MAX_KEY || crc != key_crc(&area[16..16 + len]) {
                    // Claimed but the key not written yet (or damaged): wait for it.
                    if started.elapsed() > PATIENCE {
                        return Err(KvError::Contention {
                            what: "pdpm-direct: slot claimed but its key never appeared",
                            attempts: waits,
                        });
                    }
                    waits += 1;
                    backoff(waits);
                    continue;
                }
                if &area[16..16 + len] == key {
                    self.remember(key, i)?;
                    return Ok(Some(i));
                }
            }
            i = (i + 1) % cap;
            probes += 1;
        }
        if create {
            Err(KvError::Full("pdpm-direct: every slot is taken"))
        } else {
            Ok(None)
        }
    }

    fn remember(&self, key: &[u8], i: u64) -> KvResult<()> {
        self.cache
            .write()
            .map_err(poisoned)?
            .insert(key.to_vec(), i);
        Ok(())
    }

    fn locked_write(&mut self, i: u64, rec: &[u8]) -> KvResult<()> {
        let slot = self.l.slot(i);
        let started = Instant::now();
        let mut attempt = 0u32;
        while self.cas(slot + LOCK, 0, 1)? != 0 {
            if started.elapsed() > PATIENCE {
                return Err(KvError::Contention {
                    what: "pdpm-direct: entry lock",
                    attempts: attempt,
                });
            }
            attempt += 1;
            backoff(attempt);
        }
        let r = self
            .write(slot + COMMITTED + self.l.rec_len(), rec)
            .and_then(|_| self.write(slot + COMMITTED, rec));
        self.rounds += 1;
        let u = self.c.runlock(slot + LOCK);
        r?;
        Ok(u?)
    }
}

fn short() -> KvError {
    KvError::Corrupt {
        from: "memory node",
        detail: "short read".into(),
    }
}

pub(crate) fn poisoned<T>(_: T) -> KvError {
    KvError::Refused {
        peer: "local",
        detail: "a thread panicked holding a cache lock".into(),
    }
}

impl KvStore for Direct {
    fn get(&mut self, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        check_key(key)?;
        let Some(i) = self.lookup(key, false)? else {
            return Ok(None);
        };
        let va = self.l.slot(i) + COMMITTED;
        let len = self.l.rec_len() as usize;
        let started = Instant::now();
        let mut attempt = 0u32;
        loop {
            let b = self.read(va, len)?;
            if let Some(v) = parse_record(&b, self.l.max_value) {
                return Ok(v);
            }
            // A write in progress: read again.
            if started.elapsed() > PATIENCE {
                return Err(KvError::Contention {
                    what: "pdpm-direct: read kept failing its CRC",
                    attempts: attempt,
                });
            }
            attempt += 1;
            backoff(attempt.min(4));
        }
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> KvResult<()> {
        check_key(key)?;
        check_value(value, self.l.max_value)?;
        let rec = record(true, value);
        let i = self
            .lookup(key, true)?
            .ok_or(KvError::Full("pdpm-direct"))?;
        self.locked_write(i, &rec)
    }

    fn delete(&mut self, key: &[u8]) -> KvResult<()> {
        check_key(key)?;
        match self.lookup(key, false)? {
            Some(i) => self.locked_write(i, &record(false, &[])),
            None => Ok(()),
        }
    }

    fn cost(&mut self) -> KvResult<Cost> {
        Ok(Cost::of_node_client(&self.c, self.rounds))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_damage_is_seen() {
        let r = record(true, b"hello");
        assert_eq!(parse_record(&r, 16), Some(Some(b"hello".to_vec())));
        assert_eq!(parse_record(&record(false, &[]), 16), Some(None));
        for bit in 0..r.len() * 8 {
            if bit / 8 >= 12 && bit / 8 < 16 {
                continue; // padding
            }
            let mut d = r.clone();
            d[bit / 8] ^= 1 << (bit % 8);
            assert_eq!(parse_record(&d, 16), None, "bit {bit}");
        }
        assert_eq!(parse_record(&r, 4), None, "longer than the store's limit");
        assert_eq!(parse_record(&r[..10], 16), None);
        assert_eq!(
            parse_record(&[0u8; 32], 16),
            Some(None),
            "fresh memory: no value"
        );
        assert_ne!(crc32c(&[0u8; 8]), 0);
    }
}
