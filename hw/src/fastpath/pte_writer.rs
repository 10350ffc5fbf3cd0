//! The PTE writer (Clio's `PageTableWriter`): the one unit that writes page-table entries, for
//! a page fault (the page-fault unit's new PTE, loaded by the translate stage with
//! `fault_load`) and for the slow path's PTE_WRITE (decoded as the descriptor is taken,
//! `desc_take`). It holds the PTE and its address and lays them out as the beat the one-beat
//! writer sends: 16 strobed bytes at `addr[5:4] * 16` (the PTE is repeated in all four
//! lanes; the strobes pick one).
//!
//! A PTE_WRITE is decoded as `Pte::from_bytes` reads it (only the defined bits of word 0
//! survive) and checked against the table (`desc_ok`: slot below `BUCKET_SLOTS`, bucket within
//! the mask; else the descriptor is ignored). The TLB follows the PTE (`tu_*`): a used PTE is
//! inserted (an allocated, unmapped page with its location `bucket << 4 | slot` as its frame,
//! so its first touch needs no walk), a cleared one invalidated.
//!
//! Every slow-path descriptor is decoded as it is taken; only a PTE_WRITE's decode is used. The
//! executor takes a descriptor only when idle, so a fault's PTE (loaded and written inside a
//! request) is never overwritten before it is sent.

use crate::fastpath::links::{Beat, FaultPteIn, PteDecoded, PteDescIn};
use crate::spec::Spec;
use clio_proto::consts::{BUCKET_BYTES, BUCKET_SLOTS, PTE_BYTES, VPN_BITS};
use clio_proto::pte::{
    PERM_READ, PERM_WRITE, PFN_BITS, PID_SHIFT, READ_SHIFT, USED_SHIFT, VALID_SHIFT, WORD0_DEFINED,
    WRITE_SHIFT,
};
use rust_hdl::prelude::*;

// A PTE's address: bucket * 256 + slot * 16, i.e. `(bucket << 4 | slot) << 4`; its 16 bytes
// are word 0 (vpn 0..36, pid @36, used @56, valid @57, perms @58) and word 1 (pfn, 40 bits).
const _: () = assert!(
    BUCKET_BYTES == 1 << 8
        && PTE_BYTES == 1 << 4
        && BUCKET_SLOTS == 1 << 4
        && VPN_BITS == 36
        && PID_SHIFT == 36
        && USED_SHIFT == 56
        && VALID_SHIFT == 57
        && READ_SHIFT == 58
        && WRITE_SHIFT == READ_SHIFT + 1
        && PERM_READ == 1
        && PERM_WRITE == 2
        && PFN_BITS == 40
);

/// The PTE writer.
#[derive(LogicBlock, Default)]
pub struct PteWriter {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Bucket count - 1.
    pub bucket_mask: Signal<In, Bits<32>>,
    /// A slow-path descriptor is taken this cycle: decoded as a PTE_WRITE (its body's bucket
    /// u64 @88, slot u32 @96, PTE word 0 @104 and word 1's pfn @112).
    pub desc_take: Signal<In, Bit>,
    /// The PTE_WRITE descriptor's fields (`SlowPathDesc::pte`, joined in the top).
    pub desc: PteDescIn,
    /// A fault's PTE (`Translate::pte`, joined in the top).
    pub fault: FaultPteIn,
    /// The decode, for the slow-path TX block (`SlowPathTx::pte`, joined in the top).
    pub decoded: PteDecoded,
    /// The PTE's one-beat write (to `BeatWriter::pte`).
    pub beat: Beat,
    /// The PTE to write and its address (a fault's, or the PTE_WRITE's).
    addr: DFF<Bits<40>>,
    data: DFF<Bits<128>>,
    /// The PTE_WRITE's slot is inside the table.
    ok: DFF<Bit>,
    /// The PTE_WRITE's location, `bucket << 4 | slot`.
    loc: DFF<Bits<40>>,
    /// The descriptor's PTE location, `bucket << 4 | slot` (as it is taken).
    d_loc: Signal<Local, Bits<40>>,
    bucket_slots: Spec<32, { BUCKET_SLOTS as u64 }>,
    word0_defined: Spec<64, WORD0_DEFINED>,
}

impl Logic for PteWriter {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, addr, data, ok, loc);
        self.d_loc.next = (bit_cast::<40, 64>(self.desc.bucket.val()) << 4)
            | bit_cast::<40, 32>(self.desc.slot.val());
        if self.desc_take.val() {
            self.ok.d.next = (self.desc.slot.val() < self.bucket_slots.val())
                & (self.desc.bucket.val() <= bit_cast::<64, 32>(self.bucket_mask.val()));
            self.loc.d.next = self.d_loc.val();
            self.addr.d.next = self.d_loc.val() << 4;
            // Pte::from_bytes / to_bytes: only the defined bits survive.
            self.data.d.next =
                bit_cast::<128, 64>(self.desc.word0.val() & self.word0_defined.val())
                    | (bit_cast::<128, 40>(self.desc.pfn.val()) << 64);
        }
        if self.fault.load.val() {
            self.addr.d.next = self.fault.addr.val();
            self.data.d.next = self.fault.data.val();
        }
        self.decoded.ok.next = self.ok.q.val();
        self.decoded.inval.next = !self.data.q.val().get_bit(56);
        self.decoded.pid.next = self.data.q.val().get_bits::<16>(36);
        self.decoded.vpn.next = self.data.q.val().get_bits::<36>(0);
        self.decoded.perms.next = self.data.q.val().get_bits::<2>(58);
        self.decoded.alloc.next = !self.data.q.val().get_bit(57);
        self.decoded.pfn.next = self.data.q.val().get_bits::<40>(64);
        if !self.data.q.val().get_bit(57) {
            self.decoded.pfn.next = self.loc.q.val();
        }
        // 16 strobed bytes at `addr[5:4] * 16` of the beat: the PTE is in every 16-byte lane
        // and the strobes pick one (AXI writes no byte outside them), so no lane shifter.
        self.beat.addr.next = bit_cast::<64, 40>(self.addr.q.val());
        self.beat.data.next = bit_cast::<512, 128>(self.data.q.val())
            | (bit_cast::<512, 128>(self.data.q.val()) << 128)
            | (bit_cast::<512, 128>(self.data.q.val()) << 256)
            | (bit_cast::<512, 128>(self.data.q.val()) << 384);
        self.beat.strb.next = bit_cast::<64, 16>(0xFFFF_u16.to_bits())
            << (bit_cast::<7, 2>(self.addr.q.val().get_bits::<2>(4)) << 4);
    }
}

crate::impl_clocked!(PteWriter);

#[cfg(test)]
mod tests;
