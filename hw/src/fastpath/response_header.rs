//! The executor's response header builder: the request's header bytes 0..48 as the response
//! carries them (`Header::response_to`, then the fields a class answers with), and the header a
//! REQUEST descriptor hands the slow path. Combinational, from the executor's registers.
//!
//! The response: `status`, the `flags` byte (`FLAG_RESPONSE`; a slow-path REPLY's own),
//! `payload_len`, checksum zero (the transmit side's CRC covers the packet); then, when asked,
//! `arg0` (an atomic's old value, a replay's recorded value: `arg0_on`), `arg0` and `arg1`
//! (Append's old and new tail, an offload's answer: `args_on`), `total_len` = `payload_len`
//! (Clio-KV's value length: `value_len_on`), and `pkt_index` / `pkt_count` (a read's answer,
//! one packet per KiB: `seg_on`). Bytes 48..64 of a response (key, client) are zero: they are
//! not part of this view. The REQUEST descriptor's header is `Header::emit_header` of the
//! parsed request: flags and checksum zero.

use crate::fastpath::links::ResponseFieldsIn;
use crate::spec::Spec;
use crate::util::ByteSwap;
use clio_proto::header::{field, ROUTED_HEADER_LEN};
use clio_proto::Status;
use rust_hdl::prelude::*;

// Raw positions (byte k at bits 8k): status @2 (16), flags @3 (24), pkt_index @6 (48),
// pkt_count @8 (64), payload_len @10 (80), total_len @24 (192), checksum @28 (224), arg0 @32
// (256), arg1 @40 (320); big-endian, so a 16-bit field's high byte is at the lower address.
const _: () = assert!(
    ROUTED_HEADER_LEN == 48
        && field::STATUS == 2
        && field::FLAGS == 3
        && field::PKT_INDEX.start == 6
        && field::PKT_COUNT.start == 8
        && field::PAYLOAD_LEN.start == 10
        && field::TOTAL_LEN.start == 24
        && field::TOTAL_LEN.end == 28
        && field::CHECKSUM.start == 28
        && field::CHECKSUM.end == 32
        && field::ARG0.start == 32
        && field::ARG1.start == 40
        && field::ARG1.end == 48
);

/// The response header builder.
#[derive(LogicBlock, Default)]
pub struct ResponseHeader {
    /// The request's header bytes 0..48 (byte k at bits 8k..).
    pub request: Signal<In, Bits<384>>,
    /// The executor's response fields (`Executor::rsp`, joined in the top), and the response
    /// header (`response`) and its OK twin (`response_ok`) built of them.
    pub exec: ResponseFieldsIn,
    /// `arg0` and `arg1` answer with `arg0` and `arg1`.
    pub args_on: Signal<In, Bit>,
    /// The `arg1` answered with (with `args_on` or `arg1_on`).
    pub arg1: Signal<In, Bits<64>>,
    /// `arg1` alone answers with `arg1` (a quota's refusal names its quota there).
    pub arg1_on: Signal<In, Bit>,
    /// `total_len` answers with `payload_len`.
    pub value_len_on: Signal<In, Bit>,
    /// The REQUEST descriptor's header bytes 0..48.
    pub forwarded: Signal<Out, Bits<384>>,
    /// `arg0` and `arg1` in network byte order.
    arg0_be: ByteSwap<64>,
    arg1_be: ByteSwap<64>,
    st_ok: Spec<8, { Status::Ok as u64 }>,
}

impl Logic for ResponseHeader {
    #[hdl_gen]
    fn update(&mut self) {
        self.arg0_be.x.next = self.exec.arg0.val();
        self.arg1_be.x.next = self.arg1.val();
        self.exec.response.next = (self.request.val()
            & !(bit_cast::<384, 16>(0xFFFF_u16.to_bits()) << 16)
            & !(bit_cast::<384, 16>(0xFFFF_u16.to_bits()) << 80)
            & !(bit_cast::<384, 32>(0xFFFF_FFFF_u32.to_bits()) << 224))
            | (bit_cast::<384, 8>(self.exec.status.val()) << 16)
            | (bit_cast::<384, 8>(self.exec.flags.val()) << 24)
            | (bit_cast::<384, 8>(self.exec.payload_len.val().get_bits::<8>(8)) << 80)
            | (bit_cast::<384, 8>(self.exec.payload_len.val().get_bits::<8>(0)) << 88);
        if self.exec.arg0_on.val() | self.args_on.val() {
            self.exec.response.next = (self.exec.response.val()
                & !(bit_cast::<384, 64>(0xFFFF_FFFF_FFFF_FFFF_u64.to_bits()) << 256))
                | (bit_cast::<384, 64>(self.arg0_be.y.val()) << 256);
        }
        if self.args_on.val() | self.arg1_on.val() {
            self.exec.response.next = (self.exec.response.val()
                & !(bit_cast::<384, 64>(0xFFFF_FFFF_FFFF_FFFF_u64.to_bits()) << 320))
                | (bit_cast::<384, 64>(self.arg1_be.y.val()) << 320);
        }
        if self.value_len_on.val() {
            self.exec.response.next = (self.exec.response.val()
                & !(bit_cast::<384, 32>(0xFFFF_FFFF_u32.to_bits()) << 192))
                | (bit_cast::<384, 8>(self.exec.payload_len.val().get_bits::<8>(8)) << 208)
                | (bit_cast::<384, 8>(self.exec.payload_len.val().get_bits::<8>(0)) << 216);
        }
        if self.exec.seg_on.val() {
            self.exec.response.next = (self.exec.response.val()
                & !(bit_cast::<384, 32>(0xFFFF_FFFF_u32.to_bits()) << 48))
                | (bit_cast::<384, 8>(self.exec.pkt_index.val().get_bits::<8>(8)) << 48)
                | (bit_cast::<384, 8>(self.exec.pkt_index.val().get_bits::<8>(0)) << 56)
                | (bit_cast::<384, 8>(self.exec.pkt_count.val().get_bits::<8>(8)) << 64)
                | (bit_cast::<384, 8>(self.exec.pkt_count.val().get_bits::<8>(0)) << 72);
        }
        self.exec.response_ok.next = (self.exec.response.val()
            & !(bit_cast::<384, 8>(0xFF_u8.to_bits()) << 16))
            | (bit_cast::<384, 8>(self.st_ok.val()) << 16);
        self.forwarded.next = self.request.val()
            & !(bit_cast::<384, 8>(0xFF_u8.to_bits()) << 24)
            & !(bit_cast::<384, 32>(0xFFFF_FFFF_u32.to_bits()) << 224);
    }
}

#[cfg(test)]
mod tests;
