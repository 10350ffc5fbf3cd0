//! Page-table entry and bucket layout.
//!
//! A PTE is 16 bytes, two little-endian u64 words (DRAM structures are little-endian, like
//! the ARM and the AXI bus):
//!
//! ```text
//! word0: bits  0..36 vpn | 36..52 pid | 56 USED | 57 VALID | 58 READ | 59 WRITE
//! word1: bits  0..40 pfn (physical address >> page_shift), rest zero
//! ```
//!
//! A slot with USED clear is free (all-zero is the empty slot). USED but not VALID is an
//! allocated page never touched: the first access takes a page fault served by the fast path
//! from the async free-page buffer. A bucket is [`BUCKET_SLOTS`] PTEs, read in one burst.

use crate::consts::{BUCKET_BYTES, BUCKET_SLOTS, PTE_BYTES, VPN_BITS};

/// Read permission bit (in allocation requests and PTEs).
pub const PERM_READ: u8 = 1;
/// Write permission bit.
pub const PERM_WRITE: u8 = 2;

const VPN_MASK: u64 = (1 << VPN_BITS) - 1;
/// Bit position of the pid (16 bits) in word0; the vpn is bits `0..VPN_BITS`.
pub const PID_SHIFT: u32 = 36;
/// Bit position of USED in word0 (the slot is allocated).
pub const USED_SHIFT: u32 = 56;
/// Bit position of VALID in word0 (a frame is mapped).
pub const VALID_SHIFT: u32 = 57;
/// Bit position of the READ permission in word0; WRITE is the next bit, so the two
/// permission bits read as [`PERM_READ`] | [`PERM_WRITE`] from here.
pub const READ_SHIFT: u32 = 58;
/// Bit position of the WRITE permission in word0.
pub const WRITE_SHIFT: u32 = 59;
const USED_BIT: u64 = 1 << USED_SHIFT;
const VALID_BIT: u64 = 1 << VALID_SHIFT;
const READ_BIT: u64 = 1 << READ_SHIFT;
const WRITE_BIT: u64 = 1 << WRITE_SHIFT;
/// The bits of word0 that carry a field ([`Pte::from_words`] ignores the rest).
pub const WORD0_DEFINED: u64 =
    VPN_MASK | (0xFFFF << PID_SHIFT) | USED_BIT | VALID_BIT | READ_BIT | WRITE_BIT;
/// Width of the PFN field in word1.
pub const PFN_BITS: u32 = 40;
/// Mask of the PFN field in word1.
pub const PFN_MASK: u64 = (1 << PFN_BITS) - 1;

/// A decoded page-table entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Pte {
    /// Slot is allocated.
    pub used: bool,
    /// A physical page is mapped (`pfn` meaningful).
    pub valid: bool,
    /// Permissions ([`PERM_READ`] | [`PERM_WRITE`]).
    pub perms: u8,
    /// Owning process.
    pub pid: u16,
    /// Virtual page number (36 bits).
    pub vpn: u64,
    /// Physical frame number (40 bits).
    pub pfn: u64,
}

impl Pte {
    /// An allocated, not yet faulted PTE.
    pub fn allocated(pid: u16, vpn: u64, perms: u8) -> Pte {
        Pte {
            used: true,
            valid: false,
            perms: perms & (PERM_READ | PERM_WRITE),
            pid,
            vpn: vpn & VPN_MASK,
            pfn: 0,
        }
    }

    /// The first word.
    pub fn word0(&self) -> u64 {
        let mut w = (self.vpn & VPN_MASK) | ((self.pid as u64) << PID_SHIFT);
        if self.used {
            w |= USED_BIT;
        }
        if self.valid {
            w |= VALID_BIT;
        }
        if self.perms & PERM_READ != 0 {
            w |= READ_BIT;
        }
        if self.perms & PERM_WRITE != 0 {
            w |= WRITE_BIT;
        }
        w
    }

    /// The second word.
    pub fn word1(&self) -> u64 {
        self.pfn & PFN_MASK
    }

    /// Encode to 16 bytes.
    pub fn to_bytes(&self) -> [u8; PTE_BYTES] {
        let mut b = [0u8; PTE_BYTES];
        b[..8].copy_from_slice(&self.word0().to_le_bytes());
        b[8..].copy_from_slice(&self.word1().to_le_bytes());
        b
    }

    /// Decode from two words (reserved bits are ignored, as the hardware ignores them).
    pub fn from_words(w0: u64, w1: u64) -> Pte {
        let mut perms = 0;
        if w0 & READ_BIT != 0 {
            perms |= PERM_READ;
        }
        if w0 & WRITE_BIT != 0 {
            perms |= PERM_WRITE;
        }
        Pte {
            used: w0 & USED_BIT != 0,
            valid: w0 & VALID_BIT != 0,
            perms,
            pid: (w0 >> PID_SHIFT) as u16,
            vpn: w0 & VPN_MASK,
            pfn: w1 & PFN_MASK,
        }
    }

    /// Decode from 16 bytes.
    pub fn from_bytes(b: &[u8; PTE_BYTES]) -> Pte {
        let mut w0 = [0u8; 8];
        let mut w1 = [0u8; 8];
        w0.copy_from_slice(&b[..8]);
        w1.copy_from_slice(&b[8..]);
        Pte::from_words(u64::from_le_bytes(w0), u64::from_le_bytes(w1))
    }

    /// Whether this slot holds the translation of `(pid, vpn)`.
    pub fn matches(&self, pid: u16, vpn: u64) -> bool {
        self.used && self.pid == pid && self.vpn == (vpn & VPN_MASK)
    }
}

/// Outcome of looking `(pid, vpn)` up in one bucket: what the walker reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BucketLookup {
    /// The slot index and its PTE.
    Found(usize, Pte),
    /// No slot holds `(pid, vpn)`.
    Missing,
}

/// Decode slot `i` of a bucket image.
pub fn bucket_slot(bucket: &[u8; BUCKET_BYTES], i: usize) -> Pte {
    let mut b = [0u8; PTE_BYTES];
    b.copy_from_slice(&bucket[i * PTE_BYTES..(i + 1) * PTE_BYTES]);
    Pte::from_bytes(&b)
}

/// Find `(pid, vpn)` in a bucket image (the lowest matching slot wins, as in the RTL).
pub fn bucket_lookup(bucket: &[u8; BUCKET_BYTES], pid: u16, vpn: u64) -> BucketLookup {
    for i in 0..BUCKET_SLOTS {
        let p = bucket_slot(bucket, i);
        if p.matches(pid, vpn) {
            return BucketLookup::Found(i, p);
        }
    }
    BucketLookup::Missing
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn pte_round_trips(used in any::<bool>(), valid in any::<bool>(), perms in 0u8..4, pid in any::<u16>(), vpn in 0u64..(1 << VPN_BITS), pfn in 0u64..(1 << 40)) {
            let p = Pte { used, valid, perms, pid, vpn, pfn };
            prop_assert_eq!(Pte::from_bytes(&p.to_bytes()), p);
        }
    }

    #[test]
    fn empty_slot_is_zero_and_unused() {
        assert_eq!(Pte::default().to_bytes(), [0u8; 16]);
        assert!(!Pte::from_bytes(&[0u8; 16]).used);
    }

    #[test]
    fn lookup_finds_the_right_slot() {
        let mut b = [0u8; BUCKET_BYTES];
        let p = Pte::allocated(3, 77, PERM_READ);
        b[5 * 16..6 * 16].copy_from_slice(&p.to_bytes());
        assert_eq!(bucket_lookup(&b, 3, 77), BucketLookup::Found(5, p));
        assert_eq!(bucket_lookup(&b, 4, 77), BucketLookup::Missing);
        assert_eq!(bucket_lookup(&b, 3, 78), BucketLookup::Missing);
    }
}
