//! The CRC-32C engine for 512-bit beats, used by the receive side (the ack layer) and the
//! transmit side (the read-data stage).
//!
//! CRC-32C is a GF(2)-linear map of (register, data). One 512-bit beat is one XOR matrix
//! (`r' = S * r ^ D * data`, 32 rows over 32 + 512 inputs) computed **at elaboration time in
//! Rust from the polynomial** ([`beat_rows`]), so there is no table and no per-byte loop in
//! the hardware. The packet checksum covers the packet zero-extended to whole beats
//! (`proto::checksum::CRC_BLOCK`), so a partial beat of `n` bytes is fed with its bytes
//! `n..64` zeroed and that is all: nothing is undone after the last beat. Every beat, full or
//! not, takes one cycle (II = 1). (Over exactly the packet's bytes the zeros would have to be
//! removed after the last beat: six conditional 32x32 matrices in series, about 800 LUTs and 10
//! LUT levels per engine, which is what the engines did before the protocol took the zeros in.)
//!
//! The engine, [`Crc32cRegistered`], registers the beat first: the byte mask is the beat
//! register's synchronous reset (a flip-flop's reset pin per byte instead of 512 AND gates), and
//! the matrix, spelled out as six-input XOR trees ([`XorTrees`]), sums the registered beat into
//! the CRC register when the next beat comes. Its value is the matrix's output from the two
//! registers (ready the cycle after the last beat, held until the next beat). The transmit side
//! (the read-data stage) places it into the response header; the receive side (the ack layer)
//! compares it with the carried checksum. Until stop 68 there was a second engine with the same
//! port (mask and `^(x & row)` trees in front of the register); the wide mapping the board run
//! uses built it at three times the LUTs, and no block used it after stop 67 (docs/hardware-modules.md).

use crate::util::GatherBytes;
use rust_hdl::prelude::*;

// The engine sums whole beats with the bytes past the message zeroed: the protocol's checksum
// must be over the packet zero-extended to whole beats.
const _: () =
    assert!(clio_proto::checksum::CRC_BLOCK == 64 && clio_proto::consts::DATAPATH_BITS == 512);

/// The CRC-32C polynomial, reflected.
pub const POLY: u32 = clio_proto::checksum::CRC32C_POLY_REFLECTED;

/// One bit step of the reflected CRC register with no data.
fn bit_step(r: u32) -> u32 {
    if r & 1 != 0 {
        (r >> 1) ^ POLY
    } else {
        r >> 1
    }
}

/// The register after a whole beat: bytes 0..64 in order (a bit-serial definition).
fn beat_fn(r: u32, data: &[u8; 64]) -> u32 {
    let mut r = r;
    for &b in data {
        r ^= b as u32;
        for _ in 0..8 {
            r = bit_step(r);
        }
    }
    r
}

/// Rows of the beat matrix: row `i` has input bit `j` set when output bit `i` depends on it.
/// Inputs: register bits 0..32, then data bits 0..512 (byte k at bits 8k..8k+8) at 32..544.
pub fn beat_rows() -> [Bits<544>; 32] {
    let mut rows = [Bits::<544>::default(); 32];
    for j in 0..544 {
        let mut data = [0u8; 64];
        let r = if j < 32 { 1u32 << j } else { 0 };
        if j >= 32 {
            data[(j - 32) / 8] = 1 << ((j - 32) % 8);
        }
        let col = beat_fn(r, &data);
        for (i, row) in rows.iter_mut().enumerate() {
            if col >> i & 1 == 1 {
                *row = row.replace_bit(j, true);
            }
        }
    }
    rows
}

/// Apply a row matrix in software (the same computation the hardware does).
fn apply<const I: usize>(rows: &[Bits<I>], x: Bits<I>) -> u32 {
    rows.iter()
        .enumerate()
        .fold(0, |acc, (i, row)| acc | (((*row & x).xor() as u32) << i))
}

/// Software model of the engine: CRC-32C of `bytes` zero-extended to whole beats, via the
/// beat matrix.
pub fn crc32c_by_matrix(bytes: &[u8]) -> u32 {
    let rows = beat_rows();
    let mut r = 0xFFFF_FFFFu32;
    for chunk in bytes.chunks(64) {
        let mut beat = [0u8; 64];
        beat[..chunk.len()].copy_from_slice(chunk);
        let x = bit_cast::<544, 32>(r.to_bits())
            | (bit_cast::<544, 512>(crate::util::bytes_to_bits::<512>(&beat)) << 32);
        r = apply(&rows, x);
    }
    !r
}

/// `y = M x` over GF(2) (output bit `i` is the parity of `x & rows[i]`), each row's XOR tree
/// spelled out as six-input XORs, every node a `(* keep *)` wire, so synthesis maps each node
/// to exactly one LUT6 (a row of `n` inputs costs about `(n - 1) / 5` LUTs, `ceil(log6 n)`
/// levels).
///
/// A leaf written by hand (like [`crate::util::Gather`]). For a matrix fed by flip-flops this
/// is the smaller netlist: the CRC matrix alone takes 2,666 LUTs as `^(x & row)` against 1,823 spelled out
/// (the rows need 1,751 at best). Fed by logic it is the larger one: ABC rebuilds each kept
/// node from the logic in front of `x` for depth, and the leaves no longer fit a LUT (the ack
/// layer took 4,170 LUTs against 2,929).
#[derive(LogicBlock)]
pub struct XorTrees<const I: usize, const O: usize> {
    /// Input vector.
    pub x: Signal<In, Bits<I>>,
    /// Output vector.
    pub y: Signal<Out, Bits<O>>,
    rows: [Constant<Bits<I>>; O],
}

impl<const I: usize, const O: usize> XorTrees<I, O> {
    /// The matrix with these rows.
    pub fn new(rows: [Bits<I>; O]) -> Self {
        XorTrees {
            x: Default::default(),
            y: Default::default(),
            rows: rows.map(Constant::new),
        }
    }

    /// Row `i`'s tree: the nodes of each level, six inputs each, until one is left (its name,
    /// or a constant zero for an empty row), and the Verilog declaring the nodes.
    fn tree(&self, i: usize, verilog: &mut String) -> String {
        let row = self.rows[i].val();
        let level: Vec<String> = (0..I)
            .filter(|&j| row.get_bit(j))
            .map(|j| format!("x[{j}]"))
            .collect();
        let mut level = crate::util::kept_tree(verilog, &format!("row{i}"), level, " ^ ", 0, 1);
        level.pop().unwrap_or_else(|| "1'b0".to_string())
    }
}

impl<const I: usize, const O: usize> Logic for XorTrees<I, O> {
    fn update(&mut self) {
        let x = self.x.val();
        let mut y = Bits::<O>::default();
        for (i, row) in self.rows.iter().enumerate() {
            if (x & row.val()).xor() {
                y = y.replace_bit(i, true);
            }
        }
        self.y.next = y;
    }

    fn connect(&mut self) {
        self.y.connect();
    }

    /// Under `CLIO_XOR_REDUCTIONS` (defined by the cosimulation's Verilator build only) the
    /// same matrix is written as one `^(x & row)` reduction per output: the
    /// kept nodes are a netlist shape for synthesis, and Verilator evaluates ~1,750 of them
    /// one small parity at a time, where a row's reduction is one parity over 17 words (the
    /// read-data CRC went from 1.63 to 0.05 us per simulated cycle). Both forms are built
    /// from `rows`; `sim` builds its traced model with the trees and its other models with the
    /// reductions, and `rtl_vcd` requires the two to answer alike (every response's CRC).
    fn hdl(&self) -> Verilog {
        let mut verilog = String::from("`ifdef CLIO_XOR_REDUCTIONS\n");
        let reductions: Vec<String> = (0..O)
            .rev()
            .map(|i| format!("^(x & {I}'h{})", hex(&self.rows[i].val())))
            .collect();
        verilog.push_str(&format!(
            "always @(*) y = {{{}}};\n`else\n",
            reductions.join(", ")
        ));
        let roots: Vec<String> = (0..O).map(|i| self.tree(i, &mut verilog)).collect();
        let outs: Vec<&str> = roots.iter().rev().map(String::as_str).collect();
        verilog.push_str(&format!("always @(*) y = {{{}}};\n`endif", outs.join(", ")));
        Verilog::Custom(verilog)
    }
}

/// `v` in hexadecimal digits, most significant first (a Verilog literal's digits).
fn hex<const N: usize>(v: &Bits<N>) -> String {
    (0..N.div_ceil(4))
        .rev()
        .map(|d| {
            let nibble = (0..4)
                .filter(|b| 4 * d + b < N && v.get_bit(4 * d + b))
                .fold(0u32, |n, b| n | 1 << b);
            char::from_digit(nibble, 16).unwrap_or('0')
        })
        .collect()
}

pub use port::{CrcFeed, CrcPort};

/// The CRC engine's port bundle.
mod port {
    // The derive writes `join` and `link`, methods without doc comments.
    #![allow(missing_docs)]
    use rust_hdl::prelude::*;

    /// The CRC engine's port ([`Crc32cRegistered`](super::Crc32cRegistered)): 512-bit beats of a
    /// message in, its CRC-32C out, one beat per cycle. The value covers every beat fed since the
    /// last `in_first` beat, the message zero-extended to whole beats, and is valid the cycle after
    /// the last beat (until the next beat).
    #[derive(LogicInterface, Default)]
    #[join = "CrcFeed"]
    pub struct CrcPort {
        /// A beat enters.
        pub in_valid: Signal<In, Bit>,
        /// First beat of a message (start from the initial value).
        pub in_first: Signal<In, Bit>,
        /// The beat (byte k at bits 8k..8k+8).
        pub in_data: Signal<In, Bits<512>>,
        /// Bytes of this beat that belong to the message, 1..=64 (the rest are summed as zeros).
        pub in_bytes: Signal<In, Bits<7>>,
        /// CRC-32C of the beats fed, as above.
        pub crc: Signal<Out, Bits<32>>,
    }

    /// The side of a block that feeds a CRC engine ([`CrcPort`]'s mate).
    #[derive(LogicInterface, Default)]
    #[join = "CrcPort"]
    pub struct CrcFeed {
        /// A beat enters.
        pub in_valid: Signal<Out, Bit>,
        /// First beat of a message.
        pub in_first: Signal<Out, Bit>,
        /// The beat.
        pub in_data: Signal<Out, Bits<512>>,
        /// Bytes of this beat that belong to the message.
        pub in_bytes: Signal<Out, Bits<7>>,
        /// The engine's value.
        pub crc: Signal<In, Bits<32>>,
    }
}

/// Streaming CRC-32C over 512-bit beats, the message zero-extended to whole beats: one beat per
/// cycle, any number of bytes (1..=64) in a beat (the rest are summed as zeros), the value
/// ready the cycle after the last beat; the beat registered in front of the matrix.
///
/// A beat fed (`in_valid`) goes into `pend` with its bytes `in_bytes..64` zeroed by the
/// register's synchronous reset, and the beat before it, summed by the matrix, into `acc` (or
/// the initial value, when the beat fed is a first). The value is the matrix applied to
/// (`acc`, `pend`), so it covers every beat fed and is ready the cycle after the last one; it
/// holds while nothing is fed.
#[derive(LogicBlock)]
pub struct Crc32cRegistered {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The beats in, the value out.
    pub port: CrcPort,
    /// The last beat fed, byte `k` in `pend[k]`, zero where `k >= in_bytes` (each byte
    /// register's synchronous reset).
    pend: [DFF<Bits<8>>; 64],
    /// The CRC register after the beats before the last one: the initial value when the last
    /// beat was a message's first (loaded with that beat, so the matrix reads flip-flops only).
    acc: DFF<Bits<32>>,
    /// `pend` as one vector.
    pend_beat: GatherBytes<64, 512>,
    /// The beat matrix (fed by flip-flops only: spelled-out LUT trees).
    beat: XorTrees<544, 32>,
}

impl Default for Crc32cRegistered {
    fn default() -> Self {
        Crc32cRegistered {
            clock: Default::default(),
            port: Default::default(),
            pend: core::array::from_fn(|_| Default::default()),
            acc: Default::default(),
            pend_beat: Default::default(),
            beat: XorTrees::new(beat_rows()),
        }
    }
}

impl Logic for Crc32cRegistered {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, acc);
        for k in 0..64 {
            self.pend[k].clock.next = self.clock.val();
            self.pend[k].d.next = self.pend[k].q.val();
            self.pend_beat.bytes[k].next = self.pend[k].q.val();
        }
        self.beat.x.next = bit_cast::<544, 32>(self.acc.q.val())
            | (bit_cast::<544, 512>(self.pend_beat.out.val()) << 32);
        if self.port.in_valid.val() {
            if self.port.in_first.val() {
                self.acc.d.next = 0xFFFF_FFFF_u64.to_bits();
            } else {
                self.acc.d.next = self.beat.y.val();
            }
        }
        // Per byte: a reset (zero) when a beat comes without it, ahead of the enable, which is
        // a flip-flop's synchronous reset and clock enable as they are (reset over enable).
        for k in 0..64 {
            if self.port.in_valid.val() & (self.port.in_bytes.val() <= k.to_bits::<7>()) {
                self.pend[k].d.next = 0.into();
            } else if self.port.in_valid.val() {
                self.pend[k].d.next = self.port.in_data.val().get_bits::<8>(8 * k);
            }
        }
        self.port.crc.next = !self.beat.y.val();
    }
}

crate::impl_clocked!(Crc32cRegistered);

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::util::bytes_to_bits;
    use clio_proto::checksum::crc32c_reference;

    pub(crate) fn rnd_bytes(seed: &mut u64, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                *seed as u8
            })
            .collect()
    }

    /// `b` with zero bytes up to a whole number of beats (what the engine sums).
    fn zero_extended(b: &[u8]) -> Vec<u8> {
        let mut v = b.to_vec();
        v.resize(b.len().div_ceil(64) * 64, 0);
        v
    }

    /// The elaboration-time matrices reproduce the bit-serial definition for every length of
    /// a partial last beat (the software model of exactly what the RTL computes).
    #[test]
    fn hex_digits_are_most_significant_first() {
        assert_eq!(super::hex(&Bits::<10>::from(0x2A5u64)), "2a5");
        assert_eq!(super::hex(&Bits::<8>::from(0u64)), "00");
        assert_eq!(super::hex(&Bits::<5>::from(0x1Fu64)), "1f");
    }

    #[test]
    fn matrices_match_reference() {
        let mut s = 7u64;
        for n in (1..200).chain([1023, 1024, 1072]) {
            let b = rnd_bytes(&mut s, n);
            assert_eq!(
                crc32c_by_matrix(&b),
                crc32c_reference(&zero_extended(&b)),
                "len {n}"
            );
        }
    }

    /// What a testbench does with a CRC engine.
    trait Engine: crate::bench::Clocked {
        fn feed(&mut self, valid: bool, first: bool, beat: &[u8], bytes: usize);
        fn value(&self) -> u32;
    }

    macro_rules! engine {
        ($t:ty) => {
            impl Engine for $t {
                fn feed(&mut self, valid: bool, first: bool, beat: &[u8], bytes: usize) {
                    self.port.in_valid.next = valid;
                    self.port.in_first.next = first;
                    self.port.in_data.next = bytes_to_bits(beat);
                    self.port.in_bytes.next = (bytes as u64).to_bits();
                }
                fn value(&self) -> u32 {
                    self.port.crc.val().to_u32()
                }
            }
        };
    }
    engine!(Crc32cRegistered);

    /// Messages of lengths 1..=130 and 1072, the bytes past each message's end garbage (the
    /// engine must zero them): back to back at one beat per cycle, and with idle cycles
    /// (random data on the inputs) between beats and between messages, over which the value
    /// must hold.
    fn matches_reference<E: Engine>(uut: E) {
        let mut b = Bench::new(uut);
        let mut s = 99u64;
        let lens: Vec<usize> = (1..=130).step_by(3).chain([64, 128, 1072]).collect();
        for gaps in [false, true] {
            for &n in &lens {
                let msg = rnd_bytes(&mut s, n);
                for (i, chunk) in msg.chunks(64).enumerate() {
                    if gaps && s % 3 == 0 {
                        let junk = rnd_bytes(&mut s, 64);
                        b.uut.feed(false, i == 0, &junk, 64);
                        b.tick();
                    }
                    let beat = [chunk, &rnd_bytes(&mut s, 64 - chunk.len())].concat();
                    b.uut.feed(true, i == 0, &beat, chunk.len());
                    b.tick();
                }
                let want = crc32c_reference(&zero_extended(&msg));
                for _ in 0..if gaps { 3 } else { 1 } {
                    let junk = rnd_bytes(&mut s, 64);
                    b.uut.feed(false, true, &junk, 7);
                    b.settle();
                    assert_eq!(b.uut.value(), want, "len {n}, gaps {gaps}");
                    if gaps {
                        b.tick();
                    }
                }
            }
        }
    }

    #[test]
    fn registered_crc_matches_reference() {
        matches_reference(Crc32cRegistered::default());
    }
}
