//! The RTL memory node: the verilated `fastpath_top` clocked from Rust, with its DRAM master
//! connected to the `memmap2` DRAM model (configurable latency), its slow-path descriptor
//! ports connected to the board's ring window (and so to the real slow path, in-process or the
//! `clio-slowpath` daemon), and its network streams to packets. Implements [`MemoryNode`], so
//! `clio board --backend rtl` serves clients exactly like the model.

use crate::model::board::{BoardConfig, BoardError, NodeParts, Outgoing};
use crate::model::dram::Dram;
use crate::model::Counters;
use crate::node::MemoryNode;
use crate::rtl::{Rtl, FASTPATH_TOP, FASTPATH_TOP_TRACED};
use clio_proto::consts::BEAT_BYTES;
use clio_proto::frame::{Route, ROUTE_BYTES};
use clio_proto::layout::MemoryLayout;
use clio_proto::ring::{daemon_state, reg, Descriptor, DESC_BYTES};
use clio_slowpath::{RecoveryReport, RingWindow, SlowPath};
use std::collections::VecDeque;
use std::path::Path;
use std::sync::atomic::Ordering;

/// Cycles without any activity after which the pipeline is taken as drained.
pub const IDLE_CYCLES: u64 = 32;
/// Upper bound on cycles for one packet (a hung pipeline is reported, not waited on forever).
pub const MAX_CYCLES_PER_PACKET: u64 = 200_000;
/// Cycles after reset before the fast path takes anything: its key table is swept to zeros,
/// one entry per cycle (`hw/src/key_table.rs`), plus a margin.
pub const RESET_SWEEP_CYCLES: u64 = clio_proto::consts::KEY_TABLE_ENTRIES as u64 + 8;

struct Ports {
    reset: u32,
    cfg_page_shift: u32,
    cfg_bucket_mask: u32,
    rx_valid: u32,
    rx_ready: u32,
    rx_data: u32,
    rx_keep: u32,
    rx_last: u32,
    rx_route: u32,
    tx_valid: u32,
    tx_ready: u32,
    tx_data: u32,
    tx_keep: u32,
    tx_last: u32,
    tx_route: u32,
    araddr: u32,
    arlen: u32,
    arvalid: u32,
    arready: u32,
    rdata: u32,
    rlast: u32,
    rvalid: u32,
    rready: u32,
    awaddr: u32,
    awlen: u32,
    awvalid: u32,
    awready: u32,
    wdata: u32,
    wstrb: u32,
    wlast: u32,
    wvalid: u32,
    wready: u32,
    bvalid: u32,
    bready: u32,
    sp_rx_valid: u32,
    sp_rx_ready: u32,
    sp_rx_desc: u32,
    sp_rx_room: u32,
    sp_tx_valid: u32,
    sp_tx_ready: u32,
    sp_tx_desc: u32,
    cfg_persist: u32,
    persist_valid: u32,
    persist_addr: u32,
    persist_len: u32,
    persist_done: u32,
    persist_error: u32,
    stat_nacks: u32,
    stat_tlb_hits: u32,
    stat_tlb_misses: u32,
    stat_bucket_reads: u32,
    stat_page_faults: u32,
    stat_denied: u32,
}

fn words_of(bytes: &[u8], out: &mut [u32]) {
    out.fill(0);
    for (i, b) in bytes.iter().enumerate() {
        out[i / 4] |= (*b as u32) << (8 * (i % 4));
    }
}

fn bytes_of(words: &[u32], out: &mut [u8]) {
    for (i, b) in out.iter_mut().enumerate() {
        *b = (words[i / 4] >> (8 * (i % 4))) as u8;
    }
}

struct Burst {
    addr: u64,
    beats: u32,
    done: u32,
    ready_at: u64,
}

impl Burst {
    /// The burst an AR or AW handshake announces (address and AxLEN ports).
    fn addressed(rtl: &Rtl, addr: u32, len: u32, ready_at: u64) -> Burst {
        Burst {
            addr: rtl.get(addr) as u64,
            beats: rtl.get(len) as u32 + 1,
            done: 0,
            ready_at,
        }
    }
}

/// Cycle counts measured by the harness.
#[derive(Debug, Clone, Copy, Default)]
pub struct CycleStats {
    /// Rising clock edges simulated.
    pub cycles: u64,
    /// Packets fed in.
    pub packets_in: u64,
    /// Packets produced.
    pub packets_out: u64,
    /// Cycles from the first beat in to the first beat out, of the last packet.
    pub last_latency: u64,
    /// AXI rule breaks seen by the DRAM model (write data before its address, WLAST not on
    /// the burst's last beat). Always 0 for a correct fast path.
    pub axi_violations: u64,
    /// Cycles in which a frame beat was received while a response beat was sent or a DRAM
    /// beat moved: the stages of the fast path working on different requests at once.
    pub overlap_cycles: u64,
    /// With [`RtlBoard::check_registered_outputs`]: cycles in which an output changed when
    /// only the inputs changed (a combinational input-to-output path, which one evaluation
    /// per cycle would sample wrongly). Always 0 for `fastpath_top`.
    pub combinational_outputs: u64,
    /// Persist handshakes answered (one per page piece of a durable write packet).
    pub persists: u64,
    /// Persist requests raised while a DRAM write of the fast path still waited for its data
    /// or its B response: the data asked to be made durable was not all in DRAM. Always 0.
    pub early_persists: u64,
    /// Cycle of the last persist handshake answered.
    pub last_persist_cycle: u64,
}

/// The cosimulated memory node.
pub struct RtlBoard {
    rtl: Rtl,
    p: Ports,
    layout: MemoryLayout,
    dram: Dram,
    ring: RingWindow,
    slow: Option<SlowPath>,
    dram_latency: u64,
    reads: VecDeque<Burst>,
    writes: VecDeque<Burst>,
    b_pending: u32,
    rx_q: VecDeque<(Route, Vec<u8>)>,
    rx_off: usize,
    tx_cur: Option<(Route, Vec<u8>)>,
    sp_tx_cur: Option<[u8; DESC_BYTES]>,
    /// The persist handshake to answer this cycle: whether the range was flushed.
    persist_ack: Option<bool>,
    recovery: Option<RecoveryReport>,
    first_in: Option<u64>,
    first_out: Option<u64>,
    stats: CycleStats,
    hung: u64,
    trace: bool,
    check_outputs: bool,
    before: Vec<u32>,
    after: Vec<u32>,
    c: Counters,
}

// Ports are looked up by name once; a missing one is a harness/RTL mismatch worth a panic.
fn ports(rtl: &Rtl) -> Ports {
    let p = |n: &str| rtl.port(n);
    Ports {
        reset: p("reset"),
        cfg_page_shift: p("cfg_page_shift"),
        cfg_bucket_mask: p("cfg_bucket_mask"),
        rx_valid: p("rx_valid"),
        rx_ready: p("rx_ready"),
        rx_data: p("rx_data"),
        rx_keep: p("rx_keep"),
        rx_last: p("rx_last"),
        rx_route: p("rx_route"),
        tx_valid: p("tx_valid"),
        tx_ready: p("tx_ready"),
        tx_data: p("tx_data"),
        tx_keep: p("tx_keep"),
        tx_last: p("tx_last"),
        tx_route: p("tx_route"),
        araddr: p("m_axi_araddr"),
        arlen: p("m_axi_arlen"),
        arvalid: p("m_axi_arvalid"),
        arready: p("m_axi_arready"),
        rdata: p("m_axi_rdata"),
        rlast: p("m_axi_rlast"),
        rvalid: p("m_axi_rvalid"),
        rready: p("m_axi_rready"),
        awaddr: p("m_axi_awaddr"),
        awlen: p("m_axi_awlen"),
        awvalid: p("m_axi_awvalid"),
        awready: p("m_axi_awready"),
        wdata: p("m_axi_wdata"),
        wstrb: p("m_axi_wstrb"),
        wlast: p("m_axi_wlast"),
        wvalid: p("m_axi_wvalid"),
        wready: p("m_axi_wready"),
        bvalid: p("m_axi_bvalid"),
        bready: p("m_axi_bready"),
        sp_rx_valid: p("sp_rx_valid"),
        sp_rx_ready: p("sp_rx_ready"),
        sp_rx_desc: p("sp_rx_desc"),
        sp_rx_room: p("sp_rx_room"),
        sp_tx_valid: p("sp_tx_valid"),
        sp_tx_ready: p("sp_tx_ready"),
        sp_tx_desc: p("sp_tx_desc"),
        cfg_persist: p("cfg_persist"),
        persist_valid: p("persist_valid"),
        persist_addr: p("persist_addr"),
        persist_len: p("persist_len"),
        persist_done: p("persist_done"),
        persist_error: p("persist_error"),
        stat_nacks: p("stat_nacks"),
        stat_tlb_hits: p("stat_tlb_hits"),
        stat_tlb_misses: p("stat_tlb_misses"),
        stat_bucket_reads: p("stat_bucket_reads"),
        stat_page_faults: p("stat_page_faults"),
        stat_denied: p("stat_denied"),
    }
}

impl RtlBoard {
    /// Build the node: DRAM, rings and slow path as for the model, the RTL reset and
    /// configured, and the free-page buffer filled. `vcd` writes a waveform.
    pub fn new(
        cfg: &BoardConfig,
        dram_latency: u64,
        vcd: Option<&Path>,
    ) -> Result<RtlBoard, BoardError> {
        let NodeParts {
            layout,
            dram,
            ring,
            slow,
            recovery,
        } = NodeParts::new(cfg)?;
        // Waveform support halves the model's speed, so it is a separate build.
        let model = if vcd.is_some() {
            &FASTPATH_TOP_TRACED
        } else {
            &FASTPATH_TOP
        };
        let rtl = Rtl::new(model, vcd);
        let p = ports(&rtl);
        let mut b = RtlBoard {
            rtl,
            p,
            layout,
            dram,
            ring,
            slow,
            dram_latency,
            reads: VecDeque::new(),
            writes: VecDeque::new(),
            b_pending: 0,
            rx_q: VecDeque::new(),
            rx_off: 0,
            tx_cur: None,
            sp_tx_cur: None,
            persist_ack: None,
            recovery,
            first_in: None,
            first_out: None,
            stats: CycleStats::default(),
            hung: 0,
            trace: std::env::var_os("CLIO_COSIM_TRACE").is_some(),
            check_outputs: false,
            before: Vec::new(),
            after: Vec::new(),
            c: Counters::default(),
        };
        // The harness never back-pressures the RTL: responses, DRAM and the RX ring always
        // accept (the ring's room is reported on sp_rx_room instead).
        for port in [
            b.p.tx_ready,
            b.p.arready,
            b.p.awready,
            b.p.wready,
            b.p.sp_rx_ready,
        ] {
            b.rtl.set(port, 1);
        }
        b.rtl.set(b.p.cfg_page_shift, layout.page_shift as u128);
        // A memory file is the persistence domain (`--memory-file`), as for the model.
        b.rtl.set(b.p.cfg_persist, b.dram.is_persistent() as u128);
        b.rtl
            .set(b.p.cfg_bucket_mask, (layout.bucket_count() - 1) as u128);
        b.rtl.set(b.p.reset, 1);
        for _ in 0..4 {
            b.rtl.tick();
        }
        b.rtl.set(b.p.reset, 0);
        // The key table's zero sweep: nothing is taken before it is done.
        for _ in 0..RESET_SWEEP_CYCLES {
            b.rtl.tick();
        }
        let mut sink = Vec::new();
        b.service(&mut sink);
        Ok(b)
    }

    /// What the in-process slow path recovered from the memory file, if it did.
    pub fn recovery(&self) -> Option<RecoveryReport> {
        self.recovery
    }

    /// Cycle statistics.
    pub fn cycle_stats(&self) -> CycleStats {
        CycleStats {
            cycles: self.rtl.cycles,
            ..self.stats
        }
    }

    /// Evaluate twice per cycle from now on and count, in
    /// [`CycleStats::combinational_outputs`], the cycles in which an output changed between
    /// the edge and the settling of the next cycle's inputs: the check that the one-evaluation
    /// clocking ([`Rtl::step`]) sees exactly what a two-evaluation harness would.
    pub fn check_registered_outputs(&mut self) {
        self.check_outputs = true;
    }

    /// DRAM contents without counting traffic.
    pub fn peek(&self, pa: u64, n: usize) -> Option<&[u8]> {
        self.dram.peek(pa, n)
    }

    /// The memory layout.
    pub fn layout(&self) -> &MemoryLayout {
        &self.layout
    }

    /// Packets the pipeline failed to finish within [`MAX_CYCLES_PER_PACKET`].
    pub fn hung_packets(&self) -> u64 {
        self.hung
    }

    fn busy(&self) -> bool {
        !self.rx_q.is_empty()
            || self.tx_cur.is_some()
            || !self.reads.is_empty()
            || !self.writes.is_empty()
            || self.b_pending > 0
            || self.sp_tx_cur.is_some()
            || self.persist_ack.is_some()
            || self.ring.tx_pending() > 0
    }

    /// Advance one clock cycle, servicing every interface. Returns whether anything moved.
    fn cycle(&mut self, out: &mut Vec<Outgoing>) -> bool {
        let p = &self.p;
        let now = self.rtl.cycles;
        let mut w = [0u32; 32];
        // Drive inputs for this cycle. Outputs are read as the last edge left them: the fast
        // path's outputs come from registers, so one evaluation per cycle (at the edge) suffices.
        let rx_active = if let Some((route, bytes)) = self.rx_q.front() {
            let end = (self.rx_off + BEAT_BYTES).min(bytes.len());
            words_of(&bytes[self.rx_off..end], &mut w[..16]);
            self.rtl.set_words(p.rx_data, &w[..16]);
            let n = end - self.rx_off;
            self.rtl.set(
                p.rx_keep,
                if n == 64 {
                    u64::MAX as u128
                } else {
                    (1u128 << n) - 1
                },
            );
            self.rtl.set(p.rx_last, (end == bytes.len()) as u128);
            if self.rx_off == 0 {
                // The route is side band of the first beat; it stays driven until the next packet.
                words_of(&route.to_bytes(), &mut w[..8]);
                self.rtl.set_words(p.rx_route, &w[..8]);
            }
            self.rtl.set(p.rx_valid, 1);
            true
        } else {
            self.rtl.set(p.rx_valid, 0);
            false
        };
        let r_beat = match self.reads.front() {
            Some(b) if b.ready_at <= now => {
                let addr = (b.addr & !(BEAT_BYTES as u64 - 1)) + b.done as u64 * BEAT_BYTES as u64;
                let mut data = [0u8; BEAT_BYTES];
                self.dram.read(addr, &mut data);
                words_of(&data, &mut w[..16]);
                self.rtl.set_words(p.rdata, &w[..16]);
                self.rtl.set(p.rlast, (b.done + 1 == b.beats) as u128);
                self.rtl.set(p.rvalid, 1);
                true
            }
            _ => {
                self.rtl.set(p.rvalid, 0);
                false
            }
        };
        let b_driven = self.b_pending > 0;
        self.rtl.set(p.bvalid, b_driven as u128);
        self.rtl.set(p.sp_rx_room, self.ring.rx_free() as u128);
        if self.sp_tx_cur.is_none() {
            // The fast path takes descriptors as bytes, exactly as they sit in the ring.
            if let Some(d) = self.ring.pop_tx_bytes() {
                words_of(&d, &mut w[..32]);
                self.rtl.set_words(p.sp_tx_desc, &w[..32]);
                self.sp_tx_cur = Some(d);
            }
        }
        self.rtl
            .set(p.sp_tx_valid, self.sp_tx_cur.is_some() as u128);
        // The persist handshake is answered the cycle after the request is seen, once its
        // range is flushed to the memory file (msync).
        let persist_ack = self.persist_ack.take();
        self.rtl.set(p.persist_done, persist_ack.is_some() as u128);
        self.rtl
            .set(p.persist_error, (persist_ack == Some(false)) as u128);
        if self.check_outputs {
            // Settle the new inputs before the edge, as a two-evaluation harness would, and
            // check that no output moved.
            self.rtl.outputs(&mut self.before);
            self.rtl.fall();
            self.rtl.eval();
            self.rtl.outputs(&mut self.after);
            if self.before != self.after {
                self.stats.combinational_outputs += 1;
            }
        }

        // Sample handshakes (values before the rising edge).
        let mut moved = false;
        let rx_beat = rx_active && self.rtl.get(p.rx_ready) == 1;
        if rx_beat
            && (self.rtl.get(p.tx_valid) == 1
                || self.rtl.get(p.wvalid) == 1
                || (r_beat && self.rtl.get(p.rready) == 1))
        {
            self.stats.overlap_cycles += 1;
        }
        if rx_beat {
            moved = true;
            if self.rx_off == 0 {
                self.first_in = Some(now);
            }
            let len = self.rx_q.front().map_or(0, |(_, b)| b.len());
            self.rx_off += BEAT_BYTES;
            if self.rx_off >= len {
                self.rx_q.pop_front();
                self.rx_off = 0;
                self.stats.packets_in += 1;
            }
        }
        if self.rtl.get(p.tx_valid) == 1 {
            moved = true;
            self.rtl.get_words(p.tx_data, &mut w[..16]);
            let mut beat = [0u8; BEAT_BYTES];
            bytes_of(&w[..16], &mut beat);
            let keep = self.rtl.get(p.tx_keep) as u64;
            let n = keep.count_ones() as usize;
            if self.tx_cur.is_none() {
                self.rtl.get_words(p.tx_route, &mut w[..8]);
                let mut rb = [0u8; ROUTE_BYTES];
                bytes_of(&w[..8], &mut rb);
                let route = Route::from_bytes(&rb).unwrap_or_default();
                self.tx_cur = Some((route, Vec::new()));
                if self.first_out.is_none() {
                    self.first_out = Some(now);
                }
            }
            if let Some((_, bytes)) = self.tx_cur.as_mut() {
                bytes.extend_from_slice(&beat[..n]);
            }
            if self.rtl.get(p.tx_last) == 1 {
                if let Some(pkt) = self.tx_cur.take() {
                    out.push(pkt);
                    self.stats.packets_out += 1;
                    self.c.tx_packets += 1;
                }
            }
        }
        if self.rtl.get(p.arvalid) == 1 {
            moved = true;
            let b = Burst::addressed(&self.rtl, p.araddr, p.arlen, now + self.dram_latency);
            self.reads.push_back(b);
        }
        if r_beat && self.rtl.get(p.rready) == 1 {
            moved = true;
            if let Some(b) = self.reads.front_mut() {
                b.done += 1;
                if b.done == b.beats {
                    self.reads.pop_front();
                }
            }
        }
        if self.rtl.get(p.awvalid) == 1 {
            moved = true;
            let b = Burst::addressed(&self.rtl, p.awaddr, p.awlen, now);
            self.writes.push_back(b);
        }
        if self.rtl.get(p.wvalid) == 1 {
            moved = true;
            self.rtl.get_words(p.wdata, &mut w[..16]);
            let mut beat = [0u8; BEAT_BYTES];
            bytes_of(&w[..16], &mut beat);
            let strb = self.rtl.get(p.wstrb) as u64;
            if let Some(b) = self.writes.front_mut() {
                let base = (b.addr & !(BEAT_BYTES as u64 - 1)) + b.done as u64 * BEAT_BYTES as u64;
                for (i, byte) in beat.iter().enumerate() {
                    if strb >> i & 1 == 1 {
                        self.dram.write(base + i as u64, std::slice::from_ref(byte));
                    }
                }
                b.done += 1;
                let last = self.rtl.get(p.wlast) == 1;
                if last != (b.done == b.beats) {
                    // WLAST must mark exactly the last beat of the burst AWLEN announced.
                    self.stats.axi_violations += 1;
                }
                if b.done == b.beats {
                    self.writes.pop_front();
                    self.b_pending += 1;
                }
            } else {
                // Write data before its address: the RTL broke AXI ordering rules we rely on.
                self.stats.axi_violations += 1;
            }
        }
        if b_driven && self.rtl.get(p.bready) == 1 {
            self.b_pending -= 1;
        }
        if self.rtl.get(p.sp_rx_valid) == 1 {
            moved = true;
            self.rtl.get_words(p.sp_rx_desc, &mut w[..32]);
            let mut d = [0u8; DESC_BYTES];
            bytes_of(&w[..32], &mut d);
            match Descriptor::decode(&d) {
                Ok(desc) => {
                    if matches!(desc, Descriptor::Request { .. }) {
                        self.c.slowpath_requests += 1;
                    }
                    if self.ring.push_rx(&desc).is_err() {
                        self.c.bad_descriptors += 1;
                    }
                }
                Err(_) => self.c.bad_descriptors += 1,
            }
        }
        if self.sp_tx_cur.is_some() && self.rtl.get(p.sp_tx_ready) == 1 {
            moved = true;
            self.sp_tx_cur = None;
        }
        if persist_ack.is_some() {
            moved = true;
            self.stats.last_persist_cycle = now;
        } else if self.rtl.get(p.persist_valid) == 1 {
            moved = true;
            if self.b_pending > 0 || !self.writes.is_empty() {
                self.stats.early_persists += 1;
            }
            let (addr, len) = (
                self.rtl.get(p.persist_addr) as u64,
                self.rtl.get(p.persist_len) as u64,
            );
            self.persist_ack = Some(self.dram.persist(addr, len));
            self.stats.persists += 1;
            self.c.durable_flushes += 1;
        }
        if self.trace {
            eprintln!(
                "c{now} rx {}/{} tx {} ar {} r {}/{} aw {} w {} b {}/{} sprx {} sptx {}/{}",
                rx_active as u8,
                self.rtl.get(p.rx_ready),
                self.rtl.get(p.tx_valid),
                self.rtl.get(p.arvalid),
                r_beat as u8,
                self.rtl.get(p.rready),
                self.rtl.get(p.awvalid),
                self.rtl.get(p.wvalid),
                self.b_pending,
                self.rtl.get(p.bready),
                self.rtl.get(p.sp_rx_valid),
                self.sp_tx_cur.is_some() as u8,
                self.rtl.get(p.sp_tx_ready)
            );
        }
        if self.check_outputs {
            self.rtl.rise();
        } else {
            self.rtl.step();
        }
        moved
    }

    /// Clock until everything queued has been consumed and the pipeline is quiet.
    fn run_until_idle(&mut self, out: &mut Vec<Outgoing>) {
        let start = self.rtl.cycles;
        let mut quiet = 0;
        self.first_in = None;
        self.first_out = None;
        while quiet < IDLE_CYCLES || self.busy() {
            if self.cycle(out) {
                quiet = 0;
            } else {
                quiet += 1;
            }
            if self.rtl.cycles - start > MAX_CYCLES_PER_PACKET {
                self.hung += 1;
                self.rx_q.clear();
                self.rx_off = 0;
                break;
            }
        }
        if let (Some(a), Some(b)) = (self.first_in, self.first_out) {
            self.stats.last_latency = b.saturating_sub(a);
        }
    }
}

impl RtlBoard {
    /// Offer several packets back to back (as a line-rate burst would arrive) and clock until
    /// all are served: the cycle count over the packet count is the node's initiation interval.
    pub fn handle_burst(&mut self, packets: &[(Route, Vec<u8>)], out: &mut Vec<Outgoing>) {
        self.c.rx_packets += packets.len() as u64;
        self.rx_q.extend(packets.iter().cloned());
        self.run_until_idle(out);
    }
}

impl MemoryNode for RtlBoard {
    fn handle(&mut self, route: &Route, bytes: &[u8], out: &mut Vec<Outgoing>) {
        self.c.rx_packets += 1;
        self.rx_q.push_back((*route, bytes.to_vec()));
        self.run_until_idle(out);
        if self.slow.is_some() && self.ring.rx_pending() > 0 {
            self.service(out);
        }
    }

    fn service(&mut self, out: &mut Vec<Outgoing>) -> usize {
        let mut rounds = 0;
        loop {
            if let Some(sp) = self.slow.as_mut() {
                sp.poll(&self.ring, &mut self.dram);
            }
            if self.ring.tx_pending() == 0 {
                break;
            }
            rounds += 1;
            let hung = self.hung;
            self.run_until_idle(out);
            if self.slow.is_none() || self.hung != hung {
                break;
            }
        }
        rounds
    }

    fn counters(&self) -> Counters {
        let mut c = self.c;
        let get = |port: u32| self.rtl.get(port) as u64;
        c.nacks = get(self.p.stat_nacks);
        c.tlb_hits = get(self.p.stat_tlb_hits);
        c.tlb_misses = get(self.p.stat_tlb_misses);
        c.bucket_reads = get(self.p.stat_bucket_reads);
        c.page_faults = get(self.p.stat_page_faults);
        c.denied = get(self.p.stat_denied);
        c.dram_read_bytes = self.dram.read_bytes;
        c.dram_write_bytes = self.dram.write_bytes;
        c
    }

    fn request_daemon_stop(&self) {
        if self.slow.is_none() {
            self.ring
                .reg(reg::DAEMON_STATE)
                .store(daemon_state::STOP_REQUESTED, Ordering::Release);
        }
    }
}
