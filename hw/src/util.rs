//! Helpers shared by the modules: bit-vector assembly inside HDL kernels and software models.

use rust_hdl::prelude::*;

/// `Bits<N>` from a `u128` (test and model convenience).
pub fn b<const N: usize>(v: u128) -> Bits<N> {
    let mut out = Bits::<N>::default();
    for i in 0..N.min(128) {
        if (v >> i) & 1 == 1 {
            out = out.replace_bit(i, true);
        }
    }
    out
}

/// Bytes (little-endian lane order: byte k at bits `8k..8k+8`) into a beat of `N` bits.
pub fn bytes_to_bits<const N: usize>(bytes: &[u8]) -> Bits<N> {
    let mut out = Bits::<N>::default();
    for (k, byte) in bytes.iter().enumerate().take(N / 8) {
        for i in 0..8 {
            if (byte >> i) & 1 == 1 {
                out = out.replace_bit(8 * k + i, true);
            }
        }
    }
    out
}

/// A beat of `N` bits back into `N / 8` bytes (little-endian lane order).
pub fn bits_to_bytes<const N: usize>(v: Bits<N>) -> Vec<u8> {
    (0..N / 8)
        .map(|k| (0..8).fold(0u8, |acc, i| acc | ((v.get_bit(8 * k + i) as u8) << i)))
        .collect()
}

/// Concatenate `N` single-bit signals into one `Bits<N>` (`out[i] = bits[i]`).
///
/// A wiring leaf written by hand: rust-hdl 0.46 cannot assemble a vector bit by bit inside an
/// `#[hdl_gen]` kernel (its `set_bit` translation does not compile, and reading `.next` is
/// refused), so the CAM match vectors and one-hot encoders use this instead. Its Verilog is a
/// single concatenation; its simulation model is the loop below.
#[derive(LogicBlock)]
pub struct Gather<const N: usize> {
    /// The bits, index 0 first.
    pub bits: [Signal<In, Bit>; N],
    /// The vector.
    pub out: Signal<Out, Bits<N>>,
}

impl<const N: usize> Default for Gather<N> {
    fn default() -> Self {
        Gather {
            bits: core::array::from_fn(|_| Signal::default()),
            out: Signal::default(),
        }
    }
}

impl<const N: usize> Logic for Gather<N> {
    fn update(&mut self) {
        let mut v = Bits::<N>::default();
        for (i, s) in self.bits.iter().enumerate() {
            if s.val() {
                v = v.replace_bit(i, true);
            }
        }
        self.out.next = v;
    }

    fn connect(&mut self) {
        self.out.connect();
    }

    fn hdl(&self) -> Verilog {
        let parts: Vec<String> = (0..N).rev().map(|i| format!("bits${i}")).collect();
        // `out` is declared `output reg` by rust-hdl, hence an always block, not an assign.
        Verilog::Custom(format!("always @(*) out = {{{}}};", parts.join(", ")))
    }
}

/// `B` bytes as one `N`-bit vector (`N = 8 * B`, byte `k` at bits `8k..8k+8`): a wiring leaf
/// like [`Gather`], for a register kept as an array of bytes (one reset or enable per byte).
#[derive(LogicBlock)]
pub struct GatherBytes<const B: usize, const N: usize> {
    /// The bytes, byte 0 first.
    pub bytes: [Signal<In, Bits<8>>; B],
    /// The vector.
    pub out: Signal<Out, Bits<N>>,
}

impl<const B: usize, const N: usize> Default for GatherBytes<B, N> {
    fn default() -> Self {
        const { assert!(N == 8 * B, "GatherBytes: N must be 8 * B") };
        GatherBytes {
            bytes: core::array::from_fn(|_| Signal::default()),
            out: Signal::default(),
        }
    }
}

impl<const B: usize, const N: usize> Logic for GatherBytes<B, N> {
    fn update(&mut self) {
        // A stack buffer: this runs in every settle of a simulated cycle.
        let mut v = [0u8; B];
        for (byte, s) in v.iter_mut().zip(&self.bytes) {
            *byte = s.val().to_u64() as u8;
        }
        self.out.next = bytes_to_bits(&v);
    }

    fn connect(&mut self) {
        self.out.connect();
    }

    fn hdl(&self) -> Verilog {
        let parts: Vec<String> = (0..B).rev().map(|k| format!("bytes${k}")).collect();
        Verilog::Custom(format!("always @(*) out = {{{}}};", parts.join(", ")))
    }
}

/// Reverse the byte order of an `N`-bit vector (`N` a multiple of 8): byte `k` of `x` is byte
/// `N/8 - 1 - k` of `y`. Network byte order fields become plain slices of `y`.
///
/// A wiring leaf written by hand like [`Gather`]: one concatenation of byte slices, which
/// Verilator simulates as a few word operations where a bit-by-bit `Gather` costs `N`.
#[derive(LogicBlock, Default)]
pub struct ByteSwap<const N: usize> {
    /// Input vector.
    pub x: Signal<In, Bits<N>>,
    /// `x` with its bytes in reverse order.
    pub y: Signal<Out, Bits<N>>,
}

impl<const N: usize> Logic for ByteSwap<N> {
    fn update(&mut self) {
        // A stack buffer (the widest swap is a 48-byte header): this runs in every settle of
        // a simulated cycle.
        let n = N / 8;
        assert!(n <= 64, "ByteSwap wider than 512 bits");
        let mut rev = [0u8; 64];
        let x = self.x.val();
        for (k, byte) in rev[..n].iter_mut().enumerate() {
            let at = 8 * (n - 1 - k);
            *byte = (0..8).fold(0u8, |acc, i| acc | ((x.get_bit(at + i) as u8) << i));
        }
        self.y.next = bytes_to_bits(&rev[..n]);
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        let parts: Vec<String> = (0..N / 8)
            .map(|k| format!("x[{}:{}]", 8 * k + 7, 8 * k))
            .collect();
        Verilog::Custom(format!("always @(*) y = {{{}}};", parts.join(", ")))
    }
}

/// Bit `k` of `x` to bit `N - 1 - k` of `y`: a wiring leaf as [`ByteSwap`].
#[derive(LogicBlock, Default)]
pub struct BitReverse<const N: usize> {
    /// Input vector.
    pub x: Signal<In, Bits<N>>,
    /// `x` with its bits in reverse order.
    pub y: Signal<Out, Bits<N>>,
}

impl<const N: usize> Logic for BitReverse<N> {
    fn update(&mut self) {
        let x = self.x.val();
        let mut y = Bits::<N>::default();
        for k in 0..N {
            y = y.replace_bit(N - 1 - k, x.get_bit(k));
        }
        self.y.next = y;
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    fn hdl(&self) -> Verilog {
        let parts: Vec<String> = (0..N).map(|k| format!("x[{k}]")).collect();
        Verilog::Custom(format!("always @(*) y = {{{}}};", parts.join(", ")))
    }
}

/// `a == b` as a tree of LUT6s, kept as written: three bit pairs per first-level node, six
/// nodes per AND above, each node a `keep` wire so the mapper cannot fold the compare into
/// the logic in front of it (the last AND, of at most six nodes, is left to the mapper). A key read from a LUT RAM and compared against a key from other
/// logic arrives at the compare later than that key; the default mapping then builds the
/// compare as a deeper chain around the late input (the TLB's 52-bit key: five levels where
/// three do). Its simulation model is `==`.
#[derive(LogicBlock, Default)]
pub struct EqTree<const N: usize> {
    /// One side.
    pub a: Signal<In, Bits<N>>,
    /// The other.
    pub b: Signal<In, Bits<N>>,
    /// `a == b`.
    pub eq: Signal<Out, Bit>,
}

impl<const N: usize> Logic for EqTree<N> {
    fn update(&mut self) {
        self.eq.next = self.a.val() == self.b.val();
    }

    fn connect(&mut self) {
        self.eq.connect();
    }

    fn hdl(&self) -> Verilog {
        let mut verilog = String::new();
        let level: Vec<String> = (0..N)
            .step_by(3)
            .enumerate()
            .map(|(g, lo)| {
                let hi = (lo + 3).min(N) - 1;
                let node = format!("eq_l0_n{g}");
                verilog.push_str(&format!(
                    "(* keep = \"true\" *) wire {node} = a[{hi}:{lo}] == b[{hi}:{lo}];\n"
                ));
                node
            })
            .collect();
        // The last AND (at most six nodes) is left to the mapper, to fold into what reads it.
        let level = kept_tree(&mut verilog, "eq", level, " & ", 1, 6);
        verilog.push_str(&format!("always @(*) eq = {};", level.join(" & ")));
        Verilog::Custom(verilog)
    }
}

/// Reduces `level` (Verilog operands) by `op`, six operands per node, each node a `keep` wire
/// `{prefix}_l{depth}_n{g}` (depths from `depth`) declared into `verilog`, until at most
/// `leave` operands are left; returns them. The mapper keeps such a tree as written: one LUT6
/// per node ([`EqTree`]'s ANDs, `crc32c::XorTrees`' XORs).
pub fn kept_tree(
    verilog: &mut String,
    prefix: &str,
    mut level: Vec<String>,
    op: &str,
    mut depth: usize,
    leave: usize,
) -> Vec<String> {
    while level.len() > leave.max(1) {
        level = level
            .chunks(6)
            .enumerate()
            .map(|(g, inputs)| {
                let node = format!("{prefix}_l{depth}_n{g}");
                verilog.push_str(&format!(
                    "(* keep = \"true\" *) wire {node} = {};\n",
                    inputs.join(op)
                ));
                node
            })
            .collect();
        depth += 1;
    }
    level
}

/// The masks of a 64-way one-hot encoder: mask `k` has bit `i` set when bit `k` of `i` is set,
/// so `(onehot & mask[k]).any()` is bit `k` of the set bit's index: six OR trees of depth
/// three, where a loop of `if bit(i) { idx = i }` is a 64-deep priority chain.
pub fn onehot_index_masks() -> [Constant<Bits<64>>; 6] {
    core::array::from_fn(|k| Constant::new(index_bit_mask(k).to_bits()))
}

/// Mask `k` of [`onehot_index_masks`] as a number: the indices `0..64` with bit `k` set.
pub const fn index_bit_mask(k: usize) -> u64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < 64 {
        if (i >> k) & 1 == 1 {
            m |= 1 << i;
        }
        i += 1;
    }
    m
}

/// [`onehot_index_masks`] cut in six: mask `6k + j` holds the `j`-th six (in order) of the 32
/// bits of mask `k` (the last part two), so `(onehot & mask[6k + j]).any()` ORs at most six bits
/// (one LUT6) and bit `k` of the index is the OR of its six parts (one more): an encoder that
/// can be cut by a register after its first level.
pub fn onehot_index_part_masks() -> [Constant<Bits<64>>; 36] {
    core::array::from_fn(|n| {
        let (k, j) = (n / 6, n % 6);
        Constant::new(
            (0..64u64)
                .filter(|i| (i >> k) & 1 == 1)
                .skip(6 * j)
                .take(6)
                .fold(0u64, |m, i| m | (1 << i))
                .to_bits(),
        )
    })
}

/// A 256-bit opcode table: bit `v` set when `pred(v)` holds for opcode byte `v`. The form an
/// opcode rule of `clio_proto::opcode` takes in a kernel: a `Constant<Bits<256>>` tested as
/// `(table & (1 << opcode)).any()`, so the hardware decodes exactly what proto defines.
pub fn opcode_table(pred: impl Fn(u8) -> bool) -> Bits<256> {
    let mut out = Bits::<256>::default();
    for v in 0..=255u8 {
        if pred(v) {
            out = out.replace_bit(v as usize, true);
        }
    }
    out
}

/// The opcode bytes `clio_proto::opcode::path_of` sends to `path`.
pub fn path_table(path: clio_proto::opcode::Path) -> Bits<256> {
    opcode_table(|v| clio_proto::opcode::path_of(v) == Some(path))
}

/// The opcodes a rule of [`clio_proto::Opcode`] selects, through `clio_proto::opcode::opcode_mask`
/// (the encoding proto shares with the RTL).
pub fn rule_table(pred: impl Fn(clio_proto::Opcode) -> bool) -> Bits<256> {
    let m = clio_proto::opcode::opcode_mask(pred);
    opcode_table(|v| m[v as usize / 64] >> (v % 64) & 1 == 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `EqTree`'s Verilog compares every bit pair once, in nodes of at most three pairs and
    /// ANDs of at most six nodes (its model, `==`, is checked in the TLB's testbench, and its
    /// Verilog in the cosimulation).
    #[test]
    fn eq_tree_compares_every_bit_once() {
        let t = EqTree::<52>::default();
        let Verilog::Custom(v) = t.hdl() else {
            panic!("a custom leaf")
        };
        let mut seen = [0u32; 52];
        for line in v.lines().filter(|l| l.contains("wire eq_l0_")) {
            let r = line
                .split("a[")
                .nth(1)
                .expect("a range")
                .split(']')
                .next()
                .unwrap();
            let (hi, lo) = r.split_once(':').unwrap();
            let (hi, lo): (usize, usize) = (hi.parse().unwrap(), lo.parse().unwrap());
            assert!(hi >= lo && hi - lo < 3, "{line}");
            assert!(line.contains(&format!("b[{hi}:{lo}]")), "{line}");
            (lo..=hi).for_each(|k| seen[k] += 1);
        }
        assert_eq!(seen, [1; 52]);
        for line in v.lines().filter(|l| l.contains('&')) {
            assert!(line.matches('&').count() <= 5, "{line}");
        }
        assert!(v
            .lines()
            .last()
            .unwrap()
            .starts_with("always @(*) eq = eq_l1_"));
    }

    /// The six parts of each index bit's mask are disjoint, cover it, and hold at most six bits
    /// (one LUT6 each).
    #[test]
    fn index_part_masks_split_the_index_masks() {
        let whole = onehot_index_masks();
        let parts = onehot_index_part_masks();
        for k in 0..6 {
            let mut or = 0u64;
            for j in 0..6 {
                let p = parts[6 * k + j].val().to_u64();
                assert_eq!(or & p, 0, "bit {k}: parts overlap");
                assert!(p.count_ones() <= 6, "bit {k} part {j}: {p:#x}");
                or |= p;
            }
            assert_eq!(or, whole[k].val().to_u64(), "bit {k}");
        }
    }
}
