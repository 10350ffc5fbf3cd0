//! Cycle figures of the fast path's RTL under Verilator (`make cosim`):
//! latency in cycles per request class and size, back-to-back throughput (cycles per packet,
//! goodput projected at 250 MHz), simulation speed, and a long model-vs-RTL conformance run.
//!
//! `cargo run --release -p clio-sim --features rtl --example cosim_bench -- [--requests N]`

use clio_proto::consts::CORE_CLOCK_MHZ;
use clio_proto::frame::Route;
use clio_proto::header::{packet_count, parse_verified, segment};
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::{Header, Opcode, Status};
use clio_sim::conformance::Stream;
use clio_sim::cosim::RtlBoard;
use clio_sim::{BoardConfig, CBoard, MemoryNode};
use std::time::Instant;

const PAGE_SHIFT: u32 = 16;
const PAGE: u64 = 1 << PAGE_SHIFT;
const DRAM_LATENCY: u64 = 20;

/// Cycle figures of the fast path's RTL under Verilator: latency per request class and size,
/// back-to-back throughput, simulation speed, and a long model-vs-RTL conformance run.
#[derive(clap::Parser)]
struct Args {
    /// Requests of the conformance run (the model and the RTL answer the same stream; every
    /// response and the final memory images are compared).
    #[arg(long, default_value_t = 1_000_000)]
    requests: u64,
}

/// The conformance run replays one stream into two nodes: both draw the same RAS keys,
/// leases outlast the run, and a torn-down RAS's Clio-KV records are freed within the request
/// that tore it down (a pass deferred by wall-clock time would fall elsewhere in the stream in
/// the slower RTL replay, and the memory images would differ).
fn cfg() -> BoardConfig {
    BoardConfig {
        dram_bytes: 256 << 20,
        page_shift: PAGE_SHIFT,
        key_seed: Some(2026),
        lease: std::time::Duration::from_secs(7 * 24 * 3600),
        limits: clio_sim::Limits {
            kv_purge_interval: std::time::Duration::ZERO,
            // The processes figure registers every client id from one source.
            members_per_source: u32::MAX,
            ..clio_sim::Limits::default()
        },
        ..BoardConfig::default()
    }
}

/// A RAS member's credentials, as its Register answered them.
#[derive(Clone, Copy)]
struct Member {
    pid: u16,
    key: u64,
    client: u16,
    /// The route cookie of its address (reads over 64 bytes carry it).
    cookie: u32,
}

impl Member {
    /// A request of this member, with its credentials.
    fn req(&self, op: Opcode, id: u32, va: u64) -> Header {
        Header::request(op, self.pid, id, va)
            .with_credentials(self.key, self.client)
            .with_cookie(self.cookie)
    }
}

struct Client {
    node: RtlBoard,
    /// The member the bench's own requests come from.
    me: Member,
    id: u32,
}

impl Client {
    fn call(&mut self, pkt: Vec<u8>) -> (Header, u64) {
        let mut out = Vec::new();
        self.node.handle(&Route::default(), &pkt, &mut out);
        let lat = self.node.cycle_stats().last_latency;
        let h = out
            .first()
            .and_then(|(_, b)| parse_verified(b).ok().map(|(h, _)| h))
            .expect("a response");
        (h, lat)
    }
    fn next(&mut self) -> u32 {
        self.id += 1;
        self.id
    }
    /// A request of the bench's member.
    fn req(&self, op: Opcode, id: u32, va: u64) -> Header {
        self.me.req(op, id, va)
    }
    /// Register a new RAS (its Register's nonce `nonce`): its first member.
    fn register(&mut self, nonce: u64) -> Member {
        let m = self.try_register(nonce);
        m.unwrap_or_else(|s| panic!("register: {s:?}"))
    }
    /// [`Client::register`], or the status that refused it (`TableFull`: every client id
    /// is held).
    fn try_register(&mut self, nonce: u64) -> Result<Member, Status> {
        let id = self.next();
        let (h, _) = self.call(
            Header {
                arg0: nonce,
                ..Header::request(Opcode::Register, 0, id, 0)
            }
            .to_packet(&[]),
        );
        if h.status != Status::Ok {
            return Err(h.status);
        }
        Ok(Member {
            pid: h.pid,
            key: h.arg0,
            client: h.arg1 as u16,
            cookie: clio_proto::route_cookie::cookie_of_answer(h.arg1),
        })
    }
    fn read(&mut self, va: u64, len: u32) -> (Status, u64) {
        let id = self.next();
        let (h, l) = self.call(
            Header {
                total_len: len,
                ..self.req(Opcode::Read, id, va)
            }
            .to_packet(&[]),
        );
        (h.status, l)
    }
    /// Allocate `pages` pages (read-write) in the bench's RAS; the base VA.
    fn alloc(&mut self, pages: u64) -> u64 {
        let me = self.me;
        self.alloc_as(&me, pages)
    }
    /// Allocate `pages` pages (read-write) in `m`'s RAS; the base VA.
    fn alloc_as(&mut self, m: &Member, pages: u64) -> u64 {
        let id = self.next();
        let (h, _) = self.call(
            Header {
                arg0: pages * PAGE,
                arg1: (PERM_READ | PERM_WRITE) as u64,
                ..m.req(Opcode::Alloc, id, 0)
            }
            .to_packet(&[]),
        );
        assert_eq!(h.status, Status::Ok, "alloc");
        h.va
    }
    /// Latency of each packet of a write (they are independent at the node).
    fn write(&mut self, va: u64, len: u32) -> (Status, Vec<u64>) {
        let id = self.next();
        let n = packet_count(len);
        let data = vec![0xA5u8; len as usize];
        let mut lats = Vec::new();
        let mut st = Status::Ok;
        for i in 0..n {
            let (o, l) = segment(len, i).unwrap();
            let p = Header {
                pkt_index: i,
                pkt_count: n,
                total_len: len,
                ..self.req(Opcode::Write, id, va)
            }
            .to_packet(&data[o as usize..o as usize + l as usize]);
            let (h, lat) = self.call(p);
            if h.status != Status::Ok {
                st = h.status;
            }
            lats.push(lat);
        }
        (st, lats)
    }
}

fn main() {
    let requests = <Args as clap::Parser>::parse().requests;
    let t0 = Instant::now();
    let mut c = Client {
        node: RtlBoard::new(&cfg(), DRAM_LATENCY, None).expect("RTL node"),
        me: Member {
            pid: 0,
            key: 0,
            client: 0,
            cookie: 0,
        },
        id: 0,
    };
    c.me = c.register(1);
    let id = c.next();
    let (h, _) = c.call(
        Header {
            arg0: 1000 * PAGE,
            arg1: (PERM_READ | PERM_WRITE) as u64,
            ..c.req(Opcode::Alloc, id, 0)
        }
        .to_packet(&[]),
    );
    assert_eq!(h.status, Status::Ok);
    let base = h.va;
    let mut fresh = 0u64; // next never-touched page
    let mut page = |n: u64| -> u64 {
        fresh += n;
        base + (fresh - n) * PAGE
    };

    println!("# fast-path RTL under Verilator: DRAM read latency {DRAM_LATENCY} cycles, {} KiB pages, 64-entry TLB", PAGE >> 10);
    println!("# latency = cycles from the first request beat accepted to the first response beat");
    println!("# first_touch_tlb: the page's allocated PTE is in the TLB (it was just allocated);");
    println!(
        "# first_touch_walk: it was evicted (1000 pages allocated earlier), so a walk finds it"
    );
    println!(
        "{:<6} {:>6} {:>8} {:>9} {:>16} {:>17}",
        "op", "bytes", "tlb_hit", "tlb_miss", "first_touch_tlb", "first_touch_walk"
    );
    for (op, sizes) in [
        ("read", &[16u32, 64, 256, 1024][..]),
        ("write", &[16u32, 64, 256, 1024, 4096][..]),
    ] {
        for &len in sizes {
            // First touch: a fresh page. Hit: the same page again. Miss: the page after 70 other
            // pages evicted it from the TLB (its PTE stays valid).
            let p = page(1);
            let ft = if op == "read" {
                c.read(p, len).1
            } else {
                c.write(p, len).1[0]
            };
            let fresh_page = c.alloc(1);
            let ft_tlb = if op == "read" {
                c.read(fresh_page, len).1
            } else {
                c.write(fresh_page, len).1[0]
            };
            let hit = if op == "read" {
                c.read(p, len).1
            } else {
                c.write(p, len).1[0]
            };
            let others = page(70);
            for k in 0..70 {
                c.read(others + k * PAGE, 16);
            }
            let miss = if op == "read" {
                c.read(p, len).1
            } else {
                c.write(p, len).1[0]
            };
            println!("{op:<6} {len:>6} {hit:>8} {miss:>9} {ft_tlb:>16} {ft:>17}");
        }
    }

    // Back-to-back: offer 256 packets at once and count cycles per packet.
    println!("# back-to-back (256, then 512 packets offered at once, TLB warm): cycles per packet with the fill, steady-state II (what 256 more packets cost) and its goodput at {CORE_CLOCK_MHZ} MHz");
    let warm = page(1);
    c.read(warm, 16);
    // Write packets carry at most 1 KiB (longer requests are 1 KiB packets, so a 4 KiB write
    // streams at the 1 KiB rate); long reads below.
    for (op, len) in [
        ("read", 16u32),
        ("read", 64),
        ("read", 256),
        ("read", 1024),
        ("write", 16),
        ("write", 64),
        ("write", 256),
        ("write", 1024),
    ] {
        // Cycles for a burst of `n` packets offered at once (the idle tail after the last
        // packet is not part of the throughput).
        let mut burst = |n: u32| {
            let pkts: Vec<(Route, Vec<u8>)> = (0..n)
                .map(|i| {
                    let id = c.next();
                    let h = if op == "read" {
                        Header {
                            total_len: len,
                            ..c.req(Opcode::Read, id, warm)
                        }
                        .to_packet(&[])
                    } else {
                        Header {
                            total_len: len,
                            ..c.req(Opcode::Write, id, warm)
                        }
                        .to_packet(&vec![i as u8; len as usize])
                    };
                    (Route::default(), h)
                })
                .collect();
            let before = c.node.cycle_stats().cycles;
            let mut out = Vec::new();
            c.node.handle_burst(&pkts, &mut out);
            assert_eq!(out.len(), n as usize);
            c.node.cycle_stats().cycles - before - clio_sim::cosim::IDLE_CYCLES
        };
        let c256 = burst(256);
        let c512 = burst(512);
        // Per packet with the pipeline's fill and drain; the steady-state II is what 256 more
        // packets cost (the fill and drain cancel out).
        let cpp = c256 as f64 / 256.0;
        let ii = (c512 as f64 - c256 as f64) / 256.0;
        let gbps = len as f64 * 8.0 * CORE_CLOCK_MHZ as f64 * 1e6 / ii / 1e9;
        println!("{op:<6} {len:>6} B: {cpp:>6.1} cycles/packet (256, fill included), II {ii:>5.2} (512 - 256), goodput {gbps:>6.2} Gbps at {CORE_CLOCK_MHZ} MHz");
    }

    // A TLB-miss stream: 64 B reads cycling over 128 mapped pages, twice the TLB's 64 entries,
    // so under LRU every read misses and walks (one bucket burst each).
    let cold = page(128);
    for k in 0..128 {
        c.read(cold + k * PAGE, 16);
    }
    let burst = |c: &mut Client, reqs: Vec<(Opcode, u64, u32)>| -> f64 {
        let n = reqs.len();
        let pkts: Vec<(Route, Vec<u8>)> = reqs
            .into_iter()
            .map(|(op, va, len)| {
                let id = c.next();
                let h = Header {
                    total_len: len,
                    ..c.req(op, id, va)
                };
                let payload = if op == Opcode::Write {
                    vec![id as u8; len as usize]
                } else {
                    vec![]
                };
                (Route::default(), h.to_packet(&payload))
            })
            .collect();
        let before = c.node.cycle_stats().cycles;
        let mut out = Vec::new();
        c.node.handle_burst(&pkts, &mut out);
        assert_eq!(out.len(), n);
        assert!(out
            .iter()
            .all(|(_, b)| parse_verified(b).is_ok_and(|(h, _)| h.status == Status::Ok)));
        (c.node.cycle_stats().cycles - before - clio_sim::cosim::IDLE_CYCLES) as f64 / n as f64
    };
    let misses: Vec<_> = (0..256u64)
        .map(|i| (Opcode::Read, cold + (i % 128) * PAGE + 64, 64))
        .collect();
    let cpp = burst(&mut c, misses);
    println!(
        "read       64 B, every read a TLB miss (128 pages cycling):      {cpp:>6.1} cycles/packet"
    );
    // A mixed stream on warm pages: reads and writes of 16..256 B in a seeded random order.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mixed: Vec<_> = (0..512u64)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let op = if x & 1 == 0 {
                Opcode::Read
            } else {
                Opcode::Write
            };
            let len = [16u32, 64, 64, 256][(x >> 1) as usize % 4];
            (op, warm + (i % 16) * 512, len)
        })
        .collect();
    let cpp = burst(&mut c, mixed);
    println!("mixed  16-256 B, reads and writes at random (TLB warm):            {cpp:>6.1} cycles/packet");

    // Long reads: one request of up to 1 MiB, answered one packet per KiB (each packet
    // translated, read and sent in turn). Cycles from the request to the last response beat.
    println!("# long reads (one request each, pages warm in the TLB where they fit): cycles to the last response beat, goodput at {CORE_CLOCK_MHZ} MHz");
    let span = page(17);
    for k in 0..17 {
        c.read(span + k * PAGE, 16);
    }
    for len in [1024u32, 4096, 64 << 10, 1 << 20] {
        let run = |c: &mut Client, n: usize| {
            let pkts: Vec<(Route, Vec<u8>)> = (0..n)
                .map(|_| {
                    let id = c.next();
                    let h = Header {
                        total_len: len,
                        ..c.req(Opcode::Read, id, span + 64)
                    };
                    (Route::default(), h.to_packet(&[]))
                })
                .collect();
            let before = c.node.cycle_stats().cycles;
            let mut out = Vec::new();
            c.node.handle_burst(&pkts, &mut out);
            assert_eq!(out.len(), n * packet_count(len) as usize);
            assert!(out
                .iter()
                .all(|(_, b)| parse_verified(b).is_ok_and(|(h, _)| h.status == Status::Ok)));
            c.node.cycle_stats().cycles - before - clio_sim::cosim::IDLE_CYCLES
        };
        let one = run(&mut c, 1);
        let burst = if len <= 64 << 10 { 16 } else { 2 };
        let many = run(&mut c, burst) as f64 / burst as f64;
        let gbps = |cyc: f64| len as f64 * 8.0 * CORE_CLOCK_MHZ as f64 * 1e6 / cyc / 1e9;
        println!(
            "read {len:>8} B: alone {one:>7} cycles ({:>6.2} Gbps); {burst} back to back {many:>9.1} cycles each ({:>6.2} Gbps), {:.1} cycles/packet",
            gbps(one as f64),
            gbps(many),
            many / packet_count(len) as f64
        );
    }

    processes(&mut c);

    // Long conformance run against the model, and simulation speed.
    println!("# conformance: {requests} seeded random requests into the model and the RTL");
    let mut model = CBoard::new(&cfg()).expect("model");
    let mut rtl = RtlBoard::new(&cfg(), DRAM_LATENCY, None).expect("RTL node");
    let mut s = Stream::new(2026, PAGE);
    let mut want = Vec::new();
    s.setup(&mut model, 4, &mut want);
    let (mut got, mut sent) = (Vec::new(), 0u64);
    for (r, b) in std::mem::take(&mut s.sent) {
        rtl.handle(&r, &b, &mut got);
        rtl.service(&mut got);
    }
    let t = Instant::now();
    let c0 = rtl.cycle_stats().cycles;
    let mut mismatches = 0u64;
    let mut compared = 0u64;
    // Time inside the RTL node (Verilator model, harness, DRAM model, slow path), without the
    // behavioural model and the stream generator that run in the same loop.
    let mut rtl_secs = 0f64;
    for i in 0..requests {
        s.step(&mut model, &mut want);
        let t_rtl = Instant::now();
        for (r, b) in std::mem::take(&mut s.sent) {
            sent += 1;
            rtl.handle(&r, &b, &mut got);
            rtl.service(&mut got);
        }
        rtl_secs += t_rtl.elapsed().as_secs_f64();
        let n = want.len().min(got.len());
        mismatches += want[..n]
            .iter()
            .zip(&got[..n])
            .filter(|(a, b)| a != b)
            .count() as u64;
        compared += n as u64;
        want.drain(..n);
        got.drain(..n);
        if (i + 1) % 100_000 == 0 {
            eprintln!(
                "  {} requests, {} packets, {mismatches} mismatches, {:.0} s",
                i + 1,
                sent,
                t.elapsed().as_secs_f64()
            );
        }
    }
    let cycles = rtl.cycle_stats().cycles - c0;
    let secs = t.elapsed().as_secs_f64();
    let images_equal = model.peek(0, 256 << 20) == rtl.peek(0, 256 << 20);
    println!(
        "{requests} requests ({sent} packets): {compared} responses compared, {mismatches} differ, {} left over; memory images {}",
        want.len() + got.len(),
        if images_equal { "identical" } else { "DIFFER" }
    );
    println!(
        "simulation speed: {cycles} cycles in {secs:.1} s = {:.0} cycles/s (everything in the loop); \
         {:.0} cycles/s inside the RTL node ({rtl_secs:.1} s: model, harness, DRAM, slow path)",
        cycles as f64 / secs,
        cycles as f64 / rtl_secs
    );
    // Rule coverage (proto::rules): how often each rule decided an answer of the model, in
    // the mutant references (`conformance_model::rules_exercised_by_the_streams` fails for a
    // rule they never exercise) and in this run's random stream.
    let mut refs = clio_sim::model::coverage::Coverage::default();
    for r in clio_sim::conformance::references() {
        refs.add(&r.model.coverage());
    }
    let run = model.coverage();
    println!("# rule coverage: answers each rule decided (mutant references | this run)");
    for &rule in clio_proto::rules::Rule::ALL {
        println!(
            "{:>8} | {:>9}  {}",
            refs.count(rule),
            run.count(rule),
            rule.name()
        );
    }
    let names = |c: &clio_sim::model::coverage::Coverage| -> Vec<&str> {
        c.unexercised().iter().map(|r| r.name()).collect()
    };
    println!(
        "rules the mutant references never exercised: {:?}",
        names(&refs)
    );
    println!(
        "rules this run's random stream never exercised: {:?}",
        names(&run)
    );
    println!("total {:.1} s", t0.elapsed().as_secs_f64());
}

/// One process of the many-processes figure: its own RAS (its first member) and one page.
struct Process {
    me: Member,
    va: u64,
}

/// Latency and throughput against the number of processes on the node (the paper's Figure 4:
/// Clio keeps no per-connection state, so only the TLB's reach should show). Each process is
/// its own RAS with one page, touched once; for N processes, 16 B reads go to a
/// pseudo-random one of the first N each (latency: one at a time; throughput: 512 offered at
/// once, in the same order), after one read of each of the N (warm). Past the TLB's 64
/// entries the reads start to miss and walk. The largest N is every client id the node has
/// left (1,023 in all, one row of the idempotence table each, less the bench's earlier
/// members), registered until the node answers TableFull.
fn processes(c: &mut Client) {
    println!("# processes (each its own RAS, PID and page; 16 B reads to a pseudo-random process of N; the paper's Figure 4)");
    let mut procs = Vec::with_capacity(clio_proto::consts::RING_MEMBERS);
    for i in 0.. {
        let me = match c.try_register(0x5eed_0000 + i as u64) {
            Ok(m) => m,
            Err(Status::TableFull) => break,
            Err(s) => panic!("register of process {i}: {s:?}"),
        };
        let p = Process {
            me,
            va: c.alloc_as(&me, 1),
        };
        let id = c.next();
        let (h, _) = c.call(read_of(&p, id, 0));
        assert_eq!(h.status, Status::Ok, "first touch of process {i}");
        procs.push(p);
    }
    println!(
        "{:>9} {:>14} {:>11} {:>11} {:>22}",
        "processes", "median cycles", "median ns", "p99 cycles", "back to back cyc/pkt"
    );
    let most = procs.len();
    for n in [1usize, 4, 16, 64, 256, most] {
        // A fixed pseudo-random order of processes (the same for both measurements).
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let order: Vec<(usize, u64)> = (0..512u64)
            .map(|k| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                ((x % n as u64) as usize, (k % 16) * 64)
            })
            .collect();
        // Warm: each of the N read once (up to the TLB's reach they stay translated).
        for p in &procs[..n] {
            let id = c.next();
            let (h, _) = c.call(read_of(p, id, 0));
            assert_eq!(h.status, Status::Ok);
        }
        let mut lat: Vec<u64> = order[..256]
            .iter()
            .map(|&(i, off)| {
                let id = c.next();
                let (h, l) = c.call(read_of(&procs[i], id, off));
                assert_eq!(h.status, Status::Ok);
                l
            })
            .collect();
        lat.sort_unstable();
        let pkts: Vec<(Route, Vec<u8>)> = order
            .iter()
            .map(|&(i, off)| {
                let id = c.next();
                (Route::default(), read_of(&procs[i], id, off))
            })
            .collect();
        let before = c.node.cycle_stats().cycles;
        let mut out = Vec::new();
        c.node.handle_burst(&pkts, &mut out);
        assert_eq!(out.len(), pkts.len());
        assert!(out
            .iter()
            .all(|(_, b)| parse_verified(b).is_ok_and(|(h, _)| h.status == Status::Ok)));
        let cpp = (c.node.cycle_stats().cycles - before - clio_sim::cosim::IDLE_CYCLES) as f64
            / pkts.len() as f64;
        let median = lat[lat.len() / 2];
        let p99 = lat[lat.len() * 99 / 100];
        println!(
            "{n:>9} {median:>14} {:>11.0} {p99:>11} {cpp:>22.1}",
            median as f64 * 1000.0 / CORE_CLOCK_MHZ as f64
        );
    }
}

/// A 16 B read of `p`'s page at `off`.
fn read_of(p: &Process, id: u32, off: u64) -> Vec<u8> {
    Header {
        total_len: 16,
        ..p.me.req(Opcode::Read, id, p.va + off)
    }
    .to_packet(&[])
}
