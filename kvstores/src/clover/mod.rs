//! Clover (Tsai et al., ATC '20, section 5): data plane at the compute nodes over one-sided
//! operations, a metadata server (MS, its own process) for allocation and garbage collection
//! only.
//!
//! Remote layout:
//! * an **anchor** per key (16 bytes, allocated by the MS from fresh, zeroed memory, never
//!   reused): word 0 is the chain's first link, word 1 the **shortcut** (a pointer to a recent
//!   version; 0 = none);
//! * **versions**, written out of place into buffers the MS hands out in batches: a 48-byte
//!   header (word 0 = next link, GC version, flags, length, sequence number, key hash, CRC)
//!   and the value.
//!
//! A link word is either a pointer `1 | va/64 (42 bits) | seq mod 8192 (13) | gc (8)` or, at
//! the tail, the tail tag `gc` of the buffer itself. The tag carries the GC version, so a
//! compare-and-swap that links after a buffer that was reclaimed and reused meanwhile fails.
//!
//! * get: read the CN's cached **cursor** version and the anchor (its shortcut) in parallel;
//!   if the cursor is still the tail, done (one round trip). Otherwise walk from the later of
//!   the shortcut and the cursor's next link to the tail. A version whose GC version, key hash
//!   or CRC does not match was reclaimed (or is being rewritten): drop the cursor, start over.
//! * put / delete (a tombstone version): write the new version into a free buffer, then
//!   compare-and-swap the cursor's link from "tail" to the new version (two round trips).
//!   If that fails, walk to the real tail, rewrite the version's sequence number, try again.
//! * off the critical path (a per-CN janitor thread): move the shortcut forward to the new
//!   version (compare-and-swap, only ever forward by sequence number), then **retire** the
//!   version it replaced; retirements go to the MS in batches.
//! * MS: hands out anchors and buffers; on retirement bumps a buffer's GC version and puts it
//!   on the free list without touching it. A GC version that wraps (8 bits, as in the paper)
//!   parks the buffer on an overflow list for the epoch `Te` first; CNs drop cursors unused for
//!   `Te/2` and restart operations that took longer than `Te/2`, so a wrapped version can never
//!   be mistaken for the one a CN remembers.
//!
//! What differs from the paper: a version is retired only once the shortcut has moved past
//! it (the paper leaves the retire point open; this keeps the shortcut always pointing at an
//! unreclaimed version, so a reader can always find the tail); the shortcut is moved by
//! compare-and-swap rather than a plain write so that it never moves backwards; the MS gets
//! its memory from the node with `ralloc` (the node's allocator is the control path here)
//! and never reads or writes it; epochs are local timers, not MS messages; no replication,
//! no MS backup, one size class.

use crate::pdpm_direct::poisoned;
use crate::rpc::{self, put_blob, Reader, RpcClient};
use crate::store::{
    check_key, check_value, fnv1a64, Cost, KvError, KvResult, KvStore, NodeLink, StoreFactory,
    StoreSpec, MAX_KEY,
};
use clap::Args;
use clio_clib::transport::FaultConfig;
use clio_clib::{Client, Config, Output};
use clio_proto::checksum::{crc32c, crc32c_append};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

mod ms;
pub use ms::{ms_args, ms_stats, run_metadata_server, GcState, MsArgs};

/// Name in specs and tables.
pub const NAME: &str = "clover";
const PEER: &str = "clover metadata server";

const HDR: usize = 48;
const ANCHOR: u64 = 16;
const SEQ_MASK: u64 = 0x1FFF;
/// Buffers a CN asks the MS for at a time.
const ALLOC_BATCH: u32 = 16;
/// Retirements a CN batches before telling the MS.
const RETIRE_BATCH: usize = 16;
/// Buffers the MS carves from one allocation at the node.
const CHUNK_BUFFERS: u64 = 512;
/// Anchors the MS carves from one allocation.
const CHUNK_ANCHORS: u64 = 4096;
/// Restarts (reclaimed versions met, lost races) before an operation gives up.
const MAX_RESTARTS: u32 = 10_000;

const LOOKUP: u8 = 1;
const ALLOC: u8 = 2;
const RETIRE: u8 = 3;
const STATS: u8 = 4;
const OK: u8 = 0x80;

/// Bytes of a version buffer for values up to `max_value`.
pub fn buffer_bytes(max_value: usize) -> u64 {
    ((HDR + max_value) as u64).div_ceil(64) * 64
}

/// A link word that points to the version in buffer `va` with GC version `gc`, sequence `seq`.
fn pointer(va: u64, gc: u8, seq: u64) -> u64 {
    1 << 63 | (va >> 6) << 21 | (seq & SEQ_MASK) << 8 | gc as u64
}

/// A version (or the anchor) as a place in a chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Loc {
    va: u64,
    gc: u8,
    /// Full sequence number (0: the anchor).
    seq: u64,
    anchor: bool,
}

impl Loc {
    fn link(&self) -> u64 {
        pointer(self.va, self.gc, self.seq)
    }
}

/// A pointer word decoded: (va, gc, seq mod 8192); `None` for a tail tag.
fn decode_pointer(w: u64) -> Option<(u64, u8, u64)> {
    (w >> 63 == 1).then_some((
        ((w >> 21) & ((1 << 42) - 1)) << 6,
        w as u8,
        (w >> 8) & SEQ_MASK,
    ))
}

/// `a` comes before `b` in a chain (sequence numbers mod 8192, lag below 4096).
fn seq_before(a: u64, b: u64) -> bool {
    let d = b.wrapping_sub(a) & SEQ_MASK;
    d != 0 && d < 4096
}

/// A version read back and checked.
struct Version {
    next: u64,
    seq: u64,
    value: Option<Vec<u8>>,
}

fn encode_version(gc: u8, seq: u64, key_hash: u64, value: Option<&[u8]>) -> Vec<u8> {
    let v = value.unwrap_or(&[]);
    let mut b = vec![0u8; HDR + v.len()];
    b[0..8].copy_from_slice(&(gc as u64).to_le_bytes()); // the tail tag
    b[8] = gc;
    b[9] = u8::from(value.is_some());
    b[12..16].copy_from_slice(&(v.len() as u32).to_le_bytes());
    b[16..24].copy_from_slice(&seq.to_le_bytes());
    b[24..32].copy_from_slice(&key_hash.to_le_bytes());
    b[HDR..].copy_from_slice(v);
    let c = crc32c_append(crc32c(&b[8..32]), v);
    b[32..36].copy_from_slice(&c.to_le_bytes());
    b
}

/// Check a version read from buffer `at` (expected GC version `at.gc`, sequence `at.seq`
/// mod 8192) for key hash `kh`. `None`: not that version (reclaimed, being rewritten, damaged).
fn parse_version(b: &[u8], gc: u8, seq13: u64, kh: u64, max: usize) -> Option<Version> {
    if b.len() < HDR {
        return None;
    }
    let w = |o: usize| {
        let mut x = [0u8; 8];
        x.copy_from_slice(&b[o..o + 8]);
        u64::from_le_bytes(x)
    };
    let len = u32::from_le_bytes([b[12], b[13], b[14], b[15]]) as usize;
    let (next, seq) = (w(0), w(16));
    if b[8] != gc || b[9] > 1 || seq & SEQ_MASK != seq13 || w(24) != kh {
        return None;
    }
    if len > max || len > b.len() - HDR {
        return None;
    }
    let v = &b[HDR..HDR + len];
    let crc = u32::from_le_bytes([b[32], b[33], b[34], b[35]]);
    if crc32c_append(crc32c(&b[8..32]), v) != crc {
        return None;
    }
    // The link is a pointer, or the tail tag of this very buffer.
    if next >> 63 == 0 && next != gc as u64 {
        return None;
    }
    Some(Version {
        next,
        seq,
        value: (b[9] == 1).then(|| v.to_vec()),
    })
}

/// The body of an MS reply, or the error the MS refused with.
fn ok((k, b): (u8, Vec<u8>)) -> KvResult<Vec<u8>> {
    if k == OK {
        Ok(b)
    } else {
        Err(rpc::refused(PEER, k, &b))
    }
}

// ---------------------------------------------------------------- compute node side

/// What a CN remembers about a key.
#[derive(Clone, Copy)]
struct Meta {
    anchor: u64,
    cursor: Option<(Loc, Instant)>,
}

/// Work for the janitor: after linking `new` behind `prev`, move the shortcut of `anchor`
/// forward to `new` and retire `prev`.
struct Linked {
    anchor: u64,
    new: u64,
    prev: Option<(u64, u8)>,
    shortcut_seen: u64,
}

/// One compute node: a member of the RAS, key metadata shared by its threads, a janitor.
pub struct CloverFactory {
    client: Client,
    ms: SocketAddr,
    max_value: usize,
    epoch: Duration,
    ms_faults: Option<FaultConfig>,
    meta: Arc<Mutex<HashMap<Vec<u8>, Meta>>>,
    janitor: Mutex<Option<(mpsc::Sender<Linked>, JoinHandle<()>)>>,
    handles: AtomicU64,
}

/// The spec another process opens the store with.
pub fn spec(link: &NodeLink, ms: SocketAddr, max_value: usize, epoch_ms: u64) -> StoreSpec {
    let mut f = BTreeMap::new();
    link.to_fields(&mut f);
    f.insert("ms".into(), ms.to_string());
    f.insert("maxv".into(), max_value.to_string());
    f.insert("te_ms".into(), epoch_ms.to_string());
    StoreSpec {
        system: NAME.into(),
        fields: f,
    }
}

impl CloverFactory {
    /// A new CN of the store whose MS is at `ms` (faults, if any, on both its links).
    pub fn join(
        link: &NodeLink,
        ms: SocketAddr,
        max_value: usize,
        epoch_ms: u64,
    ) -> KvResult<CloverFactory> {
        let client = link.join()?;
        let ms_faults = link.reseeded(0x5EED).faults;
        let (tx, rx) = mpsc::channel::<Linked>();
        let mut retire_rpc = RpcClient::connect(ms, PEER, ms_faults)?;
        let jc = client.clone();
        let j = std::thread::Builder::new()
            .name("clover-janitor".into())
            .spawn(move || janitor(jc, &mut retire_rpc, rx))?;
        Ok(CloverFactory {
            client,
            ms,
            max_value,
            epoch: Duration::from_millis(epoch_ms.max(2)),
            ms_faults,
            meta: Arc::default(),
            janitor: Mutex::new(Some((tx, j))),
            handles: AtomicU64::new(0),
        })
    }

    /// Open from a spec.
    pub fn from_spec(s: &StoreSpec, config: Config) -> KvResult<CloverFactory> {
        CloverFactory::join(
            &NodeLink::from_spec(s, config)?,
            s.parse("ms")?,
            s.parse("maxv")?,
            s.parse("te_ms")?,
        )
    }

    /// Let the janitor finish its shortcut moves and send its last retirements (also done on
    /// drop).
    pub fn flush(&self) {
        if let Ok(mut j) = self.janitor.lock() {
            if let Some((tx, h)) = j.take() {
                drop(tx);
                let _ = h.join();
            }
        }
    }
}

impl Drop for CloverFactory {
    fn drop(&mut self) {
        self.flush();
    }
}

fn janitor(c: Client, ms: &mut RpcClient, rx: mpsc::Receiver<Linked>) {
    let mut batch: Vec<(u64, u8)> = Vec::new();
    // The shortcut value this CN last saw per anchor: the compare-and-swap's guess (a wrong
    // guess costs one more compare-and-swap, nothing else).
    let mut known: HashMap<u64, u64> = HashMap::new();
    let send = |ms: &mut RpcClient, batch: &mut Vec<(u64, u8)>| {
        if batch.is_empty() {
            return;
        }
        let mut body = (batch.len() as u32).to_le_bytes().to_vec();
        for (va, gc) in batch.iter() {
            body.extend_from_slice(&va.to_le_bytes());
            body.push(*gc);
        }
        // A batch the MS never acknowledges is leaked, not reused: safe.
        let _ = ms.call(RETIRE, body);
        batch.clear();
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(l) => {
                let guess = match (known.get(&l.anchor), l.shortcut_seen) {
                    (Some(&k), 0) => k,
                    (_, s) => s,
                };
                if let Some(now) = advance_shortcut(&c, &l, guess) {
                    known.insert(l.anchor, now);
                    if let Some(p) = l.prev {
                        batch.push(p);
                    }
                }
                if batch.len() >= RETIRE_BATCH {
                    send(ms, &mut batch);
                }
            }
            Err(RecvTimeoutError::Timeout) => send(ms, &mut batch),
            Err(RecvTimeoutError::Disconnected) => {
                send(ms, &mut batch);
                return;
            }
        }
    }
}

/// Move the shortcut of `l.anchor` forward to `l.new` unless it is already at or past it,
/// starting from the guess `s` of its current value. `Some(shortcut now)` once the shortcut
/// is past `l.prev` (which may then be retired).
fn advance_shortcut(c: &Client, l: &Linked, mut s: u64) -> Option<u64> {
    let (_, _, new_seq) = decode_pointer(l.new)?;
    for _ in 0..64 {
        if let Some((_, _, s_seq)) = decode_pointer(s) {
            if !seq_before(s_seq, new_seq) {
                return Some(s); // someone moved it at least as far
            }
        }
        match c.compare_and_swap(l.anchor + 8, s, l.new) {
            Ok(old) if old == s => return Some(l.new),
            Ok(old) => s = old,
            Err(_) => return None,
        }
    }
    None
}

impl StoreFactory for CloverFactory {
    fn name(&self) -> &'static str {
        NAME
    }
    fn open(&self) -> KvResult<Box<dyn KvStore>> {
        let n = self.handles.fetch_add(1, Ordering::Relaxed);
        let faults = self.ms_faults.map(|mut f| {
            f.seed = f.seed.wrapping_add(n.wrapping_mul(0x9E37_79B9));
            f
        });
        let janitor = self
            .janitor
            .lock()
            .map_err(poisoned)?
            .as_ref()
            .map(|(tx, _)| tx.clone())
            .ok_or(KvError::Spec("clover store already flushed".into()))?;
        Ok(Box::new(Clover {
            c: self.client.clone(),
            ms: RpcClient::connect(self.ms, PEER, faults)?,
            max_value: self.max_value,
            buf_bytes: buffer_bytes(self.max_value),
            epoch: self.epoch,
            meta: self.meta.clone(),
            pool: Vec::new(),
            janitor,
            rounds: std::cell::Cell::new(0),
        }))
    }
}

/// One thread's handle.
pub struct Clover {
    c: Client,
    ms: RpcClient,
    max_value: usize,
    buf_bytes: u64,
    epoch: Duration,
    meta: Arc<Mutex<HashMap<Vec<u8>, Meta>>>,
    pool: Vec<(u64, u8)>,
    janitor: mpsc::Sender<Linked>,
    /// Round trips this handle waited for.
    rounds: std::cell::Cell<u64>,
}

/// The tail of a chain as found.
struct Tail {
    loc: Loc,
    value: Option<Vec<u8>>,
    shortcut: u64,
}

impl Clover {
    fn round(&self) {
        self.rounds.set(self.rounds.get() + 1);
    }

    fn meta(&mut self, key: &[u8]) -> KvResult<Meta> {
        if let Some(m) = self.meta.lock().map_err(poisoned)?.get(key) {
            return Ok(*m);
        }
        let mut body = Vec::new();
        put_blob(&mut body, key);
        self.round();
        let b = ok(self.ms.call(LOOKUP, body)?)?;
        let anchor = Reader::new(&b, PEER).u64()?;
        if anchor % 8 != 0 || anchor == 0 {
            return Err(KvError::Corrupt {
                from: PEER,
                detail: format!("anchor 0x{anchor:x}"),
            });
        }
        let m = Meta {
            anchor,
            cursor: None,
        };
        self.meta.lock().map_err(poisoned)?.insert(key.to_vec(), m);
        Ok(m)
    }

    fn set_cursor(&self, key: &[u8], anchor: u64, cursor: Option<Loc>) {
        if let Ok(mut m) = self.meta.lock() {
            m.insert(
                key.to_vec(),
                Meta {
                    anchor,
                    cursor: cursor.map(|c| (c, Instant::now())),
                },
            );
        }
    }

    fn read(&self, va: u64, len: usize) -> KvResult<Vec<u8>> {
        self.round();
        let d = self.c.rread(va, len)?;
        if d.len() != len {
            return Err(short());
        }
        Ok(d)
    }

    /// Find the tail of `key`'s chain, starting from the cached cursor if it is fresh.
    fn find_tail(&mut self, key: &[u8], kh: u64) -> KvResult<Tail> {
        let m = self.meta(key)?;
        let half = self.epoch / 2;
        let fresh = |t: Instant| t.elapsed() < half;
        let mut cursor = m.cursor.filter(|(_, t)| fresh(*t)).map(|(c, _)| c);
        let started = Instant::now();
        for _ in 0..MAX_RESTARTS {
            if !fresh(started) {
                return Err(KvError::Contention {
                    what: "clover: finding the tail took longer than half an epoch",
                    attempts: 0,
                });
            }
            // One round trip: the anchor (first link, shortcut) and the cursor's version.
            let ha = self.c.rread_async(m.anchor, ANCHOR as usize)?;
            let hc = match cursor {
                Some(c) if !c.anchor => Some(self.c.rread_async(c.va, self.buf_bytes as usize)?),
                _ => None,
            };
            self.round();
            let a = data(self.c.rpoll_one(ha)?, ANCHOR as usize)?;
            let first = u64::from_le_bytes(a[0..8].try_into().map_err(|_| short())?);
            let shortcut = u64::from_le_bytes(a[8..16].try_into().map_err(|_| short())?);
            let mut start = None;
            if let (Some(c), Some(h)) = (cursor, hc) {
                let b = data(self.c.rpoll_one(h)?, self.buf_bytes as usize)?;
                if let Some(v) = parse_version(&b, c.gc, c.seq & SEQ_MASK, kh, self.max_value) {
                    if v.next == c.gc as u64 {
                        return Ok(Tail {
                            loc: Loc { seq: v.seq, ..c },
                            value: v.value,
                            shortcut,
                        });
                    }
                    start = Some(v.next);
                }
            }
            // Start from the later of the cursor's next link and the shortcut.
            if let Some(s) = decode_pointer(shortcut) {
                match start.and_then(decode_pointer) {
                    Some((_, _, n)) if !seq_before(n, s.2) => {}
                    _ => start = Some(shortcut),
                }
            }
            if start.is_none() {
                if first == 0 {
                    // No version was ever linked: the anchor is the tail.
                    let loc = Loc {
                        va: m.anchor,
                        gc: 0,
                        seq: 0,
                        anchor: true,
                    };
                    return Ok(Tail {
                        loc,
                        value: None,
                        shortcut,
                    });
                }
                start = Some(first);
            }
            match self.walk(start.unwrap_or(0), kh)? {
                Some(t) => return Ok(Tail { shortcut, ..t }),
                None => cursor = None, // met a reclaimed version: start over
            }
        }
        Err(KvError::Contention {
            what: "clover: chain walk kept meeting reclaimed versions",
            attempts: MAX_RESTARTS,
        })
    }

    /// Follow links from `p` to the tail; `None` if a version on the way was reclaimed.
    fn walk(&mut self, mut p: u64, kh: u64) -> KvResult<Option<Tail>> {
        for _ in 0..MAX_RESTARTS {
            let Some((va, gc, seq13)) = decode_pointer(p) else {
                return Ok(None);
            };
            let b = self.read(va, self.buf_bytes as usize)?;
            let Some(v) = parse_version(&b, gc, seq13, kh, self.max_value) else {
                return Ok(None);
            };
            if v.next == gc as u64 {
                let loc = Loc {
                    va,
                    gc,
                    seq: v.seq,
                    anchor: false,
                };
                return Ok(Some(Tail {
                    loc,
                    value: v.value,
                    shortcut: 0,
                }));
            }
            p = v.next;
        }
        Ok(None)
    }

    fn buffer(&mut self) -> KvResult<(u64, u8)> {
        if let Some(b) = self.pool.pop() {
            return Ok(b);
        }
        self.round();
        let b = ok(self.ms.call(ALLOC, ALLOC_BATCH.to_le_bytes().to_vec())?)?;
        let mut r = Reader::new(&b, PEER);
        let n = r.u32()?.min(ALLOC_BATCH);
        for _ in 0..n {
            let va = r.u64()?;
            let gc = r.bytes(1)?[0];
            if va % 64 != 0 || va >= 1 << 48 || va == 0 {
                return Err(KvError::Corrupt {
                    from: PEER,
                    detail: format!("buffer 0x{va:x}"),
                });
            }
            self.pool.push((va, gc));
        }
        self.pool
            .pop()
            .ok_or(KvError::Full("clover: the MS has no buffers"))
    }

    fn cas(&self, va: u64, old: u64, new: u64) -> KvResult<u64> {
        self.round();
        Ok(self.c.compare_and_swap(va, old, new)?)
    }

    fn write(&self, va: u64, d: &[u8]) -> KvResult<()> {
        self.round();
        Ok(self.c.rwrite(va, d)?)
    }

    /// Append a version (a value, or a tombstone for `None`).
    fn append(&mut self, key: &[u8], value: Option<&[u8]>) -> KvResult<()> {
        check_key(key)?;
        if let Some(v) = value {
            check_value(v, self.max_value)?;
        }
        let kh = fnv1a64(key);
        let m = self.meta(key)?;
        let (buf, bgc) = self.buffer()?;
        let mut shortcut_seen = 0;
        // Fast path (the paper's two round trips): write, then link after the cursor.
        let mut linked: Option<(Loc, u64)> = None;
        if let Some((c, t)) = m.cursor {
            if t.elapsed() < self.epoch / 2 {
                let seq = c.seq + 1;
                let r = self
                    .write(buf, &encode_version(bgc, seq, kh, value))
                    .and_then(|_| self.cas(c.va, c.gc as u64, pointer(buf, bgc, seq)));
                match r {
                    Ok(old) if old == c.gc as u64 => linked = Some((c, seq)),
                    Ok(_) => {}
                    Err(e) => return Err(e), // outcome unknown: the buffer is not reused
                }
            }
        }
        if linked.is_none() {
            let mut attempts = 0;
            loop {
                attempts += 1;
                if attempts > MAX_RESTARTS {
                    self.pool.push((buf, bgc));
                    return Err(KvError::Contention {
                        what: "clover: linking a new version",
                        attempts,
                    });
                }
                let read_at = Instant::now();
                let t = self.find_tail(key, kh)?;
                shortcut_seen = t.shortcut;
                let seq = t.loc.seq + 1;
                self.write(buf, &encode_version(bgc, seq, kh, value))?;
                if read_at.elapsed() >= self.epoch / 2 {
                    continue; // the tail's GC version could have wrapped meanwhile
                }
                let old = self.cas(t.loc.va, t.loc.gc as u64, pointer(buf, bgc, seq))?;
                if old == t.loc.gc as u64 {
                    linked = Some((t.loc, seq));
                    break;
                }
                self.set_cursor(key, m.anchor, None);
            }
        }
        let Some((prev, seq)) = linked else {
            return Err(KvError::Contention {
                what: "clover: linking a new version",
                attempts: 0,
            });
        };
        let new = Loc {
            va: buf,
            gc: bgc,
            seq,
            anchor: false,
        };
        self.set_cursor(key, m.anchor, Some(new));
        let _ = self.janitor.send(Linked {
            anchor: m.anchor,
            new: new.link(),
            prev: (!prev.anchor).then_some((prev.va, prev.gc)),
            shortcut_seen,
        });
        Ok(())
    }
}

fn short() -> KvError {
    KvError::Corrupt {
        from: "memory node",
        detail: "short read".into(),
    }
}

fn data(o: Output, len: usize) -> KvResult<Vec<u8>> {
    match o {
        Output::Data(d) if d.len() == len => Ok(d),
        _ => Err(short()),
    }
}

impl KvStore for Clover {
    fn get(&mut self, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        check_key(key)?;
        let kh = fnv1a64(key);
        let t = self.find_tail(key, kh)?;
        let m = self.meta(key)?;
        self.set_cursor(key, m.anchor, Some(t.loc));
        Ok(t.value)
    }

    fn put(&mut self, key: &[u8], value: &[u8]) -> KvResult<()> {
        self.append(key, Some(value))
    }

    fn delete(&mut self, key: &[u8]) -> KvResult<()> {
        self.append(key, None)
    }

    fn cost(&mut self) -> KvResult<Cost> {
        let s = self.c.stats();
        Ok(Cost {
            node_requests: s.requests,
            rpc_requests: self.ms.requests,
            round_trips: self.rounds.get(),
            retransmits: s.retransmits + self.ms.retransmits,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_and_versions_round_trip() {
        let p = pointer(0x7fff_ffff_ffc0, 200, 9000);
        assert_eq!(
            decode_pointer(p),
            Some((0x7fff_ffff_ffc0, 200, 9000 & SEQ_MASK))
        );
        assert_eq!(decode_pointer(200), None, "a tail tag");
        assert!(seq_before(8191, 3) && !seq_before(3, 8191) && !seq_before(5, 5));
        let v = encode_version(7, 42, 99, Some(b"value"));
        let p = parse_version(&v, 7, 42, 99, 64).unwrap();
        assert_eq!((p.next, p.seq, p.value), (7, 42, Some(b"value".to_vec())));
        assert!(
            parse_version(&v, 8, 42, 99, 64).is_none(),
            "other GC version"
        );
        assert!(parse_version(&v, 7, 43, 99, 64).is_none(), "other sequence");
        assert!(parse_version(&v, 7, 42, 98, 64).is_none(), "other key");
        assert!(parse_version(&v, 7, 42, 99, 4).is_none(), "too long");
        for byte in 8..v.len() {
            if (10..12).contains(&byte) || (36..HDR).contains(&byte) {
                continue; // padding
            }
            let mut d = v.clone();
            d[byte] ^= 0x10;
            assert!(parse_version(&d, 7, 42, 99, 64).is_none(), "byte {byte}");
        }
        let t = encode_version(7, 43, 99, None);
        assert_eq!(parse_version(&t, 7, 43, 99, 64).unwrap().value, None);
        // A link word that is a tail tag of another buffer is nonsense.
        let mut d = v.clone();
        d[0] = 9;
        assert!(parse_version(&d, 7, 42, 99, 64).is_none());
    }

    #[test]
    fn gc_versions_advance_and_wrapped_buffers_wait_an_epoch() {
        let mut g = GcState::default();
        let t0 = Instant::now();
        let epoch = Duration::from_millis(100);
        g.add_fresh([64]);
        let mut gc = 1u8;
        for round in 0..300u32 {
            let got = g.take(1, t0);
            if gc == 0 {
                // Parked on the overflow list until the epoch has passed.
                assert!(got.is_empty(), "round {round}");
                assert!(g.take(1, t0 + epoch / 2).is_empty());
                assert_eq!(g.take(1, t0 + epoch), vec![(64, 0)]);
            } else {
                assert_eq!(got, vec![(64, gc)], "round {round}");
            }
            assert!(
                !g.retire(64, gc.wrapping_add(1), t0, epoch),
                "wrong version"
            );
            assert!(g.retire(64, gc, t0, epoch));
            assert!(!g.retire(64, gc, t0, epoch), "twice");
            gc = gc.wrapping_add(1);
        }
        assert!(!g.retire(128, 1, t0, epoch), "never handed out");
        assert_eq!(g.overflowed, 1);
        assert_eq!(g.retired, 300);
    }
}
