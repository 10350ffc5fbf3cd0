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

/// The funnel shifter (combinational).
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
}

impl Logic for Realign {
    #[hdl_gen]
    fn update(&mut self) {
        self.out.next = bit_cast::<512, 1024>(
            ((bit_cast::<1024, 512>(self.hi.val()) << 512) | bit_cast::<1024, 512>(self.lo.val()))
                >> (bit_cast::<10, 6>(self.sh.val()) << 3),
        );
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
}
