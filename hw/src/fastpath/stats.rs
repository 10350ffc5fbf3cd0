//! The fast path's statistics counters (the top's `stat_*` ports): one 32-bit count per event,
//! each event a one-cycle pulse from the stage that sees it, all cleared by reset. Counts wrap
//! at 2^32 (the slow path reads them often enough to unwrap them).
//!
//! A TLB miss reads exactly one bucket (the walker's one burst), so `bucket_reads` is the miss
//! count: one register, two ports.

use crate::fastpath::links::{ExecEventsIn, TranslateEventsIn};
use rust_hdl::prelude::*;

/// The statistics counters.
#[derive(LogicBlock, Default)]
pub struct Stats {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every count to zero.
    pub reset: Signal<In, Bit>,
    /// Events this cycle (one-cycle pulses): a frame received,
    pub rx: Signal<In, Bit>,
    /// a packet sent,
    pub tx: Signal<In, Bit>,
    /// the translate stage's TLB hit, miss (a walk) and page fault (`Translate::ev`),
    pub tr: TranslateEventsIn,
    /// the executor's NACK, refusal by the key check (DENIED or STALE) and look-ahead
    /// translation taken in Dispatch, a TLB hit too (`Executor::ev`).
    pub exec: ExecEventsIn,
    /// The counts.
    pub rx_pkts: Signal<Out, Bits<32>>,
    /// Packets sent.
    pub tx_pkts: Signal<Out, Bits<32>>,
    /// NACKs answered.
    pub nacks: Signal<Out, Bits<32>>,
    /// TLB hits.
    pub tlb_hits: Signal<Out, Bits<32>>,
    /// TLB misses.
    pub tlb_misses: Signal<Out, Bits<32>>,
    /// Page-table buckets read (one per TLB miss: the same register as `tlb_misses`).
    pub bucket_reads: Signal<Out, Bits<32>>,
    /// Page faults served.
    pub page_faults: Signal<Out, Bits<32>>,
    /// Requests refused by the key check (DENIED or STALE).
    pub denied_reqs: Signal<Out, Bits<32>>,
    c_rx: DFF<Bits<32>>,
    c_tx: DFF<Bits<32>>,
    c_nack: DFF<Bits<32>>,
    c_hit: DFF<Bits<32>>,
    c_miss: DFF<Bits<32>>,
    c_fault: DFF<Bits<32>>,
    c_denied: DFF<Bits<32>>,
}

impl Logic for Stats {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, c_rx, c_tx, c_nack, c_hit, c_miss, c_fault, c_denied);
        if self.rx.val() {
            self.c_rx.d.next = self.c_rx.q.val() + 1;
        }
        if self.tx.val() {
            self.c_tx.d.next = self.c_tx.q.val() + 1;
        }
        if self.exec.nack.val() {
            self.c_nack.d.next = self.c_nack.q.val() + 1;
        }
        if self.tr.hit.val() | self.exec.ahead_hit.val() {
            self.c_hit.d.next = self.c_hit.q.val() + 1;
        }
        if self.tr.miss.val() {
            self.c_miss.d.next = self.c_miss.q.val() + 1;
        }
        if self.tr.fault.val() {
            self.c_fault.d.next = self.c_fault.q.val() + 1;
        }
        if self.exec.denied.val() {
            self.c_denied.d.next = self.c_denied.q.val() + 1;
        }
        if self.reset.val() {
            self.c_rx.d.next = 0.into();
            self.c_tx.d.next = 0.into();
            self.c_nack.d.next = 0.into();
            self.c_hit.d.next = 0.into();
            self.c_miss.d.next = 0.into();
            self.c_fault.d.next = 0.into();
            self.c_denied.d.next = 0.into();
        }
        self.rx_pkts.next = self.c_rx.q.val();
        self.tx_pkts.next = self.c_tx.q.val();
        self.nacks.next = self.c_nack.q.val();
        self.tlb_hits.next = self.c_hit.q.val();
        self.tlb_misses.next = self.c_miss.q.val();
        self.bucket_reads.next = self.c_miss.q.val();
        self.page_faults.next = self.c_fault.q.val();
        self.denied_reqs.next = self.c_denied.q.val();
    }
}

crate::impl_clocked!(Stats);

#[cfg(test)]
mod tests;
