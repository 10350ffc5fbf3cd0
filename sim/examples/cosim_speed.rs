//! Raw simulation speed of the verilated fast path: clock it with nothing to do, once with
//! one evaluation per cycle (`Rtl::step`, what the cosimulation harness uses) and once with
//! the falling and rising edge evaluated separately (`Rtl::tick`) as the baseline.
use clio_sim::rtl::ports::fastpath_top::RESET;
use clio_sim::rtl::{Rtl, FASTPATH_TOP};
use std::time::Instant;

const CYCLES: u32 = 400_000;

fn rate(r: &mut Rtl, f: fn(&mut Rtl)) -> f64 {
    let t = Instant::now();
    for _ in 0..CYCLES {
        f(r);
    }
    CYCLES as f64 / t.elapsed().as_secs_f64()
}

fn main() {
    let mut r = Rtl::new(&FASTPATH_TOP, None);
    r.set(RESET, 1);
    r.tick();
    r.set(RESET, 0);
    let step = rate(&mut r, Rtl::step);
    let tick = rate(&mut r, Rtl::tick);
    println!(
        "fastpath_top idle: {step:.0} cycles/s with one evaluation per cycle (step; {} eval/step), \
         {tick:.0} cycles/s with two (tick): {:.2}x",
        r.evals_per_step(),
        step / tick
    );
}
