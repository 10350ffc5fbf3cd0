//! The extend path's offload units (Clio section 4.6) and the one port bundle they share.
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
//! the unit, the unit raises `req_ready` only when idle. Writes and a payload input are not
//! part of the bundle yet: the pointer chaser needs neither; Clio-KV in hardware will (it is
//! served by the behavioural model only, `docs/offloads.md`).

pub mod pointer_chase;
