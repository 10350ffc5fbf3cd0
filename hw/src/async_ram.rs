//! A distributed (LUT) RAM with a combinational read port: `read_data` is `mem[read_address]`
//! in the same cycle, a write lands at the clock edge (a read of the written address sees the
//! new word from the next cycle on).
//!
//! rust-hdl's `RAM` registers its read (block-RAM style), so a lookup whose address is the end
//! of a long compare (a CAM's encoded match) puts the compare, the encoder and the RAM's read
//! in one cycle. With this RAM the match can be registered first and the word read from the
//! registered address the cycle after, within the same latency. Yosys maps the Verilog below
//! to UltraScale+ LUTRAM (RAM64M / RAM32M cells): one LUT level per read.

use rust_hdl::prelude::*;
use std::collections::BTreeMap;

/// A LUTRAM of `2^N` words of `D`, one write port and one combinational read port.
#[derive(LogicBlock, Default)]
pub struct AsyncRam<D: Synth, const N: usize> {
    /// Write clock.
    pub clock: Signal<In, Clock>,
    /// Read address.
    pub read_address: Signal<In, Bits<N>>,
    /// The word at `read_address`, this cycle.
    pub read_data: Signal<Out, D>,
    /// Write address.
    pub write_address: Signal<In, Bits<N>>,
    /// Write data.
    pub write_data: Signal<In, D>,
    /// Write `write_data` at `write_address` at the clock edge.
    pub write_enable: Signal<In, Bit>,
    _sim: Box<BTreeMap<Bits<N>, D>>,
}

impl<D: Synth, const N: usize> Logic for AsyncRam<D, N> {
    fn update(&mut self) {
        // As rust-hdl's `RAM` writes (once, at the edge), then the read of the contents now.
        if self.clock.pos_edge() && self.write_enable.val() {
            self._sim
                .insert(self.write_address.val(), self.write_data.val());
        }
        self.read_data.next = *self
            ._sim
            .get(&self.read_address.val())
            .unwrap_or(&D::default());
    }

    fn connect(&mut self) {
        self.read_data.connect();
    }

    fn hdl(&self) -> Verilog {
        // `read_data` is declared `output reg` by rust-hdl, hence an always block.
        Verilog::Custom(format!(
            "\
reg[{d}:0] mem[{a}:0];

always @(*) read_data = mem[read_address];

always @(posedge clock) begin
   if (write_enable) begin
      mem[write_address] <= write_data;
   end
end",
            d = D::BITS - 1,
            a = (1usize << N) - 1,
        ))
    }
}

impl<D: Synth, const N: usize> crate::bench::Clocked for AsyncRam<D, N> {
    fn clock_in(&mut self) -> &mut Signal<In, Clock> {
        &mut self.clock
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::tb::Rng;

    /// Random writes and reads against an array: a read returns the array's word in the same
    /// cycle, a write shows from the next cycle on (also at the address being read).
    #[test]
    fn reads_this_cycle_writes_at_the_edge() {
        let mut r = Rng(0xA5A_7A3);
        let mut b = Bench::new(AsyncRam::<Bits<72>, 4>::default());
        let mut mem = [0u128; 16];
        let mut hits = 0;
        for cycle in 0..5000 {
            let ra = r.below(16) as usize;
            let wa = if r.below(3) == 0 {
                ra
            } else {
                r.below(16) as usize
            };
            let we = r.below(2) == 0;
            let wd = ((r.next() as u128) << 8 | r.below(256) as u128) & ((1 << 72) - 1);
            b.uut.read_address.next = (ra as u64).to_bits();
            b.uut.write_address.next = (wa as u64).to_bits();
            b.uut.write_data.next = crate::util::b::<72>(wd);
            b.uut.write_enable.next = we;
            b.settle();
            assert_eq!(
                b.uut.read_data.val(),
                crate::util::b::<72>(mem[ra]),
                "cycle {cycle}: read {ra}"
            );
            hits += (we && wa == ra) as u32;
            b.tick();
            if we {
                mem[wa] = wd;
            }
        }
        assert!(hits > 500, "writes to the address read: {hits}");
    }
}
