//! The request header's fields as the dispatch stage's decode gives them (host byte order), to
//! the blocks that act on the request as a whole (the extend path's units, the executor, Append's
//! placement, the read segmenter, the sync unit's ALU); and a received frame's fields as the
//! slot queue reads them from the ingest stage's slots.
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

/// The slot queue reading a frame's fields from the ingest stage's slots (mate
/// [`SlotFramesPort`]): the slot it names, and that slot's frame the same cycle (the slots are
/// a LUT RAM with a combinational read).
#[derive(LogicInterface, Default)]
#[join = "SlotFramesPort"]
pub struct SlotFrames {
    /// The slot to read.
    pub slot: Signal<Out, Bits<2>>,
    /// The frame's ack-layer verdict (bit 0 drop, bit 1 NACK).
    pub verdict: Signal<In, Bits<2>>,
    /// The frame's header bytes 0..48 as received.
    pub hdr: Signal<In, Bits<384>>,
    /// The frame's client id (header bytes 56..58, big endian) as a number.
    pub client: Signal<In, Bits<16>>,
    /// The frame's route.
    pub route: Signal<In, Bits<256>>,
    /// The VA's lane offset (`va % 64`): where the payload starts in block 0.
    pub lane: Signal<In, Bits<6>>,
}

/// The ingest stage's side of [`SlotFrames`].
#[derive(LogicInterface, Default)]
#[join = "SlotFrames"]
pub struct SlotFramesPort {
    /// The slot to read.
    pub slot: Signal<In, Bits<2>>,
    /// The frame's ack-layer verdict (bit 0 drop, bit 1 NACK).
    pub verdict: Signal<Out, Bits<2>>,
    /// The frame's header bytes 0..48 as received.
    pub hdr: Signal<Out, Bits<384>>,
    /// The frame's client id (header bytes 56..58, big endian) as a number.
    pub client: Signal<Out, Bits<16>>,
    /// The frame's route.
    pub route: Signal<Out, Bits<256>>,
    /// The VA's lane offset (`va % 64`): where the payload starts in block 0.
    pub lane: Signal<Out, Bits<6>>,
}
