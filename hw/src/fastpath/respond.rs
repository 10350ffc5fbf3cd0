//! The response side: the read-data stage ([`ReadData`]) builds every response in request
//! order into the two `txbuf` slots (a read's from its R beats), and the transmit stage
//! ([`Transmit`]) sends each finished one on the network TX port. The executor hands it jobs
//! ([`ReadJobIn`]), the DRAM port its reads' R beats ([`ReadBeatsIn`]).

use crate::fastpath::links::{ReadBeatsIn, ReadJobIn, TxLoadIn};
use crate::fastpath::read_data::ReadData;
use crate::fastpath::transmit::Transmit;
use rust_hdl::prelude::*;

/// The read-data and transmit stages with the TX buffer between them.
#[derive(LogicBlock, Default)]
pub struct Respond {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// The executor's responses, as jobs of the read-data stage.
    pub job: ReadJobIn,
    /// The R beats of the reads the read-data stage queued.
    pub r: ReadBeatsIn,
    /// TX beat valid.
    pub tx_valid: Signal<Out, Bit>,
    /// TX ready.
    pub tx_ready: Signal<In, Bit>,
    /// TX beat.
    pub tx_data: Signal<Out, Bits<512>>,
    /// TX byte enables.
    pub tx_keep: Signal<Out, Bits<64>>,
    /// TX last beat.
    pub tx_last: Signal<Out, Bit>,
    /// TX route (the request's).
    pub tx_route: Signal<Out, Bits<256>>,
    /// A response's last beat leaves this cycle.
    pub sent: Signal<Out, Bit>,
    pub(crate) rd: ReadData,
    pub(crate) xmit: Transmit,
    /// Response beats 1.. (beat 0 is built apart): two slots of 32 beats.
    txbuf: RAM<Bits<512>, 6>,
}

crate::impl_clocked!(Respond);

impl Logic for Respond {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, rd, xmit);
        self.txbuf.read_clock.next = self.clock.val();
        self.txbuf.write_clock.next = self.clock.val();
        self.rd.reset.next = self.reset.val();
        self.xmit.reset.next = self.reset.val();
        ReadJobIn::link(&mut self.job, &mut self.rd.job);
        ReadBeatsIn::link(&mut self.r, &mut self.rd.r);
        // The read-data stage hands finished responses to the transmit stage; the next may
        // start in the cycle of the last beat (beat 0 is a register, beat 1 is read from the
        // other txbuf slot a cycle later).
        self.rd.xmit_free.next = self.xmit.free.val();
        TxLoadIn::join(&mut self.xmit.job, &mut self.rd.tx);
        self.txbuf.write_enable.next = self.rd.buf_write_enable.val();
        self.txbuf.write_address.next = self.rd.buf_write_address.val();
        self.txbuf.write_data.next = self.rd.buf_write_data.val();
        self.txbuf.read_address.next = self.xmit.buf_address.val();
        self.xmit.buf_data.next = self.txbuf.read_data.val();
        self.xmit.tx_ready.next = self.tx_ready.val();
        self.tx_valid.next = self.xmit.tx_valid.val();
        self.tx_data.next = self.xmit.tx_data.val();
        self.tx_keep.next = self.xmit.tx_keep.val();
        self.tx_last.next = self.xmit.tx_last.val();
        self.tx_route.next = self.xmit.tx_route.val();
        self.sent.next = self.xmit.sent.val();
    }
}

#[cfg(test)]
impl Respond {
    /// Nothing is being built or sent, and no job is queued.
    pub(crate) fn is_idle(&self) -> bool {
        self.rd.is_idle() && !self.xmit.busy.val()
    }
}

#[cfg(test)]
mod tests;
