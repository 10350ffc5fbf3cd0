//! The data path of the executor's word accesses, out of the executor: an atomic's 8-byte word
//! and Append's tail word (`proto::consts::ATOMIC_BYTES`, aligned), read and written back in
//! place, and an offload's 64-byte block write.
//!
//! Both words are 8-byte aligned (Dispatch's `atomic_ok` and `append_ok` check the VA; a page
//! keeps the alignment), so a word's lane in its beat is `pa`'s bits 3..6: eight positions,
//! not sixty-four.
//!
//! - **Read.** The word is taken from its R beat at its lane (`pa`'s bits 3..6) and registered
//!   in every cycle the executor holds `sample` (its `SData` state): the one of the cycle the
//!   beat arrives is `old`, which the ALU (`SAlu`) or Append's placement (`ALoad`) reads the
//!   next cycle, not behind the R channel's word select. With it is registered whether it
//!   equals `cmp_word` (a CAS's expected value, the request's `arg0`: `old_eq`), compared lane
//!   by lane as the beat arrives and selected with the word, so the ALU's decision (`SAlu`:
//!   store or not) is a gate from flip-flops, not a 64-bit compare.
//! - **Write-back.** The word to write (`new`) is loaded from the ALU (`alu_load`, `alu_new`)
//!   or from Append's placement (`tail_load`, `new_tail`). The one-beat write (`wr`, for
//!   `BeatWriter`) puts it at its lane: at `pa`, or at `tail_pa` for
//!   an Append (`tail`); an offload's block (`block`) is written as given instead.

use crate::fastpath::links::{Beat, BlockWriteIn, WordPort};
use crate::util::Gather;
use clio_proto::consts::{ATOMIC_BYTES, BEAT_BYTES};
use rust_hdl::prelude::*;

// A word of 8 bytes (strobes `0xFF << 8 * k`, 64 bits at `64 * k`) in a beat of 64 bytes: word
// `k` of eight is `pa`'s bits 3..6.
const _: () = assert!(ATOMIC_BYTES == 8 && BEAT_BYTES == 64);

/// The word-access data path (module doc).
#[derive(LogicBlock, Default)]
pub struct WordAccess {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The executor's word access (`Executor::word`): the word's PA, when its R beat comes, which word to write back.
    pub exec: WordPort,
    /// The R channel's beat, and the executor waiting for it (`SData`): registered.
    pub r_data: Signal<In, Bits<512>>,
    /// The word read (registered as its beat arrived).
    pub old: Signal<Out, Bits<64>>,
    /// The value the word is compared with (a CAS's expected value), held while sampling.
    pub cmp_word: Signal<In, Bits<64>>,
    /// `old == cmp_word`, registered with `old`.
    pub old_eq: Signal<Out, Bit>,
    /// The ALU's result, loaded with `alu_load`.
    pub alu_new: Signal<In, Bits<64>>,
    /// Append's new tail, loaded with `tail_load`.
    pub new_tail: Signal<In, Bits<64>>,
    /// The PA of Append's tail word.
    pub tail_pa: Signal<In, Bits<64>>,
    /// The write is an offload's block with its strobes, as given (`OffloadService::block`).
    pub block: BlockWriteIn,
    /// The one-beat write (to `BeatWriter::word`): the word at its lane, or the offload's block.
    pub wr: Beat,
    /// The word read, registered.
    old_q: DFF<Bits<64>>,
    /// `old_q == cmp_word`, registered with it.
    eq_q: DFF<Bit>,
    /// The word to write.
    new_q: DFF<Bits<64>>,
    /// The read word's index in its beat (`pa[5:3]`), and its bit offset.
    rd_word: Signal<Local, Bits<3>>,
    rd_sh: Signal<Local, Bits<9>>,
    /// Per word of the beat: it equals `cmp_word`.
    lane_eq: Gather<8>,
    /// The written word's index in its beat (`wr.addr[5:3]`).
    wr_word: Signal<Local, Bits<3>>,
}

impl Logic for WordAccess {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, old_q, eq_q, new_q);
        self.rd_word.next = self.exec.pa.val().get_bits::<3>(3);
        self.rd_sh.next = bit_cast::<9, 3>(self.rd_word.val()) << 6;
        for k in 0..8 {
            self.lane_eq.bits[k].next =
                self.r_data.val().get_bits::<64>(64 * k) == self.cmp_word.val();
        }
        if self.exec.sample.val() {
            self.old_q.d.next = bit_cast::<64, 512>(self.r_data.val() >> self.rd_sh.val());
            self.eq_q.d.next = self.lane_eq.out.val().get_bit(self.rd_word.val().index());
        }
        self.old.next = self.old_q.q.val();
        self.exec.old.next = self.old_q.q.val();
        self.old_eq.next = self.eq_q.q.val();
        if self.exec.alu_load.val() {
            self.new_q.d.next = self.alu_new.val();
        }
        if self.exec.tail_load.val() {
            self.new_q.d.next = self.new_tail.val();
        }
        self.wr.addr.next = self.exec.pa.val();
        if self.exec.tail.val() {
            self.wr.addr.next = self.tail_pa.val();
        }
        self.wr_word.next = self.wr.addr.val().get_bits::<3>(3);
        self.wr.data.next =
            bit_cast::<512, 64>(self.new_q.q.val()) << (bit_cast::<9, 3>(self.wr_word.val()) << 6);
        self.wr.strb.next =
            bit_cast::<64, 8>(0xFF_u8.to_bits()) << (bit_cast::<6, 3>(self.wr_word.val()) << 3);
        if self.block.valid.val() {
            self.wr.data.next = self.block.data.val();
            self.wr.strb.next = self.block.strb.val();
        }
    }
}

crate::impl_clocked!(WordAccess);

#[cfg(test)]
mod tests;
