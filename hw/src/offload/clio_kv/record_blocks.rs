//! `RecordBlocks`: the 64-byte blocks of a new Clio-KV record's key and value, from the
//! request's payload beats. The record's payload bytes `PREFIX_BYTES..plen` (key, then value)
//! go to the slot at `slot + RECORD_HEADER_BYTES`, whose lane offset in its first block is `bd`:
//! payload byte `p` lands at lane `(p + bd) % 64` of block `(p + bd) / 64`. So block `bj` holds
//! the payload bytes `64 bj - bd ..` `64 (bj + 1) - bd`, which are the end of beat `bj - 1`
//! (`prev`) and the start of beat `bj` (`cur`) through the funnel shifter ([`Realign`]), and
//! only the lanes of the record's bytes are written ([`LaneWindow`]).
//!
//! Every output is registered from inputs set well before it is read: `bd` and `plen` are set
//! before the record's first block is loaded, `bj` moves (the unit's `BNext`) at least one
//! cycle (`BLoad`) before the block's write (`BWrite`) reads `strobe` and `empty`, so the block
//! write's request and strobes wait for no adder, shift or window compare.

use crate::mem_access::{LaneWindow, Realign};
use crate::spec::Spec;
use clio_proto::kv::PREFIX_BYTES;
use rust_hdl::prelude::*;

/// The record's blocks (module doc).
#[derive(LogicBlock, Default)]
pub struct RecordBlocks {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The payload beat before `cur` (zero before the first).
    pub prev: Signal<In, Bits<512>>,
    /// The payload beat that ends in block `bj`.
    pub cur: Signal<In, Bits<512>>,
    /// The record's first payload byte's lane offset (`slot + 12`'s low 6 bits: 12, 28, 44 or
    /// 60, slots being 16-byte aligned).
    pub bd: Signal<In, Bits<6>>,
    /// The block being written (0 = the one with the first payload byte).
    pub bj: Signal<In, Bits<5>>,
    /// The payload's length.
    pub plen: Signal<In, Bits<16>>,
    /// Block `bj`'s data: `prev` and `cur` shifted by `64 - bd` bytes.
    pub data: Signal<Out, Bits<512>>,
    /// Block `bj`'s strobes: the lanes of the record's key and value, registered.
    pub strobe: Signal<Out, Bits<64>>,
    /// Block `bj` holds no record byte, registered.
    pub empty: Signal<Out, Bit>,
    /// The record's last block, registered.
    pub jlast: Signal<Out, Bits<5>>,
    /// Beats into blocks.
    realign: Realign,
    /// The record's bytes among a block's lanes.
    lanes: LaneWindow,
    /// `realign`'s shift (`64 - bd`), registered.
    realign_sh: DFF<Bits<6>>,
    /// The record's key-and-value range in block space (`PREFIX_BYTES + bd`, `plen + bd`),
    /// registered.
    win_lo: DFF<Bits<12>>,
    win_hi: DFF<Bits<12>>,
    /// `strobe`, `empty` and `jlast`.
    strobe_q: DFF<Bits<64>>,
    blk_empty: DFF<Bit>,
    jlast_q: DFF<Bits<5>>,
    /// The window's lanes in block `bj`, as a mask.
    lane_mask: Signal<Local, Bits<64>>,
    /// The lane position of the record's last payload byte, from block 0's first lane.
    body_end: Signal<Local, Bits<11>>,
    ones64: Signal<Local, Bits<64>>,
    c_prefix: Spec<16, { PREFIX_BYTES as u64 }>,
}

impl Logic for RecordBlocks {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, realign_sh, win_lo, win_hi, strobe_q, blk_empty, jlast_q);
        self.ones64.next = 0xFFFF_FFFF_FFFF_FFFF_u64.to_bits();
        self.realign.lo.next = self.prev.val();
        self.realign.hi.next = self.cur.val();
        self.realign_sh.d.next =
            bit_cast::<6, 7>(bit_cast::<7, 8>(64_u8.to_bits()) - bit_cast::<7, 6>(self.bd.val()));
        self.realign.sh.next = self.realign_sh.q.val();
        self.data.next = self.realign.out.val();
        self.lanes.block.next = bit_cast::<6, 5>(self.bj.val());
        self.win_lo.d.next =
            bit_cast::<12, 16>(self.c_prefix.val()) + bit_cast::<12, 6>(self.bd.val());
        self.win_hi.d.next = bit_cast::<12, 16>(self.plen.val()) + bit_cast::<12, 6>(self.bd.val());
        self.lanes.lo.next = self.win_lo.q.val();
        self.lanes.hi.next = self.win_hi.q.val();
        self.blk_empty.d.next = self.lanes.stop.val() <= self.lanes.first.val();
        self.lane_mask.next = (self.ones64.val() << self.lanes.first.val())
            & !(self.ones64.val() << self.lanes.stop.val());
        self.strobe_q.d.next = self.lane_mask.val();
        self.body_end.next =
            bit_cast::<11, 16>(self.plen.val()) + bit_cast::<11, 6>(self.bd.val()) - 1;
        self.jlast_q.d.next = bit_cast::<5, 11>(self.body_end.val() >> 6);
        self.strobe.next = self.strobe_q.q.val();
        self.empty.next = self.blk_empty.q.val();
        self.jlast.next = self.jlast_q.q.val();
    }
}

crate::impl_clocked!(RecordBlocks);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::util::bytes_to_bits;
    use clio_proto::consts::MAX_PAYLOAD;

    /// For payloads of every length class at every lane offset, the blocks written (data at
    /// the strobed lanes) are the payload's bytes `PREFIX_BYTES..plen` laid from lane `bd` on,
    /// nothing else strobed, and the last block is `jlast`.
    #[test]
    fn the_blocks_hold_the_records_bytes_and_nothing_else() {
        let mut b = Bench::new(RecordBlocks::default());
        for plen in [5usize, 63, 64, 68, 200, 1000, MAX_PAYLOAD] {
            let pay: Vec<u8> = (0..plen).map(|i| (i * 7 + plen) as u8).collect();
            let beats: Vec<[u8; 64]> = pay
                .chunks(64)
                .map(|c| {
                    let mut a = [0u8; 64];
                    a[..c.len()].copy_from_slice(c);
                    a
                })
                .collect();
            // Slots are 16-byte aligned: the payload starts 12 bytes into a 16-byte line.
            for bd in [12usize, 28, 44, 60] {
                let mut image = vec![0u8; 64 * 18];
                let mut strobed = vec![false; 64 * 18];
                b.uut.bd.next = (bd as u64).to_bits();
                b.uut.plen.next = (plen as u64).to_bits();
                for bj in 0..18usize {
                    let beat = |k: usize| beats.get(k).copied().unwrap_or([0; 64]);
                    let prev = if bj == 0 { [0; 64] } else { beat(bj - 1) };
                    b.uut.prev.next = bytes_to_bits::<512>(&prev);
                    b.uut.cur.next = bytes_to_bits::<512>(&beat(bj));
                    b.uut.bj.next = (bj as u64).to_bits();
                    b.tick();
                    b.tick();
                    b.settle();
                    let u = &b.uut;
                    let data = u.data.val();
                    for lane in 0..64 {
                        if u.strobe.val().get_bit(lane) {
                            image[64 * bj + lane] = data.get_bits::<8>(8 * lane).to_u64() as u8;
                            strobed[64 * bj + lane] = true;
                        }
                    }
                    assert_eq!(u.empty.val(), u.strobe.val().to_u64() == 0, "bj {bj}");
                    if bj == 0 {
                        let last = (plen + bd - 1) / 64;
                        assert_eq!(u.jlast.val().to_u64() as usize, last, "plen {plen} bd {bd}");
                    }
                }
                let want = bd + PREFIX_BYTES..bd + plen;
                for (at, s) in strobed.iter().enumerate() {
                    assert_eq!(*s, want.contains(&at), "lane {at}, plen {plen} bd {bd}");
                }
                assert_eq!(&image[want], &pay[PREFIX_BYTES..], "plen {plen} bd {bd}");
            }
        }
    }
}
