//! Append's placement on the log's tail word (`proto::replog::place`), the sync path's part of
//! an Append: the executor reads the tail word as an atomic's (SAddr/SData) and hands it here
//! as it arrives (`load`); the sums of the placement are registered in that cycle, the
//! compares come out the next (the executor's `APlace` state), so the R channel's word select
//! is not in front of the 66-bit sums and their compares in one cycle.
//!
//! From the cycle after `load`, until the next `load`:
//! * `log_full`: `replog::place(capacity, tail, len)` refuses (an unaligned tail, or the
//!   record ends past the capacity, or `LOG_HEAD + tail` wraps), or the record's VA
//!   `va + LOG_HEAD + tail` wraps the 64 bits (the model's `checked_add`): LOG_FULL.
//! * else `past_va`: the record ends past the VA space (`VA_LIMIT`): BAD_REQUEST, as the
//!   model's `translate_range`.
//! * else the record goes at `record_va` (its `footprint` bytes are translated with write
//!   permission and written like a write's), and the tail word becomes `new_tail`; the answer
//!   carries `old_tail`. `tail_word_pa` is where the tail word was read (it is written back
//!   there, and made durable for a durable Append). `shift` is the record's realignment from
//!   its wbuf slot (the payload at the header VA's lane, `slot_word` 8-byte words in) to its
//!   DRAM lanes (at `record_va`'s), in 8-byte words: `(56 + slot lane - record lane) / 8`, 0..=14 (the frame's
//!   8 bytes go before the payload; both lanes are multiples of 8).
//!
//! `len` is 1..=`MAX_RECORD` (the decode's `append_ok` checked it before the tail is read);
//! `footprint` is registered (valid the cycle after `len`: the executor reads it from SyncCheck
//! on, `len` being the header's from Dispatch);
//! `va`, `capacity` and `len` hold while the request runs, from the cycle before `load` on:
//! the room the capacity leaves for the tail (`capacity - LOG_HEAD - footprint`) is
//! registered every cycle, so the load compares the tail with a register (`tail <= room`), not
//! a sum with the header's capacity (whose byte swap and 66-bit compare would otherwise sit in
//! front of the executor's APlace decision). `past_va` the same way: the record's end
//! `va + LOG_HEAD + tail + footprint` is past `VA_LIMIT` exactly when the tail is past
//! `VA_LIMIT - va - LOG_HEAD - footprint` (`va_room`, registered every cycle), so the decision
//! is a flip-flop set as the tail arrives, not a compare of the registered end.

use crate::fastpath::links::{AppendPlaced, PlacePort, RequestFieldsIn};
use crate::spec::Spec;
use clio_proto::consts::VA_LIMIT;
use clio_proto::replog::{footprint, FRAME_BYTES, LOG_HEAD, MAX_RECORD};
use rust_hdl::prelude::*;

// The footprint as `((len + 15) >> 3) << 3` (an 8-byte frame, the payload padded to 8), in 12
// bits; the shift in 8-byte words (`get_bits::<3>(3)` of a lane).
const _: () = assert!(
    FRAME_BYTES == 8 && footprint(1) == 16 && footprint(MAX_RECORD) == 1032 && 1032 < 1 << 12
);

/// Append's placement.
#[derive(LogicBlock, Default)]
pub struct AppendPlace {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The request's fields (`Decode::fields`), held while the request runs: the log's VA
    /// (`va`), its capacity in bytes (`arg0`) and the record's length (`total_len`, at most
    /// `MAX_RECORD`: 12 bits).
    pub req: RequestFieldsIn,
    /// The record's length, `req.total_len` in 12 bits.
    len: Signal<Local, Bits<12>>,
    /// The tail word's arrival (`Executor::placer`): load it, its PA, the payload's lane in its slot as an 8-byte word.
    pub exec: PlacePort,
    /// The tail word's value, with `load`.
    pub tail: Signal<In, Bits<64>>,
    /// The placement, for the executor (`Executor::place`, joined in the top).
    pub placed: AppendPlaced,
    /// The tail word's PA (where it is written back).
    pub tail_word_pa: Signal<Out, Bits<64>>,
    /// The record's realignment from its wbuf slot, in 8-byte words (the write-data stage's
    /// `start_shift`).
    pub shift: Signal<Out, Bits<4>>,
    /// The tail word, its PA, and the slot lane's 8-byte word, as loaded.
    tail_q: DFF<Bits<64>>,
    tail_pa_q: DFF<Bits<64>>,
    slot_word_q: DFF<Bits<3>>,
    /// The record's VA (`va + LOG_HEAD + tail`), unwrapped (66 bits), summed as the tail
    /// arrives.
    rva: DFF<Bits<66>>,
    /// The largest tail with which the record fits, `capacity - LOG_HEAD - footprint` (66 bits,
    /// negative when not even an empty log fits it), registered every cycle.
    room: DFF<Bits<66>>,
    /// `replog::place` accepts the loaded tail: aligned, and `tail + LOG_HEAD + footprint <=
    /// capacity` (`tail <= room`).
    fits: DFF<Bit>,
    /// The largest tail with which the record ends within the VA space, `VA_LIMIT - va -
    /// LOG_HEAD - footprint` (66 bits, negative when none does), registered every cycle.
    va_room: DFF<Bits<66>>,
    /// The loaded tail puts the record's end past `VA_LIMIT` (`tail > va_room`).
    past: DFF<Bit>,
    fp: Signal<Local, Bits<12>>,
    /// `fp` registered every cycle: `footprint` (valid from the cycle after `len`), so the
    /// round-up's adder is not in front of the executor's `len` select (APlace) or of Append's
    /// `arg1` (SyncCheck).
    fp_q: DFF<Bits<12>>,
    log_head: Spec<66, LOG_HEAD>,
    va_limit: Spec<66, VA_LIMIT>,
}

impl Logic for AppendPlace {
    #[hdl_gen]
    fn update(&mut self) {
        self.len.next = bit_cast::<12, 32>(self.req.total_len.val());
        dff_setup!(
            self,
            clock,
            tail_q,
            tail_pa_q,
            slot_word_q,
            rva,
            room,
            fits,
            va_room,
            past,
            fp_q
        );
        self.fp.next = ((self.len.val() + 15) >> 3) << 3;
        self.fp_q.d.next = self.fp.val();
        self.placed.footprint.next = self.fp_q.q.val();
        self.room.d.next = bit_cast::<66, 64>(self.req.arg0.val())
            - (self.log_head.val() + bit_cast::<66, 12>(self.fp.val()));
        self.va_room.d.next = self.va_limit.val()
            - (bit_cast::<66, 64>(self.req.va.val())
                + self.log_head.val()
                + bit_cast::<66, 12>(self.fp.val()));
        if self.exec.load.val() {
            self.past.d.next = self.va_room.q.val().get_bit(65)
                | (self.tail.val() > self.va_room.q.val().get_bits::<64>(0));
            self.tail_q.d.next = self.tail.val();
            self.tail_pa_q.d.next = self.exec.tail_pa.val();
            self.slot_word_q.d.next = self.exec.slot_word.val();
            // The sums, registered (summed in parallel, so the compares next cycle do not
            // chain an adder).
            self.rva.d.next = bit_cast::<66, 64>(self.req.va.val())
                + self.log_head.val()
                + bit_cast::<66, 64>(self.tail.val());
            self.fits.d.next = (self.tail.val().get_bits::<3>(0) == 0)
                & !self.room.q.val().get_bit(65)
                & (self.tail.val() <= self.room.q.val().get_bits::<64>(0));
        }
        self.placed.log_full.next = !self.fits.q.val() | (self.rva.q.val().get_bits::<2>(64) != 0);
        self.placed.past_va.next = self.past.q.val();
        self.placed.record_va.next = bit_cast::<64, 66>(self.rva.q.val());
        self.placed.old_tail.next = self.tail_q.q.val();
        self.placed.new_tail.next = self.tail_q.q.val() + bit_cast::<64, 12>(self.fp_q.q.val());
        self.tail_word_pa.next = self.tail_pa_q.q.val();
        self.shift.next = bit_cast::<4, 3>(self.slot_word_q.q.val()) + 7
            - bit_cast::<4, 3>(self.rva.q.val().get_bits::<3>(3));
    }
}

crate::impl_clocked!(AppendPlace);

#[cfg(test)]
mod tests;
