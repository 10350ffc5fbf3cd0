//! The RTL memory node: the verilated `fastpath_top` clocked from Rust, with its DRAM master
//! connected to the `memmap2` DRAM model (configurable latency), its slow-path descriptor
//! ports connected to the board's ring window (and so to the real slow path, in-process or the
//! `clio-slowpath` daemon), and its network streams to packets. Implements [`MemoryNode`], so
//! `clio board --backend rtl` serves clients exactly like the model.

use crate::model::board::SlowPathFrames;
use crate::model::board::{BoardConfig, BoardError, NodeParts, Outgoing};
use crate::model::dram::Dram;
use crate::model::Counters;
use crate::node::MemoryNode;
use crate::rtl::ports::fastpath_top as port;
use crate::rtl::{Rtl, RtlModule, FASTPATH_TOP, FASTPATH_TOP_TRACED};
pub use clio_hw::tb::Adversary;
use clio_hw::tb::{AxiDram, Memory, StreamSink, StreamSource};
use clio_proto::consts::BEAT_BYTES;
use clio_proto::frame::{Route, ROUTE_BYTES};
use clio_proto::layout::MemoryLayout;
use clio_proto::opcode::{path_of, Path as OpPath};
use clio_proto::ring::{daemon_state, reg, Descriptor, DESC_BYTES};
use clio_slowpath::{RecoveryReport, RingWindow, SlowPath};
use std::path::Path;
use std::sync::atomic::Ordering;

/// Cycles without any activity on the fast path's ports after which the pipeline is taken as
/// drained. It must outlast the longest phase of work that moves no port: a Clio-KV put
/// refused by its header checks drains its payload (up to 16 beats, one every 2 cycles) from
/// the frame buffer before it answers, about 40 cycles; at 32 the harness stopped clocking in
/// the middle of it and the answer came out with the next packet's. 256 leaves room for that
/// and more (`sim/tests/rtl_conformance.rs` seeds 3 and 7 met it).
pub const IDLE_CYCLES: u64 = 256;
/// Upper bound on cycles for one packet (a hung pipeline is reported, not waited on forever).
/// The longest request is a pointer chase round a cycle of nodes to its hop bound
/// (`proto::offload::chase::MAX_HOPS`, 4,096 dependent DRAM reads): on the adversarial DRAM
/// (`DramTiming::adversarial`: read latency 20 plus up to 80 of jitter, R gaps of up to 256
/// cycles) a hop takes up to about 400 cycles, so the bound allows that on top of 200,000.
pub const MAX_CYCLES_PER_PACKET: u64 =
    200_000 + clio_proto::offload::chase::MAX_HOPS as u64 * CHASE_HOP_CYCLES;
/// The most cycles one hop of a pointer chase takes on the adversarial DRAM (see above).
const CHASE_HOP_CYCLES: u64 = 400;
/// Cycles after reset before the fast path takes anything: its key table is swept to zeros,
/// one entry per cycle (`hw/src/key_table.rs`), plus a margin.
pub const RESET_SWEEP_CYCLES: u64 = clio_proto::consts::KEY_TABLE_ENTRIES as u64 + 8;

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

/// How the cosimulation's DRAM answers (`hw::tb::AxiDram`).
#[derive(Debug, Clone, Copy)]
pub struct DramTiming {
    /// Cycles from an AR to its first R beat.
    pub read_latency: u64,
    /// Cycles from a burst's last W beat to its B response (at least 1).
    pub b_latency: u64,
    /// Written data becomes visible only when its B response is taken (the latest AXI
    /// allows), instead of at its W beat: the strict setting that shows a read overtaking a
    /// write. With an `adversary` too, a write burst with nothing earlier held back lands at
    /// its W beats or at its B at random (`AxiDram`), so a write overtaking a read shows too.
    pub writes_visible_at_b: bool,
    /// Random timing on top of the fixed latencies, seeded (`AxiDram::adversarial`): read
    /// bursts and B responses late by random amounts, R beats withheld inside bursts.
    pub adversary: Option<Adversary>,
}

impl DramTiming {
    /// The strict, rough DRAM the conformance streams run on besides the kind default: data
    /// visible only at B, B later than read data, and [`Adversary::rough`] timing from
    /// `seed`.
    pub fn adversarial(seed: u64) -> DramTiming {
        DramTiming {
            read_latency: 20,
            b_latency: 60,
            writes_visible_at_b: true,
            adversary: Some(Adversary::rough(seed)),
        }
    }
}

impl std::fmt::Display for DramTiming {
    /// One line a failing test prints, enough to build the same timing again.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DRAM read latency {}, B latency {}, writes visible at {}",
            self.read_latency,
            self.b_latency,
            if self.writes_visible_at_b { "B" } else { "W" }
        )?;
        match self.adversary {
            Some(a) => write!(
                f,
                ", adversary seed {} (read jitter {}, B jitter {}, R gaps {}/256)",
                a.seed, a.read_jitter, a.b_jitter, a.r_gaps
            ),
            None => write!(f, ", fixed timing"),
        }
    }
}

impl Default for DramTiming {
    /// What [`RtlBoard::new`] uses: B at once, data visible at its W beat.
    fn default() -> Self {
        DramTiming {
            read_latency: 20,
            b_latency: 0,
            writes_visible_at_b: false,
            adversary: None,
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
    /// the burst's last beat, a burst across a 4 KiB boundary). Always 0 for a correct fast
    /// path.
    pub axi_violations: u64,
    /// Ordering hazards seen by the DRAM model (a read addressed over a write without its B
    /// response, a write over a read with beats to come: `AxiDram::hazards`). Always 0 for a
    /// fast path whose ordering rules hold.
    pub axi_hazards: u64,
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
    layout: MemoryLayout,
    /// DRAM behind the fast path's AXI port (`clio_hw::tb::AxiDram`, the bus model of the hw
    /// testbenches): reads after `dram_latency` cycles, B responses the cycle after the last
    /// W beat.
    axi: AxiDram<CosimDram>,
    ring: std::sync::Arc<RingWindow>,
    slow: Option<SlowPath>,
    /// The slow path's thread, when it has one (kept as long as the node).
    _slow_thread: Option<crate::slow_thread::SlowPathThread>,
    rx: StreamSource<Route>,
    tx: StreamSink<Route>,
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

impl RtlBoard {
    /// Build the node: DRAM, rings and slow path as for the model, the RTL reset and
    /// configured, and the free-page buffer filled. `vcd` writes a waveform.
    pub fn new(
        cfg: &BoardConfig,
        dram_latency: u64,
        vcd: Option<&Path>,
    ) -> Result<RtlBoard, BoardError> {
        // Waveform support halves the model's speed, so it is a separate build.
        let model = if vcd.is_some() {
            &FASTPATH_TOP_TRACED
        } else {
            &FASTPATH_TOP
        };
        let timing = DramTiming {
            read_latency: dram_latency,
            ..DramTiming::default()
        };
        Self::with_model(cfg, model, timing, vcd)
    }

    /// As [`RtlBoard::new`], with another build of `fastpath_top` and the DRAM's timing.
    pub fn with_model(
        cfg: &BoardConfig,
        model: &'static RtlModule,
        timing: DramTiming,
        vcd: Option<&Path>,
    ) -> Result<RtlBoard, BoardError> {
        Self::build(cfg, model, timing, vcd, 0)
    }

    /// The node on the switchable build of every mutant ([`crate::rtl::FASTPATH_TOP_MUTANTS`])
    /// with mutant `select` switched on from reset (a number of [`crate::rtl::MUTANTS`]; 0 is
    /// the unbroken fast path).
    pub fn with_mutant(
        cfg: &BoardConfig,
        timing: DramTiming,
        select: u8,
    ) -> Result<RtlBoard, BoardError> {
        Self::build(cfg, &crate::rtl::FASTPATH_TOP_MUTANTS, timing, None, select)
    }

    fn build(
        cfg: &BoardConfig,
        model: &'static RtlModule,
        timing: DramTiming,
        vcd: Option<&Path>,
        select: u8,
    ) -> Result<RtlBoard, BoardError> {
        assert_eq!(model.name, "fastpath_top", "a fast path model");
        let NodeParts {
            layout,
            dram,
            ring,
            slow,
            slow_thread,
            recovery,
        } = NodeParts::new(cfg)?;
        let rtl = Rtl::new(model, vcd);
        let mut axi = AxiDram::new(CosimDram(dram), timing.read_latency, timing.b_latency);
        if timing.writes_visible_at_b {
            axi = axi.writes_visible_at_b();
        }
        if let Some(a) = timing.adversary {
            axi = axi.adversarial(a);
        }
        let mut b = RtlBoard {
            rtl,
            layout,
            axi,
            ring,
            slow,
            _slow_thread: slow_thread,
            rx: StreamSource::default(),
            tx: StreamSink::default(),
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
            port::TX_READY,
            port::M_AXI_ARREADY,
            port::M_AXI_AWREADY,
            port::M_AXI_WREADY,
            port::SP_RX_READY,
        ] {
            b.rtl.set(port, 1);
        }
        if select != 0 {
            let sel = model
                .ports
                .iter()
                .position(|p| p.name == clio_hw::mutants::SELECT_PORT)
                .expect("a mutant is selected only on the switchable build");
            b.rtl.set(sel as u32, select as u128);
        }
        b.rtl.set(port::CFG_PAGE_SHIFT, layout.page_shift as u128);
        // A memory file is the persistence domain (`--memory-file`), as for the model.
        b.rtl
            .set(port::CFG_PERSIST, b.axi.mem().is_persistent() as u128);
        b.rtl
            .set(port::CFG_BUCKET_MASK, (layout.bucket_count() - 1) as u128);
        b.rtl.set(port::RESET, 1);
        for _ in 0..4 {
            b.rtl.tick();
        }
        b.rtl.set(port::RESET, 0);
        // The key table's zero sweep: nothing is taken before it is done.
        for _ in 0..RESET_SWEEP_CYCLES {
            b.rtl.tick();
        }
        let mut sink = Vec::new();
        b.service(&mut sink);
        Ok(b)
    }

    /// Feed `sent` in bursts of up to `n` packets, so that the fast path's stages overlap
    /// (the next frame is received and the previous response sent while one executes). A
    /// slow-path request (alloc, free, register) ends a burst and goes alone: its reply comes
    /// from the slow path, which runs between bursts, as it runs between packets for the
    /// model. Returns every response.
    pub fn replay_bursts(&mut self, sent: &[(Route, Vec<u8>)], n: usize) -> Vec<Outgoing> {
        let mut out = Vec::new();
        let mut burst: Vec<(Route, Vec<u8>)> = Vec::new();
        for (r, b) in sent {
            let slow = b.len() > 1 && path_of(b[1]) == Some(OpPath::SlowPath);
            if slow || burst.len() == n {
                self.handle_burst(&burst, &mut out);
                self.service(&mut out);
                burst.clear();
            }
            burst.push((*r, b.clone()));
            if slow {
                self.handle_burst(&burst, &mut out);
                self.service(&mut out);
                burst.clear();
            }
        }
        self.handle_burst(&burst, &mut out);
        self.service(&mut out);
        out
    }

    /// What the in-process slow path recovered from the memory file, if it did.
    pub fn recovery(&self) -> Option<RecoveryReport> {
        self.recovery
    }

    /// Cycle statistics.
    pub fn cycle_stats(&self) -> CycleStats {
        // The DRAM model counts the AXI rules broken (bursts across 4 KiB, W before AW, WLAST
        // off the burst's last beat) and the ordering hazards (an AR or AW over a burst in
        // flight the other way) itself: read here, not copied every cycle.
        CycleStats {
            cycles: self.rtl.cycles,
            axi_violations: self.axi.violations(),
            axi_hazards: self.axi.hazards(),
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
        self.axi.mem().peek(pa, n)
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
        !self.rx.is_empty()
            || self.tx.busy()
            || self.axi.busy()
            || self.sp_tx_cur.is_some()
            || self.persist_ack.is_some()
            || self.ring.tx_pending() > 0
    }

    /// Advance one clock cycle, servicing every interface. Returns whether anything moved.
    fn cycle(&mut self, out: &mut Vec<Outgoing>) -> bool {
        let now = self.rtl.cycles;
        let mut w = [0u32; 32];
        // Drive inputs for this cycle. Outputs are read as the last edge left them: the fast
        // path's outputs come from registers, so one evaluation per cycle (at the edge) suffices.
        let (rx_active, rx_first) = if let Some(beat) = self.rx.beat() {
            words_of(beat.data, &mut w[..16]);
            self.rtl.set_words(port::RX_DATA, &w[..16]);
            self.rtl.set(port::RX_KEEP, beat.keep as u128);
            self.rtl.set(port::RX_LAST, beat.last as u128);
            if beat.first {
                // The route is side band of the first beat; it stays driven until the next packet.
                words_of(&beat.meta.to_bytes(), &mut w[..8]);
                self.rtl.set_words(port::RX_ROUTE, &w[..8]);
            }
            self.rtl.set(port::RX_VALID, 1);
            (true, beat.first)
        } else {
            self.rtl.set(port::RX_VALID, 0);
            (false, false)
        };
        let axi = self.axi.drive(now);
        if axi.r_valid {
            words_of(self.axi.r_data(), &mut w[..16]);
            self.rtl.set_words(port::M_AXI_RDATA, &w[..16]);
            self.rtl.set(port::M_AXI_RLAST, axi.r_last as u128);
        }
        self.rtl.set(port::M_AXI_RVALID, axi.r_valid as u128);
        let r_beat = axi.r_valid;
        self.rtl.set(port::M_AXI_BVALID, axi.b_valid as u128);
        self.rtl.set(port::SP_RX_ROOM, self.ring.rx_free() as u128);
        self.rtl
            .set(port::SP_RX_TAKEN, (self.ring.rx_taken() & 0xFFFF) as u128);
        if self.sp_tx_cur.is_none() {
            // The fast path takes descriptors as bytes, exactly as they sit in the ring.
            if let Some(d) = self.ring.pop_tx_bytes() {
                words_of(&d, &mut w[..32]);
                self.rtl.set_words(port::SP_TX_DESC, &w[..32]);
                self.sp_tx_cur = Some(d);
            }
        }
        self.rtl
            .set(port::SP_TX_VALID, self.sp_tx_cur.is_some() as u128);
        // The persist handshake is answered the cycle after the request is seen, once its
        // range is flushed to the memory file (msync).
        let persist_ack = self.persist_ack.take();
        self.rtl
            .set(port::PERSIST_DONE, persist_ack.is_some() as u128);
        self.rtl
            .set(port::PERSIST_ERROR, (persist_ack == Some(false)) as u128);
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
        let rx_beat = rx_active && self.rtl.get(port::RX_READY) == 1;
        if rx_beat
            && (self.rtl.get(port::TX_VALID) == 1
                || self.rtl.get(port::M_AXI_WVALID) == 1
                || (r_beat && self.rtl.get(port::M_AXI_RREADY) == 1))
        {
            self.stats.overlap_cycles += 1;
        }
        if rx_beat {
            moved = true;
            if rx_first {
                self.first_in = Some(now);
            }
            if self.rx.accept() {
                self.stats.packets_in += 1;
            }
        }
        if self.rtl.get(port::TX_VALID) == 1 {
            moved = true;
            self.rtl.get_words(port::TX_DATA, &mut w[..16]);
            let mut beat = [0u8; BEAT_BYTES];
            bytes_of(&w[..16], &mut beat);
            let keep = self.rtl.get(port::TX_KEEP) as u64;
            let last = self.rtl.get(port::TX_LAST) == 1;
            let rtl = &self.rtl;
            let route = || {
                let mut rw = [0u32; 8];
                rtl.get_words(port::TX_ROUTE, &mut rw);
                let mut rb = [0u8; ROUTE_BYTES];
                bytes_of(&rw, &mut rb);
                Route::from_bytes(&rb).unwrap_or_default()
            };
            if !self.tx.busy() && self.first_out.is_none() {
                self.first_out = Some(now);
            }
            if let Some(pkt) = self.tx.take(&beat, keep, last, route) {
                out.push(pkt);
                self.stats.packets_out += 1;
                self.c.tx_packets += 1;
            }
        }
        if self.rtl.get(port::M_AXI_ARVALID) == 1 {
            moved = true;
            let (addr, len) = (
                self.rtl.get(port::M_AXI_ARADDR),
                self.rtl.get(port::M_AXI_ARLEN),
            );
            self.axi.ar(now, addr as u64, len as u8);
        }
        if r_beat && self.rtl.get(port::M_AXI_RREADY) == 1 {
            moved = true;
            self.axi.r_ready();
        }
        if self.rtl.get(port::M_AXI_AWVALID) == 1 {
            moved = true;
            let (addr, len) = (
                self.rtl.get(port::M_AXI_AWADDR),
                self.rtl.get(port::M_AXI_AWLEN),
            );
            self.axi.aw(now, addr as u64, len as u8);
        }
        if self.rtl.get(port::M_AXI_WVALID) == 1 {
            moved = true;
            self.rtl.get_words(port::M_AXI_WDATA, &mut w[..16]);
            let mut beat = [0u8; BEAT_BYTES];
            bytes_of(&w[..16], &mut beat);
            let strb = self.rtl.get(port::M_AXI_WSTRB) as u64;
            let last = self.rtl.get(port::M_AXI_WLAST) == 1;
            self.axi.w(now, &beat, strb, last);
        }
        if axi.b_valid && self.rtl.get(port::M_AXI_BREADY) == 1 {
            // A B response is progress: the fast path may have waited for it (a FENCE, a read
            // after a write) for longer than the idle window.
            moved = true;
            self.axi.b_ready();
        }
        if self.rtl.get(port::SP_RX_VALID) == 1 {
            moved = true;
            self.rtl.get_words(port::SP_RX_DESC, &mut w[..32]);
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
        if self.sp_tx_cur.is_some() && self.rtl.get(port::SP_TX_READY) == 1 {
            moved = true;
            self.sp_tx_cur = None;
        }
        if persist_ack.is_some() {
            moved = true;
            self.stats.last_persist_cycle = now;
        } else if self.rtl.get(port::PERSIST_VALID) == 1 {
            moved = true;
            if self.axi.writes_in_flight() > 0 {
                self.stats.early_persists += 1;
            }
            let (addr, len) = (
                self.rtl.get(port::PERSIST_ADDR) as u64,
                self.rtl.get(port::PERSIST_LEN) as u64,
            );
            self.persist_ack = Some(self.axi.mem().persist(addr, len));
            self.stats.persists += 1;
            self.c.durable_flushes += 1;
        }
        if self.trace {
            eprintln!(
                "c{now} rx {}/{} tx {} ar {} r {}/{} aw {} w {} b {}/{} sprx {} sptx {}/{}",
                rx_active as u8,
                self.rtl.get(port::RX_READY),
                self.rtl.get(port::TX_VALID),
                self.rtl.get(port::M_AXI_ARVALID),
                r_beat as u8,
                self.rtl.get(port::M_AXI_RREADY),
                self.rtl.get(port::M_AXI_AWVALID),
                self.rtl.get(port::M_AXI_WVALID),
                axi.b_valid as u8,
                self.rtl.get(port::M_AXI_BREADY),
                self.rtl.get(port::SP_RX_VALID),
                self.sp_tx_cur.is_some() as u8,
                self.rtl.get(port::SP_TX_READY)
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
                self.rx = StreamSource::default();
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
        for (route, bytes) in packets {
            self.rx.push(*route, bytes.clone());
        }
        self.run_until_idle(out);
    }
}

impl MemoryNode for RtlBoard {
    fn handle(&mut self, route: &Route, bytes: &[u8], out: &mut Vec<Outgoing>) {
        self.c.rx_packets += 1;
        self.rx.push(*route, bytes.to_vec());
        self.run_until_idle(out);
        if self.slow.is_some() && self.ring.rx_pending() > 0 {
            self.service(out);
        }
    }

    fn service(&mut self, out: &mut Vec<Outgoing>) -> usize {
        let mut rounds = 0;
        loop {
            // The embedded slow path executes for a slice of wall-clock time per poll: on a
            // loaded host it may return with requests still waiting and nothing in the TX
            // ring yet, so it is polled until it holds no work, not only until the ring is
            // empty.
            let mut slow_holds = false;
            if let Some(sp) = self.slow.as_mut() {
                sp.poll(&self.ring, &mut SlowPathFrames(&mut self.axi.mem_mut().0));
                slow_holds = sp.waiting() > 0 || sp.outbox_len() > 0;
            }
            if self.ring.tx_pending() == 0 {
                if slow_holds {
                    continue;
                }
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
        c.nacks = get(port::STAT_NACKS);
        c.tlb_hits = get(port::STAT_TLB_HITS);
        c.tlb_misses = get(port::STAT_TLB_MISSES);
        c.bucket_reads = get(port::STAT_BUCKET_READS);
        c.page_faults = get(port::STAT_PAGE_FAULTS);
        c.denied = get(port::STAT_DENIED);
        c.dram_read_bytes = self.axi.mem().read_bytes;
        c.dram_write_bytes = self.axi.mem().write_bytes;
        c
    }

    fn request_daemon_stop(&self) {
        if self.slow.is_none() {
            self.ring
                .reg(reg::DAEMON_STATE)
                .store(daemon_state::STOP_REQUESTED, Ordering::Release);
        }
    }
    fn ring_window(&self) -> Option<std::sync::Arc<RingWindow>> {
        Some(self.ring.clone())
    }
}

/// The node's DRAM behind the AXI model; an access beyond it reads zeros and writes nothing.
/// The DRAM model's own methods (`peek`, `persist`) are reached through it.
struct CosimDram(Dram);

impl std::ops::Deref for CosimDram {
    type Target = Dram;
    fn deref(&self) -> &Dram {
        &self.0
    }
}

impl Memory for CosimDram {
    fn read(&mut self, addr: u64, out: &mut [u8]) {
        if !self.0.read(addr, out) {
            out.fill(0);
        }
    }
    fn write(&mut self, addr: u64, data: &[u8]) {
        self.0.write(addr, data);
    }
}
