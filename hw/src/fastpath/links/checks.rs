//! The per-slot checks: the header beat they (and the TLB look-ahead) take as a frame arrives,
//! and their verdicts as the executor reads them in Dispatch, the key check's and the route
//! check's, each for the executor's slot.
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use rust_hdl::prelude::*;

/// The key check's verdict for the executor's slot (mate [`KeyVerdictIn`]).
#[derive(LogicInterface, Default)]
#[join = "KeyVerdictIn"]
pub struct KeyVerdict {
    /// The frame's key opens its pid's RAS.
    pub ok: Signal<Out, Bit>,
    /// The frame's epoch is not older than its RAS's (read where `ok`).
    pub epoch_ok: Signal<Out, Bit>,
    /// Answers are current: the sweep is done and no KEY_WRITE is being applied to the slots.
    pub ready: Signal<Out, Bit>,
}

/// The executor's side of the key check's verdict (mate [`KeyVerdict`]).
#[derive(LogicInterface, Default)]
#[join = "KeyVerdict"]
pub struct KeyVerdictIn {
    /// The frame's key opens its pid's RAS.
    pub ok: Signal<In, Bit>,
    /// The frame's epoch is not older than its RAS's (read where `ok`).
    pub epoch_ok: Signal<In, Bit>,
    /// Answers are current: the sweep is done and no KEY_WRITE is being applied to the slots.
    pub ready: Signal<In, Bit>,
}

/// The route check's verdict for the executor's slot (mate [`RouteVerdictIn`]).
#[derive(LogicInterface, Default)]
#[join = "RouteVerdictIn"]
pub struct RouteVerdict {
    /// The frame needs the check (its answer can exceed twice its size).
    pub need: Signal<Out, Bit>,
    /// The frame carries its address's cookie (or the check is off).
    pub ok: Signal<Out, Bit>,
    /// `ok` is decided.
    pub done: Signal<Out, Bit>,
}

/// The executor's side of the route check's verdict (mate [`RouteVerdict`]).
#[derive(LogicInterface, Default)]
#[join = "RouteVerdict"]
pub struct RouteVerdictIn {
    /// The frame needs the check (its answer can exceed twice its size).
    pub need: Signal<In, Bit>,
    /// The frame carries its address's cookie (or the check is off).
    pub ok: Signal<In, Bit>,
    /// `ok` is decided.
    pub done: Signal<In, Bit>,
}

/// A frame's header beat as the ingest stage takes it, to the blocks that keep something per
/// slot from it (the key check, the route check, the TLB look-ahead) (mate [`HeaderBeatIn`]).
#[derive(LogicInterface, Default)]
#[join = "HeaderBeatIn"]
pub struct HeaderBeat {
    /// A frame's first beat (its header) is taken this cycle, into slot `slot`.
    pub valid: Signal<Out, Bit>,
    /// The slot the frame goes to.
    pub slot: Signal<Out, Bits<2>>,
    /// The beat as received: header byte k at bits 8k.. (fields big endian).
    pub data: Signal<Out, Bits<512>>,
    /// The frame's route (side band, `Route::to_bytes`, byte k at bits 8k..).
    pub route: Signal<Out, Bits<256>>,
}

/// A block's side of the header beat (mate [`HeaderBeat`]).
#[derive(LogicInterface, Default)]
#[join = "HeaderBeat"]
pub struct HeaderBeatIn {
    /// A frame's first beat (its header) is taken this cycle, into slot `slot`.
    pub valid: Signal<In, Bit>,
    /// The slot the frame goes to.
    pub slot: Signal<In, Bits<2>>,
    /// The beat as received: header byte k at bits 8k.. (fields big endian).
    pub data: Signal<In, Bits<512>>,
    /// The frame's route (side band, `Route::to_bytes`, byte k at bits 8k..).
    pub route: Signal<In, Bits<256>>,
}
