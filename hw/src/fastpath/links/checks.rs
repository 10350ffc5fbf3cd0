//! The per-slot checks' verdicts as the executor reads them in Dispatch: the key check's and the
//! route check's, each for the executor's slot.
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
