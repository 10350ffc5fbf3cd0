//! `emit-rtl OUT_DIR`: write the Verilog of every fast-path module into OUT_DIR.

fn main() {
    let out = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "build/rtl".into());
    match clio_hw::emit_all(std::path::Path::new(&out)) {
        Ok(files) => {
            for f in files {
                println!("{}", f.display());
            }
        }
        Err(e) => {
            eprintln!("emit-rtl: {out}: {e}");
            std::process::exit(1);
        }
    }
}
