//! The request header's fields as the dispatch stage's decode gives them (host byte order), to
//! the blocks that act on the request as a whole: the extend path's units.
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use rust_hdl::prelude::*;

/// The request header's fields, decoded (mate [`RequestFieldsIn`]).
#[derive(LogicInterface, Default)]
#[join = "RequestFieldsIn"]
pub struct RequestFields {
    /// The opcode byte.
    pub opcode: Signal<Out, Bits<8>>,
    /// The RAS's pid.
    pub pid: Signal<Out, Bits<16>>,
    /// The packet's segment index.
    pub pkt_index: Signal<Out, Bits<16>>,
    /// The request's packet count.
    pub pkt_count: Signal<Out, Bits<16>>,
    /// The packet's payload length in bytes.
    pub payload_len: Signal<Out, Bits<16>>,
    /// The request's VA.
    pub va: Signal<Out, Bits<64>>,
    /// The request's total length in bytes.
    pub total_len: Signal<Out, Bits<32>>,
    /// The request's first argument.
    pub arg0: Signal<Out, Bits<64>>,
    /// The request's second argument.
    pub arg1: Signal<Out, Bits<64>>,
}

/// A block's side of the request header's fields (mate [`RequestFields`]).
#[derive(LogicInterface, Default)]
#[join = "RequestFields"]
pub struct RequestFieldsIn {
    /// The opcode byte.
    pub opcode: Signal<In, Bits<8>>,
    /// The RAS's pid.
    pub pid: Signal<In, Bits<16>>,
    /// The packet's segment index.
    pub pkt_index: Signal<In, Bits<16>>,
    /// The request's packet count.
    pub pkt_count: Signal<In, Bits<16>>,
    /// The packet's payload length in bytes.
    pub payload_len: Signal<In, Bits<16>>,
    /// The request's VA.
    pub va: Signal<In, Bits<64>>,
    /// The request's total length in bytes.
    pub total_len: Signal<In, Bits<32>>,
    /// The request's first argument.
    pub arg0: Signal<In, Bits<64>>,
    /// The request's second argument.
    pub arg1: Signal<In, Bits<64>>,
}
