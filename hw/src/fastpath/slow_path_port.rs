//! The slow-path port: the fast path's side of the two descriptor rings it shares with the
//! slow path. The RX ring takes the executor's REQUEST (encoded by [`SlowPathDesc`]) or a
//! page fault's PAGE_MAPPED notice, a REQUEST only within its source's share
//! ([`RxShare`]); a TX descriptor is taken by the executor, decoded ([`SlowPathDesc`]) and
//! acted on in SpTx ([`SlowPathTx`]: the TLB's and the page tables' changes, keys, the route
//! secret, Clio-KV's store, the idempotence table's rows).
//!
//! Its ports are the rings' (flat, as the board connects them) and one link per side it
//! meets ([`SlowCore`], [`SlowMem`], [`SlowRecv`]).

use crate::fastpath::links::*;
use crate::fastpath::rx_share::RxShare;
use crate::fastpath::slow_path_desc::SlowPathDesc;
use crate::fastpath::slow_path_tx::SlowPathTx;
use rust_hdl::prelude::*;

/// The slow-path rings' descriptors and the RX ring's per-source share.
#[derive(LogicBlock, Default)]
pub struct SlowPathPort {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// Slow-path RX descriptor valid (REQUEST, PAGE_MAPPED).
    pub sp_rx_valid: Signal<Out, Bit>,
    /// Slow-path RX ready.
    pub sp_rx_ready: Signal<In, Bit>,
    /// Slow-path RX descriptor (`proto::ring::Descriptor::encode`, byte k at bits 8k..).
    pub sp_rx_desc: Signal<Out, Bits<1024>>,
    /// Free RX ring slots (accounting for every descriptor accepted so far).
    pub sp_rx_room: Signal<In, Bits<16>>,
    /// RX descriptors the slow path has taken since reset, mod 2^16.
    pub sp_rx_taken: Signal<In, Bits<16>>,
    /// Slow-path TX descriptor valid.
    pub sp_tx_valid: Signal<In, Bit>,
    /// Slow-path TX ready.
    pub sp_tx_ready: Signal<Out, Bit>,
    /// Slow-path TX descriptor.
    pub sp_tx_desc: Signal<In, Bits<1024>>,
    /// The core: descriptors taken and acted on, REQUESTs pushed.
    pub core: SlowCore,
    /// The memory side: the TLB's and the page tables' changes, the notices.
    pub mem: SlowMem,
    /// The receive side: KEY_WRITE, ROUTE_KEY, the frame's source.
    pub recv: SlowRecv,
    spd: SlowPathDesc,
    sptx: SlowPathTx,
    rxs: RxShare,
}

crate::impl_clocked!(SlowPathPort);

impl Logic for SlowPathPort {
    #[hdl_gen]
    fn update(&mut self) {
        clock!(self, clock, spd, sptx, rxs);
        self.sptx.reset.next = self.reset.val();
        self.rxs.reset.next = self.reset.val();
        // ---- The RX ring: the executor's REQUEST, or else a fault's PAGE_MAPPED notice; a
        // REQUEST counts against its frame's source's share, a notice against nobody's.
        self.sp_rx_valid.next = self.core.push.val() | self.mem.notice_valid.val();
        self.sp_rx_desc.next = self.spd.page_mapped.val();
        if self.core.push.val() {
            self.sp_rx_desc.next = self.spd.request.val();
        }
        self.core.rx_ready.next = self.sp_rx_ready.val();
        self.mem.ready.next = self.sp_rx_ready.val();
        self.mem.room.next = self.sp_rx_room.val() != 0;
        self.rxs.push.next =
            (self.core.push.val() | self.mem.notice_valid.val()) & self.sp_rx_ready.val();
        self.rxs.counted.next = self.core.push.val();
        self.rxs.source.next = self.recv.source.val();
        self.rxs.taken.next = self.sp_rx_taken.val();
        self.rxs.room.next = self.sp_rx_room.val();
        self.core.rx_ok.next = self.rxs.ok.val();
        self.spd.req_client.next = self.core.client.val();
        self.spd.req_route.next = self.core.route.val();
        self.spd.req_header.next = self.core.header.val();
        PageMappedIn::link(&mut self.mem.notice, &mut self.spd.pm);
        // ---- The TX ring: the descriptor the executor takes, decoded, and its actions.
        self.core.tx_valid.next = self.sp_tx_valid.val();
        self.sp_tx_ready.next = self.core.tx_ready.val();
        self.spd.take.next = self.core.take.val();
        self.spd.desc.next = self.sp_tx_desc.val();
        DescTaken::link(&mut self.core.desc, &mut self.spd.taken);
        TxActPort::link(&mut self.core.sptx, &mut self.sptx.exec);
        DescKindIn::join(&mut self.sptx.desc, &mut self.spd.kind);
        PteDecodedIn::link(&mut self.mem.decoded, &mut self.sptx.pte);
        PteDesc::link(&mut self.mem.pte, &mut self.spd.pte);
        FreePage::link(&mut self.mem.fp, &mut self.sptx.free);
        TlbChange::link(&mut self.mem.up, &mut self.sptx.up);
        RingControl::link(&mut self.core.ring, &mut self.sptx.ring);
        KvLoad::link(&mut self.core.kv_at, &mut self.sptx.kv);
        KvConfig::link(&mut self.core.kv, &mut self.spd.kv);
        KeyWrite::link(&mut self.recv.key_wr, &mut self.sptx.keys);
        RouteKey::link(&mut self.recv.route_key, &mut self.sptx.routes);
    }
}

#[cfg(test)]
mod tests;
