//! CRC-32C (Castagnoli) integrity over the Clio header and payload.
//!
//! The checksum covers the 64 header bytes with the checksum field (bytes 28..32) taken as
//! zero, then the payload, then zero bytes up to a whole number of [`CRC_BLOCK`]s. The ack
//! layer of the node verifies it as the packet streams in; a mismatch produces a NACK and
//! nothing else.
//!
//! Why the zero extension: the node's CRC engines take one 64-byte datapath beat per cycle.
//! Over exactly `64 + payload_len` bytes, a partial last beat would be summed with its missing
//! bytes as zeros and those zeros undone afterwards (the inverse zero-byte map for any of 64
//! pad lengths: six 32x32 XOR matrices in series, about 800 LUTs per engine and the deepest
//! path of the receive and transmit stages). Summing the zeros *is* the definition here, so
//! the hardware only masks the bytes past the packet (which it must do anyway: frame padding
//! and stale lanes are not the packet's). Software appends at most 63 zero bytes. Nothing is
//! lost: `payload_len` is covered, so two packets that differ only in trailing zeros are
//! still different packets.

use super::{field, HEADER_LEN};

/// The CRC-32C (Castagnoli) polynomial, bit-reflected: the one the node's CRC engine is
/// built from.
pub const CRC32C_POLY_REFLECTED: u32 = 0x82F6_3B78;

/// CRC-32C of arbitrary bytes (reflected, init/xorout 0xFFFFFFFF; `crc32c(b"123456789") ==
/// 0xE3069283`). Hardware-accelerated where the CPU has it.
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// Continue a CRC-32C over more bytes.
pub fn crc32c_append(crc: u32, bytes: &[u8]) -> u32 {
    crc32c::crc32c_append(crc, bytes)
}

/// The packet checksum covers the packet zero-extended to a multiple of this many bytes: one
/// datapath beat, so the node's engines never sum a partial block.
pub const CRC_BLOCK: usize = crate::consts::BEAT_BYTES;

/// Zero bytes that extend `len` packet bytes to a whole number of [`CRC_BLOCK`]s.
pub const fn crc_pad(len: usize) -> usize {
    (CRC_BLOCK - len % CRC_BLOCK) % CRC_BLOCK
}

/// The checksum a packet (`header ++ payload`, no frame padding) must carry: CRC-32C of the
/// bytes with the checksum field zero, extended with [`crc_pad`] zero bytes. `bytes` shorter
/// than a header is summed without the field rule (and will then fail
/// [`crate::Packet::check_len`] anyway).
pub fn packet_crc(bytes: &[u8]) -> u32 {
    const ZEROS: [u8; CRC_BLOCK] = [0u8; CRC_BLOCK];
    let c = if bytes.len() < HEADER_LEN {
        crc32c(bytes)
    } else {
        let c = crc32c(&bytes[..field::CHECKSUM.start]);
        let c = crc32c_append(c, &ZEROS[..field::CHECKSUM.len()]);
        crc32c_append(c, &bytes[field::CHECKSUM.end..])
    };
    crc32c_append(c, &ZEROS[..crc_pad(bytes.len())])
}

/// Bit-serial reference CRC-32C (the definition, one bit per step as an LFSR would do it).
/// Slow; for tests of the fast implementation and of the RTL.
pub fn crc32c_reference(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = if crc & 1 != 0 {
                (crc >> 1) ^ CRC32C_POLY_REFLECTED
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn check_value() {
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c_reference(b"123456789"), 0xE306_9283);
    }

    /// The packet checksum is the plain CRC-32C of the packet with its field zeroed and the
    /// zero extension appended, by the bit-serial definition.
    #[test]
    fn packet_crc_is_zero_extended() {
        for len in [
            HEADER_LEN,
            HEADER_LEN + 1,
            HEADER_LEN + 63,
            2 * HEADER_LEN,
            1088,
            1089,
        ] {
            let mut b: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let c = packet_crc(&b);
            b[field::CHECKSUM].fill(0);
            b.resize(len.div_ceil(CRC_BLOCK) * CRC_BLOCK, 0);
            assert_eq!(c, crc32c_reference(&b), "len {len}");
            assert_eq!(b.len() % CRC_BLOCK, 0);
        }
        assert_eq!(crc_pad(64), 0);
        assert_eq!(crc_pad(65), 63);
        assert_eq!(crc_pad(127), 1);
    }

    proptest! {
        #[test]
        fn fast_matches_reference(bytes in prop::collection::vec(any::<u8>(), 0..2048), split in any::<prop::sample::Index>()) {
            prop_assert_eq!(crc32c(&bytes), crc32c_reference(&bytes));
            let s = split.index(bytes.len() + 1);
            prop_assert_eq!(crc32c_append(crc32c(&bytes[..s]), &bytes[s..]), crc32c_reference(&bytes));
        }
    }
}
