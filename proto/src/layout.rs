//! Physical memory layout of a node: where the hash page table lives and which frames hold data.
//!
//! DRAM starts with the page table at physical address 0 (fixed and known to the walker, so a
//! miss needs no lookup of a table root), rounded up to a whole page; data frames follow.
//! The table has `PT_OVERPROVISION` slots per data frame, rounded up to a power-of-two
//! number of buckets.

use crate::consts::{
    BUCKET_BYTES, BUCKET_SLOTS, MAX_PAGE_SHIFT, MIN_PAGE_SHIFT, PT_OVERPROVISION, VA_BITS,
};
use thiserror::Error;

/// Why a memory configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum LayoutError {
    /// Page size out of range or not a power of two.
    #[error("page size must be a power of two between 4 KiB and 1 GiB (got {0} bytes)")]
    BadPageSize(u64),
    /// Not enough DRAM for the page table and at least one data page.
    #[error("memory of {dram} bytes is too small for the page table and one {page}-byte page")]
    TooSmall {
        /// DRAM bytes.
        dram: u64,
        /// Page bytes.
        page: u64,
    },
    /// More frames than the PTE's 40-bit PFN can name.
    #[error("memory of {0} bytes exceeds what a 40-bit frame number can address")]
    TooLarge(u64),
}

/// The computed layout of a node's DRAM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryLayout {
    /// Total DRAM bytes.
    pub dram_bytes: u64,
    /// log2 of the page size.
    pub page_shift: u32,
    /// log2 of the number of page-table buckets.
    pub bucket_bits: u32,
    /// Physical address of bucket 0.
    pub pt_base: u64,
    /// First frame number that holds data (frames below hold the page table).
    pub first_data_pfn: u64,
    /// Number of data frames.
    pub data_pages: u64,
}

impl MemoryLayout {
    /// Lay out `dram_bytes` of DRAM with pages of `1 << page_shift` bytes.
    pub fn new(dram_bytes: u64, page_shift: u32) -> Result<MemoryLayout, LayoutError> {
        if !(MIN_PAGE_SHIFT..=MAX_PAGE_SHIFT).contains(&page_shift) {
            return Err(LayoutError::BadPageSize(
                1u64.checked_shl(page_shift).unwrap_or(0),
            ));
        }
        let page = 1u64 << page_shift;
        let frames = dram_bytes >> page_shift;
        if frames > (1 << 40) {
            return Err(LayoutError::TooLarge(dram_bytes));
        }
        // Size the table for all frames (an upper bound on data frames), then carve it out.
        let slots = (frames * PT_OVERPROVISION).max(BUCKET_SLOTS as u64);
        let buckets = slots.div_ceil(BUCKET_SLOTS as u64).next_power_of_two();
        let bucket_bits = buckets.trailing_zeros();
        let pt_bytes = buckets * BUCKET_BYTES as u64;
        let first_data_pfn = pt_bytes.div_ceil(page);
        if frames <= first_data_pfn {
            return Err(LayoutError::TooSmall {
                dram: dram_bytes,
                page,
            });
        }
        Ok(MemoryLayout {
            dram_bytes,
            page_shift,
            bucket_bits,
            pt_base: 0,
            first_data_pfn,
            data_pages: frames - first_data_pfn,
        })
    }

    /// Page size in bytes.
    pub fn page_size(&self) -> u64 {
        1 << self.page_shift
    }
    /// Number of buckets.
    pub fn bucket_count(&self) -> u64 {
        1 << self.bucket_bits
    }
    /// Physical address of a bucket.
    pub fn bucket_addr(&self, bucket: u64) -> u64 {
        self.pt_base + bucket * BUCKET_BYTES as u64
    }
    /// Bytes of the page-table region.
    pub fn pt_bytes(&self) -> u64 {
        self.bucket_count() * BUCKET_BYTES as u64
    }
    /// Virtual page number of a virtual address.
    pub fn vpn(&self, va: u64) -> u64 {
        va >> self.page_shift
    }
    /// Offset of a virtual address within its page.
    pub fn page_offset(&self, va: u64) -> u64 {
        va & (self.page_size() - 1)
    }
    /// Physical address of `offset` within frame `pfn`.
    pub fn phys_addr(&self, pfn: u64, offset: u64) -> u64 {
        (pfn << self.page_shift) | offset
    }
    /// Number of virtual pages in the 48-bit address space.
    pub fn va_pages(&self) -> u64 {
        1 << (VA_BITS - self.page_shift)
    }
    /// Whether `pfn` is a data frame of this layout.
    pub fn is_data_pfn(&self, pfn: u64) -> bool {
        pfn >= self.first_data_pfn && pfn < self.first_data_pfn + self.data_pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_board_layout() {
        // 4 GiB of PL DDR4 with 4 MiB pages, as on the ZCU106.
        let l = MemoryLayout::new(4 << 30, 22).unwrap();
        assert_eq!(l.bucket_count() * BUCKET_SLOTS as u64, 2048);
        assert_eq!(l.first_data_pfn, 1);
        assert_eq!(l.data_pages, 1023);
        assert!(l.bucket_count() * BUCKET_SLOTS as u64 >= 2 * l.data_pages);
    }

    #[test]
    fn refuses_bad_configs() {
        assert!(matches!(
            MemoryLayout::new(1 << 30, 11),
            Err(LayoutError::BadPageSize(_))
        ));
        assert!(matches!(
            MemoryLayout::new(1 << 30, 31),
            Err(LayoutError::BadPageSize(_))
        ));
        assert!(matches!(
            MemoryLayout::new(4 << 20, 22),
            Err(LayoutError::TooSmall { .. })
        ));
        assert!(MemoryLayout::new(8 << 20, 22).is_ok());
    }
}
