//! The node's persistent metadata: what the slow path writes into the memory file so that a
//! node that stops or crashes comes back with its remote address spaces, keys, members and
//! regions (docs/durability.md).
//!
//! The memory file is `[DRAM image: dram_bytes][metadata area: META_BYTES]`. The DRAM image
//! holds the data and the hash page table (at physical address 0, as always); the metadata
//! area holds two superblocks and a log in one of two halves:
//!
//! ```text
//! +0       superblock slot 0 (64 bytes, CRC-sealed)
//! +4096    superblock slot 1
//! +8192    log half 0  (LOG_HALF_BYTES)
//! +8192+H  log half 1
//! ```
//!
//! The valid superblock with the highest generation names the active half. The log is a
//! sequence of records from the start of that half, each sealed by a CRC-32C over its bytes
//! and the superblock's generation; the first record that does not check (or a zero length)
//! ends it, so a record torn by a crash is dropped and everything before it stands, and a
//! record left in the half by an older generation never reads as part of the log. When a half is full the slow path writes a snapshot of its state into the
//! other half, then a superblock with the next generation into the older slot: either the old
//! or the new state is complete at every instant. All integers little-endian.

use crate::checksum::crc32c;
use crate::le::{le16, le32, le64};
use thiserror::Error;

/// Bytes of the metadata area after the DRAM image.
pub const META_BYTES: u64 = 8 << 20;
/// "CLIOMETA".
pub const META_MAGIC: u64 = u64::from_le_bytes(*b"CLIOMETA");
/// Format version of the metadata area.
pub const META_VERSION: u32 = 1;
/// Bytes of one superblock.
pub const SUPER_BYTES: usize = 64;
/// Offsets of the two superblock slots.
pub const SUPER_SLOTS: [u64; 2] = [0, 4096];
/// Offset of log half 0.
pub const LOG_START: u64 = 8192;
/// Bytes of one log half.
pub const LOG_HALF_BYTES: u64 = (META_BYTES - LOG_START) / 2;
/// Bytes of a record's header (length u16, kind u8, reserved u8, crc u32).
pub const RECORD_HEADER: usize = 8;

/// Why a memory file's metadata cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum PersistError {
    /// Neither superblock is valid and the area is not empty: not a Clio memory file, or
    /// both superblocks were destroyed.
    #[error("not a Clio memory file (no valid superblock, and the metadata area is not empty)")]
    Foreign,
    /// A Clio memory file of another format version.
    #[error("memory file format version {found}, this node understands {META_VERSION}")]
    Version {
        /// Version found.
        found: u32,
    },
    /// A Clio memory file laid out for another geometry.
    #[error("memory file is for {dram} bytes of DRAM with 2^{shift}-byte pages; this node has {want_dram} bytes and 2^{want_shift}")]
    Geometry {
        /// DRAM bytes in the file.
        dram: u64,
        /// Page shift in the file.
        shift: u32,
        /// DRAM bytes asked.
        want_dram: u64,
        /// Page shift asked.
        want_shift: u32,
    },
}

/// The superblock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Superblock {
    /// DRAM bytes of the node.
    pub dram_bytes: u64,
    /// log2 page size.
    pub page_shift: u32,
    /// Increases with every compaction; the highest valid one wins.
    pub generation: u64,
    /// Active log half (0 or 1).
    pub half: u32,
}

impl Superblock {
    /// Encode into one slot.
    pub fn encode(&self) -> [u8; SUPER_BYTES] {
        let mut b = [0u8; SUPER_BYTES];
        b[0..8].copy_from_slice(&META_MAGIC.to_le_bytes());
        b[8..12].copy_from_slice(&META_VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&self.page_shift.to_le_bytes());
        b[16..24].copy_from_slice(&self.dram_bytes.to_le_bytes());
        b[24..32].copy_from_slice(&self.generation.to_le_bytes());
        b[32..36].copy_from_slice(&self.half.to_le_bytes());
        let c = crc32c(&b[..60]);
        b[60..64].copy_from_slice(&c.to_le_bytes());
        b
    }

    /// Decode a slot: `Ok(None)` if it does not hold a sealed superblock (empty, torn or
    /// foreign), `Err` for a sealed superblock of another version.
    pub fn decode(b: &[u8]) -> Result<Option<Superblock>, PersistError> {
        if b.len() < SUPER_BYTES || le64(b, 0) != META_MAGIC {
            return Ok(None);
        }
        if crc32c(&b[..60]) != le32(b, 60) {
            return Ok(None);
        }
        let version = le32(b, 8);
        if version != META_VERSION {
            return Err(PersistError::Version { found: version });
        }
        Ok(Some(Superblock {
            page_shift: le32(b, 12),
            dram_bytes: le64(b, 16),
            generation: le64(b, 24),
            half: le32(b, 32) & 1,
        }))
    }
}

/// One fact of the slow path's state. The log is written ahead of the descriptors that act on
/// it (a region is logged before its PTEs are written, a free before they are cleared), so
/// recovery can repair the page table from the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaRecord {
    /// A remote address space was created with this key.
    RasCreate {
        /// Its PID.
        pid: u16,
        /// Its key.
        key: u64,
    },
    /// A remote address space's epoch was raised (`crate::epoch`; `Opcode::SetEpoch`).
    RasEpoch {
        /// Its PID.
        pid: u16,
        /// The epoch it holds from now on.
        epoch: u16,
    },
    /// A remote address space was torn down.
    RasRetire {
        /// Its PID.
        pid: u16,
    },
    /// A member joined (or created) a RAS.
    MemberAdd {
        /// RAS.
        pid: u16,
        /// Client id.
        client: u16,
        /// Its Register/Join nonce (a retry across a restart gets the same answer).
        nonce: u64,
    },
    /// A member left.
    MemberRemove {
        /// RAS.
        pid: u16,
        /// Client id.
        client: u16,
    },
    /// A region was allocated.
    RegionAdd {
        /// RAS.
        pid: u16,
        /// First page.
        start_vpn: u64,
        /// Pages.
        pages: u64,
        /// Permissions.
        perms: u8,
    },
    /// A region was freed.
    RegionRemove {
        /// RAS.
        pid: u16,
        /// First page.
        start_vpn: u64,
    },
    /// A frame was pushed into the fast path's free-page buffer (so a daemon that restarts
    /// while the fast path runs on knows which frames the buffer may still hold).
    FramePushed {
        /// Frame.
        pfn: u64,
    },
    /// A member registered a transaction log ([`crate::tx`]).
    TxLogAdd {
        /// RAS.
        pid: u16,
        /// The member that writes it (its records are dropped if it goes away in doubt).
        client: u16,
        /// First byte of the log region.
        va: u64,
        /// Bytes of the log region.
        bytes: u64,
    },
    /// The record `seq` of the log at `va` was resolved: `applied` (its writes are in and
    /// durable) or dropped (in doubt when its writer went away, or not applicable at
    /// recovery). A record with this sequence number or lower is never applied again.
    TxResolved {
        /// RAS.
        pid: u16,
        /// The log.
        va: u64,
        /// The record's sequence number.
        seq: u64,
        /// Applied (true) or dropped (false).
        applied: bool,
    },
    /// A transaction log ended (its region was freed, or its writer left).
    TxLogRemove {
        /// RAS.
        pid: u16,
        /// The log.
        va: u64,
    },
}

fn seal(head: &[u8], payload: &[u8], generation: u64) -> u32 {
    let c = crate::checksum::crc32c_append(crc32c(head), payload);
    crate::checksum::crc32c_append(c, &generation.to_le_bytes())
}

mod kind {
    pub const RAS_CREATE: u8 = 1;
    pub const RAS_RETIRE: u8 = 2;
    pub const MEMBER_ADD: u8 = 3;
    pub const MEMBER_REMOVE: u8 = 4;
    pub const REGION_ADD: u8 = 5;
    pub const REGION_REMOVE: u8 = 6;
    pub const FRAME_PUSHED: u8 = 7;
    pub const TX_LOG_ADD: u8 = 8;
    pub const TX_RESOLVED: u8 = 9;
    pub const TX_LOG_REMOVE: u8 = 10;
    pub const RAS_EPOCH: u8 = 11;
}

impl MetaRecord {
    /// Encode with its header, sealed for log `generation`.
    pub fn encode(&self, generation: u64) -> Vec<u8> {
        let mut p = Vec::with_capacity(32);
        let k = match *self {
            MetaRecord::RasCreate { pid, key } => {
                p.extend_from_slice(&pid.to_le_bytes());
                p.extend_from_slice(&key.to_le_bytes());
                kind::RAS_CREATE
            }
            MetaRecord::RasRetire { pid } => {
                p.extend_from_slice(&pid.to_le_bytes());
                kind::RAS_RETIRE
            }
            MetaRecord::RasEpoch { pid, epoch } => {
                p.extend_from_slice(&pid.to_le_bytes());
                p.extend_from_slice(&epoch.to_le_bytes());
                kind::RAS_EPOCH
            }
            MetaRecord::MemberAdd { pid, client, nonce } => {
                p.extend_from_slice(&pid.to_le_bytes());
                p.extend_from_slice(&client.to_le_bytes());
                p.extend_from_slice(&nonce.to_le_bytes());
                kind::MEMBER_ADD
            }
            MetaRecord::MemberRemove { pid, client } => {
                p.extend_from_slice(&pid.to_le_bytes());
                p.extend_from_slice(&client.to_le_bytes());
                kind::MEMBER_REMOVE
            }
            MetaRecord::RegionAdd {
                pid,
                start_vpn,
                pages,
                perms,
            } => {
                p.extend_from_slice(&pid.to_le_bytes());
                p.extend_from_slice(&start_vpn.to_le_bytes());
                p.extend_from_slice(&pages.to_le_bytes());
                p.push(perms);
                kind::REGION_ADD
            }
            MetaRecord::RegionRemove { pid, start_vpn } => {
                p.extend_from_slice(&pid.to_le_bytes());
                p.extend_from_slice(&start_vpn.to_le_bytes());
                kind::REGION_REMOVE
            }
            MetaRecord::FramePushed { pfn } => {
                p.extend_from_slice(&pfn.to_le_bytes());
                kind::FRAME_PUSHED
            }
            MetaRecord::TxLogAdd {
                pid,
                client,
                va,
                bytes,
            } => {
                p.extend_from_slice(&pid.to_le_bytes());
                p.extend_from_slice(&client.to_le_bytes());
                p.extend_from_slice(&va.to_le_bytes());
                p.extend_from_slice(&bytes.to_le_bytes());
                kind::TX_LOG_ADD
            }
            MetaRecord::TxResolved {
                pid,
                va,
                seq,
                applied,
            } => {
                p.extend_from_slice(&pid.to_le_bytes());
                p.extend_from_slice(&va.to_le_bytes());
                p.extend_from_slice(&seq.to_le_bytes());
                p.push(applied as u8);
                kind::TX_RESOLVED
            }
            MetaRecord::TxLogRemove { pid, va } => {
                p.extend_from_slice(&pid.to_le_bytes());
                p.extend_from_slice(&va.to_le_bytes());
                kind::TX_LOG_REMOVE
            }
        };
        let mut r = vec![0u8; RECORD_HEADER];
        r[0..2].copy_from_slice(&(p.len() as u16).to_le_bytes());
        r[2] = k;
        r.extend_from_slice(&p);
        let c = seal(&r[0..4], &p, generation);
        r[4..8].copy_from_slice(&c.to_le_bytes());
        r
    }

    /// Decode the record at the start of `b`, sealed for `generation`: the record and its
    /// total length, or `None` if no such record starts there (end of the log, a torn record,
    /// or one of an older generation).
    pub fn decode(b: &[u8], generation: u64) -> Option<(MetaRecord, usize)> {
        if b.len() < RECORD_HEADER {
            return None;
        }
        let n = le16(b, 0) as usize;
        if n == 0 || b.len() < RECORD_HEADER + n {
            return None;
        }
        let p = &b[RECORD_HEADER..RECORD_HEADER + n];
        if seal(&b[0..4], p, generation) != le32(b, 4) {
            return None;
        }
        let need = |len: usize| (n == len).then_some(());
        let r = match b[2] {
            kind::RAS_CREATE => need(10).map(|_| MetaRecord::RasCreate {
                pid: le16(p, 0),
                key: le64(p, 2),
            }),
            kind::RAS_RETIRE => need(2).map(|_| MetaRecord::RasRetire { pid: le16(p, 0) }),
            kind::RAS_EPOCH => need(4).map(|_| MetaRecord::RasEpoch {
                pid: le16(p, 0),
                epoch: le16(p, 2),
            }),
            kind::MEMBER_ADD => need(12).map(|_| MetaRecord::MemberAdd {
                pid: le16(p, 0),
                client: le16(p, 2),
                nonce: le64(p, 4),
            }),
            kind::MEMBER_REMOVE => need(4).map(|_| MetaRecord::MemberRemove {
                pid: le16(p, 0),
                client: le16(p, 2),
            }),
            kind::REGION_ADD => need(19).map(|_| MetaRecord::RegionAdd {
                pid: le16(p, 0),
                start_vpn: le64(p, 2),
                pages: le64(p, 10),
                perms: p[18],
            }),
            kind::REGION_REMOVE => need(10).map(|_| MetaRecord::RegionRemove {
                pid: le16(p, 0),
                start_vpn: le64(p, 2),
            }),
            kind::FRAME_PUSHED => need(8).map(|_| MetaRecord::FramePushed { pfn: le64(p, 0) }),
            kind::TX_LOG_ADD => need(20).map(|_| MetaRecord::TxLogAdd {
                pid: le16(p, 0),
                client: le16(p, 2),
                va: le64(p, 4),
                bytes: le64(p, 12),
            }),
            kind::TX_RESOLVED => match (need(19), p.get(18)) {
                (Some(()), Some(&a @ (0 | 1))) => Some(MetaRecord::TxResolved {
                    pid: le16(p, 0),
                    va: le64(p, 2),
                    seq: le64(p, 10),
                    applied: a == 1,
                }),
                _ => None,
            },
            kind::TX_LOG_REMOVE => need(10).map(|_| MetaRecord::TxLogRemove {
                pid: le16(p, 0),
                va: le64(p, 2),
            }),
            _ => None,
        }?;
        Some((r, RECORD_HEADER + n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn all() -> Vec<MetaRecord> {
        vec![
            MetaRecord::RasCreate {
                pid: 7,
                key: 0xDEAD_BEEF_F00D,
            },
            MetaRecord::RasRetire { pid: 7 },
            MetaRecord::RasEpoch {
                pid: 7,
                epoch: 0xFFFF,
            },
            MetaRecord::MemberAdd {
                pid: 7,
                client: 3,
                nonce: u64::MAX,
            },
            MetaRecord::MemberRemove { pid: 7, client: 3 },
            MetaRecord::RegionAdd {
                pid: 7,
                start_vpn: 1,
                pages: 99,
                perms: 3,
            },
            MetaRecord::RegionRemove {
                pid: 7,
                start_vpn: 1,
            },
            MetaRecord::FramePushed { pfn: 1 << 39 },
            MetaRecord::TxLogAdd {
                pid: 7,
                client: 2,
                va: 0x40_0000,
                bytes: 1 << 20,
            },
            MetaRecord::TxResolved {
                pid: 7,
                va: 0x40_0000,
                seq: 12,
                applied: true,
            },
            MetaRecord::TxResolved {
                pid: 7,
                va: 0x40_0000,
                seq: 13,
                applied: false,
            },
            MetaRecord::TxLogRemove {
                pid: 7,
                va: 0x40_0000,
            },
        ]
    }

    #[test]
    fn records_and_superblocks_round_trip() {
        for r in all() {
            let b = r.encode(3);
            assert_eq!(MetaRecord::decode(&b, 3), Some((r, b.len())));
            assert_eq!(
                MetaRecord::decode(&b, 1),
                None,
                "an older generation's record"
            );
        }
        let s = Superblock {
            dram_bytes: 4 << 30,
            page_shift: 22,
            generation: 9,
            half: 1,
        };
        assert_eq!(Superblock::decode(&s.encode()), Ok(Some(s)));
        assert_eq!(Superblock::decode(&[0u8; 64]), Ok(None));
        let mut v2 = s.encode();
        v2[8] = 2;
        let c = crc32c(&v2[..60]);
        v2[60..64].copy_from_slice(&c.to_le_bytes());
        assert_eq!(
            Superblock::decode(&v2),
            Err(PersistError::Version { found: 2 })
        );
    }

    proptest! {
        #[test]
        fn a_torn_or_flipped_record_never_decodes(i in 0usize..11, cut in 0usize..40, bit in 0usize..320) {
            let b = all()[i].encode(1);
            let cut = cut.min(b.len() - 1);
            prop_assert!(MetaRecord::decode(&b[..cut], 1).is_none());
            let mut f = b.clone();
            let bit = bit % (b.len() * 8);
            f[bit / 8] ^= 1 << (bit % 8);
            prop_assert!(MetaRecord::decode(&f, 1).is_none());
        }
    }
}
