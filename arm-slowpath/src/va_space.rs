//! Per-process virtual address space: the tree of allocated regions (the "vma tree" that
//! hardware should never have to walk).

use std::collections::BTreeMap;

/// One allocation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// First virtual page.
    pub start_vpn: u64,
    /// Pages in the region.
    pub pages: u64,
    /// Permissions (`PERM_READ | PERM_WRITE`).
    pub perms: u8,
}

impl Region {
    /// One past the last page.
    pub fn end_vpn(&self) -> u64 {
        self.start_vpn + self.pages
    }
}

/// The allocated regions of one process, keyed by start page.
#[derive(Debug, Clone)]
pub struct VaSpace {
    regions: BTreeMap<u64, Region>,
    min_vpn: u64,
    end_vpn: u64,
    allocated_pages: u64,
}

impl VaSpace {
    /// An empty space covering pages `1..va_pages` (page 0 stays unmapped so that a null
    /// remote pointer always faults).
    pub fn new(va_pages: u64) -> VaSpace {
        VaSpace {
            regions: BTreeMap::new(),
            min_vpn: 1,
            end_vpn: va_pages,
            allocated_pages: 0,
        }
    }

    /// The first free range of `pages` pages starting at or after `from_vpn` (first fit).
    pub fn find_free(&self, pages: u64, from_vpn: u64) -> Option<u64> {
        if pages == 0 {
            return None;
        }
        let mut cursor = from_vpn.max(self.min_vpn);
        // The region that may cover `cursor` starts at or before it.
        if let Some((_, r)) = self.regions.range(..=cursor).next_back() {
            cursor = cursor.max(r.end_vpn());
        }
        for r in self.regions.range(cursor..).map(|(_, r)| r) {
            if r.start_vpn >= cursor.checked_add(pages)? {
                return Some(cursor);
            }
            cursor = cursor.max(r.end_vpn());
        }
        (cursor.checked_add(pages)? <= self.end_vpn).then_some(cursor)
    }

    /// Record a region (the caller found it free).
    pub fn insert(&mut self, r: Region) {
        self.allocated_pages += r.pages;
        self.regions.insert(r.start_vpn, r);
    }

    /// Remove the region that starts exactly at `start_vpn`.
    pub fn remove(&mut self, start_vpn: u64) -> Option<Region> {
        let r = self.regions.remove(&start_vpn)?;
        self.allocated_pages -= r.pages;
        Some(r)
    }

    /// The region covering `vpn`.
    pub fn lookup(&self, vpn: u64) -> Option<&Region> {
        self.regions
            .range(..=vpn)
            .next_back()
            .map(|(_, r)| r)
            .filter(|r| vpn < r.end_vpn())
    }

    /// Pages not allocated (an upper bound on the largest free range).
    pub fn free_pages(&self) -> u64 {
        self.end_vpn - self.min_vpn - self.allocated_pages
    }

    /// Pages allocated in this space.
    pub fn allocated_pages(&self) -> u64 {
        self.allocated_pages
    }

    /// All regions in address order.
    pub fn regions(&self) -> impl Iterator<Item = &Region> {
        self.regions.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Random alloc/free sequences: found ranges never overlap existing ones, and lookups agree
        /// with a brute-force page map.
        #[test]
        fn regions_never_overlap(ops in prop::collection::vec((any::<bool>(), 1u64..20, 0u64..300), 1..200)) {
            let mut s = VaSpace::new(400);
            let mut owner = vec![None::<u64>; 400];
            for (alloc, pages, from) in ops {
                if alloc {
                    if let Some(start) = s.find_free(pages, from) {
                        prop_assert!(start >= from.max(1));
                        for v in start..start + pages {
                            prop_assert!(owner[v as usize].is_none());
                            owner[v as usize] = Some(start);
                        }
                        s.insert(Region { start_vpn: start, pages, perms: 3 });
                    } else {
                        // Brute force agrees there is no room at or after `from`.
                        let lo = from.max(1);
                        let fits = (lo..400u64.saturating_sub(pages - 1)).any(|st| (st..st + pages).all(|v| owner[v as usize].is_none()));
                        prop_assert!(!fits);
                    }
                } else if let Some(start) = owner.iter().flatten().copied().nth((from % 7) as usize) {
                    let r = s.remove(start).unwrap();
                    for v in r.start_vpn..r.end_vpn() { owner[v as usize] = None; }
                }
                for v in 0..400u64 {
                    prop_assert_eq!(s.lookup(v).map(|r| r.start_vpn), owner[v as usize]);
                }
            }
        }
    }
}
