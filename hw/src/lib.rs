//! The memory node's fast path in Rust-HDL.
//!
//! One module per file, each with a testbench beside it that runs in rust-hdl's simulation
//! kernel and checks its outputs against `clio-proto`'s reference functions or a plain-Rust
//! model. [`emit_all`] writes the Verilog of every module into a directory (`make rtl`, the
//! `emit-rtl` binary).
//!
//! Conventions shared by every module: one clock `clock` and a synchronous active-high
//! `reset`. Fixed-latency units (the TLB, the CRC engines, the hash unit) are valid-only
//! pipelines that take a new input every cycle; the stages hand requests to each other with
//! valid/ready handshakes or per-slot busy bits, and reach DRAM through AXI4. See
//! `docs/hardware.md`.

#![warn(missing_docs)]

pub mod ack_layer;
pub mod async_ram;
pub mod bench;
pub mod crc32c;
pub mod fastpath;
pub mod fastpath_top;
pub mod hash_unit;
pub mod key_rule;
pub mod key_table;
pub mod mat;
pub mod mem_access;
pub mod mul_lo32;
pub mod mutants;
pub mod offload;
pub mod page_fault;
pub mod pt_walker;
pub mod read_seg;
pub mod siphash;
pub mod spec;
pub mod sync_unit;
pub mod tb;
pub mod tlb;

pub mod util;
pub mod va_end;

use std::path::{Path, PathBuf};

/// Run `f` on a thread of its own with a 256 MiB stack: `FastpathTop::default()` builds every
/// block by value, which in a debug build needs more than the 2 MiB a test thread has. The
/// top's elaboration and its testbench build it here.
pub fn on_large_stack<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(256 << 20)
            .spawn_scoped(s, f)
            .expect("a thread with a large stack")
            .join()
            .expect("the large-stack thread finished")
    })
}

/// The fast path's Verilog (module `fastpath_top`), elaborated [`on_large_stack`].
pub fn fastpath_top_verilog() -> String {
    on_large_stack(|| verilog_of("fastpath_top", fastpath_top::FastpathTop::default()))
}

/// Generate the Verilog of one block as module `name` (rust-hdl would call it `top`), after
/// rust-hdl's connectivity and latch checks.
pub fn verilog_of<B: rust_hdl::prelude::Block>(name: &str, mut b: B) -> String {
    use rust_hdl::prelude::*;
    b.connect_all();
    check_all(&b).unwrap_or_else(|e| panic!("{name}: circuit check failed: {e:?}"));
    let mut defines = ModuleDefines::default();
    b.accept(name, &mut defines);
    mark_fsm_registers(&defines.defines())
}

/// The enum types whose registers are state machines to be recoded by synthesis (one-hot):
/// the executor's state and the translate stage's steps. Their next state is a choice among
/// constants, wide (21 and 10 states), and read by many decisions; one-hot, each decision
/// reads one flip-flop and each state bit's next value is an OR of its own entries (on the
/// executor alone: 5,297 cells and 5.75 levels binary, 4,436 and 5.5 one-hot, the translate
/// answer's path into it one level shorter). Clio-KV's state is not among them: it is loaded
/// from its return register (`ret`), not only from constants, and its recoding measured
/// deeper (6.75 to 7 levels) and larger.
pub fn fsm_state_enums() -> [&'static str; 2] {
    [
        enum_verilog_name::<fastpath::executor::State>(),
        enum_verilog_name::<fastpath::translate::TranslateStep>(),
    ]
}

/// The name of an enum type as rust-hdl prefixes its constants in Verilog (the type's own
/// name, without its path).
pub fn enum_verilog_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

/// Mark the register of every enum in [`fsm_state_enums`] with `(* fsm_encoding = "auto" *)`:
/// Vivado and Yosys then extract it as a state machine and choose its encoding. (Yosys would
/// not by itself: rust-hdl gives every register an initial value, and Yosys leaves registers
/// with one alone.) The initial value is the enum's first state, `Idle`, which every one of
/// these machines also enters on reset. Vivado keeps it in the recoded register; Yosys drops
/// it (it warns), so its netlist serves for depth and utilisation only: docs/utilization.md.
/// rust-hdl writes an enum's register as a module `<path>$<field>(d,q,clock)` whose `// Enums`
/// section declares `localparam <Enum>$<State>`.
pub fn mark_fsm_registers(verilog: &str) -> String {
    let constants = fsm_state_enums().map(|e| format!("    localparam {e}$"));
    let mut out = String::with_capacity(verilog.len() + 256);
    for (i, module) in verilog.split("\nmodule ").enumerate() {
        if i > 0 {
            out.push_str("\nmodule ");
        }
        let head = module.lines().next().unwrap_or("");
        let is_register = head.ends_with("(d,q,clock);");
        let is_fsm = constants.iter().any(|c| module.contains(c.as_str()));
        if is_register && is_fsm {
            out.push_str(&module.replacen(
                "    output reg ",
                "    (* fsm_encoding = \"auto\" *) output reg ",
                1,
            ));
        } else {
            out.push_str(module);
        }
    }
    out
}

/// Every module the crate emits, by file name, with its Verilog.
pub fn all_modules() -> Vec<(&'static str, String)> {
    vec![
        (
            "hash_unit",
            verilog_of("hash_unit", <hash_unit::HashUnit>::default()),
        ),
        ("tlb", verilog_of("tlb", tlb::Tlb::default())),
        (
            "pt_walker",
            verilog_of("pt_walker", pt_walker::PtWalker::default()),
        ),
        (
            "page_fault",
            verilog_of("page_fault", page_fault::PageFault::default()),
        ),
        ("mat", verilog_of("mat", mat::Mat::default())),
        (
            "ack_layer",
            verilog_of("ack_layer", ack_layer::AckLayer::default()),
        ),
        // The transmit side's CRC engine (in the read-data stage; the receive side's is in
        // the ack layer), so the network stack's size is ack_layer + crc32c_registered + mat
        // (docs/utilization.md).
        (
            "crc32c_registered",
            verilog_of("crc32c_registered", crc32c::Crc32cRegistered::default()),
        ),
        (
            "key_table",
            verilog_of("key_table", key_table::KeyTable::default()),
        ),
        // The key table with the per-slot answers Dispatch reads.
        (
            "key_check",
            verilog_of("key_check", fastpath::key_check::KeyCheck::default()),
        ),
        // The route check (route cookies: the amplification bound) with its SipHash unit.
        (
            "route_check",
            verilog_of("route_check", fastpath::route_check::RouteCheck::default()),
        ),
        // The RX ring's per-source share, alone.
        (
            "rx_share",
            verilog_of("rx_share", fastpath::rx_share::RxShare::default()),
        ),
        (
            "sync_unit",
            verilog_of("sync_unit", sync_unit::SyncUnit::default()),
        ),
        (
            "pointer_chase",
            verilog_of(
                "pointer_chase",
                offload::pointer_chase::PointerChase::default(),
            ),
        ),
        // The ingest stage (issue 11's first stage block), alone: its size and depth per stage.
        (
            "ingest",
            verilog_of("ingest", fastpath::ingest::Ingest::default()),
        ),
        // The read-data stage block, alone (the response builder with its CRC and job queue).
        (
            "read_data",
            verilog_of("read_data", fastpath::read_data::ReadData::default()),
        ),
        // The word accesses' data path, alone.
        (
            "word_access",
            verilog_of("word_access", fastpath::word_access::WordAccess::default()),
        ),
        // The executor's one-beat writer, alone.
        (
            "beat_writer",
            verilog_of("beat_writer", fastpath::beat_writer::BeatWriter::default()),
        ),
        // The DRAM port's arbiter, alone.
        (
            "dram_port",
            verilog_of("dram_port", fastpath::dram_port::DramPort::default()),
        ),
        // The ordering rules block, alone.
        (
            "ordering",
            verilog_of("ordering", fastpath::ordering::Ordering::default()),
        ),
        // The write-data stage block, alone (W beats from a payload slot, Append's funnel).
        (
            "write_data",
            verilog_of("write_data", fastpath::write_data::WriteData::default()),
        ),
        // The transmit stage block, alone.
        (
            "transmit",
            verilog_of("transmit", fastpath::transmit::Transmit::default()),
        ),
        // The TLB look-ahead stage block, alone.
        (
            "translate_ahead",
            verilog_of(
                "translate_ahead",
                fastpath::translate_ahead::TranslateAhead::default(),
            ),
        ),
        // The translate stage block, alone (walker, hash unit and page-fault unit inside).
        (
            "translate",
            verilog_of("translate", fastpath::translate::Translate::default()),
        ),
        // The dispatch stage's decode (header fields, MAT, format checks), alone.
        (
            "decode",
            verilog_of("decode", fastpath::decode::Decode::default()),
        ),
        // The response header builder, alone.
        (
            "response_header",
            verilog_of(
                "response_header",
                fastpath::response_header::ResponseHeader::default(),
            ),
        ),
        // The slow-path descriptors (TX decoded, REQUEST encoded), alone.
        (
            "slow_path_desc",
            verilog_of(
                "slow_path_desc",
                fastpath::slow_path_desc::SlowPathDesc::default(),
            ),
        ),
        // The executor (the fast path's sequencer), alone.
        (
            "executor",
            verilog_of("executor", fastpath::executor::Executor::default()),
        ),
        (
            "slow_path_tx",
            verilog_of(
                "slow_path_tx",
                fastpath::slow_path_tx::SlowPathTx::default(),
            ),
        ),
        // The extend path's port (pointer chaser, Clio-KV, store, payload feeder), alone.
        (
            "extend",
            verilog_of("extend", fastpath::extend::Extend::default()),
        ),
        // The executor's side of the offload port, alone.
        (
            "offload_service",
            verilog_of(
                "offload_service",
                fastpath::offload_service::OffloadService::default(),
            ),
        ),
        // The PTE writer, alone.
        (
            "pte_writer",
            verilog_of("pte_writer", fastpath::pte_writer::PteWriter::default()),
        ),
        // The executor's slot bookkeeping, alone.
        (
            "slot_queue",
            verilog_of("slot_queue", fastpath::slot_queue::SlotQueue::default()),
        ),
        // The statistics counters, alone.
        (
            "stats",
            verilog_of("stats", fastpath::stats::Stats::default()),
        ),
        // A durable write's persist handshake, alone.
        (
            "persist",
            verilog_of("persist", fastpath::persist::Persist::default()),
        ),
        // Append's placement on the log's tail word, alone.
        (
            "append_place",
            verilog_of(
                "append_place",
                fastpath::append_place::AppendPlace::default(),
            ),
        ),
        (
            "xxh32",
            verilog_of("xxh32", offload::clio_kv::xxh32::Xxh32::default()),
        ),
        (
            "clio_kv",
            verilog_of("clio_kv", offload::clio_kv::ClioKv::default()),
        ),
        (
            "mem_access",
            verilog_of("mem_access", mem_access::Realign::default()),
        ),
        ("fastpath_top", fastpath_top_verilog()),
    ]
}

/// The list of emitted modules `emit_all` writes beside them, one name per line in
/// [`all_modules`]' order: `make lint` and `make synth` (hw/rtl.mk) take their module lists
/// from it, so a module added here is linted and synthesised without a second list to keep.
pub const MODULE_LIST: &str = "modules.txt";

/// Write `<module>.v` for every module into `out_dir` (created if missing), the list of them
/// ([`MODULE_LIST`]), and every one of [`mutants::MUTANTS`] in the switchable
/// `mutants/fastpath_top_mutants.v` (for the cosimulation's mutation check); returns the paths.
pub fn emit_all(out_dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(out_dir)?;
    let mut out = vec![];
    let mut names = String::new();
    for (name, v) in all_modules() {
        let p = out_dir.join(format!("{name}.v"));
        if name == "fastpath_top" {
            out.extend(emit_mutants(&out_dir.join("mutants"), &v)?);
        }
        std::fs::write(&p, v)?;
        out.push(p);
        names.push_str(name);
        names.push('\n');
    }
    let list = out_dir.join(MODULE_LIST);
    std::fs::write(&list, names)?;
    out.push(list);
    Ok(out)
}

/// Write the switchable build of every mutant of `top` (the emitted `fastpath_top`) into `dir`
/// (`fastpath_top_mutants.v`, [`mutants::switchable`]), removing files of earlier runs.
fn emit_mutants(dir: &Path, top: &str) -> std::io::Result<Vec<PathBuf>> {
    if dir.exists() {
        std::fs::remove_dir_all(dir)?;
    }
    std::fs::create_dir_all(dir)?;
    let v = mutants::switchable(top, mutants::MUTANTS).map_err(std::io::Error::other)?;
    let p = dir.join("fastpath_top_mutants.v");
    std::fs::write(&p, v)?;
    Ok(vec![p])
}

#[cfg(test)]
mod tests {
    use super::*;

    const MARK: &str = "(* fsm_encoding = \"auto\" *) output reg ";

    /// The attribute lands on the state registers named in `fsm_state_enums` and nowhere else:
    /// not on the blocks that declare the enum, not on other enums' registers (Clio-KV's, the
    /// persist handshake's `Step`, the pointer chaser's).
    #[test]
    fn the_state_machines_registers_and_only_them_are_marked() {
        let exec = verilog_of("executor", fastpath::executor::Executor::default());
        assert_eq!(exec.matches(MARK).count(), 1);
        let marked = exec.split("\nmodule ").find(|m| m.contains(MARK)).unwrap();
        assert!(marked.starts_with("executor$state(d,q,clock);"), "{marked}");
        let tr = verilog_of("translate", fastpath::translate::Translate::default());
        assert_eq!(tr.matches(MARK).count(), 1);
        assert!(tr.contains("module translate$step(d,q,clock);"));
        let top = fastpath_top_verilog();
        let marked: Vec<&str> = top
            .split("\nmodule ")
            .filter(|m| m.contains(MARK))
            .map(|m| m.lines().next().unwrap_or(""))
            .collect();
        assert_eq!(
            marked,
            [
                "fastpath_top$core$exec$state(d,q,clock);",
                "fastpath_top$mem$tr$step(d,q,clock);"
            ]
        );
        for unmarked in [
            verilog_of("persist", fastpath::persist::Persist::default()),
            verilog_of("clio_kv", offload::clio_kv::ClioKv::default()),
        ] {
            assert!(!unmarked.contains("fsm_encoding"));
        }
    }
}
