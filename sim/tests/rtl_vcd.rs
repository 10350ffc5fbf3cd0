//! `--vcd`: the traced model writes a waveform of the run that GTKWave can open, and serves
//! the same responses as the untraced model.
#![cfg(feature = "rtl")]

use clio_sim::conformance::{replay, Stream};
use clio_sim::cosim::RtlBoard;
use clio_sim::{BoardConfig, CBoard};

fn cfg() -> BoardConfig {
    BoardConfig {
        dram_bytes: 64 << 20,
        page_shift: 16,
        key_seed: Some(7),
        ..BoardConfig::default()
    }
}

#[test]
fn vcd_waveform_of_a_short_run() {
    let mut model = CBoard::new(&cfg()).unwrap();
    let mut s = Stream::new(7, 1 << 16);
    let mut want = Vec::new();
    s.setup(&mut model, 1, &mut want);
    for _ in 0..20 {
        s.step(&mut model, &mut want);
    }
    let path = std::env::temp_dir().join(format!("clio-rtl-vcd-{}.vcd", std::process::id()));
    let got = {
        let mut rtl = RtlBoard::new(&cfg(), 20, Some(&path)).unwrap();
        let got = replay(&mut rtl, &s.sent);
        let mut plain = RtlBoard::new(&cfg(), 20, None).unwrap();
        assert_eq!(
            got,
            replay(&mut plain, &s.sent),
            "traced and plain models differ"
        );
        assert_eq!(
            rtl.cycle_stats().cycles,
            plain.cycle_stats().cycles,
            "cycle counts differ"
        );
        got
    }; // dropping the node closes the file
    assert_eq!(got, want, "responses differ from the model");
    let vcd = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).ok();
    assert!(vcd.contains("$timescale"), "no VCD header");
    assert!(
        vcd.contains("$scope module fastpath_top"),
        "no fastpath_top scope"
    );
    let stamps = vcd.lines().filter(|l| l.starts_with('#')).count();
    assert!(stamps > 1000, "only {stamps} time steps dumped");
    let clock_id = vcd
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with("$var") && l.split_whitespace().nth(4) == Some("clock"))
        .and_then(|l| l.split_whitespace().nth(3))
        .expect("clock declared")
        .to_string();
    let clock_changes = vcd
        .lines()
        .filter(|l| l.len() > 1 && l[1..] == clock_id && (l.starts_with('0') || l.starts_with('1')))
        .count();
    assert!(clock_changes > 1000, "clock toggled {clock_changes} times");
}
