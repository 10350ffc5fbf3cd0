//! CRC-32C (Castagnoli) integrity over the Clio header and payload.
//!
//! The checksum covers the 48 header bytes with the checksum field (bytes 28..32) taken as
//! zero, then the payload. The ack layer of the node verifies it as the packet streams in; a
//! mismatch produces a NACK and nothing else.

use crate::header::{field, HEADER_LEN};

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

/// The checksum a packet (`header ++ payload`, no padding) must carry. `bytes` shorter than a
/// header is summed as it is (and will then fail [`crate::Packet::check_len`] anyway).
pub fn packet_crc(bytes: &[u8]) -> u32 {
    if bytes.len() < HEADER_LEN {
        return crc32c(bytes);
    }
    let c = crc32c(&bytes[..field::CHECKSUM.start]);
    let c = crc32c_append(c, &[0u8; 4]);
    crc32c_append(c, &bytes[field::CHECKSUM.end..])
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

    proptest! {
        #[test]
        fn fast_matches_reference(bytes in prop::collection::vec(any::<u8>(), 0..2048), split in any::<prop::sample::Index>()) {
            prop_assert_eq!(crc32c(&bytes), crc32c_reference(&bytes));
            let s = split.index(bytes.len() + 1);
            prop_assert_eq!(crc32c_append(crc32c(&bytes[..s]), &bytes[s..]), crc32c_reference(&bytes));
        }
    }
}
