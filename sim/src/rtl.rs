//! Verilated RTL driven from Rust (feature `rtl`): a safe handle over the generated C++ shim
//! of each module (see `sim/build.rs`), with ports addressed by the constants `sim/build.rs`
//! generates from the Verilog ([`ports`]: `ports::fastpath_top::RX_VALID`), so a renamed or
//! removed port fails the build of the harness instead of a run.

use std::ffi::{c_char, c_void, CString};
use std::path::Path;

/// One port of a verilated module.
#[derive(Debug, Clone, Copy)]
pub struct Port {
    /// Name as in the Verilog.
    pub name: &'static str,
    /// Input (driven by us) or output.
    pub input: bool,
    /// Width in bits.
    pub width: u32,
}

/// Entry points of one verilated module.
#[derive(Debug)]
pub struct RtlModule {
    /// Module name.
    pub name: &'static str,
    /// Built with waveform support (slower; only such a model can write a VCD).
    pub traced: bool,
    /// Ports in declaration order (the index is the shim's port number).
    pub ports: &'static [Port],
    new: unsafe extern "C" fn(*const c_char) -> *mut c_void,
    free: unsafe extern "C" fn(*mut c_void),
    eval: unsafe extern "C" fn(*mut c_void, u64),
    edge: unsafe extern "C" fn(*mut c_void) -> i32,
    set: unsafe extern "C" fn(*mut c_void, u32, *const u32),
    get: unsafe extern "C" fn(*mut c_void, u32, *mut u32),
}

include!(concat!(env!("OUT_DIR"), "/rtl_ports.rs"));

/// A running instance of a verilated module with a `clock` input.
pub struct Rtl {
    m: &'static RtlModule,
    h: *mut c_void,
    time: u64,
    clock: Option<u32>,
    tracing: bool,
    evals_per_step: u32,
    /// Rising clock edges simulated.
    pub cycles: u64,
}

// The instance is owned by one thread at a time; Verilator models are not shared.
unsafe impl Send for Rtl {}

impl Rtl {
    /// Instantiate `m`, optionally writing a VCD waveform to `vcd` (`m` must then be a traced
    /// model, e.g. [`FASTPATH_TOP_TRACED`]).
    pub fn new(m: &'static RtlModule, vcd: Option<&Path>) -> Rtl {
        assert!(
            vcd.is_none() || m.traced,
            "{} is built without waveform support; use its traced model",
            m.name
        );
        let path = vcd.map(|p| CString::new(p.to_string_lossy().as_bytes()).unwrap_or_default());
        // SAFETY: the shim copies the path before returning; a null pointer disables tracing.
        let h = unsafe { (m.new)(path.as_ref().map_or(std::ptr::null(), |c| c.as_ptr())) };
        let clock = m
            .ports
            .iter()
            .position(|p| p.name == "clock")
            .map(|i| i as u32);
        Rtl {
            m,
            h,
            time: 0,
            clock,
            tracing: vcd.is_some(),
            evals_per_step: 0,
            cycles: 0,
        }
    }

    /// Drive an input of up to 128 bits.
    pub fn set(&mut self, port: u32, v: u128) {
        let w = [
            v as u32,
            (v >> 32) as u32,
            (v >> 64) as u32,
            (v >> 96) as u32,
        ];
        // SAFETY: the shim reads at most ceil(width/32) words; ports this wide use `set_words`.
        debug_assert!(self.m.ports[port as usize].width <= 128);
        unsafe { (self.m.set)(self.h, port, w.as_ptr()) }
    }

    /// Drive a wide input from 32-bit words (least significant first).
    pub fn set_words(&mut self, port: u32, w: &[u32]) {
        assert!(w.len() as u32 >= self.m.ports[port as usize].width.div_ceil(32));
        // SAFETY: enough words for the port's width, checked above.
        unsafe { (self.m.set)(self.h, port, w.as_ptr()) }
    }

    /// Read an output (or input) of up to 128 bits.
    pub fn get(&self, port: u32) -> u128 {
        let mut w = [0u32; 4];
        debug_assert!(self.m.ports[port as usize].width <= 128);
        // SAFETY: the shim writes at most ceil(width/32) <= 4 words.
        unsafe { (self.m.get)(self.h, port, w.as_mut_ptr()) };
        w[0] as u128 | (w[1] as u128) << 32 | (w[2] as u128) << 64 | (w[3] as u128) << 96
    }

    /// Read a wide port into words.
    pub fn get_words(&self, port: u32, w: &mut [u32]) {
        assert!(w.len() as u32 >= self.m.ports[port as usize].width.div_ceil(32));
        // SAFETY: enough room, checked above.
        unsafe { (self.m.get)(self.h, port, w.as_mut_ptr()) }
    }

    /// Every output's current value, as words, into `buf` (replaced).
    pub fn outputs(&self, buf: &mut Vec<u32>) {
        buf.clear();
        for (i, p) in self.m.ports.iter().enumerate().filter(|(_, p)| !p.input) {
            let at = buf.len();
            buf.resize(at + p.width.div_ceil(32) as usize, 0);
            // SAFETY: room for ceil(width/32) words was just made.
            unsafe { (self.m.get)(self.h, i as u32, buf[at..].as_mut_ptr()) };
        }
    }

    /// Settle combinational logic.
    pub fn eval(&mut self) {
        // SAFETY: valid handle.
        unsafe { (self.m.eval)(self.h, self.time) }
    }

    /// One full clock cycle: falling edge, then rising edge (inputs set before the call are
    /// sampled at the rising edge).
    pub fn tick(&mut self) {
        self.fall();
        self.eval();
        self.rise();
    }

    /// One clock cycle in a single evaluation: the rising edge with the inputs as set, without
    /// settling them first. Outputs read afterwards are the registers' new values, so this
    /// is exact for a harness that only reads outputs driven from registers (a Moore
    /// interface; `fastpath_top`'s is, and `cosim` checks it on request). Without a VCD it
    /// evaluates once per cycle instead of twice; with one it is [`Rtl::tick`], so every
    /// cycle is dumped.
    pub fn step(&mut self) {
        if self.tracing {
            self.tick();
            return;
        }
        // SAFETY: valid handle.
        let single = unsafe { (self.m.edge)(self.h) } != 0;
        self.evals_per_step = if single { 1 } else { 2 };
        self.time += 2;
        self.cycles += 1;
    }

    /// Evaluations the last [`Rtl::step`] took: 1 where the Verilator release exposes the
    /// previous-clock member, 2 otherwise (0 before the first step).
    pub fn evals_per_step(&self) -> u32 {
        self.evals_per_step
    }

    /// Drive the clock low without evaluating: the next [`Rtl::eval`] settles the inputs set
    /// for this cycle and the falling edge together (a harness that must read combinational
    /// outputs before the rising edge then needs two evaluations per cycle, not three).
    pub fn fall(&mut self) {
        let c = self.clock.expect("module has no clock");
        self.set(c, 0);
        self.time += 1;
    }

    /// Rising edge: registers take the values settled by the last [`Rtl::eval`].
    pub fn rise(&mut self) {
        let c = self.clock.expect("module has no clock");
        self.set(c, 1);
        self.time += 1;
        self.eval();
        self.cycles += 1;
    }
}

impl Drop for Rtl {
    fn drop(&mut self) {
        // SAFETY: valid handle, freed once.
        unsafe { (self.m.free)(self.h) }
    }
}
