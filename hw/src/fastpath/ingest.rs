//! The ingest stage: receives frames, one 512-bit beat per cycle, into four slots while the
//! executor works on earlier ones.
//!
//! For each frame it
//! * checks the CRC-32C and the framing as the beats stream ([`AckLayer`]) and keeps the
//!   verdict (drop, NACK) per slot;
//! * keeps the header bytes 0..48 and the client (56..58) as a number, the
//!   route (the frame's side band) and the VA's lane offset per slot;
//! * writes the payload, realigned from frame lanes to DRAM lanes (byte `va % 64` of a block
//!   is the payload's first), into the slot's 32 blocks of the payload buffer (`wbuf`, which
//!   lives in the top: the write-data stage and the executor read it).
//!
//! Slots are filled in order 0, 1, 2, 3, 0, ...; a slot is taken only when it is free (`full`
//! clear), and stays full until `freed` names it (the executor, or the write-data stage that
//! streams a write's data from it, is done with it). The next frame's first beat is taken in
//! the previous one's flush cycle when its slot is free (the header beat writes no payload
//! block, so the buffer's write port is the flush's): back to back, a frame of n beats takes n
//! cycles (a read request one, a write of up to 64 bytes two).
//!
//! Timing: a frame's slot is full, with its header, verdict and every payload block written,
//! in the cycle after its flush cycle, which is the cycle after its last beat.

use crate::ack_layer::AckLayer;
use crate::async_ram::AsyncRam;
use crate::fastpath::links::{HeaderBeat, SlotFramesPort};
use crate::mem_access::Realign;
use crate::spec::Spec;
use clio_proto::consts::{BEAT_BYTES, MAX_PAYLOAD};
use clio_proto::header::field;
use rust_hdl::prelude::*;

/// Largest frame payload in 64-byte blocks: a `MAX_PAYLOAD` payload at a lane offset spans
/// `MAX_PAYLOAD / 64 + 1` blocks of a slot; block indices from there on (and the header
/// beat's, which wraps below zero) are not written.
pub const RX_BLOCK_LIMIT: u64 = (MAX_PAYLOAD / BEAT_BYTES) as u64 + 2;

/// Slots, and payload blocks per slot (the buffer address is `slot << 5 | block`).
pub const SLOTS: usize = 4;
const _: () = assert!(MAX_PAYLOAD / BEAT_BYTES < 32 && BEAT_BYTES == 64);

// Raw header positions (bit 8k = byte k of the first beat): the VA's last byte 23 (bits
// 184..190 hold its lane offset), client 56..58 (bits 448..464).
const _: () = assert!(field::VA.end == 24 && field::CLIENT.start == 56);

/// The ingest stage.
#[derive(LogicBlock)]
pub struct Ingest {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every slot free, the next frame goes to slot 0.
    pub reset: Signal<In, Bit>,
    /// Frame stream (AXI-Stream like): a beat is taken when `rx_valid` and `rx_ready`.
    pub rx_valid: Signal<In, Bit>,
    /// Ready for a beat: a frame is being received into a free slot.
    pub rx_ready: Signal<Out, Bit>,
    /// The beat (byte k at bits 8k..8k+8; the Clio header is the first beat).
    pub rx_data: Signal<In, Bits<512>>,
    /// Byte enables (contiguous from byte 0).
    pub rx_keep: Signal<In, Bits<64>>,
    /// Last beat of the frame.
    pub rx_last: Signal<In, Bit>,
    /// The frame's route (side band, valid with its first beat).
    pub rx_route: Signal<In, Bits<256>>,
    /// Payload buffer write port: write `buf_data` at `buf_address` (slot << 5 | block).
    pub buf_write: Signal<Out, Bit>,
    /// Payload buffer address.
    pub buf_address: Signal<Out, Bits<7>>,
    /// Payload block, in DRAM lanes.
    pub buf_data: Signal<Out, Bits<512>>,
    /// A frame's last beat is taken this cycle (the received-frames counter).
    pub frame_in: Signal<Out, Bit>,
    /// Slots freed this cycle (bit k = slot k).
    pub freed: Signal<In, Bits<4>>,
    /// Slots holding a received frame not released yet.
    pub full: Signal<Out, Bits<4>>,
    /// Slots holding a frame's header (from the cycle after its first beat; the frame may
    /// still be coming in): every full slot, and the one being received.
    pub headed: Signal<Out, Bits<4>>,
    /// The header beat of a frame as it is taken (to the key check, the route check and the TLB look-ahead).
    pub header: HeaderBeat,
    /// A slot's frame, read the same cycle (`SlotQueue::frames`): its header bytes 0..48,
    /// client, route, payload lane and the ack layer's verdict.
    pub frames: SlotFramesPort,
    /// The CRC and framing check.
    ack: AckLayer,
    /// Frame lanes to DRAM lanes.
    realign: Realign,
    block_limit: Spec<12, RX_BLOCK_LIMIT>,
    /// Receiving a frame (its slot was free when it started).
    receiving: DFF<Bit>,
    /// The cycle after a frame's last beat: the last realigned block is written, the verdict
    /// is out.
    flush: DFF<Bit>,
    /// The slot the frame goes to.
    slot: DFF<Bits<2>>,
    /// The previous beat (the realigner's earlier half).
    prev: DFF<Bits<512>>,
    /// Beats of this frame taken so far.
    beat: DFF<Bits<11>>,
    /// This frame's lane offset (from its first beat).
    lane_q: DFF<Bits<6>>,
    /// The realigner's shift for the frame, `(64 - lane_q) % 64`, registered with it: a first
    /// beat's realigned block is never written (its block number is negative), so the shift
    /// never needs the beat's own lane in its cycle.
    sh_q: DFF<Bits<6>>,
    /// The payload block this beat completes.
    block: Signal<Local, Bits<12>>,
    /// The slot after `slot`.
    next_slot: Signal<Local, Bits<2>>,
    /// The slot after `slot` is free.
    next_free: Signal<Local, Bit>,
    /// The slot `slot` is free.
    slot_free: Signal<Local, Bit>,
    /// A beat can be taken this cycle: a frame is being received, or this is a frame's flush
    /// cycle and the next slot is free (the next frame's first beat comes in with the flush),
    /// or the stage waits for its slot and it is free now.
    accept: Signal<Local, Bit>,
    /// A beat is taken this cycle.
    take: Signal<Local, Bit>,
    /// The beat taken is a frame's first (its header).
    first: Signal<Local, Bit>,
    /// The slot the beat taken belongs to (the next one in a flush cycle).
    hslot: Signal<Local, Bits<2>>,
    full_q: DFF<Bits<4>>,
    /// Slots whose header is in (`headed`).
    headed_q: DFF<Bits<4>>,
    /// The slot whose header comes in this cycle.
    hset: Signal<Local, Bits<4>>,
    /// The slot becoming full this cycle.
    set: Signal<Local, Bits<4>>,
    /// Per slot, written with the header beat: header bytes 0..48, client, route, lane
    /// (`hdr | client << 384 | route << 400 | lane << 656`), in LUT RAM: the slot queue reads
    /// one slot a cycle, so four copies in flip-flops behind a 662-bit mux are not needed.
    s_fields: AsyncRam<Bits<662>, 2>,
    /// Per slot: the ack layer's verdict, written at the frame's end.
    s_verdict: [DFF<Bits<2>>; SLOTS],
}

impl Default for Ingest {
    fn default() -> Self {
        Ingest {
            clock: Default::default(),
            reset: Default::default(),
            rx_valid: Default::default(),
            rx_ready: Default::default(),
            rx_data: Default::default(),
            rx_keep: Default::default(),
            rx_last: Default::default(),
            rx_route: Default::default(),
            buf_write: Default::default(),
            buf_address: Default::default(),
            buf_data: Default::default(),
            frame_in: Default::default(),
            freed: Default::default(),
            full: Default::default(),
            headed: Default::default(),
            header: Default::default(),
            frames: Default::default(),
            ack: Default::default(),
            realign: Default::default(),
            block_limit: Default::default(),
            receiving: Default::default(),
            flush: Default::default(),
            slot: Default::default(),
            prev: Default::default(),
            beat: Default::default(),
            lane_q: Default::default(),
            sh_q: Default::default(),
            block: Default::default(),
            next_slot: Default::default(),
            next_free: Default::default(),
            slot_free: Default::default(),
            accept: Default::default(),
            take: Default::default(),
            first: Default::default(),
            hslot: Default::default(),
            full_q: Default::default(),
            headed_q: Default::default(),
            hset: Default::default(),
            set: Default::default(),
            s_fields: Default::default(),
            s_verdict: core::array::from_fn(|_| Default::default()),
        }
    }
}

impl Logic for Ingest {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, receiving, flush, slot, prev, beat, lane_q, sh_q, full_q, headed_q);
        clock!(self, clock, ack);
        self.ack.reset.next = self.reset.val();
        // The slots' frames: the fields written with the header beat (below) in the LUT RAM,
        // `hdr | client << 384 | route << 400 | lane << 656`, read at `frames.slot`; the
        // verdicts, written at the frame's end, in flip-flops.
        self.s_fields.clock.next = self.clock.val();
        self.s_fields.read_address.next = self.frames.slot.val();
        self.s_fields.write_enable.next = false;
        self.s_fields.write_data.next =
            bit_cast::<662, 384>(bit_cast::<384, 512>(self.rx_data.val()))
                | (bit_cast::<662, 8>(self.rx_data.val().get_bits::<8>(448)) << 392)
                | (bit_cast::<662, 8>(self.rx_data.val().get_bits::<8>(456)) << 384)
                | (bit_cast::<662, 256>(self.rx_route.val()) << 400)
                | (bit_cast::<662, 6>(self.rx_data.val().get_bits::<6>(184)) << 656);
        self.frames.hdr.next = self.s_fields.read_data.val().get_bits::<384>(0);
        self.frames.client.next = self.s_fields.read_data.val().get_bits::<16>(384);
        self.frames.route.next = self.s_fields.read_data.val().get_bits::<256>(400);
        self.frames.lane.next = self.s_fields.read_data.val().get_bits::<6>(656);
        self.frames.verdict.next = 0.into();
        for k in 0..4 {
            self.s_verdict[k].clock.next = self.clock.val();
            self.s_verdict[k].d.next = self.s_verdict[k].q.val();
            if self.frames.slot.val() == k.to_bits::<2>() {
                self.frames.verdict.next = self.s_verdict[k].q.val();
            }
        }
        self.full.next = self.full_q.q.val();
        self.headed.next = self.headed_q.q.val();
        self.hset.next = 0.into();
        self.next_slot.next = self.slot.q.val() + 1;
        self.next_free.next =
            !(self.full_q.q.val() & (bit_cast::<4, 1>(1.into()) << self.next_slot.val())).any();
        self.slot_free.next =
            !(self.full_q.q.val() & (bit_cast::<4, 1>(1.into()) << self.slot.q.val())).any();
        self.accept.next = self.receiving.q.val()
            | (self.flush.q.val() & self.next_free.val())
            | (!self.receiving.q.val() & !self.flush.q.val() & self.slot_free.val());
        self.rx_ready.next = self.accept.val();
        self.take.next = self.accept.val() & self.rx_valid.val();
        // In a flush cycle the beat taken is the next frame's first, for the next slot.
        self.first.next = self.flush.q.val() | (self.beat.q.val() == 0);
        if self.flush.q.val() {
            self.hslot.next = self.next_slot.val();
        } else {
            self.hslot.next = self.slot.q.val();
        }
        // A first beat's fields go to the slot it heads (below).
        self.s_fields.write_address.next = self.hslot.val();
        self.ack.in_valid.next = self.take.val();
        self.header.valid.next = self.take.val() & self.first.val();
        self.header.slot.next = self.hslot.val();
        self.header.data.next = self.rx_data.val();
        self.header.route.next = self.rx_route.val();
        self.ack.in_data.next = self.rx_data.val();
        self.ack.in_keep.next = self.rx_keep.val();
        self.ack.in_last.next = self.rx_last.val();
        self.realign.lo.next = self.prev.q.val();
        self.realign.hi.next = self.rx_data.val();
        if self.flush.q.val() {
            self.realign.hi.next = 0.into();
        }
        // The payload starts at beat 1: DRAM block k = frame beats k and k+1 shifted by
        // 64 - o (written as beat k+1 arrives), or beat k+1 itself when o = 0 (written, as
        // `lo`, when beat k+2 arrives or in the flush cycle).
        // (In a first beat's cycle `lane_q` and `sh_q` are still the last frame's: that beat's
        // block is -1 or -2, not written.)
        self.realign.sh.next = self.sh_q.q.val();
        if self.lane_q.q.val() == 0 {
            self.block.next = bit_cast::<12, 11>(self.beat.q.val()) - 2;
        } else {
            self.block.next = bit_cast::<12, 11>(self.beat.q.val()) - 1;
        }
        self.buf_address.next = (bit_cast::<7, 2>(self.slot.q.val()) << 5)
            | bit_cast::<7, 5>(bit_cast::<5, 12>(self.block.val()));
        self.buf_data.next = self.realign.out.val();
        self.buf_write.next =
            (self.take.val() | self.flush.q.val()) & (self.block.val() < self.block_limit.val());
        self.set.next = 0.into();
        self.frame_in.next = false;
        if self.flush.q.val() {
            // Last realigned block written above; the verdict is out this cycle.
            self.flush.d.next = false;
            self.beat.d.next = 0.into();
            self.prev.d.next = 0.into();
            self.slot.d.next = self.slot.q.val() + 1;
            self.set.next = bit_cast::<4, 1>(1.into()) << self.slot.q.val();
            // Straight on to the next frame if its slot is free (no idle cycle between; its
            // first beat may come in this very cycle, below).
            self.receiving.d.next = self.next_free.val();
            for k in 0..4 {
                if self.slot.q.val() == k.to_bits::<2>() {
                    self.s_verdict[k].d.next = bit_cast::<2, 1>(self.ack.drop.val().into())
                        | (bit_cast::<2, 1>(self.ack.nack.val().into()) << 1);
                }
            }
        }
        if !self.receiving.q.val() & !self.flush.q.val() {
            // Receive when the slot is free (its first beat may come in this very cycle).
            self.receiving.d.next = self.slot_free.val();
        }
        // A beat taken: the previous beat is kept for the realigner; a first beat's header,
        // client, route and lane go to its slot. Taken in a flush cycle, it starts the
        // next frame (after the flush above).
        if self.take.val() {
            self.prev.d.next = self.rx_data.val();
            self.beat.d.next = self.beat.q.val() + 1;
            if self.first.val() {
                self.hset.next = bit_cast::<4, 1>(1.into()) << self.hslot.val();
                self.beat.d.next = 1.into();
                self.lane_q.d.next = self.rx_data.val().get_bits::<6>(184);
                self.sh_q.d.next = (!self.rx_data.val().get_bits::<6>(184)) + 1;
                self.s_fields.write_enable.next = true;
            }
            if self.rx_last.val() {
                self.frame_in.next = true;
                self.receiving.d.next = false;
                self.flush.d.next = true;
            }
        }
        self.full_q.d.next = (self.full_q.q.val() | self.set.val()) & !self.freed.val();
        self.headed_q.d.next = (self.headed_q.q.val() | self.hset.val()) & !self.freed.val();
        if self.reset.val() {
            self.receiving.d.next = false;
            self.flush.d.next = false;
            self.slot.d.next = 0.into();
            self.beat.d.next = 0.into();
            self.prev.d.next = 0.into();
            self.full_q.d.next = 0.into();
            self.headed_q.d.next = 0.into();
        }
    }
}

crate::impl_clocked!(Ingest);

impl Ingest {
    /// For testbenches: no slot full, no frame part-way in (read from the registers).
    #[cfg(test)]
    pub(crate) fn is_idle(&self) -> bool {
        self.full_q.q.val() == 0 && self.beat.q.val() == 0 && !self.flush.q.val()
    }
}

#[cfg(test)]
mod tests;
