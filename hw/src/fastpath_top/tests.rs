//! The fast path's testbench: the top with a DRAM model, a network and a slow-path ring
//! around it, every request class end to end.

use super::*;
use crate::bench::Bench;
use crate::tb::{AxiDram, SparseMemory, StreamSink, StreamSource};
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::frame::Route;
use clio_proto::header::{Packet, HEADER_LEN};
use clio_proto::pt_hash::bucket_index;
use clio_proto::pte::{Pte, PERM_READ, PERM_WRITE};
use clio_proto::ring::Descriptor;
use clio_proto::{Header, Opcode, Status};
use std::collections::VecDeque;

const SHIFT: u32 = 12;
const BUCKET_BITS: u32 = 3;
const PS: u64 = 1 << SHIFT;

/// The top with a DRAM model, a network and a slow-path ring around it.
struct Env {
    /// Boxed: the top's simulation state is large, and a test thread's stack is not.
    b: Box<Bench<FastpathTop>>,
    /// DRAM: reads after 5 cycles, B responses 3 cycles after the last W beat.
    dram: AxiDram<SparseMemory>,
    rx: StreamSource<Route>,
    route: Route,
    tx: Vec<(Route, Vec<u8>)>,
    tx_sink: StreamSink<Route>,
    sp_rx: Vec<Descriptor>,
    sp_tx: VecDeque<[u8; 128]>,
    last_rx_cycle: u64,
    first_tx_cycle: Option<u64>,
    /// AR and AW handshakes so far.
    ars: u64,
    aws: u64,
    /// The persist handshake: answered this many cycles after it is raised, with
    /// `persist_error` when `persist_fails`.
    persist_delay: u64,
    persist_fails: bool,
    persist_at: Option<u64>,
    /// Persist requests answered: (cycle, address, length, B responses still due then).
    persists: Vec<(u64, u64, u64, usize)>,
    /// Back-pressure from the network: `tx_ready` only every `tx_every`-th cycle (0: always).
    tx_every: u64,
    /// Cycles `run` waits for the node to be idle before it reports a hang.
    budget: u64,
}

impl Env {
    fn new() -> Env {
        // Built on a thread with a large stack: `FastpathTop::default()` (with the Clio-KV
        // unit) needs more than a test thread's 2 MiB while it is assembled by value.
        let mut b = std::thread::scope(|s| {
            std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn_scoped(s, || Box::new(Bench::new(FastpathTop::default())))
                .expect("a thread to build the top")
                .join()
                .expect("the top built")
        });
        b.uut.cfg_page_shift.next = (SHIFT as u64).to_bits();
        b.uut.cfg_bucket_mask.next = ((1u64 << BUCKET_BITS) - 1).to_bits();
        b.uut.tx_ready.next = true;
        b.uut.m_axi_arready.next = true;
        b.uut.m_axi_awready.next = true;
        b.uut.m_axi_wready.next = true;
        b.uut.sp_rx_ready.next = true;
        b.uut.sp_rx_room.next = 100u16.to_bits();
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        // The key table's zero sweep.
        for _ in 0..crate::key_table::SWEEP_CYCLES {
            b.tick();
        }
        b.settle();
        assert!(b.uut.keys.ready.val());
        let route = Route {
            peer_port: 7777,
            local_port: 48850,
            ..Route::default()
        };
        Env {
            b,
            dram: AxiDram::new(SparseMemory::default(), 5, 3),
            rx: StreamSource::default(),
            route,
            tx: vec![],
            tx_sink: StreamSink::default(),
            sp_rx: vec![],
            sp_tx: VecDeque::new(),
            last_rx_cycle: 0,
            first_tx_cycle: None,
            ars: 0,
            aws: 0,
            persist_delay: 0,
            persist_fails: false,
            persist_at: None,
            persists: vec![],
            tx_every: 0,
            budget: 3000,
        }
    }

    fn send(&mut self, frame: &[u8]) {
        self.rx.push(self.route, frame.to_vec());
    }

    fn cycle(&mut self) {
        let now = self.b.cycle;
        let u = &mut self.b.uut;
        // Inputs.
        match self.rx.beat() {
            Some(beat) => {
                u.rx_valid.next = true;
                // Lanes beyond the frame carry garbage (the keep mask says so).
                let mut full = beat.data.to_vec();
                full.resize(64, 0xC3);
                u.rx_data.next = bytes_to_bits(&full);
                u.rx_last.next = beat.last;
                u.rx_keep.next = beat.keep.to_bits();
                u.rx_route.next = bytes_to_bits(&beat.meta.to_bytes());
            }
            None => u.rx_valid.next = false,
        }
        let axi = self.dram.drive(now);
        u.m_axi_rvalid.next = axi.r_valid;
        u.m_axi_rdata.next = bytes_to_bits(self.dram.r_data());
        u.m_axi_rlast.next = axi.r_last;
        u.m_axi_bvalid.next = axi.b_valid;
        u.sp_tx_valid.next = !self.sp_tx.is_empty();
        if let Some(d) = self.sp_tx.front() {
            u.sp_tx_desc.next = bytes_to_bits(d);
        }
        u.tx_ready.next = self.tx_every == 0 || now.is_multiple_of(self.tx_every);
        let persisted = self.persist_at.is_some_and(|t| t <= now);
        u.persist_done.next = persisted;
        u.persist_error.next = persisted && self.persist_fails;
        self.b.settle();
        let u = &mut self.b.uut;
        // Handshakes.
        if u.rx_valid.val() && u.rx_ready.val() && self.rx.accept() {
            self.last_rx_cycle = now;
        }
        if u.m_axi_rvalid.val() && u.m_axi_rready.val() {
            self.dram.r_ready();
        }
        if u.m_axi_bvalid.val() && u.m_axi_bready.val() {
            self.dram.b_ready();
        }
        if u.m_axi_arvalid.val() {
            self.ars += 1;
            self.dram.ar(
                now,
                u.m_axi_araddr.val().to_u64(),
                u.m_axi_arlen.val().to_u8(),
            );
        }
        if u.m_axi_awvalid.val() {
            self.aws += 1;
            self.dram.aw(
                now,
                u.m_axi_awaddr.val().to_u64(),
                u.m_axi_awlen.val().to_u8(),
            );
        }
        if u.m_axi_wvalid.val() {
            let data: [u8; 64] = bits_to_bytes(u.m_axi_wdata.val()).try_into().unwrap();
            let strb = u.m_axi_wstrb.val().to_u64();
            self.dram.w(now, &data, strb, u.m_axi_wlast.val());
            assert_eq!(self.dram.violations(), 0, "AXI write rules broken");
        }
        if u.tx_valid.val() && u.tx_ready.val() {
            self.first_tx_cycle.get_or_insert(now);
            let data: [u8; 64] = bits_to_bytes(u.tx_data.val()).try_into().unwrap();
            let route = || {
                let r: [u8; 32] = bits_to_bytes(u.tx_route.val()).try_into().unwrap();
                Route::from_bytes(&r).unwrap()
            };
            let keep = u.tx_keep.val().to_u64();
            if let Some(frame) = self.tx_sink.take(&data, keep, u.tx_last.val(), route) {
                self.tx.push(frame);
            }
        }
        if u.sp_rx_valid.val() {
            let d: [u8; 128] = bits_to_bytes(u.sp_rx_desc.val()).try_into().unwrap();
            self.sp_rx
                .push(Descriptor::decode(&d).expect("valid RX descriptor"));
        }
        if u.sp_tx_valid.val() && u.sp_tx_ready.val() {
            self.sp_tx.pop_front();
        }
        if u.persist_valid.val() {
            if persisted {
                let due = self.dram.writes_in_flight();
                self.persists.push((
                    now,
                    u.persist_addr.val().to_u64(),
                    u.persist_len.val().to_u64(),
                    due,
                ));
                self.persist_at = None;
            } else if self.persist_at.is_none() {
                self.persist_at = Some(now + self.persist_delay);
            }
        }
        self.b.tick();
    }

    /// Run until the node is idle again with nothing queued.
    fn run(&mut self) {
        let start = self.b.cycle;
        loop {
            self.cycle();
            let u = &self.b.uut;
            let idle = u.state.q.val() == State::Idle
                && !u.xmit.busy.val()
                && !u.wd.busy.val()
                && u.rd.is_idle()
                && u.ingest.is_idle();
            if idle && self.rx.is_empty() && self.sp_tx.is_empty() && !self.dram.busy() {
                break;
            }
            assert!(
                self.b.cycle - start < self.budget,
                "node hung in {:?} every write has its B: {} in flight {}",
                self.b.uut.state.q.val(),
                self.b.uut.order.fence_clear.val(),
                self.dram.writes_in_flight()
            );
        }
    }

    /// One request: its responses, and the cycles from its last beat to its first response beat.
    fn request(&mut self, frame: &[u8]) -> (Vec<Vec<u8>>, u64) {
        self.first_tx_cycle = None;
        let n = self.tx.len();
        self.send(frame);
        self.run();
        let lat = self
            .first_tx_cycle
            .map(|t| t - self.last_rx_cycle)
            .unwrap_or(0);
        let out = self.tx[n..].iter().map(|(r, p)| {
            assert_eq!(*r, self.route);
            p.clone()
        });
        (out.collect(), lat)
    }

    /// Program the key table (KEY_WRITE), as the slow path does at Register.
    fn grant(&mut self, pid: u16, key: u64) {
        self.sp_tx
            .push_back(Descriptor::KeyWrite { pid, key }.encode());
        self.run();
    }

    /// DRAM reads and writes the fast path has issued so far.
    fn dram_traffic(&self) -> (u64, u64) {
        (self.ars, self.aws)
    }

    fn put_pte(&mut self, pte: Pte) {
        let bucket = bucket_index(pte.pid, pte.vpn, BUCKET_BITS);
        let slot = (0..16)
            .find(|s| {
                self.dram.mem().bytes(bucket * 256 + s * 16, 1)[0] == 0
                    && self.dram.mem().bytes(bucket * 256 + s * 16 + 7, 1)[0] == 0
            })
            .unwrap();
        self.sp_tx.push_back(
            Descriptor::PteWrite {
                bucket,
                slot: slot as u32,
                pte,
            }
            .encode(),
        );
        self.run();
    }
}

fn resp(h: &Header, s: Status, payload: &[u8]) -> Vec<u8> {
    h.response_to(s).to_packet(payload)
}

/// The key the tests give a pid's RAS.
fn key_of(pid: u16) -> u64 {
    0x5EC2_E700_0000_0000 ^ (pid as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Client id of the requests the tests send (the RAS's first member).
const CLIENT: u16 = 0x0101;

/// A request of `op` with its RAS's credentials.
fn req(op: Opcode, pid: u16, id: u32, va: u64) -> Header {
    Header::request(op, pid, id, va).with_credentials(key_of(pid), CLIENT)
}

fn write_req(pid: u16, id: u32, va: u64, data: &[u8]) -> (Header, Vec<u8>) {
    let mut h = req(Opcode::Write, pid, id, va);
    h.total_len = data.len() as u32;
    (h, h.to_packet(data))
}

fn read_req(pid: u16, id: u32, va: u64, len: u32) -> (Header, Vec<u8>) {
    let mut h = req(Opcode::Read, pid, id, va);
    h.total_len = len;
    (h, h.to_packet(&[]))
}

/// Reads, writes (page-straddling, first touch), faults, errors, NACK, atomics with the
/// idempotence ring, slow-path requests and replies: every response byte-exact with
/// `Header::response_to(..).to_packet(..)`, DRAM and page table as `proto` says.
#[test]
fn requests_end_to_end() {
    let mut e = Env::new();
    let pid = 3;
    e.grant(pid, key_of(pid));
    // Page table through the slow-path TX ring: vpn 0x10 valid at frame 5, 0x11 allocated
    // (first touch), 0x12 read-only; frame 9 in the free-page FIFO.
    e.put_pte(Pte {
        used: true,
        valid: true,
        perms: PERM_READ | PERM_WRITE,
        pid,
        vpn: 0x10,
        pfn: 5,
    });
    e.put_pte(Pte::allocated(pid, 0x11, PERM_READ | PERM_WRITE));
    e.put_pte(Pte {
        used: true,
        valid: true,
        perms: PERM_READ,
        pid,
        vpn: 0x12,
        pfn: 7,
    });
    e.sp_tx.push_back(Descriptor::FreePage { pfn: 9 }.encode());
    e.run();
    let mut mem = std::collections::HashMap::<u64, u8>::new();
    let pa = |va: u64| -> u64 {
        match va >> SHIFT {
            0x10 => 5 * PS + va % PS,
            0x11 => 9 * PS + va % PS,
            _ => unreachable!(),
        }
    };
    // A write straddling into the untouched page: fault maps frame 9.
    let data: Vec<u8> = (0..700u32).map(|i| (i * 13 + 1) as u8).collect();
    let va = 0x10 * PS + PS - 300 + 5;
    let (h, f) = write_req(pid, 1, va, &data);
    let (out, _) = e.request(&f);
    assert_eq!(out, vec![resp(&h, Status::Ok, &[])]);
    for (i, d) in data.iter().enumerate() {
        mem.insert(pa(va + i as u64), *d);
    }
    assert_eq!(
        e.sp_rx,
        vec![Descriptor::PageMapped {
            pid,
            vpn: 0x11,
            pfn: 9
        }]
    );
    assert_eq!(e.b.uut.stat_page_faults.val().to_u32(), 1);
    // The PTE was written back valid with frame 9.
    let bucket = bucket_index(pid, 0x11, BUCKET_BITS);
    let img: [u8; 256] = e.dram.mem().bytes(bucket * 256, 256).try_into().unwrap();
    match clio_proto::pte::bucket_lookup(&img, pid, 0x11) {
        clio_proto::pte::BucketLookup::Found(_, p) => assert!(p.valid && p.pfn == 9),
        _ => panic!("PTE lost"),
    }
    // Multi-packet write: packet 1 of a 1500-byte request lands at va + 1024.
    let big: Vec<u8> = (0..1500u32).map(|i| (i * 7 + 3) as u8).collect();
    let va2 = 0x10 * PS + 0x123;
    let mut h = req(Opcode::Write, pid, 2, va2);
    h.total_len = 1500;
    h.pkt_count = 2;
    h.pkt_index = 1;
    let f = h.to_packet(&big[1024..]);
    let (out, _) = e.request(&f);
    assert_eq!(out, vec![resp(&h, Status::Ok, &[])]);
    for (i, d) in big[1024..].iter().enumerate() {
        mem.insert(pa(va2 + 1024 + i as u64), *d);
    }
    for (a, d) in &mem {
        assert_eq!(e.dram.mem().bytes(*a, 1)[0], *d, "DRAM byte at {a:#x}");
    }
    // Reads at several alignments, straddling, up to 1024 bytes.
    for (id, va, len) in [
        (10u32, va, 700u32),
        (11, va + 3, 1024),
        (12, 0x10 * PS + 0x40, 16),
        (13, 0x11 * PS - 64, 128),
        (14, 0x10 * PS + 0x531, 1),
    ] {
        let (h, f) = read_req(pid, id, va, len);
        let (out, _) = e.request(&f);
        let want: Vec<u8> = (0..len as u64)
            .map(|i| {
                *mem.get(&pa(va + i))
                    .unwrap_or(&e.dram.mem().bytes(pa(va + i), 1)[0])
            })
            .collect();
        let mut r = h.response_to(Status::Ok);
        r.payload_len = len as u16;
        assert_eq!(out, vec![r.to_packet(&want)], "read {id}");
    }
    // Errors: permission, unmapped, too long, corrupted (NACK), bad segmentation.
    let (h, f) = write_req(pid, 20, 0x12 * PS, &[1, 2, 3]);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Permission, &[])]);
    let (h, f) = read_req(pid, 21, 0x20 * PS, 8);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Unmapped, &[])]);
    let (h, f) = read_req(pid, 22, 0x10 * PS, clio_proto::consts::MAX_REQUEST_LEN + 1);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::BadRequest, &[])]);
    let (_h, mut f) = write_req(pid, 23, 0x10 * PS, &[9; 100]);
    f[HEADER_LEN + 50] ^= 4;
    let mut nack = f[..HEADER_LEN].to_vec();
    nack[field::KEY.start..HEADER_LEN].fill(0);
    nack[2] = Status::Nack as u8;
    nack[3] = 1;
    nack[10] = 0;
    nack[11] = 0;
    Packet::new_unchecked(&mut nack[..]).fill_checksum();
    assert_eq!(e.request(&f).0, vec![nack]);
    assert_eq!(e.b.uut.stat_nacks.val().to_u32(), 1);
    let (mut h, _) = write_req(pid, 24, 0x10 * PS, &[9; 100]);
    h.pkt_count = 2;
    assert_eq!(
        e.request(&h.to_packet(&[9; 100])).0,
        vec![resp(&h, Status::BadRequest, &[])]
    );
    assert_eq!(
        e.dram.mem().bytes(pa(0x10 * PS), 1)[0],
        *mem.get(&pa(0x10 * PS)).unwrap_or(&0)
    );
    // Atomics: FAA executed once, its retry replayed from the ring, CAS, unaligned.
    let word = 0x10 * PS + 0x208;
    let old = u64::from_le_bytes(e.dram.mem().bytes(pa(word), 8).try_into().unwrap());
    let mut faa = req(Opcode::FetchAdd, pid, 30, word);
    faa.arg0 = 5;
    let want = Header {
        arg0: old,
        ..faa.response_to(Status::Ok)
    }
    .to_packet(&[]);
    assert_eq!(e.request(&faa.to_packet(&[])).0, vec![want.clone()]);
    assert_eq!(
        e.request(&faa.to_packet(&[])).0,
        vec![want],
        "retry must be replayed"
    );
    assert_eq!(
        u64::from_le_bytes(e.dram.mem().bytes(pa(word), 8).try_into().unwrap()),
        old.wrapping_add(5)
    );
    let mut cas = req(Opcode::CompareAndSwap, pid, 31, word);
    cas.arg0 = old.wrapping_add(5);
    cas.arg1 = 77;
    assert_eq!(
        e.request(&cas.to_packet(&[])).0,
        vec![Header {
            arg0: old.wrapping_add(5),
            ..cas.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    assert_eq!(
        u64::from_le_bytes(e.dram.mem().bytes(pa(word), 8).try_into().unwrap()),
        77
    );
    let mut ack = req(Opcode::CnAck, pid, 32, 0);
    ack.arg0 = 30;
    assert_eq!(
        e.request(&ack.to_packet(&[])).0,
        vec![resp(&ack, Status::Ok, &[])]
    );
    let tas = req(Opcode::TestAndSet, pid, 33, word + 4);
    assert_eq!(
        e.request(&tas.to_packet(&[])).0,
        vec![resp(&tas, Status::BadRequest, &[])]
    );
    let fence = req(Opcode::Fence, pid, 34, 0);
    assert_eq!(
        e.request(&fence.to_packet(&[])).0,
        vec![resp(&fence, Status::Ok, &[])]
    );
    // Slow path: ALLOC becomes a REQUEST descriptor; the REPLY goes out along its route.
    e.sp_rx.clear();
    let mut alloc = req(Opcode::Alloc, pid, 40, 0);
    alloc.arg0 = 1 << 22;
    assert!(e.request(&alloc.to_packet(&[])).0.is_empty());
    // The descriptor carries the client, never the key.
    assert_eq!(
        e.sp_rx,
        vec![Descriptor::Request {
            route: e.route,
            header: Header { key: 0, ..alloc }
        }]
    );
    let reply = Header {
        va: 0x40_0000,
        ..alloc.response_to(Status::Ok)
    };
    e.sp_tx.push_back(
        Descriptor::Reply {
            route: e.route,
            header: reply,
        }
        .encode(),
    );
    let n = e.tx.len();
    e.run();
    assert_eq!(e.tx[n..].to_vec(), vec![(e.route, reply.to_packet(&[]))]);
    e.b.uut.sp_rx_room.next = 32u16.to_bits();
    assert_eq!(
        e.request(&alloc.to_packet(&[])).0,
        vec![resp(&alloc, Status::RetryLater, &[])]
    );
}

/// Cycles from a read's last RX beat to its first TX beat for a TLB hit, a TLB miss
/// whose walk finds a valid PTE, and a first-touch page fault (DRAM latency 5).
#[test]
fn page_fault_latency_is_constant() {
    let mut e = Env::new();
    let pid = 1;
    e.grant(pid, key_of(pid));
    // vpn 0..4 and 12..16 mapped, 4..12 allocated (first touch faults). PTE_WRITE puts
    // each in the TLB; 8..16 are then invalidated there, so they need a walk.
    for vpn in (0..4u64).chain(12..16) {
        e.put_pte(Pte {
            used: true,
            valid: true,
            perms: 3,
            pid,
            vpn,
            pfn: 20 + vpn,
        });
    }
    for vpn in 4..12u64 {
        e.put_pte(Pte::allocated(pid, vpn, 3));
    }
    for vpn in 8..16u64 {
        e.sp_tx
            .push_back(Descriptor::TlbInvalidate { pid, vpn }.encode());
    }
    for pfn in 40..48 {
        e.sp_tx.push_back(Descriptor::FreePage { pfn }.encode());
    }
    e.run();
    let mut lat = |vpn: u64, id: u32| e.request(&read_req(pid, id, vpn * PS + 64, 64).1).1;
    let hit: Vec<u64> = (0..4).map(|v| lat(v, v as u32)).collect();
    let fault: Vec<u64> = (4..8).map(|v| lat(v, 10 + v as u32)).collect();
    let walk: Vec<u64> = (12..16).map(|v| lat(v, 20 + v as u32)).collect();
    let walk_fault: Vec<u64> = (8..12).map(|v| lat(v, 30 + v as u32)).collect();
    let hit2: Vec<u64> = (4..16).map(|v| lat(v, 40 + v as u32)).collect();
    println!(
        "latency (cycles, last RX beat -> first TX beat): TLB hit {hit:?}, first touch with \
         the allocated PTE in the TLB {fault:?}, walk to a valid PTE {walk:?}, first touch \
         after a walk {walk_fault:?}, hits afterwards {hit2:?}"
    );
    assert!(
        hit.iter().chain(&hit2).all(|&h| h == hit[0]),
        "hit latency varies"
    );
    assert!(fault.iter().all(|&f| f == fault[0]), "fault latency varies");
    assert!(walk.iter().all(|&w| w == walk[0]), "walk latency varies");
    assert!(
        walk_fault.iter().all(|&f| f == walk_fault[0]),
        "fault-after-walk latency varies"
    );
    assert_eq!(
        fault[0] - hit[0],
        FAULT_OVER_HIT_CYCLES,
        "fault cost over a TLB hit (allocated PTE in the TLB)"
    );
    assert!(FAULT_OVER_HIT_CYCLES <= 3);
    assert_eq!(
        walk_fault[0] - walk[0],
        FAULT_EXTRA_CYCLES,
        "fault cost over a walk that finds a valid PTE"
    );
    assert_eq!(
        walk[0] - hit[0],
        WALK_EXTRA_CYCLES,
        "walk cost over a TLB hit at DRAM latency 5"
    );
}

/// A mapped page (frame 5, read/write) for `pid` at vpn 0x10 with a known word at
/// `WORD`, the RAS's key programmed.
const WORD: u64 = 0x10 * PS + 0x100;
fn env_with_page(pids: &[u16]) -> Env {
    let mut e = Env::new();
    for (i, &pid) in pids.iter().enumerate() {
        e.grant(pid, key_of(pid));
        e.put_pte(Pte {
            used: true,
            valid: true,
            perms: PERM_READ | PERM_WRITE,
            pid,
            vpn: 0x10,
            pfn: 5 + i as u64,
        });
    }
    e
}

/// Map `pid`'s page 0x11 too (frame 9, read/write), after [`env_with_page`]: VAs
/// `0x10 * PS .. 0x12 * PS` are one range across a page boundary. (Takes the `Env` by
/// reference: it is large, and a second frame holding one overflows a test thread's stack.)
fn map_second_page(e: &mut Env, pid: u16) {
    e.put_pte(Pte {
        used: true,
        valid: true,
        perms: PERM_READ | PERM_WRITE,
        pid,
        vpn: 0x11,
        pfn: 9,
    });
}

fn word(e: &Env, pa: u64) -> u64 {
    u64::from_le_bytes(e.dram.mem().bytes(pa, 8).try_into().unwrap())
}

/// Requests with a valid CRC whose key does not open their pid's RAS: a forged key, a
/// missing key, another RAS's pid, pid 0, a pid beyond the table, a removed RAS. Each is
/// answered DENIED (payload-less, like any error response, key and client zero) and
/// nothing executes: no DRAM access, no translation, no ring entry, no slow-path
/// descriptor. Parse failures still come first; Register needs no key.
#[test]
fn wrong_keys_are_denied_and_execute_nothing() {
    let (a, b) = (3u16, 4u16);
    let mut e = env_with_page(&[a, b]);
    e.sp_rx.clear();
    let pa_a = 5 * PS + 0x100;
    let before = (word(&e, pa_a), word(&e, 6 * PS + 0x100));
    let traffic = e.dram_traffic();
    let tlb = (
        e.b.uut.stat_tlb_hits.val().to_u32(),
        e.b.uut.stat_tlb_misses.val().to_u32(),
    );
    let mut denied = 0;
    let mut check_denied = |e: &mut Env, h: Header, payload: &[u8], what: &str| {
        let (out, _) = e.request(&h.to_packet(payload));
        assert_eq!(out, vec![resp(&h, Status::Denied, &[])], "{what}");
        assert!(out[0][field::KEY.start..HEADER_LEN].iter().all(|&x| x == 0));
        denied += 1;
        assert_eq!(e.b.uut.stat_denied.val().to_u32(), denied, "{what}");
    };
    let forged = |h: Header, key: u64| Header { key, ..h };
    // Every opcode that needs a key, with a forged one (one bit off).
    let mut w = req(Opcode::Write, a, 1, WORD);
    w.total_len = 8;
    check_denied(
        &mut e,
        forged(w, key_of(a) ^ 1),
        &[0xEE; 8],
        "write, forged key",
    );
    let mut r = req(Opcode::Read, a, 2, WORD);
    r.total_len = 8;
    check_denied(
        &mut e,
        forged(r, key_of(a) ^ 1 << 63),
        &[],
        "read, forged key",
    );
    let mut faa = req(Opcode::FetchAdd, a, 3, WORD);
    faa.arg0 = 1;
    check_denied(&mut e, forged(faa, 0), &[], "FAA, missing key");
    for op in [Opcode::TestAndSet, Opcode::Unlock, Opcode::CompareAndSwap] {
        check_denied(
            &mut e,
            forged(req(op, a, 4, WORD), 0),
            &[],
            "atomic, no key",
        );
    }
    check_denied(&mut e, forged(req(Opcode::Fence, a, 5, 0), 0), &[], "fence");
    let mut ack = req(Opcode::CnAck, a, 6, 0);
    ack.arg0 = 3;
    check_denied(&mut e, forged(ack, 7), &[], "CN ack");
    for op in [
        Opcode::Alloc,
        Opcode::Free,
        Opcode::Join,
        Opcode::Unregister,
        Opcode::Heartbeat,
    ] {
        check_denied(&mut e, forged(req(op, a, 7, 0), 1), &[], "slow path");
    }
    // Another RAS's pid with this RAS's key (its own CRC valid), and the other way round.
    let mut w = req(Opcode::Write, b, 8, WORD);
    w.total_len = 8;
    check_denied(
        &mut e,
        forged(w, key_of(a)),
        &[0xEE; 8],
        "pid of another RAS",
    );
    check_denied(&mut e, forged(faa, key_of(b)), &[], "key of another RAS");
    // pid 0 (no RAS) and a pid beyond the table whose low bits name a RAS.
    check_denied(
        &mut e,
        forged(req(Opcode::Read, 0, 9, WORD), 0),
        &[],
        "pid 0",
    );
    let mut r = req(Opcode::Read, a | 0x1000, 10, WORD);
    r.total_len = 8;
    check_denied(&mut e, forged(r, key_of(a)), &[], "pid beyond the table");
    // Nothing executed: memory, DRAM traffic, TLB, slow path untouched.
    assert_eq!((word(&e, pa_a), word(&e, 6 * PS + 0x100)), before);
    assert_eq!(
        e.dram_traffic(),
        traffic,
        "no DRAM access for a denied request"
    );
    assert_eq!(
        (
            e.b.uut.stat_tlb_hits.val().to_u32(),
            e.b.uut.stat_tlb_misses.val().to_u32()
        ),
        tlb,
        "no translation for a denied request"
    );
    assert!(e.sp_rx.is_empty(), "no slow-path descriptor: {:?}", e.sp_rx);
    // The ring saw nothing: the same FAA with the right key executes (and is recorded).
    let (out, _) = e.request(&faa.to_packet(&[]));
    assert_eq!(
        out,
        vec![Header {
            arg0: before.0,
            ..faa.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    assert_eq!(word(&e, pa_a), before.0 + 1);
    // Parse failures come before the key check; Register needs no key.
    let mut bad = forged(req(Opcode::Read, a, 11, WORD), 0).to_packet(&[]);
    bad[field::VERSION] = 1;
    Packet::new_unchecked(&mut bad[..]).fill_checksum();
    let mut want = bad[..HEADER_LEN].to_vec();
    want[field::KEY.start..].fill(0);
    want[field::STATUS] = Status::BadRequest as u8;
    want[field::FLAGS] = 1;
    Packet::new_unchecked(&mut want[..]).fill_checksum();
    assert_eq!(
        e.request(&bad).0,
        vec![want],
        "old version, no key: BAD_REQUEST"
    );
    let mut ext = forged(req(Opcode::Read, a, 12, 0), 0).to_packet(&[]);
    ext[field::OPCODE] = 0x45;
    Packet::new_unchecked(&mut ext[..]).fill_checksum();
    let out = e.request(&ext).0;
    assert_eq!(out[0][field::STATUS], Status::Unsupported as u8);
    let reg = Header {
        arg0: 42,
        ..Header::request(Opcode::Register, 0, 13, 0)
    };
    assert!(e.request(&reg.to_packet(&[])).0.is_empty());
    assert_eq!(
        e.sp_rx,
        vec![Descriptor::Request {
            route: e.route,
            header: reg
        }]
    );
    // The RAS torn down (KEY_WRITE of 0): its own key is denied from now on.
    e.grant(a, 0);
    let mut r = req(Opcode::Read, a, 14, WORD);
    r.total_len = 8;
    check_denied(&mut e, r, &[], "RAS removed");
}

/// Unlock is recorded in the idempotence ring: its retry gets the recorded old word and
/// does not release a lock another member took meanwhile. Members of one RAS are told
/// apart by their client id, also when their request ids collide.
#[test]
fn unlock_is_replayed_from_the_ring() {
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    let pa = 5 * PS + 0x100;
    let other = |h: Header| Header {
        client: CLIENT + 1,
        ..h
    };
    let ok = |h: &Header, old: u64| {
        vec![Header {
            arg0: old,
            ..h.response_to(Status::Ok)
        }
        .to_packet(&[])]
    };
    let tas = req(Opcode::TestAndSet, pid, 1, WORD);
    assert_eq!(e.request(&tas.to_packet(&[])).0, ok(&tas, 0));
    let unlock = req(Opcode::Unlock, pid, 2, WORD);
    assert_eq!(e.request(&unlock.to_packet(&[])).0, ok(&unlock, 1));
    assert_eq!(word(&e, pa), 0);
    // The other member takes the lock, with the same request id as the unlock.
    let tas2 = other(req(Opcode::TestAndSet, pid, 2, WORD));
    assert_eq!(e.request(&tas2.to_packet(&[])).0, ok(&tas2, 0));
    assert_eq!(word(&e, pa), 1);
    // The unlock's retry is replayed: same answer, the lock stays taken.
    assert_eq!(e.request(&unlock.to_packet(&[])).0, ok(&unlock, 1));
    assert_eq!(
        word(&e, pa),
        1,
        "a retried unlock must not release the lock again"
    );
    // The other member's retry is its own entry.
    assert_eq!(e.request(&tas2.to_packet(&[])).0, ok(&tas2, 0));
}

/// Append (`proto::replog`): the tail reserved and the framed record written in one
/// operation, records at every 8-byte lane (the payload moves from its ingest lanes through
/// the write-data stage's funnel) and across a page boundary, the pad zero although the
/// frame bytes past `tkeep` are not (the testbench fills them with 0xC3), a retry answered
/// from the ring with the same offset and nothing appended, and a full log or a malformed
/// request writing nothing. The log image is checked against `replog`'s own framing.
#[test]
fn append_reserves_the_tail_and_writes_the_record_once() {
    use clio_proto::replog;
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    map_second_page(&mut e, pid);
    // The log starts 0xB08 into page 0x10 and runs on into page 0x11 (pfn 9).
    let log = 0x10 * PS + 0xB08;
    let cap = 2 * PS - 0xB08;
    let pa = |va: u64| {
        if va < 0x11 * PS {
            5 * PS + va - 0x10 * PS
        } else {
            9 * PS + va - 0x11 * PS
        }
    };
    let image = |e: &Env, n: u64| -> Vec<u8> {
        (0..n)
            .map(|i| e.dram.mem().bytes(pa(log + i), 1)[0])
            .collect()
    };
    let mut want = vec![0u8; replog::LOG_HEAD as usize];
    let mut tail = 0u64;
    let lens = [
        1u32, 5, 8, 13, 56, 64, 100, 511, 1000, 1024, 3, 17, 24, 1024,
    ];
    for (i, &len) in lens.iter().enumerate() {
        let payload: Vec<u8> = (0..len)
            .map(|k| (k as u8).wrapping_mul(31) ^ i as u8 ^ 0x5A)
            .collect();
        let mut h = req(Opcode::Append, pid, 100 + i as u32, log);
        h.total_len = len;
        h.arg0 = cap;
        let pkt = h.to_packet(&payload);
        let fp = replog::footprint(len);
        let ok = Header {
            arg0: tail,
            arg1: tail + fp,
            ..h.response_to(Status::Ok)
        }
        .to_packet(&[]);
        assert_eq!(
            e.request(&pkt).0,
            vec![ok.clone()],
            "append {i} ({len} bytes)"
        );
        if i % 3 == 0 {
            // A retry: the same answer from the ring, nothing appended.
            assert_eq!(e.request(&pkt).0, vec![ok], "retry of append {i}");
        }
        let at = replog::place(cap, tail, len).expect("fits");
        assert_eq!(at, replog::LOG_HEAD + tail);
        want.extend_from_slice(&replog::frame(len));
        want.extend_from_slice(&payload);
        want.resize((at + fp) as usize, 0);
        tail += fp;
        assert_eq!(word(&e, pa(log)), tail, "tail after append {i}");
    }
    assert!(
        replog::LOG_HEAD + tail > PS - 0xB08,
        "the log crossed the page"
    );
    want[..8].copy_from_slice(&tail.to_le_bytes());
    assert_eq!(image(&e, replog::LOG_HEAD + tail), want, "log image");
    let data = &want[replog::LOG_HEAD as usize..];
    let recs = replog::records(data).expect("a well-formed log");
    assert_eq!(recs.len(), lens.len());
    // Cost (testbench DRAM latency 5, pages in the TLB): a 100-byte write against a
    // 100-byte append, last request beat to first response beat.
    let (_, write_cycles) = e.request(&write_req(pid, 300, 0x11 * PS + 0xF00, &[9u8; 100]).1);
    let mut h = req(Opcode::Append, pid, 301, log);
    h.total_len = 100;
    h.arg0 = cap;
    let (r, append_cycles) = e.request(&h.to_packet(&[3u8; 100]));
    assert_eq!(r.len(), 1);
    eprintln!("100 B write: {write_cycles} cycles, 100 B append: {append_cycles} cycles");
    assert!(
        append_cycles > write_cycles,
        "an append reads the tail first"
    );
    tail += replog::footprint(100);
    // A record that does not fit: LogFull, arg0 0, nothing written.
    let before = image(&e, cap);
    let mut h = req(Opcode::Append, pid, 200, log);
    h.total_len = 100;
    h.arg0 = replog::LOG_HEAD + tail + 64;
    let full = Header {
        arg0: 0,
        arg1: replog::footprint(100),
        ..h.response_to(Status::LogFull)
    }
    .to_packet(&[]);
    assert_eq!(e.request(&h.to_packet(&[7u8; 100])).0, vec![full]);
    // Malformed: a misaligned log, a length that is not the payload's.
    let mut bad = req(Opcode::Append, pid, 201, log + 4);
    bad.total_len = 16;
    bad.arg0 = cap;
    assert_eq!(
        e.request(&bad.to_packet(&[1u8; 16])).0,
        vec![resp(&bad, Status::BadRequest, &[])]
    );
    let mut lie = req(Opcode::Append, pid, 202, log);
    lie.total_len = 17;
    lie.arg0 = cap;
    assert_eq!(
        e.request(&lie.to_packet(&[1u8; 16])).0,
        vec![resp(
            &Header {
                payload_len: 16,
                ..lie
            },
            Status::BadRequest,
            &[]
        )]
    );
    assert_eq!(image(&e, cap), before, "refused appends wrote nothing");
}

/// The ring's skip policy and RING_RELEASE end to end: a member that never acknowledges
/// fills the ring; another member's request gets RETRY_LATER and moves the write pointer
/// one slot per attempt; the slow path's RING_RELEASE of the dead member frees every slot.
/// Durable writes (`FLAG_DURABLE`): without a persistence domain they are answered
/// UNSUPPORTED and write nothing; with one, the response leaves only after every B
/// response of the write and a persist handshake per page piece for exactly its bytes; a
/// failed handshake answers RETRY_LATER.
#[test]
fn durable_writes_wait_for_the_persist_handshake() {
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    map_second_page(&mut e, pid);
    let durable = |id: u32, va: u64, data: &[u8]| {
        let (mut h, _) = write_req(pid, id, va, data);
        h.durable = true;
        (h, h.to_packet(data))
    };
    let data: Vec<u8> = (0..300u32).map(|i| (i * 7 + 1) as u8).collect();
    let va = 0x10 * PS + 100;
    // No persistence domain (cfg_persist low): refused, nothing reaches DRAM.
    let (h, f) = durable(1, va, &data);
    let aws = e.dram_traffic().1;
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Unsupported, &[])]);
    assert_eq!(e.dram_traffic().1, aws, "a refused durable write wrote");
    assert!(e.persists.is_empty());
    assert_eq!(e.dram.mem().bytes(5 * PS + 100, 300), vec![0; 300]);

    e.b.uut.cfg_persist.next = true;
    e.persist_delay = 40;
    let (h, f) = write_req(pid, 2, va, &data);
    let (out, plain) = e.request(&f);
    assert_eq!(out, vec![resp(&h, Status::Ok, &[])]);
    assert!(e.persists.is_empty(), "a plain write asked for a persist");
    let (h, f) = durable(3, va, &data);
    let (out, lat) = e.request(&f);
    assert_eq!(out, vec![resp(&h, Status::Ok, &[])]);
    assert_eq!(e.dram.mem().bytes(5 * PS + 100, 300), data);
    assert_eq!(e.persists.len(), 1);
    let (at, addr, len, due) = e.persists[0];
    assert_eq!((addr, len), (5 * PS + 100, 300), "persisted range");
    assert_eq!(due, 0, "persist asked before the write's B responses");
    assert!(
        e.first_tx_cycle.is_some_and(|t| t > at),
        "the response left before its data was durable"
    );
    assert!(lat >= plain + 40, "durable {lat} cycles, plain {plain}");
    println!("write of 300 B: plain {plain} cycles, durable {lat} (persist answered after 40)");

    // Across a page boundary: one handshake per piece, the first ending at the boundary.
    e.persists.clear();
    let (h, f) = durable(4, 0x11 * PS - 40, &data[..100]);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Ok, &[])]);
    let ranges: Vec<(u64, u64)> = e.persists.iter().map(|p| (p.1, p.2)).collect();
    assert_eq!(ranges, vec![(6 * PS - 40, 40), (9 * PS, 60)]);
    assert_eq!(e.dram.mem().bytes(6 * PS - 40, 40), data[..40]);
    assert_eq!(e.dram.mem().bytes(9 * PS, 60), data[40..100]);

    // The board could not make it durable: the client is told to retry.
    e.persist_fails = true;
    let (h, f) = durable(5, va, &data);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::RetryLater, &[])]);
}

#[test]
fn ring_skip_policy_and_release() {
    use crate::sync_unit::RING_ENTRIES;
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    let pa = 5 * PS + 0x100;
    let dead = CLIENT + 7;
    for id in 0..RING_ENTRIES as u32 {
        let mut f = req(Opcode::FetchAdd, pid, id, WORD);
        f.client = dead;
        f.arg0 = 1;
        let out = e.request(&f.to_packet(&[])).0;
        assert_eq!(out[0][field::STATUS], Status::Ok as u8);
    }
    assert_eq!(word(&e, pa), RING_ENTRIES as u64);
    let wp = |e: &Env| e.b.uut.sync.wp.q.val().to_u64();
    assert_eq!(wp(&e), 0);
    let mut f = req(Opcode::FetchAdd, pid, 5, WORD);
    f.arg0 = 100;
    for attempt in 1..=3 {
        assert_eq!(
            e.request(&f.to_packet(&[])).0,
            vec![resp(&f, Status::RetryLater, &[])]
        );
        assert_eq!(wp(&e), attempt, "the write pointer moves past the slot");
    }
    assert_eq!(word(&e, pa), RING_ENTRIES as u64, "nothing executed");
    // The dead member's entry with the same request id is still answered to it alone.
    let mut d5 = req(Opcode::FetchAdd, pid, 5, WORD);
    d5.client = dead;
    d5.arg0 = 1;
    assert_eq!(
        e.request(&d5.to_packet(&[])).0,
        vec![Header {
            arg0: 5,
            ..d5.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    // RING_RELEASE of another member frees nothing; of the dead member, everything.
    e.sp_tx.push_back(
        Descriptor::RingRelease {
            pid,
            client: CLIENT,
        }
        .encode(),
    );
    e.run();
    assert_eq!(
        e.request(&f.to_packet(&[])).0,
        vec![resp(&f, Status::RetryLater, &[])]
    );
    e.sp_tx
        .push_back(Descriptor::RingRelease { pid, client: dead }.encode());
    e.run();
    let old = word(&e, pa);
    assert_eq!(
        e.request(&f.to_packet(&[])).0,
        vec![Header {
            arg0: old,
            ..f.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    assert_eq!(word(&e, pa), old + 100);
    // Released entries stay until overwritten: a late duplicate is still replayed.
    assert_eq!(
        e.request(&d5.to_packet(&[])).0[0][field::ARG0.start..field::ARG0.end],
        5u64.to_be_bytes()
    );
}

/// The pointer-chasing offload through the top (`proto::offload::chase`): nodes written by
/// the fast path in two pages, a match whose value straddles them, not found, the hop bound,
/// a next pointer to an unmapped page, malformed requests, and an extend opcode without a
/// unit (UNSUPPORTED). Every answer byte-exact with the model's rule.
#[test]
fn pointer_chase_walks_nodes_through_the_translation() {
    use clio_proto::offload::{chase, ChaseLayout};
    let pid = 3;
    let mut e = env_with_page(&[pid]);
    map_second_page(&mut e, pid);
    let l = ChaseLayout {
        key_offset: 0,
        next_offset: 8,
        value_offset: 16,
        max_hops: 8,
    };
    // Five nodes: key 100 + i, the value 100 bytes of i; node 3 sits at the end of page 0x10
    // so its value runs into page 0x11.
    let nodes = [
        0x10 * PS + 0x100,
        0x11 * PS + 0x80,
        0x10 * PS + 0x800,
        0x10 * PS + 0xFE8,
        0x11 * PS + 0x400,
    ];
    let value = |i: usize| vec![0xA0 ^ i as u8; 100];
    for (i, &n) in nodes.iter().enumerate() {
        let next = nodes.get(i + 1).copied().unwrap_or(0);
        let mut node = (100 + i as u64).to_le_bytes().to_vec();
        node.extend_from_slice(&next.to_le_bytes());
        node.extend_from_slice(&value(i));
        let (_, w) = write_req(pid, 10 + i as u32, n, &node);
        assert_eq!(e.request(&w).0.len(), 1, "node {i} written");
    }
    let chase_req = |id: u32, start: u64, key: u64, l: ChaseLayout, len: u32| {
        let mut h = req(Opcode::PointerChase, pid, id, start);
        h.arg0 = key;
        h.arg1 = l.pack();
        h.total_len = len;
        h
    };
    let answer = |h: &Header, arg0: u64, arg1: u64, payload: &[u8]| {
        Header {
            arg0,
            arg1,
            ..h.response_to(Status::Ok)
        }
        .to_packet(payload)
    };
    let mut cycles = Vec::new();
    for (i, &n) in nodes.iter().enumerate() {
        let h = chase_req(100 + i as u32, nodes[0], 100 + i as u64, l, 100);
        let (r, c) = e.request(&h.to_packet(&[]));
        assert_eq!(
            r,
            vec![answer(&h, i as u64 + 1, n, &value(i))],
            "key of node {i}"
        );
        cycles.push(c);
    }
    eprintln!("pointer chase, match at hop 1..=5 (value 100 B): {cycles:?} cycles");
    assert!(
        cycles.windows(2).all(|w| w[1] > w[0]),
        "each hop costs cycles"
    );
    let h = chase_req(110, nodes[0], 7, l, 100);
    assert_eq!(
        e.request(&h.to_packet(&[])).0,
        vec![answer(&h, 5, 0, &[])],
        "not found"
    );
    let short = ChaseLayout { max_hops: 2, ..l };
    let h = chase_req(111, nodes[0], 7, short, 100);
    assert_eq!(
        e.request(&h.to_packet(&[])).0,
        vec![answer(&h, 2, nodes[2], &[])],
        "the bound: where to go on"
    );
    // A next pointer into an unmapped page ends the walk with UNMAPPED, nothing else.
    let (_, w) = write_req(pid, 20, nodes[4] + 8, &(0x13 * PS).to_le_bytes());
    e.request(&w);
    let h = chase_req(112, nodes[0], 7, l, 100);
    assert_eq!(
        e.request(&h.to_packet(&[])).0,
        vec![resp(&h, Status::Unmapped, &[])]
    );
    // Malformed: layout, lengths, a payload, an unaligned node, past the VA space.
    let bad_layout = ChaseLayout { key_offset: 4, ..l };
    for (id, h, payload) in [
        (120, chase_req(120, nodes[0], 7, bad_layout, 8), vec![]),
        (121, chase_req(121, nodes[0], 7, l, 0), vec![]),
        (
            122,
            chase_req(122, nodes[0], 7, l, chase::MAX_VALUE + 1),
            vec![],
        ),
        (123, chase_req(123, nodes[0] + 4, 7, l, 8), vec![]),
        (124, chase_req(124, 1 << 48, 7, l, 8), vec![]),
        (125, chase_req(125, nodes[0], 7, l, 8), vec![1u8; 8]),
    ] {
        let mut h = h;
        h.payload_len = payload.len() as u16;
        let pkt = h.to_packet(&payload);
        assert_eq!(
            e.request(&pkt).0,
            vec![resp(&h, Status::BadRequest, &[])],
            "malformed chase {id}"
        );
    }
    // An extend opcode this fast path has no unit for.
    let mut h = req(Opcode::KvGet, pid, 130, 0);
    h.total_len = 8;
    assert_eq!(
        e.request(&h.to_packet(&[0u8; 8])).0,
        vec![resp(&h, Status::Unsupported, &[])]
    );
}

mod kv;
mod kv_once;
mod reads;
