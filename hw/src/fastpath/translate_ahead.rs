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
//!   slot), and those of the slot the executor holds next (`use_next`, registered for
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
//!   the hash kept per slot (`use_hash_ok`, `use_hash`): when the page misses the TLB, the
//!   translate stage walks its bucket with this hash rather than hashing again once it knows
//!   of the miss. A per-slot generation (2 bits, stepped by each header) drops a hash of the
//!   slot's earlier frame; a slot refills at most once in the hash's latency.
//!
//! The executor still runs every check of its dispatch: the entry only replaces the lookup.
//! A lookup here touches the TLB's LRU order as the executor's would: only which entry a later
//! insert evicts can differ (never a translation or an answer).

use crate::fastpath::decode::Decode;
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
    /// Clio-KV's unit is enabled (`Extend::kv_en`): its opcodes parse (`use_parse_ok`).
    pub kv_en: Signal<In, Bit>,
    /// A frame's header comes in this cycle (the ingest stage takes its first beat), for slot
    /// `hdr_slot`, bytes 0..48 in `hdr_data`: what a lookup of it needs is computed now and
    /// kept per slot, so a lookup later starts from registers.
    pub hdr_in: Signal<In, Bit>,
    pub hdr_slot: Signal<In, Bits<2>>,
    pub hdr_data: Signal<In, Bits<384>>,
    /// Slots holding a frame's header (the ingest stage's `headed`).
    pub headed: Signal<In, Bits<4>>,
    /// Slots whose frame the executor or the write-data stage has taken already.
    pub taken: Signal<In, Bits<4>>,
    /// Slots freed this cycle.
    pub freed: Signal<In, Bits<4>>,
    /// The oldest slot the executor has not taken: where the pointer restarts after a TLB
    /// change.
    pub head: Signal<In, Bits<2>>,
    /// The executor does not use the TLB's lookup port this cycle.
    pub port_free: Signal<In, Bit>,
    /// The TLB is updated this cycle (insert or invalidate).
    pub tlb_update: Signal<In, Bit>,
    /// Lookup request to the TLB (when `port_free`).
    pub lk_valid: Signal<Out, Bit>,
    /// Lookup pid.
    pub lk_pid: Signal<Out, Bits<16>>,
    /// Lookup virtual page number.
    pub lk_vpn: Signal<Out, Bits<36>>,
    /// The TLB's result of the lookup issued two cycles ago: hit.
    pub res_hit: Signal<In, Bit>,
    /// The hit entry is an allocated page not yet mapped.
    pub res_alloc: Signal<In, Bit>,
    /// The hit entry's permissions (bit 0 read, bit 1 write).
    pub res_perms: Signal<In, Bits<2>>,
    /// The hit entry's frame number.
    pub res_pfn: Signal<In, Bits<40>>,
    /// The slot the executor asks about (the one it dispatches).
    pub use_slot: Signal<In, Bits<2>>,
    /// The slot the executor holds in the next cycle (the slot queue's `next_slot`): its pid
    /// and VPN are registered, so `use_pid` and `use_vpn` are flip-flops in Dispatch (a slot's
    /// fields are final by the cycle it is taken in: a header's page is written at the end of
    /// its cycle, a segment's the cycle after, and a frame is taken two cycles after its
    /// header at the earliest).
    pub use_next: Signal<In, Bits<2>>,
    /// `use_slot`'s packet is translated: mapped, permitted, within one page.
    pub ok: Signal<Out, Bit>,
    /// `use_slot`'s packet's physical address (valid with `ok`).
    pub pa: Signal<Out, Bits<64>>,
    /// `use_slot`'s frame is a READ or WRITE, and its lookup's pid and VPN (kept from its
    /// header; the pid and VPN registered again from `use_next` the cycle before): when `ok`
    /// is low the executor's Dispatch looks the page up with these, before its checks decide.
    pub use_rw: Signal<Out, Bit>,
    pub use_pid: Signal<Out, Bits<16>>,
    pub use_vpn: Signal<Out, Bits<36>>,
    /// `use_slot`'s packet's first byte (`Decode::data_va`: a write's segment `pkt_index` KiB
    /// in), summed as the header arrived and kept per slot, so Dispatch's VA is a register.
    pub use_va: Signal<Out, Bits<64>>,
    /// `use_slot`'s first packet's length as a 12-bit count: a read's `min(total_len,
    /// MAX_PAYLOAD)` (its answer's packet 0; the range is only read with `use_read_ok`), a
    /// write's `payload_len` cut to 12 bits. Registered from `use_next` the cycle before, like
    /// `use_pid`, so Dispatch's access length and response length start from a flip-flop (the
    /// compare with `MAX_PAYLOAD` is not in front of them).
    pub use_len: Signal<Out, Bits<12>>,
    /// `use_slot`'s header passes `check_read` (`Decode::read_ok`), `check_write_segment`
    /// (`write_ok`), and its write segment ends inside the VA space (`write_in_va`): decoded as
    /// the header arrived and kept per slot, so Dispatch's decision does not wait for the
    /// checks' 66-bit sums (they depend on the header alone).
    pub use_read_ok: Signal<Out, Bit>,
    pub use_write_ok: Signal<Out, Bit>,
    pub use_write_in_va: Signal<Out, Bit>,
    /// `use_slot`'s header passes `Header::parse` (`Decode::parse_ok` with `kv_en` as it is
    /// now), Append's format check (`append_ok`), an atomic's (`atomic_ok`) and the pointer
    /// chase's (`chase_ok`): the rest of Dispatch's class checks, kept per slot the same way.
    pub use_parse_ok: Signal<Out, Bit>,
    pub use_append_ok: Signal<Out, Bit>,
    pub use_atomic_ok: Signal<Out, Bit>,
    pub use_chase_ok: Signal<Out, Bit>,
    /// `use_slot`'s page is hashed (`proto::pt_hash(use_pid, use_vpn)`): `use_hash` (from the
    /// cycle its hash comes out of the hash unit).
    pub use_hash_ok: Signal<Out, Bit>,
    pub use_hash: Signal<Out, Bits<32>>,
    /// The next slot to look at.
    ptr: DFF<Bits<2>>,
    /// Per slot (bit k): looked up (the lookup issued, its result kept or on its way).
    looked: DFF<Bits<4>>,
    /// Per slot: the kept result says `ok`.
    e_ok: DFF<Bits<4>>,
    /// Per slot: the kept physical address.
    e_pa: [DFF<Bits<64>>; SLOTS],
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
    /// Per slot, its packet's first byte (`use_va`).
    s_va: [DFF<Bits<64>>; SLOTS],
    s_need: [DFF<Bits<2>>; SLOTS],
    s_off: [DFF<Bits<64>>; SLOTS],
    s_len: [DFF<Bits<32>>; SLOTS],
    /// The page hash: the header's pid and first byte's VA registered with it (hashed the
    /// next cycle, `chk_in`, with the slot and its generation as context: the page shift is
    /// in that cycle, so the header's cycle holds only a write segment's VA sum), per slot the
    /// generation of its frame, its hash and whether it is in (bit k).
    hash: HashUnit<4>,
    h_pid: DFF<Bits<16>>,
    h_va: DFF<Bits<64>>,
    h_gen: DFF<Bits<2>>,
    s_hgen: [DFF<Bits<2>>; SLOTS],
    s_hash: [DFF<Bits<32>>; SLOTS],
    s_hok: DFF<Bits<4>>,
    /// `s_hok` less a slot whose new header comes in; the slots whose hash comes out now.
    hok_kept: Signal<Local, Bits<4>>,
    hok_set: [Signal<Local, Bit>; SLOTS],
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
    /// The key and first length of the slot at `use_next`, registered (`use_pid`, `use_vpn`,
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
    /// The page size and its offset mask, registered from `page_shift` (a configuration set
    /// at boot: the decode stays off the header's path).
    psize: DFF<Bits<64>>,
    pmask: DFF<Bits<64>>,
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
    /// `p1_fits`' sum: `off + len - psize - 1` in 35 bits (its sign bit is `off + len <=
    /// psize`).
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
            kv_en: Default::default(),
            hdr_in: Default::default(),
            hdr_slot: Default::default(),
            hdr_data: Default::default(),
            headed: Default::default(),
            taken: Default::default(),
            freed: Default::default(),
            head: Default::default(),
            port_free: Default::default(),
            tlb_update: Default::default(),
            lk_valid: Default::default(),
            lk_pid: Default::default(),
            lk_vpn: Default::default(),
            res_hit: Default::default(),
            res_alloc: Default::default(),
            res_perms: Default::default(),
            res_pfn: Default::default(),
            use_slot: Default::default(),
            use_next: Default::default(),
            ok: Default::default(),
            pa: Default::default(),
            use_rw: Default::default(),
            use_pid: Default::default(),
            use_vpn: Default::default(),
            use_va: Default::default(),
            use_len: Default::default(),
            use_read_ok: Default::default(),
            use_write_ok: Default::default(),
            use_write_in_va: Default::default(),
            use_parse_ok: Default::default(),
            use_append_ok: Default::default(),
            use_atomic_ok: Default::default(),
            use_chase_ok: Default::default(),
            use_hash_ok: Default::default(),
            use_hash: Default::default(),
            hash: Default::default(),
            h_pid: Default::default(),
            h_va: Default::default(),
            h_gen: Default::default(),
            s_hgen: core::array::from_fn(|_| Default::default()),
            s_hash: core::array::from_fn(|_| Default::default()),
            s_hok: Default::default(),
            hok_kept: Default::default(),
            hok_set: core::array::from_fn(|_| Default::default()),
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
            e_pa: core::array::from_fn(|_| Default::default()),
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
            s_va: core::array::from_fn(|_| Default::default()),
            s_need: core::array::from_fn(|_| Default::default()),
            s_off: core::array::from_fn(|_| Default::default()),
            s_len: core::array::from_fn(|_| Default::default()),
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

impl Logic for TranslateAhead {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ptr,
            looked,
            e_ok,
            s_rw,
            s_read_ok,
            s_write_ok,
            s_write_in_va,
            s_parse_kv,
            s_kv_op,
            s_append_ok,
            s_atomic_ok,
            s_chase_ok,
            chk_in,
            chk_seg,
            lk_key_pid,
            lk_key_vpn,
            use_key_pid,
            use_key_vpn,
            use_key_len,
            chk_slot,
            chk_hdr,
            res_in,
            res_slot,
            res_read_form,
            res_rd_terms,
            res_wr_terms,
            res_write_ok,
            res_parse_kv,
            res_kv_op,
            res_append_ok,
            res_atomic_ok,
            res_chase_ok,
            psize,
            pmask,
            p1_valid,
            p1_slot,
            p1_need,
            p1_fits,
            p1_off,
            p2_valid,
            p2_slot,
            p2_need,
            p2_fits,
            p2_off,
            h_pid,
            h_va,
            h_gen,
            s_hok
        );
        clock!(self, clock, hash);
        self.hash.reset.next = self.reset.val();
        for k in 0..4 {
            self.e_pa[k].clock.next = self.clock.val();
            self.e_pa[k].d.next = self.e_pa[k].q.val();
            self.s_pid[k].clock.next = self.clock.val();
            self.s_vpn[k].clock.next = self.clock.val();
            self.s_va[k].clock.next = self.clock.val();
            self.s_va[k].d.next = self.s_va[k].q.val();
            self.s_need[k].clock.next = self.clock.val();
            self.s_need[k].d.next = self.s_need[k].q.val();
            self.s_off[k].clock.next = self.clock.val();
            self.s_off[k].d.next = self.s_off[k].q.val();
            self.s_len[k].clock.next = self.clock.val();
            self.s_len[k].d.next = self.s_len[k].q.val();
            self.s_hgen[k].clock.next = self.clock.val();
            self.s_hgen[k].d.next = self.s_hgen[k].q.val();
            self.s_hash[k].clock.next = self.clock.val();
        }
        // ---- An incoming header: what its lookup needs, kept for its slot.
        self.dec.hdr.next = self.hdr_data.val();
        self.dec.kv_en.next = false;
        self.chk_in.d.next = self.hdr_in.val() & !self.reset.val();
        self.chk_slot.d.next = self.hdr_slot.val();
        self.chk_hdr.d.next = self.hdr_data.val();
        self.dec_chk.hdr.next = self.chk_hdr.q.val();
        self.dec_chk.kv_en.next = true;
        self.opcode.next = self.dec.opcode.val();
        self.is_write.next = self.opcode.val() == self.op_write.val();
        self.is_rw.next = self.is_write.val() | (self.opcode.val() == self.op_read.val());
        // The packet's first byte (a write's segment `pkt_index` KiB in), and its length.
        self.va.next = self.dec.data_va.val();
        self.len.next = self.dec.total_len.val();
        if self.len.val() > self.max_payload.val() {
            self.len.next = self.max_payload.val();
        }
        self.need.next = self.need_read.val();
        if self.is_write.val() {
            self.len.next = bit_cast::<32, 16>(self.dec.payload_len.val());
            self.need.next = self.need_write.val();
        }
        self.psize.d.next = bit_cast::<64, 1>(1.into()) << self.page_shift.val();
        self.pmask.d.next = !(self.ones.val() << self.page_shift.val());
        self.off.next = self.va.val() & self.pmask.q.val();
        self.hdr_vpn.next = bit_cast::<36, 64>(self.dec.va.val() >> self.page_shift.val());
        self.seg.next = self.is_write.val() & (self.dec.pkt_index.val() != 0);
        self.chk_seg.d.next = self.seg.val();
        // A write segment's page, the cycle after its header (the slot's `hdr_in` below wins,
        // but a slot's next header cannot come the cycle after: its frame is still in it).
        self.chk_vpn.next = bit_cast::<36, 64>(self.h_va.q.val() >> self.page_shift.val());
        self.chk_hold.next = 0.into();
        if self.chk_in.q.val() & self.chk_seg.q.val() {
            self.chk_hold.next = bit_cast::<4, 1>(1.into()) << self.chk_slot.q.val();
        }
        for k in 0..4 {
            self.nx_pid[k].next = self.s_pid[k].q.val();
            self.nx_vpn[k].next = self.s_vpn[k].q.val();
            if self.chk_hold.val().get_bit(k) {
                self.nx_vpn[k].next = self.chk_vpn.val();
            }
            if self.hdr_in.val() & (self.hdr_slot.val() == k.to_bits::<2>()) {
                self.nx_pid[k].next = self.dec.pid.val();
                self.nx_vpn[k].next = self.hdr_vpn.val();
            }
            self.s_pid[k].d.next = self.nx_pid[k].val();
            self.s_vpn[k].d.next = self.nx_vpn[k].val();
        }
        self.h_pid.d.next = self.dec.pid.val();
        self.h_va.d.next = self.va.val();
        if self.hdr_in.val() {
            for k in 0..4 {
                if self.hdr_slot.val() == k.to_bits::<2>() {
                    self.s_va[k].d.next = self.va.val();
                    self.s_hgen[k].d.next = self.s_hgen[k].q.val() + 1;
                    self.h_gen.d.next = self.s_hgen[k].q.val() + 1;
                    self.s_need[k].d.next = self.need.val();
                    self.s_off[k].d.next = self.off.val();
                    self.s_len[k].d.next = self.len.val();
                }
            }
            if self.is_rw.val() {
                self.s_rw.d.next =
                    self.s_rw.q.val() | (bit_cast::<4, 1>(1.into()) << self.hdr_slot.val());
            } else {
                self.s_rw.d.next =
                    self.s_rw.q.val() & !(bit_cast::<4, 1>(1.into()) << self.hdr_slot.val());
            }
        }
        // The checks, registered with their slot; then the per-slot bits: the other slots' as
        // they are, the result stage's slot's from its results.
        self.res_in.d.next = self.chk_in.q.val() & !self.reset.val();
        self.res_slot.d.next = self.chk_slot.q.val();
        self.res_read_form.d.next = self.dec_chk.read_form.val();
        self.res_rd_terms.d.next = self.dec_chk.rd_terms.val();
        self.res_wr_terms.d.next = self.dec_chk.wr_terms.val();
        self.res_write_ok.d.next = self.dec_chk.write_ok.val();
        self.res_parse_kv.d.next = self.dec_chk.parse_ok.val();
        self.res_kv_op.d.next = self.dec_chk.kv.val();
        self.res_append_ok.d.next = self.dec_chk.append_ok.val();
        self.res_atomic_ok.d.next = self.dec_chk.atomic_ok.val();
        self.res_chase_ok.d.next = self.dec_chk.chase_ok.val();
        self.rd_rule.terms.next = self.res_rd_terms.q.val();
        self.wr_rule.terms.next = self.res_wr_terms.q.val();
        self.res_keep.next = !(bit_cast::<4, 1>(1.into()) << self.res_slot.q.val());
        if self.res_in.q.val() {
            self.s_read_ok.d.next = (self.s_read_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(
                    (self.res_read_form.q.val() & self.rd_rule.in_va.val()).into(),
                ) << self.res_slot.q.val());
            self.s_write_ok.d.next = (self.s_write_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_write_ok.q.val().into()) << self.res_slot.q.val());
            self.s_write_in_va.d.next = (self.s_write_in_va.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.wr_rule.in_va.val().into()) << self.res_slot.q.val());
            self.s_parse_kv.d.next = (self.s_parse_kv.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_parse_kv.q.val().into()) << self.res_slot.q.val());
            self.s_kv_op.d.next = (self.s_kv_op.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_kv_op.q.val().into()) << self.res_slot.q.val());
            self.s_append_ok.d.next = (self.s_append_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_append_ok.q.val().into()) << self.res_slot.q.val());
            self.s_atomic_ok.d.next = (self.s_atomic_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_atomic_ok.q.val().into()) << self.res_slot.q.val());
            self.s_chase_ok.d.next = (self.s_chase_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_chase_ok.q.val().into()) << self.res_slot.q.val());
        }
        // ---- The page hash: the header's pid and VPN the cycle after, its result kept for
        // the slot unless the slot has had another header since.
        self.hash.in_valid.next = self.chk_in.q.val();
        self.hash.in_pid.next = self.h_pid.q.val();
        self.hash.in_vpn.next = self.chk_vpn.val();
        self.hash.in_ctx.next =
            (bit_cast::<4, 2>(self.h_gen.q.val()) << 2) | bit_cast::<4, 2>(self.chk_slot.q.val());
        self.hok_kept.next = self.s_hok.q.val();
        if self.hdr_in.val() {
            self.hok_kept.next =
                self.s_hok.q.val() & !(bit_cast::<4, 1>(1.into()) << self.hdr_slot.val());
        }
        for k in 0..4 {
            self.s_hash[k].d.next = self.s_hash[k].q.val();
            // The context is the tag: slot, generation.
            self.hok_set[k].next = self.hash.out_valid.val()
                & (self.hash.out_ctx.val().get_bits::<2>(0) == k.to_bits::<2>())
                & (self.hash.out_ctx.val().get_bits::<2>(2) == self.s_hgen[k].q.val());
            if self.hok_set[k].val() {
                self.s_hash[k].d.next = self.hash.out_hash.val();
            }
        }
        self.s_hok.d.next = (self.hok_kept.val()
            | bit_cast::<4, 1>(self.hok_set[0].val().into())
            | (bit_cast::<4, 1>(self.hok_set[1].val().into()) << 1)
            | (bit_cast::<4, 1>(self.hok_set[2].val().into()) << 2)
            | (bit_cast::<4, 1>(self.hok_set[3].val().into()) << 3))
            & !self.freed.val();
        if self.reset.val() {
            self.s_hok.d.next = 0.into();
        }

        // ---- The frame at the pointer: its kept fields.
        self.sel_need.next = 0.into();
        self.sel_off.next = 0.into();
        self.sel_len.next = 0.into();
        for k in 0..4 {
            if self.ptr.q.val() == k.to_bits::<2>() {
                self.sel_need.next = self.s_need[k].q.val();
                self.sel_off.next = self.s_off[k].q.val();
                self.sel_len.next = self.s_len[k].q.val();
            }
        }
        self.lk_pid.next = self.lk_key_pid.q.val();
        self.lk_vpn.next = self.lk_key_vpn.q.val();

        // ---- Walk the slots: look up, skip, or wait.
        self.at.next = bit_cast::<4, 1>(1.into()) << self.ptr.q.val();
        self.kill.next = self.tlb_update.val() | self.reset.val();
        self.skip.next = (self.headed.val() & self.at.val()).any()
            & ((self.taken.val() & self.at.val()).any()
                | (self.looked.q.val() & self.at.val()).any()
                | !(self.s_rw.q.val() & self.at.val()).any());
        self.issue.next = (self.headed.val() & self.at.val()).any()
            & !self.skip.val()
            & !(self.chk_hold.val() & self.at.val()).any()
            & self.port_free.val()
            & !self.kill.val();
        self.lk_valid.next = self.issue.val();
        self.looked_n.next = self.looked.q.val();
        if self.issue.val() {
            self.looked_n.next = self.looked.q.val() | self.at.val();
        }
        self.p1_valid.d.next = self.issue.val();
        self.p1_slot.d.next = self.ptr.q.val();
        self.p1_need.d.next = self.sel_need.val();
        // `off + len <= psize` as one three-operand sum: `off + len + !psize` is `off + len -
        // psize - 1` (35 bits; the page is at most 2^31 bytes, the offset below it, the length
        // at most MAX_PAYLOAD), negative exactly when the bytes fit.
        self.fits_sum.next = bit_cast::<35, 32>(self.sel_off.val().get_bits::<32>(0))
            + bit_cast::<35, 32>(self.sel_len.val())
            + !bit_cast::<35, 33>(self.psize.q.val().get_bits::<33>(0));
        self.p1_fits.d.next = (self.fits_sum.val() & self.sign35.val()) != 0;
        self.p1_off.d.next = self.sel_off.val();
        self.p2_valid.d.next = self.p1_valid.q.val();
        self.p2_slot.d.next = self.p1_slot.q.val();
        self.p2_need.d.next = self.p1_need.q.val();
        self.p2_fits.d.next = self.p1_fits.q.val();
        self.p2_off.d.next = self.p1_off.q.val();

        // ---- Keep the result of the lookup issued two cycles ago.
        self.p2_at.next = bit_cast::<4, 1>(1.into()) << self.p2_slot.q.val();
        self.e_ok_n.next = self.e_ok.q.val();
        if self.p2_valid.q.val() {
            if self.res_hit.val()
                & !self.res_alloc.val()
                & ((self.res_perms.val() & self.p2_need.q.val()) == self.p2_need.q.val())
                & self.p2_fits.q.val()
            {
                self.e_ok_n.next = self.e_ok.q.val() | self.p2_at.val();
            } else {
                self.e_ok_n.next = self.e_ok.q.val() & !self.p2_at.val();
            }
            for k in 0..4 {
                if self.p2_slot.q.val() == k.to_bits::<2>() {
                    self.e_pa[k].d.next = (bit_cast::<64, 40>(self.res_pfn.val())
                        << self.page_shift.val())
                        | self.p2_off.q.val();
                }
            }
        }

        // ---- Forget: a freed slot's entry (and a lookup of it on its way); everything on a
        // TLB change.
        self.p1_at.next = bit_cast::<4, 1>(1.into()) << self.p1_slot.q.val();
        if (self.freed.val() & self.p1_at.val()).any() {
            self.p2_valid.d.next = false;
        }
        self.looked.d.next = self.looked_n.val() & !self.freed.val();
        self.e_ok.d.next = self.e_ok_n.val() & !self.freed.val();
        if self.kill.val() {
            self.looked.d.next = 0.into();
            self.e_ok.d.next = 0.into();
            self.p1_valid.d.next = false;
            self.p2_valid.d.next = false;
        }
        // The pointer, and the key of the slot it goes to (the slot's fields from the next
        // cycle on).
        self.ptr_n.next = self.ptr.q.val();
        if self.issue.val() | self.skip.val() {
            self.ptr_n.next = self.ptr.q.val() + 1;
        }
        if self.kill.val() {
            self.ptr_n.next = self.head.val();
        }
        if self.reset.val() {
            self.ptr_n.next = 0.into();
        }
        self.ptr.d.next = self.ptr_n.val();
        // The key register loads the slot at `ptr_n`. Each candidate of `ptr_n` is selected from
        // the slots' registers, and what comes into that slot this cycle (a header's pid and
        // page; a write segment's page, the cycle after its header) is forwarded over it, beside
        // the pointer's decision; the decision picks one. (A select of the forwarded `nx_*` by
        // `ptr_n` put the decision in front of a 4-way 36-bit mux, 7.5 levels on the board at
        // db76bc6; selecting the forwarded `nx_*` per candidate put the header's arrival in
        // front of it, 7.5 at cd10827.)
        self.ptr_up.next = self.ptr.q.val() + 1;
        self.ptr_back.next = self.head.val();
        if self.reset.val() {
            self.ptr_back.next = 0.into();
        }
        self.key_stay_pid.next = 0.into();
        self.key_stay_vpn.next = 0.into();
        self.key_up_pid.next = 0.into();
        self.key_up_vpn.next = 0.into();
        self.key_back_pid.next = 0.into();
        self.key_back_vpn.next = 0.into();
        for k in 0..4 {
            if self.ptr.q.val() == k.to_bits::<2>() {
                self.key_stay_pid.next = self.s_pid[k].q.val();
                self.key_stay_vpn.next = self.s_vpn[k].q.val();
            }
            if self.ptr_up.val() == k.to_bits::<2>() {
                self.key_up_pid.next = self.s_pid[k].q.val();
                self.key_up_vpn.next = self.s_vpn[k].q.val();
            }
            if self.ptr_back.val() == k.to_bits::<2>() {
                self.key_back_pid.next = self.s_pid[k].q.val();
                self.key_back_vpn.next = self.s_vpn[k].q.val();
            }
        }
        // The forwards, in `nx_*`'s order (the header wins).
        if self.chk_in.q.val() & self.chk_seg.q.val() {
            if self.chk_slot.q.val() == self.ptr.q.val() {
                self.key_stay_vpn.next = self.chk_vpn.val();
            }
            if self.chk_slot.q.val() == self.ptr_up.val() {
                self.key_up_vpn.next = self.chk_vpn.val();
            }
            if self.chk_slot.q.val() == self.ptr_back.val() {
                self.key_back_vpn.next = self.chk_vpn.val();
            }
        }
        if self.hdr_in.val() {
            if self.hdr_slot.val() == self.ptr.q.val() {
                self.key_stay_pid.next = self.dec.pid.val();
                self.key_stay_vpn.next = self.hdr_vpn.val();
            }
            if self.hdr_slot.val() == self.ptr_up.val() {
                self.key_up_pid.next = self.dec.pid.val();
                self.key_up_vpn.next = self.hdr_vpn.val();
            }
            if self.hdr_slot.val() == self.ptr_back.val() {
                self.key_back_pid.next = self.dec.pid.val();
                self.key_back_vpn.next = self.hdr_vpn.val();
            }
        }
        self.lk_key_pid.d.next = self.key_stay_pid.val();
        self.lk_key_vpn.d.next = self.key_stay_vpn.val();
        if self.issue.val() | self.skip.val() {
            self.lk_key_pid.d.next = self.key_up_pid.val();
            self.lk_key_vpn.d.next = self.key_up_vpn.val();
        }
        if self.kill.val() {
            self.lk_key_pid.d.next = self.key_back_pid.val();
            self.lk_key_vpn.d.next = self.key_back_vpn.val();
        }
        for k in 0..4 {
            if self.use_next.val() == k.to_bits::<2>() {
                self.use_key_pid.d.next = self.s_pid[k].q.val();
                self.use_key_vpn.d.next = self.s_vpn[k].q.val();
                self.use_key_len.d.next = self.s_len[k].q.val().get_bits::<12>(0);
            }
        }

        // ---- The executor's slot.
        self.ok.next = false;
        self.pa.next = 0.into();
        self.use_rw.next = false;
        self.use_pid.next = self.use_key_pid.q.val();
        self.use_vpn.next = self.use_key_vpn.q.val();
        self.use_len.next = self.use_key_len.q.val();
        self.use_va.next = 0.into();
        self.use_read_ok.next = false;
        self.use_write_ok.next = false;
        self.use_write_in_va.next = false;
        self.use_parse_ok.next = false;
        self.use_append_ok.next = false;
        self.use_atomic_ok.next = false;
        self.use_chase_ok.next = false;
        self.use_hash_ok.next = false;
        self.use_hash.next = 0.into();
        for k in 0..4 {
            if self.use_slot.val() == k.to_bits::<2>() {
                self.ok.next = self.e_ok.q.val().get_bit(k);
                self.pa.next = self.e_pa[k].q.val();
                self.use_rw.next = self.s_rw.q.val().get_bit(k);
                self.use_read_ok.next = self.s_read_ok.q.val().get_bit(k);
                self.use_write_ok.next = self.s_write_ok.q.val().get_bit(k);
                self.use_write_in_va.next = self.s_write_in_va.q.val().get_bit(k);
                // A Clio-KV opcode parses only while the unit is enabled (`Mat::head_ok`).
                self.use_parse_ok.next = self.s_parse_kv.q.val().get_bit(k)
                    & (self.kv_en.val() | !self.s_kv_op.q.val().get_bit(k));
                self.use_append_ok.next = self.s_append_ok.q.val().get_bit(k);
                self.use_atomic_ok.next = self.s_atomic_ok.q.val().get_bit(k);
                self.use_chase_ok.next = self.s_chase_ok.q.val().get_bit(k);
                self.use_va.next = self.s_va[k].q.val();
                // (Or the hash coming out for it this cycle.)
                self.use_hash_ok.next = self.s_hok.q.val().get_bit(k) | self.hok_set[k].val();
                self.use_hash.next = self.s_hash[k].q.val();
                if self.hok_set[k].val() {
                    self.use_hash.next = self.hash.out_hash.val();
                }
            }
        }
    }
}

crate::impl_clocked!(TranslateAhead);

#[cfg(test)]
mod tests;
