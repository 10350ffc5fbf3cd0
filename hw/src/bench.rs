//! A small cycle-stepping harness over rust-hdl's simulation kernel (`simulate`, `check_all`).
//!
//! The testbenches drive inputs through `.next`, let the circuit settle, sample outputs with
//! `.val()` and step the clock. This is the same kernel `rust_hdl::Simulation` uses, without its
//! thread-per-testbench machinery, which keeps short benches simple and fast.

use rust_hdl::prelude::*;

/// A block with a clock input the harness can drive.
pub trait Clocked: Block {
    /// The block's clock input.
    fn clock_in(&mut self) -> &mut Signal<In, Clock>;
}

/// Implement [`Clocked`] for blocks whose clock field is called `clock`.
#[macro_export]
macro_rules! impl_clocked {
    ($($t:ty),+) => {$(
        impl $crate::bench::Clocked for $t {
            fn clock_in(&mut self) -> &mut rust_hdl::prelude::Signal<rust_hdl::prelude::In, rust_hdl::prelude::Clock> {
                &mut self.clock
            }
        }
    )+};
}

/// A unit under test plus a cycle counter.
pub struct Bench<U: Clocked> {
    /// The circuit.
    pub uut: U,
    /// Rising edges so far.
    pub cycle: u64,
}

impl<U: Clocked> Bench<U> {
    /// Connect and check the circuit (undriven inputs, write-to-input, latches), then settle it.
    pub fn new(mut uut: U) -> Bench<U> {
        uut.connect_all();
        check_all(&uut).expect("circuit check failed");
        let mut b = Bench { uut, cycle: 0 };
        b.settle();
        b
    }

    /// Propagate combinational changes until stable.
    pub fn settle(&mut self) {
        assert!(simulate(&mut self.uut, 10_000), "circuit did not converge");
    }

    /// One full clock period: rising edge, then falling edge.
    pub fn tick(&mut self) {
        self.settle();
        self.uut.clock_in().next = Clock { clk: true };
        self.settle();
        self.uut.clock_in().next = Clock { clk: false };
        self.settle();
        self.cycle += 1;
    }
}
