//! The executor's place in the ingest slots: which slot its request came from, whether it still
//! holds it, and the next frame it takes (the slot after its own once that is released or
//! handed to the write-data stage).
//!
//! Frames fill the four slots in order (0, 1, 2, 3, 0, ...) and the executor takes them in the
//! same order, so one slot number (`slot`) and one bit (`hold`) say where it is. A request
//! ends in one of two ways: the executor finishes it (`done`: its slot goes back to the ingest
//! stage, `clear`), or a write's data goes to the write-data stage with its slot (`pass`: that
//! stage releases it when its beats are out). Either way the executor moves on to the next
//! slot in the same cycle: `next` is that slot, `next_full` says a frame is there, not still
//! being streamed by the write-data stage (the executor can come round the four slots faster
//! than a 1 KiB write's data leaves), and the `next_*` fields are that frame's, for the take
//! (`take`: the executor holds the slot from the next cycle). The frame is read at the oldest
//! slot not taken, from the block's registers alone, which is `next` in every cycle the
//! executor can take. `next_ring_key` is the frame's idempotence-ring key, `{pid,
//! client, req_id}` (a CN_ACK's names the entry it frees: `arg0`'s low word as the req_id), for
//! the executor to register as it takes the frame: the sync unit's CAM compares a register.
//!
//! For the TLB look-ahead: `taken`, the slots whose frames the executor or the write-data stage
//! has, and `head`, the oldest slot the executor has not taken.

use crate::fastpath::ingest::SLOTS;
use crate::fastpath::links::{NextFrame, QueueReleaseIn, SlotFrames, SlotView};
use crate::spec::Spec;
use crate::util::ByteSwap;
use clio_proto::header::field;
use clio_proto::Opcode;
use rust_hdl::prelude::*;

// Slot numbers are 2 bits; the pid is header bytes 4..6, big endian (bits 32..48); the opcode
// byte 1 (bits 8..16); req_id bytes 12..16 (bits 96..128) and arg0 bytes 32..40, its low word
// bytes 36..40 (bits 288..320), big endian.
const _: () = assert!(SLOTS == 4 && field::PID.start == 4 && field::PID.end == 6);
const _: () = assert!(field::OPCODE == 1 && field::REQ_ID.start == 12 && field::REQ_ID.end == 16);
const _: () = assert!(field::ARG0.start == 32 && field::ARG0.end == 40);

/// The executor's slot bookkeeping.
#[derive(LogicBlock)]
pub struct SlotQueue {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: slot 0, nothing held.
    pub reset: Signal<In, Bit>,
    /// The ingest stage's full slots.
    pub full: Signal<In, Bits<4>>,
    /// The next slot's frame, read from the ingest stage (`Ingest::frames`): verdict, header
    /// bytes 0..48, client, route, payload lane.
    pub frames: SlotFrames,
    /// The write-data stage streams a write from slot `w_slot`.
    pub w_busy: Signal<In, Bit>,
    /// The slot the write-data stage streams from (with `w_busy`).
    pub w_slot: Signal<In, Bits<2>>,
    /// The executor's take, done and pass (`Executor::queue`, joined in the top).
    pub exec: QueueReleaseIn,
    /// The executor's slot, its next slot, the slots taken and the oldest not taken (to the look-ahead, `TranslateAhead::queue`; the top reads the slot from it too).
    pub view: SlotView,
    /// The executor holds `slot` (its request came from it and is not passed on).
    pub hold: Signal<Out, Bit>,
    /// The slot released this cycle (bit k = slot k).
    pub clear: Signal<Out, Bits<4>>,
    /// The next frame, for the executor (`Executor::frame`, joined in the top).
    pub out: NextFrame,
    /// The executor's slot.
    x_slot: DFF<Bits<2>>,
    /// The executor holds `x_slot` (its request came from it, not passed on).
    x_hold: DFF<Bit>,
    /// The executor moves past its slot this cycle.
    moves: Signal<Local, Bit>,
    /// The slot the next take reads, the oldest not taken (`next_slot` whenever the executor
    /// can take).
    take_slot: Signal<Local, Bits<2>>,
    /// The next frame's pid bytes as received (big endian), swapped.
    pid_swap: ByteSwap<16>,
    /// The next frame's req_id and `arg0`'s low word, swapped.
    req_swap: ByteSwap<32>,
    ack_swap: ByteSwap<32>,
    /// The ring key's req_id: the header's, or a CN_ACK's `arg0` low word.
    ring_req: Signal<Local, Bits<32>>,
    /// `Opcode::CnAck`.
    op_cn_ack: Spec<8, { Opcode::CnAck as u64 }>,
}

impl Default for SlotQueue {
    fn default() -> Self {
        SlotQueue {
            clock: Default::default(),
            reset: Default::default(),
            full: Default::default(),
            frames: Default::default(),
            w_busy: Default::default(),
            w_slot: Default::default(),
            exec: Default::default(),
            view: Default::default(),
            hold: Default::default(),
            clear: Default::default(),
            out: Default::default(),
            x_slot: Default::default(),
            x_hold: Default::default(),
            moves: Default::default(),
            take_slot: Default::default(),
            pid_swap: Default::default(),
            req_swap: Default::default(),
            ack_swap: Default::default(),
            ring_req: Default::default(),
            op_cn_ack: Default::default(),
        }
    }
}

impl Logic for SlotQueue {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, x_slot, x_hold);
        self.view.slot.next = self.x_slot.q.val();
        self.hold.next = self.x_hold.q.val();
        // Finished with its slot held (released here), or passed to the write-data stage.
        self.moves.next = (self.exec.done.val() & self.x_hold.q.val()) | self.exec.pass.val();
        self.clear.next = 0.into();
        if self.exec.done.val() & self.x_hold.q.val() {
            self.clear.next = bit_cast::<4, 1>(1.into()) << self.x_slot.q.val();
        }
        self.view.next_slot.next = self.x_slot.q.val();
        if self.moves.val() {
            self.x_hold.d.next = false;
            self.x_slot.d.next = self.x_slot.q.val() + 1;
            self.view.next_slot.next = self.x_slot.q.val() + 1;
        }
        if self.exec.take.val() {
            self.x_hold.d.next = true;
        }
        // The slot a take reads, the oldest not taken: from the registers alone, not through
        // `moves` (the executor's state), so the frames' LUT RAM read and what the take loads
        // from it are not behind the executor's decisions. It is `next_slot` in every cycle
        // the executor can take: idle and holding nothing (`x_slot`), or finishing the slot it
        // holds (done or passed on: the one after); while it works on its slot it takes nothing.
        self.take_slot.next = self.x_slot.q.val();
        if self.x_hold.q.val() {
            self.take_slot.next = self.x_slot.q.val() + 1;
        }
        // Full, and not the slot the write-data stage is still streaming.
        self.out.full.next =
            (self.full.val() & (bit_cast::<4, 1>(1.into()) << self.take_slot.val())).any()
                & !(self.w_busy.val() & (self.w_slot.val() == self.take_slot.val()));
        self.frames.slot.next = self.take_slot.val();
        self.out.verdict.next = self.frames.verdict.val();
        self.out.hdr.next = self.frames.hdr.val();
        self.out.client.next = self.frames.client.val();
        self.out.route.next = self.frames.route.val();
        self.out.lane.next = self.frames.lane.val();
        self.pid_swap.x.next = self.out.hdr.val().get_bits::<16>(32);
        self.req_swap.x.next = self.out.hdr.val().get_bits::<32>(96);
        self.ack_swap.x.next = self.out.hdr.val().get_bits::<32>(288);
        self.ring_req.next = self.req_swap.y.val();
        if self.out.hdr.val().get_bits::<8>(8) == self.op_cn_ack.val() {
            self.ring_req.next = self.ack_swap.y.val();
        }
        self.out.ring_key.next = (bit_cast::<64, 16>(self.pid_swap.y.val()) << 48)
            | (bit_cast::<64, 16>(self.out.client.val()) << 32)
            | bit_cast::<64, 32>(self.ring_req.val());
        // For the look-ahead.
        self.view.taken.next = 0.into();
        self.view.head.next = self.take_slot.val();
        if self.x_hold.q.val() {
            self.view.taken.next = bit_cast::<4, 1>(1.into()) << self.x_slot.q.val();
        }
        if self.w_busy.val() {
            self.view.taken.next =
                self.view.taken.val() | (bit_cast::<4, 1>(1.into()) << self.w_slot.val());
        }
        if self.reset.val() {
            self.x_slot.d.next = 0.into();
            self.x_hold.d.next = false;
        }
    }
}

crate::impl_clocked!(SlotQueue);

#[cfg(test)]
mod tests;
