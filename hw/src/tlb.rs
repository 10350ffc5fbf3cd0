//! The TLB: a fully associative CAM on `(pid, vpn)` with tree pseudo-LRU replacement.
//!
//! * Lookup port: a lookup in (the translate stage's `xlate`, else Dispatch's `dispatch`, else
//!   the look-ahead's `ahead` while `ahead_free`), `res_*` out [`TLB_LATENCY`] cycles later, II = 1. Cycle 1 compares
//!   the key against all [`ENTRIES`] tags (flip-flops); cycle 2 masks the match vector with the
//!   live valid bits, encodes it and reads the translation from a 64 x 43 RAM.
//! * Update port (`up_*`): insert (from the walker / page-fault unit) or invalidate (from the
//!   slow path), one per cycle, in two stages. The cycle an update enters, its update tag
//!   (`clio_proto::consts::tlb_tag`: the page's low 12 bits XOR the pid's, reversed) is compared against
//!   every entry's and the match vector registered (`u_match`, with the update itself); the
//!   next cycle (the write stage) picks the target and writes, so the compare and the
//!   target's select are not in one cycle. Lookups see an update from the cycle after it
//!   enters, as with a one-cycle port: a lookup compared in the write stage's cycle misses an
//!   entry being invalidated or rewritten (the second cycle's mask) and hits an entry being
//!   inserted for its key (`s1_fwd`: the tags do not hold it yet, so the write stage's key is
//!   compared too and the lookup takes the entry written). An insert overwrites the entry
//!   whose key has its tag (its own key's, or another's sharing the tag: at most one entry
//!   holds a tag, so never two hold one key); otherwise it takes the lowest invalid entry,
//!   else the least recently used one. An invalidation drops the entry with its tag (another
//!   key's that shares it costs that key a miss, never a stale translation). A 12-bit
//!   compare per entry on the update port instead of the whole 52-bit key is 2,000 LUT
//!   less (docs/utilization.md). Back-to-back updates: the entering update's compare
//!   does not see what the one in the write stage is writing, so its match is corrected there
//!   (`m_cur`): the entry the previous insert wrote is added when the tags are equal
//!   (`u_same`, against the write stage's key register's tag) and removed otherwise, and
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

use crate::fastpath::links::{TlbChangeIn, TlbInsertIn, TlbLookupIn, TlbResult};
use crate::util::{index_bit_mask, BitReverse, Gather, GatherBytes};
use clio_proto::consts::{TLB_ENTRIES, TLB_TAG_BITS, VPN_BITS};
use rust_hdl::prelude::*;

// The key is `pid << 36 | vpn` with the pid's 16 bits reversed (a bijection: lookups match
// as on the plain key), so the update tag (`clio_proto::consts::tlb_tag`: the vpn's low 12
// bits XOR the pid's low 12 reversed) is the key's bits 0..12 XOR bits 40..52.
const _: () = assert!(VPN_BITS == 36 && clio_proto::pte::PID_SHIFT == 36 && TLB_TAG_BITS == 12);
// One bit per entry in every vector and a six-level replacement tree.
const _: () = assert!(TLB_ENTRIES == 64);

/// Entries (from `proto::consts::TLB_ENTRIES`).
pub const ENTRIES: usize = TLB_ENTRIES;
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
    /// ... its entry data, `alloc << 42 | perms << 40 | pfn`.
    u_data: DFF<Bits<43>>,
    /// ... its generation (an insert's) equals the generation as it is in the write stage
    /// (`gen_now` of the cycle it entered: the update then in the write stage counted), so the
    /// write stage's drop test is one gate from flip-flops.
    u_gen_ok: DFF<Bit>,
    /// ... the valid entries that held its key when it entered.
    u_match: DFF<Bits<64>>,
    /// ... its tag is the one of the update that was in the write stage when it entered.
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
    /// The update's tag (`clio_proto::consts::tlb_tag` of its key).
    up_tag: Signal<Local, Bits<12>>,
    /// The lookup's and the update's pid in reverse bit order, as keys hold it.
    lk_rev: BitReverse<16>,
    up_rev: BitReverse<16>,
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
    /// The lowest invalid entry, one-hot: the lowest byte's lowest bit (no 64-bit carry chain
    /// between `valid` and the insert target).
    inv_first: GatherBytes<8, 64>,
    inv_lo0: Gather<8>,
    inv_lo1: Gather<8>,
    inv_lo2: Gather<8>,
    /// Masks of the indices 0..8 with bit k set (k = 0, 1, 2).
    enc8: [Constant<Bits<8>>; 3],
}

/// The entries of the upper half of the table (the root's upper subtree): index bit 5.
const UPPER_HALF: u64 = index_bit_mask(5);

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
            xlate: Default::default(),
            dispatch: Default::default(),
            ahead: Default::default(),
            ahead_free: Default::default(),
            lk_valid: Default::default(),
            lk_pid: Default::default(),
            lk_vpn: Default::default(),
            res_valid: Default::default(),
            res: Default::default(),
            up_valid: Default::default(),
            up_inval: Default::default(),
            up_pid: Default::default(),
            up_vpn: Default::default(),
            up_pfn: Default::default(),
            up_perms: Default::default(),
            up_alloc: Default::default(),
            walk: Default::default(),
            slow: Default::default(),
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
            up_tag: Default::default(),
            lk_rev: Default::default(),
            up_rev: Default::default(),
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
            enc_lo: core::array::from_fn(|k| {
                Constant::new((index_bit_mask(k) & !UPPER_HALF).to_bits())
            }),
            enc_hi: core::array::from_fn(|k| {
                Constant::new((index_bit_mask(k) & UPPER_HALF).to_bits())
            }),
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
            inv_first: Default::default(),
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
        // The CAM: the lookup compares its whole key against every entry's, the update its
        // tag (`tlb_tag`) against every entry's. The lookup's match
        // leaves out `valid` (the second cycle masks it with `valid` as it is then: an entry
        // that was invalid at the compare is either still invalid or was written since,
        // `wr_last`, and dropped), so the compare is all that is in front of `s1_match`.
        self.up_tag.next =
            self.up_key.val().get_bits::<12>(0) ^ self.up_key.val().get_bits::<12>(40);
        for i in 0..64 {
            self.m_lk.bits[i].next = self.key[i].q.val() == self.lk_key.val();
            self.m_up.bits[i].next = self.valid.q.val().get_bit(i)
                & ((self.key[i].q.val().get_bits::<12>(0)
                    ^ self.key[i].q.val().get_bits::<12>(40))
                    == self.up_tag.val());
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
        self.u_same.d.next = self.u_valid.q.val()
            & ((self.u_key.q.val().get_bits::<12>(0) ^ self.u_key.q.val().get_bits::<12>(40))
                == self.up_tag.val());
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
        self.u_gen_ok.d.next = self.slow.valid.val() | (self.walk.gen.val() == self.gen_now.val());
        self.do_insert.next = self.u_valid.q.val() & !self.u_inval.q.val() & self.u_gen_ok.q.val();
        // Insert target: the entry holding the key, else the lowest invalid one, else the LRU one.
        self.inv.next = !self.valid.q.val();
        // The lowest invalid entry, one-hot and its index: byte by byte, then the lowest byte
        // that has one.
        for g in 0..8 {
            self.inv_low[g].next =
                self.inv.val().get_bits::<8>(8 * g) & (!self.inv.val().get_bits::<8>(8 * g) + 1);
            self.inv_any.bits[g].next = self.inv.val().get_bits::<8>(8 * g).any();
            self.inv_lo0.bits[g].next = (self.inv_low[g].val() & self.enc8[0].val()).any();
            self.inv_lo1.bits[g].next = (self.inv_low[g].val() & self.enc8[1].val()).any();
            self.inv_lo2.bits[g].next = (self.inv_low[g].val() & self.enc8[2].val()).any();
        }
        self.inv_byte.next = self.inv_any.out.val() & (!self.inv_any.out.val() + 1);
        for g in 0..8 {
            if self.inv_byte.val().get_bit(g) {
                self.inv_first.bytes[g].next = self.inv_low[g].val();
            } else {
                self.inv_first.bytes[g].next = 0.into();
            }
        }
        self.idx_inv.bits[0].next = (self.inv_byte.val() & self.inv_lo0.out.val()).any();
        self.idx_inv.bits[1].next = (self.inv_byte.val() & self.inv_lo1.out.val()).any();
        self.idx_inv.bits[2].next = (self.inv_byte.val() & self.inv_lo2.out.val()).any();
        self.idx_inv.bits[3].next = (self.inv_byte.val() & self.enc8[0].val()).any();
        self.idx_inv.bits[4].next = (self.inv_byte.val() & self.enc8[1].val()).any();
        self.idx_inv.bits[5].next = (self.inv_byte.val() & self.enc8[2].val()).any();
        if self.inv.val().any() {
            self.victim.next = self.inv_first.out.val();
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
