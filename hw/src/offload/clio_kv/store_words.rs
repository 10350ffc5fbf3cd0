//! `StoreWords`: `StoreLayout` in hardware: the addresses of the store's words in its RAS from
//! the unit's configuration (`KV_CONFIG`: base, buckets, records), the request's owner and its
//! key's hash, each registered, so that the word address the unit loads (`ma`) takes
//! registers only, never an adder's output.
//!
//! * the superblock's words (`base + SB_*`), the first chain head (`base + HEADS_OFFSET`) and the
//!   count table (`base + SUPERBLOCK_BYTES`), a cycle after the configuration;
//! * the owner's count (`StoreLayout::count`: the PID's low 12 bits) a cycle after the table's;
//! * the key's chain head (`StoreLayout::head`: `heads + 8 * (hash & (buckets - 1))`), a cycle
//!   after the hash (the unit waits for the hash's `busy` to fall a cycle before reading it);
//! * the first record slot (`record(0)`) and one past the last (`record(records)`), in turn,
//!   and `records - 1`, `records == 0`.
//!
//! The configuration is set by KV_CONFIG, which the executor applies while no offload request
//! is under way, and the owner as a request is taken, many cycles before any of these is read.

use crate::spec::Spec;
use clio_proto::consts::KEY_TABLE_ENTRIES;
use clio_proto::kv::{
    HEADS_OFFSET, RECORD_BYTES, SB_FREE_HEAD, SB_HIGH_WATER, SB_LIVE, SB_MAGIC, SB_RAS_RECORDS,
    SUPERBLOCK_BYTES,
};
use rust_hdl::prelude::*;

// The literals the block takes, pinned to proto: the owner's count is at `counts + (owner's
// low 12 bits << 3)`, a slot's address at `first + (x << 10) + (x << 6) + (x << 4)`, a chain
// head at `heads + (bucket << 3)`.
const _: () = {
    assert!(KEY_TABLE_ENTRIES == 1 << 12 && HEADS_OFFSET == SUPERBLOCK_BYTES + (1 << 12) * 8);
    assert!(RECORD_BYTES == (1 << 10) + (1 << 6) + (1 << 4));
};

/// The store's word addresses (module doc).
#[derive(LogicBlock, Default)]
pub struct StoreWords {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The store's base address in its RAS (`KV_CONFIG`).
    pub base: Signal<In, Bits<64>>,
    /// Its chain heads, a power of two (`KV_CONFIG`).
    pub buckets: Signal<In, Bits<64>>,
    /// Its record slots (`KV_CONFIG`).
    pub records: Signal<In, Bits<32>>,
    /// The request's RAS (its PID's low 12 bits: PIDs that pass the key check are below
    /// `KEY_TABLE_ENTRIES`).
    pub owner: Signal<In, Bits<12>>,
    /// The key's hash.
    pub hash: Signal<In, Bits<32>>,
    /// The superblock's magic.
    pub sb_magic: Signal<Out, Bits<64>>,
    /// The superblock's live count.
    pub sb_live: Signal<Out, Bits<64>>,
    /// The superblock's free-list head.
    pub sb_free: Signal<Out, Bits<64>>,
    /// The superblock's high-water mark.
    pub sb_hw: Signal<Out, Bits<64>>,
    /// The superblock's per-RAS record limit.
    pub sb_quota: Signal<Out, Bits<64>>,
    /// The owner's count of live records.
    pub count: Signal<Out, Bits<64>>,
    /// The key's chain head (the hash's of a cycle before).
    pub head: Signal<Out, Bits<64>>,
    /// The first record slot.
    pub first: Signal<Out, Bits<64>>,
    /// One past the last record slot.
    pub rec_end: Signal<Out, Bits<64>>,
    /// `records - 1` (64 bits).
    pub rec_m1: Signal<Out, Bits<64>>,
    /// `records == 0`.
    pub rec_zero: Signal<Out, Bit>,
    sb_magic_pa: DFF<Bits<64>>,
    sb_live_pa: DFF<Bits<64>>,
    sb_free_pa: DFF<Bits<64>>,
    sb_hw_pa: DFF<Bits<64>>,
    sb_quota_pa: DFF<Bits<64>>,
    counts_pa: DFF<Bits<64>>,
    cnt_pa: DFF<Bits<64>>,
    heads_pa: DFF<Bits<64>>,
    bucket_mask: DFF<Bits<64>>,
    head_pa: DFF<Bits<64>>,
    first_q: DFF<Bits<64>>,
    end_q: DFF<Bits<64>>,
    rec_m1_q: DFF<Bits<64>>,
    rec_zero_q: DFF<Bit>,
    /// The records' count, 64 bits.
    recs: Signal<Local, Bits<64>>,
    c_sb_magic: Spec<64, SB_MAGIC>,
    c_sb_free: Spec<64, SB_FREE_HEAD>,
    c_sb_hw: Spec<64, SB_HIGH_WATER>,
    c_sb_live: Spec<64, SB_LIVE>,
    c_sb_quota: Spec<64, SB_RAS_RECORDS>,
    c_sb_bytes: Spec<64, SUPERBLOCK_BYTES>,
    c_heads_off: Spec<64, HEADS_OFFSET>,
}

impl Logic for StoreWords {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            sb_magic_pa,
            sb_live_pa,
            sb_free_pa,
            sb_hw_pa,
            sb_quota_pa,
            counts_pa,
            cnt_pa,
            heads_pa,
            bucket_mask,
            head_pa,
            first_q,
            end_q,
            rec_m1_q,
            rec_zero_q
        );
        self.sb_magic_pa.d.next = self.base.val() + self.c_sb_magic.val();
        self.sb_live_pa.d.next = self.base.val() + self.c_sb_live.val();
        self.sb_free_pa.d.next = self.base.val() + self.c_sb_free.val();
        self.sb_hw_pa.d.next = self.base.val() + self.c_sb_hw.val();
        self.sb_quota_pa.d.next = self.base.val() + self.c_sb_quota.val();
        self.heads_pa.d.next = self.base.val() + self.c_heads_off.val();
        self.counts_pa.d.next = self.base.val() + self.c_sb_bytes.val();
        self.cnt_pa.d.next = self.counts_pa.q.val() + (bit_cast::<64, 12>(self.owner.val()) << 3);
        self.bucket_mask.d.next = self.buckets.val() - 1;
        self.head_pa.d.next = self.heads_pa.q.val()
            + ((bit_cast::<64, 32>(self.hash.val()) & self.bucket_mask.q.val()) << 3);
        self.recs.next = bit_cast::<64, 32>(self.records.val());
        self.rec_m1_q.d.next = self.recs.val() - 1;
        self.rec_zero_q.d.next = self.records.val() == 0;
        self.first_q.d.next = self.heads_pa.q.val() + (self.buckets.val() << 3);
        self.end_q.d.next = self.first_q.q.val()
            + (self.recs.val() << 10)
            + (self.recs.val() << 6)
            + (self.recs.val() << 4);
        self.sb_magic.next = self.sb_magic_pa.q.val();
        self.sb_live.next = self.sb_live_pa.q.val();
        self.sb_free.next = self.sb_free_pa.q.val();
        self.sb_hw.next = self.sb_hw_pa.q.val();
        self.sb_quota.next = self.sb_quota_pa.q.val();
        self.count.next = self.cnt_pa.q.val();
        self.head.next = self.head_pa.q.val();
        self.first.next = self.first_q.q.val();
        self.rec_end.next = self.end_q.q.val();
        self.rec_m1.next = self.rec_m1_q.q.val();
        self.rec_zero.next = self.rec_zero_q.q.val();
    }
}

crate::impl_clocked!(StoreWords);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use clio_proto::kv::{key_hash, StoreLayout};

    /// For layouts of several sizes and owners across the PIDs, three cycles after the inputs
    /// every address is `StoreLayout`'s.
    #[test]
    fn every_word_is_where_store_layout_has_it() {
        let mut b = Bench::new(StoreWords::default());
        let layouts = [
            StoreLayout::fit(0x40_0000, 16 << 20).expect("a store"),
            StoreLayout::fit(0x1234_5000, HEADS_OFFSET + (24 << 10)).expect("a store"),
            StoreLayout {
                base: 0x10_0000,
                buckets: 4,
                records: 8,
            },
        ];
        for l in layouts {
            for owner in [1u16, 2, 77, 4095] {
                let key = format!("key of {owner}");
                let hash = key_hash(owner, key.as_bytes());
                let u = &mut b.uut;
                u.base.next = l.base.to_bits();
                u.buckets.next = l.buckets.to_bits();
                u.records.next = l.records.to_bits();
                u.owner.next = (owner as u64 & 0xFFF).to_bits();
                u.hash.next = hash.to_bits();
                for _ in 0..3 {
                    b.tick();
                }
                b.settle();
                let u = &b.uut;
                let at = |w: u64| l.base + w;
                assert_eq!(u.sb_magic.val().to_u64(), at(SB_MAGIC));
                assert_eq!(u.sb_live.val().to_u64(), at(SB_LIVE));
                assert_eq!(u.sb_free.val().to_u64(), at(SB_FREE_HEAD));
                assert_eq!(u.sb_hw.val().to_u64(), at(SB_HIGH_WATER));
                assert_eq!(u.sb_quota.val().to_u64(), at(SB_RAS_RECORDS));
                assert_eq!(u.count.val().to_u64(), l.count(owner), "{l:?} {owner}");
                let bucket = l.bucket(owner, key.as_bytes());
                assert_eq!(u.head.val().to_u64(), l.head(bucket), "{l:?} {owner}");
                assert_eq!(u.first.val().to_u64(), l.record(0));
                assert_eq!(u.rec_end.val().to_u64(), l.record(l.records));
                assert_eq!(u.rec_m1.val().to_u64(), l.records - 1);
                assert!(!u.rec_zero.val());
            }
        }
    }
}
