//! The Clio-KV unit's testbench: a fake store region served through the bundle's memory
//! channel (latency, back-pressure, bad blocks), the payload offered in beats with gaps, and
//! every answer and the whole region compared byte for byte with [`reference`] after each
//! request.

use super::reference::{self, Answer, Region, Req};
use super::*;
use crate::bench::Bench;
use crate::tb::BEAT;
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_model::sync_unit::{RingCheck as Verdict, SyncUnit as Ring};
use clio_proto::kv::{KvRequest, RecordHeader, StoreLayout};
use std::collections::HashMap;

/// How the bench serves the unit: cycles from a memory handshake to `mem_done`, cycles of
/// `mem_ready`/`rsp_ready` low before each handshake, cycles between payload beats.
#[derive(Debug, Clone, Copy)]
struct Timing {
    latency: u64,
    stall: u64,
    gap: u64,
}

const FAST: Timing = Timing {
    latency: 0,
    stall: 0,
    gap: 0,
};
const DRAM: Timing = Timing {
    latency: 5,
    stall: 0,
    gap: 0,
};

/// What one request did: the answer, cycles from the request to the answer's handshake, and
/// the memory accesses (reads, writes); whether it asked the ring, and had its answer recorded.
#[derive(Debug)]
struct Run {
    answer: Answer,
    cycles: u64,
    reads: usize,
    writes: usize,
    asked: bool,
    recorded: bool,
}

/// A unit after reset, configured with the layout `l` and status `ready`.
fn unit(l: &StoreLayout, ready: u8) -> Bench<ClioKv> {
    let mut b = Bench::new(ClioKv::default());
    b.uut.kv_port.cfg_base.next = l.base.to_bits();
    b.uut.kv_port.cfg_buckets.next = l.buckets.to_bits();
    b.uut.kv_port.cfg_records.next = l.records.to_bits();
    b.uut.kv_port.cfg_status.next = (ready as u64).to_bits();
    b.uut.reset.next = true;
    b.tick();
    b.uut.reset.next = false;
    b.settle();
    b
}

/// The block the bench answers for an access at `va` (status, bytes).
fn block(m: &Region, va: u64) -> (u8, Vec<u8>) {
    let blk = va & !63;
    match m.range(blk, BEAT) {
        Ok(o) => (0, m.bytes[o..o + BEAT].to_vec()),
        Err(s) => (s, vec![0xEE; BEAT]),
    }
}

/// Serve one request: the payload in beats, the memory channel from `m`, the answer taken;
/// a ring that says execute.
fn run(b: &mut Bench<ClioKv>, m: &mut Region, r: &Req, t: Timing) -> Run {
    let mut ring = Ring::default();
    ring.set_owner(1, r.pid);
    run_ring(b, m, r, t, &mut ring, 1, 0)
}

/// [`run`] with the idempotence ring `ring` (the executor's part: the verdict on the caller's
/// `(pid, client, req)` `t.stall + 1` cycles after the unit asks (1, as in the top, without
/// stalls), the answer recorded when
/// the unit says so).
fn run_ring(
    b: &mut Bench<ClioKv>,
    m: &mut Region,
    r: &Req,
    t: Timing,
    ring: &mut Ring,
    client: u16,
    req: u32,
) -> Run {
    assert!(b.uut.port.req_ready.val(), "idle before the request");
    let u = &mut b.uut;
    u.port.req_valid.next = true;
    u.kv_port.req_op.next = (r.op as u64).to_bits();
    u.kv_port.req_pid.next = (r.pid as u64).to_bits();
    u.port.req_va.next = r.va.to_bits();
    u.port.req_arg0.next = r.arg0.to_bits();
    u.port.req_arg1.next = r.arg1.to_bits();
    u.port.req_len.next = (r.total_len as u64).to_bits();
    u.kv_port.req_pay_len.next = (r.pay.len() as u64).to_bits();
    u.kv_port.req_pkt_count.next = (r.pkt_count as u64).to_bits();
    u.kv_port.req_pkt_index.next = (r.pkt_index as u64).to_bits();
    b.tick();
    b.uut.port.req_valid.next = false;
    let t0 = b.cycle;
    let beats: Vec<&[u8]> = r.pay.chunks(BEAT).collect();
    let (mut beat, mut beat_at) = (0usize, b.cycle + t.gap);
    let mut pending: Option<(u64, u8, Vec<u8>)> = None;
    let (mut stall, mut rsp_stall) = (t.stall, t.stall);
    let (mut reads, mut writes) = (0, 0);
    let mut verdict: Option<(u64, Verdict)> = None;
    let (mut asked, mut recorded) = (false, false);
    while b.cycle < t0 + 50_000 {
        b.settle();
        let u = &mut b.uut;
        let offer = beat < beats.len() && b.cycle >= beat_at;
        u.kv_port.pay_valid.next = offer;
        u.kv_port.pay_data.next =
            bytes_to_bits::<512>(beats.get(beat).copied().unwrap_or(&[0xCC; 64]));
        u.kv_port.pay_last.next = beat + 1 == beats.len();
        u.port.mem_done.next = false;
        u.port.mem_data.next = bytes_to_bits::<512>(&[0xDD; 64]);
        if let Some((at, status, data)) = &pending {
            if *at == b.cycle {
                u.port.mem_done.next = true;
                u.port.mem_status.next = (*status as u64).to_bits();
                u.port.mem_data.next = bytes_to_bits::<512>(data);
            }
        }
        u.kv_port.once_done.next = false;
        u.kv_port.once_hit.next = false;
        u.kv_port.once_stranger.next = false;
        u.kv_port.once_quota.next = false;
        u.kv_port.once_status.next = 0xEE_u64.to_bits();
        u.kv_port.once_value.next = 0xEEEE_u64.to_bits();
        if let Some((at, v)) = verdict {
            if at == b.cycle {
                u.kv_port.once_done.next = true;
                match v {
                    Verdict::Cached(s, x) => {
                        u.kv_port.once_hit.next = true;
                        u.kv_port.once_stranger.next = x % 2 == 0; // ignored after a hit
                        u.kv_port.once_status.next = (s as u64).to_bits();
                        u.kv_port.once_value.next = x.to_bits();
                    }
                    Verdict::Stranger => u.kv_port.once_stranger.next = true,
                    Verdict::OverShare => {
                        u.kv_port.once_quota.next = true;
                        u.kv_port.once_stranger.next = b.cycle % 2 == 0; // ignored after quota
                    }
                    Verdict::Execute => {}
                }
            }
        }
        if u.kv_port.once_valid.val() && !asked {
            asked = true;
            verdict = Some((b.cycle + t.stall + 1, ring.check(r.pid, client, req)));
        }
        u.port.mem_ready.next = false;
        if u.port.mem_valid.val() {
            assert!(pending.is_none(), "one access in flight");
            if stall > 0 {
                stall -= 1;
            } else {
                u.port.mem_ready.next = true;
            }
        }
        u.port.rsp_ready.next = false;
        if u.port.rsp_valid.val() {
            if rsp_stall > 0 {
                rsp_stall -= 1;
            } else {
                u.port.rsp_ready.next = true;
            }
        }
        b.settle();
        let u = &b.uut;
        // The registered cache hit (`chit_q`, decided from the source each state loads into
        // `ma`, `nhit`) is the hit of `ma` itself whenever `Rd` reads it.
        if u.state.q.val() == KvState::Rd {
            assert_eq!(
                u.chit_q.q.val(),
                u.chit.val(),
                "cycle {}: the registered cache hit in Rd",
                b.cycle
            );
        }
        let pay_fire = offer && u.port.pay_ready.val();
        let mem_fire = u.port.mem_valid.val() && u.port.mem_ready.val();
        let done_now = u.port.mem_done.val();
        let access = (
            u.port.mem_write.val(),
            u.port.mem_own.val(),
            u.port.mem_va.val().to_u64(),
            bits_to_bytes(u.port.mem_wdata.val()),
            u.port.mem_wstrb.val().to_u64(),
        );
        let answer = (u.port.rsp_valid.val() && u.port.rsp_ready.val()).then(|| Answer {
            status: u.port.rsp_status.val().to_u64() as u8,
            arg0: u.port.rsp_arg0.val().to_u64(),
            read: u.port.rsp_read.val().then(|| {
                assert!(
                    u.port.rsp_read_own.val(),
                    "a value is read in the store's RAS"
                );
                (
                    u.port.rsp_read_va.val().to_u64(),
                    u.port.rsp_read_len.val().to_u64(),
                )
            }),
            replay: u.kv_port.rsp_replay.val(),
            arg1: u.port.rsp_arg1.val().to_u64(),
        });
        if let Some(a) = &answer {
            recorded = u.kv_port.rsp_record.val();
            assert!(!(recorded && a.replay), "a replay is not recorded again");
            if recorded {
                let status = Status::from_u8(a.status).expect("the unit answers a status");
                ring.record_offload(r.pid, client, req, status, a.arg0);
            }
        }
        b.tick();
        if done_now {
            pending = None;
        }
        if pay_fire {
            beat += 1;
            beat_at = b.cycle + t.gap;
        }
        if mem_fire {
            let (write, own, va, wdata, wstrb) = access;
            assert!(own, "the store's memory is its own RAS");
            let (status, data) = block(m, va);
            if write {
                assert_eq!(va % 64, 0, "writes are whole blocks");
                assert_ne!(wstrb, 0, "a write writes something");
                if status == 0 {
                    let o = (va - m.base) as usize;
                    for (k, byte) in wdata.iter().enumerate() {
                        if wstrb >> k & 1 == 1 {
                            m.bytes[o + k] = *byte;
                        }
                    }
                }
                writes += 1;
            } else {
                assert_eq!(va % 8, 0, "reads are words");
                reads += 1;
            }
            pending = Some((b.cycle + t.latency, status, data));
            stall = t.stall;
        }
        if let Some(answer) = answer {
            assert_eq!(
                beat,
                beats.len(),
                "every payload beat taken before the answer"
            );
            assert!(pending.is_none(), "nothing in flight after the answer");
            b.settle();
            assert!(b.uut.port.req_ready.val(), "idle again");
            return Run {
                answer,
                cycles: b.cycle - t0,
                reads,
                writes,
                asked,
                recorded,
            };
        }
    }
    panic!("no answer to {r:?}");
}

/// A store of 8 records over 4 buckets, so chains hold several records.
const SMALL: StoreLayout = StoreLayout {
    base: 0x10_0000,
    buckets: 4,
    records: 8,
};

/// Run `r` on the unit and on the reference; the answers and the regions must agree.
fn check(b: &mut Bench<ClioKv>, dut: &mut Region, want: &mut Region, r: &Req, t: Timing) -> Run {
    let l = StoreLayout {
        base: b.uut.kv_port.cfg_base.val().to_u64(),
        buckets: b.uut.kv_port.cfg_buckets.val().to_u64(),
        records: b.uut.kv_port.cfg_records.val().to_u64(),
    };
    let ready = b.uut.kv_port.cfg_status.val().to_u64() as u8;
    let expect = reference::serve(want, &l, ready, r);
    let got = run(b, dut, r, t);
    assert_eq!(got.answer, expect, "{:?} {:?}", r.op, r.pay);
    assert!(dut.bytes == want.bytes, "memory differs after {r:?}");
    // Puts and deletes that pass the format and the store's status ask the ring, and are
    // recorded whatever they answer but the record quota's refusal; nothing else does either.
    let once = r.op.offload_uses_idempotence_ring()
        && ready == 0
        && KvRequest::decode(&r.header(), &r.pay).is_ok();
    let quota = got.answer.status == Status::QuotaExceeded as u8;
    assert_eq!(
        (got.asked, got.recorded),
        (once, once && !quota),
        "ring use of {r:?}"
    );
    got
}

fn key(i: usize) -> Vec<u8> {
    let len = [1, 8, 16, 60, 61, 64, 3, 33][i % 8];
    (0..len).map(|k| (k * 7 + i * 13) as u8).collect()
}

fn value(i: usize) -> Vec<u8> {
    let len = [0, 1, 64, 200, MAX_VALUE, 17, 955, 63][i % 8];
    (0..len).map(|k| (k * 3 + i) as u8).collect()
}

/// Random puts, gets and deletes of two owners over keys of every length class, against the
/// reference and a map of what each get must return (the value at the answer's range).
#[test]
fn puts_gets_and_deletes_match_the_reference_byte_for_byte() {
    let mut b = unit(&SMALL, 0);
    let mut dut = Region::formatted(&SMALL);
    let mut want = dut.clone();
    let mut map: HashMap<(u16, Vec<u8>), Vec<u8>> = HashMap::new();
    let mut seen: HashMap<(Opcode, u8, u64), usize> = HashMap::new();
    let mut x = 0x2545_F491_4F6C_DD1Du64;
    for i in 0..120 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let owner = 1 + (x >> 8) as u16 % 2;
        let k = key((x >> 16) as usize % 6);
        let v = value((x >> 24) as usize % 8 + i);
        let op = [
            Opcode::KvPut,
            Opcode::KvPut,
            Opcode::KvGet,
            Opcode::KvDelete,
        ][x as usize % 4];
        let t = Timing {
            latency: x >> 32 & 3,
            stall: x >> 40 & 1,
            gap: x >> 48 & 1,
        };
        let val = if op == Opcode::KvPut { &v[..] } else { b"" };
        let got = check(
            &mut b,
            &mut dut,
            &mut want,
            &Req::new(op, owner, &k, val),
            t,
        );
        let a = got.answer;
        *seen.entry((op, a.status, a.arg0)).or_default() += 1;
        let id = (owner, k.clone());
        match (op, a.status) {
            (Opcode::KvPut, 0) => {
                assert_eq!(map.insert(id, v.clone()).is_some(), a.arg0 == HIT);
            }
            (Opcode::KvDelete, 0) => assert_eq!(map.remove(&id).is_some(), a.arg0 == HIT),
            (Opcode::KvGet, 0) => {
                let stored = a.read.map(|(va, n)| dut.read(va, n as usize));
                let stored = stored
                    .unwrap_or(Ok(vec![]))
                    .expect("the value's range is readable");
                let hit = (a.arg0 == HIT).then_some(stored);
                assert_eq!(hit.as_ref(), map.get(&id), "the value a get returns");
            }
            _ => assert_eq!(
                (op, a.status, map.len() as u64),
                (Opcode::KvPut, Status::OutOfMemory as u8, SMALL.records - 1),
                "only a creation in a full store fails"
            ),
        }
        let live = dut.word(SMALL.base + SB_LIVE).expect("superblock");
        assert_eq!(live, map.len() as u64, "the live count");
    }
    let ok = |op, arg0| seen.get(&(op, 0, arg0)).copied().unwrap_or(0);
    assert!(
        ok(Opcode::KvPut, MISS) > 3 && ok(Opcode::KvPut, HIT) > 3,
        "{seen:?}"
    );
    assert!(
        ok(Opcode::KvGet, HIT) > 3 && ok(Opcode::KvGet, MISS) > 3,
        "{seen:?}"
    );
    assert!(
        ok(Opcode::KvDelete, HIT) > 1 && ok(Opcode::KvDelete, MISS) > 1,
        "{seen:?}"
    );
    // Chains formed: some bucket holds two records or more.
    let chain = |bkt: u64| {
        let mut n = 0;
        let mut at = dut.word(SMALL.head(bkt)).expect("head");
        while at != 0 && n < 9 {
            n += 1;
            at = dut.word(at).expect("link");
        }
        n
    };
    assert!(
        (0..SMALL.buckets).any(|bkt| chain(bkt) >= 2),
        "no chain of two"
    );
}

/// Fill `l`'s store with keys `f0`, `f1`, ... of owner 1 until `n` keys are live.
fn fill(b: &mut Bench<ClioKv>, dut: &mut Region, want: &mut Region, n: u64) {
    for i in 0..n {
        let k = format!("f{i}");
        let r = check(
            b,
            dut,
            want,
            &Req::new(Opcode::KvPut, 1, k.as_bytes(), b"x"),
            FAST,
        );
        assert_eq!((r.answer.status, r.answer.arg0), (0, MISS));
    }
}

/// Two owners' equal keys are two keys; a full store (records - 1 keys) refuses a creation
/// and changes nothing, still replaces values in place of the old record, and a delete makes
/// room again.
#[test]
fn owners_are_apart_and_a_full_store_changes_nothing() {
    let mut b = unit(&SMALL, 0);
    let mut m = (Region::formatted(&SMALL), Region::formatted(&SMALL));
    let go = |b: &mut Bench<ClioKv>, m: &mut (Region, Region), op, owner, k: &[u8], v: &[u8]| {
        check(b, &mut m.0, &mut m.1, &Req::new(op, owner, k, v), DRAM).answer
    };
    let a = go(&mut b, &mut m, Opcode::KvPut, 1, b"k", b"one");
    assert_eq!((a.status, a.arg0), (0, MISS));
    assert_eq!(go(&mut b, &mut m, Opcode::KvGet, 2, b"k", b"").arg0, MISS);
    assert_eq!(
        go(&mut b, &mut m, Opcode::KvDelete, 2, b"k", b"").arg0,
        MISS
    );
    assert_eq!(
        go(&mut b, &mut m, Opcode::KvPut, 2, b"k", b"two").arg0,
        MISS
    );
    assert!(go(&mut b, &mut m, Opcode::KvGet, 1, b"k", b"")
        .read
        .is_some());
    assert_eq!(go(&mut b, &mut m, Opcode::KvPut, 1, b"k", b"uno").arg0, HIT);
    let (mut dut2, mut want2) = m;
    fill(&mut b, &mut dut2, &mut want2, SMALL.records - 3);
    let before = dut2.clone();
    let full = Req::new(Opcode::KvPut, 1, b"new", b"x");
    let r = check(&mut b, &mut dut2, &mut want2, &full, DRAM);
    assert_eq!(r.answer.status, Status::OutOfMemory as u8);
    assert_eq!(r.writes, 0, "nothing written");
    assert!(dut2 == before, "a refused put leaves memory as it was");
    for v in [&b"eins"[..], &[7; MAX_VALUE], b""] {
        let upd = Req::new(Opcode::KvPut, 2, b"k", v);
        assert_eq!(
            check(&mut b, &mut dut2, &mut want2, &upd, DRAM).answer.arg0,
            HIT
        );
    }
    let del = Req::new(Opcode::KvDelete, 1, b"f0", b"");
    assert_eq!(
        check(&mut b, &mut dut2, &mut want2, &del, DRAM).answer.arg0,
        HIT
    );
    let r = check(&mut b, &mut dut2, &mut want2, &full, DRAM);
    assert_eq!((r.answer.status, r.answer.arg0), (0, MISS));
}

/// A RAS at its record quota (the superblock's `SB_RAS_RECORDS`) is refused a creation with
/// QUOTA_EXCEEDED naming the quota, nothing written and nothing recorded; its replacements,
/// another RAS's creations and, after a delete, its own go on, its count in the table exact.
#[test]
fn a_ras_at_its_record_quota_is_refused_and_a_delete_makes_room() {
    use clio_proto::quota::Quota;
    let mut b = unit(&SMALL, 0);
    let mut dut = Region::formatted_limited(&SMALL, 2);
    let mut want = dut.clone();
    let mut go = |op, owner, k: &[u8], v: &[u8]| {
        check(
            &mut b,
            &mut dut,
            &mut want,
            &Req::new(op, owner, k, v),
            DRAM,
        )
    };
    for k in [&b"a"[..], b"b"] {
        assert_eq!(go(Opcode::KvPut, 1, k, b"x").answer.arg0, MISS);
    }
    let r = go(Opcode::KvPut, 1, b"c", b"x");
    let a = r.answer;
    assert_eq!(
        (a.status, a.arg1),
        (Status::QuotaExceeded as u8, Quota::KvRecords as u64)
    );
    assert_eq!(r.writes, 0, "nothing written");
    assert_eq!(go(Opcode::KvPut, 1, b"a", b"y").answer.arg0, HIT);
    assert_eq!(go(Opcode::KvPut, 2, b"c", b"x").answer.arg0, MISS);
    assert_eq!(go(Opcode::KvDelete, 1, b"b", b"").answer.arg0, HIT);
    assert_eq!(go(Opcode::KvPut, 1, b"c", b"x").answer.arg0, MISS);
    assert_eq!(
        go(Opcode::KvPut, 1, b"d", b"x").answer.status,
        Status::QuotaExceeded as u8
    );
    assert_eq!(dut.word(SMALL.count(1)), Ok(2));
    assert_eq!(dut.word(SMALL.count(2)), Ok(1));
}

/// Every malformed request is BAD_REQUEST (an opcode not the unit's UNSUPPORTED) without a
/// memory access, its payload taken whole; a store not ready answers its status to the
/// well-formed ones.
#[test]
fn malformed_requests_answer_bad_request_and_touch_nothing() {
    let mut b = unit(&SMALL, 0);
    let mut dut = Region::formatted(&SMALL);
    let mut want = dut.clone();
    let p = Req::new(Opcode::KvPut, 1, b"key", b"value");
    let mut bad = vec![
        Req { va: 8, ..p.clone() },
        Req {
            arg0: 1,
            ..p.clone()
        },
        Req {
            arg1: 1,
            ..p.clone()
        },
        Req {
            pkt_count: 2,
            ..p.clone()
        },
        Req {
            pkt_index: 1,
            ..p.clone()
        },
        Req {
            total_len: p.total_len + 1,
            ..p.clone()
        },
        Req {
            total_len: u32::MAX,
            ..p.clone()
        },
        Req {
            pay: vec![],
            total_len: 0,
            ..p.clone()
        },
        Req {
            pay: vec![3, 0, 0],
            total_len: 3,
            ..p.clone()
        },
        Req::new(Opcode::KvGet, 1, b"", b""),
        Req::new(Opcode::KvGet, 1, &[1; MAX_KEY + 1], b""),
        Req::new(Opcode::KvGet, 1, b"k", b"v"),
        Req::new(Opcode::KvDelete, 1, &[2; 61], b"value"),
        Req::new(Opcode::KvPut, 1, b"k", &[0; MAX_VALUE + 1]),
        Req::new(Opcode::Read, 1, b"k", b""),
    ];
    for (i, d) in [(0, 1i16), (0, -1), (2, 1), (2, -1), (1, 1)] {
        let mut q = p.clone();
        q.pay[i] = (q.pay[i] as i16 + d) as u8; // key or value length off by one (or 256)
        bad.push(q);
    }
    for r in &bad {
        let got = check(
            &mut b,
            &mut dut,
            &mut want,
            r,
            Timing {
                latency: 1,
                stall: 1,
                gap: 1,
            },
        );
        let want_status = if r.op == Opcode::Read {
            Status::Unsupported
        } else {
            Status::BadRequest
        };
        assert_eq!(got.answer.status, want_status as u8, "{r:?}");
        assert_eq!((got.reads, got.writes), (0, 0), "{r:?}");
    }
    // Not ready: the status the configuration says, after the format checks.
    let mut b = unit(&SMALL, Status::RetryLater as u8);
    let got = check(&mut b, &mut dut, &mut want, &p, FAST);
    assert_eq!(got.answer.status, Status::RetryLater as u8);
    assert_eq!((got.reads, got.writes), (0, 0));
    let got = check(&mut b, &mut dut, &mut want, &bad[9], FAST);
    assert_eq!(got.answer.status, Status::BadRequest as u8);
}

/// Links the table did not write (outside the records, inside one, past the last), a cycle,
/// a record header out of bounds, a corrupt free list and an unformatted store: UNMAPPED,
/// after a bounded walk, with the reference's memory effects.
#[test]
fn corrupt_links_cycles_and_bad_headers_end_unmapped() {
    let mut b = unit(&SMALL, 0);
    let mut dut = Region::formatted(&SMALL);
    let mut want = dut.clone();
    fill(&mut b, &mut dut, &mut want, 3);
    let bucket = SMALL.bucket(1, b"f0");
    let head = SMALL.head(bucket);
    let other = (0..)
        .map(|i: u32| format!("z{i}").into_bytes())
        .find(|k| SMALL.bucket(1, k) == bucket)
        .expect("a key in f0's bucket");
    let get = Req::new(Opcode::KvGet, 1, &other, b"");
    let put = Req::new(Opcode::KvPut, 1, &other, b"v");
    let pristine = (dut.clone(), want.clone());
    let unmapped = Status::Unmapped as u8;
    let mut case = |what: &str, va: u64, v: u64, r: &Req| {
        let (mut d, mut w) = pristine.clone();
        d.set_word(va, v).expect("in the region");
        w.set_word(va, v).expect("in the region");
        let got = check(
            &mut b,
            &mut d,
            &mut w,
            r,
            Timing {
                latency: 2,
                stall: 1,
                gap: 0,
            },
        );
        assert_eq!(got.answer.status, unmapped, "{what}");
        got
    };
    case("a link outside the records", head, 0x10, &get);
    case("a link inside a record", head, SMALL.record(1) + 16, &get);
    case(
        "a link past the last record",
        head,
        SMALL.record(SMALL.records),
        &get,
    );
    case(
        "a link before the first record",
        head,
        SMALL.record(0) - 1104,
        &get,
    );
    case("an unformatted store", SMALL.base, 0, &get);
    let at = dut.word(head).expect("head");
    case("a key longer than 64", at + 8, 1 | 65 << 16, &get);
    case(
        "a value longer than 1024",
        at + 8,
        1 | 2 << 16 | 1025 << 32,
        &put,
    );
    case(
        "a corrupt free list",
        SMALL.base + SB_FREE_HEAD,
        at + 8,
        &put,
    );
    // A record linked to itself: records + 1 links, then UNMAPPED.
    let got = case("a cycle", at, at, &get);
    assert!(
        got.reads <= 3 * (SMALL.records as usize + 2),
        "bounded: {got:?}"
    );
}

/// A memory status ends the request with it, wherever it comes: the superblock, the chain
/// heads, a record on the chain, the new record's slot (the high-water mark already moved,
/// as in the model).
#[test]
fn memory_errors_end_the_request_with_their_status() {
    let mut b = unit(&SMALL, 0);
    let mut dut = Region::formatted(&SMALL);
    let mut want = dut.clone();
    fill(&mut b, &mut dut, &mut want, 2);
    let get = Req::new(Opcode::KvGet, 1, b"f1", b"");
    let put = Req::new(Opcode::KvPut, 1, b"n", b"v");
    let at = dut.word(SMALL.head(SMALL.bucket(1, b"f1"))).expect("head");
    for (block, status, r) in [
        (SMALL.base, Status::Permission, &get),
        (
            SMALL.head(SMALL.bucket(1, b"f1")) & !63,
            Status::RetryLater,
            &get,
        ),
        (at & !63, Status::Unmapped, &get),
        (SMALL.record(2) & !63, Status::Permission, &put),
    ] {
        let (mut d, mut w) = (dut.clone(), want.clone());
        d.bad.insert(block, status as u8);
        w.bad.insert(block, status as u8);
        let got = check(&mut b, &mut d, &mut w, r, DRAM);
        assert_eq!(got.answer.status, status as u8, "{block:#x}");
    }
}

/// The record header's words where the kernel reads and writes them (`RecordHeader`).
#[test]
fn record_header_words_are_where_the_kernel_has_them() {
    let h = RecordHeader {
        next: 0x1122_3344_5566_7788,
        owner: 0xA1B2,
        key_len: 0x40,
        value_len: 0x3BC,
    };
    let e = h.encode();
    let word = |i: usize| u64::from_le_bytes(e[i..i + 8].try_into().expect("8 bytes"));
    assert_eq!(word(0), h.next);
    assert_eq!(word(8), 0xA1B2 | 0x40 << 16 | 0x3BC << 32);
}

/// Cycles per operation (request to answer, memory latency 5): a 16-byte key with 64-byte
/// and the longest inline (956-byte) values, and a 1000-byte value stored as a staged put
/// would. `cargo test -p clio-hw --release clio_kv::tests::cycles -- --nocapture`.
#[test]
fn cycles_per_operation() {
    let l = StoreLayout::fit(0x40_0000, 64 * 1024).expect("a store");
    let mut b = unit(&l, 0);
    let mut dut = Region::formatted(&l);
    let mut want = dut.clone();
    let k: Vec<u8> = (0..16).collect();
    let mut rows = vec![];
    for n in [64, MAX_VALUE] {
        let v = vec![0x5A; n];
        for (what, op, val) in [
            ("put (create)", Opcode::KvPut, &v[..]),
            ("put (update)", Opcode::KvPut, &v[..]),
            ("get (hit)", Opcode::KvGet, b""),
            ("delete (hit)", Opcode::KvDelete, b""),
            ("get (miss)", Opcode::KvGet, b""),
            ("delete (miss)", Opcode::KvDelete, b""),
        ] {
            let r = check(&mut b, &mut dut, &mut want, &Req::new(op, 7, &k, val), DRAM);
            assert_eq!(r.answer.status, 0);
            rows.push((n, what, r.cycles, r.reads, r.writes));
        }
    }
    let v = vec![0xA5; 1000];
    for m in [&mut dut, &mut want] {
        let stored = reference::apply(m, &l, Opcode::KvPut, 7, &k, &v);
        assert_eq!(stored, Ok((MISS, None)));
    }
    for (what, op) in [
        ("get (hit)", Opcode::KvGet),
        ("delete (hit)", Opcode::KvDelete),
    ] {
        let r = check(&mut b, &mut dut, &mut want, &Req::new(op, 7, &k, b""), DRAM);
        assert_eq!((r.answer.status, r.answer.arg0), (0, HIT));
        rows.push((1000, what, r.cycles, r.reads, r.writes));
    }
    println!("Clio-KV unit, 16-byte key, memory latency 5 (cycles from request to answer):");
    for (n, what, cycles, reads, writes) in rows {
        println!("  value {n:4} B  {what:14} {cycles:4} cycles  {reads:2} reads {writes:2} writes");
    }
}

mod once;
