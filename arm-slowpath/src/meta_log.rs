//! The slow path's metadata log in the memory file (format: `clio_proto::persist`).
//!
//! Every change of the node's durable state (a RAS created or retired, a member added or
//! removed, a region allocated or freed, a frame handed to the fast path) is appended as a
//! CRC-sealed record and flushed before the slow path acts on it or answers. At start the log
//! is read back; [`crate::SlowPath::recover`] rebuilds the state from it and the page table.

use clio_proto::persist::{
    MetaRecord, PersistError, Superblock, LOG_HALF_BYTES, LOG_START, META_BYTES, SUPER_BYTES,
    SUPER_SLOTS,
};
use memmap2::{MmapMut, MmapOptions};
use std::fs::OpenOptions;
use std::path::Path;

/// Where the metadata area lives: bytes that survive the node, and a way to flush them.
pub trait MetaStore {
    /// The whole area ([`META_BYTES`]).
    fn bytes(&mut self) -> &mut [u8];
    /// Make `[off, off + len)` durable; false if that failed.
    fn flush(&mut self, off: u64, len: u64) -> bool;
}

/// The metadata area of a memory file, mapped.
#[derive(Debug)]
pub struct MappedMeta {
    map: MmapMut,
}

impl MappedMeta {
    /// Map the area at `offset` of `path` (the DRAM image's size: the area follows it). The
    /// file grows to hold it if needed (sparse).
    pub fn open(path: &Path, offset: u64) -> std::io::Result<MappedMeta> {
        let f = OpenOptions::new().read(true).write(true).open(path)?;
        if f.metadata()?.len() < offset + META_BYTES {
            f.set_len(offset + META_BYTES)?;
        }
        // SAFETY: the metadata area is written only by this slow path (one daemon per node,
        // checked by the ring's daemon state); the fast path and the DRAM model map only the
        // bytes before `offset`.
        let map = unsafe {
            MmapOptions::new()
                .offset(offset)
                .len(META_BYTES as usize)
                .map_mut(&f)?
        };
        Ok(MappedMeta { map })
    }
}

impl MetaStore for MappedMeta {
    fn bytes(&mut self) -> &mut [u8] {
        &mut self.map
    }
    fn flush(&mut self, off: u64, len: u64) -> bool {
        self.map.flush_range(off as usize, len as usize).is_ok()
    }
}

/// An in-memory area (tests).
impl MetaStore for Vec<u8> {
    fn bytes(&mut self) -> &mut [u8] {
        self
    }
    fn flush(&mut self, _off: u64, _len: u64) -> bool {
        true
    }
}

/// The open log.
pub struct MetaLog {
    store: Box<dyn MetaStore + Send>,
    sb: Superblock,
    /// Next free byte within the active half.
    end: u64,
    /// Records appended since the log was opened (counters).
    pub appended: u64,
    /// Compactions done.
    pub compactions: u64,
}

impl std::fmt::Debug for MetaLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MetaLog")
            .field("superblock", &self.sb)
            .field("end", &self.end)
            .finish()
    }
}

/// What opening found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opened {
    /// An empty area: formatted now, nothing to recover.
    Formatted,
    /// A node's state to recover.
    Recovered(Vec<MetaRecord>),
}

fn half_base(half: u32) -> u64 {
    LOG_START + half as u64 * LOG_HALF_BYTES
}

impl MetaLog {
    /// Open the area for a node of `dram_bytes` and `page_shift`: format it if it is all
    /// zeros, read its records back if it holds a log of this geometry, refuse anything else
    /// (never reinitialised silently).
    pub fn open(
        mut store: Box<dyn MetaStore + Send>,
        dram_bytes: u64,
        page_shift: u32,
    ) -> Result<(MetaLog, Opened), PersistError> {
        let b = store.bytes();
        let mut best: Option<Superblock> = None;
        for slot in SUPER_SLOTS {
            let s = slot as usize;
            if let Some(sb) = Superblock::decode(&b[s..s + SUPER_BYTES])? {
                if best.is_none_or(|x| sb.generation > x.generation) {
                    best = Some(sb);
                }
            }
        }
        let Some(sb) = best else {
            if b.iter().any(|x| *x != 0) {
                return Err(PersistError::Foreign);
            }
            let sb = Superblock {
                dram_bytes,
                page_shift,
                generation: 1,
                half: 0,
            };
            let mut log = MetaLog {
                store,
                sb,
                end: 0,
                appended: 0,
                compactions: 0,
            };
            log.write_superblock();
            return Ok((log, Opened::Formatted));
        };
        if sb.dram_bytes != dram_bytes || sb.page_shift != page_shift {
            return Err(PersistError::Geometry {
                dram: sb.dram_bytes,
                shift: sb.page_shift,
                want_dram: dram_bytes,
                want_shift: page_shift,
            });
        }
        let base = half_base(sb.half) as usize;
        let half = &b[base..base + LOG_HALF_BYTES as usize];
        let mut at = 0usize;
        let mut records = Vec::new();
        while let Some((r, n)) = MetaRecord::decode(&half[at..], sb.generation) {
            records.push(r);
            at += n;
        }
        Ok((
            MetaLog {
                store,
                sb,
                end: at as u64,
                appended: 0,
                compactions: 0,
            },
            Opened::Recovered(records),
        ))
    }

    fn write_superblock(&mut self) -> bool {
        let slot = SUPER_SLOTS[(self.sb.generation % 2) as usize];
        let enc = self.sb.encode();
        self.store.bytes()[slot as usize..slot as usize + SUPER_BYTES].copy_from_slice(&enc);
        self.store.flush(slot, SUPER_BYTES as u64)
    }

    /// Give the store back (tests, tools).
    pub fn into_store(self) -> Box<dyn MetaStore + Send> {
        self.store
    }

    /// Whether `n` more bytes fit in the active half.
    pub fn has_room(&self, n: usize) -> bool {
        self.end + n as u64 <= LOG_HALF_BYTES
    }

    /// Append records and make them durable; false if they do not fit (compact first) or the
    /// flush failed.
    pub fn append(&mut self, records: &[MetaRecord]) -> bool {
        let g = self.sb.generation;
        let bytes: Vec<u8> = records.iter().flat_map(|r| r.encode(g)).collect();
        if !self.has_room(bytes.len()) {
            return false;
        }
        let off = half_base(self.sb.half) + self.end;
        self.store.bytes()[off as usize..off as usize + bytes.len()].copy_from_slice(&bytes);
        self.end += bytes.len() as u64;
        self.appended += records.len() as u64;
        self.store.flush(off, bytes.len() as u64)
    }

    /// Replace the log by `snapshot` (the whole current state) in the other half, then switch
    /// to it with the next superblock generation. False if the snapshot does not fit.
    pub fn compact(&mut self, snapshot: &[MetaRecord]) -> bool {
        // Sealed for the next generation: until its superblock is written they do not count.
        let g = self.sb.generation + 1;
        let bytes: Vec<u8> = snapshot.iter().flat_map(|r| r.encode(g)).collect();
        if bytes.len() as u64 > LOG_HALF_BYTES {
            return false;
        }
        let other = 1 - self.sb.half;
        let base = half_base(other) as usize;
        self.store.bytes()[base..base + bytes.len()].copy_from_slice(&bytes);
        let ok = self.store.flush(base as u64, bytes.len() as u64);
        self.sb = Superblock {
            generation: self.sb.generation + 1,
            half: other,
            ..self.sb
        };
        self.end = bytes.len() as u64;
        self.compactions += 1;
        ok && self.write_superblock()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn area() -> Box<Vec<u8>> {
        Box::new(vec![0u8; META_BYTES as usize])
    }

    #[test]
    fn format_append_reopen_compact() {
        let (mut log, o) = MetaLog::open(area(), 1 << 30, 22).unwrap();
        assert_eq!(o, Opened::Formatted);
        let recs = [
            MetaRecord::RasCreate { pid: 1, key: 77 },
            MetaRecord::MemberAdd {
                pid: 1,
                client: 1,
                nonce: 5,
            },
        ];
        assert!(log.append(&recs));
        // Reopen the same bytes.
        let bytes = log.store.bytes().to_vec();
        let (mut log2, o) = MetaLog::open(Box::new(bytes), 1 << 30, 22).unwrap();
        assert_eq!(o, Opened::Recovered(recs.to_vec()));
        assert!(log2.compact(&recs[..1]));
        log2.append(&[MetaRecord::RasRetire { pid: 1 }]);
        let bytes = log2.store.bytes().to_vec();
        let (_, o) = MetaLog::open(Box::new(bytes.clone()), 1 << 30, 22).unwrap();
        assert_eq!(
            o,
            Opened::Recovered(vec![recs[0], MetaRecord::RasRetire { pid: 1 }])
        );
        assert!(matches!(
            MetaLog::open(Box::new(bytes), 2 << 30, 22),
            Err(PersistError::Geometry { .. })
        ));
        let mut foreign = vec![0u8; META_BYTES as usize];
        foreign[100] = 1;
        assert_eq!(
            MetaLog::open(Box::new(foreign), 1 << 30, 22).err(),
            Some(PersistError::Foreign)
        );
    }

    #[test]
    fn a_torn_last_record_is_dropped() {
        let (mut log, _) = MetaLog::open(area(), 1 << 30, 22).unwrap();
        log.append(&[MetaRecord::RasCreate { pid: 1, key: 77 }]);
        log.append(&[MetaRecord::RasCreate { pid: 2, key: 78 }]);
        let mut bytes = log.store.bytes().to_vec();
        // Tear the second record: its last byte never reached the file.
        let second_end = LOG_START as usize + 2 * 18; // two 18-byte RasCreate records
        bytes[second_end - 1] ^= 0xFF;
        let (_, o) = MetaLog::open(Box::new(bytes), 1 << 30, 22).unwrap();
        assert_eq!(
            o,
            Opened::Recovered(vec![MetaRecord::RasCreate { pid: 1, key: 77 }])
        );
    }
}
