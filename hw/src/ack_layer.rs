//! The ack layer: the receive side's integrity check, the CRC-32C of every incoming packet
//! verified as it streams in ([`Crc32cRegistered`], one beat per cycle).
//!
//! [`AckLayer`] zeroes the checksum field (bytes 28..32 of the first beat), covers exactly
//! `64 + payload_len` bytes zero-extended to whole beats (trailing frame padding is ignored, as
//! `proto::Packet::as_bytes`), counts the bytes that arrived, and gives the verdict of
//! `clio_model::ack_layer::verify`: DROP (shorter than a header, or a response), NACK
//! (truncated or checksum mismatch) or PASS.

use crate::crc32c::Crc32cRegistered;
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

/// Receive-side integrity check of one packet per frame.
#[derive(LogicBlock)]
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
    engine: Crc32cRegistered,
    /// Beats of the frame taken so far (its byte position is `beat * 64`).
    beat: DFF<Bits<11>>,
    /// A frame is under way (its first beat has been taken); the next beat is a first beat
    /// when low.
    mid: DFF<Bit>,
    /// The packet's length, `64 + payload_len`.
    len: DFF<Bits<17>>,
    /// Packet bytes still to be summed after the beats taken (0 once past `64 + payload_len`:
    /// the frame's padding is not summed).
    left: DFF<Bits<17>>,
    /// Bytes of the next non-first beat to sum, `min(64, left)`, and whether there are any:
    /// registered with `left`, so the engine's byte count and enable come from flip-flops,
    /// not from a compare on the header field of the beat.
    next_bytes: DFF<Bits<7>>,
    next_any: DFF<Bit>,
    /// Bytes of the frame that arrived (for the truncation check).
    have: DFF<Bits<17>>,
    /// The checksum the packet carries.
    carried: DFF<Bits<32>>,
    /// The frame is a response (dropped).
    resp: DFF<Bit>,
    /// The frame's last beat was taken last cycle: the verdict is out.
    fin: DFF<Bit>,
    first: Signal<Local, Bit>,
    plen: Signal<Local, Bits<16>>,
    pos: Signal<Local, Bits<17>>,
    /// `left` after this beat.
    left_after: Signal<Local, Bits<17>>,
    /// One-hot of the beat's byte count `n` in 0..64 (`keep` is contiguous from byte 0, so
    /// bit `n` is the first byte not kept): bit `i` = keep[i-1] & !keep[i].
    keep_edge: Signal<Local, Bits<64>>,
    /// Bit `j` set at the positions whose index has bit `j` set (the one-hot's binary encoder:
    /// six OR trees instead of a 64-deep priority chain).
    enc: [Constant<Bits<64>>; 6],
    edge_index: Gather<6>,
    nkeep: Signal<Local, Bits<7>>,
}

impl Default for AckLayer {
    fn default() -> Self {
        AckLayer {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_data: Default::default(),
            in_keep: Default::default(),
            in_last: Default::default(),
            done: Default::default(),
            drop: Default::default(),
            nack: Default::default(),
            crc_out: Default::default(),
            engine: Default::default(),
            beat: Default::default(),
            mid: Default::default(),
            len: Default::default(),
            left: Default::default(),
            next_bytes: Default::default(),
            next_any: Default::default(),
            have: Default::default(),
            carried: Default::default(),
            resp: Default::default(),
            fin: Default::default(),
            first: Default::default(),
            plen: Default::default(),
            pos: Default::default(),
            left_after: Default::default(),
            keep_edge: Default::default(),
            enc: crate::util::onehot_index_masks(),
            edge_index: Default::default(),
            nkeep: Default::default(),
        }
    }
}

impl Logic for AckLayer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, beat, mid, len, left, next_bytes, next_any, have, carried, resp, fin
        );
        clock!(self, clock, engine);
        self.first.next = !self.mid.q.val();
        self.left_after.next = self.left.q.val();
        // payload_len: bytes 10..12, big endian.
        self.plen.next = (bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(80)) << 8)
            | bit_cast::<16, 8>(self.in_data.val().get_bits::<8>(88));
        self.pos.next = bit_cast::<17, 11>(self.beat.q.val()) << 6;
        // Bytes kept in this beat (64, or the one-hot edge encoded).
        self.keep_edge.next = ((self.in_keep.val() << 1) | 1) & !self.in_keep.val();
        for j in 0..6 {
            self.edge_index.bits[j].next = (self.keep_edge.val() & self.enc[j].val()).any();
        }
        if self.in_keep.val().get_bit(63) {
            self.nkeep.next = 64.into();
        } else {
            self.nkeep.next = bit_cast::<7, 6>(self.edge_index.out.val());
        }
        // Feed the covered bytes of this beat (none once past 64 + payload_len). The first
        // beat is the header, always whole (a shorter frame is dropped whatever it sums to).
        self.engine.port.in_first.next = self.first.val();
        if self.first.val() {
            self.engine.port.in_valid.next = self.in_valid.val();
            self.engine.port.in_data.next =
                self.in_data.val() & !(bit_cast::<512, 32>(0xFFFF_FFFF_u32.to_bits()) << 224);
            self.engine.port.in_bytes.next = 64.into();
        } else {
            self.engine.port.in_valid.next = self.in_valid.val() & self.next_any.q.val();
            self.engine.port.in_data.next = self.in_data.val();
            self.engine.port.in_bytes.next = self.next_bytes.q.val();
        }
        self.fin.d.next = false;
        if self.in_valid.val() {
            self.beat.d.next = self.beat.q.val() + 1;
            self.mid.d.next = true;
            if self.first.val() {
                self.len.d.next = bit_cast::<17, 16>(self.plen.val()) + 64;
                self.left_after.next = bit_cast::<17, 16>(self.plen.val());
                // checksum: bytes 28..32, big endian.
                self.carried.d.next = (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(224))
                    << 24)
                    | (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(232)) << 16)
                    | (bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(240)) << 8)
                    | bit_cast::<32, 8>(self.in_data.val().get_bits::<8>(248));
                self.resp.d.next = self.in_data.val().get_bit(24);
            } else if self.left.q.val() >= 64 {
                self.left_after.next = self.left.q.val() - 64;
            } else {
                self.left_after.next = 0.into();
            }
            self.left.d.next = self.left_after.val();
            // `min(64, left_after)` and `left_after != 0`, from the beat's inputs rather than
            // from `left_after` (no subtraction in front of the compares): a first beat's
            // `left_after` is `plen`; a later one's is `left - 64` if `left >= 64` (so at least
            // 64 if `left >= 128`, else `left % 64`), or 0.
            if self.first.val() {
                self.next_any.d.next = self.plen.val() != 0;
                if self.plen.val().get_bits::<10>(6) != 0 {
                    self.next_bytes.d.next = 64.into();
                } else {
                    self.next_bytes.d.next = bit_cast::<7, 6>(self.plen.val().get_bits::<6>(0));
                }
            } else if self.left.q.val().get_bits::<10>(7) != 0 {
                self.next_any.d.next = true;
                self.next_bytes.d.next = 64.into();
            } else if self.left.q.val().get_bit(6) {
                self.next_any.d.next = self.left.q.val().get_bits::<6>(0) != 0;
                self.next_bytes.d.next = bit_cast::<7, 6>(self.left.q.val().get_bits::<6>(0));
            } else {
                self.next_any.d.next = false;
                self.next_bytes.d.next = 0.into();
            }
            if self.in_last.val() {
                self.beat.d.next = 0.into();
                self.mid.d.next = false;
                self.fin.d.next = true;
                self.have.d.next = self.pos.val() + bit_cast::<17, 7>(self.nkeep.val());
            }
        }
        if self.reset.val() {
            self.beat.d.next = 0.into();
            self.mid.d.next = false;
            self.fin.d.next = false;
        }
        self.done.next = self.fin.q.val();
        self.drop.next = (self.have.q.val() < 64)
            | (self.resp.q.val()
                & (self.have.q.val() >= self.len.q.val())
                & (self.engine.port.crc.val() == self.carried.q.val()));
        self.nack.next = (self.have.q.val() >= 64)
            & ((self.have.q.val() < self.len.q.val())
                | (self.engine.port.crc.val() != self.carried.q.val()));
        self.crc_out.next = self.engine.port.crc.val();
    }
}

crate::impl_clocked!(AckLayer);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::crc32c::tests::rnd_bytes;
    use crate::tb::StreamSource;
    use crate::util::bytes_to_bits;
    use clio_proto::checksum::packet_crc;
    use clio_proto::header::{Packet, FLAG_RESPONSE, HEADER_LEN};
    use clio_proto::{Header, Opcode};

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
