//! The ordering rules between the fast path's DRAM accesses, in one place.
//!
//! AXI4 orders nothing between the read and write channels, and the fast path keeps several
//! accesses in flight (writes do not wait for their B responses, reads are addressed while
//! earlier reads' data is still to come). What a request may do, and when:
//!
//! * **read-after-write** (`read_clear`): a data read (a READ's burst) goes out only when every
//!   data write before it has its B response (the DRAM has it) and no write's data is still
//!   streaming. B responses come back in order, so this is a count: the sequence number of the
//!   last data write (`data_mark`) against the B responses received (`b_seq`).
//! * **walk-after-PTE-write** (`walk_clear`): a page-table walk reads the buckets only when
//!   every page-table write (a fault's PTE write-back, a slow-path PTE_WRITE) has its B, and no
//!   read has R beats still to come (the walk shares the R channel). Data writes do not hold a
//!   walk back: they never touch the page table.
//! * **atomic** (`atomic_clear`): an atomic's (or Append tail's, or an offload's) one-beat read
//!   waits like a data read, and for the R channel like a walk.
//! * **write-after-read** (`write_clear`): a write's addresses go out only when no read has R
//!   beats still to come (a later write must not change what an earlier read returns).
//! * **fence** (`fence_clear`): FENCE is answered, and a durable write's persist handshake
//!   starts, only when every write has its B and none is streaming.
//!
//! **Per address** (`read_near`, `write_near`): a data read that overlaps no write in flight
//! may go out though `read_clear` does not hold, and a write's addresses that overlap no read in
//! flight though `write_clear` does not. Two [`InFlight`] tables keep the bursts in flight each
//! way (writes from AW to B, reads from AR to the last R beat: every client's, so the walks,
//! word accesses and one-beat writes are in them too). The executor asks about one burst a
//! cycle (`clear.ask`), both tables at once: the one it holds on AR (in `RAddr`) or AW (in
//! `WAddr`), and in Dispatch the access a look-ahead hit goes on to (an upper bound of its
//! lines), so a request's first `RAddr` / `WAddr` cycle already has its answer. The verdicts are
//! registered: they answer the burst asked about in the cycle before, and hold only if no
//! burst went out either way then (the one asked about did not, and no burst was added to a
//! table unseen). A burst retired since only frees more. A read with no write in flight at
//! all goes on `read_clear` as before.
//!
//! Sequence numbers are 8 bits, compared mod 256: a mark at or behind the B count has nothing
//! to wait for, and a caught-up mark follows the count, so a mark never falls 128 behind it.
//! The fast path never has 128 writes without their B responses (its queues are far smaller).
//! Whether a rule waits is registered from the next counts and marks (exactly the rule on this
//! cycle's counts, a cycle early), so each `*_clear` output is one gate on the executor's
//! paths, not a subtraction and a compare; and the next value is a choice, by this cycle's
//! handshakes (a write's last W beat, a B response), among compares of registers, so the
//! handshakes are not in front of a subtraction either.

use crate::fastpath::in_flight::InFlight;
use crate::fastpath::links::{DramEventsIn, OrderClear};
use rust_hdl::prelude::*;

/// The ordering rules.
#[derive(LogicBlock, Default)]
pub struct Ordering {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: no write outstanding.
    pub reset: Signal<In, Bit>,
    /// The DRAM port's events (`DramPort::order`): a write burst's last W beat taken
    /// (`w_done`), a B response taken (`b_done`), no read's R beats still to come
    /// (`reads_idle`).
    pub dram: DramEventsIn,
    /// That burst is a page-table write (else a data write).
    pub w_page_table: Signal<In, Bit>,
    /// The write-data stage streams a write (its B is not even due yet).
    pub w_busy: Signal<In, Bit>,
    /// The verdicts, for the executor (`Executor::order`, joined in the top).
    pub clear: OrderClear,
    /// A page-table walk may read.
    pub walk_clear: Signal<Out, Bit>,
    /// Write bursts whose last W beat was taken, and B responses received (mod 256).
    w_seq: DFF<Bits<8>>,
    b_seq: DFF<Bits<8>>,
    /// Sequence numbers of the last page-table write and the last data write.
    pt_mark: DFF<Bits<8>>,
    data_mark: DFF<Bits<8>>,
    /// A page-table write / a data write is still without its B; a write at all (registered
    /// from the counts' next values, so each rule is one gate on its outputs' paths).
    pt_wait: DFF<Bit>,
    data_wait: DFF<Bit>,
    any_wait: DFF<Bit>,
    /// `b_seq + 1`, `w_seq + 1`; how far a new write's mark and each kept mark are ahead of
    /// the B count and of the count plus one; whether the new mark and the kept marks wait.
    b_seq_1: Signal<Local, Bits<8>>,
    w_seq_1: Signal<Local, Bits<8>>,
    new_ahead_b: Signal<Local, Bits<8>>,
    new_ahead_b1: Signal<Local, Bits<8>>,
    pt_ahead_b: Signal<Local, Bits<8>>,
    pt_ahead_b1: Signal<Local, Bits<8>>,
    data_ahead_b: Signal<Local, Bits<8>>,
    data_ahead_b1: Signal<Local, Bits<8>>,
    new_wait: Signal<Local, Bit>,
    pt_keep_wait: Signal<Local, Bit>,
    data_keep_wait: Signal<Local, Bit>,
    /// Every page-table write / every data write (none streaming) has its B.
    pt_clear: Signal<Local, Bit>,
    data_clear: Signal<Local, Bit>,
    /// The write bursts without their B response, the read bursts with R beats to come.
    writes: InFlight,
    reads: InFlight,
    /// The per-address verdicts (see the module doc).
    read_near: DFF<Bit>,
    write_near: DFF<Bit>,
}

impl Logic for Ordering {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, w_seq, b_seq, pt_mark, data_mark, pt_wait, data_wait, any_wait, read_near,
            write_near
        );
        // A write whose data is still streaming has no B yet: data reads wait for it too.
        self.pt_clear.next = !self.pt_wait.q.val();
        self.data_clear.next = !self.data_wait.q.val() & !self.w_busy.val();
        self.clear.read_clear.next = self.data_clear.val();
        self.walk_clear.next = self.pt_clear.val() & self.dram.reads_idle.val();
        self.clear.atomic_clear.next = self.data_clear.val() & self.dram.reads_idle.val();
        self.clear.write_clear.next = self.dram.reads_idle.val();
        self.clear.fence_clear.next = !self.any_wait.q.val() & !self.w_busy.val();
        // Per address: the tables, and the executor's bursts asked about.
        self.writes.clock.next = self.clock.val();
        self.writes.reset.next = self.reset.val();
        self.writes.add.next = self.dram.aw_take.val();
        self.writes.add_line.next = self.dram.aw_line.val();
        self.writes.add_len.next = self.dram.aw_len.val();
        self.writes.retire.next = self.dram.b_done.val();
        self.writes.ask_line.next = self.clear.ask_line.val();
        self.writes.ask_end.next = self.clear.ask_end.val();
        self.reads.clock.next = self.clock.val();
        self.reads.reset.next = self.reset.val();
        self.reads.add.next = self.dram.ar_take.val();
        self.reads.add_line.next = self.dram.ar_line.val();
        self.reads.add_len.next = self.dram.ar_len.val();
        self.reads.retire.next = self.dram.r_last.val();
        self.reads.ask_line.next = self.clear.ask_line.val();
        self.reads.ask_end.next = self.clear.ask_end.val();
        // Asked this cycle, and no burst went out either way (the one asked about did not, and
        // neither table grew unseen).
        self.read_near.d.next = self.clear.ask.val()
            & !self.dram.ar_take.val()
            & !self.dram.aw_take.val()
            & !self.writes.clash.val()
            & !self.reset.val();
        self.write_near.d.next = self.clear.ask.val()
            & !self.dram.aw_take.val()
            & !self.dram.ar_take.val()
            & !self.reads.clash.val()
            & !self.reset.val();
        self.clear.read_near.next = self.read_near.q.val();
        self.clear.write_near.next = self.write_near.q.val();
        // The counts and marks. A caught-up mark follows the B count, so it never falls 128
        // behind (mod 256).
        self.b_seq_1.next = self.b_seq.q.val() + 1;
        self.w_seq_1.next = self.w_seq.q.val() + 1;
        if self.pt_clear.val() {
            self.pt_mark.d.next = self.b_seq.q.val();
        }
        if self.data_clear.val() {
            self.data_mark.d.next = self.b_seq.q.val();
        }
        // B responses come back in order: a read waits only for the writes it could see.
        if self.dram.w_done.val() {
            self.w_seq.d.next = self.w_seq_1.val();
            if self.w_page_table.val() {
                self.pt_mark.d.next = self.w_seq_1.val();
            } else {
                self.data_mark.d.next = self.w_seq_1.val();
            }
        }
        if self.dram.b_done.val() {
            self.b_seq.d.next = self.b_seq_1.val();
        }
        if self.reset.val() {
            self.w_seq.d.next = 0.into();
            self.b_seq.d.next = 0.into();
            self.pt_mark.d.next = 0.into();
            self.data_mark.d.next = 0.into();
        }
        // Whether each rule waits next cycle, with the late inputs (`w_done`, `w_page_table`,
        // `b_valid`: the executor's and the AXI channels' handshakes) selecting among compares
        // made from registers alone: a mark at or behind the B count (mod 256, never 128 apart)
        // has nothing to wait for. A mark that caught up this cycle equals the old count, which
        // the next count equals or passes: no wait.
        self.new_ahead_b.next = self.w_seq_1.val() - self.b_seq.q.val();
        self.new_ahead_b1.next = self.w_seq_1.val() - self.b_seq_1.val();
        self.pt_ahead_b.next = self.pt_mark.q.val() - self.b_seq.q.val();
        self.pt_ahead_b1.next = self.pt_mark.q.val() - self.b_seq_1.val();
        self.data_ahead_b.next = self.data_mark.q.val() - self.b_seq.q.val();
        self.data_ahead_b1.next = self.data_mark.q.val() - self.b_seq_1.val();
        // A new write's mark (`w_seq + 1`) against the next count, and the kept marks'.
        self.new_wait.next = (self.new_ahead_b.val() != 0) & !self.new_ahead_b.val().get_bit(7);
        if self.dram.b_done.val() {
            self.new_wait.next =
                (self.new_ahead_b1.val() != 0) & !self.new_ahead_b1.val().get_bit(7);
        }
        self.pt_keep_wait.next =
            (self.pt_ahead_b.val() != 0) & !self.pt_ahead_b.val().get_bit(7) & !self.pt_clear.val();
        self.data_keep_wait.next = (self.data_ahead_b.val() != 0)
            & !self.data_ahead_b.val().get_bit(7)
            & !self.data_clear.val();
        if self.dram.b_done.val() {
            self.pt_keep_wait.next = (self.pt_ahead_b1.val() != 0)
                & !self.pt_ahead_b1.val().get_bit(7)
                & !self.pt_clear.val();
            self.data_keep_wait.next = (self.data_ahead_b1.val() != 0)
                & !self.data_ahead_b1.val().get_bit(7)
                & !self.data_clear.val();
        }
        self.pt_wait.d.next = self.pt_keep_wait.val();
        self.data_wait.d.next = self.data_keep_wait.val();
        if self.dram.w_done.val() {
            if self.w_page_table.val() {
                self.pt_wait.d.next = self.new_wait.val();
            } else {
                self.data_wait.d.next = self.new_wait.val();
            }
        }
        // Every write has its B: the next counts equal (`w_seq` and `b_seq` each step by 0 or
        // 1, and never 128 apart).
        self.any_wait.d.next = self.w_seq.q.val() != self.b_seq.q.val();
        if self.dram.w_done.val() & !self.dram.b_done.val() {
            self.any_wait.d.next = self.w_seq_1.val() != self.b_seq.q.val();
        }
        if !self.dram.w_done.val() & self.dram.b_done.val() {
            self.any_wait.d.next = self.w_seq.q.val() != self.b_seq_1.val();
        }
        if self.reset.val() {
            self.pt_wait.d.next = false;
            self.data_wait.d.next = false;
            self.any_wait.d.next = false;
        }
    }
}

crate::impl_clocked!(Ordering);

#[cfg(test)]
mod tests;
