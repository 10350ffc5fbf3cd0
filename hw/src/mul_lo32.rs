//! `MulLo32`: the low 32 bits of a 32 x 32 multiply, pipelined for the hashes (the page-table
//! walker's `hash_unit` and Clio-KV's `xxh32`).
//!
//! `a * b mod 2^32` is `lo + ((x1 + x2) << 16)` with `lo = a[0..16] * b[0..16]`,
//! `x1 = a[0..16] * b[16..32]` and `x2 = a[16..32] * b[0..16]` (only the cross products' low
//! 16 bits count): three 16 x 16 multiplies, the width rust-hdl supports and a DSP slice
//! implements. The three products are registered as they leave the multipliers (a DSP48E2's P
//! register), and `y`, their sum, is valid the cycle after `a` and `b` were presented. The
//! caller registers the operands (a DSP's A/B registers) and adds `y` into whatever follows in
//! the next cycle: a multiply never shares a cycle with an adder in front of it (Yosys 0.23
//! packs no register into a DSP48E2, so each DSP counts 4 LUT levels; docs/utilization.md).

use rust_hdl::prelude::*;

/// The pipelined low-half multiplier (module doc).
#[derive(LogicBlock, Default)]
pub struct MulLo32 {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The operands (registered by the caller).
    pub a: Signal<In, Bits<32>>,
    /// Second operand.
    pub b: Signal<In, Bits<32>>,
    /// `a * b mod 2^32` of the operands of the cycle before.
    pub y: Signal<Out, Bits<32>>,
    /// The three registered products `y` adds (`lo + ((x1 + x2) << 16)`), for a caller that
    /// adds them into a sum of its own without `y`'s two adders in front (carry-save).
    pub lo: Signal<Out, Bits<32>>,
    /// `a[0..16] * b[16..32]`, registered.
    pub x1: Signal<Out, Bits<32>>,
    /// `a[16..32] * b[0..16]`, registered.
    pub x2: Signal<Out, Bits<32>>,
    /// The three 16 x 16 products, registered.
    p_lo: DFF<Bits<32>>,
    p_x1: DFF<Bits<32>>,
    p_x2: DFF<Bits<32>>,
}

impl Logic for MulLo32 {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, p_lo, p_x1, p_x2);
        self.p_lo.d.next = self.a.val().get_bits::<16>(0) * self.b.val().get_bits::<16>(0);
        self.p_x1.d.next = self.a.val().get_bits::<16>(0) * self.b.val().get_bits::<16>(16);
        self.p_x2.d.next = self.a.val().get_bits::<16>(16) * self.b.val().get_bits::<16>(0);
        self.y.next = self.p_lo.q.val() + ((self.p_x1.q.val() + self.p_x2.q.val()) << 16);
        self.lo.next = self.p_lo.q.val();
        self.x1.next = self.p_x1.q.val();
        self.x2.next = self.p_x2.q.val();
    }
}

crate::impl_clocked!(MulLo32);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;

    /// Operands at the edges (0, 1, all ones, single bits, the hashes' primes) and a random
    /// stream, a new pair every cycle: `y` is `wrapping_mul` of the pair one cycle before.
    #[test]
    fn low_half_of_the_product_one_cycle_later() {
        let mut b = Bench::new(MulLo32::default());
        let mut pairs: Vec<(u32, u32)> = vec![
            (0, 0),
            (1, u32::MAX),
            (u32::MAX, u32::MAX),
            (0x8000_0000, 0x8000_0001),
            (0xFFFF, 0xFFFF_0000),
            (0x9E37_79B1, 0x85EB_CA77),
            (0xC2B2_AE3D, 0x27D4_EB2F),
        ];
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for _ in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            pairs.push((x as u32, (x >> 32) as u32));
        }
        let mut prev: Option<(u32, u32)> = None;
        for &(a, m) in &pairs {
            b.uut.a.next = (a as u64).to_bits();
            b.uut.b.next = (m as u64).to_bits();
            b.settle();
            if let Some((pa, pm)) = prev {
                assert_eq!(
                    b.uut.y.val().to_u64() as u32,
                    pa.wrapping_mul(pm),
                    "{pa:#x} * {pm:#x}"
                );
            }
            b.tick();
            prev = Some((a, m));
        }
    }
}
