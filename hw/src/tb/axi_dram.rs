//! The AXI4 DRAM slave every testbench of a DRAM master uses: the `pt_walker` and
//! `fastpath_top` testbenches (rust-hdl simulation) and the cosimulation harness
//! (`sim/src/cosim.rs`, Verilator). It is port-agnostic: the caller copies what the model
//! drives onto the R and B channels, and reports the handshakes it sampled before the edge.
//!
//! Behaviour: always ready on AR, AW and W; read bursts are served in order, the first beat
//! `read_latency` cycles after the AR, one beat per cycle while RREADY is high; write data
//! goes to the burst at the head of the AW queue with byte strobes; a B response is offered
//! `b_latency` cycles after a burst's last beat (at the earliest the next cycle), in order.
//! Bursts are INCR over whole 64-byte beats from the beat-aligned address. Write data before
//! its address, a WLAST that is not on the burst's last beat, and a burst that crosses a 4 KiB
//! boundary (AXI4 forbids it; a slave may assume none does) are counted as violations.
//!
//! Where written data becomes visible: by default at its W beat. [`AxiDram::writes_visible_at_b`]
//! holds a burst's data back until its B response is taken instead, the latest an AXI slave
//! may make it visible: a master that reads before an earlier write's B response then sees
//! what a real interconnect is allowed to show it. With an [`Adversary`] as well, each write
//! burst that finds no earlier data held back lands at its W beats or at its B at random (a
//! burst behind held data is held too, so writes still land in order): the early ones show a
//! master that writes before an earlier read's data has all come back (the read, served
//! later, returns the new bytes), the held ones a master that reads too early.
//!
//! Ordering hazards: an AR whose bytes overlap a write burst still without its B response, and
//! an AW whose bytes overlap a read burst whose beats are not all taken, are counted
//! ([`AxiDram::hazards`]). AXI orders neither case, so a master that lets one happen depends on
//! the slave's kindness; the fast path's ordering rules promise none happen.
//!
//! Timing: fixed by default. [`AxiDram::adversarial`] draws it from a seeded [`Adversary`]
//! instead, anywhere AXI allows: each read burst's first beat later by a random number of
//! cycles, R beats withheld for random cycles inside a burst, each B response later by a
//! random number of cycles (in order, so one late B holds back and bunches those behind it).
//! A master whose correctness depends on the kind timing of the fixed model fails there.

use super::rng::Rng;
use std::collections::{HashMap, VecDeque};

/// A seeded random DRAM timing within the AXI rules (see the module doc). Mostly short extra
/// delays, one burst in eight delayed by up to the full `*_jitter`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adversary {
    /// The random stream's seed (nonzero; printed by the tests so a failure can be replayed).
    pub seed: u64,
    /// At most this many cycles more before a read burst's first beat.
    pub read_jitter: u64,
    /// At most this many cycles more before a write burst's B response.
    pub b_jitter: u64,
    /// Per 256 cycles, how many an offered R beat is withheld (RVALID low inside a burst).
    pub r_gaps: u8,
}

impl Adversary {
    /// Rough timing from `seed`: reads up to 80 cycles late, B up to 200, a gap in one R cycle
    /// of four.
    pub fn rough(seed: u64) -> Adversary {
        Adversary {
            seed,
            read_jitter: 80,
            b_jitter: 200,
            r_gaps: 64,
        }
    }

    fn extra(rng: &mut Rng, jitter: u64) -> u64 {
        if jitter == 0 {
            0
        } else if rng.below(8) == 0 {
            rng.below(jitter + 1)
        } else {
            rng.below(4.min(jitter) + 1)
        }
    }
}

/// Bytes per beat (512-bit data bus).
pub const BEAT: usize = 64;

/// Byte-addressed memory behind the AXI model.
pub trait Memory {
    /// Fill `out` from `addr`.
    fn read(&mut self, addr: u64, out: &mut [u8]);
    /// Store `data` at `addr`.
    fn write(&mut self, addr: u64, data: &[u8]);
}

/// Sparse memory for the hw testbenches: bytes never written read as zero.
#[derive(Debug, Default, Clone)]
pub struct SparseMemory {
    bytes: HashMap<u64, u8>,
}

impl SparseMemory {
    /// `n` bytes from `addr`.
    pub fn bytes(&self, addr: u64, n: usize) -> Vec<u8> {
        (0..n as u64)
            .map(|i| self.bytes.get(&(addr + i)).copied().unwrap_or(0))
            .collect()
    }
}

impl Memory for SparseMemory {
    fn read(&mut self, addr: u64, out: &mut [u8]) {
        for (i, b) in out.iter_mut().enumerate() {
            *b = self.bytes.get(&(addr + i as u64)).copied().unwrap_or(0);
        }
    }
    fn write(&mut self, addr: u64, data: &[u8]) {
        for (i, b) in data.iter().enumerate() {
            self.bytes.insert(addr + i as u64, *b);
        }
    }
}

#[derive(Debug, Clone, Copy)]
struct Burst {
    /// First beat's address (beat aligned).
    addr: u64,
    beats: u32,
    done: u32,
    /// Cycle from which its first beat (read) may be presented.
    ready_at: u64,
}

impl Burst {
    fn new(addr: u64, len: u8, ready_at: u64) -> Burst {
        Burst {
            addr: addr & !(BEAT as u64 - 1),
            beats: len as u32 + 1,
            done: 0,
            ready_at,
        }
    }
    fn beat_addr(&self) -> u64 {
        self.addr + self.done as u64 * BEAT as u64
    }
    /// The burst crosses a 4 KiB boundary.
    fn crosses_4k(&self) -> bool {
        let last = self.addr + (self.beats as u64 - 1) * BEAT as u64;
        self.addr >> 12 != last >> 12
    }
    /// The burst's bytes overlap `other`'s (both whole beats from their aligned addresses).
    fn overlaps(&self, other: &Burst) -> bool {
        let span = |b: &Burst| (b.addr / BEAT as u64, b.beats as u64 - 1);
        super::spans_overlap(span(self), span(other))
    }
}

/// What the model drives in a cycle (the R beat's data is [`AxiDram::r_data`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AxiDrive {
    /// RVALID.
    pub r_valid: bool,
    /// RLAST (with `r_valid`).
    pub r_last: bool,
    /// BVALID.
    pub b_valid: bool,
}

/// The AXI4 DRAM slave model over a [`Memory`].
#[derive(Debug)]
pub struct AxiDram<M> {
    mem: M,
    read_latency: u64,
    b_latency: u64,
    reads: VecDeque<Burst>,
    writes: VecDeque<Burst>,
    b_due: VecDeque<u64>,
    /// Per entry of `b_due`, its burst (for the hazard check).
    b_bursts: VecDeque<Burst>,
    /// With `visible_at_b`: the data of the burst being written (address, bytes).
    w_held: Vec<(u64, Vec<u8>)>,
    /// With `visible_at_b`: per entry of `b_due`, the data that lands when its B is taken.
    b_held: VecDeque<Vec<(u64, Vec<u8>)>>,
    visible_at_b: bool,
    /// With `visible_at_b`: the burst being written lands at its W beats (drawn at its first
    /// beat, see the module doc).
    w_early: bool,
    adversary: Option<(Adversary, Rng)>,
    r_data: [u8; BEAT],
    drive: AxiDrive,
    violations: u64,
    hazards: u64,
}

impl<M: Memory> AxiDram<M> {
    /// A slave over `mem`: first read beat `read_latency` cycles after its AR, B responses
    /// `b_latency` cycles after a burst's last W beat.
    pub fn new(mem: M, read_latency: u64, b_latency: u64) -> AxiDram<M> {
        AxiDram {
            mem,
            read_latency,
            b_latency,
            reads: VecDeque::new(),
            writes: VecDeque::new(),
            b_due: VecDeque::new(),
            b_bursts: VecDeque::new(),
            w_held: Vec::new(),
            b_held: VecDeque::new(),
            visible_at_b: false,
            w_early: false,
            adversary: None,
            r_data: [0; BEAT],
            drive: AxiDrive::default(),
            violations: 0,
            hazards: 0,
        }
    }

    /// Hold each write burst's data back until its B response is taken (see the module doc).
    pub fn writes_visible_at_b(mut self) -> AxiDram<M> {
        self.visible_at_b = true;
        self
    }

    /// Draw the timing from `a` on top of the fixed latencies (see the module doc).
    pub fn adversarial(mut self, a: Adversary) -> AxiDram<M> {
        self.adversary = Some((a, Rng(a.seed.max(1))));
        self
    }

    /// Extra cycles for the next read burst or B response (0 without an adversary).
    fn extra(&mut self, b: bool) -> u64 {
        match &mut self.adversary {
            Some((a, rng)) => Adversary::extra(rng, if b { a.b_jitter } else { a.read_jitter }),
            None => 0,
        }
    }

    /// The memory.
    pub fn mem(&self) -> &M {
        &self.mem
    }

    /// The memory, to change it behind the bus.
    pub fn mem_mut(&mut self) -> &mut M {
        &mut self.mem
    }

    /// The R and B channels for cycle `now` (call before the edge, then sample the master).
    pub fn drive(&mut self, now: u64) -> AxiDrive {
        let mut d = AxiDrive {
            b_valid: self.b_due.front().is_some_and(|&t| t <= now),
            ..AxiDrive::default()
        };
        let gap = match &mut self.adversary {
            Some((a, rng)) if a.r_gaps > 0 => rng.below(256) < a.r_gaps as u64,
            _ => false,
        };
        if let Some(b) = self.reads.front() {
            if b.ready_at <= now && !gap {
                let a = b.beat_addr();
                d.r_valid = true;
                d.r_last = b.done + 1 == b.beats;
                self.mem.read(a, &mut self.r_data);
            }
        }
        self.drive = d;
        d
    }

    /// The R beat offered by the last [`AxiDram::drive`].
    pub fn r_data(&self) -> &[u8; BEAT] {
        &self.r_data
    }

    /// The master sampled RREADY high: the beat offered this cycle (if any) is taken.
    pub fn r_ready(&mut self) {
        if !self.drive.r_valid {
            return;
        }
        if let Some(b) = self.reads.front_mut() {
            b.done += 1;
            if b.done == b.beats {
                self.reads.pop_front();
            }
        }
    }

    /// The master sampled BREADY high: the B response offered this cycle (if any) is taken.
    pub fn b_ready(&mut self) {
        if self.drive.b_valid {
            self.b_due.pop_front();
            self.b_bursts.pop_front();
            for (addr, data) in self.b_held.pop_front().unwrap_or_default() {
                self.mem.write(addr, &data);
            }
        }
    }

    /// An AR handshake at `now` (ARLEN `len`).
    pub fn ar(&mut self, now: u64, addr: u64, len: u8) {
        let at = now + self.read_latency + self.extra(false);
        let b = Burst::new(addr, len, at);
        self.violations += b.crosses_4k() as u64;
        if self
            .writes
            .iter()
            .chain(&self.b_bursts)
            .any(|w| w.overlaps(&b))
        {
            self.hazards += 1;
        }
        self.reads.push_back(b);
    }

    /// An AW handshake at `now` (AWLEN `len`).
    pub fn aw(&mut self, now: u64, addr: u64, len: u8) {
        let b = Burst::new(addr, len, now);
        self.violations += b.crosses_4k() as u64;
        if self.reads.iter().any(|r| r.overlaps(&b)) {
            self.hazards += 1;
        }
        self.writes.push_back(b);
    }

    /// A W handshake at `now`: `data` with byte strobes `strb` (bit k = byte k), WLAST `last`.
    pub fn w(&mut self, now: u64, data: &[u8; BEAT], strb: u64, last: bool) {
        if self.visible_at_b && self.writes.front().is_some_and(|b| b.done == 0) {
            // A burst's first beat: early only with nothing earlier held back.
            let nothing_held = self.w_held.is_empty() && self.b_held.iter().all(|h| h.is_empty());
            self.w_early = nothing_held
                && match &mut self.adversary {
                    Some((_, rng)) => rng.below(2) == 0,
                    None => false,
                };
        }
        let hold = self.visible_at_b && !self.w_early;
        let Some(b) = self.writes.front_mut() else {
            // Write data before its address.
            self.violations += 1;
            return;
        };
        let base = b.beat_addr();
        // Runs of set strobes, one memory write each (a full beat is one write).
        let mut k = 0;
        while k < BEAT {
            let rest = strb >> k;
            if rest == 0 {
                break;
            }
            let skip = rest.trailing_zeros() as usize;
            let run = (rest >> skip).trailing_ones() as usize;
            let at = k + skip;
            if hold {
                self.w_held
                    .push((base + at as u64, data[at..at + run].to_vec()));
            } else {
                self.mem.write(base + at as u64, &data[at..at + run]);
            }
            k = at + run;
        }
        b.done += 1;
        if last != (b.done == b.beats) {
            // WLAST must mark exactly the last beat of the burst AWLEN announced.
            self.violations += 1;
        }
        if b.done == b.beats {
            let done = *b;
            self.writes.pop_front();
            self.b_bursts.push_back(done);
            let at = now + self.b_latency.max(1) + self.extra(true);
            self.b_due.push_back(at);
            if self.visible_at_b {
                self.b_held.push_back(std::mem::take(&mut self.w_held));
            }
        }
    }

    /// AXI rule breaks seen so far (W before AW, misplaced WLAST, a burst across 4 KiB). 0 for
    /// a correct master.
    pub fn violations(&self) -> u64 {
        self.violations
    }

    /// Ordering hazards seen so far (see the module doc): reads addressed over a write without
    /// its B response, writes addressed over a read with beats still to come. 0 for a master
    /// that keeps its accesses ordered.
    pub fn hazards(&self) -> u64 {
        self.hazards
    }

    /// Writes addressed whose data or B response is still due.
    pub fn writes_in_flight(&self) -> usize {
        self.writes.len() + self.b_due.len()
    }

    /// Anything in flight: a read burst, a write burst, or a B response.
    pub fn busy(&self) -> bool {
        !self.reads.is_empty() || self.writes_in_flight() > 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_wait_their_latency_and_rready() {
        let mut m = SparseMemory::default();
        m.write(0x1000, &[7; 128]);
        m.write(0x1040, &[9; 64]);
        let mut d = AxiDram::new(m, 3, 0);
        d.ar(10, 0x1010, 1);
        assert!(!d.drive(12).r_valid);
        let r = d.drive(13);
        assert!(r.r_valid && !r.r_last);
        assert_eq!(d.r_data()[0], 7);
        // Not taken: the same beat again.
        let r = d.drive(14);
        assert!(r.r_valid && !r.r_last && d.r_data()[0] == 7);
        d.r_ready();
        let r = d.drive(15);
        assert!(r.r_valid && r.r_last && d.r_data()[0] == 9);
        d.r_ready();
        assert!(!d.drive(16).r_valid);
        assert!(!d.busy());
    }

    #[test]
    fn writes_take_strobes_and_answer_in_order() {
        let mut d = AxiDram::new(SparseMemory::default(), 0, 2);
        let mut beat = [0u8; BEAT];
        for (i, b) in beat.iter_mut().enumerate() {
            *b = i as u8 + 1;
        }
        d.aw(0, 0x40, 0);
        d.w(1, &beat, 0xF0F0, true);
        assert_eq!(d.writes_in_flight(), 1);
        assert!(!d.drive(2).b_valid);
        assert!(d.drive(3).b_valid);
        d.b_ready();
        assert!(!d.drive(4).b_valid);
        let got = d.mem().bytes(0x40, 16);
        assert_eq!(got[..4], [0; 4]);
        assert_eq!(got[4..8], [5, 6, 7, 8]);
        assert_eq!(got[12..16], [13, 14, 15, 16]);
        assert_eq!(d.violations(), 0);
        // Data without an address, and WLAST early, are violations.
        d.w(5, &beat, u64::MAX, true);
        d.aw(6, 0x80, 1);
        d.w(7, &beat, u64::MAX, true);
        assert_eq!(d.violations(), 2);
        // A burst up to a 4 KiB boundary is fine; one beat over it is not, either way.
        d.ar(8, 0x1000 - 4 * 64, 3);
        d.aw(8, 0x2000 - 64, 0);
        assert_eq!(d.violations(), 2);
        d.ar(8, 0x1000 - 4 * 64, 4);
        d.aw(8, 0x2000 - 64, 1);
        assert_eq!(d.violations(), 4);
    }

    #[test]
    fn an_adversary_delays_reads_and_b_and_withholds_beats_in_order() {
        let run = |a: Option<Adversary>| {
            let mut m = SparseMemory::default();
            for i in 0..64u64 {
                m.write(i * 64, &[i as u8; 64]);
            }
            let mut d = AxiDram::new(m, 2, 1);
            if let Some(a) = a {
                d = d.adversarial(a);
            }
            // Sixteen 4-beat reads and sixteen 1-beat writes issued at once; record when
            // each beat and B arrives.
            for i in 0..16u64 {
                d.ar(0, i * 256, 3);
                d.aw(0, 0x10000 + i * 64, 0);
                d.w(0, &[1; BEAT], u64::MAX, true);
            }
            let (mut beats, mut bs) = (Vec::new(), Vec::new());
            let mut now = 0;
            while d.busy() {
                now += 1;
                let r = d.drive(now);
                if r.r_valid {
                    beats.push((now, d.r_data()[0]));
                    d.r_ready();
                }
                if r.b_valid {
                    bs.push(now);
                    d.b_ready();
                }
                assert!(now < 100_000);
            }
            (beats, bs, now)
        };
        let (kind, kind_b, kind_end) = run(None);
        let (rough, rough_b, rough_end) = run(Some(Adversary::rough(7)));
        // The same beats in the same order (reads stay in order), only later.
        let data = |v: &[(u64, u8)]| v.iter().map(|b| b.1).collect::<Vec<_>>();
        assert_eq!(data(&kind), data(&rough));
        assert_eq!(kind_b.len(), rough_b.len());
        assert!(rough_end > kind_end, "{rough_end} <= {kind_end}");
        // Gaps inside bursts: some consecutive beats of one burst (beat k of read i holds
        // 4i + k) are more than a cycle apart.
        let gaps = rough
            .windows(2)
            .filter(|w| w[0].1 % 4 != 3 && w[1].1 == w[0].1 + 1 && w[1].0 > w[0].0 + 1)
            .count();
        assert!(gaps > 0, "no R beat withheld");
        // B responses bunch: some arrive on consecutive cycles after a long wait.
        assert!(rough_b.windows(2).any(|w| w[1] == w[0] + 1));
        assert!(rough_b.windows(2).any(|w| w[1] > w[0] + 4));
        // The same seed, the same timing.
        assert_eq!(run(Some(Adversary::rough(7))).2, rough_end);
        assert_ne!(run(Some(Adversary::rough(8))).0, rough);
    }

    #[test]
    fn held_writes_land_when_their_b_is_taken() {
        let mut d = AxiDram::new(SparseMemory::default(), 1, 5).writes_visible_at_b();
        d.aw(0, 0x40, 0);
        d.w(1, &[3; BEAT], u64::MAX, true);
        // A read before the B response sees the old bytes.
        d.ar(2, 0x40, 0);
        assert!(d.drive(3).r_valid);
        assert_eq!(d.r_data()[0], 0);
        d.r_ready();
        assert_eq!(d.mem().bytes(0x40, 1), [0]);
        assert!(!d.drive(5).b_valid);
        assert!(d.drive(6).b_valid);
        assert_eq!(d.mem().bytes(0x40, 1), [0], "offered, not taken");
        d.b_ready();
        assert_eq!(d.mem().bytes(0x40, BEAT), [3; BEAT]);
        assert!(!d.busy());
    }

    #[test]
    fn an_adversary_lands_some_writes_early_and_keeps_them_in_order() {
        let mut d = AxiDram::new(SparseMemory::default(), 1, 3)
            .writes_visible_at_b()
            .adversarial(Adversary::rough(5));
        let (mut early, mut held) = (0, 0);
        let mut now = 0;
        for i in 1..=200u8 {
            // Every write to the same beat: the last one written must be what stays.
            d.aw(now, 0x40, 0);
            d.w(now, &[i; BEAT], u64::MAX, true);
            if d.mem().bytes(0x40, 1) == [i] {
                early += 1;
            } else {
                held += 1;
            }
            // Sometimes drain every B first, so the next write finds nothing held.
            let drain = i % 3 == 0;
            loop {
                now += 1;
                if d.drive(now).b_valid {
                    d.b_ready();
                }
                if !drain || d.writes_in_flight() == 0 {
                    break;
                }
                assert!(now < 1_000_000);
            }
        }
        while d.busy() {
            now += 1;
            if d.drive(now).b_valid {
                d.b_ready();
            }
        }
        assert_eq!(
            d.mem().bytes(0x40, BEAT),
            [200; BEAT],
            "writes landed out of order"
        );
        assert!(early > 10 && held > 10, "{early} early, {held} held");
    }

    #[test]
    fn overlapping_accesses_in_flight_are_hazards() {
        let mut d = AxiDram::new(SparseMemory::default(), 2, 3);
        // A write's bytes 0x40..0xC0; a read of 0xC0 is next to it, not over it.
        d.aw(0, 0x40, 1);
        d.ar(0, 0xC0, 0);
        assert_eq!(d.hazards(), 0);
        // Over the write whose data is still to come, and over it once its data is in but
        // its B is not taken.
        d.ar(0, 0x80, 0);
        assert_eq!(d.hazards(), 1);
        d.w(1, &[0; BEAT], u64::MAX, false);
        d.w(2, &[0; BEAT], u64::MAX, true);
        d.ar(2, 0x40, 3);
        assert_eq!(d.hazards(), 2);
        // A write over the reads whose beats are still to come.
        d.aw(2, 0x100, 0);
        assert_eq!(d.hazards(), 3);
        // Once everything is done, nothing is in flight to clash with.
        let mut now = 2;
        while d.busy() {
            now += 1;
            let r = d.drive(now);
            if r.r_valid {
                d.r_ready();
            }
            if r.b_valid {
                d.b_ready();
            }
            if d.writes.front().is_some() && now == 3 {
                d.w(now, &[0; BEAT], u64::MAX, true);
            }
            assert!(now < 100);
        }
        d.ar(now, 0x40, 0);
        d.aw(now, 0x200, 0);
        assert_eq!(d.hazards(), 3);
    }
}
