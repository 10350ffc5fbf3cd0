//! The conformance stream against two independent model instances: deterministic, and it
//! exercises every request class (this is the reference half of the model-vs-RTL check).

use clio_sim::conformance::{conformance_config, replay, Stream};
use clio_sim::CBoard;

fn node() -> CBoard {
    // The stream carries the keys the first node handed out: both draw the same.
    CBoard::new(&conformance_config(64 << 20)).unwrap()
}

#[test]
fn stream_is_deterministic_and_replays_identically() {
    let mut a = node();
    let mut s = Stream::new(7, 1 << 16);
    let mut out = Vec::new();
    s.setup(&mut a, 3, &mut out);
    for _ in 0..3000 {
        s.step(&mut a, &mut out);
    }
    let mut b = node();
    let replayed = replay(&mut b, &s.sent);
    assert_eq!(replayed.len(), out.len());
    assert!(replayed == out, "responses differ");
    assert!(
        a.peek(0, 64 << 20) == b.peek(0, 64 << 20),
        "memory images differ"
    );
    let c = a.counters();
    assert!(
        c.nacks > 10
            && c.page_faults > 5
            && c.idempotent_replays > 10
            && c.unmapped > 10
            && c.tlb_hits > 100
            && c.denied > 10,
        "{c:?}"
    );
}

/// The Clio-KV class reaches every outcome: hits, misses, creations, replacements, deletions,
/// a full store (a small one), malformed requests, replays from the idempotence ring, and (staged puts on
/// the default node, whose offloads are the RTL's) the answer for an opcode it lacks.
#[test]
fn the_kv_class_reaches_every_outcome() {
    use clio_proto::header::parse_verified;
    use clio_proto::kv::{HIT, MISS};
    use clio_proto::{Opcode, Status};
    // A store of 6 records: the records of torn-down RASes are freed (issue 40), so only the
    // live processes' keys fill it.
    let mut a = CBoard::new(&clio_sim::BoardConfig {
        kv_store_bytes: clio_proto::kv::HEADS_OFFSET + (8 << 10),
        ..conformance_config(64 << 20)
    })
    .unwrap();
    let mut s = Stream::new(3, 1 << 16);
    let mut out = Vec::new();
    s.setup(&mut a, 3, &mut out);
    for _ in 0..4000 {
        s.step(&mut a, &mut out);
    }
    let mut seen = std::collections::HashMap::<(Opcode, Status, u64), usize>::new();
    for (_, b) in &out {
        let Ok((h, _)) = parse_verified(b) else {
            continue; // an ack-layer NACK
        };
        if clio_proto::kv::is_kv(h.opcode) {
            *seen.entry((h.opcode, h.status, h.arg0)).or_default() += 1;
        }
    }
    let n = |op, st, arg0| seen.get(&(op, st, arg0)).copied().unwrap_or(0);
    for (op, st, arg0) in [
        (Opcode::KvGet, Status::Ok, HIT),
        (Opcode::KvGet, Status::Ok, MISS),
        (Opcode::KvPut, Status::Ok, HIT),
        (Opcode::KvPut, Status::Ok, MISS),
        (Opcode::KvDelete, Status::Ok, HIT),
        (Opcode::KvDelete, Status::Ok, MISS),
        (Opcode::KvPut, Status::OutOfMemory, 0),
        (Opcode::KvPut, Status::QuotaExceeded, 0),
        (Opcode::KvGet, Status::BadRequest, 0),
        (Opcode::KvPut, Status::BadRequest, 0),
    ] {
        assert!(n(op, st, arg0) > 0, "no {op:?} {st:?} {arg0}: {seen:?}");
    }
    let staged = seen
        .iter()
        .filter(|((op, _, _), _)| *op == Opcode::KvPutStaged)
        .map(|(k, v)| (k.1, *v))
        .collect::<Vec<_>>();
    assert!(!staged.is_empty(), "no staged puts: {seen:?}");
    assert!(a.counters().idempotent_replays > 0);
}

/// Every rule of the spec (`clio_proto::rules::Rule`) decides at least one answer of the
/// reference streams that the mutants are told apart on: a rule the streams never exercise is
/// a rule whose mutant nothing could catch. The table (how often each rule decided) is printed.
#[test]
fn rules_exercised_by_the_streams() {
    let mut cov = clio_sim::model::coverage::Coverage::default();
    for r in clio_sim::conformance::references() {
        let c = r.model.coverage();
        eprintln!(
            "{}: {} rules exercised",
            r.name,
            clio_proto::rules::Rule::ALL.len() - c.unexercised().len()
        );
        cov.add(&c);
    }
    eprintln!("{}", cov.table());
    let never: Vec<&str> = cov.unexercised().iter().map(|r| r.name()).collect();
    assert!(
        never.is_empty(),
        "rules no reference stream exercises: {never:?}"
    );
}
