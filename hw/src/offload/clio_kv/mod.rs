//! The Clio-KV unit (`Opcode::KvGet`, `KvPut`, `KvDelete`; `clio_proto::kv`): the chained
//! hash table of `clio_model::offload::clio_kv`, step for step, on the offload port bundle
//! ([`super`]) with its writes, its own-RAS select and the request's payload.
//!
//! A request is checked as `KvRequest::decode` does (one packet, `va` = `arg0` = `arg1` = 0,
//! `total_len` = `payload_len` = 4 + key + value, key 1..=64, value 0..=`MAX_VALUE` on a put
//! and none on a get or delete: else BAD_REQUEST), then answered `cfg_status` while the store
//! is not ready. A put or delete (`Opcode::offload_uses_idempotence_ring`) then asks the
//! sync unit's idempotence ring through the executor (`once_valid`, answered by `once_done`
//! with the ring's verdict on the caller's `(pid, client, req_id)`): a retry is answered with
//! the recorded status and `arg0` (`rsp_replay`: the answer is `response_to(status)` with that
//! `arg0`, so `arg1` and `total_len` stay the request's), a full ring with RETRY_LATER
//! (also `rsp_replay`, `arg0` 0: nothing executes, nothing is recorded); otherwise the request
//! executes and its answer, errors included, is recorded by the executor (`rsp_record`), as
//! `sim/src/model/board/extend.rs` does. Then, in the store's own RAS (`mem_own`), in the
//! model's order:
//!
//! * the superblock's magic (else UNMAPPED); the key hash ([`xxh32`], overlapping that read);
//! * the chain from the bucket's head: each link must be 0 or a record slot's address
//!   (`StoreLayout::is_record`, else UNMAPPED), each header's lengths within bounds (else
//!   UNMAPPED), owner and key length compared, then the key word by word; at most
//!   `records + 1` links (a cycle: UNMAPPED);
//! * get: hit = the answer reads `value_len` bytes after the record's key (`rsp_read_own`);
//! * put: a new key needs `live + 1 < records` (else OUT_OF_MEMORY, nothing written) and
//!   its owner's count below the superblock's per-RAS limit (`SB_RAS_RECORDS`, 0: none; else
//!   QUOTA_EXCEEDED with `arg1` = `Quota::KvRecords`, nothing written, not recorded); a slot
//!   from the free list's head (checked like a link) or the high-water mark (OUT_OF_MEMORY
//!   when used up); the record (next link, owner and lengths, key and value streamed from the
//!   payload) written whole, then the one link switched to it (the commit point), then the old
//!   record freed (hit) or the live count and the owner's count raised (miss);
//! * delete: unlink, free, live count and the owner's count lowered (saturating).
//!
//! Memory words are read through a one-block cache (the block of the last read, kept up to
//! date by the unit's own word writes, dropped by its record writes and at each request), so
//! a record's header and key or the superblock's words cost one read. A memory status other
//! than OK ends the request with that status (what the model's `OffloadMemory` answers); the
//! unit takes every payload beat before it answers.
//!
//! Where the RTL's memory effects can differ from the model's: a record write that fails half
//! way (a block of the slot unwritable) leaves the blocks before it written (the model writes
//! nothing); in the store's own RAS, whose pages are touched before it is ready, no write
//! fails. Records must not cross a 64-byte block with their 16-byte header (the slow path
//! configures 64-byte-aligned bases and at least two buckets, so records are 16-byte aligned).

mod kernel;
pub mod record_blocks;
pub mod request_check;
pub mod slot_check;
pub mod store_words;
pub mod xxh32;

#[cfg(test)]
pub(crate) mod reference;
#[cfg(test)]
mod tests;

use super::{OffloadKvPort, OffloadPort};
use crate::spec::Spec;
use clio_proto::consts::MAX_PAYLOAD;
use clio_proto::kv::{
    HIT, MAX_KEY, MAX_STAGED_VALUE, MAX_VALUE, MISS, PREFIX_BYTES, RECORD_BYTES,
    RECORD_HEADER_BYTES, SB_FREE_HEAD, SB_HIGH_WATER, SB_LIVE, SB_RAS_RECORDS, STORE_MAGIC,
    SUPERBLOCK_BYTES,
};
use clio_proto::{Opcode, Status};
use record_blocks::RecordBlocks;
use request_check::KvRequestCheck;
use rust_hdl::prelude::*;
use slot_check::SlotCheck;
use store_words::StoreWords;
use xxh32::Xxh32;

// Bit positions and widths the kernel must take as literals, pinned to proto:
const _: () = {
    // A slot is 1104 bytes: a slot's address is `first + (x << 10) + (x << 6) + (x << 4)`
    // (`rec_end`, `hw_slot`); `SlotCheck` tests the links' divisibility.
    assert!(RECORD_BYTES == (1 << 10) + (1 << 6) + (1 << 4));
    // The prefix is key length, value length (u16 LE each) at bytes 0 and 2; the key starts
    // at byte 4 (bit 32) and ends in the second beat at the latest (its first 4 bytes there).
    assert!(PREFIX_BYTES == 4 && PREFIX_BYTES + MAX_KEY <= 64 + 4);
    // The key is 512 bits (8 words), the record header 16 bytes (the link, then the owner and
    // lengths word at +8: `RecordHeader`, checked by the testbench).
    assert!(MAX_KEY == 64 && RECORD_HEADER_BYTES == 16);
    // Lengths: a payload is at most 1024 bytes (16 bits, 17 beats with the realignment's
    // extra block), a stored value 1024 (`rsp_read_len` has 12 bits).
    assert!(MAX_PAYLOAD == 1024 && MAX_STAGED_VALUE < 1 << 11 && MAX_VALUE < MAX_PAYLOAD);
    // The superblock's words are in its first (and only) block.
    assert!(SUPERBLOCK_BYTES == 64 && SB_LIVE < 64 && SB_FREE_HEAD < 64 && SB_HIGH_WATER < 64);
    assert!(SB_RAS_RECORDS < 64);
};

/// The unit's states. `Rd`/`Wr` are its one-word memory accesses (address `ma`, data `wd`),
/// which continue in the state `ret` names.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum KvState {
    /// Waiting for a request.
    Idle,
    /// Taking the payload's first beat.
    Beat0,
    /// The prefix's lengths are checked against the payload (`body_ok`, registered).
    Sizes,
    /// Checking the request's framing and lengths.
    Check,
    /// Waiting for the idempotence ring's verdict (puts and deletes).
    Once,
    /// Reading the key's last 4 bytes from the second beat (not taken yet).
    Peek,
    /// Hash started; the superblock's magic is read.
    Start,
    /// The magic is checked.
    MagicChk,
    /// Waiting for the hash, then reading the bucket's head.
    HashWait,
    /// A link word was read.
    LinkChk,
    /// The link's slot check, first stage (`cand - first`, its range).
    Cand1,
    /// The link's slot check, second stage (the multiply by the inverse: its products).
    Cand2,
    /// The link's slot check, third stage (the products' sum, registered).
    Cand3,
    /// The link's slot check, fourth stage (the sum against the bound).
    Cand4,
    /// The link is checked and followed.
    LinkUse,
    /// The record's next link was read.
    HdrNext,
    /// The record's owner and lengths were read.
    HdrMeta,
    /// A key word was read and is compared.
    KeyChk,
    /// On to the record's next link.
    Next,
    /// The key is in the record `at`.
    Found,
    /// The key is not in its chain.
    NotFound,
    /// A creation: the live count was read.
    LiveChk,
    /// A free slot is taken: read the free list's head.
    Take,
    /// The free list's head was read.
    FreeChk,
    /// The free list's head is checked.
    FreeUse,
    /// The free record's next link was read: it becomes the head.
    FreeNext,
    /// The high-water mark was read.
    HwChk,
    /// The high-water mark's slot is taken (`hw_slot`), or OUT_OF_MEMORY (`hw_full`), both
    /// registered from the mark read.
    HwSlot,
    /// The new record's next link: the old record's, or the chain head.
    Prev,
    /// The chain head was read.
    HeadNext,
    /// Write the new record's link word.
    HdrW0,
    /// Write the new record's owner and lengths.
    HdrW1,
    /// Load the next payload beat for the record's next block.
    BLoad,
    /// Write the record's next block.
    BWrite,
    /// The block write is on its way.
    BWait,
    /// The block is done.
    BNext,
    /// Switch the link to the new record.
    Commit,
    /// After the commit: free the old record, or count the new one.
    AfterCommit,
    /// The per-RAS limit was read (`SB_RAS_RECORDS`): read the owner's count.
    QuotaGot,
    /// The owner's count was read: it is compared with the limit (`cnt_over`, registered).
    CntCmp,
    /// At the limit, QUOTA_EXCEEDED (nothing written or recorded); else take a slot.
    CntChk,
    /// The live count was read (creation), or the owner's count (`count_pass`): raise it.
    NewLive,
    /// The live count is raised: read the owner's count (then `NewLive` again).
    CntUp,
    /// Delete: unlink the record.
    Unlink,
    /// Free the record `at`: read the free list's head.
    Give,
    /// Write the freed record's link.
    Give1,
    /// Clear its owner and lengths.
    Give2,
    /// Make it the free list's head.
    Give3,
    /// Freed: count the deletion, or answer.
    Give4,
    /// The live count was read (deletion), or the owner's count (`count_pass`): lower it
    /// (saturating).
    DelLive,
    /// The live count is lowered: read the owner's count (then `DelLive` again).
    CntDel,
    /// Answer HIT.
    AnsHit,
    /// Answer MISS.
    AnsMiss,
    /// Read the word at `ma` (from the cached block when it is there).
    Rd,
    /// The read is on its way.
    RdWait,
    /// Write `wd` at `ma`.
    Wr,
    /// The write is on its way.
    WrWait,
    /// A check failed: the answer is `fail_q`'s status (then `Drain`).
    Fail,
    /// Take the payload's remaining beats.
    Drain,
    /// The answer is held until the executor takes it.
    Answer,
}

/// The Clio-KV unit.
#[derive(LogicBlock, Default)]
pub struct ClioKv {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// The offload port (request, memory, response).
    pub port: OffloadPort,
    /// Clio-KV's additions to it (payload, idempotence ring, store).
    pub kv_port: OffloadKvPort,
    /// The unit's state.
    state: DFF<KvState>,
    /// Where `Rd`/`Wr` continue.
    ret: DFF<KvState>,
    /// The request's opcode, decoded as it is taken (a GET, a PUT, a DELETE): the state
    /// machine's branches start from flip-flops (an 8-bit compare of the registered opcode was
    /// in front of `state`: 7.5 levels on the board at db76bc6).
    op_is_get: DFF<Bit>,
    op_is_put: DFF<Bit>,
    op_is_delete: DFF<Bit>,
    /// The request's RAS: the key's owner.
    owner: DFF<Bits<16>>,
    /// The header fields are as a KV request needs them, in two halves (`Check` ANDs them):
    /// the zeros and the one packet (`hdr_zero`), the lengths (`hdr_len`). One register for
    /// both would have the header's compares and their AND in front of it (the board's
    /// `dec$hdr -> ext.clio_kv.hdr_ok`).
    hdr_zero: DFF<Bit>,
    hdr_len: DFF<Bit>,
    /// The payload's length.
    plen: DFF<Bits<16>>,
    /// The payload's first beat (prefix, key, start of the value).
    b0: DFF<Bits<512>>,
    /// The second beat's first 4 bytes (the end of a key longer than 60 bytes).
    b1lo: DFF<Bits<32>>,
    /// Every payload beat was taken.
    pay_done: DFF<Bit>,
    /// The key's chain head.
    head: DFF<Bits<64>>,
    /// The link that led to the record `at`.
    link: DFF<Bits<64>>,
    /// The record being looked at (found: the key's record).
    at: DFF<Bits<64>>,
    /// A link read back from memory, checked before it is followed.
    cand: DFF<Bits<64>>,
    /// The record `at`'s next link.
    hnext: DFF<Bits<64>>,
    /// The record `at`'s value length.
    rvlen: DFF<Bits<11>>,
    /// The key word being compared.
    kw: DFF<Bits<3>>,
    /// Links followed so far.
    hops: DFF<Bits<33>>,
    /// The key was found.
    found: DFF<Bit>,
    /// The new record's slot.
    slot: DFF<Bits<64>>,
    /// The word to access.
    ma: DFF<Bits<64>>,
    /// The word to write.
    wd: DFF<Bits<64>>,
    /// The slot at the high-water mark `cw` (`first + cw * RECORD_BYTES`) and whether the mark
    /// is at `records` already (no slot left), registered.
    hw_slot: DFF<Bits<64>>,
    hw_full: DFF<Bit>,
    /// The word read as a record's metadata (`HdrMeta`): its lengths past the bounds; its
    /// owner and key length the request's. Registered with `cw`, from the same block word.
    meta_bad: DFF<Bit>,
    meta_match: DFF<Bit>,
    /// The key's word `kw` and the bytes of it that count (all but in its last word), and
    /// whether `kw` is the last (`(klen - 1) / 8`), registered from `kw` each cycle: `kw` moves
    /// a `Rd` before `KeyChk` compares.
    kword: DFF<Bits<64>>,
    kmask: DFF<Bits<64>>,
    kword_last: DFF<Bit>,
    /// `kw` is the key's last word (one compare for `kword_last` and `kmask`).
    k_at_last: Signal<Local, Bit>,
    /// The key's last word's index and byte mask, registered from `klen` (set in `Beat0`).
    klast: DFF<Bits<3>>,
    ktail: DFF<Bits<64>>,
    /// A failed check's status, registered: the answer takes it in `Fail` (the checks do not
    /// fan out into the answer's registers in their own cycle).
    fail_q: DFF<Bits<8>>,
    /// The word read (`Rd`): registered from the cached block in `Rd` (a hit) or from the
    /// memory's block in `RdWait`, so the state `Rd` returns to (`ret`) starts from a register.
    cw: DFF<Bits<64>>,
    /// The last block read (kept up to date by word writes).
    cache: DFF<Bits<512>>,
    /// Its block address (VA bits 6..).
    ctag: DFF<Bits<58>>,
    /// The cached block is the one of `ma` (`chit`), registered: decided in the state that
    /// loads `ma` for a read, from `ctag` against that state's source of `ma` (`nhit`), and
    /// held in `Rd`, so the read's request (`mem_valid`) is a gate from registers. Valid in
    /// `Rd`.
    chit_q: DFF<Bit>,
    /// `cand == 0`, registered (`cand` is set four cycles before `LinkUse` and `FreeUse`).
    cand_zero: DFF<Bit>,
    /// The cache holds a block.
    cvalid: DFF<Bit>,
    /// The record's block being written (0 = the one with the first payload byte).
    bj: DFF<Bits<5>>,
    /// Its address.
    bva: DFF<Bits<64>>,
    /// The record's payload offset: payload byte p goes to `slot + 12 + p`, lane (p + bd) % 64.
    bd: DFF<Bits<6>>,
    /// The payload beat before `cur` (zero before the first).
    prev: DFF<Bits<512>>,
    /// The payload beat that ends in block `bj`.
    cur: DFF<Bits<512>>,
    /// `cand` is a record slot's address (`StoreLayout::is_record`), four cycles after `cand`
    /// was set (`Cand1`..`Cand4`).
    slots: SlotCheck,
    /// The per-RAS record limit read from the superblock, and whether there is one (not 0).
    quota_q: DFF<Bits<64>>,
    quota_on: DFF<Bit>,
    /// The word read is at or past the limit, and there is one (`quota_on & cw >= quota_q`),
    /// registered: valid in `CntChk`, a cycle after the count arrived in `cw` (the 64-bit
    /// compare is not in front of the state's next value).
    cnt_over: DFF<Bit>,
    /// `NewLive` / `DelLive` change the owner's count (they changed the live count before).
    count_pass: DFF<Bit>,
    /// The store's word addresses (`StoreLayout`: the superblock's words, the owner's count,
    /// the key's chain head, the record slots' range), registered from the configuration.
    words: StoreWords,
    /// The hash was not busy a cycle ago: `words.head` is the finished hash's.
    hash_ready: DFF<Bit>,
    /// `at + 8` (a record's metadata word), `at + RECORD_HEADER_BYTES` (its key), `ma + 8` (the
    /// next key word) and `slot + 8` (the new record's metadata word), registered each cycle:
    /// each is used at least one access (`Rd`/`Wr`) after its source was set.
    at_meta_pa: DFF<Bits<64>>,
    at_key_pa: DFF<Bits<64>>,
    ma_next_pa: DFF<Bits<64>>,
    slot_meta_pa: DFF<Bits<64>>,
    /// Answer: status.
    a_status: DFF<Bits<8>>,
    /// Answer: `arg0`.
    a_arg0: DFF<Bits<64>>,
    /// Answer: a value to read.
    a_read: DFF<Bit>,
    /// Answer: the value's VA.
    a_va: DFF<Bits<64>>,
    /// Answer: the value's length.
    a_len: DFF<Bits<12>>,
    /// Answer: record it in the ring (the ring said execute).
    a_record: DFF<Bit>,
    /// Answer: from the ring (`rsp_replay`).
    a_replay: DFF<Bit>,
    /// Answer: a quota refused it, this one (`proto::quota::Quota`; 0 otherwise): its `arg1`.
    a_quota: DFF<Bits<8>>,
    /// The key hash.
    khash: Xxh32,
    /// The record's blocks from the payload's beats.
    blocks: RecordBlocks,
    /// The request's checks (`KvRequest::decode`'s), lengths and key.
    checks: KvRequestCheck,
    /// `ma`'s bit offset in its block.
    word_sh: Signal<Local, Bits<9>>,
    /// The cached block is the one of `ma`.
    chit: Signal<Local, Bit>,
    /// `ctag` is the block of the address the state loads into `ma` for a read (else
    /// `chit_q`): the next `chit_q`, without `cvalid`.
    nhit: Signal<Local, Bit>,
    /// A record header's value length (its metadata word, `cw`; `meta_bad` bounds it by
    /// MAX_STAGED_VALUE < 2^11).
    m_vlen: Signal<Local, Bits<11>>,
    /// The records' count, 64 bits.
    records: Signal<Local, Bits<64>>,
    /// `wd` in each of a block's eight words, its strobes and bit mask at `ma`.
    rep: Signal<Local, Bits<512>>,
    wstrb_word: Signal<Local, Bits<64>>,
    wmask: Signal<Local, Bits<512>>,
    /// The new record's first payload byte's address (`slot + 12`).
    body_at: Signal<Local, Bits<64>>,
    ones64: Signal<Local, Bits<64>>,
    /// End the request with `fail_status`.
    fail: Signal<Local, Bit>,
    fail_status: Signal<Local, Bits<8>>,
    /// End the request with OK and `arg0` = HIT (`ans_hit`) or MISS.
    ans: Signal<Local, Bit>,
    ans_hit: Signal<Local, Bit>,
    st_ok: Spec<8, { Status::Ok as u64 }>,
    st_bad: Spec<8, { Status::BadRequest as u64 }>,
    st_unmapped: Spec<8, { Status::Unmapped as u64 }>,
    st_oom: Spec<8, { Status::OutOfMemory as u64 }>,
    st_unsupported: Spec<8, { Status::Unsupported as u64 }>,
    st_denied: Spec<8, { Status::Denied as u64 }>,
    st_quota_exceeded: Spec<8, { Status::QuotaExceeded as u64 }>,
    quota_ring_share: Spec<8, { clio_proto::quota::Quota::RingShare as u64 }>,
    quota_kv_records: Spec<8, { clio_proto::quota::Quota::KvRecords as u64 }>,
    op_get: Spec<8, { Opcode::KvGet as u64 }>,
    op_put: Spec<8, { Opcode::KvPut as u64 }>,
    op_delete: Spec<8, { Opcode::KvDelete as u64 }>,
    c_hit: Spec<64, HIT>,
    c_miss: Spec<64, MISS>,
    c_magic: Spec<64, STORE_MAGIC>,
    c_hdr_bytes: Spec<64, { RECORD_HEADER_BYTES as u64 }>,
    c_body_off: Spec<64, { (RECORD_HEADER_BYTES - PREFIX_BYTES) as u64 }>,
    c_max_key: Spec<16, { MAX_KEY as u64 }>,
    c_max_stored: Spec<16, { MAX_STAGED_VALUE as u64 }>,
}
