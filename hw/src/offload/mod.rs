//! The extend path's offload units (Clio section 4.6) and the one port bundle they share.
//!
//! The bundle is declared once, in `port.rs`: [`OffloadPort`] (every unit's, field `port`) and
//! [`OffloadKvPort`] (Clio-KV's additions, field `kv_port`), each with its mate, the executor's
//! side ([`OffloadHost`], [`OffloadKvHost`]).
//!
//! The executor (`fastpath_top`) dispatches an extend opcode that has a unit
//! (`clio_proto::offload::IN_HARDWARE`) to it after the header, format and key checks, and
//! then serves the unit until it answers. The bundle, in three valid/ready channels:
//!
//! * **request** (`req_*`, executor -> unit): the request header's `va`, `arg0`, `arg1` and
//!   `total_len`. The unit checks them (a request is hostile until checked).
//! * **memory** (`mem_*`): the unit asks for the 8-byte little-endian word at `mem_va`
//!   (8-byte aligned) and the executor answers with `mem_done`, `mem_status` and `mem_data`
//!   one or more cycles later: `mem_data` is the whole 64-byte block that holds the word,
//!   straight from the DRAM's R channel in the cycle it arrives (valid only with `mem_done`;
//!   the unit keeps what it needs), so other fields of a node in that block cost no read. The executor reads it through the same translation as a Read
//!   of the request's RAS (TLB, walker with the hash unit, page fault, permission check, the
//!   read-after-write order): `mem_status` is what that read would answer (0 = OK,
//!   UNMAPPED, PERMISSION, RETRY_LATER, BAD_REQUEST past the 48-bit VA space), so a unit
//!   can reach nothing its caller could not read. One word in flight at a time.
//! * **response** (`rsp_*`, unit -> executor): `rsp_status`; with OK, `rsp_arg0`/`rsp_arg1`
//!   for the response header and, when `rsp_read` is set, the response payload is the
//!   `rsp_read_len` bytes at `rsp_read_va` (the executor reads them like a Read, one page or
//!   two; a failure there answers its status). A non-OK status answers the request's header
//!   with that status and no payload.
//!
//! Back-pressure both ways: the executor raises `mem_ready`/`rsp_ready` only while it serves
//! the unit, the unit raises `req_ready` only when idle.
//!
//! ## What a unit with a payload, writes and a RAS of its own adds (Clio-KV)
//!
//! The signals below extend the bundle without changing the channels above. A unit that
//! needs none of them (the pointer chaser) drives its outputs among them idle (`mem_write`,
//! `mem_own`, `pay_ready`, `rsp_read_own` = 0, `mem_wdata`/`mem_wstrb` = 0) and has none of
//! the inputs; the executor serves every unit the same way.
//!
//! * **request**, more header fields: `req_op` (the opcode byte), `req_pid` (the caller's
//!   RAS), `req_pay_len` (`payload_len`), `req_pkt_count`, `req_pkt_index`. The unit checks
//!   them itself (Clio-KV: one packet, `total_len == payload_len`).
//! * **memory write**: with `mem_valid` and `mem_write` = 1, `mem_va` is a 64-byte-aligned
//!   block address, `mem_wdata` the block (byte k at bits 8k..) and `mem_wstrb` its byte
//!   strobes (AXI WSTRB: bit k set = byte k is written; the unit never asks with no bit
//!   set). It is answered like a read, `mem_done` with `mem_status` (0 = OK: the bytes are
//!   in memory, in the order of the unit's requests; else nothing was written), `mem_data`
//!   undefined. The executor translates it like a Write (write permission).
//! * **RAS select**: `mem_own` = 1 makes a read or write go to the offload's own RAS (the pid
//!   `cfg_pid`, below) instead of the caller's; `rsp_read_own` does the same for the
//!   response's value read. So a Clio-KV get needs no payload output: the unit answers "the
//!   `rsp_read_len` bytes at `rsp_read_va` of the store's RAS", and the executor reads them
//!   into the response as it does for the chaser (one response packet: at most
//!   `clio_proto::consts::MAX_PAYLOAD` bytes). An answer with `rsp_read` = 0 has no payload
//!   (and `total_len` 0 for Clio-KV: the model answers the value's length there).
//! * **payload** (`pay_*`, executor -> unit): the request's `req_pay_len` payload bytes
//!   (one packet: at most `MAX_PAYLOAD`, 16 beats) as 64-byte beats `pay_data` (payload
//!   byte 64 i + k at bits 8k.. of beat i), `pay_valid`/`pay_ready`, `pay_last` on the final
//!   beat, delivered after the request was taken; none when `req_pay_len` is 0. A beat's data
//!   stays put while `pay_valid` is high and `pay_ready` low (AXI-Stream), so the unit may
//!   look at a beat before it takes it. The unit takes every beat of a request before it
//!   answers, whatever the answer, so the executor's payload buffer is empty when it is.
//! * **configuration** (static, set before KV requests arrive): the store's own RAS pid
//!   (`cfg_pid`) is the executor's register: it is what `mem_own` / `rsp_read_own` select, so
//!   the unit never names a pid. The unit takes the `StoreLayout` (`cfg_base`, `cfg_buckets`:
//!   a power of two, `cfg_records`: below 2^32) and `cfg_status`: `Status::Ok` once the
//!   store's region is allocated, touched and formatted, else the status KV requests get
//!   (`RetryLater` while it is being set up, the slow path's refusal if that failed), as the
//!   model's `kv_ras.rs`. On the board the ARM slow path sets the store up as the model does
//!   (register the RAS, allocate, touch the pages, format the superblock) and then writes
//!   these registers through the executor (the TX descriptor KV_CONFIG, which
//!   the extend port (`crate::fastpath::extend::Extend`) latches into its store registers; nothing sends it yet on the board
//!   or in the cosimulation: `docs/offloads.md`, "Clio-KV in hardware").
//!
//! The units: [`pointer_chase`] (reads only) and [`clio_kv`] (all of the above).

pub mod clio_kv;
pub mod pointer_chase;
mod port;

pub use port::{OffloadHost, OffloadKvHost, OffloadKvPort, OffloadPort, UnitChannels, UnitService};
