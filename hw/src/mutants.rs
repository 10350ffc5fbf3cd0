//! Deliberately broken fast paths: each mutant is the emitted `fastpath_top` Verilog with one
//! rule of the design removed by a textual patch (issue 11, item 7). The conformance suite must
//! tell every mutant from the model (`sim/tests/rtl_mutants.rs`); a mutant it cannot tell apart
//! is a rule the suite does not test.
//!
//! The patches apply to the emitted text, so the production RTL carries no mutation switch. Each
//! edit must match exactly once inside its module; when the RTL changes so that it no longer
//! does, [`apply`] fails and `make rtl` says which mutant to update, instead of silently
//! emitting an unbroken "mutant".
//!
//! For the tests every mutant lives in one Verilog file, [`switchable`]: each edit becomes
//! `if (fastpath_top.mutant_select == K) <replace> else <find>`, selected by an extra input
//! port of the top ([`SELECT_PORT`], last in the port list so every other port keeps its
//! index). One Verilator build then serves every mutant (a build per mutant cost about a
//! minute of CI each), and select 0 is the unbroken fast path. So an edit must be a whole
//! statement of an `always` block (what rust-hdl emits for every assignment), never a
//! continuous `assign`.

use clio_proto::rules::Rule;
use thiserror::Error;

/// One textual edit: `find` replaced by `replace`, inside the module whose header line starts
/// with `module <module>(`.
#[derive(Debug, Clone, Copy)]
pub struct Edit {
    /// The (flattened) Verilog module, e.g. `fastpath_top$tlb`.
    pub module: &'static str,
    /// Text that occurs exactly once in that module.
    pub find: &'static str,
    /// What it becomes.
    pub replace: &'static str,
}

/// A broken fast path: a name, the rule it breaks, and the edits that break it. Its number in
/// the switchable build is its place in [`MUTANTS`] plus one.
#[derive(Debug, Clone, Copy)]
pub struct Mutant {
    /// Short identifier (`[a-z0-9_]+`).
    pub name: &'static str,
    /// The rule of the spec this mutant drops (`clio_proto::rules`).
    pub rule: Rule,
    /// How it drops it, in words.
    pub breaks: &'static str,
    /// The edits.
    pub edits: &'static [Edit],
}

/// Why a mutant could not be made.
#[derive(Debug, Error, PartialEq, Eq)]
pub enum MutantError {
    /// The module is not in the Verilog.
    #[error("mutant {mutant}: module `{module}` not found in the emitted Verilog")]
    NoModule {
        /// The mutant.
        mutant: &'static str,
        /// The module it edits.
        module: &'static str,
    },
    /// The text to replace occurs `count` times (not once) in the module.
    #[error(
        "mutant {mutant}: `{find}` occurs {count} times in `{module}` (must be once): the RTL \
         changed, update hw/src/mutants.rs"
    )]
    NotOnce {
        /// The mutant.
        mutant: &'static str,
        /// The module it edits.
        module: &'static str,
        /// The text it looks for.
        find: &'static str,
        /// How often it occurs.
        count: usize,
    },
    /// An edit that is not one whole procedural statement cannot be switched.
    #[error(
        "mutant {mutant}: `{find}` is not one whole statement of an always block (it must end \
         with `;` and not be an `assign`), so the switchable build cannot select it"
    )]
    NotAStatement {
        /// The mutant.
        mutant: &'static str,
        /// The text it looks for.
        find: &'static str,
    },
    /// More mutants than the select port can number.
    #[error("{0} mutants: the select port numbers at most 255")]
    TooMany(usize),
    /// The top module's port declarations were not found.
    #[error("module `{0}` or its port declarations not found in the emitted Verilog")]
    NoTop(&'static str),
}

/// The switchable build's select input (8 bits; 0 = no mutant, `k` = `MUTANTS[k - 1]`).
pub const SELECT_PORT: &str = "mutant_select";

/// The module that carries [`SELECT_PORT`].
const TOP: &str = "fastpath_top";

mod list;
pub use list::{MUTANTS, NO_MUTANT};

/// The text of module `module` in `verilog`: from its header to its `endmodule`.
fn module_span(verilog: &str, module: &str) -> Option<std::ops::Range<usize>> {
    let header = format!("module {module}(");
    let start = verilog
        .match_indices(&header)
        .map(|(i, _)| i)
        .find(|&i| i == 0 || verilog.as_bytes()[i - 1] == b'\n')?;
    let end = verilog[start..].find("\nendmodule").map(|e| start + e)?;
    Some(start..end)
}

/// Where edit `e` of mutant `m` applies in `verilog`: the offset of its `find`, which must occur
/// exactly once in its module.
fn locate(verilog: &str, m: &Mutant, e: &Edit) -> Result<usize, MutantError> {
    let span = module_span(verilog, e.module).ok_or(MutantError::NoModule {
        mutant: m.name,
        module: e.module,
    })?;
    let body = &verilog[span.clone()];
    match body.matches(e.find).count() {
        1 => Ok(span.start + body.find(e.find).unwrap_or(0)),
        count => Err(MutantError::NotOnce {
            mutant: m.name,
            module: e.module,
            find: e.find,
            count,
        }),
    }
}

/// The Verilog of `m`: `verilog` (the emitted `fastpath_top.v`) with its edits applied.
pub fn apply(verilog: &str, m: &Mutant) -> Result<String, MutantError> {
    let mut v = verilog.to_string();
    for e in m.edits {
        let at = locate(&v, m, e)?;
        v.replace_range(at..at + e.find.len(), e.replace);
    }
    Ok(v)
}

/// Where the module at `span` may take one more port declaration: after its last
/// `input`/`output` line (the port list's order is the order of those lines), before its
/// constants and internal signals.
fn after_last_port(verilog: &str, span: &std::ops::Range<usize>) -> Option<usize> {
    let mut at = None;
    let mut pos = span.start;
    for (n, line) in verilog[span.clone()].split_inclusive('\n').enumerate() {
        let l = line.trim();
        if n > 0 {
            if l.starts_with("// Constant") || l.starts_with("// Stub") {
                break;
            }
            if l.starts_with("input ") || l.starts_with("output ") {
                at = Some(pos + line.len());
            }
        }
        pos += line.len();
    }
    at
}

/// One Verilog file holding every mutant of `mutants`, selected at run time by
/// [`SELECT_PORT`] (`k` selects `mutants[k - 1]`, 0 none). A header comment line per mutant
/// (`// mutant K: name`) tells the harness which number is which.
pub fn switchable(verilog: &str, mutants: &[Mutant]) -> Result<String, MutantError> {
    if mutants.len() > 255 {
        return Err(MutantError::TooMany(mutants.len()));
    }
    let mut v = verilog.to_string();
    for (i, m) in mutants.iter().enumerate() {
        let k = i + 1;
        for e in m.edits {
            let f = e.find.trim();
            if !f.ends_with(';') || f.starts_with("assign") {
                return Err(MutantError::NotAStatement {
                    mutant: m.name,
                    find: e.find,
                });
            }
            let at = locate(&v, m, e)?;
            let switched = format!(
                "if ({TOP}.{SELECT_PORT} == 8'd{k}) begin {} end else begin {} end",
                e.replace, e.find
            );
            v.replace_range(at..at + e.find.len(), &switched);
        }
    }
    // The select port, last in the top's port list and declarations.
    let span = module_span(&v, TOP).ok_or(MutantError::NoTop(TOP))?;
    let decl = after_last_port(&v, &span).ok_or(MutantError::NoTop(TOP))?;
    v.insert_str(decl, &format!("    input wire  [7:0] {SELECT_PORT};\n"));
    let header_end = span.start + v[span.start..].find(");").ok_or(MutantError::NoTop(TOP))?;
    v.insert_str(header_end, &format!(",{SELECT_PORT}"));
    let mut head = String::from(
        "// Every mutant of hw/src/mutants.rs, selected by the input port mutant_select:\n",
    );
    for (i, m) in mutants.iter().enumerate() {
        head.push_str(&format!("// mutant {}: {}\n", i + 1, m.name));
    }
    Ok(head + &v)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_rule_has_a_mutant_or_a_reason() {
        use super::{Rule, MUTANTS, NO_MUTANT};
        for &r in Rule::ALL {
            let mutants = MUTANTS.iter().filter(|m| m.rule == r).count();
            let reasons = NO_MUTANT.iter().filter(|(n, _)| *n == r).count();
            assert!(
                (mutants > 0) != (reasons > 0) && reasons <= 1,
                "{}: {mutants} mutants and {reasons} reasons for none (want mutants or one reason)",
                r.name()
            );
        }
    }

    use super::*;

    #[test]
    fn every_mutant_applies_to_the_emitted_top_and_changes_it() {
        let top = crate::fastpath_top_verilog();
        let mut names = std::collections::HashSet::new();
        for m in MUTANTS {
            assert!(names.insert(m.name), "two mutants named {}", m.name);
            assert!(m
                .name
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
            let v = apply(&top, m).unwrap_or_else(|e| panic!("{e}"));
            assert_ne!(v, top, "{} changes nothing", m.name);
            for e in m.edits {
                assert!(v.contains(e.replace), "{}: edit not in the output", m.name);
            }
        }
        let all = switchable(&top, MUTANTS).unwrap_or_else(|e| panic!("{e}"));
        for (i, m) in MUTANTS.iter().enumerate() {
            assert!(all.contains(&format!("// mutant {}: {}\n", i + 1, m.name)));
            for e in m.edits {
                assert!(all.contains(&format!(
                    "if (fastpath_top.mutant_select == 8'd{}) begin {} end",
                    i + 1,
                    e.replace
                )));
            }
        }
    }

    #[test]
    fn the_switchable_build_selects_each_edit_and_adds_the_port_last() {
        let v = "module fastpath_top(clock,y);\n    // Module arguments\n    input wire  clock;\n    output reg  y;\n    \n    // Stub signals\n    reg  a;\n    always @(*) begin\n        y = a;\n        a = 1'b1;\n    end\nendmodule\n";
        const N: &[Mutant] = &[
            Mutant {
                name: "first",
                rule: Rule::CrcChecked,
                breaks: "",
                edits: &[Edit {
                    module: "fastpath_top",
                    find: "y = a;",
                    replace: "y = 1'b0;",
                }],
            },
            Mutant {
                name: "second",
                rule: Rule::CrcChecked,
                breaks: "",
                edits: &[Edit {
                    module: "fastpath_top",
                    find: "y = a;",
                    replace: "y = ~a;",
                }],
            },
        ];
        let out = switchable(&v, N).unwrap();
        assert!(out.starts_with("// Every mutant"));
        assert!(out.contains("// mutant 1: first\n// mutant 2: second\n"));
        assert!(out.contains("module fastpath_top(clock,y,mutant_select);"));
        assert!(
            out.contains("    output reg  y;\n    input wire  [7:0] mutant_select;\n"),
            "declared after the last port: {out}"
        );
        // Two mutants of one statement nest: 1 wins, then 2, else the original.
        assert!(out.contains(
            "if (fastpath_top.mutant_select == 8'd1) begin y = 1'b0; end else begin \
             if (fastpath_top.mutant_select == 8'd2) begin y = ~a; end else begin y = a; end end"
        ));
        const ASSIGN: &[Mutant] = &[Mutant {
            name: "assign",
            rule: Rule::CrcChecked,
            breaks: "",
            edits: &[Edit {
                module: "fastpath_top",
                find: "a = 1'b1",
                replace: "a = 1'b0",
            }],
        }];
        assert!(matches!(
            switchable(&v, ASSIGN),
            Err(MutantError::NotAStatement { .. })
        ));
    }

    #[test]
    fn an_edit_that_does_not_match_once_is_refused() {
        let v = "module a(x);\n  y = 1;\n  y = 1;\nendmodule\nmodule b(x);\n  z = 2;\nendmodule\n";
        let twice = Mutant {
            name: "twice",
            rule: Rule::CrcChecked,
            breaks: "",
            edits: &[Edit {
                module: "a",
                find: "y = 1;",
                replace: "y = 0;",
            }],
        };
        assert!(matches!(
            apply(v, &twice),
            Err(MutantError::NotOnce { count: 2, .. })
        ));
        // Text of another module does not count.
        let other = Mutant {
            edits: &[Edit {
                module: "a",
                find: "z = 2;",
                replace: "z = 0;",
            }],
            ..twice
        };
        assert!(matches!(
            apply(v, &other),
            Err(MutantError::NotOnce { count: 0, .. })
        ));
        let gone = Mutant {
            edits: &[Edit {
                module: "c",
                find: "z = 2;",
                replace: "z = 0;",
            }],
            ..twice
        };
        assert!(matches!(apply(v, &gone), Err(MutantError::NoModule { .. })));
        let ok = Mutant {
            edits: &[Edit {
                module: "b",
                find: "z = 2;",
                replace: "z = 0;",
            }],
            ..twice
        };
        assert_eq!(
            apply(v, &ok).unwrap(),
            v.replace("z = 2;", "z = 0;"),
            "only module b changes"
        );
    }
}
