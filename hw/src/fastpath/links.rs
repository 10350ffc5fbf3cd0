//! The interfaces between the fast path's stage blocks, each declared once with its mate
//! (rust-hdl `LogicInterface`s: the derive checks a pair against each other, same names and
//! types, opposite directions), and joined in the top (`fastpath_top/wiring.rs`) with one
//! line each. A signal added to an interface is added to both structs here and used in the
//! two blocks; nothing in the top changes.
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
    /// The translation under way is the unit's access / a block write / in the store's RAS.
    pub accessing: Signal<In, Bit>,
    /// The translation under way is a block write.
    pub writing: Signal<In, Bit>,
    /// Translate the unit's access now, at `access_va`; a block write with `access_write`.
    pub access: Signal<In, Bit>,
    /// The access's VA (the unit's `unit.mem_va`).
    pub access_va: Signal<In, Bits<64>>,
    /// The access is a block write (write permission).
    pub access_write: Signal<In, Bit>,
    /// Look the ring up (the request's pid, client, req_id) / move its write pointer past an
    /// unacknowledged slot / record the answer (`ring_status`, `ring_value`).
    pub ring_lookup: Signal<In, Bit>,
    /// Move the ring's write pointer past an unacknowledged slot (one cycle).
    pub ring_skip: Signal<In, Bit>,
    /// Record the answer in the ring (one cycle, with `ans_valid`).
    pub ring_record: Signal<In, Bit>,
    /// The status recorded.
    pub ring_status: Signal<In, Bits<8>>,
    /// The value recorded (the answer's `arg0`).
    pub ring_value: Signal<In, Bits<64>>,
    /// The unit's answer, registered (one cycle): its status, its `arg0`, a replay (the
    /// response carries `arg0` alone), a payload read to follow (`ans_read_len` bytes at
    /// `ans_read_va`).
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
    /// The translation under way is the unit's access / a block write / in the store's RAS.
    pub accessing: Signal<Out, Bit>,
    /// The translation under way is a block write.
    pub writing: Signal<Out, Bit>,
    /// Translate the unit's access now, at `access_va`; a block write with `access_write`.
    pub access: Signal<Out, Bit>,
    /// The access's VA (the unit's `unit.mem_va`).
    pub access_va: Signal<Out, Bits<64>>,
    /// The access is a block write (write permission).
    pub access_write: Signal<Out, Bit>,
    /// Look the ring up (the request's pid, client, req_id) / move its write pointer past an
    /// unacknowledged slot / record the answer (`ring_status`, `ring_value`).
    pub ring_lookup: Signal<Out, Bit>,
    /// Move the ring's write pointer past an unacknowledged slot (one cycle).
    pub ring_skip: Signal<Out, Bit>,
    /// Record the answer in the ring (one cycle, with `ans_valid`).
    pub ring_record: Signal<Out, Bit>,
    /// The status recorded.
    pub ring_status: Signal<Out, Bits<8>>,
    /// The value recorded (the answer's `arg0`).
    pub ring_value: Signal<Out, Bits<64>>,
    /// The unit's answer, registered (one cycle): its status, its `arg0`, a replay (the
    /// response carries `arg0` alone), a payload read to follow (`ans_read_len` bytes at
    /// `ans_read_va`).
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
