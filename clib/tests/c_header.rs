//! The committed C header is exactly what cbindgen generates from the C API.
//! Set CLIO_BLESS=1 to rewrite it after changing `src/capi.rs`.

use std::path::Path;

#[test]
fn c_header_matches_cbindgen() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let cfg = cbindgen::Config::from_file(dir.join("cbindgen.toml")).expect("cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(dir)
        .with_config(cfg)
        .generate()
        .expect("cbindgen runs")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("utf-8 header");
    let path = dir.join("include/clio.h");
    if std::env::var_os("CLIO_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write header");
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "clib/include/clio.h is stale: run CLIO_BLESS=1 cargo test -p clio-clib --test c_header"
    );
}
