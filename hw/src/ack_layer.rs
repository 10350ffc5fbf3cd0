//! The ack layer: CRC-32C of every incoming packet, verified as it streams in, and the same
//! CRC engine for the responses on the way out.
//!
//! CRC-32C is a GF(2)-linear map of (register, data). One 512-bit beat is one XOR matrix
//! (`r' = S * r ^ D * data`, 32 rows over 32 + 512 inputs) computed **at elaboration time in
//! Rust from the polynomial** ([`beat_rows`]), so there is no table and no per-byte loop in
//! the hardware. A partial beat of `n` bytes is fed with its bytes `n..64` zeroed: that is the
//! CRC register after `64 - n` extra zero bytes, `A^(8(64-n)) r`. The zero bytes are undone
//! once, after the last beat, by the inverse zero-byte map applied for the set bits of
//! `64 - n` (six conditional 32x32 matrices, [`unshift_rows`]). So every beat, full or not,
//! takes one cycle (II = 1) and the value is ready one cycle after the last beat.
//!
//! [`AckLayer`] is the receive side: it zeroes the checksum field (bytes 28..32 of the first
//! beat), covers exactly `64 + payload_len` bytes (trailing frame padding is ignored, as
//! `proto::Packet::as_bytes`), counts the bytes that arrived, and gives the verdict of
//! `sim::model::ack_layer::verify`: DROP (shorter than a header, or a response), NACK
//! (truncated or checksum mismatch) or PASS.

use crate::util::Gather;
use rust_hdl::prelude::*;

/// Header bytes the kernel adds to `payload_len` (and the shortest frame that is not dropped).
const HDR: usize = 64;
const _: () = assert!(HDR == clio_proto::header::HEADER_LEN);
// The fields the kernel reads at fixed bit positions of the first beat.
const _: () = assert!(
    clio_proto::header::field::PAYLOAD_LEN.start == 10
        && clio_proto::header::field::CHECKSUM.start == 28
        && clio_proto::header::field::FLAGS == 3
        && clio_proto::header::FLAG_RESPONSE == 1
);

/// The CRC-32C polynomial, reflected.
pub const POLY: u32 = clio_proto::checksum::CRC32C_POLY_REFLECTED;

/// One bit step of the reflected CRC register with no data.
fn bit_step(r: u32) -> u32 {
    if r & 1 != 0 {
        (r >> 1) ^ POLY
    } else {
        r >> 1
    }
}

/// The inverse of [`bit_step`] (bit 31 of the result tells whether the polynomial was added,
/// because `r >> 1` never has it).
fn bit_unstep(r: u32) -> u32 {
    if r & 0x8000_0000 != 0 {
        ((r ^ POLY) << 1) | 1
    } else {
        r << 1
    }
}

/// The register after a whole beat: bytes 0..64 in order (a bit-serial definition).
fn beat_fn(r: u32, data: &[u8; 64]) -> u32 {
    let mut r = r;
    for &b in data {
        r ^= b as u32;
        for _ in 0..8 {
            r = bit_step(r);
        }
    }
    r
}

/// Rows of the beat matrix: row `i` has input bit `j` set when output bit `i` depends on it.
/// Inputs: register bits 0..32, then data bits 0..512 (byte k at bits 8k..8k+8) at 32..544.
pub fn beat_rows() -> [Bits<544>; 32] {
    let mut rows = [Bits::<544>::default(); 32];
    for j in 0..544 {
        let mut data = [0u8; 64];
        let r = if j < 32 { 1u32 << j } else { 0 };
        if j >= 32 {
            data[(j - 32) / 8] = 1 << ((j - 32) % 8);
        }
        let col = beat_fn(r, &data);
        for (i, row) in rows.iter_mut().enumerate() {
            if col >> i & 1 == 1 {
                *row = row.replace_bit(j, true);
            }
        }
    }
    rows
}

/// Rows of the map that removes `bytes` trailing zero bytes from the register.
pub fn unshift_rows(bytes: usize) -> [Bits<32>; 32] {
    let mut rows = [Bits::<32>::default(); 32];
    for j in 0..32 {
        let mut r = 1u32 << j;
        for _ in 0..8 * bytes {
            r = bit_unstep(r);
        }
        for (i, row) in rows.iter_mut().enumerate() {
            if r >> i & 1 == 1 {
                *row = row.replace_bit(j, true);
            }
        }
    }
    rows
}

/// Apply a row matrix in software (the same computation the hardware does).
fn apply<const I: usize>(rows: &[Bits<I>], x: Bits<I>) -> u32 {
    rows.iter()
        .enumerate()
        .fold(0, |acc, (i, row)| acc | (((*row & x).xor() as u32) << i))
}

/// Software model of [`Crc32c`]: CRC-32C of `bytes` via the beat matrix and the unshift.
pub fn crc32c_by_matrix(bytes: &[u8]) -> u32 {
    let rows = beat_rows();
    let mut r = 0xFFFF_FFFFu32;
    let mut pad = 0;
    for chunk in bytes.chunks(64) {
        let mut beat = [0u8; 64];
        beat[..chunk.len()].copy_from_slice(chunk);
        let x = bit_cast::<544, 32>(r.to_bits())
            | (bit_cast::<544, 512>(crate::util::bytes_to_bits::<512>(&beat)) << 32);
        r = apply(&rows, x);
        pad = 64 - chunk.len();
    }
    for k in 0..6 {
        if pad >> k & 1 == 1 {
            r = apply(&unshift_rows(1 << k), r.to_bits());
        }
    }
    !r
}

/// `y = M x` over GF(2): output bit `i` is the parity of `x & rows[i]`. The matrix is a
/// constant chosen at elaboration time.
#[derive(LogicBlock)]
pub struct XorMatrix<const I: usize, const O: usize> {
    /// Input vector.
    pub x: Signal<In, Bits<I>>,
    /// Output vector.
    pub y: Signal<Out, Bits<O>>,
    rows: [Constant<Bits<I>>; O],
    g: Gather<O>,
}

impl<const I: usize, const O: usize> XorMatrix<I, O> {
    /// The matrix with these rows.
    pub fn new(rows: [Bits<I>; O]) -> Self {
        XorMatrix {
            x: Default::default(),
            y: Default::default(),
            rows: rows.map(Constant::new),
            g: Default::default(),
        }
    }
}

impl<const I: usize, const O: usize> Logic for XorMatrix<I, O> {
    #[hdl_gen]
    fn update(&mut self) {
        for i in 0..O {
            self.g.bits[i].next = (self.x.val() & self.rows[i].val()).xor();
        }
        self.y.next = self.g.out.val();
    }
}

/// Streaming CRC-32C over 512-bit beats: one beat per cycle, any number of bytes (1..=64)
/// in a beat, the value ready the cycle after the last beat.
#[derive(LogicBlock)]
pub struct Crc32c {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// A beat enters.
    pub in_valid: Signal<In, Bit>,
    /// First beat of a message (start from the initial value).
    pub in_first: Signal<In, Bit>,
    /// The beat (byte k at bits 8k..8k+8).
    pub in_data: Signal<In, Bits<512>>,
    /// Bytes of this beat that belong to the message, 1..=64 (the rest are ignored).
    pub in_bytes: Signal<In, Bits<7>>,
    /// CRC-32C of everything fed since the last `in_first` beat (valid one cycle after it).
    pub crc: Signal<Out, Bits<32>>,
    acc: DFF<Bits<32>>,
    pad: DFF<Bits<6>>,
    ones: Constant<Bits<512>>,
    bmask: Signal<Local, Bits<512>>,
    beat: XorMatrix<544, 32>,
    un: [XorMatrix<32, 32>; 6],
    state_in: Signal<Local, Bits<32>>,
}

impl Default for Crc32c {
    fn default() -> Self {
        Crc32c {
            clock: Default::default(),
            in_valid: Default::default(),
            in_first: Default::default(),
            in_data: Default::default(),
            in_bytes: Default::default(),
            crc: Default::default(),
            acc: Default::default(),
            pad: Default::default(),
            ones: Constant::new(!Bits::<512>::default()),
            bmask: Default::default(),
            beat: XorMatrix::new(beat_rows()),
            un: core::array::from_fn(|k| XorMatrix::new(unshift_rows(1 << k))),
            state_in: Default::default(),
        }
    }
}

impl Logic for Crc32c {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, acc, pad);
        // Bytes 0..in_bytes of the beat: the all-ones word shifted past them, inverted (a
        // shift, not 512 separate byte compares, keeps the simulation of this cheap).
        self.bmask.next = !(self.ones.val() << (bit_cast::<10, 7>(self.in_bytes.val()) << 3));
        if self.in_first.val() {
            self.state_in.next = 0xFFFF_FFFF_u64.to_bits();
        } else {
            self.state_in.next = self.acc.q.val();
        }
        self.beat.x.next = bit_cast::<544, 32>(self.state_in.val())
            | (bit_cast::<544, 512>(self.in_data.val() & self.bmask.val()) << 32);
        if self.in_valid.val() {
            self.acc.d.next = self.beat.y.val();
            self.pad.d.next = bit_cast::<6, 7>(!self.in_bytes.val() + 1);
        }
        // Undo the zero padding of the last beat: stage k removes 2^k zero bytes.
        self.un[0].x.next = self.acc.q.val();
        for k in 1..6 {
            if self.pad.q.val().get_bit(k - 1) {
                self.un[k].x.next = self.un[k - 1].y.val();
            } else {
                self.un[k].x.next = self.un[k - 1].x.val();
            }
        }
        if self.pad.q.val().get_bit(5) {
            self.crc.next = !self.un[5].y.val();
        } else {
            self.crc.next = !self.un[5].x.val();
        }
    }
}

crate::impl_clocked!(Crc32c);

/// Receive-side integrity check of one packet per frame.
#[derive(LogicBlock, Default)]
pub struct AckLayer {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A beat of the frame is accepted.
    pub in_valid: Signal<In, Bit>,
    /// The beat (the Clio header at byte 0 of the first beat).
    pub in_data: Signal<In, Bits<512>>,
    /// Byte enables (contiguous from byte 0; all ones except on the last beat).
    pub in_keep: Signal<In, Bits<64>>,
    /// Last beat of the frame.
    pub in_last: Signal<In, Bit>,
    /// The verdict of the frame whose last beat entered two cycles earlier.
    pub done: Signal<Out, Bit>,
    /// Drop silently (shorter than a header, or a response packet).
    pub drop: Signal<Out, Bit>,
    /// Answer a NACK (truncated or checksum mismatch); nothing is executed.
    pub nack: Signal<Out, Bit>,
    /// The computed CRC-32C (diagnostic).
    pub crc_out: Signal<Out, Bits<32>>,
    engine: Crc32c,
    beat: DFF<Bits<11>>,
    len: DFF<Bits<17>>,
    have: DFF<Bits<17>>,
    carried: DFF<Bits<32>>,
    resp: DFF<Bit>,
    fin: DFF<Bit>,
    first: Signal<Local, Bit>,
    plen: Signal<Local, Bits<16>>,
    cur_len: Signal<Local, Bits<17>>,
    pos: Signal<Local, Bits<17>>,
    rem: Signal<Local, Bits<17>>,
    nkeep: Signal<Local, Bits<7>>,
}

impl Logic for AckLayer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, beat, len, have, carried, resp, fin);
        clock!(self, clock, engine);
        self.first.next = self.beat.q.val() == 0;
        // payload_len: bytes 10..12, big endian.
        self.plen.next = (bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(80)) << 8)
            | bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(88));
        if self.first.val() {
            self.cur_len.next = bit_cast::<17, 16>(self.plen.val()) + 64;
        } else {
            self.cur_len.next = self.len.q.val();
        }
        self.pos.next = bit_cast::<17, 11>(self.beat.q.val()) << 6;
        self.rem.next = self.cur_len.val() - self.pos.val();
        self.nkeep.next = 0.into();
        for k in 0..64 {
            if self.in_keep.val().get_bit(k) {
                self.nkeep.next = (k + 1).to_bits::<7>();
            }
        }
        // Feed the covered bytes of this beat (none once past 64 + payload_len).
        self.engine.in_valid.next = self.in_valid.val() & (self.cur_len.val() > self.pos.val());
        self.engine.in_first.next = self.first.val();
        if self.first.val() {
            self.engine.in_data.next =
                self.in_data.val() & !(bit_cast::<512, 32>(0xFFFF_FFFF_u32.to_bits()) << 224);
        } else {
            self.engine.in_data.next = self.in_data.val();
        }
        if self.rem.val() >= 64 {
            self.engine.in_bytes.next = 64.into();
        } else {
            self.engine.in_bytes.next = bit_cast::<7, 17>(self.rem.val());
        }
        self.fin.d.next = false;
        if self.in_valid.val() {
            self.beat.d.next = self.beat.q.val() + 1;
            if self.first.val() {
                self.len.d.next = self.cur_len.val();
                // checksum: bytes 28..32, big endian.
                self.carried.d.next = (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(224))
                    << 24)
                    | (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(232)) << 16)
                    | (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(240)) << 8)
                    | bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(248));
                self.resp.d.next = self.in_data.val().get_bit(24);
            }
            if self.in_last.val() {
                self.beat.d.next = 0.into();
                self.fin.d.next = true;
                self.have.d.next = self.pos.val() + bit_cast::<17, 7>(self.nkeep.val());
            }
        }
        if self.reset.val() {
            self.beat.d.next = 0.into();
            self.fin.d.next = false;
        }
        self.done.next = self.fin.q.val();
        self.drop.next = (self.have.q.val() < 64)
            | (self.resp.q.val()
                & (self.have.q.val() >= self.len.q.val())
                & (self.engine.crc.val() == self.carried.q.val()));
        self.nack.next = (self.have.q.val() >= 64)
            & ((self.have.q.val() < self.len.q.val())
                | (self.engine.crc.val() != self.carried.q.val()));
        self.crc_out.next = self.engine.crc.val();
    }
}

crate::impl_clocked!(AckLayer);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::tb::StreamSource;
    use crate::util::bytes_to_bits;
    use clio_proto::checksum::{crc32c_reference, packet_crc};
    use clio_proto::header::{Packet, FLAG_RESPONSE, HEADER_LEN};
    use clio_proto::{Header, Opcode};

    fn rnd_bytes(seed: &mut u64, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                *seed ^= *seed << 13;
                *seed ^= *seed >> 7;
                *seed ^= *seed << 17;
                *seed as u8
            })
            .collect()
    }

    /// The elaboration-time matrices reproduce the bit-serial definition for every length of
    /// a partial last beat (the software model of exactly what the RTL computes).
    #[test]
    fn matrices_match_reference() {
        let mut s = 7u64;
        for n in (0..200).chain([1023, 1024, 1072]) {
            let b = rnd_bytes(&mut s, n);
            if n == 0 {
                continue;
            }
            assert_eq!(crc32c_by_matrix(&b), crc32c_reference(&b), "len {n}");
        }
    }

    /// The RTL engine, messages back to back, lengths 1..=130 and 1072: one beat per cycle.
    #[test]
    fn rtl_crc_matches_reference() {
        let mut b = Bench::new(Crc32c::default());
        let mut s = 99u64;
        let lens: Vec<usize> = (1..=130).step_by(3).chain([64, 128, 1072]).collect();
        for n in lens {
            let msg = rnd_bytes(&mut s, n);
            for (i, chunk) in msg.chunks(64).enumerate() {
                b.uut.in_valid.next = true;
                b.uut.in_first.next = i == 0;
                b.uut.in_data.next =
                    bytes_to_bits(&[chunk, &[0xEEu8; 64][..64 - chunk.len()]].concat());
                b.uut.in_bytes.next = (chunk.len() as u64).to_bits();
                b.tick();
            }
            b.uut.in_valid.next = false;
            b.settle();
            assert_eq!(b.uut.crc.val().to_u32(), crc32c_reference(&msg), "len {n}");
        }
    }

    /// Frame verdicts against `proto`: good packets pass (also with frame padding), any
    /// corruption or truncation is a NACK, short frames and responses are dropped.
    #[test]
    fn verdicts_match_proto() {
        let mut b = Bench::new(AckLayer::default());
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        let mut s = 5u64;
        let mut frames: Vec<(Vec<u8>, &str)> = vec![];
        for plen in [0usize, 1, 15, 16, 17, 80, 1024] {
            let mut h = Header::request(Opcode::Write, 3, 0x1234_5678, 0x40_0000 + plen as u64);
            h.total_len = 4096;
            let pkt = h.to_packet(&rnd_bytes(&mut s, plen));
            frames.push((pkt.clone(), "pass"));
            let mut padded = pkt.clone();
            padded.extend_from_slice(&[0xAB; 70]);
            frames.push((padded, "pass"));
            for bit in [
                3usize,
                8 * 29 + 1,
                8 * 47,
                8 * 50 + 2,
                8 * 63,
                8 * (pkt.len() - 1) + 7,
            ] {
                let mut bad = pkt.clone();
                bad[bit / 8] ^= 1 << (bit % 8);
                frames.push((bad, "nack"));
            }
            if plen > 0 {
                frames.push((pkt[..pkt.len() - 1].to_vec(), "nack"));
            }
        }
        let good = Header::request(Opcode::Read, 1, 2, 3).to_packet(&[]);
        frames.push((good[..HEADER_LEN - 1].to_vec(), "drop"));
        frames.push((good[..48].to_vec(), "drop"));
        frames.push((good[..1].to_vec(), "drop"));
        let mut resp = good.clone();
        resp[3] = FLAG_RESPONSE;
        Packet::new_unchecked(&mut resp[..]).fill_checksum();
        frames.push((resp, "drop"));
        for (f, want) in frames {
            // The verdict `proto` gives, as the model's ack layer does.
            let p = Packet::new_checked(&f[..]);
            let model = match p {
                Err(_) if f.len() < HEADER_LEN => "drop",
                Err(_) => "nack",
                Ok(p) if !p.verify_checksum() => "nack",
                Ok(p) if p.flags() & FLAG_RESPONSE != 0 => "drop",
                Ok(_) => "pass",
            };
            assert_eq!(model, want);
            let mut src = StreamSource::default();
            src.push((), f.clone());
            while let Some(beat) = src.beat() {
                b.uut.in_valid.next = true;
                b.uut.in_last.next = beat.last;
                let mut full = beat.data.to_vec();
                full.resize(64, 0x5A);
                b.uut.in_data.next = bytes_to_bits(&full);
                b.uut.in_keep.next = beat.keep.to_bits();
                b.tick();
                src.accept();
            }
            b.uut.in_valid.next = false;
            b.settle();
            assert!(b.uut.done.val());
            let got = if b.uut.drop.val() {
                "drop"
            } else if b.uut.nack.val() {
                "nack"
            } else {
                "pass"
            };
            assert_eq!(got, want, "frame of {} bytes", f.len());
            if want == "pass" {
                assert_eq!(
                    b.uut.crc_out.val().to_u32(),
                    packet_crc(
                        &f[..HEADER_LEN + Packet::new_unchecked(&f[..]).payload_len() as usize]
                    )
                );
            }
            b.tick();
            b.settle();
            assert!(!b.uut.done.val());
        }
    }
}
