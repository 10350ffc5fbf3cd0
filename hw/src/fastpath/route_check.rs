//! The route check (`clio_model::route_check`, `clio_proto::route_cookie`): per ingest slot,
//! whether the frame's `cookie` field is the route cookie of its source address, so Dispatch
//! can refuse an answer larger than twice its request to an address the request does not
//! prove (`RouteUnverified`).
//!
//! * The header beat (`hdr_in` into slot `hdr_slot`, with the frame's route side band) gives
//!   the slot whether its frame needs the check (`need`: `route_cookie::needs_route_cookie` of
//!   its opcode and `total_len`, from proto's two opcode tables), its address's message
//!   (`route_message`: the IPv4 address for UDP, the MAC for raw Ethernet) and the cookie it
//!   carries. A frame that needs no check, or whose message is the cached one (`c_msg`, the
//!   last computed), is decided at once (`s_done`, readable from the next cycle: before the
//!   frame can be dispatched); else the slot waits for the SipHash unit
//!   ([`crate::siphash::SipHash`], one computation at a time, the lowest waiting slot first,
//!   14 cycles), whose result fills the cache and decides every waiting slot with that message.
//!   So only frames that need the check ever occupy the unit.
//! * Dispatch reads `need`, `ok` and `done` for the executor's slot (`sel`), and waits in its
//!   Dispatch state while a request that needs the check is not `done`: only such requests (a
//!   long Read or PointerChase, a KvGet) ever wait, and only for an address not in the cache.
//!   `need` is registered per slot, off the take path (the executor's class registers).
//! * Off until the slow path's `ROUTE_KEY` (`key.valid`, with the secret): `ok` and `done` are
//!   high. A `ROUTE_KEY` empties the cache and sends every slot back to the unit.

use crate::fastpath::ingest::SLOTS;
use crate::fastpath::links::{HeaderBeatIn, RouteKeyIn, RouteVerdict};
use crate::siphash::SipHash;
use crate::spec::Spec;
use crate::util::{rule_table, ByteSwap};
use clio_proto::frame::Encap;
use clio_proto::header::field;
use clio_proto::route_cookie::{route_cookie_always, route_cookie_if_long, FREE_ANSWER_BYTES};
use rust_hdl::prelude::*;

// The cookie field is 4 bytes, big endian; the route side band is `Route::to_bytes` (byte k at
// bits 8k..): encap at byte 0, the peer's MAC at bytes 2..8 (bits 16..64), its IPv4 address at
// bytes 14..18 (bits 112..144); the message's length byte is 4 or 6 at bits 56..64, above the
// 12 nibbles the source bucket folds (16 buckets).
// The opcode is byte 1, `total_len` bytes 24..28 (big endian).
const _: () = assert!(
    field::COOKIE.end - field::COOKIE.start == 4
        && field::COOKIE.start * 8 == 480
        && field::OPCODE == 1
        && field::TOTAL_LEN.start == 24
        && field::TOTAL_LEN.end == 28
        && SLOTS == 4
        && clio_proto::ring::RX_SOURCE_BUCKETS == 16
);

/// The route check.
#[derive(LogicBlock)]
pub struct RouteCheck {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: off (no secret), nothing waiting.
    pub reset: Signal<In, Bit>,
    /// A frame's header beat as it arrives (`Ingest::header`): its opcode, `total_len` and cookie fields and its route go to the slot's check.
    pub hdr: HeaderBeatIn,
    /// ROUTE_KEY (`SlowPathTx::routes`): check under this secret (`key0`, `key1`) from now on.
    pub key: RouteKeyIn,
    /// The slot whose verdict `ok` and `done` give (the executor's).
    pub sel: Signal<In, Bits<2>>,
    /// The verdict for the frame in slot `sel` (`Executor::routes`, joined in the top).
    pub verdict: RouteVerdict,
    /// The source bucket of the frame in slot `sel` (`clio_proto::ring::rx_source_bucket`),
    /// for the RX ring's per-source share (`RxShare::source`).
    pub source: Signal<Out, Bits<4>>,
    /// The PRF.
    sip: SipHash,
    cookie_swap: ByteSwap<32>,
    len_swap: ByteSwap<32>,
    /// The header's frame needs the check.
    hdr_need: Signal<Local, Bit>,
    /// The header's address as SipHash's final block, and its source bucket (the XOR of its
    /// low 12 nibbles).
    msg: Signal<Local, Bits<64>>,
    msg_bucket: Signal<Local, Bits<4>>,
    /// A secret is set (the check is on), and its words.
    en: DFF<Bit>,
    k0: DFF<Bits<64>>,
    k1: DFF<Bits<64>>,
    /// The cache: the last computed message and its cookie.
    c_valid: DFF<Bit>,
    c_msg: DFF<Bits<64>>,
    c_val: DFF<Bits<32>>,
    /// The unit computes for `busy_msg` (a ROUTE_KEY drops the computation: `busy` low).
    busy: DFF<Bit>,
    busy_msg: DFF<Bits<64>>,
    /// Per slot: whether it needs the check, its message, the cookie it carries, decided, and
    /// the verdict.
    s_need: [DFF<Bit>; SLOTS],
    s_msg: [DFF<Bits<64>>; SLOTS],
    s_cookie: [DFF<Bits<32>>; SLOTS],
    s_done: [DFF<Bit>; SLOTS],
    s_ok: [DFF<Bit>; SLOTS],
    s_bucket: [DFF<Bits<4>>; SLOTS],
    /// The slot the unit starts on this cycle, if any (`pick`).
    pick_valid: Signal<Local, Bit>,
    pick: Signal<Local, Bits<2>>,
    /// The messages' length bytes (4 for an IPv4 address, 6 for a MAC) and the raw
    /// encapsulation's code.
    c_len_ip: Spec<64, { 4 << 56 }>,
    c_len_mac: Spec<64, { 6 << 56 }>,
    c_raw: Spec<8, { Encap::RawEthernet as u64 }>,
    c_free_answer: Spec<32, { FREE_ANSWER_BYTES as u64 }>,
    /// Opcodes whose answers need the check at any length, and beyond `FREE_ANSWER_BYTES`.
    t_always: Constant<Bits<256>>,
    t_if_long: Constant<Bits<256>>,
}

impl Default for RouteCheck {
    fn default() -> Self {
        RouteCheck {
            clock: Default::default(),
            reset: Default::default(),
            hdr: Default::default(),
            key: Default::default(),
            sel: Default::default(),
            verdict: Default::default(),
            source: Default::default(),
            sip: Default::default(),
            cookie_swap: Default::default(),
            len_swap: Default::default(),
            hdr_need: Default::default(),
            msg: Default::default(),
            en: Default::default(),
            k0: Default::default(),
            k1: Default::default(),
            c_valid: Default::default(),
            c_msg: Default::default(),
            c_val: Default::default(),
            busy: Default::default(),
            busy_msg: Default::default(),
            s_need: Default::default(),
            s_msg: Default::default(),
            s_cookie: Default::default(),
            s_done: Default::default(),
            s_ok: Default::default(),
            s_bucket: Default::default(),
            msg_bucket: Default::default(),
            pick_valid: Default::default(),
            pick: Default::default(),
            c_len_ip: Default::default(),
            c_len_mac: Default::default(),
            c_raw: Default::default(),
            c_free_answer: Default::default(),
            t_always: Constant::new(rule_table(route_cookie_always)),
            t_if_long: Constant::new(rule_table(route_cookie_if_long)),
        }
    }
}

impl Logic for RouteCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, en, k0, k1, c_valid, c_msg, c_val, busy, busy_msg);
        for k in 0..4 {
            self.s_need[k].clock.next = self.clock.val();
            self.s_need[k].d.next = self.s_need[k].q.val();
            self.s_msg[k].clock.next = self.clock.val();
            self.s_msg[k].d.next = self.s_msg[k].q.val();
            self.s_cookie[k].clock.next = self.clock.val();
            self.s_cookie[k].d.next = self.s_cookie[k].q.val();
            self.s_done[k].clock.next = self.clock.val();
            self.s_done[k].d.next = self.s_done[k].q.val();
            self.s_ok[k].clock.next = self.clock.val();
            self.s_ok[k].d.next = self.s_ok[k].q.val();
            self.s_bucket[k].clock.next = self.clock.val();
            self.s_bucket[k].d.next = self.s_bucket[k].q.val();
        }
        self.sip.clock.next = self.clock.val();
        self.cookie_swap.x.next = self.hdr.data.val().get_bits::<32>(480);
        self.len_swap.x.next = self.hdr.data.val().get_bits::<32>(192);
        self.hdr_need.next = self
            .t_always
            .val()
            .get_bit(self.hdr.data.val().get_bits::<8>(8).index())
            | (self
                .t_if_long
                .val()
                .get_bit(self.hdr.data.val().get_bits::<8>(8).index())
                & (self.len_swap.y.val() > self.c_free_answer.val()));
        // The address: the MAC (6 bytes) for raw Ethernet, else the IPv4 address (4 bytes).
        self.msg.next =
            bit_cast::<64, 32>(self.hdr.route.val().get_bits::<32>(112)) | self.c_len_ip.val();
        if self.hdr.route.val().get_bits::<8>(0) == self.c_raw.val() {
            self.msg.next =
                bit_cast::<64, 48>(self.hdr.route.val().get_bits::<48>(16)) | self.c_len_mac.val();
        }
        self.msg_bucket.next = self.msg.val().get_bits::<4>(0)
            ^ self.msg.val().get_bits::<4>(4)
            ^ self.msg.val().get_bits::<4>(8)
            ^ self.msg.val().get_bits::<4>(12)
            ^ self.msg.val().get_bits::<4>(16)
            ^ self.msg.val().get_bits::<4>(20)
            ^ self.msg.val().get_bits::<4>(24)
            ^ self.msg.val().get_bits::<4>(28)
            ^ self.msg.val().get_bits::<4>(32)
            ^ self.msg.val().get_bits::<4>(36)
            ^ self.msg.val().get_bits::<4>(40)
            ^ self.msg.val().get_bits::<4>(44);
        // The unit's next job: the lowest slot not decided.
        self.pick_valid.next = false;
        self.pick.next = 0.into();
        for k in 0..4 {
            if !self.s_done[3 - k].q.val() {
                self.pick_valid.next = true;
                self.pick.next = (3 - k).to_bits::<2>();
            }
        }
        self.sip.start.next = false;
        self.sip.key0.next = self.k0.q.val();
        self.sip.key1.next = self.k1.q.val();
        self.sip.msg.next = self.s_msg[0].q.val();
        for k in 0..4 {
            if self.pick.val() == k.to_bits::<2>() {
                self.sip.msg.next = self.s_msg[k].q.val();
            }
        }
        if self.en.q.val() & !self.busy.q.val() & self.pick_valid.val() {
            self.sip.start.next = true;
            self.busy.d.next = true;
            self.busy_msg.d.next = self.sip.msg.val();
        }
        // The unit's result: cache it and decide every waiting slot with its message.
        if self.busy.q.val() & self.sip.done.val() {
            self.busy.d.next = false;
            self.c_valid.d.next = true;
            self.c_msg.d.next = self.busy_msg.q.val();
            self.c_val.d.next = self.sip.out.val().get_bits::<32>(0);
            for k in 0..4 {
                if !self.s_done[k].q.val() & (self.s_msg[k].q.val() == self.busy_msg.q.val()) {
                    self.s_done[k].d.next = true;
                    self.s_ok[k].d.next =
                        self.s_cookie[k].q.val() == self.sip.out.val().get_bits::<32>(0);
                }
            }
        }
        // A header: no check needed, decided from the cache, or waiting (this assignment wins
        // over the unit's).
        for k in 0..4 {
            if self.hdr.valid.val() & (self.hdr.slot.val() == k.to_bits::<2>()) {
                self.s_need[k].d.next = self.hdr_need.val();
                self.s_msg[k].d.next = self.msg.val();
                self.s_cookie[k].d.next = self.cookie_swap.y.val();
                self.s_bucket[k].d.next = self.msg_bucket.val();
                self.s_done[k].d.next = !self.hdr_need.val()
                    | (self.c_valid.q.val() & (self.c_msg.q.val() == self.msg.val()));
                self.s_ok[k].d.next = self.cookie_swap.y.val() == self.c_val.q.val();
            }
        }
        // ROUTE_KEY: the new secret; nothing computed under the old one counts.
        if self.key.valid.val() {
            self.en.d.next = true;
            self.k0.d.next = self.key.key0.val();
            self.k1.d.next = self.key.key1.val();
            self.c_valid.d.next = false;
            self.busy.d.next = false;
            for k in 0..4 {
                self.s_done[k].d.next = !self.s_need[k].q.val();
            }
        }
        self.verdict.need.next = false;
        self.verdict.ok.next = true;
        self.verdict.done.next = true;
        self.source.next = self.s_bucket[0].q.val();
        for k in 0..4 {
            if self.sel.val() == k.to_bits::<2>() {
                self.source.next = self.s_bucket[k].q.val();
                self.verdict.need.next = self.s_need[k].q.val();
                if self.en.q.val() {
                    self.verdict.ok.next = self.s_ok[k].q.val();
                    self.verdict.done.next = self.s_done[k].q.val();
                }
            }
        }
        if self.reset.val() {
            self.en.d.next = false;
            self.c_valid.d.next = false;
            self.busy.d.next = false;
            for k in 0..4 {
                self.s_need[k].d.next = false;
                self.s_done[k].d.next = true;
            }
        }
    }
}

crate::impl_clocked!(RouteCheck);

#[cfg(test)]
mod tests;
