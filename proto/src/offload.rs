//! The extend path's offloads (Clio section 4.6): what their requests carry and what they
//! answer: pointer chasing ([`chase`]) here, Clio-KV in [`crate::kv`].
//!
//! An offload runs at the memory node next to the memory, in the RAS of the request (the
//! header's `pid`, checked against its key like every request) through the same translation
//! as reads and writes, so it can reach nothing the caller could not read itself.

/// The offloads the RTL fast path has units for (`hw/src/offload/`). The behavioural model
/// serves exactly these by default (`BoardConfig::offloads`), so model and RTL answer every
/// extend opcode alike; the RTL's dispatch takes its table of opcodes from this list, and an
/// extend opcode not in it is answered UNSUPPORTED there.
pub const IN_HARDWARE: &[crate::Opcode] = &[
    crate::Opcode::PointerChase,
    crate::Opcode::KvGet,
    crate::Opcode::KvPut,
    crate::Opcode::KvDelete,
];

/// Whether the RTL fast path has a unit for `op` ([`IN_HARDWARE`]).
pub fn in_hardware(op: crate::Opcode) -> bool {
    IN_HARDWARE.contains(&op)
}

/// Pointer chasing: one request walks a linked structure (list, hash chain, tree path) at the
/// node instead of one round trip per node.
///
/// Request ([`crate::Opcode::PointerChase`]): `va` = the first node, `arg0` = the key,
/// `arg1` = [`ChaseLayout::pack`], `total_len` = value bytes to return
/// (1..=[`MAX_VALUE`]), no payload. At each node the unit reads the 8-byte little-endian
/// word at `key_offset`; if it equals the key it answers; else it reads the 8-byte pointer at
/// `next_offset` and goes on, until a null pointer or `max_hops` nodes were visited.
///
/// Answer (always [`crate::Status::Ok`] unless a node could not be read):
/// * found: payload = `total_len` bytes at `node + value_offset`; `arg0` = nodes visited
///   (1 = the first matched), `arg1` = the matching node's address;
/// * not found (a null pointer reached): no payload, `arg0` = nodes visited, `arg1` = 0;
/// * hop bound reached: no payload, `arg0` = `max_hops`, `arg1` = the next node's address
///   (non-zero: the client may continue from there).
///
/// A node that is not readable in the caller's RAS ends the walk with that status
/// ([`crate::Status::Unmapped`], [`crate::Status::Permission`]) and nothing else: a pointer
/// into somebody else's memory tells nothing. Nodes and their key and next words are 8-byte
/// aligned: a node address that is not (the start or a next pointer) ends the walk with
/// [`crate::Status::BadRequest`]; `node + offset` past 2^64 answers
/// [`crate::Status::Unmapped`], a word past the 48-bit VA space [`crate::Status::BadRequest`].
pub mod chase {
    pub use super::ChaseLayout;

    /// Largest value a chase returns (one response packet).
    pub const MAX_VALUE: u32 = crate::consts::MAX_PAYLOAD as u32;
    /// Largest hop bound a request may ask for.
    pub const MAX_HOPS: u16 = 4096;
    /// Largest field offset within a node (a node spans at most one 4 KiB page of fields).
    pub const MAX_OFFSET: u16 = 4096 - 8;
}

/// Where the key, the next pointer and the value sit in a node, and how far to go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChaseLayout {
    /// Offset of the 8-byte key (8-byte aligned, at most [`chase::MAX_OFFSET`]).
    pub key_offset: u16,
    /// Offset of the 8-byte next pointer (0 = end).
    pub next_offset: u16,
    /// Offset of the value.
    pub value_offset: u16,
    /// Most nodes to visit (1..=[`chase::MAX_HOPS`]).
    pub max_hops: u16,
}

impl ChaseLayout {
    /// `arg1` of the request: key, next and value offsets and the hop bound, 16 bits each
    /// from the least significant end.
    pub const fn pack(self) -> u64 {
        self.key_offset as u64
            | (self.next_offset as u64) << 16
            | (self.value_offset as u64) << 32
            | (self.max_hops as u64) << 48
    }

    /// The layout `arg1` carries.
    pub fn unpack(v: u64) -> ChaseLayout {
        ChaseLayout {
            key_offset: v as u16,
            next_offset: (v >> 16) as u16,
            value_offset: (v >> 32) as u16,
            max_hops: (v >> 48) as u16,
        }
    }

    /// Whether a node accepts it: aligned words, offsets within a node, a hop bound in range.
    pub fn is_valid(self) -> bool {
        self.key_offset.is_multiple_of(8)
            && self.next_offset.is_multiple_of(8)
            && self.key_offset <= chase::MAX_OFFSET
            && self.next_offset <= chase::MAX_OFFSET
            && self.value_offset <= chase::MAX_OFFSET
            && (1..=chase::MAX_HOPS).contains(&self.max_hops)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_round_trip_and_bad_ones_are_refused() {
        let l = ChaseLayout {
            key_offset: 8,
            next_offset: 0,
            value_offset: 16,
            max_hops: 100,
        };
        assert!(l.is_valid());
        assert_eq!(ChaseLayout::unpack(l.pack()), l);
        assert_eq!(l.pack(), 8 | 16 << 32 | 100 << 48);
        for bad in [
            ChaseLayout { key_offset: 4, ..l },
            ChaseLayout {
                next_offset: 12,
                ..l
            },
            ChaseLayout {
                key_offset: chase::MAX_OFFSET + 8,
                ..l
            },
            ChaseLayout {
                value_offset: chase::MAX_OFFSET + 1,
                ..l
            },
            ChaseLayout { max_hops: 0, ..l },
            ChaseLayout {
                max_hops: chase::MAX_HOPS + 1,
                ..l
            },
        ] {
            assert!(!bad.is_valid(), "{bad:?}");
        }
    }
}
