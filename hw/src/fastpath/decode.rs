//! The dispatch stage's decode: the request header as typed fields (a view of the header's
//! bytes 0..48 in network byte order, as `proto::header::Packet` reads them), the
//! match-action table's rules for its opcode ([`Mat`]), and the format checks each class
//! starts with, as `proto::header` states them:
//!
//! * `parse_ok`: `Header::parse` (version, known opcode and status, `payload_len` at most
//!   `MAX_PAYLOAD`, `pkt_index < pkt_count`);
//! * `read_ok`: `check_read` (one packet, no payload, `1..=MAX_REQUEST_LEN` bytes inside the VA
//!   space);
//! * `write_ok`: `check_write_segment` (the packet is segment `pkt_index` of a request of
//!   `total_len` bytes), and `write_in_va`: the packet's bytes end inside the VA space;
//! * `append_ok`: one packet of `1..=MAX_RECORD` bytes, all of them in the payload, at an
//!   8-byte aligned `va`; `atomic_ok`: an aligned word, no payload; `chase_ok`: one packet, no
//!   payload.
//!
//! `data_va` is the VA of the packet's first byte (a write's segment starts `pkt_index` KiB
//! into the request; summed within the VA's 48 bits, so exact whenever the write's checks
//! hold). All of it is combinational: the executor reads it in Dispatch, the
//! cycle after it took the frame's header into its register.

use crate::fastpath::links::RequestFields;
use crate::mat::Mat;
use crate::spec::{swapped, Spec};
use crate::util::ByteSwap;
use crate::va_end::{VaEnd, VA_END_TERMS};
use clio_proto::consts::{MAX_PAYLOAD, MAX_PAYLOAD_SHIFT, MAX_REQUEST_LEN, VA_BITS, VA_LIMIT};
use clio_proto::header::{field, FLAG_DURABLE, ROUTED_HEADER_LEN};
use clio_proto::replog;
use clio_proto::Opcode;
use rust_hdl::prelude::*;

// The byte-reversed view: a big-endian field at bytes [a, b) is the little-endian value at
// bit 8 * (48 - b) (`swapped`); raw bytes 0..4 are read in place (version, opcode, status,
// flags), the durable flag is bit 25 of the raw header.
const _: () = assert!(
    ROUTED_HEADER_LEN == 48
        && field::VERSION == 0
        && field::OPCODE == 1
        && field::STATUS == 2
        && field::FLAGS == 3
        && 8 * field::FLAGS + FLAG_DURABLE.trailing_zeros() as usize == 25
        && swapped(field::PID) == 336
        && swapped(field::PKT_INDEX) == 320
        && swapped(field::PKT_COUNT) == 304
        && swapped(field::PAYLOAD_LEN) == 288
        && swapped(field::REQ_ID) == 256
        && swapped(field::VA) == 192
        && swapped(field::TOTAL_LEN) == 160
        && swapped(field::ARG0) == 64
        && swapped(field::ARG1) == 0
);
// Segments of MAX_PAYLOAD bytes (`<< 10`, `>> 10`); an aligned word or record start (`va`'s
// low three bits); the VA space.
const _: () = assert!(MAX_PAYLOAD == 1 << MAX_PAYLOAD_SHIFT && MAX_PAYLOAD_SHIFT == 10);
const _: () = assert!(clio_proto::consts::ATOMIC_BYTES == 8 && replog::FRAME_BYTES == 8);
const _: () = assert!(VA_BITS == 48 && VA_LIMIT == 1 << 48);
// A write's KiB count is `total_len[10..21]`: requests of at most 2^20 bytes.
const _: () = assert!(MAX_REQUEST_LEN == 1 << 20);
// The range checks' bounds: a read's total_len is below 2^32 (u32), a write packet's end from
// the request's VA below 2^27 (a u16 index of 1 KiB segments plus a u16 payload length).
const _: () = assert!(((u16::MAX as u64) << MAX_PAYLOAD_SHIFT) + (u16::MAX as u64) < 1 << 27);

/// The dispatch stage's decode.
#[derive(LogicBlock, Default)]
pub struct Decode {
    /// The request header's bytes 0..48 (byte k at bits 8k..).
    pub hdr: Signal<In, Bits<384>>,
    /// Clio-KV is enabled (its opcodes parse).
    pub kv_en: Signal<In, Bit>,
    /// The header's fields (host byte order).
    pub fields: RequestFields,
    /// The flags' `FLAG_DURABLE`.
    pub durable: Signal<Out, Bit>,
    /// The request id.
    pub req_id: Signal<Out, Bits<32>>,
    /// The VA of the packet's first byte.
    pub data_va: Signal<Out, Bits<64>>,
    /// The checks (module doc).
    pub parse_ok: Signal<Out, Bit>,
    /// `check_read`.
    pub read_ok: Signal<Out, Bit>,
    /// `read_ok` in two halves, for a caller that registers them and decides a cycle later
    /// (the look-ahead's check stage): the format part (one packet, no payload,
    /// `1..=MAX_REQUEST_LEN` bytes) and the range's terms (`read_ok = read_form &
    /// VaEndRule(rd_terms)`); `write_in_va` is `VaEndRule(wr_terms)`.
    pub read_form: Signal<Out, Bit>,
    /// The read range's terms (`VaEndTerms`, K = 32).
    pub rd_terms: Signal<Out, Bits<VA_END_TERMS>>,
    /// The write packet's range terms (`VaEndTerms`, K = 27).
    pub wr_terms: Signal<Out, Bits<VA_END_TERMS>>,
    /// `check_write_segment`.
    pub write_ok: Signal<Out, Bit>,
    /// The packet's bytes end inside the VA space.
    pub write_in_va: Signal<Out, Bit>,
    /// Append's format check: one packet of `1..=MAX_RECORD` payload bytes at an aligned `va`.
    pub append_ok: Signal<Out, Bit>,
    /// An atomic's format check: an aligned word, no payload.
    pub atomic_ok: Signal<Out, Bit>,
    /// The pointer chase's format check: one packet, no payload.
    pub chase_ok: Signal<Out, Bit>,
    /// The match-action table's rules for the opcode (`crate::mat`).
    pub kv: Signal<Out, Bit>,
    /// An extend-path opcode (a parse failure answers UNSUPPORTED).
    pub extend: Signal<Out, Bit>,
    /// A slow-path opcode.
    pub slow: Signal<Out, Bit>,
    /// The request must carry its RAS's key.
    pub needs_key: Signal<Out, Bit>,
    /// The result goes to the idempotence ring.
    pub ring: Signal<Out, Bit>,
    swap: ByteSwap<384>,
    mat: Mat,
    /// `pkt_index < pkt_count` (a segment of the request).
    index_ok: Signal<Local, Bit>,
    /// A write's whole KiB (`total_len[10..21]`, its count when `total_len <= 2^20`), whether
    /// a partial KiB follows (`total_len[0..10] != 0`), `pkt_count - 1`, and whether this is
    /// the last segment.
    wr_kib: Signal<Local, Bits<16>>,
    wr_part: Signal<Local, Bit>,
    cnt_m1: Signal<Local, Bits<16>>,
    wr_last: Signal<Local, Bit>,
    /// A read's range `va + total_len` ends inside the VA space.
    rd_end: VaEnd<32, 33>,
    /// Whether a write packet's bytes (`pkt_index << 10 + payload_len` from the request's VA,
    /// below 2^27) end inside the VA space.
    wr_end: VaEnd<27, 28>,
    max_payload16: Spec<16, { MAX_PAYLOAD as u64 }>,
    /// A VA's bits 0..48 and 48..64.
    va_mask: Spec<64, { VA_LIMIT - 1 }>,
    va_high: Spec<64, { !(VA_LIMIT - 1) }>,
    max_request_len: Spec<32, { MAX_REQUEST_LEN as u64 }>,
    max_record: Spec<32, { replog::MAX_RECORD as u64 }>,
    op_write: Spec<8, { Opcode::Write as u64 }>,
}

impl Logic for Decode {
    #[hdl_gen]
    fn update(&mut self) {
        self.swap.x.next = self.hdr.val();
        self.fields.opcode.next = self.hdr.val().get_bits::<8>(8);
        self.durable.next = self.hdr.val().get_bit(25);
        self.fields.pid.next = self.swap.y.val().get_bits::<16>(336);
        self.fields.pkt_index.next = self.swap.y.val().get_bits::<16>(320);
        self.fields.pkt_count.next = self.swap.y.val().get_bits::<16>(304);
        self.fields.payload_len.next = self.swap.y.val().get_bits::<16>(288);
        self.req_id.next = self.swap.y.val().get_bits::<32>(256);
        self.fields.va.next = self.swap.y.val().get_bits::<64>(192);
        self.fields.total_len.next = self.swap.y.val().get_bits::<32>(160);
        self.fields.arg0.next = self.swap.y.val().get_bits::<64>(64);
        self.fields.arg1.next = self.swap.y.val().get_bits::<64>(0);
        // The match-action table.
        self.mat.opcode.next = self.hdr.val().get_bits::<8>(8);
        self.mat.version.next = self.hdr.val().get_bits::<8>(0);
        self.mat.status.next = self.hdr.val().get_bits::<8>(16);
        self.mat.kv_en.next = self.kv_en.val();
        self.kv.next = self.mat.kv.val();
        self.extend.next = self.mat.extend.val();
        self.slow.next = self.mat.slow.val();
        self.needs_key.next = self.mat.needs_key.val();
        self.ring.next = self.mat.ring.val();
        // Header::parse.
        self.index_ok.next = (self.fields.pkt_count.val() != 0)
            & (self.fields.pkt_index.val() < self.fields.pkt_count.val());
        self.parse_ok.next = self.mat.head_ok.val()
            & (self.fields.payload_len.val() <= self.max_payload16.val())
            & self.index_ok.val();
        // The range checks `va + n <= VA_LIMIT` without a 66-bit sum (`VaEnd`).
        self.rd_end.va.next = self.fields.va.val();
        self.rd_end.n.next = self.fields.total_len.val();
        self.rd_end.n2.next = 0.into();
        // A write packet's end: `pkt_index * 1024 + payload_len` bytes from `va`, both terms
        // in the range check's one sum.
        self.wr_end.va.next = self.fields.va.val();
        self.wr_end.n.next = bit_cast::<27, 16>(self.fields.pkt_index.val()) << 10;
        self.wr_end.n2.next = bit_cast::<27, 16>(self.fields.payload_len.val());
        // check_read.
        self.read_form.next = (self.fields.payload_len.val() == 0)
            & (self.fields.pkt_count.val() == 1)
            & (self.fields.total_len.val() != 0)
            & (self.fields.total_len.val() <= self.max_request_len.val());
        self.read_ok.next = self.read_form.val() & self.rd_end.in_va.val();
        self.rd_terms.next = self.rd_end.terms.val();
        self.wr_terms.next = self.wr_end.terms.val();
        // check_write_segment without a subtraction: with 0 < total_len <= 2^20 (checked
        // alongside), count = ceil(total / 1024) is `wr_kib` + `wr_part`, every segment but the
        // last carries 1024 bytes, and the last `total_len % 1024` (1024 if that is 0).
        self.wr_kib.next = bit_cast::<16, 11>(self.fields.total_len.val().get_bits::<11>(10));
        self.wr_part.next = self.fields.total_len.val().get_bits::<10>(0) != 0;
        self.cnt_m1.next = self.fields.pkt_count.val() - 1;
        self.wr_last.next = self.fields.pkt_index.val() == self.cnt_m1.val();
        self.write_ok.next = self.index_ok.val()
            & (self.fields.total_len.val() != 0)
            & (self.fields.total_len.val() <= self.max_request_len.val())
            & (self.wr_part.val() & (self.cnt_m1.val() == self.wr_kib.val())
                | !self.wr_part.val() & (self.fields.pkt_count.val() == self.wr_kib.val()))
            & (!self.wr_last.val() & (self.fields.payload_len.val() == self.max_payload16.val())
                | self.wr_last.val()
                    & self.wr_part.val()
                    & (self.fields.payload_len.val()
                        == bit_cast::<16, 10>(self.fields.total_len.val().get_bits::<10>(0)))
                | self.wr_last.val()
                    & !self.wr_part.val()
                    & (self.fields.payload_len.val() == self.max_payload16.val()));
        self.write_in_va.next = self.wr_end.in_va.val();
        // A write's packet VA is summed in the VA's 48 bits only (a 38-bit carry chain from bit
        // 10, not 54): exact whenever its checks hold (`write_ok` and `write_in_va`: a packet
        // of at least one byte ending inside the VA space), the only case it is used.
        self.data_va.next = self.fields.va.val();
        if self.fields.opcode.val() == self.op_write.val() {
            self.data_va.next = (self.fields.va.val() & self.va_high.val())
                | ((self.fields.va.val()
                    + (bit_cast::<64, 16>(self.fields.pkt_index.val()) << 10))
                    & self.va_mask.val());
        }
        self.append_ok.next = (self.fields.va.val().get_bits::<3>(0) == 0)
            & (self.fields.pkt_count.val() == 1)
            & (self.fields.total_len.val() != 0)
            & (self.fields.total_len.val() <= self.max_record.val())
            & (bit_cast::<32, 16>(self.fields.payload_len.val()) == self.fields.total_len.val());
        self.atomic_ok.next =
            (self.fields.va.val().get_bits::<3>(0) == 0) & (self.fields.payload_len.val() == 0);
        self.chase_ok.next =
            (self.fields.payload_len.val() == 0) & (self.fields.pkt_count.val() == 1);
    }
}

#[cfg(test)]
mod tests;
