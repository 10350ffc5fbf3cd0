//! With the `rtl` feature: verilate the fast path's Verilog (from `make rtl`, in
//! `build/rtl/` or `$CLIO_RTL_DIR`) and build a thin extern "C" shim around each model.
//!
//! The `verilated` crate does not build against Verilator 5.006, so this does it directly:
//! `verilator --cc --build -O3` makes `V<top>__ALL.a`; the `cc` crate compiles Verilator's
//! runtime (verilated.cpp, verilated_threads.cpp, verilated_vcd_c.cpp) and a shim generated
//! from the module's port list, and `rtl_ports.rs` tells Rust the ports.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Modules simulated from Rust.
const TOPS: &[&str] = &["tlb", "fastpath_top"];

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

fn shim(top: &str, ports: &[Port]) -> String {
    let mut s = String::new();
    let v = format!("V{top}");
    writeln!(s, "#include \"{v}.h\"\n#include \"verilated.h\"\n#include \"verilated_vcd_c.h\"\n#include <cstdint>").unwrap();
    writeln!(
        s,
        "struct H_{top} {{ VerilatedContext* ctx; {v}* m; VerilatedVcdC* vcd; }};"
    )
    .unwrap();
    writeln!(
        s,
        "extern \"C\" void* clio_rtl_{top}_new(const char* vcd) {{ auto h = new H_{top}; h->ctx = new VerilatedContext; \
         h->ctx->traceEverOn(vcd != nullptr); h->m = new {v}{{h->ctx}}; h->vcd = nullptr; \
         if (vcd) {{ h->vcd = new VerilatedVcdC; h->m->trace(h->vcd, 99); h->vcd->open(vcd); }} return h; }}"
    )
    .unwrap();
    writeln!(s, "extern \"C\" void clio_rtl_{top}_eval(void* p, uint64_t t) {{ auto h = (H_{top}*)p; h->m->eval(); if (h->vcd) h->vcd->dump(t); }}").unwrap();
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
    let inc = Path::new("/usr/share/verilator/include");
    if !inc.join("verilated.h").exists() {
        panic!("the `rtl` feature needs Verilator (apt-get install verilator; `make deps`)");
    }
    let mut rust = String::from("// Generated by sim/build.rs from the emitted Verilog.\n");
    let mut build = cc::Build::new();
    build
        .cpp(true)
        .opt_level(3)
        .flag("-std=c++17")
        .flag_if_supported("-Wno-unused-parameter")
        .include(inc)
        .include(inc.join("vltstd"));
    for top in TOPS {
        let v = rtl_dir.join(format!("{top}.v"));
        println!("cargo:rerun-if-changed={}", v.display());
        let text = std::fs::read_to_string(&v).unwrap_or_else(|e| {
            panic!(
                "{}: {e}. Run `make rtl` first (or set CLIO_RTL_DIR).",
                v.display()
            )
        });
        let mdir = out.join(format!("V{top}"));
        let status = Command::new("verilator")
            .args([
                "--cc",
                "--build",
                "-O3",
                "--trace",
                "-Wno-fatal",
                "-Wno-WIDTH",
                "-j",
                "2",
                "--top-module",
                top,
            ])
            .arg("--prefix")
            .arg(format!("V{top}"))
            .arg("-Mdir")
            .arg(&mdir)
            .args(["-CFLAGS", "-fPIC -O3"])
            .arg(&v)
            .status()
            .expect("running verilator");
        assert!(status.success(), "verilator failed on {}", v.display());
        let ps = ports(&text, top);
        let shim_path = out.join(format!("shim_{top}.cpp"));
        std::fs::write(&shim_path, shim(top, &ps)).unwrap();
        build.file(&shim_path).include(&mdir);
        // rustc wants lib<name>.a; Verilator writes V<top>__ALL.a.
        std::fs::copy(
            mdir.join(format!("V{top}__ALL.a")),
            mdir.join(format!("libV{top}__ALL.a")),
        )
        .expect("copying the verilated archive");
        println!("cargo:rustc-link-search=native={}", mdir.display());
        println!("cargo:rustc-link-lib=static=V{top}__ALL");
        writeln!(rust, "/// Ports and entry points of the verilated `{top}`.\npub static {}: RtlModule = RtlModule {{ name: \"{top}\", ports: &[", top.to_uppercase()).unwrap();
        for p in &ps {
            writeln!(
                rust,
                "    Port {{ name: \"{}\", input: {}, width: {} }},",
                p.name, p.input, p.width
            )
            .unwrap();
        }
        writeln!(rust, "], new: clio_rtl_{top}_new, free: clio_rtl_{top}_free, eval: clio_rtl_{top}_eval, set: clio_rtl_{top}_set, get: clio_rtl_{top}_get }};").unwrap();
        writeln!(
            rust,
            "extern \"C\" {{ fn clio_rtl_{top}_new(vcd: *const std::ffi::c_char) -> *mut std::ffi::c_void; fn clio_rtl_{top}_free(p: *mut std::ffi::c_void); \
             fn clio_rtl_{top}_eval(p: *mut std::ffi::c_void, t: u64); fn clio_rtl_{top}_set(p: *mut std::ffi::c_void, port: u32, w: *const u32); \
             fn clio_rtl_{top}_get(p: *mut std::ffi::c_void, port: u32, w: *mut u32); }}"
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
    std::fs::write(out.join("rtl_ports.rs"), rust).unwrap();
}
