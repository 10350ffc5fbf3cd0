//! The offload port bundle (the channels are described in [`super`]): [`OffloadPort`], what
//! every unit has (request, memory, response), and [`OffloadKvPort`], what a unit with a
//! payload, the idempotence ring and a store of its own adds (Clio-KV). Each is declared here
//! once, with its mate, the executor's side ([`OffloadHost`], [`OffloadKvHost`]); a signal
//! added to the port is added here and in the mate, and rust-hdl's derive checks the two
//! against each other (same names and types, opposite directions).
//!
//! Behind the extend port (`crate::fastpath::extend::Extend`, which muxes the units), the
//! active unit's memory, response and ring channels reach the executor's offload service as
//! one more pair: [`UnitChannels`] (the extend port's side) and [`UnitService`] (the
//! service's), joined in the top.
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use rust_hdl::prelude::*;

/// Every offload unit's port: the request, word reads and block writes, the answer.
#[derive(LogicInterface, Default)]
#[join = "OffloadHost"]
pub struct OffloadPort {
    /// Request: valid.
    pub req_valid: Signal<In, Bit>,
    /// Request: the unit is idle and takes it.
    pub req_ready: Signal<Out, Bit>,
    /// Request: header `va`.
    pub req_va: Signal<In, Bits<64>>,
    /// Request: header `arg0`.
    pub req_arg0: Signal<In, Bits<64>>,
    /// Request: header `arg1`.
    pub req_arg1: Signal<In, Bits<64>>,
    /// Request: header `total_len`.
    pub req_len: Signal<In, Bits<32>>,
    /// Memory: an access is asked for (held until `mem_ready`).
    pub mem_valid: Signal<Out, Bit>,
    /// Memory: the executor takes it.
    pub mem_ready: Signal<In, Bit>,
    /// Memory: the word's VA (a read, 8-byte aligned) or the block's (a write, 64-byte aligned).
    pub mem_va: Signal<Out, Bits<64>>,
    /// Memory: the access is done (one cycle).
    pub mem_done: Signal<In, Bit>,
    /// Memory: its status (0 = OK).
    pub mem_status: Signal<In, Bits<8>>,
    /// Memory: the 64-byte block that holds the word read (byte k at bits 8k..), valid with
    /// `mem_done`.
    pub mem_data: Signal<In, Bits<512>>,
    /// Response: valid (held until `rsp_ready`).
    pub rsp_valid: Signal<Out, Bit>,
    /// Response: the executor takes it.
    pub rsp_ready: Signal<In, Bit>,
    /// Response: status.
    pub rsp_status: Signal<Out, Bits<8>>,
    /// Response: `arg0` of the response header.
    pub rsp_arg0: Signal<Out, Bits<64>>,
    /// Response: `arg1` of the response header.
    pub rsp_arg1: Signal<Out, Bits<64>>,
    /// Response: the payload is `rsp_read_len` bytes at `rsp_read_va`.
    pub rsp_read: Signal<Out, Bit>,
    /// Response: the value's VA.
    pub rsp_read_va: Signal<Out, Bits<64>>,
    /// Response: the value's length (1..=1024).
    pub rsp_read_len: Signal<Out, Bits<12>>,
    /// Memory: a block write (else a word read).
    pub mem_write: Signal<Out, Bit>,
    /// Memory: the block to write.
    pub mem_wdata: Signal<Out, Bits<512>>,
    /// Memory: its byte strobes (AXI WSTRB).
    pub mem_wstrb: Signal<Out, Bits<64>>,
    /// Memory: in the offload's own RAS (else the caller's).
    pub mem_own: Signal<Out, Bit>,
    /// Payload: the unit takes the beat offered.
    pub pay_ready: Signal<Out, Bit>,
    /// Response: the value is read in the offload's own RAS (else the caller's).
    pub rsp_read_own: Signal<Out, Bit>,
}

/// The executor's side of [`OffloadPort`].
#[derive(LogicInterface, Default)]
#[join = "OffloadPort"]
pub struct OffloadHost {
    /// Request: valid.
    pub req_valid: Signal<Out, Bit>,
    /// Request: the unit is idle and takes it.
    pub req_ready: Signal<In, Bit>,
    /// Request: header `va`.
    pub req_va: Signal<Out, Bits<64>>,
    /// Request: header `arg0`.
    pub req_arg0: Signal<Out, Bits<64>>,
    /// Request: header `arg1`.
    pub req_arg1: Signal<Out, Bits<64>>,
    /// Request: header `total_len`.
    pub req_len: Signal<Out, Bits<32>>,
    /// Memory: an access is asked for (held until `mem_ready`).
    pub mem_valid: Signal<In, Bit>,
    /// Memory: the executor takes it.
    pub mem_ready: Signal<Out, Bit>,
    /// Memory: the word's VA (a read, 8-byte aligned) or the block's (a write, 64-byte aligned).
    pub mem_va: Signal<In, Bits<64>>,
    /// Memory: the access is done (one cycle).
    pub mem_done: Signal<Out, Bit>,
    /// Memory: its status (0 = OK).
    pub mem_status: Signal<Out, Bits<8>>,
    /// Memory: the 64-byte block that holds the word read (byte k at bits 8k..), valid with
    /// `mem_done`.
    pub mem_data: Signal<Out, Bits<512>>,
    /// Response: valid (held until `rsp_ready`).
    pub rsp_valid: Signal<In, Bit>,
    /// Response: the executor takes it.
    pub rsp_ready: Signal<Out, Bit>,
    /// Response: status.
    pub rsp_status: Signal<In, Bits<8>>,
    /// Response: `arg0` of the response header.
    pub rsp_arg0: Signal<In, Bits<64>>,
    /// Response: `arg1` of the response header.
    pub rsp_arg1: Signal<In, Bits<64>>,
    /// Response: the payload is `rsp_read_len` bytes at `rsp_read_va`.
    pub rsp_read: Signal<In, Bit>,
    /// Response: the value's VA.
    pub rsp_read_va: Signal<In, Bits<64>>,
    /// Response: the value's length (1..=1024).
    pub rsp_read_len: Signal<In, Bits<12>>,
    /// Memory: a block write (else a word read).
    pub mem_write: Signal<In, Bit>,
    /// Memory: the block to write.
    pub mem_wdata: Signal<In, Bits<512>>,
    /// Memory: its byte strobes (AXI WSTRB).
    pub mem_wstrb: Signal<In, Bits<64>>,
    /// Memory: in the offload's own RAS (else the caller's).
    pub mem_own: Signal<In, Bit>,
    /// Payload: the unit takes the beat offered.
    pub pay_ready: Signal<In, Bit>,
    /// Response: the value is read in the offload's own RAS (else the caller's).
    pub rsp_read_own: Signal<In, Bit>,
}

/// What a unit with a payload, the idempotence ring and a store of its own adds to
/// [`OffloadPort`] (Clio-KV).
#[derive(LogicInterface, Default)]
#[join = "OffloadKvHost"]
pub struct OffloadKvPort {
    /// Request: the opcode byte.
    pub req_op: Signal<In, Bits<8>>,
    /// Request: the caller's RAS.
    pub req_pid: Signal<In, Bits<16>>,
    /// Request: header `payload_len` (the payload's bytes on `pay_*`).
    pub req_pay_len: Signal<In, Bits<16>>,
    /// Request: header `pkt_count`.
    pub req_pkt_count: Signal<In, Bits<16>>,
    /// Request: header `pkt_index`.
    pub req_pkt_index: Signal<In, Bits<16>>,
    /// Payload: a beat is offered (held until `pay_ready` of [`OffloadPort`]).
    pub pay_valid: Signal<In, Bit>,
    /// Payload: the beat (payload byte 64 i + k at bits 8k..).
    pub pay_data: Signal<In, Bits<512>>,
    /// Payload: the request's last beat.
    pub pay_last: Signal<In, Bit>,
    /// Response: record it (status, `arg0`) in the idempotence ring under the caller's
    /// `(pid, client, req_id)`.
    pub rsp_record: Signal<Out, Bit>,
    /// Response: it comes from the ring (a retry, or RETRY_LATER for a full ring): the
    /// request's header with this status and `arg0`, nothing else.
    pub rsp_replay: Signal<Out, Bit>,
    /// Ring: the request asks the ring's verdict (held until `once_done`).
    pub once_valid: Signal<Out, Bit>,
    /// Ring: the verdict (one cycle): `once_hit`, else `once_quota`, else `once_stranger`, else
    /// execute.
    pub once_done: Signal<In, Bit>,
    /// Ring: the key was found (`once_status`, `once_value` are its recorded answer).
    pub once_hit: Signal<In, Bit>,
    /// Ring: the caller's client id is not a row its RAS holds (DENIED).
    pub once_stranger: Signal<In, Bit>,
    /// Ring: the caller holds its share of unacknowledged results, or the request's entry
    /// holds another of them (QUOTA_EXCEEDED).
    pub once_quota: Signal<In, Bit>,
    /// Ring: the recorded status.
    pub once_status: Signal<In, Bits<8>>,
    /// Ring: the recorded `arg0`.
    pub once_value: Signal<In, Bits<64>>,
    /// Store: `StoreLayout::base`.
    pub cfg_base: Signal<In, Bits<64>>,
    /// Store: `StoreLayout::buckets` (a power of two).
    pub cfg_buckets: Signal<In, Bits<64>>,
    /// Store: `StoreLayout::records` (below 2^32).
    pub cfg_records: Signal<In, Bits<32>>,
    /// Store: OK when ready, else the status its requests get.
    pub cfg_status: Signal<In, Bits<8>>,
}

/// The executor's side of [`OffloadKvPort`].
#[derive(LogicInterface, Default)]
#[join = "OffloadKvPort"]
pub struct OffloadKvHost {
    /// Request: the opcode byte.
    pub req_op: Signal<Out, Bits<8>>,
    /// Request: the caller's RAS.
    pub req_pid: Signal<Out, Bits<16>>,
    /// Request: header `payload_len` (the payload's bytes on `pay_*`).
    pub req_pay_len: Signal<Out, Bits<16>>,
    /// Request: header `pkt_count`.
    pub req_pkt_count: Signal<Out, Bits<16>>,
    /// Request: header `pkt_index`.
    pub req_pkt_index: Signal<Out, Bits<16>>,
    /// Payload: a beat is offered (held until `pay_ready` of [`OffloadPort`]).
    pub pay_valid: Signal<Out, Bit>,
    /// Payload: the beat (payload byte 64 i + k at bits 8k..).
    pub pay_data: Signal<Out, Bits<512>>,
    /// Payload: the request's last beat.
    pub pay_last: Signal<Out, Bit>,
    /// Response: record it (status, `arg0`) in the idempotence ring under the caller's
    /// `(pid, client, req_id)`.
    pub rsp_record: Signal<In, Bit>,
    /// Response: it comes from the ring (a retry, or RETRY_LATER for a full ring): the
    /// request's header with this status and `arg0`, nothing else.
    pub rsp_replay: Signal<In, Bit>,
    /// Ring: the request asks the ring's verdict (held until `once_done`).
    pub once_valid: Signal<In, Bit>,
    /// Ring: the verdict (one cycle): `once_hit`, else `once_quota`, else `once_stranger`, else
    /// execute.
    pub once_done: Signal<Out, Bit>,
    /// Ring: the key was found (`once_status`, `once_value` are its recorded answer).
    pub once_hit: Signal<Out, Bit>,
    /// Ring: the caller's client id is not a row its RAS holds (DENIED).
    pub once_stranger: Signal<Out, Bit>,
    /// Ring: the caller holds its share of unacknowledged results, or the request's entry
    /// holds another of them (QUOTA_EXCEEDED).
    pub once_quota: Signal<Out, Bit>,
    /// Ring: the recorded status.
    pub once_status: Signal<Out, Bits<8>>,
    /// Ring: the recorded `arg0`.
    pub once_value: Signal<Out, Bits<64>>,
    /// Store: `StoreLayout::base`.
    pub cfg_base: Signal<Out, Bits<64>>,
    /// Store: `StoreLayout::buckets` (a power of two).
    pub cfg_buckets: Signal<Out, Bits<64>>,
    /// Store: `StoreLayout::records` (below 2^32).
    pub cfg_records: Signal<Out, Bits<32>>,
    /// Store: OK when ready, else the status its requests get.
    pub cfg_status: Signal<Out, Bits<8>>,
}

/// The active unit's channels as the extend port presents them to the executor: memory
/// accesses, the answer and the idempotence-ring request (the memory data and the ring's
/// verdict come from the R channel and the sync unit directly).
#[derive(LogicInterface, Default)]
#[join = "UnitService"]
pub struct UnitChannels {
    /// Memory: the active unit asks for an access (held until `mem_ready`).
    pub mem_valid: Signal<Out, Bit>,
    /// Memory: a block write (else a word read).
    pub mem_write: Signal<Out, Bit>,
    /// Memory: in the store's own RAS (else the caller's).
    pub mem_own: Signal<Out, Bit>,
    /// Memory: the access's VA.
    pub mem_va: Signal<Out, Bits<64>>,
    /// Memory: the block to write.
    pub mem_wdata: Signal<Out, Bits<512>>,
    /// Memory: its byte strobes.
    pub mem_wstrb: Signal<Out, Bits<64>>,
    /// Memory: the access is taken.
    pub mem_ready: Signal<In, Bit>,
    /// Memory: the access ends (one cycle), with `mem_status`.
    pub mem_done: Signal<In, Bit>,
    /// Memory: the ended access's status (0 = OK).
    pub mem_status: Signal<In, Bits<8>>,
    /// Response: the active unit's answer (held until `rsp_ready`).
    pub rsp_valid: Signal<Out, Bit>,
    /// Response: its status.
    pub rsp_status: Signal<Out, Bits<8>>,
    /// Response: its `arg0`.
    pub rsp_arg0: Signal<Out, Bits<64>>,
    /// Response: its `arg1`.
    pub rsp_arg1: Signal<Out, Bits<64>>,
    /// Response: the payload is `rsp_read_len` bytes at `rsp_read_va`.
    pub rsp_read: Signal<Out, Bit>,
    /// Response: that read is in the store's own RAS.
    pub rsp_read_own: Signal<Out, Bit>,
    /// Response: the payload read's VA.
    pub rsp_read_va: Signal<Out, Bits<64>>,
    /// Response: the payload read's length in bytes.
    pub rsp_read_len: Signal<Out, Bits<12>>,
    /// Response: record it in the idempotence ring.
    pub rsp_record: Signal<Out, Bit>,
    /// Response: it replays the ring's (the response carries `arg0` alone).
    pub rsp_replay: Signal<Out, Bit>,
    /// Response: the answer is taken.
    pub rsp_ready: Signal<In, Bit>,
    /// Ring: Clio-KV asks the idempotence ring's verdict.
    pub once_valid: Signal<Out, Bit>,
    /// Ring: the verdict is the unit's this cycle.
    pub once_done: Signal<In, Bit>,
}

/// The executor's offload service's side of [`UnitChannels`].
#[derive(LogicInterface, Default)]
#[join = "UnitChannels"]
pub struct UnitService {
    /// Memory: the active unit asks for an access (held until `mem_ready`).
    pub mem_valid: Signal<In, Bit>,
    /// Memory: a block write (else a word read).
    pub mem_write: Signal<In, Bit>,
    /// Memory: in the store's own RAS (else the caller's).
    pub mem_own: Signal<In, Bit>,
    /// Memory: the access's VA.
    pub mem_va: Signal<In, Bits<64>>,
    /// Memory: the block to write.
    pub mem_wdata: Signal<In, Bits<512>>,
    /// Memory: its byte strobes.
    pub mem_wstrb: Signal<In, Bits<64>>,
    /// Memory: the access is taken.
    pub mem_ready: Signal<Out, Bit>,
    /// Memory: the access ends (one cycle), with `mem_status`.
    pub mem_done: Signal<Out, Bit>,
    /// Memory: the ended access's status (0 = OK).
    pub mem_status: Signal<Out, Bits<8>>,
    /// Response: the active unit's answer (held until `rsp_ready`).
    pub rsp_valid: Signal<In, Bit>,
    /// Response: its status.
    pub rsp_status: Signal<In, Bits<8>>,
    /// Response: its `arg0`.
    pub rsp_arg0: Signal<In, Bits<64>>,
    /// Response: its `arg1`.
    pub rsp_arg1: Signal<In, Bits<64>>,
    /// Response: the payload is `rsp_read_len` bytes at `rsp_read_va`.
    pub rsp_read: Signal<In, Bit>,
    /// Response: that read is in the store's own RAS.
    pub rsp_read_own: Signal<In, Bit>,
    /// Response: the payload read's VA.
    pub rsp_read_va: Signal<In, Bits<64>>,
    /// Response: the payload read's length in bytes.
    pub rsp_read_len: Signal<In, Bits<12>>,
    /// Response: record it in the idempotence ring.
    pub rsp_record: Signal<In, Bit>,
    /// Response: it replays the ring's (the response carries `arg0` alone).
    pub rsp_replay: Signal<In, Bit>,
    /// Response: the answer is taken.
    pub rsp_ready: Signal<Out, Bit>,
    /// Ring: Clio-KV asks the idempotence ring's verdict.
    pub once_valid: Signal<In, Bit>,
    /// Ring: the verdict is the unit's this cycle.
    pub once_done: Signal<Out, Bit>,
}
