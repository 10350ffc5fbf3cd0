//! The TLB: set associative on `(pid, vpn)`, [`SETS`] sets of [`WAYS`] ways, keys in LUT RAM, a
//! tree pseudo-LRU per set.
//!
//! * Where a key lives: only in its set, `clio_proto::consts::tlb_set` (the page's low 4 bits
//!   XOR the pid's low 4 reversed; with the pid held reversed in the key, two slices of the
//!   key). Each way keeps its keys in a 16-word LUT RAM (one per read port: the lookup's and
//!   the update's), the valid bits in flip-flops (so a reset empties the TLB) and the
//!   translations in a 64 x 43 RAM at `set << 2 | way`. A lookup compares [`WAYS`] keys read
//!   from the RAMs, where a fully associative TLB compared 64 keys held in 3,328 flip-flops.
//! * Lookup port: a lookup in (the translate stage's `xlate`, else Dispatch's `dispatch`, else
//!   the look-ahead's `ahead` while `ahead_free`), `res_*` out [`TLB_LATENCY`] cycles later,
//!   II = 1. Cycle 1 registers the key and its set; cycle 2 reads the set's keys and valid bits,
//!   compares, and reads the translation of the way that matched (the RAM's registered read).
//!   The lookup is linearised at the start of its second cycle: it sees every update whose
//!   write stage was in its first cycle or before, and none after (the translation RAM's read
//!   of a way rewritten in the second cycle returns the word before the write).
//! * Update port (`up_*`): insert (from the walker / page-fault unit) or invalidate (from the
//!   slow path), one per cycle, in two stages. The cycle an update enters, its set's keys are
//!   read and compared against its whole key and the match registered (`u_match`, with the
//!   update itself); the next cycle (the write stage) picks the target and writes, so the
//!   compare and the target's select are not in one cycle. An insert overwrites the way that
//!   holds its key (so never two ways hold one key); otherwise it takes the set's lowest
//!   invalid way, else the one the set's tree leads to. An invalidation drops the way that
//!   holds its key. Back-to-back updates: the entering update's compare reads the keys before
//!   the write stage's write lands, so its match is corrected there (`m_cur`): the way the
//!   previous insert wrote (in the same set) is added when the keys are equal (`u_same`) and
//!   removed otherwise, and ways invalidated since drop out through the live valid bits.
//! * Replacement: per set, a tree pseudo-LRU of 3 bits (one bit of `lru_root`, `lru_lo` and
//!   `lru_hi` each: the root set says the victim is in the upper pair, a pair's bit set says
//!   it is the pair's upper way). Touching a way turns the root and its
//!   pair's bit away from it; the victim is the way the bits lead to. A hit touches its way,
//!   an insert its target and wins over a hit in the same cycle. An insert's touch lands at
//!   the end of its cycle; a hit's is applied in the next (`p_*`, so the compare is not in
//!   front of the trees' registers), and an insert in that cycle picks its victim with it
//!   applied (only the root changes where the victim can be). The most recently touched way
//!   of a set is never its victim.
//!
//! Consistency with in-flight requests (paper §4.2): every lookup returns the invalidation
//! generation it saw (`res_gen`); an insert carries the generation of the lookup that missed
//! and is dropped if an invalidation happened since (compared as it enters with the
//! generation the write stage will see, and dropped there), so a walk that raced with a
//! slow-path PTE change can never reinstate a stale translation. `gen` is the generation as it
//! is once the update in the write stage is done, so an insert entering behind an
//! invalidation with `up_gen = gen` is not dropped.

use crate::async_ram::AsyncRam;
use crate::fastpath::links::{TlbChangeIn, TlbInsertIn, TlbLookupIn, TlbResult};
use crate::util::{BitReverse, EqTree, Gather};
use clio_proto::consts::{TLB_ENTRIES, TLB_SETS, TLB_WAYS, VPN_BITS};
use rust_hdl::prelude::*;

// The key is `pid << 36 | vpn` with the pid's 16 bits reversed (a bijection: lookups match
// as on the plain key), so the set (`clio_proto::consts::tlb_set`: the vpn's low 4 bits XOR
// the pid's low 4 reversed) is the key's bits 0..4 XOR bits 48..52.
const _: () = assert!(VPN_BITS == 36 && clio_proto::pte::PID_SHIFT == 36);
// Sets index a 16-word key RAM with 4 bits and a 16-bit vector per tree bit; four ways: a
// 3-bit tree per set, and the 64-bit valid vector holds a nibble per set.
const _: () = assert!(TLB_SETS == 16 && TLB_WAYS == 4 && TLB_ENTRIES == 64);

/// Entries (from `proto::consts::TLB_ENTRIES`).
pub const ENTRIES: usize = TLB_ENTRIES;
/// Sets (from `proto::consts::TLB_SETS`).
pub const SETS: usize = TLB_SETS;
/// Ways per set (from `proto::consts::TLB_WAYS`).
pub const WAYS: usize = TLB_WAYS;
/// Cycles from a lookup to `res_valid`.
pub const TLB_LATENCY: usize = 2;

/// The TLB.
#[derive(LogicBlock)]
pub struct Tlb {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: all entries invalid, every replacement bit 0, generation 0.
    pub reset: Signal<In, Bit>,
    /// The translate stage's lookups (`Translate::lk`): they win the port.
    pub xlate: TlbLookupIn,
    /// Dispatch's lookups of its frame's page (`TranslateAhead::dlk`): never in a cycle the
    /// translate stage looks up (it is idle in Dispatch); it wins over the look-ahead.
    pub dispatch: TlbLookupIn,
    /// The look-ahead's lookups (`TranslateAhead::lk`), when the port is free.
    pub ahead: TlbLookupIn,
    /// The port is free for the look-ahead this cycle: neither the translate stage nor
    /// Dispatch looks up.
    pub ahead_free: Signal<Out, Bit>,
    /// The lookup entering: the translate stage's, Dispatch's, or else the look-ahead's:
    /// valid, process id, virtual page number.
    lk_valid: Signal<Local, Bit>,
    lk_pid: Signal<Local, Bits<16>>,
    lk_vpn: Signal<Local, Bits<36>>,
    /// Result of the lookup issued [`TLB_LATENCY`] cycles ago.
    pub res_valid: Signal<Out, Bit>,
    /// The lookup result (the translate stage's `tlb`, joined in the top; the look-ahead reads it).
    pub res: TlbResult,
    /// The page-fault unit's inserts (`Translate::ti`), with the generation of the lookup that
    /// missed.
    pub walk: TlbInsertIn,
    /// The slow path's inserts and invalidations (`SlowPathTx::up`): current at any
    /// generation; one wins over an insert of `walk` in the same cycle.
    pub slow: TlbChangeIn,
    /// Invalidation generation, counting an invalidation in the write stage.
    pub gen: Signal<Out, Bits<16>>,
    /// The update that enters this cycle, `slow`'s or else `walk`'s: valid, an invalidation
    /// (else an insert), pid, VPN, frame (of an allocated page: its PTE's location),
    /// permissions, an allocated unmapped page.
    up_valid: Signal<Local, Bit>,
    up_inval: Signal<Local, Bit>,
    up_pid: Signal<Local, Bits<16>>,
    up_vpn: Signal<Local, Bits<36>>,
    up_pfn: Signal<Local, Bits<40>>,
    up_perms: Signal<Local, Bits<2>>,
    up_alloc: Signal<Local, Bit>,
    /// The write stage holds an update (it entered last cycle).
    u_valid: DFF<Bit>,
    /// ... an invalidation (else an insert).
    u_inval: DFF<Bit>,
    /// ... its key, `pid << 36 | vpn`.
    u_key: DFF<Bits<52>>,
    /// ... its set.
    u_set: DFF<Bits<4>>,
    /// ... its entry data, `alloc << 42 | perms << 40 | pfn`.
    u_data: DFF<Bits<43>>,
    /// ... its generation (an insert's) equals the generation as it is in the write stage
    /// (`gen_now` of the cycle it entered: the update then in the write stage counted), so the
    /// write stage's drop test is one gate from flip-flops.
    u_gen_ok: DFF<Bit>,
    /// ... the ways of its set whose key was its key when it entered (valid or not).
    u_match: DFF<Bits<4>>,
    /// ... its key is the one of the update that was in the write stage when it entered.
    u_same: DFF<Bit>,
    /// The valid ways of the write stage's set holding its key now: `u_match` masked with the
    /// live valid bits and corrected for the way written last cycle (`wr_way`).
    m_cur: Signal<Local, Bits<4>>,
    /// Per way, its keys (by set) as the lookup reads them ...
    key_lk: [AsyncRam<Bits<52>, 4>; WAYS],
    /// ... and as the update port reads them (the same words: every write goes to both).
    key_up: [AsyncRam<Bits<52>, 4>; WAYS],
    /// Valid bits, `set << 2 | way`.
    valid: DFF<Bits<64>>,
    generation: DFF<Bits<16>>,
    /// Translations, at `set << 2 | way`.
    data: RAM<Bits<43>, 6>,
    /// The lookup in its second cycle: valid, its key, its set, the generation it saw.
    s1_valid: DFF<Bit>,
    s1_key: DFF<Bits<52>>,
    s1_set: DFF<Bits<4>>,
    s1_gen: DFF<Bits<16>>,
    /// The insert of last cycle: its set and way (one-hot; zero when there was none).
    wr_set: DFF<Bits<4>>,
    wr_way: DFF<Bits<4>>,
    s2_valid: DFF<Bit>,
    s2_hit: DFF<Bit>,
    s2_gen: DFF<Bits<16>>,
    /// The generation once the write stage's update is done (a lookup in its first cycle now
    /// sees that update).
    gen_now: Signal<Local, Bits<16>>,
    lk_key: Signal<Local, Bits<52>>,
    up_key: Signal<Local, Bits<52>>,
    /// The update's set (`clio_proto::consts::tlb_set` of its key).
    up_set: Signal<Local, Bits<4>>,
    /// The lookup's and the update's pid in reverse bit order, as keys hold it.
    lk_rev: BitReverse<16>,
    up_rev: BitReverse<16>,
    /// Each update source's pid's low 4 bits reversed (its set's pid half).
    walk_rev: BitReverse<4>,
    slow_rev: BitReverse<4>,
    /// Bit offsets of the lookup's and the write stage's set in `valid`.
    s1_at: Signal<Local, Bits<6>>,
    u_at: Signal<Local, Bits<6>>,
    /// The lookup's set: its valid bits, the ways whose key matches, the hits (one-hot or
    /// zero), the hit way's index.
    lk_vset: Signal<Local, Bits<4>>,
    m_lk: Gather<4>,
    hitvec: Signal<Local, Bits<4>>,
    hit: Signal<Local, Bit>,
    hit_way: Signal<Local, Bits<2>>,
    /// The entering update's compare.
    m_up: Gather<4>,
    /// The compares, per way: trees of LUT6s after the key RAMs' read.
    eq_lk: [EqTree<52>; WAYS],
    eq_up: [EqTree<52>; WAYS],
    /// The write stage's set: its valid bits, the way written last cycle if it is in it.
    u_vset: Signal<Local, Bits<4>>,
    u_wr: Signal<Local, Bits<4>>,
    /// The replacement trees, a bit per set in each: the root (set: the victim is in the upper
    /// pair), the lower pair's and the upper pair's bit (set: the pair's upper way); and the
    /// write stage's set's tree (bit 0 the root, 1 the lower pair, 2 the upper).
    lru_root: DFF<Bits<16>>,
    lru_lo: DFF<Bits<16>>,
    lru_hi: DFF<Bits<16>>,
    u_tree: Signal<Local, Bits<3>>,
    /// The write stage's set's lowest invalid way and its tree's victim.
    inv_way: Signal<Local, Bits<2>>,
    lru_way: Signal<Local, Bits<2>>,
    /// The insert's target way: index and one-hot.
    tgt_way: Signal<Local, Bits<2>>,
    tgt_vec: Signal<Local, Bits<4>>,
    do_insert: Signal<Local, Bit>,
    do_inval: Signal<Local, Bit>,
    /// The hit's touch decided last cycle, applied this cycle (so the compare is not in front
    /// of the trees' registers): the lookup's set (one-hot, or zero: no lookup, or an insert
    /// touched), whether a way hit, the way; the set touched (`p_set` where a way hit) ...
    p_set: DFF<Bits<16>>,
    p_any: DFF<Bit>,
    p_way: DFF<Bits<2>>,
    p_hit: Signal<Local, Bits<16>>,
    /// ... and whether the lookup's set (`p_set` not zero) is the set of the update that
    /// entered with it, in the write stage while the touch is pending.
    p_same: DFF<Bit>,
    /// The write stage's set's lowest invalid way, one-hot (zero when all are valid).
    inv_vec: Signal<Local, Bits<4>>,
    /// The entering update's key is the write stage's.
    eq_same: EqTree<52>,
    /// The pending touch is in the write stage's set.
    p_here: Signal<Local, Bit>,
    /// This cycle's touches, a bit per set: the insert's set, the pending hit's; of those, the
    /// ones in the lower pair, in the upper pair, on an even way.
    t_ins: Signal<Local, Bits<16>>,
    ins_lp: Signal<Local, Bits<16>>,
    ins_up: Signal<Local, Bits<16>>,
    ins_ev: Signal<Local, Bits<16>>,
    hit_lp: Signal<Local, Bits<16>>,
    hit_up: Signal<Local, Bits<16>>,
    hit_ev: Signal<Local, Bits<16>>,
}

impl Default for Tlb {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            reset: Default::default(),
            xlate: Default::default(),
            dispatch: Default::default(),
            ahead: Default::default(),
            ahead_free: Default::default(),
            lk_valid: Default::default(),
            lk_pid: Default::default(),
            lk_vpn: Default::default(),
            res_valid: Default::default(),
            res: Default::default(),
            walk: Default::default(),
            slow: Default::default(),
            gen: Default::default(),
            up_valid: Default::default(),
            up_inval: Default::default(),
            up_pid: Default::default(),
            up_vpn: Default::default(),
            up_pfn: Default::default(),
            up_perms: Default::default(),
            up_alloc: Default::default(),
            u_valid: Default::default(),
            u_inval: Default::default(),
            u_key: Default::default(),
            u_set: Default::default(),
            u_data: Default::default(),
            u_gen_ok: Default::default(),
            u_match: Default::default(),
            u_same: Default::default(),
            m_cur: Default::default(),
            key_lk: core::array::from_fn(|_| Default::default()),
            key_up: core::array::from_fn(|_| Default::default()),
            valid: Default::default(),
            generation: Default::default(),
            data: Default::default(),
            s1_valid: Default::default(),
            s1_key: Default::default(),
            s1_set: Default::default(),
            s1_gen: Default::default(),
            wr_set: Default::default(),
            wr_way: Default::default(),
            s2_valid: Default::default(),
            s2_hit: Default::default(),
            s2_gen: Default::default(),
            gen_now: Default::default(),
            lk_key: Default::default(),
            up_key: Default::default(),
            up_set: Default::default(),
            lk_rev: Default::default(),
            up_rev: Default::default(),
            walk_rev: Default::default(),
            slow_rev: Default::default(),
            s1_at: Default::default(),
            u_at: Default::default(),
            lk_vset: Default::default(),
            m_lk: Default::default(),
            hitvec: Default::default(),
            hit: Default::default(),
            hit_way: Default::default(),
            m_up: Default::default(),
            eq_lk: core::array::from_fn(|_| Default::default()),
            eq_up: core::array::from_fn(|_| Default::default()),
            u_vset: Default::default(),
            u_wr: Default::default(),
            lru_root: Default::default(),
            lru_lo: Default::default(),
            lru_hi: Default::default(),
            u_tree: Default::default(),
            inv_way: Default::default(),
            lru_way: Default::default(),
            tgt_way: Default::default(),
            tgt_vec: Default::default(),
            do_insert: Default::default(),
            do_inval: Default::default(),
            p_set: Default::default(),
            p_any: Default::default(),
            p_way: Default::default(),
            p_hit: Default::default(),
            p_same: Default::default(),
            inv_vec: Default::default(),
            eq_same: Default::default(),
            p_here: Default::default(),
            t_ins: Default::default(),
            ins_lp: Default::default(),
            ins_up: Default::default(),
            ins_ev: Default::default(),
            hit_lp: Default::default(),
            hit_up: Default::default(),
            hit_ev: Default::default(),
        }
    }
}

impl Logic for Tlb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, valid, generation, s1_valid, s1_key, s1_set, s1_gen, wr_set, wr_way,
            s2_valid, s2_hit, s2_gen, lru_root, lru_lo, lru_hi, p_set, p_any, p_way, p_same,
            u_valid, u_inval, u_key, u_set, u_data, u_gen_ok, u_match, u_same
        );
        self.data.read_clock.next = self.clock.val();
        self.data.write_clock.next = self.clock.val();
        // The lookup entering: the translate stage's, Dispatch's, or else the look-ahead's
        // (which looks up only when the port is free).
        self.ahead_free.next = !(self.xlate.valid.val() | self.dispatch.valid.val());
        self.lk_valid.next =
            self.xlate.valid.val() | self.dispatch.valid.val() | self.ahead.valid.val();
        self.lk_pid.next = self.ahead.pid.val();
        self.lk_vpn.next = self.ahead.vpn.val();
        if self.xlate.valid.val() {
            self.lk_pid.next = self.xlate.pid.val();
            self.lk_vpn.next = self.xlate.vpn.val();
        }
        if self.dispatch.valid.val() {
            self.lk_pid.next = self.dispatch.pid.val();
            self.lk_vpn.next = self.dispatch.vpn.val();
        }
        // The update entering: the slow path's, or else the page-fault unit's insert.
        self.up_valid.next = self.walk.valid.val() | self.slow.valid.val();
        self.up_inval.next = false;
        self.up_pid.next = self.walk.pid.val();
        self.up_vpn.next = self.walk.vpn.val();
        self.up_pfn.next = self.walk.pfn.val();
        self.up_perms.next = self.walk.perms.val();
        self.up_alloc.next = false;
        if self.slow.valid.val() {
            self.up_inval.next = self.slow.inval.val();
            self.up_pid.next = self.slow.pid.val();
            self.up_vpn.next = self.slow.vpn.val();
            self.up_pfn.next = self.slow.pfn.val();
            self.up_perms.next = self.slow.perms.val();
            self.up_alloc.next = self.slow.alloc.val();
        }
        self.lk_rev.x.next = self.lk_pid.val();
        self.up_rev.x.next = self.up_pid.val();
        self.lk_key.next =
            (bit_cast::<52, 16>(self.lk_rev.y.val()) << 36) | bit_cast::<52, 36>(self.lk_vpn.val());
        self.up_key.next =
            (bit_cast::<52, 16>(self.up_rev.y.val()) << 36) | bit_cast::<52, 36>(self.up_vpn.val());
        // The update's set from each source's fields, then picked (one LUT per bit: the pick
        // and the XOR of a page bit and a pid bit), not from the picked key.
        self.walk_rev.x.next = self.walk.pid.val().get_bits::<4>(0);
        self.slow_rev.x.next = self.slow.pid.val().get_bits::<4>(0);
        self.up_set.next = self.walk.vpn.val().get_bits::<4>(0) ^ self.walk_rev.y.val();
        if self.slow.valid.val() {
            self.up_set.next = self.slow.vpn.val().get_bits::<4>(0) ^ self.slow_rev.y.val();
        }
        // Lookup, cycle 1: the key and its set registered.
        self.s1_valid.d.next = self.lk_valid.val();
        self.s1_key.d.next = self.lk_key.val();
        self.s1_set.d.next =
            self.lk_key.val().get_bits::<4>(0) ^ self.lk_key.val().get_bits::<4>(48);
        // Cycle 2: the set's keys and valid bits, as the updates up to last cycle's left them.
        self.s1_at.next = bit_cast::<6, 4>(self.s1_set.q.val()) << 2;
        self.u_at.next = bit_cast::<6, 4>(self.u_set.q.val()) << 2;
        self.lk_vset.next = bit_cast::<4, 64>(self.valid.q.val() >> self.s1_at.val());
        for w in 0..4 {
            self.key_lk[w].clock.next = self.clock.val();
            self.key_up[w].clock.next = self.clock.val();
            self.key_lk[w].read_address.next = self.s1_set.q.val();
            self.key_up[w].read_address.next = self.up_set.val();
            self.eq_lk[w].a.next = self.key_lk[w].read_data.val();
            self.eq_lk[w].b.next = self.s1_key.q.val();
            self.m_lk.bits[w].next = self.eq_lk[w].eq.val();
            self.eq_up[w].a.next = self.key_up[w].read_data.val();
            self.eq_up[w].b.next = self.up_key.val();
            self.m_up.bits[w].next = self.eq_up[w].eq.val();
        }
        self.hitvec.next = self.m_lk.out.val() & self.lk_vset.val();
        self.hit.next = self.hitvec.val().any();
        self.hit_way.next =
            bit_cast::<2, 1>((self.hitvec.val().get_bit(1) | self.hitvec.val().get_bit(3)).into())
                | (bit_cast::<2, 1>(
                    (self.hitvec.val().get_bit(2) | self.hitvec.val().get_bit(3)).into(),
                ) << 1);
        self.data.read_address.next =
            (bit_cast::<6, 4>(self.s1_set.q.val()) << 2) | bit_cast::<6, 2>(self.hit_way.val());
        // The update entering: its compare, registered with it for the write stage.
        self.u_valid.d.next = self.up_valid.val();
        self.u_inval.d.next = self.up_inval.val();
        self.u_key.d.next = self.up_key.val();
        self.u_set.d.next = self.up_set.val();
        self.u_data.d.next = (bit_cast::<43, 1>(self.up_alloc.val().into()) << 42)
            | (bit_cast::<43, 2>(self.up_perms.val()) << 40)
            | bit_cast::<43, 40>(self.up_pfn.val());
        self.u_match.d.next = self.m_up.out.val();
        self.eq_same.a.next = self.u_key.q.val();
        self.eq_same.b.next = self.up_key.val();
        self.u_same.d.next = self.u_valid.q.val() & self.eq_same.eq.val();
        // The write stage.
        self.u_vset.next = bit_cast::<4, 64>(self.valid.q.val() >> self.u_at.val());
        self.u_wr.next = 0.into();
        if self.wr_set.q.val() == self.u_set.q.val() {
            self.u_wr.next = self.wr_way.q.val();
        }
        if self.u_same.q.val() {
            self.m_cur.next = (self.u_match.q.val() & self.u_vset.val()) | self.u_wr.val();
        } else {
            self.m_cur.next = self.u_match.q.val() & self.u_vset.val() & !self.u_wr.val();
        }
        self.do_inval.next = self.u_valid.q.val() & self.u_inval.q.val();
        self.gen_now.next = self.generation.q.val();
        if self.do_inval.val() {
            self.gen_now.next = self.generation.q.val() + 1;
        }
        self.u_gen_ok.d.next = self.slow.valid.val() | (self.walk.gen.val() == self.gen_now.val());
        self.do_insert.next = self.u_valid.q.val() & !self.u_inval.q.val() & self.u_gen_ok.q.val();
        // Insert target: the way holding the key, else the lowest invalid one, else the one
        // the set's tree leads to (bit 0: the upper pair; bit 1 / 2: that pair's upper way).
        self.u_tree.next = (bit_cast::<3, 16>(self.lru_root.q.val() >> self.u_set.q.val()) & 1)
            | ((bit_cast::<3, 16>(self.lru_lo.q.val() >> self.u_set.q.val()) & 1) << 1)
            | ((bit_cast::<3, 16>(self.lru_hi.q.val() >> self.u_set.q.val()) & 1) << 2);
        // The pending hit's touch: its set (none if nothing hit) and way.
        self.p_hit.next = 0.into();
        if self.p_any.q.val() {
            self.p_hit.next = self.p_set.q.val();
        }
        self.p_here.next = self.p_same.q.val() & self.p_any.q.val();
        if self.p_here.val() {
            if self.p_way.q.val().get_bit(1) {
                self.lru_way.next = bit_cast::<2, 1>(self.u_tree.val().get_bit(1).into());
            } else {
                self.lru_way.next = bit_cast::<2, 1>(self.u_tree.val().get_bit(2).into()) | 2;
            }
        } else if self.u_tree.val().get_bit(0) {
            self.lru_way.next = bit_cast::<2, 1>(self.u_tree.val().get_bit(2).into()) | 2;
        } else {
            self.lru_way.next = bit_cast::<2, 1>(self.u_tree.val().get_bit(1).into());
        }
        self.inv_vec.next = 0.into();
        if !self.u_vset.val().get_bit(0) {
            self.inv_vec.next = 1.into();
        } else if !self.u_vset.val().get_bit(1) {
            self.inv_vec.next = 2.into();
        } else if !self.u_vset.val().get_bit(2) {
            self.inv_vec.next = 4.into();
        } else if !self.u_vset.val().get_bit(3) {
            self.inv_vec.next = 8.into();
        }
        if !self.u_vset.val().get_bit(0) {
            self.inv_way.next = 0.into();
        } else if !self.u_vset.val().get_bit(1) {
            self.inv_way.next = 1.into();
        } else if !self.u_vset.val().get_bit(2) {
            self.inv_way.next = 2.into();
        } else {
            self.inv_way.next = 3.into();
        }
        if self.m_cur.val().any() {
            self.tgt_way.next = bit_cast::<2, 1>(
                (self.m_cur.val().get_bit(1) | self.m_cur.val().get_bit(3)).into(),
            ) | (bit_cast::<2, 1>(
                (self.m_cur.val().get_bit(2) | self.m_cur.val().get_bit(3)).into(),
            ) << 1);
        } else if !self.u_vset.val().all() {
            self.tgt_way.next = self.inv_way.val();
        } else {
            self.tgt_way.next = self.lru_way.val();
        }
        self.tgt_vec.next = bit_cast::<4, 1>(1.into()) << self.tgt_way.val();
        for w in 0..4 {
            self.key_lk[w].write_address.next = self.u_set.q.val();
            self.key_up[w].write_address.next = self.u_set.q.val();
            self.key_lk[w].write_data.next = self.u_key.q.val();
            self.key_up[w].write_data.next = self.u_key.q.val();
            self.key_lk[w].write_enable.next = self.do_insert.val() & self.tgt_vec.val().get_bit(w);
            self.key_up[w].write_enable.next = self.do_insert.val() & self.tgt_vec.val().get_bit(w);
        }
        if self.do_inval.val() {
            self.valid.d.next =
                self.valid.q.val() & !(bit_cast::<64, 4>(self.m_cur.val()) << self.u_at.val());
            self.generation.d.next = self.generation.q.val() + 1;
        }
        self.wr_set.d.next = self.u_set.q.val();
        // An insert's target is valid already unless it is the lowest invalid way (no way
        // holds its key and one is free): only then is a valid bit set, so the bits do not
        // wait for the target's choice.
        if self.do_insert.val() {
            if !self.m_cur.val().any() {
                self.valid.d.next =
                    self.valid.q.val() | (bit_cast::<64, 4>(self.inv_vec.val()) << self.u_at.val());
            }
            self.wr_way.d.next = self.tgt_vec.val();
        } else {
            self.wr_way.d.next = 0.into();
        }
        self.data.write_enable.next = self.do_insert.val();
        self.data.write_address.next =
            (bit_cast::<6, 4>(self.u_set.q.val()) << 2) | bit_cast::<6, 2>(self.tgt_way.val());
        self.data.write_data.next = self.u_data.q.val();
        // Replacement touches: a hit's is decided now (none when an insert touches in the same
        // cycle: it wins) and applied next cycle; the insert's now, after the pending hit's
        // (the hit came first). The root turns to the pair away from the way, the way's pair
        // bit to the other way of the pair; per set, so no set's tree is read to be rewritten.
        self.p_set.d.next = 0.into();
        if self.s1_valid.q.val() & !self.do_insert.val() {
            self.p_set.d.next = bit_cast::<16, 1>(1.into()) << self.s1_set.q.val();
        }
        self.p_any.d.next = self.hit.val();
        self.p_way.d.next = self.hit_way.val();
        self.p_same.d.next = self.s1_valid.q.val()
            & !self.do_insert.val()
            & (self.s1_set.q.val() == self.up_set.val());
        self.t_ins.next = 0.into();
        if self.do_insert.val() {
            self.t_ins.next = bit_cast::<16, 1>(1.into()) << self.u_set.q.val();
        }
        self.ins_lp.next = 0.into();
        self.ins_up.next = 0.into();
        self.hit_lp.next = 0.into();
        self.hit_up.next = 0.into();
        if self.tgt_way.val().get_bit(1) {
            self.ins_up.next = self.t_ins.val();
        } else {
            self.ins_lp.next = self.t_ins.val();
        }
        if self.p_way.q.val().get_bit(1) {
            self.hit_up.next = self.p_hit.val();
        } else {
            self.hit_lp.next = self.p_hit.val();
        }
        self.ins_ev.next = 0.into();
        if !self.tgt_way.val().get_bit(0) {
            self.ins_ev.next = self.t_ins.val();
        }
        self.hit_ev.next = 0.into();
        if !self.p_way.q.val().get_bit(0) {
            self.hit_ev.next = self.p_hit.val();
        }
        // Where both touch a set, the insert's bits win over the pending hit's.
        self.lru_root.d.next = (self.lru_root.q.val() & !(self.t_ins.val() | self.p_hit.val()))
            | self.ins_lp.val()
            | (self.hit_lp.val() & !self.t_ins.val());
        self.lru_lo.d.next = (self.lru_lo.q.val() & !(self.ins_lp.val() | self.hit_lp.val()))
            | (self.ins_lp.val() & self.ins_ev.val())
            | (self.hit_lp.val() & self.hit_ev.val() & !self.ins_lp.val());
        self.lru_hi.d.next = (self.lru_hi.q.val() & !(self.ins_up.val() | self.hit_up.val()))
            | (self.ins_up.val() & self.ins_ev.val())
            | (self.hit_up.val() & self.hit_ev.val() & !self.ins_up.val());
        self.s1_gen.d.next = self.gen_now.val();
        self.s2_valid.d.next = self.s1_valid.q.val();
        self.s2_hit.d.next = self.hit.val();
        self.s2_gen.d.next = self.s1_gen.q.val();
        if self.reset.val() {
            self.valid.d.next = 0.into();
            self.generation.d.next = 0.into();
            self.s1_valid.d.next = false;
            self.s2_valid.d.next = false;
            self.lru_root.d.next = 0.into();
            self.lru_lo.d.next = 0.into();
            self.lru_hi.d.next = 0.into();
            self.p_set.d.next = 0.into();
            self.u_valid.d.next = false;
            self.wr_way.d.next = 0.into();
        }
        self.res_valid.next = self.s2_valid.q.val();
        self.res.hit.next = self.s2_hit.q.val();
        self.res.pfn.next = self.data.read_data.val().get_bits::<40>(0);
        self.res.perms.next = self.data.read_data.val().get_bits::<2>(40);
        self.res.alloc.next = self.data.read_data.val().get_bit(42);
        self.res.gen.next = self.s2_gen.q.val();
        self.gen.next = self.gen_now.val();
    }
}

crate::impl_clocked!(Tlb);

#[cfg(test)]
mod tests;
