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
    /// With [`crate::header::FLAG_DURABLE`] each packet is acknowledged once it is durable.
    Write = 0x02,
    /// Make `total_len` bytes at `va`, written earlier, durable (`rpersist`); answered once
    /// they are in the persistence domain. Served by the slow path, which owns the flush.
    Persist = 0x03,
    /// Register the region at `va`, `total_len` bytes, as a transaction log of the sending
    /// member ([`crate::tx`]): its records are applied by [`Opcode::TxApply`] and by recovery.
    /// Served by the slow path; registering the same log again is answered Ok.
    TxLog = 0x04,
    /// Apply the committed redo record in the transaction log at `va` ([`crate::tx`]): every
    /// entry written and durable, the log's applied sequence number recorded, then Ok with
    /// `arg0` = the record's sequence number. Idempotent: a record already applied answers Ok
    /// again; one that recovery had to drop answers [`crate::Status::Aborted`]. A target page
    /// never touched answers RetryLater with `arg0` = its address and `arg1` = 1 (touch it,
    /// then retry). Served by the slow path.
    TxApply = 0x05,
    /// Allocate `arg0` bytes with permissions `arg1` ([`crate::pte::PERM_READ`] | [`crate::pte::PERM_WRITE`]).
    Alloc = 0x10,
    /// Free the allocation that starts at `va`.
    Free = 0x11,
    /// Create a remote address space (RAS) and join it as its first member. No key (the only
    /// request the fast path takes without one); `arg0` is a client nonce (a retry with the same
    /// nonce gets the same answer). The response's `pid` is the new global PID, `arg0` the RAS's
    /// secret key, `arg1` the member's client id.
    Register = 0x12,
    /// Join an existing RAS as one more member (a process on this or another CN): `pid` and
    /// `key` of the RAS in the header, `arg0` a client nonce. The response's `arg1` is the new
    /// member's client id.
    Join = 0x13,
    /// Leave the RAS (`arg0` = 0): the member's lease and idempotence-ring slots end; when the
    /// last member leaves, the RAS is torn down (regions freed, key and PID retired). `arg0` =
    /// 1 tears the RAS down at once for every member.
    Unregister = 0x14,
    /// Renew the member's lease (see [`crate::consts::DEFAULT_LEASE_MS`]).
    Heartbeat = 0x15,
    /// Raise the RAS's epoch (`crate::epoch`) to `arg0` (a wire epoch, 1..=65535): from then
    /// on the fast path refuses, with [`crate::Status::Stale`], every request of the RAS whose
    /// epoch is older. The request's own header epoch must not be older than the RAS's (the
    /// key check refuses it first); an `arg0` older than the RAS's epoch is refused with Stale
    /// and changes nothing; the same epoch again answers Ok (idempotent). The answer's `arg0`
    /// is the RAS's epoch after it. Kept in the node's metadata log.
    SetEpoch = 0x16,
    /// Test-and-set the 8-byte word at `va` to 1; the response's `arg0` is the old value.
    TestAndSet = 0x20,
    /// Store 0 to the 8-byte word at `va` (lock release); the response's `arg0` is the old
    /// value. Recorded in the idempotence ring, so a retried unlock never releases a lock
    /// someone else took meanwhile.
    Unlock = 0x21,
    /// Compare-and-swap: if word == `arg0` store `arg1`; the response's `arg0` is the old value.
    CompareAndSwap = 0x22,
    /// Fetch-and-add `arg0` (wrapping); the response's `arg0` is the old value.
    FetchAdd = 0x23,
    /// Complete every earlier request before any later one starts.
    Fence = 0x24,
    /// Append the payload (one packet, 1..=[`crate::replog::MAX_RECORD`] bytes) to the
    /// node-ordered log at `va` of `arg0` bytes ([`crate::replog`]): reserve the tail and write
    /// the framed record in one operation. The response's `arg0` is the record's offset in the
    /// log's data area, `arg1` the new tail. Recorded in the idempotence ring, so a retry never
    /// appends twice. [`crate::Status::LogFull`] when the record does not fit (nothing written).
    /// With [`crate::header::FLAG_DURABLE`] answered once the record and tail are durable.
    Append = 0x25,
    /// The client received the result of non-idempotent request `arg0` (its req id): free its
    /// slot in the idempotence ring.
    CnAck = 0x30,
    /// Extend path, pointer-chasing offload ([`crate::offload::chase`]): from the node at
    /// `va`, follow next pointers in the caller's RAS until the 8-byte key at the layout's key
    /// offset equals `arg0`, a null pointer, or the hop bound; `arg1` packs the layout
    /// ([`crate::offload::ChaseLayout`]), `total_len` is the value bytes to return. Read-only
    /// (idempotent). Served only by a node with the offload; others answer Unsupported.
    PointerChase = 0x40,
    /// Extend path, Clio-KV ([`crate::kv`]): the committed value of the payload's key in the
    /// caller's RAS namespace; `arg0` of the answer is [`crate::kv::HIT`] (payload = the value)
    /// or [`crate::kv::MISS`]. Read-only (idempotent).
    KvGet = 0x41,
    /// Extend path, Clio-KV: create or replace the payload's key with the payload's value,
    /// atomically (a get sees the old or the new value, whole). `arg0` of the answer: HIT =
    /// replaced, MISS = created. Recorded in the idempotence ring, so a retry never applies
    /// twice; [`crate::Status::OutOfMemory`] when the store has no free record.
    KvPut = 0x42,
    /// Extend path, Clio-KV: remove the payload's key and free its record. `arg0` of the
    /// answer: HIT = removed, MISS = there was none. Recorded in the idempotence ring.
    KvDelete = 0x43,
    /// Extend path, Clio-KV: a put whose value was staged in the caller's RAS (values longer
    /// than one packet leaves room for, up to [`crate::kv::MAX_STAGED_VALUE`] bytes):
    /// `va` = where the value is, `arg1` = its [`crate::kv::value_check`]; the payload is the
    /// length prefix and the key ([`crate::kv::KvStagedPut`]). The node reads the value through
    /// the caller's translation; a value whose check does not match (its write has not
    /// landed yet) is answered [`crate::Status::RetryLater`], not recorded, nothing changed.
    /// Otherwise as [`Opcode::KvPut`], recorded in the idempotence ring.
    KvPutStaged = 0x44,
}

impl Opcode {
    /// First opcode of the extend range (offloads).
    pub const EXTEND_FIRST: u8 = 0x40;
    /// Last opcode of the extend range.
    pub const EXTEND_LAST: u8 = 0x7F;

    /// All defined opcodes.
    pub const ALL: [Opcode; 24] = [
        Opcode::Read,
        Opcode::Write,
        Opcode::Persist,
        Opcode::TxLog,
        Opcode::TxApply,
        Opcode::Alloc,
        Opcode::Free,
        Opcode::Register,
        Opcode::Join,
        Opcode::Unregister,
        Opcode::Heartbeat,
        Opcode::SetEpoch,
        Opcode::TestAndSet,
        Opcode::Unlock,
        Opcode::CompareAndSwap,
        Opcode::FetchAdd,
        Opcode::Fence,
        Opcode::Append,
        Opcode::CnAck,
        Opcode::PointerChase,
        Opcode::KvGet,
        Opcode::KvPut,
        Opcode::KvDelete,
        Opcode::KvPutStaged,
    ];

    /// Decode a byte; `None` for undefined values (including extend opcodes no offload of this
    /// spec defines, see [`path_of`]).
    pub fn from_u8(v: u8) -> Option<Opcode> {
        Self::ALL.iter().copied().find(|o| *o as u8 == v)
    }

    /// The path of the memory node that serves this opcode.
    pub fn path(self) -> Path {
        match self {
            Opcode::Read | Opcode::Write => Path::VirtualMemory,
            Opcode::Alloc
            | Opcode::Persist
            | Opcode::TxLog
            | Opcode::TxApply
            | Opcode::Free
            | Opcode::Register
            | Opcode::Join
            | Opcode::Unregister
            | Opcode::Heartbeat
            | Opcode::SetEpoch => Path::SlowPath,
            Opcode::TestAndSet
            | Opcode::Unlock
            | Opcode::CompareAndSwap
            | Opcode::FetchAdd
            | Opcode::Fence
            | Opcode::Append
            | Opcode::CnAck => Path::Sync,
            Opcode::PointerChase
            | Opcode::KvGet
            | Opcode::KvPut
            | Opcode::KvDelete
            | Opcode::KvPutStaged => Path::Extend,
        }
    }

    /// Non-idempotent requests are executed once; a retry gets the cached result from the
    /// idempotence ring (sync unit) or the slow path's reply cache / nonce table.
    pub fn is_non_idempotent(self) -> bool {
        self.needs_cn_ack()
            || matches!(
                self,
                Opcode::Alloc | Opcode::Free | Opcode::Register | Opcode::Join | Opcode::Unregister
            )
    }

    /// The one rule for the sync unit: these opcodes record their result in the idempotence
    /// ring under `(pid, client, req_id)`, a retry is answered from it, and the client frees the
    /// slot with a [`Opcode::CnAck`] once it has the result.
    pub fn uses_idempotence_ring(self) -> bool {
        matches!(
            self,
            Opcode::TestAndSet
                | Opcode::Unlock
                | Opcode::CompareAndSwap
                | Opcode::FetchAdd
                | Opcode::Append
        )
    }

    /// Offload requests whose result the node records in the same idempotence ring (the
    /// extend path's writers: Clio-KV's put and delete), so a retry is answered from it.
    pub fn offload_uses_idempotence_ring(self) -> bool {
        matches!(self, Opcode::KvPut | Opcode::KvDelete | Opcode::KvPutStaged)
    }

    /// Whether the client must send a [`Opcode::CnAck`] after the result arrives: every
    /// opcode whose result sits in the idempotence ring (the sync unit's,
    /// [`Opcode::uses_idempotence_ring`], and the offloads',
    /// [`Opcode::offload_uses_idempotence_ring`]).
    pub fn needs_cn_ack(self) -> bool {
        self.uses_idempotence_ring() || self.offload_uses_idempotence_ring()
    }

    /// Whether the fast path checks the header's key against the RAS's key before anything
    /// else: every request but [`Opcode::Register`], which creates a RAS and has none yet.
    pub fn needs_key(self) -> bool {
        self != Opcode::Register
    }

    /// The word an atomic leaves behind, given the old word and its operands (`None`: the
    /// word is unchanged, as a failed CAS, or not an atomic). Every atomic returns the old
    /// word. The one definition of the semantics (the model executes it; the multi-node
    /// client replicates its result).
    pub fn atomic_new_value(self, old: u64, arg0: u64, arg1: u64) -> Option<u64> {
        match self {
            Opcode::TestAndSet => Some(1),
            Opcode::Unlock => Some(0),
            Opcode::CompareAndSwap => (old == arg0).then_some(arg1),
            Opcode::FetchAdd => Some(old.wrapping_add(arg0)),
            _ => None,
        }
    }

    /// Atomic word operations (translated, then executed by the sync unit).
    pub fn is_atomic(self) -> bool {
        matches!(
            self,
            Opcode::TestAndSet | Opcode::Unlock | Opcode::CompareAndSwap | Opcode::FetchAdd
        )
    }
}

/// A 256-bit table (bit `v` set for opcode byte `v`) of the opcodes a predicate selects: the
/// form the RTL takes a rule in (a `Constant<Bits<256>>` indexed by the opcode byte), so the
/// hardware and this crate share one encoding of it.
pub fn opcode_mask(pred: impl Fn(Opcode) -> bool) -> [u64; 4] {
    let mut m = [0u64; 4];
    for op in Opcode::ALL {
        if pred(op) {
            let v = op as u8 as usize;
            m[v / 64] |= 1 << (v % 64);
        }
    }
    m
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

    #[test]
    fn masks_select_exactly_the_predicate() {
        let m = opcode_mask(Opcode::uses_idempotence_ring);
        for v in 0..=255u8 {
            let bit = m[v as usize / 64] >> (v % 64) & 1 == 1;
            let want = Opcode::from_u8(v).is_some_and(Opcode::uses_idempotence_ring);
            assert_eq!(bit, want, "opcode {v:#x}");
        }
        assert!(Opcode::Unlock.needs_cn_ack());
        assert!(Opcode::KvPut.needs_cn_ack() && Opcode::KvDelete.is_non_idempotent());
        assert!(!Opcode::KvGet.needs_cn_ack() && !Opcode::KvPut.uses_idempotence_ring());
        assert!(!Opcode::Register.needs_key());
        assert!(Opcode::Join.needs_key() && Opcode::CnAck.needs_key());
    }
}
