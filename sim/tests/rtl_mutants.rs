//! The conformance check can fail (issue 11, item 7): every deliberately broken fast path of
//! `clio_hw::mutants` (the TLB ignoring the PID, the key check skipped, a read overtaking a
//! write) answers a conformance stream differently from the model, while the unbroken fast
//! path, replaying the same stream on the same strict DRAM, answers it byte for byte.
//!
//! The DRAM is the strict, rough one (`DramTiming::adversarial`): written data lands only when
//! its B response is taken, B comes later than read data, and read bursts, B responses and R
//! beats come at random (seeded) times, so a read that does not wait for earlier writes reads
//! stale bytes, as a real interconnect may let it.
#![cfg(feature = "rtl")]

use clio_proto::header::parse_verified;
use clio_sim::conformance::conformance_config;
use clio_sim::conformance::Stream;
use clio_sim::cosim::{DramTiming, RtlBoard};
use clio_sim::model::board::Outgoing;
use clio_sim::rtl::{FASTPATH_TOP, MUTANTS};
use clio_sim::CBoard;

const DRAM: u64 = 64 << 20;

/// The strict, rough DRAM: written data visible only at its B response, which comes well after
/// a read's data would, and random timing on top from a fixed seed (printed below).
fn strict() -> DramTiming {
    DramTiming::adversarial(21)
}

/// Where the RTL's answers first differ from the model's (response index and both headers),
/// or the memory images do; `None` when they agree entirely.
fn divergence(
    model: &CBoard,
    want: &[Outgoing],
    rtl: &RtlBoard,
    got: &[Outgoing],
) -> Option<String> {
    let head = |o: &Outgoing| match parse_verified(&o.1) {
        Ok((h, p)) => format!(
            "{:?} req {} status {:?} payload {}",
            h.opcode,
            h.req_id,
            h.status,
            p.len()
        ),
        Err(e) => format!("unparsable ({e})"),
    };
    if let Some(i) = want.iter().zip(got).position(|(w, g)| w != g) {
        return Some(format!(
            "response {i}: model {} / rtl {}",
            head(&want[i]),
            head(&got[i])
        ));
    }
    if want.len() != got.len() {
        return Some(format!(
            "{} responses from the model, {} from the RTL",
            want.len(),
            got.len()
        ));
    }
    if rtl.hung_packets() > 0 {
        return Some(format!("the RTL hung on {} packets", rtl.hung_packets()));
    }
    let (m, r) = (model.peek(0, DRAM as usize), rtl.peek(0, DRAM as usize));
    (m != r).then(|| "memory images".to_string())
}

/// Replay `stream` (already run on `model`, which answered `want`) on the unbroken fast path
/// (`select` `None`) or on the switchable build with mutant `select` (0: none switched on).
fn run(model: &CBoard, stream: &Stream, want: &[Outgoing], select: Option<u8>) -> Option<String> {
    let cfg = conformance_config(DRAM);
    let mut rtl = match select {
        None => RtlBoard::with_model(&cfg, &FASTPATH_TOP, strict(), None),
        Some(k) => RtlBoard::with_mutant(&cfg, strict(), k),
    }
    .unwrap_or_else(|e| panic!("RTL node: {e}"));
    let got = rtl.replay_bursts(&stream.sent, 8);
    divergence(model, want, &rtl, &got)
}

#[test]
fn every_mutant_is_told_from_the_model() {
    let names: Vec<(&str, u8)> = clio_hw::mutants::MUTANTS
        .iter()
        .enumerate()
        .map(|(i, m)| (m.name, i as u8 + 1))
        .collect();
    assert_eq!(
        MUTANTS, names,
        "the verilated mutants are not hw's list: run `make rtl` and rebuild"
    );
    eprintln!("stream seed 21 on {}", strict());
    let mut model = CBoard::new(&conformance_config(DRAM)).expect("model node");
    let mut stream = Stream::new(21, 1 << 16);
    let mut want = Vec::new();
    stream.setup(&mut model, 3, &mut want);
    for _ in 0..600 {
        stream.step(&mut model, &mut want);
    }
    // The control: the real fast path on the same strict DRAM agrees with the model.
    if let Some(d) = run(&model, &stream, &want, None) {
        panic!("the unbroken fast path differs from the model: {d}");
    }
    // And the switchable build with no mutant switched on is that fast path.
    if let Some(d) = run(&model, &stream, &want, Some(0)) {
        panic!("the switchable build, no mutant selected, differs from the model: {d}");
    }
    let mut missed = Vec::new();
    for &(name, k) in MUTANTS {
        let m = clio_hw::mutants::MUTANTS
            .iter()
            .find(|m| m.name == name)
            .expect("listed above");
        match run(&model, &stream, &want, Some(k)) {
            Some(d) => eprintln!("mutant {name} ({}): caught at {d}", m.breaks),
            None => missed.push(format!("{name} ({})", m.breaks)),
        }
    }
    assert!(
        missed.is_empty(),
        "the conformance stream does not tell these broken fast paths from the model: {missed:?}"
    );
}
