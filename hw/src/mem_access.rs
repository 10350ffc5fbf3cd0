//! Memory access datapath: the byte realignment between packet lanes and DRAM lanes.
//!
//! A packet's payload starts at byte 48 of its first beat, but its DRAM address may have any
//! byte offset. [`Realign`] is a funnel shifter: `out = ({hi, lo} >> 8 * sh)[511:0]`, fed with
//! consecutive beats of a stream (`lo` = the previous beat, `hi` = this one). With
//! `sh = (48 - va) mod 64` it turns packet beats into DRAM-aligned blocks of the payload (the
//! write path); with `sh = (va - 48) mod 64` it turns DRAM blocks into response-packet beats
//! with the data at byte 48 (the read path). Because every page is a multiple of 64 bytes,
//! the DRAM lane of a byte is its virtual address mod 64, so one shift serves both pieces of
//! a request that straddles a page boundary.
//!
//! The AXI4 burst sequencing (AR/R, AW/W with byte strobes, B accounting) is in
//! `fastpath_top`'s controller, which owns the two beat buffers.

use rust_hdl::prelude::*;

/// The funnel shifter (combinational): three levels of 4-way selects, one LUT6 per output bit
/// each, shifting by `sh`'s top two bits (16-byte steps), its middle two (4-byte steps) and
/// its low two (bytes). Each level keeps only the bits the later levels can still select (512
/// plus the most the remaining shifts reach: 632, 536, then 512 bits), so the block is 1,680
/// LUT6 in three levels; one shift of the whole 1,024-bit pair leaves the synthesizer stages as
/// wide as the pair (docs/utilization.md has the figures).
#[derive(LogicBlock, Default)]
pub struct Realign {
    /// Earlier beat.
    pub lo: Signal<In, Bits<512>>,
    /// Later beat.
    pub hi: Signal<In, Bits<512>>,
    /// Shift in bytes.
    pub sh: Signal<In, Bits<6>>,
    /// Byte k of the result = byte `k + sh` of `{hi, lo}`.
    pub out: Signal<Out, Bits<512>>,
    /// `{hi, lo}`.
    pair: Signal<Local, Bits<1024>>,
    /// The pair shifted by `16 * sh[5:4]` bytes: the 632 bits the next levels select from.
    by16: Signal<Local, Bits<632>>,
    /// That shifted by `4 * sh[3:2]` bytes: the 536 bits the last level selects from.
    by4: Signal<Local, Bits<536>>,
}

// The levels' widths: 512 output bits plus the most the later levels shift (bytes 15, then 3).
const _: () = assert!(512 + 15 * 8 == 632 && 512 + 3 * 8 == 536 && 384 + 632 <= 1024);

impl Logic for Realign {
    #[hdl_gen]
    fn update(&mut self) {
        self.pair.next =
            (bit_cast::<1024, 512>(self.hi.val()) << 512) | bit_cast::<1024, 512>(self.lo.val());
        self.by16.next = bit_cast::<632, 1024>(
            self.pair.val() >> (bit_cast::<10, 2>(self.sh.val().get_bits::<2>(4)) << 7),
        );
        self.by4.next = bit_cast::<536, 632>(
            self.by16.val() >> (bit_cast::<10, 2>(self.sh.val().get_bits::<2>(2)) << 5),
        );
        self.out.next = bit_cast::<512, 536>(
            self.by4.val() >> (bit_cast::<10, 2>(self.sh.val().get_bits::<2>(0)) << 3),
        );
    }
}

/// The lanes of one 64-byte beat inside a byte range of a stream (combinational): the beat is
/// block `block` of the stream (its lane 0 at position `64 * block`), the range is `[lo, hi)`;
/// `first` and `stop` are the range clamped to the beat's lanes 0..=64, so lane k is inside
/// when `first <= k < stop`. The write strobes and an Append record's payload mask are both
/// built from it.
///
/// A beat starts on a block boundary, so the clamp needs no subtraction: a bound in a later
/// block clamps to 64, in an earlier one to 0, in this one it is its offset (a 6-bit compare
/// and a select, not a 12-bit difference and its range check).
#[derive(LogicBlock, Default)]
pub struct LaneWindow {
    /// The beat's block in the stream (lane 0 at stream position `64 * block`).
    pub block: Signal<In, Bits<6>>,
    /// First byte of the range (stream position).
    pub lo: Signal<In, Bits<12>>,
    /// One past the range's last byte.
    pub hi: Signal<In, Bits<12>>,
    /// `clamp(lo - 64 * block, 0, 64)`.
    pub first: Signal<Out, Bits<7>>,
    /// `clamp(hi - 64 * block, 0, 64)`.
    pub stop: Signal<Out, Bits<7>>,
}

impl Logic for LaneWindow {
    #[hdl_gen]
    fn update(&mut self) {
        self.first.next = 0.into();
        if self.lo.val().get_bits::<6>(6) > self.block.val() {
            self.first.next = 64.into();
        } else if self.lo.val().get_bits::<6>(6) == self.block.val() {
            self.first.next = bit_cast::<7, 6>(self.lo.val().get_bits::<6>(0));
        }
        self.stop.next = 0.into();
        if self.hi.val().get_bits::<6>(6) > self.block.val() {
            self.stop.next = 64.into();
        } else if self.hi.val().get_bits::<6>(6) == self.block.val() {
            self.stop.next = bit_cast::<7, 6>(self.hi.val().get_bits::<6>(0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::util::{bits_to_bytes, bytes_to_bits};

    /// Every shift, on a stream of distinct bytes, against the slice it must select.
    #[test]
    fn realign_selects_the_window() {
        let mut r = Realign::default();
        r.connect_all();
        let stream: Vec<u8> = (0..128).map(|i| (i * 7 + 3) as u8).collect();
        for sh in 0..64usize {
            r.lo.next = bytes_to_bits(&stream[..64]);
            r.hi.next = bytes_to_bits(&stream[64..]);
            r.sh.next = (sh as u64).to_bits();
            assert!(simulate(&mut r, 100));
            assert_eq!(
                bits_to_bytes(r.out.val()),
                stream[sh..sh + 64].to_vec(),
                "sh {sh}"
            );
        }
    }

    /// Every block against a range of every shape (empty, inside one beat, across
    /// beats, past the end): `first`/`stop` are the clamped bounds the rule says.
    #[test]
    fn lane_window_clamps_the_range_to_the_beat() {
        let mut w = LaneWindow::default();
        w.connect_all();
        let clamp = |x: i64| x.clamp(0, 64) as u64;
        for (lo, hi) in [
            (0u64, 0u64),
            (0, 64),
            (5, 70),
            (60, 200),
            (100, 101),
            (64, 1088),
            (7, 4095),
            (128, 192),
            (127, 129),
            (4032, 4095),
            (0, 4032),
        ] {
            for block in 0..64u64 {
                let pos = block * 64;
                w.block.next = block.to_bits();
                w.lo.next = lo.to_bits();
                w.hi.next = hi.to_bits();
                assert!(simulate(&mut w, 100));
                assert_eq!(
                    w.first.val().to_u64(),
                    clamp(lo as i64 - pos as i64),
                    "lo {lo} pos {pos}"
                );
                assert_eq!(
                    w.stop.val().to_u64(),
                    clamp(hi as i64 - pos as i64),
                    "hi {hi} pos {pos}"
                );
            }
        }
    }
}
