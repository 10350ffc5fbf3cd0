//! The datapath's links: the TLB's lookup result to the translate stage, a response from the
//! executor to the read-data stage and from there to the transmit stage, a durable access from
//! the executor to the persist handshake, a write's data to the write-data stage and a word's
//! read-modify-write to the word-access path, a one-beat write to the one-beat writer, the TLB's two update sources (the
//! page-fault unit's inserts, the slow path's changes) and its lookups.
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use rust_hdl::prelude::*;

/// The TLB's lookup result as the translate stage takes it (mate [`TlbResult`]).
#[derive(LogicInterface, Default)]
#[join = "TlbResult"]
pub struct TlbResultIn {
    /// The translation was present.
    pub hit: Signal<In, Bit>,
    /// The entry is an allocated page not yet mapped (when hit): `res_pfn` then holds its
    /// PTE's location, `bucket << 4 | slot`, and the access is a first touch that the
    /// page-fault unit can serve without a walk.
    pub alloc: Signal<In, Bit>,
    /// Permissions `READ | WRITE << 1` (when hit).
    pub perms: Signal<In, Bits<2>>,
    /// Frame number (when hit).
    pub pfn: Signal<In, Bits<40>>,
    /// Invalidation generation at the lookup (give it back with the insert after a walk).
    pub gen: Signal<In, Bits<16>>,
}

/// The TLB's lookup result (mate [`TlbResultIn`]); the look-ahead reads it too.
#[derive(LogicInterface, Default)]
#[join = "TlbResultIn"]
pub struct TlbResult {
    /// The translation was present.
    pub hit: Signal<Out, Bit>,
    /// The entry is an allocated page not yet mapped (when hit): `res_pfn` then holds its
    /// PTE's location, `bucket << 4 | slot`, and the access is a first touch that the
    /// page-fault unit can serve without a walk.
    pub alloc: Signal<Out, Bit>,
    /// Permissions `READ | WRITE << 1` (when hit).
    pub perms: Signal<Out, Bits<2>>,
    /// Frame number (when hit).
    pub pfn: Signal<Out, Bits<40>>,
    /// Invalidation generation at the lookup (give it back with the insert after a walk).
    pub gen: Signal<Out, Bits<16>>,
}

/// A response the transmit stage loads from the read-data stage (mate [`TxLoad`]).
#[derive(LogicInterface, Default)]
#[join = "TxLoad"]
pub struct TxLoadIn {
    /// A finished response goes to the transmit stage this cycle: its length, route, beat 0
    /// (the header with its CRC) and txbuf slot.
    pub valid: Signal<In, Bit>,
    /// The loaded response's length in bytes, header included.
    pub len: Signal<In, Bits<12>>,
    /// The loaded response's route.
    pub route: Signal<In, Bits<256>>,
    /// The loaded response's beat 0: the header with its CRC.
    pub beat0: Signal<In, Bits<512>>,
    /// The txbuf slot that holds the loaded response's beats from 1 on.
    pub slot: Signal<In, Bit>,
}

/// A response handed from the read-data stage to the transmit stage: the load pulse, its
/// length, route, first beat and TX-buffer slot (mate [`TxLoadIn`]).
#[derive(LogicInterface, Default)]
#[join = "TxLoadIn"]
pub struct TxLoad {
    /// A finished response goes to the transmit stage this cycle: its length, route, beat 0
    /// (the header with its CRC) and txbuf slot.
    pub valid: Signal<Out, Bit>,
    /// The loaded response's length in bytes, header included.
    pub len: Signal<Out, Bits<12>>,
    /// The loaded response's route.
    pub route: Signal<Out, Bits<256>>,
    /// The loaded response's beat 0: the header with its CRC.
    pub beat0: Signal<Out, Bits<512>>,
    /// The txbuf slot that holds the loaded response's beats from 1 on.
    pub slot: Signal<Out, Bit>,
}

/// A response the executor hands to the read-data stage: its header, length and route, and a
/// read's realignment (mate [`ReadJobIn`]).
#[derive(LogicInterface, Default)]
#[join = "ReadJobIn"]
pub struct ReadJob {
    /// The executor offers a job this cycle.
    pub valid: Signal<Out, Bit>,
    /// The job is taken this cycle (with `valid`): straight into the stage or queued. Low
    /// only while the queue is full.
    pub ready: Signal<In, Bit>,
    /// The job is payload-less: its header beat alone, no R beats.
    pub only: Signal<Out, Bit>,
    /// A read's lane offset: `(va - 48) mod 64`, the realign shift from DRAM to packet lanes.
    pub o: Signal<Out, Bits<6>>,
    /// A read's DRAM blocks (R beats), `(o + len + 63) / 64`.
    pub kt: Signal<Out, Bits<12>>,
    /// The response's length in bytes, header included.
    pub len: Signal<Out, Bits<12>>,
    /// The response header, bytes 0..48 (byte k at bits 8k..).
    pub hdr: Signal<Out, Bits<384>>,
    /// The response's route (the request's).
    pub route: Signal<Out, Bits<256>>,
}

/// The read-data stage's side of a response job (mate [`ReadJob`]).
#[derive(LogicInterface, Default)]
#[join = "ReadJob"]
pub struct ReadJobIn {
    /// The executor offers a job this cycle.
    pub valid: Signal<In, Bit>,
    /// The job is taken this cycle (with `valid`): straight into the stage or queued. Low
    /// only while the queue is full.
    pub ready: Signal<Out, Bit>,
    /// The job is payload-less: its header beat alone, no R beats.
    pub only: Signal<In, Bit>,
    /// A read's lane offset: `(va - 48) mod 64`, the realign shift from DRAM to packet lanes.
    pub o: Signal<In, Bits<6>>,
    /// A read's DRAM blocks (R beats), `(o + len + 63) / 64`.
    pub kt: Signal<In, Bits<12>>,
    /// The response's length in bytes, header included.
    pub len: Signal<In, Bits<12>>,
    /// The response header, bytes 0..48 (byte k at bits 8k..).
    pub hdr: Signal<In, Bits<384>>,
    /// The response's route (the request's).
    pub route: Signal<In, Bits<256>>,
}

/// The executor's side of the persist handshake (mate [`PersistPort`]): in its Persist state
/// it asks for the request's pieces to be made durable and waits for the answer.
#[derive(LogicInterface, Default)]
#[join = "PersistPort"]
pub struct PersistUse {
    /// The executor is in its Persist state (held until `done`); low: nothing under way.
    pub run: Signal<Out, Bit>,
    /// The packet's pieces: `n1` bytes at `pa1`; with `two`, `len - n1` more at `pa2`.
    pub pa1: Signal<Out, Bits<64>>,
    /// Bytes in the first piece.
    pub n1: Signal<Out, Bits<12>>,
    /// The packet has a second piece, at `pa2`.
    pub two: Signal<Out, Bit>,
    /// The second piece's physical address.
    pub pa2: Signal<Out, Bits<64>>,
    /// The packet's length in bytes (the second piece is `len - n1` of them).
    pub len: Signal<Out, Bits<12>>,
    /// A durable Append: its tail word is made durable after the record.
    pub append: Signal<Out, Bit>,
    /// Every request is answered (one cycle); `failed`: one of them with an error.
    pub done: Signal<In, Bit>,
    /// One of the requests failed (with `done`): the write is answered RETRY_LATER.
    pub failed: Signal<In, Bit>,
}

/// The persist handshake's side of its link with the executor (mate [`PersistUse`]).
#[derive(LogicInterface, Default)]
#[join = "PersistUse"]
pub struct PersistPort {
    /// The executor is in its Persist state (held until `done`); low: nothing under way.
    pub run: Signal<In, Bit>,
    /// The packet's pieces: `n1` bytes at `pa1`; with `two`, `len - n1` more at `pa2`.
    pub pa1: Signal<In, Bits<64>>,
    /// Bytes in the first piece.
    pub n1: Signal<In, Bits<12>>,
    /// The packet has a second piece, at `pa2`.
    pub two: Signal<In, Bit>,
    /// The second piece's physical address.
    pub pa2: Signal<In, Bits<64>>,
    /// The packet's length in bytes (the second piece is `len - n1` of them).
    pub len: Signal<In, Bits<12>>,
    /// A durable Append: its tail word is made durable after the record.
    pub append: Signal<In, Bit>,
    /// Every request is answered (one cycle); `failed`: one of them with an error.
    pub done: Signal<Out, Bit>,
    /// One of the requests failed (with `done`): the write is answered RETRY_LATER.
    pub failed: Signal<Out, Bit>,
}

/// A write whose bursts the executor has addressed, handed to the write-data stage to stream
/// its data (mate [`WriteJobIn`]).
#[derive(LogicInterface, Default)]
#[join = "WriteJobIn"]
pub struct WriteJob {
    /// Take the write this cycle (only while the stage is not busy).
    pub start: Signal<Out, Bit>,
    /// It has two page pieces.
    pub two: Signal<Out, Bit>,
    /// Lane of its first byte in block 0 (`va % 64`).
    pub o: Signal<Out, Bits<6>>,
    /// Bytes in the first piece (all of them for one piece).
    pub n1: Signal<Out, Bits<12>>,
    /// Bytes written (an Append: the record's footprint).
    pub len: Signal<Out, Bits<12>>,
    /// It is an Append record (funnel, frame word, pad).
    pub append: Signal<Out, Bit>,
}

/// The write-data stage's side of a write job (mate [`WriteJob`]).
#[derive(LogicInterface, Default)]
#[join = "WriteJob"]
pub struct WriteJobIn {
    /// Take the write this cycle (only while the stage is not busy).
    pub start: Signal<In, Bit>,
    /// It has two page pieces.
    pub two: Signal<In, Bit>,
    /// Lane of its first byte in block 0 (`va % 64`).
    pub o: Signal<In, Bits<6>>,
    /// Bytes in the first piece (all of them for one piece).
    pub n1: Signal<In, Bits<12>>,
    /// Bytes written (an Append: the record's footprint).
    pub len: Signal<In, Bits<12>>,
    /// It is an Append record (funnel, frame word, pad).
    pub append: Signal<In, Bit>,
}

/// The executor's side of a word's read-modify-write (an atomic's, Append's tail word) in the
/// word-access path (mate [`WordPort`]).
#[derive(LogicInterface, Default)]
#[join = "WordPort"]
pub struct WordUse {
    /// The word's PA (an atomic's, or Append's tail word as it is read).
    pub pa: Signal<Out, Bits<64>>,
    /// The executor waits for the word's R beat (`SData`): the beat's word is registered.
    pub sample: Signal<Out, Bit>,
    /// Load the ALU's result as the word to write.
    pub alu_load: Signal<Out, Bit>,
    /// Load Append's new tail as the word to write.
    pub tail_load: Signal<Out, Bit>,
    /// The write-back is Append's tail word.
    pub tail: Signal<Out, Bit>,
    /// The word read (registered as its beat arrived): an atomic's old value, Append's tail.
    pub old: Signal<In, Bits<64>>,
}

/// The word-access path's side of a word's read-modify-write (mate [`WordUse`]).
#[derive(LogicInterface, Default)]
#[join = "WordUse"]
pub struct WordPort {
    /// The word's PA (an atomic's, or Append's tail word as it is read).
    pub pa: Signal<In, Bits<64>>,
    /// The executor waits for the word's R beat (`SData`): the beat's word is registered.
    pub sample: Signal<In, Bit>,
    /// Load the ALU's result as the word to write.
    pub alu_load: Signal<In, Bit>,
    /// Load Append's new tail as the word to write.
    pub tail_load: Signal<In, Bit>,
    /// The write-back is Append's tail word.
    pub tail: Signal<In, Bit>,
    /// The word read (registered as its beat arrived): an atomic's old value, Append's tail.
    pub old: Signal<Out, Bits<64>>,
}

/// A one-beat DRAM write as its maker lays it out: a PTE (the PTE writer's) or a word or
/// block (the word-access path's) (mate [`BeatIn`]).
#[derive(LogicInterface, Default)]
#[join = "BeatIn"]
pub struct Beat {
    /// Byte address of the write (the beat's block is `addr & !63`).
    pub addr: Signal<Out, Bits<64>>,
    /// The beat, in DRAM lanes.
    pub data: Signal<Out, Bits<512>>,
    /// The beat's byte strobes (lane k = byte k).
    pub strb: Signal<Out, Bits<64>>,
}

/// The one-beat writer's side of a beat (mate [`Beat`]).
#[derive(LogicInterface, Default)]
#[join = "Beat"]
pub struct BeatIn {
    /// Byte address of the write (the beat's block is `addr & !63`).
    pub addr: Signal<In, Bits<64>>,
    /// The beat, in DRAM lanes.
    pub data: Signal<In, Bits<512>>,
    /// The beat's byte strobes (lane k = byte k).
    pub strb: Signal<In, Bits<64>>,
}

/// A TLB insert from the page-fault unit (a walked PTE, or a fault's new one), carrying the
/// generation of the lookup it follows (mate [`TlbInsertIn`]).
#[derive(LogicInterface, Default)]
#[join = "TlbInsertIn"]
pub struct TlbInsert {
    /// An insert enters the TLB.
    pub valid: Signal<Out, Bit>,
    /// The insert's pid.
    pub pid: Signal<Out, Bits<16>>,
    /// The insert's virtual page number.
    pub vpn: Signal<Out, Bits<36>>,
    /// The insert's frame number.
    pub pfn: Signal<Out, Bits<40>>,
    /// The insert's permissions (bit 0 read, bit 1 write).
    pub perms: Signal<Out, Bits<2>>,
    /// The TLB generation of the lookup that missed: an invalidation since drops the insert.
    pub gen: Signal<Out, Bits<16>>,
}

/// The TLB's side of the page-fault unit's inserts (mate [`TlbInsert`]).
#[derive(LogicInterface, Default)]
#[join = "TlbInsert"]
pub struct TlbInsertIn {
    /// An insert enters the TLB.
    pub valid: Signal<In, Bit>,
    /// The insert's pid.
    pub pid: Signal<In, Bits<16>>,
    /// The insert's virtual page number.
    pub vpn: Signal<In, Bits<36>>,
    /// The insert's frame number.
    pub pfn: Signal<In, Bits<40>>,
    /// The insert's permissions (bit 0 read, bit 1 write).
    pub perms: Signal<In, Bits<2>>,
    /// The TLB generation of the lookup that missed: an invalidation since drops the insert.
    pub gen: Signal<In, Bits<16>>,
}

/// A TLB change from the slow path (a PTE_WRITE's insert or invalidation, a TLB_INVALIDATE):
/// current whatever the generation, since only the slow path invalidates, one descriptor at a
/// time (mate [`TlbChangeIn`]).
#[derive(LogicInterface, Default)]
#[join = "TlbChangeIn"]
pub struct TlbChange {
    /// A change enters the TLB (it wins over an insert in the same cycle).
    pub valid: Signal<Out, Bit>,
    /// The change is an invalidation (else an insert).
    pub inval: Signal<Out, Bit>,
    /// The change's pid.
    pub pid: Signal<Out, Bits<16>>,
    /// The change's virtual page number.
    pub vpn: Signal<Out, Bits<36>>,
    /// An insert's frame number (of an allocated page: its PTE's location).
    pub pfn: Signal<Out, Bits<40>>,
    /// An insert's permissions (bit 0 read, bit 1 write).
    pub perms: Signal<Out, Bits<2>>,
    /// An insert's page is allocated but not mapped.
    pub alloc: Signal<Out, Bit>,
}

/// The TLB's side of the slow path's changes (mate [`TlbChange`]).
#[derive(LogicInterface, Default)]
#[join = "TlbChange"]
pub struct TlbChangeIn {
    /// A change enters the TLB (it wins over an insert in the same cycle).
    pub valid: Signal<In, Bit>,
    /// The change is an invalidation (else an insert).
    pub inval: Signal<In, Bit>,
    /// The change's pid.
    pub pid: Signal<In, Bits<16>>,
    /// The change's virtual page number.
    pub vpn: Signal<In, Bits<36>>,
    /// An insert's frame number (of an allocated page: its PTE's location).
    pub pfn: Signal<In, Bits<40>>,
    /// An insert's permissions (bit 0 read, bit 1 write).
    pub perms: Signal<In, Bits<2>>,
    /// An insert's page is allocated but not mapped.
    pub alloc: Signal<In, Bit>,
}

/// A TLB lookup: a page to look up this cycle (mate [`TlbLookupIn`], the TLB's side of one of
/// its three lookup sources: the translate stage, Dispatch, the look-ahead).
#[derive(LogicInterface, Default)]
#[join = "TlbLookupIn"]
pub struct TlbLookup {
    /// A lookup enters this cycle.
    pub valid: Signal<Out, Bit>,
    /// The page's process id.
    pub pid: Signal<Out, Bits<16>>,
    /// The page's virtual page number.
    pub vpn: Signal<Out, Bits<36>>,
}

/// The TLB's side of a lookup source (mate [`TlbLookup`]).
#[derive(LogicInterface, Default)]
#[join = "TlbLookup"]
pub struct TlbLookupIn {
    /// A lookup enters this cycle.
    pub valid: Signal<In, Bit>,
    /// The page's process id.
    pub pid: Signal<In, Bits<16>>,
    /// The page's virtual page number.
    pub vpn: Signal<In, Bits<36>>,
}

/// The translate stage's events for the statistics (mate [`TranslateEventsIn`], `Stats::tr`):
/// one-cycle pulses.
#[derive(LogicInterface, Default)]
#[join = "TranslateEventsIn"]
pub struct TranslateEvents {
    /// A TLB hit.
    pub hit: Signal<Out, Bit>,
    /// A TLB miss (a walk, one bucket read).
    pub miss: Signal<Out, Bit>,
    /// A page fault served.
    pub fault: Signal<Out, Bit>,
}

/// The statistics' side of [`TranslateEvents`].
#[derive(LogicInterface, Default)]
#[join = "TranslateEvents"]
pub struct TranslateEventsIn {
    /// A TLB hit.
    pub hit: Signal<In, Bit>,
    /// A TLB miss (a walk, one bucket read).
    pub miss: Signal<In, Bit>,
    /// A page fault served.
    pub fault: Signal<In, Bit>,
}

/// The executor's events for the statistics (mate [`ExecEventsIn`], `Stats::exec`):
/// one-cycle pulses.
#[derive(LogicInterface, Default)]
#[join = "ExecEventsIn"]
pub struct ExecEvents {
    /// A NACK answered.
    pub nack: Signal<Out, Bit>,
    /// A request refused by the key check, DENIED or STALE.
    pub denied: Signal<Out, Bit>,
    /// A look-ahead translation taken in Dispatch (a TLB hit the translate stage did not see).
    pub ahead_hit: Signal<Out, Bit>,
}

/// The statistics' side of [`ExecEvents`].
#[derive(LogicInterface, Default)]
#[join = "ExecEvents"]
pub struct ExecEventsIn {
    /// A NACK answered.
    pub nack: Signal<In, Bit>,
    /// A request refused by the key check, DENIED or STALE.
    pub denied: Signal<In, Bit>,
    /// A look-ahead translation taken in Dispatch (a TLB hit the translate stage did not see).
    pub ahead_hit: Signal<In, Bit>,
}

/// An offload's 64-byte block write as the offload service holds it (mate [`BlockWriteIn`],
/// the word-access path's `block`): written as given instead of a word.
#[derive(LogicInterface, Default)]
#[join = "BlockWriteIn"]
pub struct BlockWrite {
    /// The write under way is the offload's block.
    pub valid: Signal<Out, Bit>,
    /// The block, in DRAM lanes.
    pub data: Signal<Out, Bits<512>>,
    /// Its byte strobes.
    pub strb: Signal<Out, Bits<64>>,
}

/// The word-access path's side of [`BlockWrite`].
#[derive(LogicInterface, Default)]
#[join = "BlockWrite"]
pub struct BlockWriteIn {
    /// The write under way is the offload's block.
    pub valid: Signal<In, Bit>,
    /// The block, in DRAM lanes.
    pub data: Signal<In, Bits<512>>,
    /// Its byte strobes.
    pub strb: Signal<In, Bits<64>>,
}

/// The look-ahead's hash of the executor's slot's page, `proto::pt_hash(pid, vpn)`, computed
/// as the header arrived (mate [`PageHashIn`], the translate stage's `hashed`): a miss walks
/// with it instead of hashing again.
#[derive(LogicInterface, Default)]
#[join = "PageHashIn"]
pub struct PageHash {
    /// The hash is ready.
    pub ok: Signal<Out, Bit>,
    /// The hash (with `ok`).
    pub value: Signal<Out, Bits<32>>,
}

/// The translate stage's side of [`PageHash`].
#[derive(LogicInterface, Default)]
#[join = "PageHash"]
pub struct PageHashIn {
    /// The hash is ready.
    pub ok: Signal<In, Bit>,
    /// The hash (with `ok`).
    pub value: Signal<In, Bits<32>>,
}
