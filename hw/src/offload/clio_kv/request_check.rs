//! `KvRequestCheck`: the Clio-KV unit's checks of a request, as `KvRequest::decode` makes them
//! (`proto::kv`), in two parts:
//!
//! * the header of the request offered now (`hdr_zero`: `va` = `arg0` = `arg1` = 0 and one
//!   packet; `hdr_len`: `total_len` = `payload_len`, between the prefix and `MAX_PAYLOAD`) and
//!   its opcode (`op_ok`: one of the unit's), combinational, for the unit to register as it
//!   takes the request;
//! * the prefix of the payload's first beat the unit took (`b0`: key and value lengths, u16 LE
//!   each), against the payload's length (`body_ok`: `klen + vlen + PREFIX_BYTES == plen`, with
//!   no carry chain) and the bounds (`bounds_ok`: key 1..=`MAX_KEY`, value 0..=`MAX_VALUE` on a
//!   put and none otherwise), and whether the key runs into the second beat (`key_long`), each
//!   registered: the unit reads them a cycle after `b0` (its `Sizes` state).
//!
//! It also hands out the request's lengths and key (`klen`, `vlen`, `key`: the key's bytes are
//! `b0`'s from byte 4 and `b1lo`, the second beat's first 4 bytes).

use crate::spec::Spec;
use clio_proto::consts::MAX_PAYLOAD;
use clio_proto::kv::{MAX_KEY, MAX_VALUE, PREFIX_BYTES};
use clio_proto::Opcode;
use rust_hdl::prelude::*;

/// The request checks (module doc).
#[derive(LogicBlock, Default)]
pub struct KvRequestCheck {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The offered request's opcode.
    pub op: Signal<In, Bits<8>>,
    /// The offered request's `va`.
    pub va: Signal<In, Bits<64>>,
    /// The offered request's `arg0`.
    pub arg0: Signal<In, Bits<64>>,
    /// The offered request's `arg1`.
    pub arg1: Signal<In, Bits<64>>,
    /// The offered request's `total_len`.
    pub len: Signal<In, Bits<32>>,
    /// The offered request's `payload_len`.
    pub pay_len: Signal<In, Bits<16>>,
    /// The offered request's `pkt_count`.
    pub pkt_count: Signal<In, Bits<16>>,
    /// The offered request's `pkt_index`.
    pub pkt_index: Signal<In, Bits<16>>,
    /// The taken request's first payload beat.
    pub b0: Signal<In, Bits<512>>,
    /// The taken request's second beat's first 4 bytes (0 until taken).
    pub b1lo: Signal<In, Bits<32>>,
    /// The taken request's payload length.
    pub plen: Signal<In, Bits<16>>,
    /// The taken request is a put.
    pub is_put: Signal<In, Bit>,
    /// The offered opcode is one of the unit's.
    pub op_ok: Signal<Out, Bit>,
    /// The offered header's zeros and one packet.
    pub hdr_zero: Signal<Out, Bit>,
    /// The offered header's lengths.
    pub hdr_len: Signal<Out, Bit>,
    /// The key's length (`b0`'s prefix).
    pub klen: Signal<Out, Bits<16>>,
    /// The value's length (`b0`'s prefix).
    pub vlen: Signal<Out, Bits<16>>,
    /// The key (bytes past `klen` are the value's or garbage).
    pub key: Signal<Out, Bits<512>>,
    /// The prefix's lengths add up to the payload's, registered.
    pub body_ok: Signal<Out, Bit>,
    /// The prefix's lengths are within their bounds, registered.
    pub bounds_ok: Signal<Out, Bit>,
    /// The key runs past the first beat (its last bytes are the second's), registered.
    pub key_long: Signal<Out, Bit>,
    /// `plen - PREFIX_BYTES` (17 bits, wrapping), registered: `body_ok` checks `klen + vlen`
    /// against it without an adder (`sz_*`).
    plen_m4: DFF<Bits<17>>,
    /// `body_ok`, `bounds_ok`, `key_long`.
    body_q: DFF<Bit>,
    bounds_q: DFF<Bit>,
    long_q: DFF<Bit>,
    /// The value's length is within the opcode's bound.
    value_ok: Signal<Local, Bit>,
    /// `klen + vlen == plen_m4` (mod 2^17) without the carries' chain: with `a`, `b`, `c` the
    /// three, `a + b == c` iff `a ^ b ^ c == (a & b | (a | b) & !c) << 1`.
    sz_a: Signal<Local, Bits<17>>,
    sz_b: Signal<Local, Bits<17>>,
    sz_x: Signal<Local, Bits<17>>,
    sz_k: Signal<Local, Bits<17>>,
    op_get: Spec<8, { Opcode::KvGet as u64 }>,
    op_put: Spec<8, { Opcode::KvPut as u64 }>,
    op_delete: Spec<8, { Opcode::KvDelete as u64 }>,
    c_prefix: Spec<16, { PREFIX_BYTES as u64 }>,
    c_beat0_key: Spec<16, { (64 - PREFIX_BYTES) as u64 }>,
    c_max_key: Spec<16, { MAX_KEY as u64 }>,
    c_max_value: Spec<16, { MAX_VALUE as u64 }>,
    c_max_payload: Spec<16, { MAX_PAYLOAD as u64 }>,
}

impl Logic for KvRequestCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, plen_m4, body_q, bounds_q, long_q);
        self.klen.next = self.b0.val().get_bits::<16>(0);
        self.vlen.next = self.b0.val().get_bits::<16>(16);
        self.key.next = (self.b0.val() >> 32) | (bit_cast::<512, 32>(self.b1lo.val()) << 480);
        self.op_ok.next = (self.op.val() == self.op_get.val())
            | (self.op.val() == self.op_put.val())
            | (self.op.val() == self.op_delete.val());
        self.hdr_zero.next = (self.va.val() == 0)
            & (self.arg0.val() == 0)
            & (self.arg1.val() == 0)
            & (self.pkt_count.val() == 1)
            & (self.pkt_index.val() == 0);
        self.hdr_len.next = (self.len.val() == bit_cast::<32, 16>(self.pay_len.val()))
            & (self.pay_len.val() >= self.c_prefix.val())
            & (self.pay_len.val() <= self.c_max_payload.val());
        self.long_q.d.next = self.klen.val() > self.c_beat0_key.val();
        self.value_ok.next = self.vlen.val() == 0;
        if self.is_put.val() {
            self.value_ok.next = self.vlen.val() <= self.c_max_value.val();
        }
        // klen + vlen + PREFIX_BYTES == plen (17 bits): klen + vlen == plen_m4, carry-free.
        self.plen_m4.d.next =
            bit_cast::<17, 16>(self.plen.val()) - bit_cast::<17, 16>(self.c_prefix.val());
        self.sz_a.next = bit_cast::<17, 16>(self.klen.val());
        self.sz_b.next = bit_cast::<17, 16>(self.vlen.val());
        self.sz_x.next = self.sz_a.val() ^ self.sz_b.val() ^ self.plen_m4.q.val();
        self.sz_k.next = ((self.sz_a.val() & self.sz_b.val())
            | ((self.sz_a.val() | self.sz_b.val()) & !self.plen_m4.q.val()))
            << 1;
        self.body_q.d.next = self.sz_x.val() == self.sz_k.val();
        self.bounds_q.d.next = (self.klen.val() != 0)
            & (self.klen.val() <= self.c_max_key.val())
            & self.value_ok.val();
        self.body_ok.next = self.body_q.q.val();
        self.bounds_ok.next = self.bounds_q.q.val();
        self.key_long.next = self.long_q.q.val();
    }
}

crate::impl_clocked!(KvRequestCheck);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::util::bytes_to_bits;
    use clio_proto::kv::KvRequest;

    /// Every prefix the length classes reach (empty, longest and too long keys; values at and
    /// past the bound; lengths that lie about the payload), for each opcode: `body_ok &
    /// bounds_ok` is `KvRequest::decode` of the same body; `key_long` says the key ends past
    /// the first beat; `klen`, `vlen` and `key` are the prefix's.
    #[test]
    fn the_prefix_checks_are_kv_request_decode() {
        let mut b = Bench::new(KvRequestCheck::default());
        let mut checked = 0;
        for op in [Opcode::KvGet, Opcode::KvPut, Opcode::KvDelete] {
            for klen in [0usize, 1, 8, 60, 61, MAX_KEY, MAX_KEY + 1] {
                for vlen in [0usize, 1, MAX_VALUE, MAX_VALUE + 1] {
                    for lie in [0i64, -1, 1] {
                        let mut body = (klen as u16).to_le_bytes().to_vec();
                        body.extend_from_slice(&(vlen as u16).to_le_bytes());
                        body.extend((0..klen + vlen).map(|i| i as u8 ^ 0x5A));
                        let plen = (body.len() as i64 + lie) as usize;
                        body.resize(plen.min(MAX_PAYLOAD + 8), 0);
                        let mut h = KvRequest::new(Opcode::KvGet, b"k", b"")
                            .expect("a request")
                            .header(op, 1, 1);
                        h.payload_len = plen as u16;
                        h.total_len = plen as u32;
                        let want = KvRequest::decode(&h, &body[..plen.min(body.len())]);
                        let mut beat = [0u8; 64];
                        let n = body.len().min(64);
                        beat[..n].copy_from_slice(&body[..n]);
                        let mut b1 = [0u8; 4];
                        if let Some(rest) = body.get(64..) {
                            let m = rest.len().min(4);
                            b1[..m].copy_from_slice(&rest[..m]);
                        }
                        let u = &mut b.uut;
                        u.b0.next = bytes_to_bits::<512>(&beat);
                        u.b1lo.next = u32::from_le_bytes(b1).to_bits();
                        u.plen.next = (plen as u64).to_bits();
                        u.is_put.next = op == Opcode::KvPut;
                        b.tick();
                        b.tick();
                        b.settle();
                        let u = &b.uut;
                        let ok = u.body_ok.val() & u.bounds_ok.val();
                        let plen_fits = plen >= PREFIX_BYTES && plen <= MAX_PAYLOAD;
                        if plen_fits {
                            assert_eq!(
                                ok,
                                want.is_ok(),
                                "{op:?} key {klen} value {vlen} payload {plen}: {want:?}"
                            );
                            checked += 1;
                        }
                        if want.is_ok() {
                            assert_eq!(u.key_long.val(), klen > 60);
                            assert_eq!(u.klen.val().to_u64(), klen as u64);
                            assert_eq!(u.vlen.val().to_u64(), vlen as u64);
                            let key = u.key.val();
                            for (i, k) in body[4..4 + klen].iter().enumerate() {
                                let got = key.get_bits::<8>(8 * i).to_u64() as u8;
                                assert_eq!(got, *k, "key byte {i}");
                            }
                        }
                    }
                }
            }
        }
        assert!(checked > 150, "{checked}");
    }

    /// The offered header: one packet of zeros in `va`, `arg0`, `arg1`, a `total_len` equal to
    /// the payload's within bounds, and the unit's opcodes.
    #[test]
    fn the_header_checks_refuse_each_field() {
        let mut b = Bench::new(KvRequestCheck::default());
        let good = |u: &mut KvRequestCheck| {
            u.op.next = (Opcode::KvPut as u64).to_bits();
            u.va.next = 0.into();
            u.arg0.next = 0.into();
            u.arg1.next = 0.into();
            u.len.next = 20.into();
            u.pay_len.next = 20.into();
            u.pkt_count.next = 1.into();
            u.pkt_index.next = 0.into();
        };
        let cases: [(&str, fn(&mut KvRequestCheck)); 9] = [
            ("va", |u| u.va.next = 8.into()),
            ("arg0", |u| u.arg0.next = 1.into()),
            ("arg1", |u| u.arg1.next = 1.into()),
            ("pkt_count", |u| u.pkt_count.next = 2.into()),
            ("pkt_index", |u| u.pkt_index.next = 1.into()),
            ("total_len", |u| u.len.next = 21.into()),
            ("short payload", |u| {
                u.len.next = 3.into();
                u.pay_len.next = 3.into();
            }),
            ("long payload", |u| {
                u.len.next = ((MAX_PAYLOAD + 1) as u64).to_bits();
                u.pay_len.next = ((MAX_PAYLOAD + 1) as u64).to_bits();
            }),
            ("opcode", |u| u.op.next = (Opcode::Read as u64).to_bits()),
        ];
        good(&mut b.uut);
        b.settle();
        assert!(b.uut.op_ok.val() & b.uut.hdr_zero.val() & b.uut.hdr_len.val());
        for (name, bend) in cases {
            good(&mut b.uut);
            bend(&mut b.uut);
            b.settle();
            let u = &b.uut;
            assert!(
                !(u.op_ok.val() & u.hdr_zero.val() & u.hdr_len.val()),
                "{name} passed"
            );
        }
    }
}
