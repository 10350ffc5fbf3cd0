//! The fast path's stage blocks (issue 11: one `LogicBlock` per stage, each with its own
//! testbench, wired by the top): the ingest stage ([`ingest::Ingest`]), the executor's place in its slots
//! ([`slot_queue::SlotQueue`]), the TLB look-ahead
//! ([`translate_ahead::TranslateAhead`]), the dispatch stage's decode ([`decode::Decode`]: the
//! header's fields, the match-action table, the class checks), the taken frame's class
//! ([`dispatch_class::DispatchClass`]: Dispatch's branch, registered) and Dispatch's decision
//! ([`dispatch::Dispatch`]), the translate stage
//! ([`translate::Translate`]: TLB lookup, walk, page fault), the PTE writer
//! ([`pte_writer::PteWriter`]), the response header builder
//! ([`response_header::ResponseHeader`]), the slow-path descriptors
//! ([`slow_path_desc::SlowPathDesc`]) and a TX descriptor's actions
//! ([`slow_path_tx::SlowPathTx`]), the extend path's port ([`extend::Extend`]: the offload units,
//! Clio-KV's store and payload feeder) and the executor's side of its port
//! ([`offload_service::OffloadService`]: the unit's accesses, ring lookups and answer), the ordering rules between DRAM accesses
//! ([`ordering::Ordering`]), Append's placement on the log's tail word
//! ([`append_place::AppendPlace`]), a durable write's persist handshake ([`persist::Persist`]), the statistics counters
//! ([`stats::Stats`]), the one-beat writer ([`beat_writer::BeatWriter`]), the DRAM port's arbiter
//! ([`dram_port::DramPort`]: AR, R, AW, W and B among the clients), the word accesses' data path
//! ([`word_access::WordAccess`]), the write-data
//! stage ([`write_data::WriteData`]), the read-data stage ([`read_data::ReadData`]) and the
//! transmit stage ([`transmit::Transmit`]), and the executor that sequences a request through
//! them ([`executor::Executor`]: its state register, dispatch, the accesses, the word accesses
//! of atomics and Append, serving an offload, the slow-path descriptors, the hand-overs to the
//! data stages).
//!
//! Five sub-tops group the blocks into the fast path's sides, each wiring its blocks and
//! meeting the others through one link per pair (`links::sides`): the receive side
//! ([`receive::Receive`]), the core ([`execute::Execute`]), the memory side
//! ([`memory::Memory`]), the slow-path port ([`slow_path_port::SlowPathPort`]) and the
//! response side ([`respond::Respond`]). `crate::fastpath_top` joins the sides, the DRAM
//! port's arbiter and the statistics.

pub mod append_place;
pub mod beat_writer;
pub mod decode;
pub mod dispatch;
pub mod dispatch_class;
pub mod dram_port;
pub mod execute;
pub mod executor;
pub mod extend;
pub mod in_flight;
pub mod ingest;
pub mod key_check;
pub mod links;
pub mod memory;
pub mod offload_service;
pub mod order_ask;
pub mod ordering;
pub mod persist;
pub mod piece_shift;
pub mod pte_writer;
pub mod read_data;
pub mod receive;
pub mod respond;
pub mod response_header;
pub mod route_check;
pub mod rx_share;
pub mod slot_queue;
pub mod slow_path_desc;
pub mod slow_path_port;
pub mod slow_path_tx;
pub mod stats;
pub mod translate;
pub mod translate_ahead;
pub mod transmit;
pub mod word_access;
pub mod write_data;
