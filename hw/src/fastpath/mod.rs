//! The fast path's stage blocks (issue 11: one `LogicBlock` per stage, each with its own
//! testbench, wired by the top). Moved here so far: the ingest stage ([`ingest::Ingest`]), the
//! TLB look-ahead ([`translate_ahead::TranslateAhead`]) and the transmit stage
//! ([`transmit::Transmit`]). The other stages (executor with translation and dispatch, write
//! data, read data) still live inside `crate::fastpath_top`, which instantiates the ones here.

pub mod ingest;
pub mod translate_ahead;
pub mod transmit;
