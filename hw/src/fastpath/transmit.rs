//! The transmit stage: sends finished responses, one 512-bit beat per cycle, while the next one
//! is built.
//!
//! A response is handed over (`load`) as its length, route, beat 0 (the header with its CRC, in
//! a register) and the `txbuf` slot that holds its beats 1.. (the buffer lives in the top: the
//! read-data stage writes one slot while this stage reads the other). Beat 0 goes out first,
//! then the slot's beats, read one cycle ahead (the buffer's read is registered), `tx_keep`
//! trimming the last beat to the response's length. The stage takes the next response in the
//! cycle of the last beat (`free`), so responses leave back to back with no idle cycle
//! between them; `tx_ready` low holds the beat on the wire. The last beat's index and byte
//! enables are computed as the response is loaded (registers), and whether the beat on the
//! wire is the last is a register too (`t_at_last`, set as the beat before it is taken), so
//! `tx_last` and `free` are one gate from flip-flops and `tx_ready`: `free` starts the read-data
//! stage's and the executor's next decisions.

use crate::fastpath::links::TxLoadIn;
use clio_proto::consts::BEAT_BYTES;
use rust_hdl::prelude::*;

// A response's last beat is `(len - 1) >> 6` and its bytes there `len mod 64` (all 64 when
// that is 0); a slot's beat k is at `slot << 5 | k`: 32 beats of 64 bytes hold the largest
// response (a 64-byte header and a 1 KiB payload, 17 beats).
const _: () = assert!(BEAT_BYTES == 64);
const _: () = assert!(
    (clio_proto::header::HEADER_LEN + clio_proto::consts::MAX_PAYLOAD).div_ceil(BEAT_BYTES) <= 32
);

/// The transmit stage.
#[derive(LogicBlock, Default)]
pub struct Transmit {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: idle.
    pub reset: Signal<In, Bit>,
    /// The response to load (`ReadData::tx`, joined in the top).
    pub job: TxLoadIn,
    /// txbuf read address (`slot << 5 | beat`); the data comes back the next cycle.
    pub buf_address: Signal<Out, Bits<6>>,
    /// txbuf read data.
    pub buf_data: Signal<In, Bits<512>>,
    /// Network TX: beat valid.
    pub tx_valid: Signal<Out, Bit>,
    /// Network TX: the beat is taken.
    pub tx_ready: Signal<In, Bit>,
    /// Network TX: the beat.
    pub tx_data: Signal<Out, Bits<512>>,
    /// Network TX: byte enables (contiguous from byte 0).
    pub tx_keep: Signal<Out, Bits<64>>,
    /// Network TX: the response's last beat.
    pub tx_last: Signal<Out, Bit>,
    /// Network TX: the response's route.
    pub tx_route: Signal<Out, Bits<256>>,
    /// A response can be loaded this cycle: idle, or its last beat leaves now.
    pub free: Signal<Out, Bit>,
    /// A response is being sent.
    pub busy: Signal<Out, Bit>,
    /// A response's last beat leaves this cycle (the sent-packets counter).
    pub sent: Signal<Out, Bit>,
    /// Sending.
    t_busy: DFF<Bit>,
    /// The beat on the wire.
    t_idx: DFF<Bits<6>>,
    /// The response's last beat (`(len - 1) / 64`) and its byte enables, from its length as
    /// it is loaded.
    t_last: DFF<Bits<6>>,
    t_keep: DFF<Bits<64>>,
    /// The beat on the wire is the last (`t_idx == t_last`).
    t_at_last: DFF<Bit>,
    /// The response's route, beat 0 and slot.
    t_route: DFF<Bits<256>>,
    t_beat0: DFF<Bits<512>>,
    t_slot: DFF<Bit>,
    /// The loaded response's last beat, and its bytes there (`len mod 64`, 0 for 64).
    l_last: Signal<Local, Bits<12>>,
    l_tail: Signal<Local, Bits<6>>,
    ones64: Signal<Local, Bits<64>>,
    /// The beat is taken this cycle.
    fire: Signal<Local, Bit>,
    /// This is the last beat.
    last: Signal<Local, Bit>,
}

impl Logic for Transmit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, t_busy, t_idx, t_last, t_keep, t_at_last, t_route, t_beat0, t_slot);
        self.ones64.next = 0xFFFF_FFFF_FFFF_FFFF_u64.to_bits();
        self.last.next = self.t_at_last.q.val();
        // Every lane but in the last beat, which keeps lanes 0..len mod 64 (all for 0).
        self.tx_keep.next = self.ones64.val();
        if self.last.val() {
            self.tx_keep.next = self.t_keep.q.val();
        }
        self.l_last.next = (self.job.len.val() - 1) >> 6;
        self.l_tail.next = self.job.len.val().get_bits::<6>(0);
        self.tx_valid.next = self.t_busy.q.val();
        self.tx_route.next = self.t_route.q.val();
        self.tx_last.next = self.last.val();
        if self.t_idx.q.val() == 0 {
            self.tx_data.next = self.t_beat0.q.val();
        } else {
            self.tx_data.next = self.buf_data.val();
        }
        self.fire.next = self.t_busy.q.val() & self.tx_ready.val();
        self.sent.next = self.fire.val() & self.last.val();
        // The buffer is read a beat ahead: the next beat's address once this one is taken.
        if self.fire.val() {
            self.buf_address.next = (bit_cast::<6, 1>(self.t_slot.q.val().into()) << 5)
                | bit_cast::<6, 5>(bit_cast::<5, 6>(self.t_idx.q.val() + 1));
            self.t_idx.d.next = self.t_idx.q.val() + 1;
            self.t_at_last.d.next = (self.t_idx.q.val() + 1) == self.t_last.q.val();
            if self.last.val() {
                self.t_busy.d.next = false;
            }
        } else {
            self.buf_address.next = (bit_cast::<6, 1>(self.t_slot.q.val().into()) << 5)
                | bit_cast::<6, 5>(bit_cast::<5, 6>(self.t_idx.q.val()));
        }
        self.free.next = !self.t_busy.q.val() | self.sent.val();
        self.busy.next = self.t_busy.q.val();
        if self.job.valid.val() {
            self.t_busy.d.next = true;
            self.t_idx.d.next = 0.into();
            self.t_slot.d.next = self.job.slot.val();
            self.t_last.d.next = bit_cast::<6, 12>(self.l_last.val());
            self.t_at_last.d.next = self.l_last.val() == 0;
            self.t_keep.d.next = !(self.ones64.val() << self.l_tail.val());
            if self.l_tail.val() == 0 {
                self.t_keep.d.next = self.ones64.val();
            }
            self.t_route.d.next = self.job.route.val();
            self.t_beat0.d.next = self.job.beat0.val();
        }
        if self.reset.val() {
            self.t_busy.d.next = false;
            self.t_slot.d.next = false;
        }
    }
}

crate::impl_clocked!(Transmit);

#[cfg(test)]
mod tests;
