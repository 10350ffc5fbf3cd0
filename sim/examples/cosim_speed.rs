//! Raw simulation speed of the verilated fast path: clock it with nothing to do.
use clio_sim::rtl::{Rtl, FASTPATH_TOP};
fn main() {
    let mut r = Rtl::new(&FASTPATH_TOP, None);
    let reset = r.port("reset");
    r.set(reset, 1);
    r.tick();
    r.set(reset, 0);
    let t = std::time::Instant::now();
    for _ in 0..200_000 {
        r.tick();
    }
    let s = t.elapsed().as_secs_f64();
    println!("{:.0} cycles/s idle", 200_000.0 / s);
}
