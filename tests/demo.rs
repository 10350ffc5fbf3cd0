//! `make demo`'s story runs to its end: `clio demo` (a shorter latency run) exits 0 after its
//! own checks (reads back, exact counters across two OS processes, the forged join refused,
//! the pointer chase found in one request, reads after rfree failing) and prints each step.

use std::process::Command;

#[test]
fn the_demo_passes_its_own_checks() {
    let out = Command::new(env!("CARGO_BIN_EXE_clio"))
        .args([
            "demo",
            "--reads",
            "300",
            "--increments",
            "20",
            "--threads",
            "2",
        ])
        .output()
        .expect("running clio demo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "clio demo failed: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for step in 1..=9 {
        assert!(
            stdout.lines().any(|l| l.starts_with(&format!("{step}. "))),
            "step {step} missing: {stdout}"
        );
    }
    assert!(
        stdout.contains("pointer-chasing offload in 1 request (51 hops), from the CN in 51 reads")
    );
    assert!(stdout.contains("a get that misses: 104 operations in 206 requests (102 CN acks"));
    assert!(stdout.contains("demo: all checks passed"));
}
