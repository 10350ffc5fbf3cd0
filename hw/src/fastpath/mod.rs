//! The fast path's stage blocks (issue 11: one `LogicBlock` per stage, each with its own
//! testbench, wired by the top). Moved here so far: the ingest stage ([`ingest::Ingest`]), the
//! TLB look-ahead ([`translate_ahead::TranslateAhead`]), the read-data stage
//! ([`read_data::ReadData`]), the ordering rules between DRAM accesses
//! ([`ordering::Ordering`]), the write-data stage ([`write_data::WriteData`]) and the
//! transmit stage ([`transmit::Transmit`]), and the executor's one-beat writer
//! ([`beat_writer::BeatWriter`]: PTE write-backs, atomics, offload blocks). The executor (dispatch, translation, sync, the
//! slow-path descriptors) still lives inside
//! `crate::fastpath_top`, which instantiates the ones here.

pub mod beat_writer;
pub mod extend;
pub mod ingest;
pub mod ordering;
pub mod pte_writer;
pub mod read_data;
pub mod translate;
pub mod translate_ahead;
pub mod transmit;
pub mod write_data;
