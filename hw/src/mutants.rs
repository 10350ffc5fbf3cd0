//! Deliberately broken fast paths: each mutant is the emitted `fastpath_top` Verilog with one
//! rule of the design removed by a textual patch (issue 11, item 7). The conformance suite must
//! tell every mutant from the model (`sim/tests/rtl_mutants.rs`); a mutant it cannot tell apart
//! is a rule the suite does not test.
//!
//! The patches apply to the emitted text, so the production RTL carries no mutation switch. Each
//! edit must match exactly once inside its module; when the RTL changes so that it no longer
//! does, [`apply`] fails and `make rtl` says which mutant to update, instead of silently
//! emitting an unbroken "mutant".

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

/// A broken fast path: a name (the file `mutants/fastpath_top__<name>.v` and the verilated
/// model's name), the rule it breaks, and the edits that break it.
#[derive(Debug, Clone, Copy)]
pub struct Mutant {
    /// Short identifier (`[a-z_]+`).
    pub name: &'static str,
    /// The rule of the design this mutant drops.
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
}

/// Every mutant of `fastpath_top`.
pub const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "tlb_ignores_pid",
        breaks: "isolation: the TLB tags entries by virtual page only, so one RAS can hit \
                 another's translation of the same page",
        edits: &[
            Edit {
                module: "fastpath_top$tlb",
                find: "lk_key = (((lk_pid) & 52'hfffffffffffff) << 32'h24) | ((lk_vpn) & 52'hfffffffffffff);",
                replace: "lk_key = ((lk_vpn) & 52'hfffffffffffff);",
            },
            Edit {
                module: "fastpath_top$tlb",
                find: "up_key = (((up_pid) & 52'hfffffffffffff) << 32'h24) | ((up_vpn) & 52'hfffffffffffff);",
                replace: "up_key = ((up_vpn) & 52'hfffffffffffff);",
            },
        ],
    },
    Mutant {
        name: "key_not_checked",
        breaks: "authentication: any key is accepted for a registered RAS",
        edits: &[Edit {
            module: "fastpath_top$keys$store",
            find: "ok = q_pid_ok$q & rule$key_ok;",
            replace: "ok = q_pid_ok$q;",
        }],
    },
    Mutant {
        name: "read_overtakes_write",
        breaks: "read-after-write order: a read goes to DRAM before earlier writes have their B \
                 responses",
        edits: &[Edit {
            module: "fastpath_top$order",
            find: "data_clear = ~data_wait$q & ~w_busy;",
            // Only the data still streaming is waited for, not its B response.
            replace: "data_clear = ~w_busy;",
        }],
    },
];

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

/// The Verilog of `m`: `verilog` (the emitted `fastpath_top.v`) with its edits applied.
pub fn apply(verilog: &str, m: &Mutant) -> Result<String, MutantError> {
    let mut v = verilog.to_string();
    for e in m.edits {
        let span = module_span(&v, e.module).ok_or(MutantError::NoModule {
            mutant: m.name,
            module: e.module,
        })?;
        let body = &v[span.clone()];
        let count = body.matches(e.find).count();
        if count != 1 {
            return Err(MutantError::NotOnce {
                mutant: m.name,
                module: e.module,
                find: e.find,
                count,
            });
        }
        let at = span.start + body.find(e.find).unwrap_or(0);
        v.replace_range(at..at + e.find.len(), e.replace);
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mutant_applies_to_the_emitted_top_and_changes_it() {
        let top = crate::verilog_of("fastpath_top", crate::fastpath_top::FastpathTop::default());
        let mut names = std::collections::HashSet::new();
        for m in MUTANTS {
            assert!(names.insert(m.name), "two mutants named {}", m.name);
            assert!(m.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'));
            let v = apply(&top, m).unwrap_or_else(|e| panic!("{e}"));
            assert_ne!(v, top, "{} changes nothing", m.name);
            for e in m.edits {
                assert!(v.contains(e.replace), "{}: edit not in the output", m.name);
            }
        }
    }

    #[test]
    fn an_edit_that_does_not_match_once_is_refused() {
        let v = "module a(x);\n  y = 1;\n  y = 1;\nendmodule\nmodule b(x);\n  z = 2;\nendmodule\n";
        let twice = Mutant {
            name: "twice",
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
