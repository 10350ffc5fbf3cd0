//! The fast path's testbench: the top with a DRAM model, a network and a slow-path ring
//! around it, every request class end to end.

use super::*;
use crate::bench::Bench;
use crate::tb::{AxiDram, SparseMemory, StreamSink, StreamSource};
use crate::util::{bits_to_bytes, bytes_to_bits};
use clio_proto::frame::Route;
use clio_proto::header::{field, Packet, HEADER_LEN};
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
    /// RX descriptors the slow path took (all of them, as they come).
    sp_rx_taken: u64,
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
        let mut b = crate::on_large_stack(|| Box::new(Bench::new(FastpathTop::default())));
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
        assert!(b.uut.recv.core.keys.ready.val());
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
            sp_rx_taken: 0,
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
        // Dispatch's own TLB lookup and the translate stage's never share the port (the top
        // gives Dispatch's precedence on the claim that the stage is idle then).
        assert!(
            !(u.core.exec.ahead.lookup.val() && u.mem.tr.lk.valid.val()),
            "cycle {now}: Dispatch and the translate stage look up at once"
        );
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
            assert_eq!(
                self.dram.hazards(),
                0,
                "cycle {now}: a read over a write in flight"
            );
            assert_eq!(
                self.dram.violations(),
                0,
                "cycle {now}: a read burst across 4 KiB"
            );
        }
        if u.m_axi_awvalid.val() {
            self.aws += 1;
            self.dram.aw(
                now,
                u.m_axi_awaddr.val().to_u64(),
                u.m_axi_awlen.val().to_u8(),
            );
            assert_eq!(
                self.dram.hazards(),
                0,
                "cycle {now}: a write over a read in flight"
            );
            assert_eq!(
                self.dram.violations(),
                0,
                "cycle {now}: a write burst across 4 KiB"
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
            self.sp_rx_taken += 1;
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
        // The slow path takes every RX descriptor as it comes (the room stays as set).
        self.b.uut.sp_rx_taken.next = (self.sp_rx_taken & 0xFFFF).to_bits();
        self.b.tick();
    }

    /// Run until the node is idle again with nothing queued.
    fn run(&mut self) {
        let start = self.b.cycle;
        loop {
            self.cycle();
            let u = &self.b.uut;
            let idle = u.core.exec.is_idle()
                && u.resp.is_idle()
                && !u.mem.wd.w.own.val()
                && u.recv.ingest.is_idle();
            if idle && self.rx.is_empty() && self.sp_tx.is_empty() && !self.dram.busy() {
                break;
            }
            assert!(
                self.b.cycle - start < self.budget,
                "node hung in {:?} every write has its B: {} in flight {}",
                self.b.uut.core.exec.state(),
                self.b.uut.mem.order.clear.fence_clear.val(),
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

    /// Program the key table (KEY_WRITE) and hand the RAS's first member its row of the
    /// idempotence table (RING_OWNER), as the slow path does at Register.
    fn grant(&mut self, pid: u16, key: u64) {
        self.grant_epoch(pid, key, 0);
        self.own_row(client_of(pid), pid);
    }

    /// RING_OWNER through the ring: the row of `client` emptied and handed to `pid`.
    fn own_row(&mut self, client: u16, pid: u16) {
        self.sp_tx
            .push_back(Descriptor::RingOwner { pid, client }.encode());
        self.run();
    }

    /// KEY_WRITE through the ring: `pid`'s key and epoch (0: not fenced).
    fn grant_epoch(&mut self, pid: u16, key: u64, epoch: u16) {
        self.sp_tx
            .push_back(Descriptor::KeyWrite { pid, key, epoch }.encode());
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

/// Client id of the requests the tests send as a RAS's first member (client ids are
/// node-wide: one per RAS; [`Env::grant`] hands it its row).
fn client_of(pid: u16) -> u16 {
    0x100 + (pid & 0x1FF)
}

/// A request of `op` with its RAS's credentials.
fn req(op: Opcode, pid: u16, id: u32, va: u64) -> Header {
    Header::request(op, pid, id, va).with_credentials(key_of(pid), client_of(pid))
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

mod append;
mod durable;
mod epochs;
mod keys;
mod kv;
mod kv_once;
mod offload;
mod reads;
mod requests;
mod ring;
