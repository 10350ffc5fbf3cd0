//! Request opcodes and the path of the memory node that serves each.

use core::fmt;

/// Which part of the memory node executes an opcode (the match-action table's decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Path {
    /// Hardware virtual memory: translation, fault, DRAM access.
    VirtualMemory,
    /// The sync unit: atomics, locks, fence, idempotence-ring acks.
    Sync,
    /// The ARM slow path, through the descriptor rings.
    SlowPath,
    /// The extend path (offloads); reserved opcodes `0x40..=0x7F`.
    Extend,
}

/// A request opcode. Responses carry the opcode of their request with the response flag set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Opcode {
    /// Read `total_len` bytes at `va`.
    Read = 0x01,
    /// Write `total_len` bytes at `va`, split into packets of [`crate::consts::MAX_PAYLOAD`].
    Write = 0x02,
    /// Allocate `arg0` bytes with permissions `arg1` ([`crate::pte::PERM_READ`] | [`crate::pte::PERM_WRITE`]).
    Alloc = 0x10,
    /// Free the allocation that starts at `va`.
    Free = 0x11,
    /// Register a process; `arg0` is a client nonce, the response's `pid` is the new global PID.
    Register = 0x12,
    /// Test-and-set the 8-byte word at `va` to 1; the response's `arg0` is the old value.
    TestAndSet = 0x20,
    /// Store 0 to the 8-byte word at `va` (lock release).
    Unlock = 0x21,
    /// Compare-and-swap: if word == `arg0` store `arg1`; the response's `arg0` is the old value.
    CompareAndSwap = 0x22,
    /// Fetch-and-add `arg0` (wrapping); the response's `arg0` is the old value.
    FetchAdd = 0x23,
    /// Complete every earlier request before any later one starts.
    Fence = 0x24,
    /// The client received the result of non-idempotent request `arg0` (its req id): free its
    /// slot in the idempotence ring.
    CnAck = 0x30,
}

impl Opcode {
    /// First opcode of the extend range (offloads).
    pub const EXTEND_FIRST: u8 = 0x40;
    /// Last opcode of the extend range.
    pub const EXTEND_LAST: u8 = 0x7F;

    /// All defined opcodes.
    pub const ALL: [Opcode; 11] = [
        Opcode::Read,
        Opcode::Write,
        Opcode::Alloc,
        Opcode::Free,
        Opcode::Register,
        Opcode::TestAndSet,
        Opcode::Unlock,
        Opcode::CompareAndSwap,
        Opcode::FetchAdd,
        Opcode::Fence,
        Opcode::CnAck,
    ];

    /// Decode a byte; `None` for undefined values (including the extend range, see [`path_of`]).
    pub fn from_u8(v: u8) -> Option<Opcode> {
        Self::ALL.iter().copied().find(|o| *o as u8 == v)
    }

    /// The path of the memory node that serves this opcode.
    pub fn path(self) -> Path {
        match self {
            Opcode::Read | Opcode::Write => Path::VirtualMemory,
            Opcode::Alloc | Opcode::Free | Opcode::Register => Path::SlowPath,
            Opcode::TestAndSet
            | Opcode::Unlock
            | Opcode::CompareAndSwap
            | Opcode::FetchAdd
            | Opcode::Fence
            | Opcode::CnAck => Path::Sync,
        }
    }

    /// Non-idempotent requests are executed once; a retry gets the cached result from the
    /// idempotence ring (sync unit) or the slow path's reply cache.
    pub fn is_non_idempotent(self) -> bool {
        matches!(
            self,
            Opcode::TestAndSet
                | Opcode::CompareAndSwap
                | Opcode::FetchAdd
                | Opcode::Alloc
                | Opcode::Free
                | Opcode::Register
        )
    }

    /// Atomic word operations (translated, then executed by the sync unit).
    pub fn is_atomic(self) -> bool {
        matches!(
            self,
            Opcode::TestAndSet | Opcode::Unlock | Opcode::CompareAndSwap | Opcode::FetchAdd
        )
    }
}

/// The path for a raw opcode byte, including the extend range; `None` if undefined.
pub fn path_of(v: u8) -> Option<Path> {
    if (Opcode::EXTEND_FIRST..=Opcode::EXTEND_LAST).contains(&v) {
        return Some(Path::Extend);
    }
    Opcode::from_u8(v).map(Opcode::path)
}

impl fmt::Display for Opcode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_byte_decodes_consistently() {
        for v in 0..=255u8 {
            if let Some(op) = Opcode::from_u8(v) {
                assert_eq!(op as u8, v);
                assert_eq!(path_of(v), Some(op.path()));
            }
        }
        assert_eq!(path_of(0x40), Some(Path::Extend));
        assert_eq!(path_of(0x00), None);
        assert_eq!(path_of(0xFF), None);
    }
}
