//! The executor's links with the blocks it drives or asks: the offload service, the TLB
//! look-ahead, the slot queue, Append's placement, the idempotence ring, the translate stage, the
//! ordering rules, the read segmenter, the TX descriptor and the response header; and the slot
//! queue's view of where the executor is, for the look-ahead; and the tail word's arrival at
//! Append's placement.
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use rust_hdl::prelude::*;

/// The executor's side of its link with the offload service ([`ServiceLink`]): it tells the service
/// when it serves the unit and how its accesses end; the service asks it for translations,
/// ring lookups and records, and hands it the unit's answer.
#[derive(LogicInterface, Default)]
#[join = "ServiceLink"]
pub struct ServiceExec {
    /// The executor takes a new frame or descriptor: no access, no answer, no arguments.
    pub clear: Signal<Out, Bit>,
    /// The executor serves the unit this cycle (its `Offload` state).
    pub serving: Signal<Out, Bit>,
    /// A translation failed this cycle, with this status: the unit's access's (it ends
    /// with that status), or the answer's payload read's (the response carries no arguments).
    pub tr_fail: Signal<Out, Bit>,
    /// The unit's word read: its R beat arrives this cycle.
    pub word_in: Signal<Out, Bit>,
    /// The unit's block write is done this cycle.
    pub block_done: Signal<Out, Bit>,
    /// The translation under way is the unit's access.
    pub accessing: Signal<In, Bit>,
    /// The translation under way is a block write.
    pub writing: Signal<In, Bit>,
    /// Translate the unit's access now, at `access_va`; a block write with `access_write`.
    pub access: Signal<In, Bit>,
    /// The access's VA (the unit's `unit.mem_va`).
    pub access_va: Signal<In, Bits<64>>,
    /// The access is a block write (write permission).
    pub access_write: Signal<In, Bit>,
    /// Look the ring up (the request's pid, client, req_id).
    pub ring_lookup: Signal<In, Bit>,
    /// Record the answer in the ring (one cycle, with `ans_valid`).
    pub ring_record: Signal<In, Bit>,
    /// The status recorded.
    pub ring_status: Signal<In, Bits<8>>,
    /// The value recorded (the answer's `arg0`).
    pub ring_value: Signal<In, Bits<64>>,
    /// The unit's answer, registered (one cycle), with the fields below.
    pub ans_valid: Signal<In, Bit>,
    /// The answer's status (BAD_REQUEST when its payload read would end past the VA space).
    pub ans_status: Signal<In, Bits<8>>,
    /// The answer's `arg0`.
    pub ans_arg0: Signal<In, Bits<64>>,
    /// The answer is a replay: the response carries `arg0` alone.
    pub ans_replay: Signal<In, Bit>,
    /// A payload read follows (an OK answer, inside the VA space).
    pub ans_read: Signal<In, Bit>,
    /// The payload read's VA.
    pub ans_read_va: Signal<In, Bits<64>>,
    /// The payload read's length in bytes.
    pub ans_read_len: Signal<In, Bits<12>>,
}

/// The offload service's link with the executor (mate [`ServiceExec`]).
#[derive(LogicInterface, Default)]
#[join = "ServiceExec"]
pub struct ServiceLink {
    /// The executor takes a new frame or descriptor: no access, no answer, no arguments.
    pub clear: Signal<In, Bit>,
    /// The executor serves the unit this cycle (its `Offload` state).
    pub serving: Signal<In, Bit>,
    /// A translation failed this cycle, with this status: the unit's access's (it ends
    /// with that status), or the answer's payload read's (the response carries no arguments).
    pub tr_fail: Signal<In, Bit>,
    /// The unit's word read: its R beat arrives this cycle.
    pub word_in: Signal<In, Bit>,
    /// The unit's block write is done this cycle.
    pub block_done: Signal<In, Bit>,
    /// The translation under way is the unit's access.
    pub accessing: Signal<Out, Bit>,
    /// The translation under way is a block write.
    pub writing: Signal<Out, Bit>,
    /// Translate the unit's access now, at `access_va`; a block write with `access_write`.
    pub access: Signal<Out, Bit>,
    /// The access's VA (the unit's `unit.mem_va`).
    pub access_va: Signal<Out, Bits<64>>,
    /// The access is a block write (write permission).
    pub access_write: Signal<Out, Bit>,
    /// Look the ring up (the request's pid, client, req_id).
    pub ring_lookup: Signal<Out, Bit>,
    /// Record the answer in the ring (one cycle, with `ans_valid`).
    pub ring_record: Signal<Out, Bit>,
    /// The status recorded.
    pub ring_status: Signal<Out, Bits<8>>,
    /// The value recorded (the answer's `arg0`).
    pub ring_value: Signal<Out, Bits<64>>,
    /// The unit's answer, registered (one cycle), with the fields below.
    pub ans_valid: Signal<Out, Bit>,
    /// The answer's status (BAD_REQUEST when its payload read would end past the VA space).
    pub ans_status: Signal<Out, Bits<8>>,
    /// The answer's `arg0`.
    pub ans_arg0: Signal<Out, Bits<64>>,
    /// The answer is a replay: the response carries `arg0` alone.
    pub ans_replay: Signal<Out, Bit>,
    /// A payload read follows (an OK answer, inside the VA space).
    pub ans_read: Signal<Out, Bit>,
    /// The payload read's VA.
    pub ans_read_va: Signal<Out, Bits<64>>,
    /// The payload read's length in bytes.
    pub ans_read_len: Signal<Out, Bits<12>>,
}

/// What the executor uses of the TLB look-ahead for the slot it takes: the packet's
/// translation and the per-slot checks registered ahead of it (mate [`AheadSlot`]).
#[derive(LogicInterface, Default)]
#[join = "AheadSlot"]
pub struct AheadUse {
    /// The executor's slot's packet's first byte (`Decode::data_va`: a write's segment `pkt_index` KiB
    /// in), summed as the header arrived and kept per slot, so Dispatch's VA is a register.
    pub va: Signal<In, Bits<64>>,
    /// The executor's slot's header passes `Header::parse` (`Decode::parse_ok` with `kv_en` as it is
    /// now), kept per slot.
    pub parse_ok: Signal<In, Bit>,
    /// The executor's slot's header passes the pointer chase's check (`Decode::chase_ok`), kept per slot.
    pub chase_ok: Signal<In, Bit>,
    /// The executor's slot's header passes Append's format check (`Decode::append_ok`), kept per slot.
    pub append_ok: Signal<In, Bit>,
    /// The executor's slot's header passes an atomic's check (`Decode::atomic_ok`), kept per slot.
    pub atomic_ok: Signal<In, Bit>,
    /// The executor's slot's frame is a READ or WRITE (when `ok` is low the executor's Dispatch looks
    /// the page up itself).
    pub rw: Signal<In, Bit>,
    /// The executor's slot's packet is translated: mapped, permitted, within one page.
    pub ok: Signal<In, Bit>,
    /// The executor's slot's packet's physical address (valid with `ok`).
    pub pa: Signal<In, Bits<64>>,
    /// The executor's slot's header passes `check_read` (`Decode::read_ok`): decoded as the header
    /// arrived and kept per slot, so Dispatch's decision does not wait for the check's 66-bit
    /// sum.
    pub read_ok: Signal<In, Bit>,
    /// The executor's slot's header passes `check_write_segment` (`Decode::write_ok`), kept per slot.
    pub write_ok: Signal<In, Bit>,
    /// The executor's slot's write segment ends inside the VA space (`Decode::write_in_va`), kept per slot.
    pub write_in_va: Signal<In, Bit>,
    /// The executor's slot's first packet's length as a 12-bit count: a read's `min(total_len,
    /// MAX_PAYLOAD)` (its answer's packet 0; the range is only read with `use_read_ok`), a
    /// write's `payload_len` cut to 12 bits. Registered from `queue.next_slot` the cycle before, like
    /// `dlk.pid`, so Dispatch's access length and response length start from a flip-flop (the
    /// compare with `MAX_PAYLOAD` is not in front of them).
    pub len: Signal<In, Bits<12>>,
    /// Dispatch looks the slot's page up this cycle (a read or write the look-ahead has not
    /// translated), with the look-ahead's registers of the slot (its `dlk`), before the checks
    /// decide: the checks are not in front of the TLB's compare. A lookup for a request the
    /// checks refuse only touches the TLB's replacement order.
    pub lookup: Signal<Out, Bit>,
}

/// The TLB look-ahead's results for the slot the executor takes (mate [`AheadUse`]).
#[derive(LogicInterface, Default)]
#[join = "AheadUse"]
pub struct AheadSlot {
    /// The executor's slot's packet's first byte (`Decode::data_va`: a write's segment `pkt_index` KiB
    /// in), summed as the header arrived and kept per slot, so Dispatch's VA is a register.
    pub va: Signal<Out, Bits<64>>,
    /// The executor's slot's header passes `Header::parse` (`Decode::parse_ok` with `kv_en` as it is
    /// now), kept per slot.
    pub parse_ok: Signal<Out, Bit>,
    /// The executor's slot's header passes the pointer chase's check (`Decode::chase_ok`), kept per slot.
    pub chase_ok: Signal<Out, Bit>,
    /// The executor's slot's header passes Append's format check (`Decode::append_ok`), kept per slot.
    pub append_ok: Signal<Out, Bit>,
    /// The executor's slot's header passes an atomic's check (`Decode::atomic_ok`), kept per slot.
    pub atomic_ok: Signal<Out, Bit>,
    /// The executor's slot's frame is a READ or WRITE (when `ok` is low the executor's Dispatch looks
    /// the page up itself).
    pub rw: Signal<Out, Bit>,
    /// The executor's slot's packet is translated: mapped, permitted, within one page.
    pub ok: Signal<Out, Bit>,
    /// The executor's slot's packet's physical address (valid with `ok`).
    pub pa: Signal<Out, Bits<64>>,
    /// The executor's slot's header passes `check_read` (`Decode::read_ok`): decoded as the header
    /// arrived and kept per slot, so Dispatch's decision does not wait for the check's 66-bit
    /// sum.
    pub read_ok: Signal<Out, Bit>,
    /// The executor's slot's header passes `check_write_segment` (`Decode::write_ok`), kept per slot.
    pub write_ok: Signal<Out, Bit>,
    /// The executor's slot's write segment ends inside the VA space (`Decode::write_in_va`), kept per slot.
    pub write_in_va: Signal<Out, Bit>,
    /// The executor's slot's first packet's length as a 12-bit count: a read's `min(total_len,
    /// MAX_PAYLOAD)` (its answer's packet 0; the range is only read with `use_read_ok`), a
    /// write's `payload_len` cut to 12 bits. Registered from `queue.next_slot` the cycle before, like
    /// `dlk.pid`, so Dispatch's access length and response length start from a flip-flop (the
    /// compare with `MAX_PAYLOAD` is not in front of them).
    pub len: Signal<Out, Bits<12>>,
    /// Dispatch looks the slot's page up this cycle (a read or write the look-ahead has not
    /// translated), with the look-ahead's registers of the slot (its `dlk`), before the checks
    /// decide: the checks are not in front of the TLB's compare. A lookup for a request the
    /// checks refuse only touches the TLB's replacement order.
    pub lookup: Signal<In, Bit>,
}

/// The next frame as the executor takes it from the slot queue (mate [`NextFrame`]).
#[derive(LogicInterface, Default)]
#[join = "NextFrame"]
pub struct NextFrameIn {
    /// A frame is in `next_slot` for the executor (full, not being streamed).
    pub full: Signal<In, Bit>,
    /// The next frame's verdict.
    pub verdict: Signal<In, Bits<2>>,
    /// The next frame's header bytes 0..48.
    pub hdr: Signal<In, Bits<384>>,
    /// The next frame's client id.
    pub client: Signal<In, Bits<16>>,
    /// The next frame's idempotence-ring key: pid at bits 48..64, client 32..48, req_id (a
    /// CN_ACK's `arg0` low word) 0..32.
    pub ring_key: Signal<In, Bits<64>>,
    /// The next frame's route.
    pub route: Signal<In, Bits<256>>,
    /// The next frame's payload lane.
    pub lane: Signal<In, Bits<6>>,
}

/// The slot queue's next frame: whether there is one, its ack-layer verdict, header,
/// client, ring key, route and lane (mate [`NextFrameIn`]).
#[derive(LogicInterface, Default)]
#[join = "NextFrameIn"]
pub struct NextFrame {
    /// A frame is in `next_slot` for the executor (full, not being streamed).
    pub full: Signal<Out, Bit>,
    /// The next frame's verdict.
    pub verdict: Signal<Out, Bits<2>>,
    /// The next frame's header bytes 0..48.
    pub hdr: Signal<Out, Bits<384>>,
    /// The next frame's client id.
    pub client: Signal<Out, Bits<16>>,
    /// The next frame's idempotence-ring key: pid at bits 48..64, client 32..48, req_id (a
    /// CN_ACK's `arg0` low word) 0..32.
    pub ring_key: Signal<Out, Bits<64>>,
    /// The next frame's route.
    pub route: Signal<Out, Bits<256>>,
    /// The next frame's payload lane.
    pub lane: Signal<Out, Bits<6>>,
}

/// Append's placement as the executor uses it (mate [`AppendPlaced`]).
#[derive(LogicInterface, Default)]
#[join = "AppendPlaced"]
pub struct AppendPlacedIn {
    /// The placement (from the cycle after `load`): LOG_FULL, else BAD_REQUEST (`past_va`),
    /// else the record's VA.
    pub log_full: Signal<In, Bit>,
    /// The record ends past the VA space: BAD_REQUEST (when not `log_full`).
    pub past_va: Signal<In, Bit>,
    /// The record's VA, `va + LOG_HEAD + tail`.
    pub record_va: Signal<In, Bits<64>>,
    /// Bytes the record takes in the log (`replog::footprint(len)`).
    pub footprint: Signal<In, Bits<12>>,
    /// The tail word loaded (the answer's `arg0`, the idempotence ring's value).
    pub old_tail: Signal<In, Bits<64>>,
    /// The new tail, `old_tail + footprint`.
    pub new_tail: Signal<In, Bits<64>>,
}

/// Append's placement of a record: whether the log is full or the record would pass the VA
/// space, the record's VA and footprint, the old and new tail (mate [`AppendPlacedIn`]).
#[derive(LogicInterface, Default)]
#[join = "AppendPlacedIn"]
pub struct AppendPlaced {
    /// The placement (from the cycle after `load`): LOG_FULL, else BAD_REQUEST (`past_va`),
    /// else the record's VA.
    pub log_full: Signal<Out, Bit>,
    /// The record ends past the VA space: BAD_REQUEST (when not `log_full`).
    pub past_va: Signal<Out, Bit>,
    /// The record's VA, `va + LOG_HEAD + tail`.
    pub record_va: Signal<Out, Bits<64>>,
    /// Bytes the record takes in the log (`replog::footprint(len)`).
    pub footprint: Signal<Out, Bits<12>>,
    /// The tail word loaded (the answer's `arg0`, the idempotence ring's value).
    pub old_tail: Signal<Out, Bits<64>>,
    /// The new tail, `old_tail + footprint`.
    pub new_tail: Signal<Out, Bits<64>>,
}

/// The executor's side of the idempotence ring's port (mate [`RingPort`]).
#[derive(LogicInterface, Default)]
#[join = "RingPort"]
pub struct RingUse {
    /// The request's key, `pid << 48 | client << 32 | req_id` (lookup, ack, release and
    /// record).
    pub key: Signal<Out, Bits<64>>,
    /// Look the key up (result next cycle, verdict the cycle after).
    pub lookup: Signal<Out, Bit>,
    /// Mark the key's entry acknowledged (CN_ACK).
    pub ack: Signal<Out, Bit>,
    /// Record `rec_status` and `rec_value` into the key's entry.
    pub record: Signal<Out, Bit>,
    /// The status to record with it.
    pub rec_status: Signal<Out, Bits<8>>,
    /// The value to record.
    pub rec_value: Signal<Out, Bits<64>>,
    /// The lookup's answer and verdict.
    pub verdict: RingVerdictIn,
}

/// The idempotence ring's port (the sync unit's): look a key up, acknowledge, skip, record;
/// the lookup's answer a cycle later (mate [`RingUse`]).
#[derive(LogicInterface, Default)]
#[join = "RingUse"]
pub struct RingPort {
    /// The request's key, `pid << 48 | client << 32 | req_id` (lookup, ack, release and
    /// record).
    pub key: Signal<In, Bits<64>>,
    /// Look the key up (result next cycle).
    pub lookup: Signal<In, Bit>,
    /// Mark the key's entry acknowledged (CN_ACK).
    pub ack: Signal<In, Bit>,
    /// Record `rec_status` and `rec_value` into the key's entry.
    pub record: Signal<In, Bit>,
    /// The status to record with it.
    pub rec_status: Signal<In, Bits<8>>,
    /// The value to record.
    pub rec_value: Signal<In, Bits<64>>,
    /// The lookup's answer and verdict (Clio-KV's unit reads it too).
    pub verdict: RingVerdict,
}

/// The executor's side of the translate stage's port (mate [`TranslatePort`]).
#[derive(LogicInterface, Default)]
#[join = "TranslatePort"]
pub struct TranslateUse {
    /// This cycle's TLB answer (or the walk's result) is a mapped page with the permission:
    /// `hit_pa`.
    pub only_hit: Signal<In, Bit>,
    /// The PA of `only_hit`.
    pub hit_pa: Signal<In, Bits<64>>,
    /// The translation is done (one cycle): `status`, and `pa` when OK.
    pub done: Signal<In, Bit>,
    /// The translation's status (with `done`).
    pub status: Signal<In, Bits<8>>,
    /// The translated PA (with `done`, when `status` is OK).
    pub pa: Signal<In, Bits<64>>,
    /// Permissions the access needs, as the PTE's `READ | WRITE << 1` (held, as `pid`).
    pub need: Signal<Out, Bits<2>>,
    /// The executor takes `only_hit`'s translation now: nothing more to do (no `done`).
    pub hit_take: Signal<Out, Bit>,
    /// Translate the page of `start_va` (from Idle or Done).
    pub start: Signal<Out, Bit>,
    /// The byte whose page is translated (the PA keeps its offset in the page).
    pub start_va: Signal<Out, Bits<64>>,
}

/// The translate stage's port toward the executor: a translation asked for (its VA, the
/// permission it needs), the only-page hit on offer, and the translation's end (mate
/// [`TranslateUse`]).
#[derive(LogicInterface, Default)]
#[join = "TranslateUse"]
pub struct TranslatePort {
    /// This cycle's TLB answer (or the walk's result) is a mapped page with the permission:
    /// `hit_pa`.
    pub only_hit: Signal<Out, Bit>,
    /// The PA of `only_hit`.
    pub hit_pa: Signal<Out, Bits<64>>,
    /// The translation is done (one cycle): `status`, and `pa` when OK.
    pub done: Signal<Out, Bit>,
    /// The translation's status (with `done`).
    pub status: Signal<Out, Bits<8>>,
    /// The translated PA (with `done`, when `status` is OK).
    pub pa: Signal<Out, Bits<64>>,
    /// Permissions the access needs, as the PTE's `READ | WRITE << 1` (held, as `pid`).
    pub need: Signal<In, Bits<2>>,
    /// The executor takes `only_hit`'s translation now: nothing more to do (no `done`).
    pub hit_take: Signal<In, Bit>,
    /// Translate the page of `start_va` (from Idle or Done).
    pub start: Signal<In, Bit>,
    /// The byte whose page is translated (the PA keeps its offset in the page).
    pub start_va: Signal<In, Bits<64>>,
}

/// The ordering rules' verdicts as the executor uses them (mate [`OrderClear`]).
#[derive(LogicInterface, Default)]
#[join = "OrderClear"]
pub struct OrderClearIn {
    /// A data read may go out.
    pub read_clear: Signal<In, Bit>,
    /// A write's addresses may go out.
    pub write_clear: Signal<In, Bit>,
    /// An atomic's one-beat read may go out (and take the R beats).
    pub atomic_clear: Signal<In, Bit>,
    /// Every write has its B response and none is streaming.
    pub fence_clear: Signal<In, Bit>,
    /// The data read the executor asked about last cycle (and asks about again now) overlaps
    /// no write in flight: it may go out (`InFlight`), though `read_clear` may not hold.
    pub read_near: Signal<In, Bit>,
    /// The write the executor asked about last cycle overlaps no read in flight.
    pub write_near: Signal<In, Bit>,
    /// The executor asks about a burst this cycle (in `RAddr`, `WAddr`, and in Dispatch
    /// about the access it may go on to): the verdicts next cycle answer it.
    pub ask: Signal<Out, Bit>,
    /// The burst asked about: its first line (address bits 13..6).
    pub ask_line: Signal<Out, Bits<8>>,
    /// An upper bound of its last line, inside its 4 KiB block (`ask_line <= ask_end <=
    /// ask_line | 63`; exact or rounded up to the block's last line, [`InFlight`](crate::fastpath::in_flight::InFlight)).
    pub ask_end: Signal<Out, Bits<8>>,
}

/// The ordering rules' verdicts: a read, a write, an atomic, a fence may go out now (mate
/// [`OrderClearIn`]).
#[derive(LogicInterface, Default)]
#[join = "OrderClearIn"]
pub struct OrderClear {
    /// A data read may go out.
    pub read_clear: Signal<Out, Bit>,
    /// A write's addresses may go out.
    pub write_clear: Signal<Out, Bit>,
    /// An atomic's one-beat read may go out (and take the R beats).
    pub atomic_clear: Signal<Out, Bit>,
    /// Every write has its B response and none is streaming.
    pub fence_clear: Signal<Out, Bit>,
    /// The data read the executor asked about last cycle (and asks about again now) overlaps
    /// no write in flight: it may go out (`InFlight`), though `read_clear` may not hold.
    pub read_near: Signal<Out, Bit>,
    /// The write the executor asked about last cycle overlaps no read in flight.
    pub write_near: Signal<Out, Bit>,
    /// The executor asks about a burst this cycle (in `RAddr`, `WAddr`, and in Dispatch
    /// about the access it may go on to): the verdicts next cycle answer it.
    pub ask: Signal<In, Bit>,
    /// The burst asked about: its first line (address bits 13..6).
    pub ask_line: Signal<In, Bits<8>>,
    /// An upper bound of its last line, inside its 4 KiB block.
    pub ask_end: Signal<In, Bits<8>>,
}

/// The executor's side of the read segmenter's port (mate [`SegPort`]).
#[derive(LogicInterface, Default)]
#[join = "SegPort"]
pub struct SegUse {
    /// A request is dispatched (`va`, `total` are its own): the packet under way is 0.
    pub load: Signal<Out, Bit>,
    /// The answer moves on to its next packet.
    pub step: Signal<Out, Bit>,
    /// Packets of the answer, `ceil(total / MAX_PAYLOAD)`.
    pub count: Signal<In, Bits<16>>,
    /// VA of the next packet's first byte (`va + (i + 1) * MAX_PAYLOAD` for the packet `i`
    /// under way), from a register.
    pub next_va: Signal<In, Bits<64>>,
    /// Bytes of the next packet, `min(total - (i + 1) * MAX_PAYLOAD, MAX_PAYLOAD)` (when there is
    /// one), a compare and a select from a register.
    pub next_len: Signal<In, Bits<12>>,
}

/// The read segmenter's port: load a read's segments, step to the next packet; the count of
/// packets and the next packet's VA and length (mate [`SegUse`]).
#[derive(LogicInterface, Default)]
#[join = "SegUse"]
pub struct SegPort {
    /// A request is dispatched (`va`, `total` are its own): the packet under way is 0.
    pub load: Signal<In, Bit>,
    /// The answer moves on to its next packet.
    pub step: Signal<In, Bit>,
    /// Packets of the answer, `ceil(total / MAX_PAYLOAD)`.
    pub count: Signal<Out, Bits<16>>,
    /// VA of the next packet's first byte (`va + (i + 1) * MAX_PAYLOAD` for the packet `i`
    /// under way), from a register.
    pub next_va: Signal<Out, Bits<64>>,
    /// Bytes of the next packet, `min(total - (i + 1) * MAX_PAYLOAD, MAX_PAYLOAD)` (when there is
    /// one), a compare and a select from a register.
    pub next_len: Signal<Out, Bits<12>>,
}

/// What the executor tells the slot queue about the frame it holds: taken, done with, passed
/// to the write-data stage (mate [`QueueReleaseIn`]).
#[derive(LogicInterface, Default)]
#[join = "QueueReleaseIn"]
pub struct QueueRelease {
    /// The executor finishes its request this cycle (its slot, if it holds it, is released).
    pub done: Signal<Out, Bit>,
    /// The write-data stage takes the executor's write and its slot this cycle.
    pub pass: Signal<Out, Bit>,
    /// The executor takes the frame in `next_slot` this cycle.
    pub take: Signal<Out, Bit>,
}

/// The slot queue's side of [`QueueRelease`].
#[derive(LogicInterface, Default)]
#[join = "QueueRelease"]
pub struct QueueReleaseIn {
    /// The executor finishes its request this cycle (its slot, if it holds it, is released).
    pub done: Signal<In, Bit>,
    /// The write-data stage takes the executor's write and its slot this cycle.
    pub pass: Signal<In, Bit>,
    /// The executor takes the frame in `next_slot` this cycle.
    pub take: Signal<In, Bit>,
}

/// The TX descriptor being taken, as the executor holds it (mate [`DescTaken`]).
#[derive(LogicInterface, Default)]
#[join = "DescTaken"]
pub struct DescTakenIn {
    /// The descriptor being taken, read as a RING_OWNER: its member, pid at bits 16..32 and
    /// client at 0..16 (the executor registers it as the sync unit's key).
    pub member: Signal<In, Bits<32>>,
    /// REPLY's route.
    pub route: Signal<In, Bits<256>>,
    /// REPLY's header bytes 0..48.
    pub header: Signal<In, Bits<384>>,
    /// REPLY's status (its header's status byte).
    pub reply_status: Signal<In, Bits<8>>,
    /// REPLY's flags: its header's RESPONSE bit.
    pub reply_flags: Signal<In, Bits<8>>,
}

/// The TX descriptor being taken: its member key, route, header and a REPLY's status and flags
/// (mate [`DescTakenIn`]).
#[derive(LogicInterface, Default)]
#[join = "DescTakenIn"]
pub struct DescTaken {
    /// The descriptor being taken, read as a RING_OWNER: its member, pid at bits 16..32 and
    /// client at 0..16 (the executor registers it as the sync unit's key).
    pub member: Signal<Out, Bits<32>>,
    /// REPLY's route.
    pub route: Signal<Out, Bits<256>>,
    /// REPLY's header bytes 0..48.
    pub header: Signal<Out, Bits<384>>,
    /// REPLY's status (its header's status byte).
    pub reply_status: Signal<Out, Bits<8>>,
    /// REPLY's flags: its header's RESPONSE bit.
    pub reply_flags: Signal<Out, Bits<8>>,
}

/// The fields of the response the executor answers with: status, flags, payload length, its
/// `arg0` (and whether it is used), and a read's packet index and count; and the response
/// header the builder makes of them (mate [`ResponseFieldsIn`]).
#[derive(LogicInterface, Default)]
#[join = "ResponseFieldsIn"]
pub struct ResponseFields {
    /// The response's status, flags and payload length.
    pub status: Signal<Out, Bits<8>>,
    /// The response's flags byte.
    pub flags: Signal<Out, Bits<8>>,
    /// The response's payload length.
    pub payload_len: Signal<Out, Bits<16>>,
    /// `arg0` answers with `arg0`.
    pub arg0_on: Signal<Out, Bit>,
    /// The `arg0` answered with (with `arg0_on` or `args_on`).
    pub arg0: Signal<Out, Bits<64>>,
    /// `pkt_index` and `pkt_count` answer with these.
    pub seg_on: Signal<Out, Bit>,
    /// The `pkt_index` answered with (with `seg_on`).
    pub pkt_index: Signal<Out, Bits<16>>,
    /// The `pkt_count` answered with (with `seg_on`).
    pub pkt_count: Signal<Out, Bits<16>>,
    /// The response's header bytes 0..48, built from the fields above.
    pub response: Signal<In, Bits<384>>,
    /// The same with status OK whatever `status` says (a plain write's answer, handed on in
    /// the cycle its data goes to the write-data stage, before `status` is OK).
    pub response_ok: Signal<In, Bits<384>>,
}

/// The response header builder's side of [`ResponseFields`].
#[derive(LogicInterface, Default)]
#[join = "ResponseFields"]
pub struct ResponseFieldsIn {
    /// The response's status, flags and payload length.
    pub status: Signal<In, Bits<8>>,
    /// The response's flags byte.
    pub flags: Signal<In, Bits<8>>,
    /// The response's payload length.
    pub payload_len: Signal<In, Bits<16>>,
    /// `arg0` answers with `arg0`.
    pub arg0_on: Signal<In, Bit>,
    /// The `arg0` answered with (with `arg0_on` or `args_on`).
    pub arg0: Signal<In, Bits<64>>,
    /// `pkt_index` and `pkt_count` answer with these.
    pub seg_on: Signal<In, Bit>,
    /// The `pkt_index` answered with (with `seg_on`).
    pub pkt_index: Signal<In, Bits<16>>,
    /// The `pkt_count` answered with (with `seg_on`).
    pub pkt_count: Signal<In, Bits<16>>,
    /// The response's header bytes 0..48, built from the fields above.
    pub response: Signal<Out, Bits<384>>,
    /// The same with status OK whatever `status` says (a plain write's answer, handed on in
    /// the cycle its data goes to the write-data stage, before `status` is OK).
    pub response_ok: Signal<Out, Bits<384>>,
}

/// Where the executor is in the slot queue, for the TLB look-ahead (mate [`SlotViewIn`]).
#[derive(LogicInterface, Default)]
#[join = "SlotViewIn"]
pub struct SlotView {
    /// The executor's slot (the one it dispatches).
    pub slot: Signal<Out, Bits<2>>,
    /// The executor's slot in the next cycle.
    pub next_slot: Signal<Out, Bits<2>>,
    /// Slots whose frames the executor or the write-data stage has taken (bit k = slot k).
    pub taken: Signal<Out, Bits<4>>,
    /// The oldest slot the executor has not taken.
    pub head: Signal<Out, Bits<2>>,
}

/// The look-ahead's side of the slot queue's view (mate [`SlotView`]).
#[derive(LogicInterface, Default)]
#[join = "SlotView"]
pub struct SlotViewIn {
    /// The executor's slot (the one it dispatches).
    pub slot: Signal<In, Bits<2>>,
    /// The executor's slot in the next cycle.
    pub next_slot: Signal<In, Bits<2>>,
    /// Slots whose frames the executor or the write-data stage has taken (bit k = slot k).
    pub taken: Signal<In, Bits<4>>,
    /// The oldest slot the executor has not taken.
    pub head: Signal<In, Bits<2>>,
}

/// The executor's side of Append's placement as the tail word arrives (mate [`PlacePort`]):
/// load it, where it was read, and the payload's lane in its slot.
#[derive(LogicInterface, Default)]
#[join = "PlacePort"]
pub struct PlaceUse {
    /// The tail word arrives this cycle (its value comes from the word-access path).
    pub load: Signal<Out, Bit>,
    /// The PA the tail word was read at, with `load`.
    pub tail_pa: Signal<Out, Bits<64>>,
    /// The payload's lane in its wbuf slot as an 8-byte word (lane bits 3..6; the header VA is
    /// 8-byte aligned), with `load`.
    pub slot_word: Signal<Out, Bits<3>>,
}

/// Append's placement's side of the tail word's arrival (mate [`PlaceUse`]).
#[derive(LogicInterface, Default)]
#[join = "PlaceUse"]
pub struct PlacePort {
    /// The tail word arrives this cycle (its value comes from the word-access path).
    pub load: Signal<In, Bit>,
    /// The PA the tail word was read at, with `load`.
    pub tail_pa: Signal<In, Bits<64>>,
    /// The payload's lane in its wbuf slot as an 8-byte word (lane bits 3..6; the header VA is
    /// 8-byte aligned), with `load`.
    pub slot_word: Signal<In, Bits<3>>,
}

/// The executor starting an offload unit with the request in Dispatch, when the unit can take
/// one (mate [`UnitStartIn`], the extend path's side).
#[derive(LogicInterface, Default)]
#[join = "UnitStartIn"]
pub struct UnitStart {
    /// Start the pointer chaser (only when `chase_ready`).
    pub chase: Signal<Out, Bit>,
    /// Start Clio-KV (only when `kv_ready`).
    pub kv: Signal<Out, Bit>,
    /// The pointer chaser can take a request.
    pub chase_ready: Signal<In, Bit>,
    /// Clio-KV can take a request.
    pub kv_ready: Signal<In, Bit>,
}

/// The extend path's side of [`UnitStart`].
#[derive(LogicInterface, Default)]
#[join = "UnitStart"]
pub struct UnitStartIn {
    /// Start the pointer chaser (only when `chase_ready`).
    pub chase: Signal<In, Bit>,
    /// Start Clio-KV (only when `kv_ready`).
    pub kv: Signal<In, Bit>,
    /// The pointer chaser can take a request.
    pub chase_ready: Signal<Out, Bit>,
    /// Clio-KV can take a request.
    pub kv_ready: Signal<Out, Bit>,
}

/// The idempotence ring's answer to a lookup (the sync unit's; mate [`RingVerdictIn`]): the
/// entry found and whether a new request may execute.
#[derive(LogicInterface, Default)]
#[join = "RingVerdictIn"]
pub struct RingVerdict {
    /// The key is in the ring (lookup result).
    pub hit: Signal<Out, Bit>,
    /// The key's client id is not a row its pid holds: DENIED, nothing executes.
    pub stranger: Signal<Out, Bit>,
    /// The member holds its share of unacknowledged results, or the key's entry holds another
    /// of them: QUOTA_EXCEEDED (`Quota::RingShare`), nothing executes.
    pub quota: Signal<Out, Bit>,
    /// Its recorded status (lookup result).
    pub status: Signal<Out, Bits<8>>,
    /// Its recorded result (lookup result).
    pub value: Signal<Out, Bits<64>>,
}

/// A reader's side of the idempotence ring's answer (mate [`RingVerdict`]): the executor's,
/// Clio-KV's.
#[derive(LogicInterface, Default)]
#[join = "RingVerdict"]
pub struct RingVerdictIn {
    /// The key is in the ring (lookup result).
    pub hit: Signal<In, Bit>,
    /// The key's client id is not a row its pid holds: DENIED, nothing executes.
    pub stranger: Signal<In, Bit>,
    /// The member holds its share of unacknowledged results, or the key's entry holds another
    /// of them: QUOTA_EXCEEDED (`Quota::RingShare`), nothing executes.
    pub quota: Signal<In, Bit>,
    /// Its recorded status (lookup result).
    pub status: Signal<In, Bits<8>>,
    /// Its recorded result (lookup result).
    pub value: Signal<In, Bits<64>>,
}
