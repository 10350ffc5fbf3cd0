//! The sync unit's Append in the model (`Opcode::Append`, `proto::replog`): records land in
//! arrival order, a retry never appends twice, and everything hostile (wrong key, a full or
//! forged log, an address outside the RAS, a read-only log, malformed requests) is refused
//! with nothing written.

mod common;

use clio_proto::header::HEADER_LEN;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::replog::{self, LOG_HEAD, MAX_RECORD};
use clio_proto::{Header, Opcode, Status};
use common::{node, Wire, PAGE};

const RW: u8 = PERM_READ | PERM_WRITE;

fn append(w: &mut Wire, id: u32, log: u64, cap: u64, rec: &[u8]) -> Header {
    let h = Header {
        total_len: rec.len() as u32,
        arg0: cap,
        ..w.request(Opcode::Append, id, log)
    };
    let r = w.send_raw(&h.to_packet(rec));
    assert_eq!(r.len(), 1);
    r[0].0
}

fn tail(w: &mut Wire, log: u64) -> u64 {
    u64::from_le_bytes(w.read(log, 8).unwrap().try_into().unwrap())
}

fn log_records(w: &mut Wire, log: u64) -> Vec<Vec<u8>> {
    let t = tail(w, log);
    let data = w.read(log + LOG_HEAD, t as u32).unwrap();
    replog::records(&data)
        .unwrap()
        .into_iter()
        .map(|(_, p)| p.to_vec())
        .collect()
}

#[test]
fn records_land_in_arrival_order_and_retries_append_once() {
    let mut w = Wire::new(node());
    w.register(1);
    let log = w.alloc(2 * PAGE, RW).unwrap();
    let cap = 2 * PAGE;
    let mut want = Vec::new();
    let mut expect_at = 0;
    for i in 0..40u32 {
        // Lengths that cross the page boundary of the log at some point.
        let rec: Vec<u8> = (0..(i * 97 % MAX_RECORD).max(1))
            .map(|j| (i + j) as u8)
            .collect();
        let id = w.id();
        let r = append(&mut w, id, log, cap, &rec);
        assert_eq!(r.status, Status::Ok);
        assert_eq!(r.arg0, expect_at, "the record's offset is the old tail");
        expect_at += replog::footprint(rec.len() as u32);
        assert_eq!(r.arg1, expect_at, "and arg1 the new tail");
        // The same request again (a retry): the recorded answer, nothing appended.
        let again = append(&mut w, id, log, cap, &rec);
        assert_eq!((again.status, again.arg0), (Status::Ok, r.arg0));
        assert_eq!(w.ack(id), Status::Ok);
        want.push(rec);
    }
    assert_eq!(tail(&mut w, log), expect_at);
    assert_eq!(log_records(&mut w, log), want);
}

#[test]
fn a_full_log_refuses_and_a_reset_log_takes_records_again() {
    let mut w = Wire::new(node());
    w.register(1);
    let log = w.alloc(PAGE, RW).unwrap();
    let cap = LOG_HEAD + 3 * replog::footprint(100);
    for _ in 0..3 {
        let id = w.id();
        assert_eq!(append(&mut w, id, log, cap, &[7; 100]).status, Status::Ok);
    }
    let before = w.dram();
    let id = w.id();
    assert_eq!(
        append(&mut w, id, log, cap, &[8; 1]).status,
        Status::LogFull
    );
    assert!(before == w.dram(), "nothing written");
    // Reset the tail (what an applier does with a CAS) and append again.
    let t = tail(&mut w, log);
    let id = w.id();
    assert_eq!(w.atomic(Opcode::CompareAndSwap, log, t, 0, id).arg0, t);
    let id = w.id();
    let r = append(&mut w, id, log, cap, &[9; 1]);
    assert_eq!((r.status, r.arg0), (Status::Ok, 0));
}

#[test]
fn hostile_appends_are_refused_with_nothing_written() {
    let mut w = Wire::new(node());
    let victim = w.register(1);
    let log = w.alloc(PAGE, RW).unwrap();
    let ro = w.alloc(PAGE, PERM_READ).unwrap();
    let mut a = Wire::new(node());
    std::mem::swap(&mut a.node, &mut w.node);
    a.register(2); // the attacker's own RAS on the same node
    let own = a.alloc(PAGE, RW).unwrap();
    // Touch the attacker's own log page so first-touch faults do not change the image.
    assert_eq!(a.write(own, &[0; 8]), Status::Ok);
    let before = a.dram();
    let rec = [0x66u8; 32];
    let mut cases: Vec<(&str, Header, Vec<u8>, Status)> = Vec::new();
    let base = |w: &Wire, id, va, cap| Header {
        total_len: 32,
        arg0: cap,
        ..w.request(Opcode::Append, id, va)
    };
    // The victim's log with the attacker's key, with a key one bit off, with none.
    let mut h = base(&a, 900, log, PAGE);
    h.pid = victim.pid;
    cases.push((
        "attacker's key on the victim's pid",
        h,
        rec.to_vec(),
        Status::Denied,
    ));
    let h = Header {
        pid: victim.pid,
        key: victim.key ^ 1,
        ..base(&a, 901, log, PAGE)
    };
    cases.push(("key one bit off", h, rec.to_vec(), Status::Denied));
    let h = Header {
        pid: victim.pid,
        key: 0,
        ..base(&a, 902, log, PAGE)
    };
    cases.push(("no key", h, rec.to_vec(), Status::Denied));
    // Its own RAS, but an address outside it (the victim's log address), misaligned, a
    // capacity past its region, a huge capacity that would wrap.
    cases.push((
        "outside the RAS",
        base(&a, 903, log + PAGE * 8, PAGE),
        rec.to_vec(),
        Status::Unmapped,
    ));
    cases.push((
        "misaligned",
        base(&a, 904, own + 4, PAGE),
        rec.to_vec(),
        Status::BadRequest,
    ));
    cases.push((
        "capacity past the region",
        base(&a, 905, own + PAGE - LOG_HEAD, 4 * PAGE),
        rec.to_vec(),
        Status::Unmapped,
    ));
    // Length lies: total_len disagrees with the payload; empty; two packets.
    let h = Header {
        total_len: 64,
        ..base(&a, 906, own, PAGE)
    };
    cases.push(("total_len != payload", h, rec.to_vec(), Status::BadRequest));
    let h = Header {
        total_len: 0,
        ..base(&a, 907, own, PAGE)
    };
    cases.push(("empty", h, Vec::new(), Status::BadRequest));
    let h = Header {
        pkt_count: 2,
        ..base(&a, 908, own, PAGE)
    };
    cases.push(("two packets", h, rec.to_vec(), Status::BadRequest));
    for (what, h, payload, want) in cases {
        let r = a.send_raw(&h.to_packet(&payload));
        assert_eq!(r.len(), 1, "{what}");
        assert_eq!(r[0].0.status, want, "{what}");
        assert_eq!(r[0].1.len(), 0, "{what}: no payload back");
    }
    // A forged tail (the owner wrote garbage into its own tail word): LogFull, no wrap.
    for forged in [u64::MAX - 7, 4, PAGE] {
        assert_eq!(a.write(own, &forged.to_le_bytes()), Status::Ok);
        let id = a.id();
        let r = append(&mut a, id, own, PAGE, &rec);
        assert_eq!(r.status, Status::LogFull, "tail {forged:#x}");
    }
    assert_eq!(a.write(own, &[0; 8]), Status::Ok);
    assert!(before == a.dram(), "no attack wrote a byte");
    // A read-only log: Permission (the tail is written).
    std::mem::swap(&mut a.node, &mut w.node);
    let id = w.id();
    assert_eq!(
        append(&mut w, id, ro, PAGE, &rec).status,
        Status::Permission
    );
    let id = w.id();
    assert_eq!(
        append(&mut w, id, log, PAGE, &rec).status,
        Status::Ok,
        "the victim is unaffected"
    );
}

#[test]
fn durable_appends_need_a_persistence_domain() {
    let mut w = Wire::new(node());
    w.register(1);
    let log = w.alloc(PAGE, RW).unwrap();
    let id = w.id();
    let h = Header {
        total_len: 8,
        arg0: PAGE,
        durable: true,
        ..w.request(Opcode::Append, id, log)
    };
    let r = w.send_raw(&h.to_packet(&[1; 8]));
    assert_eq!(r[0].0.status, Status::Unsupported);
    assert_eq!(tail(&mut w, log), 0);
    assert_eq!(HEADER_LEN, 64);
}
