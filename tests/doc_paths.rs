//! Every repository path quoted in the docs and in the code's comments names a file that
//! exists, so a file moved or deleted cannot leave a pointer behind (issue 43: `board/kv_ras.rs`
//! was cited after the file had gone).
//!
//! A quoted path is a token of path characters with at least one `/` that ends in a source or
//! document extension. It resolves when it is a file from the repository root, from the quoting
//! file's own folder, or the tail of a file's path (`board/extend.rs` for
//! `sim/src/model/board/extend.rs`). Generated files, system headers, shell variables and
//! folders named by a usage line's variable (`OUT_DIR/...`) are not the repository's; the few
//! quoted on purpose are listed in `OUTSIDE`, each with its reason.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Paths quoted on purpose that are not files of the repository.
const OUTSIDE: &[(&str, &str)] = &[
    (
        "linux/udp.h",
        "the kernel's UAPI header whose SOL_UDP options CLib names",
    ),
    (
        "mutants/fastpath_top_mutants.v",
        "written by emit-rtl beside the Verilog in build/rtl",
    ),
    (
        "rtl_dir/mutants/fastpath_top_mutants.v",
        "the same file, named from sim/build.rs's RTL folder",
    ),
];

/// Extensions of the files a quoted path may name.
const EXTENSIONS: &[&str] = &[
    "rs", "md", "py", "sh", "v", "sv", "tcl", "xdc", "h", "c", "toml", "mk", "dtso", "json",
];

/// Folders that hold no quoting text of ours (build outputs, VCS data).
const SKIP_DIRS: &[&str] = &[".git", "target", "build", "bench-out", "node_modules"];

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

/// The repository's files, relative to `root`, `/`-separated.
fn files(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![PathBuf::new()];
    while let Some(rel) = stack.pop() {
        let dir = root.join(&rel);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let rel_e = rel.join(&name);
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                if !SKIP_DIRS.contains(&name.as_str()) && !name.starts_with("target") {
                    stack.push(rel_e);
                }
            } else {
                out.push(rel_e.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// The quoted paths of `text`: tokens of path characters with a `/`, ending in a listed
/// extension, not preceded by `$` (a shell variable) and not absolute or under a build folder.
fn quoted_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        if !is_path_char(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_path_char(chars[i]) {
            i += 1;
        }
        let tok: String = chars[start..i].iter().collect();
        let tok = tok.trim_end_matches(['.', '/', '-']);
        let after_dollar = start > 0 && matches!(chars[start - 1], '$' | '{' | '@');
        // `OUT_DIR/x.json`: a folder a usage line names by its variable (all capitals).
        let usage_variable = tok
            .split('/')
            .next()
            .is_some_and(|c| c.chars().all(|c| c.is_ascii_uppercase() || c == '_'));
        if after_dollar
            || usage_variable
            || !tok.contains('/')
            || tok.starts_with(['/', '.'])
            || tok.starts_with("build/")
            || tok.starts_with("target/")
            || tok.contains("//")
        {
            continue;
        }
        let ext = tok.rsplit('.').next().unwrap_or("");
        if tok.contains('.') && EXTENSIONS.contains(&ext) {
            out.push(tok.to_string());
        }
    }
    out
}

#[test]
fn every_quoted_path_exists() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = files(root);
    let set: std::collections::BTreeSet<&str> = all.iter().map(String::as_str).collect();
    let quoting = all.iter().filter(|f| {
        let f = f.as_str();
        f.ends_with(".md")
            || f.ends_with(".rs")
            || f.ends_with(".h")
            || f.ends_with(".c")
            || f.ends_with(".py")
            || f.ends_with(".sh")
            || f.ends_with(".mk")
            || f.ends_with("Makefile")
    });
    let mut missing: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut checked = 0;
    for f in quoting {
        // The papers are others' text; this file's own examples are not quotes.
        if f.starts_with("shared/") || f.starts_with("papers/") || f == "tests/doc_paths.rs" {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(root.join(f)) else {
            continue;
        };
        let dir = Path::new(f).parent().unwrap_or(Path::new(""));
        for p in quoted_paths(&text) {
            checked += 1;
            let beside = dir.join(&p).to_string_lossy().replace('\\', "/");
            let tail = format!("/{p}");
            let found = set.contains(p.as_str())
                || set.contains(beside.as_str())
                || all.iter().any(|x| x.ends_with(&tail))
                || OUTSIDE.iter().any(|(o, _)| *o == p);
            if !found {
                missing.entry(p).or_default().push(f.clone());
            }
        }
    }
    assert!(
        checked > 300,
        "only {checked} quoted paths found: the scan is broken"
    );
    assert!(
        missing.is_empty(),
        "quoted paths that name no file of the repository (path: quoted in):\n{}",
        missing
            .iter()
            .map(|(p, fs)| format!("  {p}: {}", fs.join(", ")))
            .collect::<Vec<_>>()
            .join("\n")
    );
}

#[test]
fn the_scan_finds_quotes_and_skips_what_is_not_ours() {
    let text = "see `sim/src/model/tlb.rs` and docs/cosim.md. $here/x/y.v, ${OUT}/a.json, \
                https://github.com/a/b.rs, build/rtl/tlb.v, /usr/include/x.h, a/b, \
                OUT_DIR/board.json";
    assert_eq!(
        quoted_paths(text),
        ["sim/src/model/tlb.rs", "docs/cosim.md"]
    );
}
