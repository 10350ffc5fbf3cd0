//! The read-data stage: builds every response, in request order, and hands it to the transmit
//! stage.
//!
//! The executor hands over a *job* per response (`job_valid` / `job_ready`): the response
//! header (bytes 0..48, status and lengths filled in), its route, its length, and for a read
//! the lane offset of its first byte and the response beats its DRAM blocks fill. A read's
//! address is already out on AR when its job arrives; its R beats come in order. A payload-less
//! job (`job_only`: an error, a write's or an atomic's answer) is the header beat alone.
//!
//! Per job the stage
//! * writes response beat 0 (the header) and beats 1.. (DRAM block `t - 1` and `t` realigned
//!   from DRAM lanes to packet lanes, [`Realign`]) into a `txbuf` slot (the buffer lives in the
//!   top: the transmit stage reads the other slot), one beat per cycle as the R beats arrive,
//!   and a flush cycle for the last one;
//! * computes the response's CRC-32C over the beats as they are written ([`Crc32cRegistered`]:
//!   the beat goes into the engine's register, so the R data's path through the realignment
//!   ends at a flip-flop);
//! * hands the response (length, route, beat 0 with the CRC, slot) to the transmit stage
//!   (`load`) when it is free, and alternates slots.
//!
//! Jobs that arrive while the stage works wait in a queue of 16 (their R beats wait in DRAM),
//! so back-to-back reads keep their addresses going out across the DRAM latency. A job is
//! taken straight into the stage when nothing is queued and the stage can start one (idle, or
//! in the flush cycle of its job), else queued; `job_ready` is low only when the queue is full.
//! The stage starts its next job in the flush cycle of the previous one; a finished response
//! waits in the stage (`sending`) until the transmit stage takes it, and the next job's beats
//! wait meanwhile (they would overwrite its slot's header register and CRC).
//!
//! `r.idle` tells the top that no read has R beats still to come (none queued, none being
//! received): the R channel is then free for a page-table walk or an atomic, and a write may go
//! out (write-after-read).
//!
//! Timing (unchanged from when this logic sat inside `fastpath_top`): a one-beat read's job
//! taken in cycle c with its R beat there writes beat 0 in c + 1, beat 1 in its flush cycle
//! c + 2, and is loaded into the transmit stage in c + 3 if it is free.

use crate::crc32c::Crc32cRegistered;
use crate::fastpath::links::{ReadBeatsIn, ReadJobIn, TxLoad};
use crate::mem_access::Realign;
use clio_proto::consts::{BEAT_BYTES, MAX_PAYLOAD};
use clio_proto::header::{field, HEADER_LEN};
use rust_hdl::prelude::*;

/// The job queue: 16 entries, enough for one-beat reads arriving every two cycles to keep
/// their addresses going out across a DRAM read latency of 20 cycles and more (8 held them to
/// 2.5 cycles per read at 20).
type JobFifo = SynchronousFIFO<Bits<JOB_BITS>, QUEUE_ADDR_BITS, QUEUE_PTR_BITS, 1>;
/// The job queue's address bits, and its pointers' (one more: full and empty apart).
const QUEUE_ADDR_BITS: usize = 4;
const QUEUE_PTR_BITS: usize = 5;
const _: () = assert!(QUEUE_PTR_BITS == QUEUE_ADDR_BITS + 1);
// `queued` counts 0..=16 in 5 bits, and is 16 (full) exactly when its bit 4 is set (`room`).
const _: () = assert!(
    QUEUE_ADDR_BITS == 4,
    "queued is 5 bits; room reads its bit 4"
);
/// A queued job: payload-less (1 bit) @670, lane offset (6 bits) @664, response beats (12)
/// @652, response length (12) @640, response header (384) @256, route (256) @0.
const JOB_HDR: usize = 256;
const JOB_LEN: usize = JOB_HDR + 384;
const JOB_KT: usize = JOB_LEN + 12;
const JOB_O: usize = JOB_KT + 12;
const JOB_ONLY: usize = JOB_O + 6;
const JOB_BITS: usize = JOB_ONLY + 1;
// The kernel's literals (`<< 664`, `get_bits::<6>(664)`, ...) are these positions.
const _: () =
    assert!(JOB_HDR == 256 && JOB_LEN == 640 && JOB_KT == 652 && JOB_O == 664 && JOB_ONLY == 670);
// A response is at most a header beat and a MAX_PAYLOAD payload: 17 beats of a 32-beat txbuf
// slot (`slot << 5 | beat`); beat 0 is the header (HEADER_LEN bytes, whose last 16 are the
// zeros after the 48 the job carries), its CRC at bytes 28..32 (bits 224..256), high byte
// first.
const _: () = assert!(BEAT_BYTES == 64 && HEADER_LEN == 64);
const _: () = assert!((HEADER_LEN + MAX_PAYLOAD).div_ceil(BEAT_BYTES) <= 32);
const _: () = assert!(field::CHECKSUM.start == 28 && field::CHECKSUM.end == 32);

/// The read-data stage.
#[derive(LogicBlock, Default)]
pub struct ReadData {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: idle, the queue emptied (one entry a cycle while held), slot 0 next.
    pub reset: Signal<In, Bit>,
    /// The executor's response jobs (`Executor::job`, joined in the top).
    pub job: ReadJobIn,
    /// The R beats of its reads (`DramPort::reads_r`): taken while receiving (`r.ready`); `r.idle`
    /// says no read has R beats still to come (none queued, none being received).
    pub r: ReadBeatsIn,
    /// txbuf write port (`slot << 5 | beat`; beat 0 is kept in a register, never written).
    pub buf_write_enable: Signal<Out, Bit>,
    /// txbuf write address, `slot << 5 | beat`.
    pub buf_write_address: Signal<Out, Bits<6>>,
    /// txbuf write data: the response beat, in packet lanes.
    pub buf_write_data: Signal<Out, Bits<512>>,
    /// The transmit stage can take a response this cycle.
    pub xmit_free: Signal<In, Bit>,
    /// The response handed to the transmit stage (`Transmit::job`, joined in the top).
    pub tx: TxLoad,
    /// The job is receiving its R beats.
    receiving: DFF<Bit>,
    /// The job's flush cycle is next: its last beat (or a payload-less job's header) is
    /// written, and the finished response moves to `sending`.
    flushing: DFF<Bit>,
    /// A finished response waits for the transmit stage, with its length and route (the stage
    /// may already work on the next job).
    sending: DFF<Bit>,
    send_len: DFF<Bits<12>>,
    send_route: DFF<Bits<256>>,
    /// The job's R beats received so far.
    idx: DFF<Bits<6>>,
    /// The previous R beat (the realign's earlier half).
    prev: DFF<Bits<512>>,
    /// The job's lane offset, R beats, response length, header and route.
    j_o: DFF<Bits<6>>,
    j_kt: DFF<Bits<12>>,
    j_len: DFF<Bits<12>>,
    j_hdr: DFF<Bits<384>>,
    j_route: DFF<Bits<256>>,
    /// Beat 0 of the response being built (the header; the CRC goes in as it leaves).
    beat0: DFF<Bits<512>>,
    /// The txbuf slot the stage fills next.
    slot: DFF<Bit>,
    /// Jobs waiting, in order.
    queue: JobFifo,
    /// Entries in `queue`, counted here: the FIFO's own `empty` flag clears a cycle after a
    /// write (its read side sees the write pointer late), and a job taken straight in during
    /// that cycle would overtake the queued one.
    queued: DFF<Bits<5>>,
    /// Reads among the queued jobs (payload-less ones excluded): their R beats are to come.
    queued_reads: DFF<Bits<5>>,
    /// Both counts one up and one down, from their registers alone (the queue's push and pop
    /// decisions only select among them: no adder behind the decisions).
    queued_inc: Signal<Local, Bits<5>>,
    queued_dec: Signal<Local, Bits<5>>,
    reads_inc: Signal<Local, Bits<5>>,
    reads_dec: Signal<Local, Bits<5>>,
    /// Nothing is queued (by the count).
    none_queued: Signal<Local, Bit>,
    /// The queue has room (by the count: the FIFO's own `full` compares its pointers, two
    /// levels of logic in front of `job_ready` and the executor's take). The count equals
    /// the FIFO's occupancy as its write side sees it: a write counts when it is made (never
    /// while full) and a read likewise.
    room: Signal<Local, Bit>,
    /// A read enters / leaves the queue this cycle.
    in_read: Signal<Local, Bit>,
    out_read: Signal<Local, Bit>,
    /// The offered job, packed as a queue entry.
    entry: Signal<Local, Bits<JOB_BITS>>,
    /// The job the stage takes next: the oldest queued one, else the offered one.
    next_only: Signal<Local, Bit>,
    next_o: Signal<Local, Bits<6>>,
    next_kt: Signal<Local, Bits<12>>,
    next_len: Signal<Local, Bits<12>>,
    next_hdr: Signal<Local, Bits<384>>,
    next_route: Signal<Local, Bits<256>>,
    /// The stage starts the job `next_*` this cycle.
    take: Signal<Local, Bit>,
    /// The finished response in `sending` still waits, so this job's beats and flush wait.
    hold: Signal<Local, Bit>,
    /// The stage can start a job this cycle: idle, or in the flush cycle of its job.
    can_take: Signal<Local, Bit>,
    /// The job is in its data or flush phase (its beats are written).
    active: Signal<Local, Bit>,
    /// The beat this cycle completes.
    beat: Signal<Local, Bits<12>>,
    /// The beat after it: its first byte, and the response's bytes from there on.
    adv_pos: Signal<Local, Bits<12>>,
    adv_rest: Signal<Local, Bits<12>>,
    /// The beat `idx` completes is past the header (`idx != 0`).
    past_header: DFF<Bit>,
    /// The beat `idx` completes is part of the response (`idx < ceil(len / 64)`), and how
    /// many of its bytes the CRC sums (`min(64, len - 64 * idx)`). Registered as `idx`
    /// moves, so the CRC engine's enable and byte mask come from flip-flops rather than from
    /// a subtract and compares on `idx` in the beat's cycle.
    sum_more: DFF<Bit>,
    sum_bytes: DFF<Bits<7>>,
    /// The header as beat 0 (bytes 48..64 zero).
    hdr_beat: Signal<Local, Bits<512>>,
    realign: Realign,
    checksum: Crc32cRegistered,
}

impl Logic for ReadData {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            receiving,
            flushing,
            sending,
            send_len,
            send_route,
            idx,
            prev,
            j_o,
            j_kt,
            j_len,
            j_hdr,
            j_route,
            beat0,
            slot,
            queued,
            queued_reads,
            past_header,
            sum_more,
            sum_bytes
        );
        clock!(self, clock, queue, checksum);
        self.active.next = self.receiving.q.val() | self.flushing.q.val();
        self.none_queued.next = self.queued.q.val() == 0;
        self.r.idle.next = !self.receiving.q.val() & (self.queued_reads.q.val() == 0);
        self.hold.next = self.sending.q.val() & !self.xmit_free.val();
        self.can_take.next = !self.active.val() | (self.flushing.q.val() & !self.hold.val());
        self.r.ready.next = self.receiving.q.val() & !self.hold.val();
        self.take.next = false;
        self.tx.valid.next = false;

        // ---- The offered job, and the one the stage takes next.
        self.entry.next = (bit_cast::<JOB_BITS, 1>(self.job.only.val().into()) << 670)
            | (bit_cast::<JOB_BITS, 6>(self.job.o.val()) << 664)
            | (bit_cast::<JOB_BITS, 12>(self.job.kt.val()) << 652)
            | (bit_cast::<JOB_BITS, 12>(self.job.len.val()) << 640)
            | (bit_cast::<JOB_BITS, 384>(self.job.hdr.val()) << 256)
            | bit_cast::<JOB_BITS, 256>(self.job.route.val());
        self.queue.data_in.next = self.entry.val();
        self.queue.write.next = false;
        self.queue.read.next = false;
        if !self.queue.empty.val() {
            self.next_only.next = self.queue.data_out.val().get_bit(670);
            self.next_o.next = self.queue.data_out.val().get_bits::<6>(664);
            self.next_kt.next = self.queue.data_out.val().get_bits::<12>(652);
            self.next_len.next = self.queue.data_out.val().get_bits::<12>(640);
            self.next_hdr.next = self.queue.data_out.val().get_bits::<384>(256);
            self.next_route.next = self.queue.data_out.val().get_bits::<256>(0);
        } else {
            self.next_only.next = self.job.only.val();
            self.next_o.next = self.job.o.val();
            self.next_kt.next = self.job.kt.val();
            self.next_len.next = self.job.len.val();
            self.next_hdr.next = self.job.hdr.val();
            self.next_route.next = self.job.route.val();
        }
        // Straight in when the stage can take it and nothing is queued, else behind the queued
        // jobs: responses leave in request order.
        self.room.next = !self.queued.q.val().get_bit(4);
        self.job.ready.next = (self.can_take.val() & self.none_queued.val()) | self.room.val();
        if self.job.valid.val() {
            if self.can_take.val() & self.none_queued.val() {
                self.take.next = true;
            } else if self.room.val() {
                self.queue.write.next = true;
            }
        }

        // ---- Beats: DRAM block `idx` arrives and completes response beat `beat` = idx (the
        // header beat with the first block, then beat t with blocks t-1 and t, the last one in
        // the flush cycle).
        self.realign.lo.next = self.prev.q.val();
        // Outside a read's R beats `hi` is whatever the channel shows: in the flush cycle it
        // fills only the lanes past the response's end, which the CRC's byte mask
        // (`sum_bytes`) and the transmit stage's keep leave out, so it needs no zeroing.
        self.realign.hi.next = self.r.data.val();
        self.realign.sh.next = self.j_o.q.val();
        self.hdr_beat.next = bit_cast::<512, 384>(self.j_hdr.q.val());
        self.beat.next = bit_cast::<12, 6>(self.idx.q.val());
        self.adv_pos.next = (self.beat.val() + 1) << 6;
        self.adv_rest.next = self.j_len.q.val() - self.adv_pos.val();
        self.checksum.port.in_valid.next = false;
        self.checksum.port.in_first.next = false;
        self.checksum.port.in_data.next = self.hdr_beat.val();
        self.checksum.port.in_bytes.next = self.sum_bytes.q.val();
        if self.receiving.q.val() & self.r.valid.val() & !self.hold.val() {
            self.prev.d.next = self.r.data.val();
            self.idx.d.next = self.idx.q.val() + 1;
            self.past_header.d.next = true;
            self.sum_more.d.next = self.adv_pos.val() < self.j_len.q.val();
            if self.adv_rest.val() >= 64 {
                self.sum_bytes.d.next = 64.into();
            } else {
                self.sum_bytes.d.next = bit_cast::<7, 12>(self.adv_rest.val());
            }
            self.checksum.port.in_valid.next = self.sum_more.q.val();
            if bit_cast::<12, 6>(self.idx.q.val()) + 1 == self.j_kt.q.val() {
                self.receiving.d.next = false;
                self.flushing.d.next = true;
            }
        }
        // The waiting response goes to the transmit stage when it can take one...
        if self.sending.q.val() & self.xmit_free.val() {
            self.tx.valid.next = true;
            self.sending.d.next = false;
        }
        // ...and the job in its flush cycle takes its place (the stage may start the next job
        // in this same cycle: `can_take`).
        if self.flushing.q.val() & !self.hold.val() {
            self.checksum.port.in_valid.next = self.sum_more.q.val();
            self.flushing.d.next = false;
            self.sending.d.next = true;
            self.send_len.d.next = self.j_len.q.val();
            self.send_route.d.next = self.j_route.q.val();
        }
        self.tx.slot.next = self.slot.q.val();
        self.tx.len.next = self.send_len.q.val();
        self.tx.route.next = self.send_route.q.val();
        self.tx.beat0.next = self.beat0.q.val()
            | (bit_cast::<512, 8>(self.checksum.port.crc.val().get_bits::<8>(24)) << 224)
            | (bit_cast::<512, 8>(self.checksum.port.crc.val().get_bits::<8>(16)) << 232)
            | (bit_cast::<512, 8>(self.checksum.port.crc.val().get_bits::<8>(8)) << 240)
            | (bit_cast::<512, 8>(self.checksum.port.crc.val().get_bits::<8>(0)) << 248);
        if self.tx.valid.val() {
            self.slot.d.next = !self.slot.q.val();
        }
        // The stage can start a job and one waits in the queue (it may have been queued in the
        // very cycle the stage finished): it is next.
        if !self.queue.empty.val() & self.can_take.val() {
            self.queue.read.next = true;
            self.take.next = true;
        }
        if self.take.val() {
            // A payload-less job: its header beat in the flush cycle, no R beats.
            self.receiving.d.next = !self.next_only.val();
            self.flushing.d.next = self.next_only.val();
            self.idx.d.next = 0.into();
            self.past_header.d.next = false;
            self.sum_more.d.next = true;
            self.sum_bytes.d.next = 64.into();
            self.prev.d.next = 0.into();
            self.j_o.d.next = self.next_o.val();
            self.j_kt.d.next = self.next_kt.val();
            self.j_len.d.next = self.next_len.val();
            self.j_hdr.d.next = self.next_hdr.val();
            self.j_route.d.next = self.next_route.val();
        }
        // Beat 0 (the header) is kept for the load; beats 1.. go to the txbuf slot.
        self.buf_write_enable.next = false;
        self.buf_write_data.next = self.realign.out.val();
        self.buf_write_address.next = (bit_cast::<6, 1>(self.slot.q.val().into()) << 5)
            | bit_cast::<6, 5>(bit_cast::<5, 12>(self.beat.val()));
        if !self.past_header.q.val() {
            if self.active.val() {
                self.checksum.port.in_first.next = true;
                if self.checksum.port.in_valid.val() {
                    self.beat0.d.next = self.hdr_beat.val();
                }
            }
        } else {
            self.checksum.port.in_data.next = self.realign.out.val();
            self.buf_write_enable.next = self.checksum.port.in_valid.val() & self.active.val();
        }

        // ---- The queue's counts: entries, and reads among them.
        self.queued_inc.next = self.queued.q.val() + 1;
        self.queued_dec.next = self.queued.q.val() - 1;
        self.reads_inc.next = self.queued_reads.q.val() + 1;
        self.reads_dec.next = self.queued_reads.q.val() - 1;
        if self.queue.write.val() & !self.queue.read.val() {
            self.queued.d.next = self.queued_inc.val();
        } else if !self.queue.write.val() & self.queue.read.val() {
            self.queued.d.next = self.queued_dec.val();
        }
        self.in_read.next = self.queue.write.val() & !self.job.only.val();
        self.out_read.next = self.queue.read.val() & !self.next_only.val();
        if self.in_read.val() & !self.out_read.val() {
            self.queued_reads.d.next = self.reads_inc.val();
        } else if !self.in_read.val() & self.out_read.val() {
            self.queued_reads.d.next = self.reads_dec.val();
        }
        if self.reset.val() {
            self.receiving.d.next = false;
            self.flushing.d.next = false;
            self.sending.d.next = false;
            self.queued.d.next = 0.into();
            self.queued_reads.d.next = 0.into();
            // Empty the queue (one entry a cycle while reset is held).
            self.queue.write.next = false;
            self.queue.read.next = !self.queue.empty.val();
            self.slot.d.next = false;
        }
    }
}

crate::impl_clocked!(ReadData);

impl ReadData {
    /// For testbenches: no job in the stage, none queued, no response waiting (read from the
    /// registers).
    #[cfg(test)]
    pub(crate) fn is_idle(&self) -> bool {
        !self.receiving.q.val()
            && !self.flushing.q.val()
            && !self.sending.q.val()
            && self.queued.q.val() == 0
    }
}

#[cfg(test)]
mod tests;
