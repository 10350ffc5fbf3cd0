//! The DRAM port's links: a client's request on an AXI address channel (AR or AW), a client's
//! W beats, the R beats of the reads and those a walk reads, and the AXI4 master port itself, all met in the DRAM
//! port's arbiter ([`crate::fastpath::dram_port::DramPort`]).
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use rust_hdl::prelude::*;

/// A client's request on an AXI address channel, AR or AW (mate [`AddrReqIn`], the arbiter's
/// side). The arbiter gives the channel to a client that raises `own`, by a fixed priority;
/// `ready` is the channel's ready as the client sees it (held low while the client may not
/// send, such as a walk's read behind an earlier page-table write).
#[derive(LogicInterface, Default)]
#[join = "AddrReqIn"]
pub struct AddrReq {
    /// The client drives the channel this cycle.
    pub own: Signal<Out, Bit>,
    /// AXI AxVALID.
    pub valid: Signal<Out, Bit>,
    /// AXI AxADDR (bytes).
    pub addr: Signal<Out, Bits<64>>,
    /// AXI AxLEN (the burst's beats less one).
    pub len: Signal<Out, Bits<8>>,
    /// AXI AxREADY as the client sees it.
    pub ready: Signal<In, Bit>,
}

/// The arbiter's side of a client's address request (mate [`AddrReq`]).
#[derive(LogicInterface, Default)]
#[join = "AddrReq"]
pub struct AddrReqIn {
    /// The client drives the channel this cycle.
    pub own: Signal<In, Bit>,
    /// AXI AxVALID.
    pub valid: Signal<In, Bit>,
    /// AXI AxADDR (bytes).
    pub addr: Signal<In, Bits<64>>,
    /// AXI AxLEN (the burst's beats less one).
    pub len: Signal<In, Bits<8>>,
    /// AXI AxREADY as the client sees it.
    pub ready: Signal<Out, Bit>,
}

/// A client's W beats (mate [`WriteBeatsIn`], the arbiter's side): the write-data stage's
/// bursts or the one-beat writer's beat.
#[derive(LogicInterface, Default)]
#[join = "WriteBeatsIn"]
pub struct WriteBeats {
    /// The client drives the channel this cycle.
    pub own: Signal<Out, Bit>,
    /// AXI WVALID.
    pub valid: Signal<Out, Bit>,
    /// AXI WDATA.
    pub data: Signal<Out, Bits<512>>,
    /// AXI WSTRB (lane k = byte k).
    pub strb: Signal<Out, Bits<64>>,
    /// AXI WLAST.
    pub last: Signal<Out, Bit>,
    /// AXI WREADY.
    pub ready: Signal<In, Bit>,
}

/// The arbiter's side of a client's W beats (mate [`WriteBeats`]).
#[derive(LogicInterface, Default)]
#[join = "WriteBeats"]
pub struct WriteBeatsIn {
    /// The client drives the channel this cycle.
    pub own: Signal<In, Bit>,
    /// AXI WVALID.
    pub valid: Signal<In, Bit>,
    /// AXI WDATA.
    pub data: Signal<In, Bits<512>>,
    /// AXI WSTRB (lane k = byte k).
    pub strb: Signal<In, Bits<64>>,
    /// AXI WLAST.
    pub last: Signal<In, Bit>,
    /// AXI WREADY.
    pub ready: Signal<Out, Bit>,
}

/// R beats for a page-table walk, which reads only while no read's beats are due (mate
/// [`RBeatsIn`], the walk's side).
#[derive(LogicInterface, Default)]
#[join = "RBeatsIn"]
pub struct RBeats {
    /// An R beat that is the walk's.
    pub valid: Signal<Out, Bit>,
    /// AXI RDATA.
    pub data: Signal<Out, Bits<512>>,
    /// AXI RLAST.
    pub last: Signal<Out, Bit>,
}

/// The walk's side of its R beats (mate [`RBeats`]).
#[derive(LogicInterface, Default)]
#[join = "RBeats"]
pub struct RBeatsIn {
    /// An R beat that is the walk's.
    pub valid: Signal<In, Bit>,
    /// AXI RDATA.
    pub data: Signal<In, Bits<512>>,
    /// AXI RLAST.
    pub last: Signal<In, Bit>,
}

/// The R beats of the reads the read-data stage queued (mate [`ReadBeatsIn`], the stage's
/// side): it takes them while it is receiving, and says when no read has beats still to come
/// (the R channel is then a walk's or a word access's).
#[derive(LogicInterface, Default)]
#[join = "ReadBeatsIn"]
pub struct ReadBeats {
    /// AXI RVALID.
    pub valid: Signal<Out, Bit>,
    /// AXI RDATA.
    pub data: Signal<Out, Bits<512>>,
    /// The stage takes the beat (AXI RREADY, with the others' use of R).
    pub ready: Signal<In, Bit>,
    /// No read's R beats are still to come (none queued, none being received).
    pub idle: Signal<In, Bit>,
}

/// The read-data stage's side of [`ReadBeats`].
#[derive(LogicInterface, Default)]
#[join = "ReadBeats"]
pub struct ReadBeatsIn {
    /// AXI RVALID.
    pub valid: Signal<In, Bit>,
    /// AXI RDATA.
    pub data: Signal<In, Bits<512>>,
    /// The stage takes the beat (AXI RREADY, with the others' use of R).
    pub ready: Signal<Out, Bit>,
    /// No read's R beats are still to come (none queued, none being received).
    pub idle: Signal<Out, Bit>,
}

/// What the ordering rules count on the DRAM port (mate [`DramEventsIn`], `Ordering::dram`).
#[derive(LogicInterface, Default)]
#[join = "DramEventsIn"]
pub struct DramEvents {
    /// A write burst's last W beat is taken this cycle.
    pub w_done: Signal<Out, Bit>,
    /// A B response is taken this cycle (B is always ready).
    pub b_done: Signal<Out, Bit>,
    /// No read has R beats still to come (the read-data stage's `r.idle`).
    pub reads_idle: Signal<Out, Bit>,
    /// An AR / AW handshake this cycle (any client's), and the burst's first line (address
    /// bits 13..6) and AxLEN; the last R beat of a burst taken this cycle.
    pub ar_take: Signal<Out, Bit>,
    /// See `ar_take`.
    pub ar_line: Signal<Out, Bits<8>>,
    /// See `ar_take`.
    pub ar_len: Signal<Out, Bits<8>>,
    /// See `ar_take`.
    pub aw_take: Signal<Out, Bit>,
    /// See `ar_take`.
    pub aw_line: Signal<Out, Bits<8>>,
    /// See `ar_take`.
    pub aw_len: Signal<Out, Bits<8>>,
    /// See `ar_take`.
    pub r_last: Signal<Out, Bit>,
}

/// The ordering rules' side of [`DramEvents`].
#[derive(LogicInterface, Default)]
#[join = "DramEvents"]
pub struct DramEventsIn {
    /// A write burst's last W beat is taken this cycle.
    pub w_done: Signal<In, Bit>,
    /// A B response is taken this cycle (B is always ready).
    pub b_done: Signal<In, Bit>,
    /// No read has R beats still to come (the read-data stage's `r.idle`).
    pub reads_idle: Signal<In, Bit>,
    /// An AR / AW handshake this cycle (any client's), and the burst's first line (address
    /// bits 13..6) and AxLEN; the last R beat of a burst taken this cycle.
    pub ar_take: Signal<In, Bit>,
    /// See `ar_take`.
    pub ar_line: Signal<In, Bits<8>>,
    /// See `ar_take`.
    pub ar_len: Signal<In, Bits<8>>,
    /// See `ar_take`.
    pub aw_take: Signal<In, Bit>,
    /// See `ar_take`.
    pub aw_line: Signal<In, Bits<8>>,
    /// See `ar_take`.
    pub aw_len: Signal<In, Bits<8>>,
    /// See `ar_take`.
    pub r_last: Signal<In, Bit>,
}

/// An AXI4 master port with a 512-bit data bus, INCR bursts only (no id, size, burst, cache,
/// prot: the board's wrapper ties them). The fast path's own ports stay flat (`m_axi_*`, which
/// the board Verilog names); the arbiter's are this bundle.
#[derive(LogicInterface, Default)]
pub struct AxiMaster {
    /// AR valid.
    pub arvalid: Signal<Out, Bit>,
    /// AR address (bytes).
    pub araddr: Signal<Out, Bits<64>>,
    /// AR burst length less one.
    pub arlen: Signal<Out, Bits<8>>,
    /// AR ready.
    pub arready: Signal<In, Bit>,
    /// R valid.
    pub rvalid: Signal<In, Bit>,
    /// R data.
    pub rdata: Signal<In, Bits<512>>,
    /// R last.
    pub rlast: Signal<In, Bit>,
    /// R ready.
    pub rready: Signal<Out, Bit>,
    /// AW valid.
    pub awvalid: Signal<Out, Bit>,
    /// AW address (bytes).
    pub awaddr: Signal<Out, Bits<64>>,
    /// AW burst length less one.
    pub awlen: Signal<Out, Bits<8>>,
    /// AW ready.
    pub awready: Signal<In, Bit>,
    /// W valid.
    pub wvalid: Signal<Out, Bit>,
    /// W data.
    pub wdata: Signal<Out, Bits<512>>,
    /// W byte strobes.
    pub wstrb: Signal<Out, Bits<64>>,
    /// W last.
    pub wlast: Signal<Out, Bit>,
    /// W ready.
    pub wready: Signal<In, Bit>,
    /// B valid.
    pub bvalid: Signal<In, Bit>,
    /// B ready.
    pub bready: Signal<Out, Bit>,
}
