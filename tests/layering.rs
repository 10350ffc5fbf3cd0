//! Dependencies point down: `proto` at the bottom, the golden model (`model`) and the shared
//! socket code (`netio`) on it alone, `clib` and `arm-slowpath` on nothing above `proto` (and
//! `netio`), the RTL (`hw`) on `proto` with the model only to test against, the applications
//! and the configuration manager (`confmgr`) on `clib`, and nothing on the
//! node (`sim`) but tests and the `clio` command. Each crate's manifest is read and every
//! workspace crate it names, in each dependency section, must be one the table allows, so
//! an edge that goes up fails here before it tangles the build.

use std::collections::BTreeMap;
use std::path::Path;

/// What each crate may depend on, per section (`[dependencies]`, `[dev-dependencies]`,
/// `[build-dependencies]`); a section not listed may name no workspace crate.
fn allowed() -> BTreeMap<&'static str, Vec<(&'static str, Vec<&'static str>)>> {
    let normal = "[dependencies]";
    let dev = "[dev-dependencies]";
    BTreeMap::from([
        ("proto", vec![]),
        ("model", vec![(normal, vec!["clio-proto"])]),
        ("netio", vec![(normal, vec!["clio-proto"])]),
        ("arm-slowpath", vec![(normal, vec!["clio-proto"])]),
        (
            "clib",
            vec![
                (normal, vec!["clio-proto", "clio-netio"]),
                // CLib's own tests run against the software node.
                (dev, vec!["clio-sim"]),
            ],
        ),
        (
            "hw",
            vec![(normal, vec!["clio-proto"]), (dev, vec!["clio-model"])],
        ),
        (
            "sim",
            vec![
                (
                    normal,
                    vec![
                        "clio-proto",
                        "clio-model",
                        "clio-slowpath",
                        "clio-netio",
                        // Only with the `rtl` feature: the cosimulation.
                        "clio-hw",
                    ],
                ),
                (dev, vec!["clio-clib"]),
            ],
        ),
        (
            "kvstores",
            vec![
                (normal, vec!["clio-proto", "clio-clib"]),
                (dev, vec!["clio-sim"]),
            ],
        ),
        (
            "apps",
            vec![
                (normal, vec!["clio-proto", "clio-clib"]),
                (dev, vec!["clio-sim"]),
            ],
        ),
        (
            // The pool's configuration manager: CLib's ConfigStore on etcd.
            "confmgr",
            vec![(normal, vec!["clio-clib"]), (dev, vec!["clio-sim"])],
        ),
        (
            ".",
            vec![(
                normal,
                vec![
                    "clio-proto",
                    "clio-slowpath",
                    "clio-sim",
                    "clio-clib",
                    "clio-confmgr",
                    "clio-kvstores",
                    "clio-apps",
                    "clio-hw",
                ],
            )],
        ),
    ])
}

/// `(section, crate)` for every workspace crate (`clio-*`) a manifest names.
fn workspace_deps(manifest: &str) -> Vec<(String, String)> {
    let mut section = String::new();
    let mut deps = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line.to_string();
        } else if let Some(name) = line
            .strip_prefix("clio-")
            .and_then(|rest| rest.split(['.', ' ', '=']).next())
        {
            deps.push((section.clone(), format!("clio-{name}")));
        }
    }
    deps
}

#[test]
fn every_crate_depends_only_downwards() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let workspace = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace");
    let members = workspace
        .lines()
        .find_map(|l| l.trim().strip_prefix("members = "))
        .expect("a members line");
    let table = allowed();
    for member in members.trim_matches(['[', ']']).split(',') {
        let member = member.trim().trim_matches('"');
        assert!(
            table.contains_key(member),
            "{member}: a new crate; say in this table what it may depend on"
        );
    }
    for (krate, sections) in &table {
        let text = std::fs::read_to_string(root.join(krate).join("Cargo.toml"))
            .unwrap_or_else(|e| panic!("{krate}/Cargo.toml: {e}"));
        for (section, dep) in workspace_deps(&text) {
            if section == "[workspace.dependencies]" {
                continue; // the workspace's list of its crates, not an edge
            }
            let ok = sections
                .iter()
                .any(|(s, deps)| *s == section && deps.contains(&dep.as_str()));
            assert!(
                ok,
                "{krate}: {section} names {dep}, which this layering does not allow \
                 (proto at the bottom; nothing but tests and the CLI on sim)"
            );
        }
    }
}

#[test]
fn an_upward_edge_is_seen() {
    let manifest = "[package]\nname = \"x\"\n[dependencies]\nclio-proto.workspace = true\n\
                    clio-sim = { path = \"../sim\" }\n[dev-dependencies]\nclio-model.workspace = true\n";
    assert_eq!(
        workspace_deps(manifest),
        vec![
            ("[dependencies]".to_string(), "clio-proto".to_string()),
            ("[dependencies]".to_string(), "clio-sim".to_string()),
            ("[dev-dependencies]".to_string(), "clio-model".to_string()),
        ]
    );
}
