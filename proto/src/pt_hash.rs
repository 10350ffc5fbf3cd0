//! The page-table hash: which bucket holds the PTE of `(pid, vpn)`.
//!
//! `hash = xxh32(pid as u32 little-endian ++ vpn as u64 little-endian, PT_HASH_SEED)` (12 input
//! bytes); the bucket is `hash & (bucket_count - 1)`. `xxhash-rust` is the reference; the RTL
//! hash unit is tested bit-exact against [`pt_hash`].

use crate::consts::PT_HASH_SEED;

/// The 12 bytes hashed for `(pid, vpn)`.
pub fn hash_input(pid: u16, vpn: u64) -> [u8; 12] {
    let mut b = [0u8; 12];
    b[..4].copy_from_slice(&(pid as u32).to_le_bytes());
    b[4..].copy_from_slice(&vpn.to_le_bytes());
    b
}

/// 32-bit page-table hash of `(pid, vpn)`.
pub fn pt_hash(pid: u16, vpn: u64) -> u32 {
    xxhash_rust::xxh32::xxh32(&hash_input(pid, vpn), PT_HASH_SEED)
}

/// Bucket index of `(pid, vpn)` in a table of `1 << bucket_bits` buckets.
pub fn bucket_index(pid: u16, vpn: u64, bucket_bits: u32) -> u64 {
    let mask = if bucket_bits >= 32 {
        u32::MAX
    } else {
        (1u32 << bucket_bits) - 1
    };
    (pt_hash(pid, vpn) & mask) as u64
}

/// The xxh32 of exactly 12 bytes written out step by step (no library), as the RTL hash unit
/// computes it: the short-input path (`len < 16`) with three 4-byte lanes and the avalanche.
/// Tested equal to `xxhash-rust`; the RTL testbench compares against this and against [`pt_hash`].
pub fn xxh32_12_steps(input: &[u8; 12], seed: u32) -> u32 {
    const P2: u32 = 0x85EB_CA77;
    const P3: u32 = 0xC2B2_AE3D;
    const P4: u32 = 0x27D4_EB2F;
    const P5: u32 = 0x1656_67B1;
    let mut h = seed.wrapping_add(P5).wrapping_add(12);
    for i in 0..3 {
        let w = u32::from_le_bytes([
            input[4 * i],
            input[4 * i + 1],
            input[4 * i + 2],
            input[4 * i + 3],
        ]);
        h = h
            .wrapping_add(w.wrapping_mul(P3))
            .rotate_left(17)
            .wrapping_mul(P4);
    }
    h ^= h >> 15;
    h = h.wrapping_mul(P2);
    h ^= h >> 13;
    h = h.wrapping_mul(P3);
    h ^ (h >> 16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn step_form_is_bit_exact_with_xxhash_rust(pid in any::<u16>(), vpn in any::<u64>(), seed in any::<u32>()) {
            let input = hash_input(pid, vpn);
            prop_assert_eq!(xxh32_12_steps(&input, seed), xxhash_rust::xxh32::xxh32(&input, seed));
        }
    }

    #[test]
    fn buckets_spread_evenly() {
        let bits = 8;
        let mut counts = vec![0u32; 1 << bits];
        for vpn in 0..(1u64 << 14) {
            counts[bucket_index(7, vpn, bits) as usize] += 1;
        }
        // 64 expected per bucket; a usable hash stays well within this band.
        assert!(
            counts.iter().all(|&c| (32..=100).contains(&c)),
            "{counts:?}"
        );
    }
}
