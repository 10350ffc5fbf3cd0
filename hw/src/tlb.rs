//! The TLB: a fully associative CAM on `(pid, vpn)` with tree pseudo-LRU replacement.
//!
//! * Lookup port: `lk_*` in, `res_*` out [`TLB_LATENCY`] cycles later, II = 1. Cycle 1 compares
//!   the key against all [`ENTRIES`] tags (flip-flops); cycle 2 masks the match vector with the
//!   live valid bits, encodes it and reads the translation from a 64 x 43 RAM.
//! * Update port (`up_*`): insert (from the walker / page-fault unit) or invalidate (from the
//!   slow path), one per cycle, in two stages. The cycle an update enters, its key is compared
//!   against all tags and the match vector registered (`u_match`, with the update itself); the
//!   next cycle (the write stage) picks the target and writes, so the compare and the
//!   target's select are not in one cycle. Lookups see an update from the cycle after it
//!   enters, as with a one-cycle port: a lookup compared in the write stage's cycle misses an
//!   entry being invalidated or rewritten (the second cycle's mask) and hits an entry being
//!   inserted for its key (`s1_fwd`: the tags do not hold it yet, so the write stage's key is
//!   compared too and the lookup takes the entry written). An insert whose key is present
//!   overwrites that entry (never a duplicate); otherwise it takes the lowest invalid entry,
//!   else the least recently used one. Back-to-back updates: the entering update's compare
//!   does not see what the one in the write stage is writing, so its match is corrected there
//!   (`m_cur`): the entry the previous insert wrote is added when the keys are equal
//!   (`u_same`, a compare against the write stage's key register) and removed otherwise, and
//!   entries invalidated since drop out through the live valid bits.
//! * Replacement: a tree pseudo-LRU, 63 bits (`plru`, heap order: node 1 is the root, node
//!   `n`'s children are `2n` and `2n + 1`, entry `i` is leaf `64 + i`). Node bit 1 says the
//!   victim is in the node's upper half. Touching entry `t` sets every node on its path to
//!   point away from it; the victim is the leaf the bits lead to from the root. A hit touches
//!   its entry; an insert touches its target and wins over a hit in the same cycle. The touch
//!   is decided in its cycle and applied to the bits in the next (`pending`, one-hot), so the
//!   half-subtree ORs the update needs are not behind the CAM compare in one cycle. The
//!   replacement stays exact: an insert that picks its victim while a touch is pending sees it
//!   applied. The pending touch moves every node on its path, but the victim is only ever in
//!   the root's half away from the touched entry, where no node is on that path: so only the
//!   root is taken with the touch applied (`lru_root`), the five levels below it from the
//!   register as it is (`lru_m5`). Against the true LRU it replaces (64 six-bit ages, 64
//!   compares and increments per touch) this is 63 flip-flops and one AND per entry, in
//!   synthesis and in the cosimulation alike (docs/hardware.md "tlb", docs/cosim.md
//!   "Simulation speed"). The most recently touched entry is never the victim; otherwise the
//!   choice approximates LRU, as in every pseudo-LRU.
//!
//! Consistency with in-flight requests (paper §4.2): a lookup is linearised at its compare
//! cycle, except that an entry invalidated or rewritten before its second cycle turns the
//! lookup into a miss (the mask with the live valid bits and with `wr_last`). Every lookup
//! returns the invalidation generation it saw (`res_gen`); an insert carries the generation
//! of the lookup that missed and is dropped if an invalidation happened since (compared as it
//! enters with the generation the write stage will see, and dropped there), so a walk that raced with a slow-path PTE change can never reinstate a stale
//! translation. `gen` is the generation as it is once the update in the write stage is done,
//! so an insert entering behind an invalidation with `up_gen = gen` is not dropped.

use crate::util::Gather;
use clio_proto::consts::{TLB_ENTRIES, VPN_BITS};
use rust_hdl::prelude::*;

// The tag is the PTE's word0 bits 0..52, `pid << 36 | vpn`.
const _: () = assert!(VPN_BITS == 36 && clio_proto::pte::PID_SHIFT == 36);
// One bit per entry in every vector and a six-level replacement tree.
const _: () = assert!(TLB_ENTRIES == 64);

/// Entries (from `proto::consts::TLB_ENTRIES`).
pub const ENTRIES: usize = TLB_ENTRIES;
/// Cycles from `lk_valid` to `res_valid`.
pub const TLB_LATENCY: usize = 2;

/// The TLB.
#[derive(LogicBlock)]
pub struct Tlb {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: all entries invalid, every replacement bit 0, generation 0.
    pub reset: Signal<In, Bit>,
    /// A lookup enters.
    pub lk_valid: Signal<In, Bit>,
    /// Lookup process id.
    pub lk_pid: Signal<In, Bits<16>>,
    /// Lookup virtual page number.
    pub lk_vpn: Signal<In, Bits<36>>,
    /// Result of the lookup issued [`TLB_LATENCY`] cycles ago.
    pub res_valid: Signal<Out, Bit>,
    /// The translation was present.
    pub res_hit: Signal<Out, Bit>,
    /// Frame number (when hit).
    pub res_pfn: Signal<Out, Bits<40>>,
    /// Permissions `READ | WRITE << 1` (when hit).
    pub res_perms: Signal<Out, Bits<2>>,
    /// The entry is an allocated page not yet mapped (when hit): `res_pfn` then holds its
    /// PTE's location, `bucket << 4 | slot`, and the access is a first touch that the
    /// page-fault unit can serve without a walk.
    pub res_alloc: Signal<Out, Bit>,
    /// Invalidation generation at the lookup (give it back with the insert after a walk).
    pub res_gen: Signal<Out, Bits<16>>,
    /// An update enters.
    pub up_valid: Signal<In, Bit>,
    /// The update is an invalidation (else an insert).
    pub up_inval: Signal<In, Bit>,
    /// Update process id.
    pub up_pid: Signal<In, Bits<16>>,
    /// Update virtual page number.
    pub up_vpn: Signal<In, Bits<36>>,
    /// Insert: frame number.
    pub up_pfn: Signal<In, Bits<40>>,
    /// Insert: permissions.
    pub up_perms: Signal<In, Bits<2>>,
    /// Insert: an allocated, unmapped page (`up_pfn` = its PTE's location).
    pub up_alloc: Signal<In, Bit>,
    /// Insert: the generation returned by the lookup that missed.
    pub up_gen: Signal<In, Bits<16>>,
    /// Invalidation generation, counting an invalidation in the write stage.
    pub gen: Signal<Out, Bits<16>>,
    /// The write stage holds an update (it entered last cycle).
    u_valid: DFF<Bit>,
    /// ... an invalidation (else an insert).
    u_inval: DFF<Bit>,
    /// ... its key, `pid << 36 | vpn`.
    u_key: DFF<Bits<52>>,
    /// ... its entry data, `alloc << 42 | perms << 40 | pfn`.
    u_data: DFF<Bits<43>>,
    /// ... its generation (an insert's) equals the generation as it is in the write stage
    /// (`gen_now` of the cycle it entered: the update then in the write stage counted), so the
    /// write stage's drop test is one gate from flip-flops.
    u_gen_ok: DFF<Bit>,
    /// ... the valid entries that held its key when it entered.
    u_match: DFF<Bits<64>>,
    /// ... its key is the one of the update that was in the write stage when it entered.
    u_same: DFF<Bit>,
    /// The valid entries holding the write stage's key now: `u_match` corrected for the
    /// update written last cycle (`wr_last`).
    m_cur: Signal<Local, Bits<64>>,
    key: [DFF<Bits<52>>; ENTRIES],
    valid: DFF<Bits<64>>,
    generation: DFF<Bits<16>>,
    data: RAM<Bits<43>, 6>,
    s1_valid: DFF<Bit>,
    s1_match: DFF<Bits<64>>,
    s1_gen: DFF<Bits<16>>,
    wr_last: DFF<Bits<64>>,
    s2_valid: DFF<Bit>,
    s2_hit: DFF<Bit>,
    s2_gen: DFF<Bits<16>>,
    /// The lookup in the second cycle compared in the write stage's cycle of an insert of its
    /// own key, which the tags did not hold yet: it hits the entry written (`wr_last`).
    s1_fwd: DFF<Bit>,
    /// The generation once the write stage's update is done (a lookup compared now sees
    /// that update).
    gen_now: Signal<Local, Bits<16>>,
    lk_key: Signal<Local, Bits<52>>,
    up_key: Signal<Local, Bits<52>>,
    m_lk: Gather<64>,
    m_up: Gather<64>,
    /// The replacement tree: bit `n` (1..64) for node `n`, 1 when the victim is in its upper
    /// half; bit 0 is unused.
    plru: DFF<Bits<64>>,
    /// The touch decided last cycle, applied to `plru` this cycle (one-hot, or zero).
    pending: DFF<Bits<64>>,
    /// Per node: the pending touch is in its lower half (the node is set to point up) ...
    touch_lo: Gather<64>,
    /// ... in its upper half (the node is set to point down).
    touch_hi: Gather<64>,
    /// Per node: the entries of its lower and upper half (node 0: none).
    half_lo: [Constant<Bits<64>>; 64],
    half_hi: [Constant<Bits<64>>; 64],
    /// Per entry: the nodes of levels 1..=5 on its path, and of those the ones whose upper
    /// half holds it (the bit that leads to it).
    path5: [Constant<Bits<64>>; ENTRIES],
    dir5: [Constant<Bits<64>>; ENTRIES],
    /// The entries whose path below the root `plru` leads to.
    lru_m5: Gather<64>,
    /// The root's bit with the pending touch applied: the victim's half.
    lru_root: Signal<Local, Bit>,
    /// The victim (one-hot).
    lru_vec: Signal<Local, Bits<64>>,
    /// Its index within the lower half and within the upper half (both from `lru_m5`, so
    /// the encoders are not behind `lru_root`), and the one `lru_root` picks.
    idx_lru_lo: Gather<5>,
    idx_lru_hi: Gather<5>,
    idx_lru: Signal<Local, Bits<6>>,
    /// `enc` masked to the lower and to the upper half (bits 0..5 of the index).
    enc_lo: [Constant<Bits<64>>; 5],
    enc_hi: [Constant<Bits<64>>; 5],
    inv: Signal<Local, Bits<64>>,
    victim: Signal<Local, Bits<64>>,
    target: Signal<Local, Bits<64>>,
    hitvec: Signal<Local, Bits<64>>,
    hit: Signal<Local, Bit>,
    do_insert: Signal<Local, Bit>,
    do_inval: Signal<Local, Bit>,
    touch: Signal<Local, Bit>,
    touch_vec: Signal<Local, Bits<64>>,
    enc: [Constant<Bits<64>>; 6],
    hit_idx: Gather<6>,
    /// The insert target's index, encoded from each candidate in parallel (not from the
    /// one-hot `target`: the encoder would follow the lowest-invalid carry chain and the
    /// target select): the entry holding the key, the lowest invalid one, the victim.
    idx_up: Gather<6>,
    idx_inv: Gather<6>,
    tgt_idx: Signal<Local, Bits<6>>,
    /// The lowest invalid entry, as a two-level priority encoder: each byte of `inv`, its
    /// lowest set bit (one-hot in the byte), whether it has one, the lowest such byte (one-hot),
    /// and the lowest bit's index in each byte (bit k of the index, one bit per byte).
    inv_low: [Signal<Local, Bits<8>>; 8],
    inv_any: Gather<8>,
    inv_byte: Signal<Local, Bits<8>>,
    inv_lo0: Gather<8>,
    inv_lo1: Gather<8>,
    inv_lo2: Gather<8>,
    /// Masks of the indices 0..8 with bit k set (k = 0, 1, 2).
    enc8: [Constant<Bits<8>>; 3],
}

/// The entries of the lower half of the table (the root's lower subtree).
const LOWER_HALF: u64 = 0xFFFF_FFFF;

/// The entries whose index has bit `k` set.
const fn enc_bits(k: usize) -> u64 {
    let mut m = 0u64;
    let mut i = 0;
    while i < 64 {
        if (i >> k) & 1 == 1 {
            m |= 1 << i;
        }
        i += 1;
    }
    m
}

/// The entries of node `n`'s lower (`upper` false) or upper half; none for node 0, which is
/// not a node. Node `n` at level `l` (`2^l <= n < 2^(l+1)`) spans `64 >> l` entries from
/// `(n - 2^l) * (64 >> l)`.
fn node_half(n: usize, upper: bool) -> u64 {
    if n == 0 || n >= ENTRIES {
        return 0;
    }
    let l = n.ilog2() as usize;
    let span = ENTRIES >> l;
    let first = (n - (1 << l)) * span + if upper { span / 2 } else { 0 };
    (first..first + span / 2).fold(0u64, |m, i| m | 1 << i)
}

/// Entry `i`'s path below the root: the mask of its nodes at levels 1..=5, and the bits those
/// nodes hold when they lead to it (1 where it is in the node's upper half).
fn leaf_path(i: usize) -> (u64, u64) {
    let (mut path, mut dir) = (0u64, 0u64);
    for l in 1..6 {
        let node = (ENTRIES + i) >> (6 - l);
        path |= 1 << node;
        if (i >> (5 - l)) & 1 == 1 {
            dir |= 1 << node;
        }
    }
    (path, dir)
}

impl Default for Tlb {
    fn default() -> Self {
        let enc = crate::util::onehot_index_masks();
        Self {
            clock: Default::default(),
            reset: Default::default(),
            lk_valid: Default::default(),
            lk_pid: Default::default(),
            lk_vpn: Default::default(),
            res_valid: Default::default(),
            res_hit: Default::default(),
            res_pfn: Default::default(),
            res_perms: Default::default(),
            res_alloc: Default::default(),
            res_gen: Default::default(),
            up_valid: Default::default(),
            up_inval: Default::default(),
            up_pid: Default::default(),
            up_vpn: Default::default(),
            up_pfn: Default::default(),
            up_perms: Default::default(),
            up_alloc: Default::default(),
            up_gen: Default::default(),
            gen: Default::default(),
            u_valid: Default::default(),
            u_inval: Default::default(),
            u_key: Default::default(),
            u_data: Default::default(),
            u_gen_ok: Default::default(),
            u_match: Default::default(),
            u_same: Default::default(),
            m_cur: Default::default(),
            key: core::array::from_fn(|_| DFF::default()),
            valid: Default::default(),
            generation: Default::default(),
            data: Default::default(),
            s1_valid: Default::default(),
            s1_match: Default::default(),
            s1_gen: Default::default(),
            wr_last: Default::default(),
            s2_valid: Default::default(),
            s2_hit: Default::default(),
            s2_gen: Default::default(),
            s1_fwd: Default::default(),
            gen_now: Default::default(),
            lk_key: Default::default(),
            up_key: Default::default(),
            m_lk: Default::default(),
            m_up: Default::default(),
            plru: Default::default(),
            pending: Default::default(),
            touch_lo: Default::default(),
            touch_hi: Default::default(),
            half_lo: core::array::from_fn(|n| Constant::new(node_half(n, false).to_bits())),
            half_hi: core::array::from_fn(|n| Constant::new(node_half(n, true).to_bits())),
            path5: core::array::from_fn(|i| Constant::new(leaf_path(i).0.to_bits())),
            dir5: core::array::from_fn(|i| Constant::new(leaf_path(i).1.to_bits())),
            lru_m5: Default::default(),
            lru_root: Default::default(),
            lru_vec: Default::default(),
            idx_lru_lo: Default::default(),
            idx_lru_hi: Default::default(),
            idx_lru: Default::default(),
            enc_lo: core::array::from_fn(|k| Constant::new((enc_bits(k) & LOWER_HALF).to_bits())),
            enc_hi: core::array::from_fn(|k| Constant::new((enc_bits(k) & !LOWER_HALF).to_bits())),
            inv: Default::default(),
            victim: Default::default(),
            target: Default::default(),
            hitvec: Default::default(),
            hit: Default::default(),
            do_insert: Default::default(),
            do_inval: Default::default(),
            touch: Default::default(),
            touch_vec: Default::default(),
            enc,
            hit_idx: Default::default(),
            idx_up: Default::default(),
            idx_inv: Default::default(),
            tgt_idx: Default::default(),
            inv_low: Default::default(),
            inv_any: Default::default(),
            inv_byte: Default::default(),
            inv_lo0: Default::default(),
            inv_lo1: Default::default(),
            inv_lo2: Default::default(),
            enc8: [
                Constant::new(0xAAu8.to_bits()),
                Constant::new(0xCCu8.to_bits()),
                Constant::new(0xF0u8.to_bits()),
            ],
        }
    }
}

impl Logic for Tlb {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, valid, generation, s1_valid, s1_match, s1_gen, wr_last, s2_valid, s2_hit,
            s2_gen, s1_fwd, plru, pending, u_valid, u_inval, u_key, u_data, u_gen_ok, u_match,
            u_same
        );
        for i in 0..64 {
            self.key[i].clock.next = self.clock.val();
            self.key[i].d.next = self.key[i].q.val();
        }
        self.data.read_clock.next = self.clock.val();
        self.data.write_clock.next = self.clock.val();
        self.lk_key.next =
            (bit_cast::<52, 16>(self.lk_pid.val()) << 36) | bit_cast::<52, 36>(self.lk_vpn.val());
        self.up_key.next =
            (bit_cast::<52, 16>(self.up_pid.val()) << 36) | bit_cast::<52, 36>(self.up_vpn.val());
        // The CAM: both ports compare against every tag. The lookup's match leaves out `valid`
        // (the second cycle masks it with `valid` as it is then: an entry that was invalid at
        // the compare is either still invalid or was written since, `wr_last`, and dropped), so
        // the compare is all that is in front of `s1_match`.
        for i in 0..64 {
            self.m_lk.bits[i].next = self.key[i].q.val() == self.lk_key.val();
            self.m_up.bits[i].next =
                self.valid.q.val().get_bit(i) & (self.key[i].q.val() == self.up_key.val());
            self.lru_m5.bits[i].next =
                ((self.plru.q.val() ^ self.dir5[i].val()) & self.path5[i].val()) == 0;
        }
        // The pending touch, per node: which half of the node holds it.
        for n in 0..64 {
            self.touch_lo.bits[n].next = (self.pending.q.val() & self.half_lo[n].val()).any();
            self.touch_hi.bits[n].next = (self.pending.q.val() & self.half_hi[n].val()).any();
        }
        // Every node on the touched entry's path points away from it.
        self.plru.d.next = (self.plru.q.val() & !self.touch_hi.out.val()) | self.touch_lo.out.val();
        // The victim: in the root's half away from a pending touch (or where the root points),
        // then down the register's bits.
        self.lru_root.next = self.touch_lo.out.val().get_bit(1)
            | (!self.touch_hi.out.val().get_bit(1) & self.plru.q.val().get_bit(1));
        if self.lru_root.val() {
            self.lru_vec.next = self.lru_m5.out.val() & self.enc[5].val();
        } else {
            self.lru_vec.next = self.lru_m5.out.val() & !self.enc[5].val();
        }
        for k in 0..5 {
            self.idx_lru_lo.bits[k].next = (self.lru_m5.out.val() & self.enc_lo[k].val()).any();
            self.idx_lru_hi.bits[k].next = (self.lru_m5.out.val() & self.enc_hi[k].val()).any();
        }
        if self.lru_root.val() {
            self.idx_lru.next = bit_cast::<6, 5>(self.idx_lru_hi.out.val()) | 32;
        } else {
            self.idx_lru.next = bit_cast::<6, 5>(self.idx_lru_lo.out.val());
        }
        // The update entering: its compare, registered with it for the write stage.
        self.u_valid.d.next = self.up_valid.val();
        self.u_inval.d.next = self.up_inval.val();
        self.u_key.d.next = self.up_key.val();
        self.u_data.d.next = (bit_cast::<43, 1>(self.up_alloc.val().into()) << 42)
            | (bit_cast::<43, 2>(self.up_perms.val()) << 40)
            | bit_cast::<43, 40>(self.up_pfn.val());
        self.u_match.d.next = self.m_up.out.val();
        self.u_same.d.next = self.u_valid.q.val() & (self.u_key.q.val() == self.up_key.val());
        // The write stage.
        if self.u_same.q.val() {
            self.m_cur.next = (self.u_match.q.val() & self.valid.q.val()) | self.wr_last.q.val();
        } else {
            self.m_cur.next = self.u_match.q.val() & self.valid.q.val() & !self.wr_last.q.val();
        }
        self.do_inval.next = self.u_valid.q.val() & self.u_inval.q.val();
        self.gen_now.next = self.generation.q.val();
        if self.do_inval.val() {
            self.gen_now.next = self.generation.q.val() + 1;
        }
        self.u_gen_ok.d.next = self.up_gen.val() == self.gen_now.val();
        self.do_insert.next = self.u_valid.q.val() & !self.u_inval.q.val() & self.u_gen_ok.q.val();
        // Insert target: the entry holding the key, else the lowest invalid one, else the LRU one.
        self.inv.next = !self.valid.q.val();
        if self.inv.val().any() {
            self.victim.next = self.inv.val() & (!self.inv.val() + 1);
        } else {
            self.victim.next = self.lru_vec.val();
        }
        if self.m_cur.val().any() {
            self.target.next = self.m_cur.val();
        } else {
            self.target.next = self.victim.val();
        }
        // Second lookup cycle: drop entries invalidated or rewritten since the compare.
        if self.s1_fwd.q.val() {
            self.hitvec.next = self.wr_last.q.val();
        } else {
            self.hitvec.next = self.s1_match.q.val() & self.valid.q.val() & !self.wr_last.q.val();
        }
        self.hit.next = self.hitvec.val().any();
        for k in 0..6 {
            self.hit_idx.bits[k].next = (self.hitvec.val() & self.enc[k].val()).any();
            self.idx_up.bits[k].next = (self.m_cur.val() & self.enc[k].val()).any();
        }
        // Replacement touch: decided now, applied to `plru` next cycle.
        self.touch.next = self.do_insert.val() | (self.s1_valid.q.val() & self.hit.val());
        if self.do_insert.val() {
            self.touch_vec.next = self.target.val();
        } else {
            self.touch_vec.next = self.hitvec.val();
        }
        if self.touch.val() {
            self.pending.d.next = self.touch_vec.val();
        } else {
            self.pending.d.next = 0.into();
        }
        for i in 0..64 {
            if self.do_insert.val() & self.target.val().get_bit(i) {
                self.key[i].d.next = self.u_key.q.val();
            }
        }
        if self.do_inval.val() {
            self.valid.d.next = self.valid.q.val() & !self.m_cur.val();
            self.generation.d.next = self.generation.q.val() + 1;
        }
        if self.do_insert.val() {
            self.valid.d.next = self.valid.q.val() | self.target.val();
            self.wr_last.d.next = self.target.val();
        } else {
            self.wr_last.d.next = 0.into();
        }
        self.data.write_enable.next = self.do_insert.val();
        // The lowest invalid entry's index: byte by byte, then the lowest byte that has one.
        for g in 0..8 {
            self.inv_low[g].next =
                self.inv.val().get_bits::<8>(8 * g) & (!self.inv.val().get_bits::<8>(8 * g) + 1);
            self.inv_any.bits[g].next = self.inv.val().get_bits::<8>(8 * g).any();
            self.inv_lo0.bits[g].next = (self.inv_low[g].val() & self.enc8[0].val()).any();
            self.inv_lo1.bits[g].next = (self.inv_low[g].val() & self.enc8[1].val()).any();
            self.inv_lo2.bits[g].next = (self.inv_low[g].val() & self.enc8[2].val()).any();
        }
        self.inv_byte.next = self.inv_any.out.val() & (!self.inv_any.out.val() + 1);
        self.idx_inv.bits[0].next = (self.inv_byte.val() & self.inv_lo0.out.val()).any();
        self.idx_inv.bits[1].next = (self.inv_byte.val() & self.inv_lo1.out.val()).any();
        self.idx_inv.bits[2].next = (self.inv_byte.val() & self.inv_lo2.out.val()).any();
        self.idx_inv.bits[3].next = (self.inv_byte.val() & self.enc8[0].val()).any();
        self.idx_inv.bits[4].next = (self.inv_byte.val() & self.enc8[1].val()).any();
        self.idx_inv.bits[5].next = (self.inv_byte.val() & self.enc8[2].val()).any();
        // The target's index, in the order `target` is chosen.
        if self.m_cur.val().any() {
            self.tgt_idx.next = self.idx_up.out.val();
        } else if self.inv.val().any() {
            self.tgt_idx.next = self.idx_inv.out.val();
        } else {
            self.tgt_idx.next = self.idx_lru.val();
        }
        self.data.write_address.next = self.tgt_idx.val();
        self.data.write_data.next = self.u_data.q.val();
        self.data.read_address.next = self.hit_idx.out.val();
        self.s1_valid.d.next = self.lk_valid.val();
        self.s1_match.d.next = self.m_lk.out.val();
        self.s1_fwd.d.next = self.do_insert.val() & (self.lk_key.val() == self.u_key.q.val());
        self.s1_gen.d.next = self.gen_now.val();
        self.s2_valid.d.next = self.s1_valid.q.val();
        self.s2_hit.d.next = self.hit.val();
        self.s2_gen.d.next = self.s1_gen.q.val();
        if self.reset.val() {
            self.valid.d.next = 0.into();
            self.generation.d.next = 0.into();
            self.s1_valid.d.next = false;
            self.s2_valid.d.next = false;
            self.pending.d.next = 0.into();
            self.plru.d.next = 0.into();
            self.u_valid.d.next = false;
        }
        self.res_valid.next = self.s2_valid.q.val();
        self.res_hit.next = self.s2_hit.q.val();
        self.res_pfn.next = self.data.read_data.val().get_bits::<40>(0);
        self.res_perms.next = self.data.read_data.val().get_bits::<2>(40);
        self.res_alloc.next = self.data.read_data.val().get_bit(42);
        self.res_gen.next = self.s2_gen.q.val();
        self.gen.next = self.gen_now.val();
    }
}

crate::impl_clocked!(Tlb);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;

    /// A plain-Rust model of the same TLB (same replacement and consistency rules).
    #[derive(Clone)]
    struct Model {
        key: [u64; ENTRIES],
        data: [u64; ENTRIES],
        valid: u64,
        /// The replacement tree, bit `n` for node `n` as in the RTL.
        plru: u64,
        gen: u16,
    }

    impl Model {
        fn new() -> Model {
            Model {
                key: [0; ENTRIES],
                data: [0; ENTRIES],
                valid: 0,
                plru: 0,
                gen: 0,
            }
        }
        fn find(&self, key: u64) -> Option<usize> {
            (0..ENTRIES).find(|&i| self.valid >> i & 1 == 1 && self.key[i] == key)
        }
        /// Every node on `t`'s path points away from it.
        fn touch(&mut self, t: usize) {
            for l in 0..6 {
                let node = (ENTRIES + t) >> (6 - l);
                if (t >> (5 - l)) & 1 == 1 {
                    self.plru &= !(1 << node);
                } else {
                    self.plru |= 1 << node;
                }
            }
        }
        /// The leaf the bits lead to from the root.
        fn victim(&self) -> usize {
            let mut n = 1;
            while n < ENTRIES {
                n = 2 * n + (self.plru >> n & 1) as usize;
            }
            n - ENTRIES
        }
        fn insert(&mut self, key: u64, data: u64) -> usize {
            let t = self.find(key).unwrap_or_else(|| {
                (0..ENTRIES)
                    .find(|&i| self.valid >> i & 1 == 0)
                    .unwrap_or_else(|| self.victim())
            });
            self.key[t] = key;
            self.data[t] = data;
            self.valid |= 1 << t;
            self.touch(t);
            t
        }
        fn invalidate(&mut self, key: u64) {
            if let Some(i) = self.find(key) {
                self.valid &= !(1 << i);
            }
            self.gen = self.gen.wrapping_add(1);
        }
    }

    fn key(pid: u16, vpn: u64) -> u64 {
        (pid as u64) << 36 | vpn
    }

    fn set_lookup(b: &mut Bench<Tlb>, v: bool, pid: u16, vpn: u64) {
        b.uut.lk_valid.next = v;
        b.uut.lk_pid.next = pid.to_bits();
        b.uut.lk_vpn.next = vpn.to_bits();
    }

    #[allow(clippy::too_many_arguments)] // one argument per update port of the TLB
    fn set_update(
        b: &mut Bench<Tlb>,
        v: bool,
        inval: bool,
        pid: u16,
        vpn: u64,
        pfn: u64,
        perms: u8,
        gen: u16,
    ) {
        b.uut.up_valid.next = v;
        b.uut.up_inval.next = inval;
        b.uut.up_pid.next = pid.to_bits();
        b.uut.up_vpn.next = vpn.to_bits();
        b.uut.up_pfn.next = pfn.to_bits();
        b.uut.up_perms.next = (perms as u64).to_bits();
        b.uut.up_gen.next = gen.to_bits();
    }

    fn reset(b: &mut Bench<Tlb>) {
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
    }

    /// Random lookups, inserts and invalidations (with occasional stale-generation inserts)
    /// on a small key space so that the 64 entries overflow and the replacement decides; every result is
    /// compared with the model. Updates come back to back; lookups are issued in quiet cycles
    /// (no update in the same or the next cycle; the update of the cycle before is visible
    /// through the write stage's forward) so the model's linearisation is unambiguous; the
    /// racing cases have their own tests below.
    #[test]
    fn matches_model_with_tree_replacement() {
        let mut b = Bench::new(Tlb::default());
        reset(&mut b);
        let mut m = Model::new();
        let mut rng = 0x2545_F491_4F6C_DD1Du64;
        let mut rnd = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let (mut hits, mut misses) = (0, 0);
        for _ in 0..400 {
            let r = rnd();
            let pid = (r % 3) as u16 + 1;
            let vpn = (r >> 8) % 40;
            match r >> 60 {
                0..=7 => {
                    // insert, sometimes with a stale generation
                    let stale = r >> 59 & 1 == 1 && m.gen > 0;
                    let gen = if stale { m.gen.wrapping_sub(1) } else { m.gen };
                    let pfn = (r >> 20) & 0xFF_FFFF;
                    let perms = (r >> 50) as u8 & 3;
                    set_update(&mut b, true, false, pid, vpn, pfn, perms, gen);
                    b.tick();
                    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
                    if !stale {
                        m.insert(key(pid, vpn), perms as u64);
                        let t = m.find(key(pid, vpn)).unwrap();
                        m.data[t] = (perms as u64) << 40 | pfn;
                    }
                }
                8..=9 => {
                    set_update(&mut b, true, true, pid, vpn, 0, 0, 0);
                    b.tick();
                    set_update(&mut b, false, false, 0, 0, 0, 0, 0);
                    m.invalidate(key(pid, vpn));
                }
                _ => {
                    set_lookup(&mut b, true, pid, vpn);
                    b.tick();
                    set_lookup(&mut b, false, 0, 0);
                    b.tick();
                    b.settle();
                    assert!(b.uut.res_valid.val());
                    let want = m.find(key(pid, vpn));
                    assert_eq!(b.uut.res_hit.val(), want.is_some(), "pid {pid} vpn {vpn}");
                    assert_eq!(b.uut.res_gen.val().to_u16(), m.gen);
                    if let Some(t) = want {
                        hits += 1;
                        assert_eq!(b.uut.res_pfn.val().to_u64(), m.data[t] & ((1 << 40) - 1));
                        assert_eq!(b.uut.res_perms.val().to_u64(), m.data[t] >> 40);
                        m.touch(t);
                    } else {
                        misses += 1;
                    }
                    b.tick();
                }
            }
            assert_eq!(b.uut.gen.val().to_u16(), m.gen);
        }
        assert!(hits > 20 && misses > 20, "hits {hits} misses {misses}");
    }

    /// Fill all 64 entries, touch some, insert more: each insert takes the entry the tree leads
    /// to (the model's), never the one touched last, and eight inserts in a row land in eight
    /// different eighths of the table (each insert turns every node on its path away from it).
    #[test]
    fn evicts_where_the_tree_leads() {
        let mut b = Bench::new(Tlb::default());
        reset(&mut b);
        let mut m = Model::new();
        for v in 0..64u64 {
            set_update(&mut b, true, false, 9, v, 1000 + v, 3, 0);
            m.insert(key(9, v), 0);
            b.tick();
        }
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        // Touch vpn 0..8 (the oldest inserts), lookups back to back.
        for v in 0..8u64 {
            set_lookup(&mut b, true, 9, v);
            m.touch(m.find(key(9, v)).unwrap());
            b.tick();
        }
        set_lookup(&mut b, false, 0, 0);
        b.tick();
        b.tick();
        let mut evicted = vec![];
        for v in 100..108u64 {
            let victim = m.victim();
            assert_ne!(victim, 7, "the entry touched last");
            evicted.push(m.key[victim] & 0xFFFF_FFFF);
            m.insert(key(9, v), 0);
            set_update(&mut b, true, false, 9, v, v, 1, 0);
            b.tick();
        }
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        let mut eighths: Vec<u64> = evicted.iter().map(|v| v / 8).collect();
        eighths.sort();
        eighths.dedup();
        assert_eq!(eighths.len(), 8, "evicted {evicted:?}");
        let mut present = vec![];
        for v in (0..64u64).chain(100..108) {
            set_lookup(&mut b, true, 9, v);
            b.tick();
            set_lookup(&mut b, false, 0, 0);
            b.tick();
            b.settle();
            present.push((v, b.uut.res_hit.val()));
            b.tick();
        }
        for (v, hit) in present {
            assert_eq!(hit, !evicted.contains(&v), "vpn {v} (evicted {evicted:?})");
        }
    }

    /// An allocated-page entry comes back as such with its location; overwriting it with the
    /// mapping (same key) clears the flag.
    #[test]
    fn alloc_entries_round_trip() {
        let mut b = Bench::new(Tlb::default());
        reset(&mut b);
        let look = |b: &mut Bench<Tlb>, vpn: u64| {
            set_lookup(b, true, 4, vpn);
            b.tick();
            set_lookup(b, false, 0, 0);
            b.tick();
            b.settle();
            let r = (
                b.uut.res_hit.val(),
                b.uut.res_alloc.val(),
                b.uut.res_pfn.val().to_u64(),
            );
            b.tick();
            r
        };
        b.uut.up_alloc.next = true;
        set_update(&mut b, true, false, 4, 7, (5 << 4) | 3, 3, 0);
        b.tick();
        b.uut.up_alloc.next = false;
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        b.tick();
        assert_eq!(look(&mut b, 7), (true, true, (5 << 4) | 3));
        set_update(&mut b, true, false, 4, 7, 77, 3, 0);
        b.tick();
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        b.tick();
        assert_eq!(look(&mut b, 7), (true, false, 77));
    }

    /// In-flight consistency: a lookup racing with an invalidation or with an overwrite of its
    /// entry misses; an insert carrying a pre-invalidation generation is dropped. An update
    /// takes effect in its write stage, the cycle after it enters.
    #[test]
    fn in_flight_lookups_stay_consistent() {
        let mut b = Bench::new(Tlb::default());
        reset(&mut b);
        set_update(&mut b, true, false, 1, 5, 77, 3, 0);
        b.tick();
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        b.tick();
        // A lookup in the cycle an invalidation enters is before it: a hit.
        set_lookup(&mut b, true, 1, 5);
        set_update(&mut b, true, true, 1, 5, 0, 0, 0);
        b.tick();
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        // A lookup in its write stage (the compare still sees the tag) misses.
        b.tick();
        set_lookup(&mut b, false, 0, 0);
        b.settle();
        assert!(b.uut.res_valid.val() && b.uut.res_hit.val());
        assert_eq!(b.uut.gen.val().to_u16(), 1);
        b.tick();
        b.settle();
        assert!(b.uut.res_valid.val() && !b.uut.res_hit.val());
        // A walk that started before the invalidation tries to reinstate the old PTE: dropped.
        set_update(&mut b, true, false, 1, 5, 77, 3, 0);
        b.tick();
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        b.tick();
        set_lookup(&mut b, true, 1, 5);
        b.tick();
        set_lookup(&mut b, false, 0, 0);
        b.tick();
        b.settle();
        assert!(!b.uut.res_hit.val());
        // Fill the TLB; the LRU entry (vpn 200) is looked up in the cycle its slot is rewritten
        // with vpn 999 (the insert's write stage): the compare saw the old tag, the data read
        // would see the new frame, so the lookup must miss.
        reset(&mut b);
        for v in 200..264u64 {
            set_update(&mut b, true, false, 2, v, v, 3, 0);
            b.tick();
        }
        set_update(&mut b, true, false, 2, 999, 5, 3, 0);
        b.tick();
        set_lookup(&mut b, true, 2, 200);
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        b.tick();
        set_lookup(&mut b, false, 0, 0);
        b.tick();
        b.settle();
        assert!(
            b.uut.res_valid.val() && !b.uut.res_hit.val(),
            "stale entry returned"
        );
        // Rewritten one cycle after the compare: the read still sees the old, matching entry.
        set_lookup(&mut b, true, 2, 201);
        set_update(&mut b, true, false, 2, 998, 6, 3, 0);
        b.tick();
        set_lookup(&mut b, false, 0, 0);
        set_update(&mut b, false, false, 0, 0, 0, 0, 0);
        b.tick();
        b.settle();
        assert!(b.uut.res_hit.val());
        assert_eq!(b.uut.res_pfn.val().to_u64(), 201);
        // An insert is seen by a lookup in its write stage (forwarded: the tags do not hold
        // it yet), a new key and a rewrite of a present one alike, and is touched by it.
        for (vpn, pfn) in [(5000u64, 41u64), (5000, 42), (202, 43)] {
            set_update(&mut b, true, false, 2, vpn, pfn, 3, 0);
            b.tick();
            set_update(&mut b, false, false, 0, 0, 0, 0, 0);
            set_lookup(&mut b, true, 2, vpn);
            b.tick();
            set_lookup(&mut b, false, 0, 0);
            b.tick();
            b.settle();
            assert!(b.uut.res_hit.val(), "vpn {vpn} in the write stage");
            assert_eq!(b.uut.res_pfn.val().to_u64(), pfn);
            b.tick();
        }
    }

    /// Updates back to back, every cycle, on a key space small enough that an update often
    /// meets the key of the one ahead of it (insert after insert, insert after invalidation and
    /// the reverse, an eviction of the key the next update names): afterwards every key's
    /// presence and frame match the model, and no key is held twice (two entries on one key
    /// would OR their frames, and the count of hits would exceed the model's entries).
    #[test]
    fn back_to_back_updates_match_model() {
        let mut b = Bench::new(Tlb::default());
        reset(&mut b);
        let mut m = Model::new();
        let mut rng = crate::tb::Rng(0x9E37_79B9_7F4A_7C15);
        let mut rnd = || rng.next();
        let mut rounds_with_eviction = 0;
        for round in 0..40 {
            // Fill beyond capacity in some rounds so that evictions race too.
            let keys = if round % 4 == 3 { 80 } else { 6 };
            let burst = if round % 4 == 3 { 120 } else { 24 };
            for _ in 0..burst {
                let r = rnd();
                let vpn = r % keys;
                if r >> 61 == 0 {
                    set_update(&mut b, true, true, 3, vpn, 0, 0, 0);
                    m.invalidate(key(3, vpn));
                } else {
                    let stale = r >> 58 & 7 == 0 && m.gen > 0;
                    let gen = if stale { m.gen - 1 } else { m.gen };
                    // `gen` must already count an invalidation in the write stage.
                    assert_eq!(b.uut.gen.val().to_u16(), m.gen);
                    let pfn = (r >> 16) & 0xFFFF;
                    set_update(&mut b, true, false, 3, vpn, pfn, 3, gen);
                    if !stale {
                        let t = m.insert(key(3, vpn), 0);
                        m.data[t] = 3 << 40 | pfn;
                    }
                }
                b.tick();
            }
            set_update(&mut b, false, false, 0, 0, 0, 0, 0);
            b.tick();
            if keys > 64 {
                rounds_with_eviction += 1;
            }
            let mut hits = 0;
            for vpn in 0..keys {
                set_lookup(&mut b, true, 3, vpn);
                b.tick();
                set_lookup(&mut b, false, 0, 0);
                b.tick();
                b.settle();
                let want = m.find(key(3, vpn));
                assert_eq!(
                    b.uut.res_hit.val(),
                    want.is_some(),
                    "round {round} vpn {vpn}"
                );
                if let Some(t) = want {
                    hits += 1;
                    assert_eq!(
                        b.uut.res_pfn.val().to_u64(),
                        m.data[t] & 0xFF_FFFF_FFFF,
                        "round {round} vpn {vpn}"
                    );
                    m.touch(t);
                }
                b.tick();
            }
            assert!(hits <= ENTRIES);
        }
        assert!(rounds_with_eviction >= 10);
    }
}
