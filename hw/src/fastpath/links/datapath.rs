//! The datapath's links: the TLB's lookup result to the translate stage, and a response from the
//! read-data stage to the transmit stage.
// The derive writes `join` and `link`, methods without doc comments.
#![allow(missing_docs)]

use rust_hdl::prelude::*;

/// The TLB's lookup result as the translate stage takes it (mate [`TlbResult`]).
#[derive(LogicInterface, Default)]
#[join = "TlbResult"]
pub struct TlbResultIn {
    /// The translation was present.
    pub hit: Signal<In, Bit>,
    /// The entry is an allocated page not yet mapped (when hit): `res_pfn` then holds its
    /// PTE's location, `bucket << 4 | slot`, and the access is a first touch that the
    /// page-fault unit can serve without a walk.
    pub alloc: Signal<In, Bit>,
    /// Permissions `READ | WRITE << 1` (when hit).
    pub perms: Signal<In, Bits<2>>,
    /// Frame number (when hit).
    pub pfn: Signal<In, Bits<40>>,
    /// Invalidation generation at the lookup (give it back with the insert after a walk).
    pub gen: Signal<In, Bits<16>>,
}

/// The TLB's lookup result (mate [`TlbResultIn`]); the look-ahead reads it too.
#[derive(LogicInterface, Default)]
#[join = "TlbResultIn"]
pub struct TlbResult {
    /// The translation was present.
    pub hit: Signal<Out, Bit>,
    /// The entry is an allocated page not yet mapped (when hit): `res_pfn` then holds its
    /// PTE's location, `bucket << 4 | slot`, and the access is a first touch that the
    /// page-fault unit can serve without a walk.
    pub alloc: Signal<Out, Bit>,
    /// Permissions `READ | WRITE << 1` (when hit).
    pub perms: Signal<Out, Bits<2>>,
    /// Frame number (when hit).
    pub pfn: Signal<Out, Bits<40>>,
    /// Invalidation generation at the lookup (give it back with the insert after a walk).
    pub gen: Signal<Out, Bits<16>>,
}

/// A response the transmit stage loads from the read-data stage (mate [`TxLoad`]).
#[derive(LogicInterface, Default)]
#[join = "TxLoad"]
pub struct TxLoadIn {
    /// A finished response goes to the transmit stage this cycle: its length, route, beat 0
    /// (the header with its CRC) and txbuf slot.
    pub valid: Signal<In, Bit>,
    /// The loaded response's length in bytes, header included.
    pub len: Signal<In, Bits<12>>,
    /// The loaded response's route.
    pub route: Signal<In, Bits<256>>,
    /// The loaded response's beat 0: the header with its CRC.
    pub beat0: Signal<In, Bits<512>>,
    /// The txbuf slot that holds the loaded response's beats from 1 on.
    pub slot: Signal<In, Bit>,
}

/// A response handed from the read-data stage to the transmit stage: the load pulse, its
/// length, route, first beat and TX-buffer slot (mate [`TxLoadIn`]).
#[derive(LogicInterface, Default)]
#[join = "TxLoadIn"]
pub struct TxLoad {
    /// A finished response goes to the transmit stage this cycle: its length, route, beat 0
    /// (the header with its CRC) and txbuf slot.
    pub valid: Signal<Out, Bit>,
    /// The loaded response's length in bytes, header included.
    pub len: Signal<Out, Bits<12>>,
    /// The loaded response's route.
    pub route: Signal<Out, Bits<256>>,
    /// The loaded response's beat 0: the header with its CRC.
    pub beat0: Signal<Out, Bits<512>>,
    /// The txbuf slot that holds the loaded response's beats from 1 on.
    pub slot: Signal<Out, Bit>,
}
