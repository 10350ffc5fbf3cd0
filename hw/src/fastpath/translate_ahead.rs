//! Translation ahead of dispatch: while the executor works on one request, this block looks up
//! the TLB for the reads and writes waiting in the ingest slots, so that a request whose page
//! hits goes from dispatch straight to its DRAM access (no lookup, no wait for the result).
//!
//! How it works:
//! * A pointer walks the four ingest slots in the order they fill (0, 1, 2, 3, 0, ...). At a
//!   slot whose header is in (`headed`: from the cycle after the frame's first beat, two
//!   cycles before the frame is whole and its verdict known) it either issues one TLB lookup
//!   for the frame there (a READ or WRITE, not yet looked up, not already taken by the
//!   executor or the write-data stage, in a cycle when the executor does not use the lookup
//!   port: `port_free`), or skips it. It waits at a slot with no header. A frame the ack layer
//!   later drops or NACKs is never dispatched, so its lookup is only a wasted port cycle.
//! * The lookup is the executor's own: the pid and the VPN of the packet's first byte (a
//!   write's `va + pkt_index * MAX_PAYLOAD`, as the executor's dispatch computes it). Its result
//!   comes back two cycles later (the TLB's latency) and is kept per slot: `ok` when the page
//!   is mapped (a hit, not an allocated-unmapped entry), its permissions include what the
//!   opcode needs, and the packet's first `min(len, MAX_PAYLOAD)` bytes lie within the page;
//!   `pa`, the physical address of the packet's first byte.
//!   The page is shifted out of the header's `va` as it arrives; a write segment after the
//!   first (`pkt_index != 0`, its first byte `pkt_index` KiB on) has its page from that sum
//!   the next cycle instead (`chk_vpn`), and is not looked up in that cycle (`chk_hold`), so
//!   neither cycle holds both the 44-bit sum and the page shift.
//! * The TLB's lookup key is a register on both of this block's paths into it: the pid and
//!   VPN of the slot at the pointer (`lk_key_pid`, `lk_key_vpn`, loaded with the slot the
//!   pointer moves to: that slot's registers, with a header coming into it forwarded over them,
//!   so a header's page is in the key register the cycle after it came in, as it is in its
//!   slot), and those of the slot the executor holds next (`queue.next_slot`, registered for
//!   Dispatch's own lookup). So the TLB's CAM compare is behind a select of registers, not
//!   behind this block's slot multiplexers.
//! * What was looked up is forgotten when the TLB changes (`tlb_update`: an insert or an
//!   invalidation, including those in flight: lookups issued before it are dropped), and the
//!   pointer goes back to the oldest slot the executor has not taken (`head`); a slot's entry
//!   is forgotten when the slot is freed. So an entry is only ever the current frame's, and
//!   only ever what the TLB holds now.
//!
//! * Every header's page is hashed as it arrives (`proto::pt_hash` of the lookup's pid and
//!   VPN, a hash unit of its own: one a cycle, [`crate::hash_unit::HASH_LATENCY`] cycles) and
//!   the hash kept per slot (`use_hash`): when the page misses the TLB, the
//!   translate stage walks its bucket with this hash rather than hashing again once it knows
//!   of the miss. A per-slot generation (2 bits, stepped by each header) drops a hash of the
//!   slot's earlier frame; a slot refills at most once in the hash's latency.
//!
//! The executor still runs every check of its dispatch: the entry only replaces the lookup.
//! A lookup here touches the TLB's LRU order as the executor's would: only which entry a later
//! insert evicts can differ (never a translation or an answer).

use crate::async_ram::AsyncRam;
use crate::fastpath::decode::Decode;
use crate::fastpath::links::{
    AheadSlot, HeaderBeatIn, PageHash, SlotViewIn, TlbLookup, TlbResultIn,
};
use crate::hash_unit::HashUnit;
use crate::spec::Spec;
use crate::va_end::{VaEndRule, VA_END_TERMS};
use clio_proto::consts::MAX_PAYLOAD;
use clio_proto::header::ROUTED_HEADER_LEN;
use clio_proto::pte::{PERM_READ, PERM_WRITE};
use clio_proto::Opcode;
use rust_hdl::prelude::*;

/// Ingest slots.
const SLOTS: usize = crate::fastpath::ingest::SLOTS;
const _: () = assert!(SLOTS == 4, "slot indices are 2 bits");
// The header's first 48 bytes are what the dispatch decode reads.
const _: () = assert!(ROUTED_HEADER_LEN == 48);
// `p1_fits` in 35 bits: a page offset below 2^31 (`page_shift` is 5 bits) plus a length of at
// most MAX_PAYLOAD, against a page of at most 2^31 bytes.
const _: () = assert!(MAX_PAYLOAD < 1 << 31);

/// The TLB look-ahead.
#[derive(LogicBlock)]
pub struct TranslateAhead {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: nothing looked up, the pointer at slot 0.
    pub reset: Signal<In, Bit>,
    /// log2 of the page size.
    pub page_shift: Signal<In, Bits<5>>,
    /// log2 of a piece's largest size (`PieceShift`: the page, at most 4 KiB): a slot's
    /// access fits when it fits in one piece, so a hit never asks for a burst across 4 KiB.
    pub piece_shift: Signal<In, Bits<5>>,
    /// Clio-KV's unit is enabled (`Extend::kv_en`): its opcodes parse (`use_parse_ok`).
    pub kv_en: Signal<In, Bit>,
    /// A frame's header beat as it arrives (`Ingest::header`): the slot's page, checks and hash are prepared from its bytes 0..48.
    pub hdr: HeaderBeatIn,
    /// Slots holding a frame's header (the ingest stage's `headed`).
    pub headed: Signal<In, Bits<4>>,
    /// Where the executor is in the slot queue (`SlotQueue::view`): its slot (the one it asks about), its next slot (whose pid and VPN are registered, so `dlk.pid` and `dlk.vpn` are flip-flops in Dispatch: a slot's fields are final by the cycle it is taken in), the slots taken and the oldest not taken (where the pointer restarts after a TLB change).
    pub queue: SlotViewIn,
    /// Slots freed this cycle.
    pub freed: Signal<In, Bits<4>>,
    /// The executor does not use the TLB's lookup port this cycle.
    pub port_free: Signal<In, Bit>,
    /// The TLB is updated this cycle (insert or invalidate).
    pub tlb_update: Signal<In, Bit>,
    /// Its lookups of the waiting slots' pages (`Tlb::ahead`, when `port_free`).
    pub lk: TlbLookup,
    /// The TLB's lookup result (`Tlb::res`), the cycle after a lookup of its own (`gen` unused).
    pub res: TlbResultIn,
    /// The results for the slot the executor takes (`Executor::ahead`, joined in the top).
    pub slot: AheadSlot,
    /// Dispatch's lookup of the executor's slot's page (`Tlb::dispatch`): while Dispatch asks
    /// (`slot.lookup`), the slot's pid and VPN (registered from `queue.next_slot`).
    pub dlk: TlbLookup,
    /// The executor's slot's page hash, `proto::pt_hash(dlk.pid, dlk.vpn)`, and whether it is
    /// ready (from the cycle its hash comes out of the hash unit; `Translate::hashed`).
    pub use_hash: PageHash,
    /// The next slot to look at.
    ptr: DFF<Bits<2>>,
    /// Per slot (bit k): looked up (the lookup issued, its result kept or on its way).
    looked: DFF<Bits<4>>,
    /// Per slot: the kept result says `ok`.
    e_ok: DFF<Bits<4>>,
    /// Per slot: the kept physical address (LUT RAM: written with the lookup's result, read
    /// at the executor's slot).
    e_pa: AsyncRam<Bits<64>, 2>,
    /// A lookup issued one cycle ago: valid, slot, permission needed, fits in the page, page
    /// offset of the first byte.
    p1_valid: DFF<Bit>,
    p1_slot: DFF<Bits<2>>,
    p1_need: DFF<Bits<2>>,
    p1_fits: DFF<Bit>,
    p1_off: DFF<Bits<64>>,
    /// The same, two cycles ago: its result is on the TLB's outputs now.
    p2_valid: DFF<Bit>,
    p2_slot: DFF<Bits<2>>,
    p2_need: DFF<Bits<2>>,
    p2_fits: DFF<Bit>,
    p2_off: DFF<Bits<64>>,
    /// Per slot, from its header: a READ or WRITE, the lookup's pid and VPN, the permission
    /// needed, the page offset and length of the packet's first bytes.
    s_rw: DFF<Bits<4>>,
    /// Per slot, from its header: the read check, the write check, the write inside the VA
    /// space (bit k = slot k). Set two cycles after the header came in: its registered copy
    /// is decoded (`chk_*`: the decode's checks are not in the header's cycle), the results
    /// registered (`res_*`: the range checks' sums are not in the cycle of the slot's bit).
    /// The executor reads them when it dispatches the frame, three cycles or more after its
    /// first beat (the frame's slot is full two cycles after its last beat, and Dispatch is
    /// the cycle after the executor takes it).
    s_read_ok: DFF<Bits<4>>,
    s_write_ok: DFF<Bits<4>>,
    s_write_in_va: DFF<Bits<4>>,
    /// Per slot, the same way: `Header::parse` as if Clio-KV were enabled (the decode of the
    /// check stage runs with `kv_en` high), and whether the opcode is one of Clio-KV's (then
    /// it parses only while the unit is enabled: `use_parse_ok` applies `kv_en` as the frame is
    /// dispatched, so a KV_CONFIG between the header and Dispatch counts); Append's, an
    /// atomic's and the pointer chase's format checks.
    s_parse_kv: DFF<Bits<4>>,
    s_kv_op: DFF<Bits<4>>,
    s_append_ok: DFF<Bits<4>>,
    s_atomic_ok: DFF<Bits<4>>,
    s_chase_ok: DFF<Bits<4>>,
    s_pid: [DFF<Bits<16>>; SLOTS],
    s_vpn: [DFF<Bits<36>>; SLOTS],
    /// Per slot, in LUT RAMs written with its header: its packet's first byte (`slot.va`,
    /// read at the executor's slot); the permission needed, the page offset and the length
    /// of the packet's first bytes (`need | off << 2 | len << 66`, read at the pointer); the
    /// length's low 12 bits again (read at `queue.next_slot`: `use_key_len`). One write port
    /// and one read port each, so a field read at two slots is kept twice.
    s_va: AsyncRam<Bits<64>, 2>,
    s_sel: AsyncRam<Bits<98>, 2>,
    s_len12: AsyncRam<Bits<12>, 2>,
    /// The page hash: the header's pid and first byte's VA registered with it (hashed the
    /// next cycle, `chk_in`, with the slot and its generation as context: the page shift is
    /// in that cycle, so the header's cycle holds only a write segment's VA sum), per slot the
    /// generation of its frame, its hash and whether it is in (bit k).
    hash: HashUnit<4>,
    h_pid: DFF<Bits<16>>,
    h_va: DFF<Bits<64>>,
    h_gen: DFF<Bits<2>>,
    s_hgen: [DFF<Bits<2>>; SLOTS],
    /// (LUT RAM: written as a slot's hash comes out, read at the executor's slot.)
    s_hash: AsyncRam<Bits<32>, 2>,
    s_hok: DFF<Bits<4>>,
    /// `s_hok` less a slot whose new header comes in; the slots whose hash comes out now.
    hok_kept: Signal<Local, Bits<4>>,
    hok_set: [Signal<Local, Bit>; SLOTS],
    /// One of them: the hash is written.
    hok_any: Signal<Local, Bit>,
    /// The incoming header's page, from its `va` field (no write segment's sum: a segment's
    /// first byte is `pkt_index` KiB on, so its page is `chk_vpn`, a cycle later).
    hdr_vpn: Signal<Local, Bits<36>>,
    /// The incoming header is a write segment after the first (`pkt_index != 0`): its page is
    /// rewritten from `chk_vpn` the next cycle, and looked up only after that.
    seg: Signal<Local, Bit>,
    /// `seg`, registered with `chk_in`.
    chk_seg: DFF<Bit>,
    /// The page of the header registered in `h_va` (the first byte's VA): the hash's VPN, and
    /// a write segment's page.
    chk_vpn: Signal<Local, Bits<36>>,
    /// Bit `chk_slot` when `chk_seg`: the slot whose page is being rewritten (not looked up
    /// this cycle).
    chk_hold: Signal<Local, Bits<4>>,
    /// Per slot, its pid and VPN from the next cycle on (a header coming in, a segment's page
    /// rewritten, or kept): what `s_pid` and `s_vpn` load.
    nx_pid: [Signal<Local, Bits<16>>; SLOTS],
    nx_vpn: [Signal<Local, Bits<36>>; SLOTS],
    /// The pointer's next value (`ptr.d`).
    ptr_n: Signal<Local, Bits<2>>,
    /// The candidates of `ptr_n` besides the pointer itself: the next slot, and the slot the
    /// pointer goes back to (the head; slot 0 under reset).
    ptr_up: Signal<Local, Bits<2>>,
    ptr_back: Signal<Local, Bits<2>>,
    /// The next key of the slot at each candidate (staying, the next slot, back): the slot's
    /// registered pid and VPN, with what comes into it this cycle forwarded over them.
    key_stay_pid: Signal<Local, Bits<16>>,
    key_stay_vpn: Signal<Local, Bits<36>>,
    key_up_pid: Signal<Local, Bits<16>>,
    key_up_vpn: Signal<Local, Bits<36>>,
    key_back_pid: Signal<Local, Bits<16>>,
    key_back_vpn: Signal<Local, Bits<36>>,
    /// The TLB lookup key of the slot at the pointer, loaded with the slot at `ptr_n`.
    lk_key_pid: DFF<Bits<16>>,
    lk_key_vpn: DFF<Bits<36>>,
    /// The key and first length of the slot at `queue.next_slot`, registered (`dlk.pid`, `dlk.vpn`,
    /// `use_len`).
    use_key_pid: DFF<Bits<16>>,
    use_key_vpn: DFF<Bits<36>>,
    use_key_len: DFF<Bits<12>>,
    /// The slot at the pointer's kept fields.
    sel_need: Signal<Local, Bits<2>>,
    sel_off: Signal<Local, Bits<64>>,
    sel_len: Signal<Local, Bits<32>>,
    /// The incoming header's fields, read as the dispatch stage reads them (`Decode`).
    dec: Decode,
    /// The header registered with its slot (`chk_in`: it came in the cycle before), and its
    /// checks (`dec_chk`, the dispatch decode again: its other outputs are unused).
    chk_in: DFF<Bit>,
    chk_slot: DFF<Bits<2>>,
    chk_hdr: DFF<Bits<384>>,
    dec_chk: Decode,
    /// The checks registered a cycle later with their slot (`res_in`), what is wide in them
    /// done: the VA-range checks as their terms (`Decode::rd_terms`, `wr_terms`: the sums and
    /// wide compares), decided here by a `VaEndRule` each; the read's format part; the other
    /// checks whole. The per-slot bits below are set from these.
    res_in: DFF<Bit>,
    res_slot: DFF<Bits<2>>,
    res_read_form: DFF<Bit>,
    res_rd_terms: DFF<Bits<VA_END_TERMS>>,
    res_wr_terms: DFF<Bits<VA_END_TERMS>>,
    res_write_ok: DFF<Bit>,
    res_parse_kv: DFF<Bit>,
    res_kv_op: DFF<Bit>,
    res_append_ok: DFF<Bit>,
    res_atomic_ok: DFF<Bit>,
    res_chase_ok: DFF<Bit>,
    rd_rule: VaEndRule,
    wr_rule: VaEndRule,
    /// Every slot's bit but the result stage's.
    res_keep: Signal<Local, Bits<4>>,
    opcode: Signal<Local, Bits<8>>,
    is_write: Signal<Local, Bit>,
    is_rw: Signal<Local, Bit>,
    /// The packet's first byte's VA.
    va: Signal<Local, Bits<64>>,
    /// The packet's first bytes: a write's payload, a read's first answer packet.
    len: Signal<Local, Bits<32>>,
    /// The page's offset mask, and a piece's size and offset mask (the page, at most 4 KiB:
    /// `piece_shift`), registered from the configuration (set at boot: the decode stays off
    /// the header's path).
    pmask: DFF<Bits<64>>,
    psize: DFF<Bits<64>>,
    pcmask: DFF<Bits<32>>,
    off: Signal<Local, Bits<64>>,
    need: Signal<Local, Bits<2>>,
    /// Bit `ptr`.
    at: Signal<Local, Bits<4>>,
    /// The slot at the pointer holds a frame not to look up (taken, looked up, not a data
    /// access, or a bad frame): move on.
    skip: Signal<Local, Bit>,
    /// Look the slot at the pointer up this cycle.
    issue: Signal<Local, Bit>,
    /// Forget everything (a TLB change or reset).
    kill: Signal<Local, Bit>,
    /// Bit `p1_slot`.
    p1_at: Signal<Local, Bits<4>>,
    /// Bit `p2_slot`.
    p2_at: Signal<Local, Bits<4>>,
    /// `looked` and `e_ok` before a freed slot or a TLB change clears them.
    looked_n: Signal<Local, Bits<4>>,
    e_ok_n: Signal<Local, Bits<4>>,
    op_read: Spec<8, { Opcode::Read as u64 }>,
    op_write: Spec<8, { Opcode::Write as u64 }>,
    need_read: Spec<2, { PERM_READ as u64 }>,
    need_write: Spec<2, { PERM_WRITE as u64 }>,
    max_payload: Spec<32, { MAX_PAYLOAD as u64 }>,
    /// 64 ones (the offset mask is `!(ones << page_shift)`: a compare of the shift per bit,
    /// no subtraction).
    ones: Spec<64, { u64::MAX }>,
    /// `p1_fits`' sum: `poff + len - psize - 1` in 35 bits, `poff` the offset in the piece
    /// (its sign bit is `poff + len <= psize`: the bytes fit in one piece).
    fits_sum: Signal<Local, Bits<35>>,
    /// Its sign bit.
    sign35: Spec<35, { 1 << 34 }>,
}

impl Default for TranslateAhead {
    fn default() -> Self {
        TranslateAhead {
            clock: Default::default(),
            reset: Default::default(),
            page_shift: Default::default(),
            piece_shift: Default::default(),
            kv_en: Default::default(),
            hdr: Default::default(),
            headed: Default::default(),
            freed: Default::default(),
            port_free: Default::default(),
            tlb_update: Default::default(),
            lk: Default::default(),
            res: Default::default(),
            queue: Default::default(),
            slot: Default::default(),
            dlk: Default::default(),
            use_hash: Default::default(),
            hash: Default::default(),
            h_pid: Default::default(),
            h_va: Default::default(),
            h_gen: Default::default(),
            s_hgen: core::array::from_fn(|_| Default::default()),
            s_hash: Default::default(),
            s_hok: Default::default(),
            hok_kept: Default::default(),
            hok_set: core::array::from_fn(|_| Default::default()),
            hok_any: Default::default(),
            hdr_vpn: Default::default(),
            seg: Default::default(),
            chk_seg: Default::default(),
            chk_vpn: Default::default(),
            chk_hold: Default::default(),
            nx_pid: Default::default(),
            nx_vpn: Default::default(),
            ptr_n: Default::default(),
            ptr_up: Default::default(),
            ptr_back: Default::default(),
            key_stay_pid: Default::default(),
            key_stay_vpn: Default::default(),
            key_up_pid: Default::default(),
            key_up_vpn: Default::default(),
            key_back_pid: Default::default(),
            key_back_vpn: Default::default(),
            lk_key_pid: Default::default(),
            lk_key_vpn: Default::default(),
            use_key_pid: Default::default(),
            use_key_vpn: Default::default(),
            use_key_len: Default::default(),
            s_read_ok: Default::default(),
            s_write_ok: Default::default(),
            s_write_in_va: Default::default(),
            s_parse_kv: Default::default(),
            s_kv_op: Default::default(),
            s_append_ok: Default::default(),
            s_atomic_ok: Default::default(),
            s_chase_ok: Default::default(),
            ptr: Default::default(),
            looked: Default::default(),
            e_ok: Default::default(),
            e_pa: Default::default(),
            p1_valid: Default::default(),
            p1_slot: Default::default(),
            p1_need: Default::default(),
            p1_fits: Default::default(),
            p1_off: Default::default(),
            p2_valid: Default::default(),
            p2_slot: Default::default(),
            p2_need: Default::default(),
            p2_fits: Default::default(),
            p2_off: Default::default(),
            s_rw: Default::default(),
            s_pid: core::array::from_fn(|_| Default::default()),
            s_vpn: core::array::from_fn(|_| Default::default()),
            s_va: Default::default(),
            s_sel: Default::default(),
            s_len12: Default::default(),
            sel_need: Default::default(),
            sel_off: Default::default(),
            sel_len: Default::default(),
            dec: Default::default(),
            chk_in: Default::default(),
            chk_slot: Default::default(),
            chk_hdr: Default::default(),
            dec_chk: Default::default(),
            res_in: Default::default(),
            res_slot: Default::default(),
            res_read_form: Default::default(),
            res_rd_terms: Default::default(),
            res_wr_terms: Default::default(),
            res_write_ok: Default::default(),
            res_parse_kv: Default::default(),
            res_kv_op: Default::default(),
            res_append_ok: Default::default(),
            res_atomic_ok: Default::default(),
            res_chase_ok: Default::default(),
            rd_rule: Default::default(),
            wr_rule: Default::default(),
            res_keep: Default::default(),
            opcode: Default::default(),
            is_write: Default::default(),
            is_rw: Default::default(),
            va: Default::default(),
            len: Default::default(),
            psize: Default::default(),
            pcmask: Default::default(),
            pmask: Default::default(),
            off: Default::default(),
            need: Default::default(),
            at: Default::default(),
            skip: Default::default(),
            issue: Default::default(),
            kill: Default::default(),
            p1_at: Default::default(),
            p2_at: Default::default(),
            looked_n: Default::default(),
            e_ok_n: Default::default(),
            op_read: Default::default(),
            op_write: Default::default(),
            need_read: Default::default(),
            need_write: Default::default(),
            max_payload: Default::default(),
            ones: Default::default(),
            fits_sum: Default::default(),
            sign35: Default::default(),
        }
    }
}

crate::impl_clocked!(TranslateAhead);

mod update;

#[cfg(test)]
mod tests;
