//! The conformance check can fail (issue 11, item 7): every deliberately broken fast path of
//! `clio_hw::mutants` (the TLB ignoring the PID, the key check skipped, a read overtaking a
//! write) answers a conformance stream differently from the model, while the unbroken fast
//! path, replaying the same stream on the same strict DRAM, answers it byte for byte.
//!
//! The DRAM is the strict, rough one (`DramTiming::adversarial`): written data lands when its
//! B response is taken or, for a burst with nothing earlier held back, at random at its W
//! beats; B comes later than read data, and read bursts, B responses and R beats come at
//! random (seeded) times. So a read that does not wait for earlier writes reads stale bytes,
//! and a write that does not wait for earlier reads changes what they return, as a real
//! interconnect may let them.
#![cfg(feature = "rtl")]

use clio_proto::header::parse_verified;
use clio_sim::conformance::{references, Reference, REFERENCE_DRAM};
use clio_sim::cosim::{DramTiming, RtlBoard};
use clio_sim::model::board::Outgoing;
use clio_sim::rtl::{FASTPATH_TOP, MUTANTS};

/// The strict, rough DRAM: written data visible only at its B response, which comes well after
/// a read's data would, and random timing on top from a fixed seed (printed below).
fn strict() -> DramTiming {
    DramTiming::adversarial(21)
}

/// The first difference between the model's answers `want` and the RTL's `got` (response
/// index and both headers), comparing only the `got.len()` answers there are so far.
fn first_difference(want: &[Outgoing], got: &[Outgoing]) -> Option<String> {
    let head = |o: Option<&Outgoing>| match o.map(|o| parse_verified(&o.1)) {
        Some(Ok((h, p))) => format!(
            "{:?} req {} status {:?} payload {}",
            h.opcode,
            h.req_id,
            h.status,
            p.len()
        ),
        Some(Err(e)) => format!("unparsable ({e})"),
        None => "nothing".to_string(),
    };
    let i = (0..got.len()).find(|&i| want.get(i) != Some(&got[i]))?;
    Some(format!(
        "response {i}: model {} / rtl {}",
        head(want.get(i)),
        head(got.get(i))
    ))
}

/// Replay `r`'s stream on the unbroken fast path (`select` `None`) or on the switchable build
/// with mutant `select` (0: none switched on), 32 packets at a time so that a mutant stops at
/// its first wrong answer or hung burst; `None` when the answers and the memory agree entirely.
fn run(r: &Reference, select: Option<u8>) -> Option<String> {
    let cfg = &r.cfg;
    let mut rtl = match select {
        None => RtlBoard::with_model(cfg, &FASTPATH_TOP, strict(), None),
        Some(k) => RtlBoard::with_mutant(cfg, strict(), k),
    }
    .unwrap_or_else(|e| panic!("RTL node: {e}"));
    let mut got = Vec::new();
    for chunk in r.stream.sent.chunks(32) {
        got.extend(rtl.replay_bursts(chunk, 8));
        if let Some(d) = first_difference(&r.want, &got) {
            return Some(d);
        }
        if rtl.hung_packets() > 0 {
            return Some(format!("the RTL hung on {} packets", rtl.hung_packets()));
        }
    }
    if r.want.len() != got.len() {
        return Some(format!(
            "{} responses from the model, {} from the RTL",
            r.want.len(),
            got.len()
        ));
    }
    let (m, x) = (
        r.model.peek(0, REFERENCE_DRAM as usize),
        rtl.peek(0, REFERENCE_DRAM as usize),
    );
    (m != x).then(|| "memory images".to_string())
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
    // The references, tried in order until one tells the mutant apart.
    let refs = references();
    eprintln!("DRAM: {}", strict());
    for r in &refs {
        // The control: the real fast path, and the switchable build with nothing selected,
        // on the same DRAM agree with the model.
        if let Some(d) = run(r, None) {
            panic!(
                "{}: the unbroken fast path differs from the model: {d}",
                r.name
            );
        }
        if let Some(d) = run(r, Some(0)) {
            panic!(
                "{}: the switchable build, no mutant selected, differs from the model: {d}",
                r.name
            );
        }
    }
    let mut missed = Vec::new();
    for &(name, k) in MUTANTS {
        let m = clio_hw::mutants::MUTANTS
            .iter()
            .find(|m| m.name == name)
            .expect("listed above");
        match refs
            .iter()
            .find_map(|r| run(r, Some(k)).map(|d| (r.name, d)))
        {
            Some((by, d)) => eprintln!(
                "mutant {name} [{}] ({}): caught by {by} at {d}",
                m.rule.name(),
                m.breaks
            ),
            None => missed.push(format!("{name} [{}] ({})", m.rule.name(), m.breaks)),
        }
    }
    assert!(
        missed.is_empty(),
        "the conformance streams do not tell these broken fast paths from the model: {missed:?}"
    );
}
