//! The write-data stage: streams a write's W beats from its payload slot, one 512-bit beat per
//! cycle, while the executor goes on with the next request.
//!
//! The executor addresses a write's bursts (one AW per page piece: `two` pieces when it crosses
//! a page) and hands the data over (`start`) with the slot that holds the payload, already in
//! DRAM lanes (the ingest stage realigned it: byte `va % 64` of block 0 is the first). The
//! stage sends, per piece, the blocks that hold the piece's bytes with the piece's byte
//! strobes (lanes of `[o, o + n1)` for the first, `[o + n1, o + len)` for the second, in block
//! space), then gives the slot back (`freed`).
//!
//! An Append record is written the same way through a funnel shifter of whole 8-byte words:
//! the record is the frame word (its payload length) followed by the payload, placed at the
//! log tail, so beat j takes slot blocks `j + adv - 1` and `j + adv` shifted by `sh` words
//! (`adv`, `sh` from the executor's `ap_u` = (56 + payload lane - record lane) / 8), keeps only
//! the payload's lanes, puts the frame word at lane `o` of beat 0 and zeros after the payload
//! (the pad: the strobes cover the record's whole footprint). When `adv` is set the first cycle
//! only reads block 0 (`prime`).
//!
//! The stage owns the payload buffer's read port while `w.own` (the top gives it to the
//! executor otherwise) and the W channel while `w.own` (the executor's own one-beat writes, PTE
//! write-backs and atomics, wait for it). The buffer's read is registered: the stage presents
//! the next block's address in the cycle a beat is taken.

use crate::fastpath::links::{WriteBeats, WriteJobIn};
use crate::mem_access::{LaneWindow, Realign};
use clio_proto::consts::{BEAT_BYTES, MAX_PAYLOAD};
use clio_proto::replog;
use rust_hdl::prelude::*;

// Blocks of a slot: `slot << 5 | block` (a MAX_PAYLOAD payload at any lane offset spans 17 of
// 32), byte positions in block space are 12-bit (`block << 6`).
const _: () = assert!(BEAT_BYTES == 64 && MAX_PAYLOAD / BEAT_BYTES < 32);
// The Append frame is one 8-byte word (`+ 8` below), the funnel shifts whole words (`sh << 3`),
// and a record is at most one packet's payload.
const _: () = assert!(replog::FRAME_BYTES == 8 && replog::MAX_RECORD as usize == MAX_PAYLOAD);

/// The write-data stage.
#[derive(LogicBlock, Default)]
pub struct WriteData {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: idle.
    pub reset: Signal<In, Bit>,
    /// The write to take (`Executor::write`): its pieces, lane, length and whether it is an Append record.
    pub job: WriteJobIn,
    /// Its payload slot.
    pub start_slot: Signal<In, Bits<2>>,
    /// Append: the slot-to-record shift in 8-byte words (bit 3: one block ahead, bits 0..3:
    /// the funnel's word shift).
    pub start_shift: Signal<In, Bits<4>>,
    /// Append: the payload length (the frame word).
    pub start_payload_len: Signal<In, Bits<12>>,
    /// The payload buffer's read port: block address (`slot << 5 | block`) while `w.own`.
    pub buf_address: Signal<Out, Bits<7>>,
    /// The payload buffer's read data (the block addressed the cycle before).
    pub buf_data: Signal<In, Bits<512>>,
    /// DRAM W beats (one 512-bit beat in DRAM lanes, its byte strobes, `last` on the piece's
    /// last beat), to the DRAM port; `own`: a write is being streamed (the buffer's read port
    /// and the W channel are the stage's).
    pub w: WriteBeats,
    /// The slot being streamed.
    pub slot: Signal<Out, Bits<2>>,
    /// The slot given back this cycle (bit k = slot k).
    pub freed: Signal<Out, Bits<4>>,
    /// Streaming.
    w_busy: DFF<Bit>,
    /// The write's slot.
    w_slot: DFF<Bits<2>>,
    /// The block of the piece's burst on W (counted from block 0 of the slot).
    idx: DFF<Bits<6>>,
    /// The second piece is streaming.
    piece: DFF<Bit>,
    /// The write has two pieces.
    two: DFF<Bit>,
    /// Lane of the first byte.
    o: DFF<Bits<6>>,
    /// The whole write's end in block space (`o + len`) and its end block: the second
    /// piece's `hi` and `end_block`.
    all_hi: DFF<Bits<12>>,
    all_end: DFF<Bits<12>>,
    /// Append: the record is streamed through the funnel.
    append: DFF<Bit>,
    /// Append: beat j takes slot blocks j + adv - 1 and j + adv.
    adv: DFF<Bit>,
    /// Append: the funnel shift in 8-byte words.
    sh: DFF<Bits<3>>,
    /// Append: the first cycle only reads (block 0 into `prev_block`), no beat.
    prime: DFF<Bit>,
    /// Append: the slot block read for the previous beat.
    prev_block: DFF<Bits<512>>,
    /// Append: the payload's block-space bytes [payload_lo, payload_hi) (after the frame).
    payload_lo: DFF<Bits<12>>,
    payload_hi: DFF<Bits<12>>,
    /// Append: the payload length, the frame word.
    payload_len: DFF<Bits<12>>,
    /// The streaming piece's bytes [lo, hi) in block space, and its end block (`end` is a
    /// Verilog keyword). Registered when the write starts and when its second piece begins, so
    /// the strobes and `w.last` come from flip-flops, not from the adders that make them.
    lo: DFF<Bits<12>>,
    hi: DFF<Bits<12>>,
    end_block: DFF<Bits<12>>,
    /// From the `start_*` inputs: the first piece's end and end block, the whole write's end
    /// and end block.
    start_hi: Signal<Local, Bits<12>>,
    start_end: Signal<Local, Bits<12>>,
    start_all_hi: Signal<Local, Bits<12>>,
    start_all_end: Signal<Local, Bits<12>>,
    /// The beat is taken this cycle.
    fire: Signal<Local, Bit>,
    /// Append: bytes of this beat that carry payload (all ones in the kept lanes).
    keep: Signal<Local, Bits<512>>,
    /// The payload's lanes of this beat, clamped to 0..=64.
    keep_lo: Signal<Local, Bits<7>>,
    keep_hi: Signal<Local, Bits<7>>,
    ones64: Signal<Local, Bits<64>>,
    ones512: Signal<Local, Bits<512>>,
    funnel: Realign,
    /// The strobes' lanes of this beat.
    strobe: LaneWindow,
    /// Append: the payload's lanes of this beat.
    payload: LaneWindow,
}

impl Logic for WriteData {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            w_busy,
            w_slot,
            idx,
            piece,
            two,
            o,
            all_hi,
            all_end,
            append,
            adv,
            sh,
            prime,
            prev_block,
            payload_lo,
            payload_hi,
            payload_len,
            lo,
            hi,
            end_block
        );
        self.w.own.next = self.w_busy.q.val();
        self.slot.next = self.w_slot.q.val();
        // Strobes: lanes of block `idx` inside [lo, hi) (block-space byte positions). The
        // first piece is [o, o + n1), ending at block (o + n1) / 64 when a second follows (the
        // page boundary is block-aligned), else at the write's last block; the second is
        // [o + n1, o + len).
        self.start_hi.next = bit_cast::<12, 6>(self.job.o.val()) + self.job.n1.val();
        self.start_all_hi.next = bit_cast::<12, 6>(self.job.o.val()) + self.job.len.val();
        self.start_all_end.next = (self.start_all_hi.val() + 63) >> 6;
        if self.job.two.val() {
            self.start_end.next = self.start_hi.val() >> 6;
        } else {
            self.start_end.next = self.start_all_end.val();
        }
        self.ones64.next = 0xFFFF_FFFF_FFFF_FFFF_u64.to_bits();
        // Lane k is strobed when lo <= 64 idx + k < hi: the window [lo, hi) of this block's
        // lanes, clamped to 0..=64, as two shifts of an all-ones word.
        self.strobe.block.next = self.idx.q.val();
        self.strobe.lo.next = self.lo.q.val();
        self.strobe.hi.next = self.hi.q.val();
        self.w.strb.next = (self.ones64.val() << self.strobe.first.val())
            & !(self.ones64.val() << self.strobe.stop.val());
        self.w.valid.next = self.w_busy.q.val() & !self.prime.q.val();
        self.w.last.next = bit_cast::<12, 6>(self.idx.q.val()) + 1 == self.end_block.q.val();
        self.fire.next = self.w_busy.q.val() & !self.prime.q.val() & self.w.ready.val();
        self.freed.next = 0.into();
        // Append records: beat j = slot blocks j + adv - 1 (kept from the previous read) and
        // j + adv through the funnel, payload lanes kept, the frame word at lane o of beat
        // 0, zeros after the payload (the pad; the strobes cover the whole footprint).
        self.funnel.lo.next = self.prev_block.q.val();
        self.funnel.hi.next = self.buf_data.val();
        self.funnel.sh.next = bit_cast::<6, 3>(self.sh.q.val()) << 3;
        self.payload.block.next = self.idx.q.val();
        self.payload.lo.next = self.payload_lo.q.val();
        self.payload.hi.next = self.payload_hi.q.val();
        self.keep_lo.next = self.payload.first.val();
        self.keep_hi.next = self.payload.stop.val();
        self.ones512.next = !bit_cast::<512, 1>(0.into());
        self.keep.next = 0.into();
        if self.keep_lo.val() < 64 {
            if self.keep_hi.val() >= 64 {
                self.keep.next = self.ones512.val() << (bit_cast::<10, 7>(self.keep_lo.val()) << 3);
            } else {
                self.keep.next = (self.ones512.val()
                    << (bit_cast::<10, 7>(self.keep_lo.val()) << 3))
                    & !(self.ones512.val() << (bit_cast::<10, 7>(self.keep_hi.val()) << 3));
            }
        }
        self.w.data.next = self.buf_data.val();
        if self.append.q.val() {
            self.w.data.next = self.funnel.out.val() & self.keep.val();
            if self.idx.q.val() == 0 {
                self.w.data.next = (self.funnel.out.val() & self.keep.val())
                    | (bit_cast::<512, 12>(self.payload_len.q.val())
                        << (bit_cast::<9, 6>(self.o.q.val()) << 3));
            }
        }
        if self.w_busy.q.val() & self.prime.q.val() {
            self.prev_block.d.next = self.buf_data.val();
            self.prime.d.next = false;
        }
        // The buffer is read a block ahead: the next block's address once this beat is taken.
        self.buf_address.next = (bit_cast::<7, 2>(self.w_slot.q.val()) << 5)
            | bit_cast::<7, 5>(bit_cast::<5, 6>(
                self.idx.q.val() + bit_cast::<6, 1>(self.adv.q.val().into()),
            ));
        if self.fire.val() {
            self.prev_block.d.next = self.buf_data.val();
            self.buf_address.next = (bit_cast::<7, 2>(self.w_slot.q.val()) << 5)
                | bit_cast::<7, 5>(bit_cast::<5, 6>(
                    self.idx.q.val() + 1 + bit_cast::<6, 1>(self.adv.q.val().into()),
                ));
            self.idx.d.next = self.idx.q.val() + 1;
            if bit_cast::<12, 6>(self.idx.q.val()) + 1 == self.end_block.q.val() {
                if self.two.q.val() & !self.piece.q.val() {
                    self.piece.d.next = true;
                    self.lo.d.next = self.hi.q.val();
                    self.hi.d.next = self.all_hi.q.val();
                    self.end_block.d.next = self.all_end.q.val();
                } else {
                    // Done with the frame: its slot goes back to the ingest stage.
                    self.w_busy.d.next = false;
                    self.freed.next = bit_cast::<4, 1>(1.into()) << self.w_slot.q.val();
                }
            }
        }
        if self.job.start.val() {
            self.w_busy.d.next = true;
            self.w_slot.d.next = self.start_slot.val();
            self.idx.d.next = 0.into();
            self.piece.d.next = false;
            self.two.d.next = self.job.two.val();
            self.o.d.next = self.job.o.val();
            self.all_hi.d.next = self.start_all_hi.val();
            self.all_end.d.next = self.start_all_end.val();
            self.lo.d.next = bit_cast::<12, 6>(self.job.o.val());
            self.hi.d.next = self.start_hi.val();
            self.end_block.d.next = self.start_end.val();
            self.append.d.next = self.job.append.val();
            self.adv.d.next = self.job.append.val() & self.start_shift.val().get_bit(3);
            self.prime.d.next = self.job.append.val() & self.start_shift.val().get_bit(3);
            self.sh.d.next = self.start_shift.val().get_bits::<3>(0);
            self.payload_lo.d.next = bit_cast::<12, 6>(self.job.o.val()) + 8;
            self.payload_hi.d.next =
                bit_cast::<12, 6>(self.job.o.val()) + 8 + self.start_payload_len.val();
            self.payload_len.d.next = self.start_payload_len.val();
        }
        if self.reset.val() {
            self.w_busy.d.next = false;
        }
    }
}

crate::impl_clocked!(WriteData);

#[cfg(test)]
mod tests;
