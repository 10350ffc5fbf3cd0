//! Memory access: address translation (TLB, walker, fault) and the DRAM copy of one packet's
//! bytes, which may straddle a page boundary.

use super::coverage::Coverage;
use super::dram::Dram;
use super::page_fault::PageFaultUnit;
use super::pt_walker::{PtWalker, Walk};
use super::tlb::Tlb;
use clio_proto::layout::MemoryLayout;
use clio_proto::ring::Descriptor;
use clio_proto::rules::Rule;
use clio_proto::Status;

/// Counters of the virtual-memory stages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VmCounters {
    /// TLB hits.
    pub tlb_hits: u64,
    /// TLB misses.
    pub tlb_misses: u64,
    /// Accesses refused for permission.
    pub permission_denied: u64,
    /// Accesses to unallocated addresses.
    pub unmapped: u64,
}

/// The virtual-memory stages of the node.
#[derive(Debug, Default)]
pub struct VirtualMemory {
    /// TLB.
    pub tlb: Tlb,
    /// Walker.
    pub walker: PtWalker,
    /// Fault unit and async buffer.
    pub faults: PageFaultUnit,
    /// Counters.
    pub counters: VmCounters,
    /// Rules decided here.
    pub cov: Coverage,
}

/// A fault notice for the slow path, produced by a translation.
pub type Notice = Descriptor;

impl VirtualMemory {
    /// Translate `va` of `pid` for an access needing `perms`: the physical address, or the
    /// status to answer. A first touch maps a frame from the async buffer and reports it in
    /// `notices` (the fast path never waits for the slow path). `rx_free` is the room in the
    /// RX ring: a fault is only taken if its notice can be posted.
    #[allow(clippy::too_many_arguments)] // one argument per pipeline input
    pub fn translate(
        &mut self,
        dram: &mut Dram,
        layout: &MemoryLayout,
        pid: u16,
        va: u64,
        perms: u8,
        rx_free: u32,
        notices: &mut Vec<Notice>,
    ) -> Result<u64, Status> {
        let vpn = layout.vpn(va);
        let (hit, other_pid) = self.tlb.lookup_among(pid, vpn);
        self.cov.hit_if(other_pid, Rule::TlbTaggedByPid);
        let pte = match hit {
            Some(p) => {
                self.counters.tlb_hits += 1;
                p
            }
            None => {
                self.counters.tlb_misses += 1;
                match self.walker.walk(dram, layout, pid, vpn) {
                    Walk::Missing => {
                        self.counters.unmapped += 1;
                        return Err(Status::Unmapped);
                    }
                    Walk::Found {
                        bucket,
                        slot,
                        mut pte,
                    } => {
                        if pte.perms & perms != perms {
                            self.counters.permission_denied += 1;
                            self.cov.hit(Rule::WalkPermissions);
                            return Err(Status::Permission);
                        }
                        if !pte.valid {
                            if rx_free <= notices.len() as u32 {
                                return Err(Status::RetryLater);
                            }
                            let pfn = self.faults.pop().ok_or(Status::RetryLater)?;
                            pte.valid = true;
                            pte.pfn = pfn;
                            // In hardware these three happen in parallel with the access.
                            PtWalker::write_slot(dram, layout, bucket, slot, &pte);
                            notices.push(Descriptor::PageMapped { pid, vpn, pfn });
                        }
                        self.tlb.insert(pid, vpn, pte);
                        pte
                    }
                }
            }
        };
        if pte.perms & perms != perms {
            // Only a hit gets here refused: a walked entry was checked above.
            self.counters.permission_denied += 1;
            self.cov.hit(Rule::TlbHitPermissions);
            return Err(Status::Permission);
        }
        Ok(layout.phys_addr(pte.pfn, layout.page_offset(va)))
    }

    /// Translate every page that `[va, va + len)` touches; the physical pieces in order.
    /// Nothing is accessed unless every page translates.
    #[allow(clippy::too_many_arguments)]
    pub fn translate_range(
        &mut self,
        dram: &mut Dram,
        layout: &MemoryLayout,
        pid: u16,
        va: u64,
        len: u64,
        perms: u8,
        rx_free: u32,
        notices: &mut Vec<Notice>,
    ) -> Result<Vec<(u64, usize)>, Status> {
        let end = va
            .checked_add(len)
            .filter(|e| *e <= clio_proto::consts::VA_LIMIT)
            .ok_or(Status::BadRequest)?;
        let mut pieces = Vec::with_capacity(2);
        let mut a = va;
        while a < end {
            let page_end = (a | (layout.page_size() - 1)) + 1;
            let n = page_end.min(end) - a;
            let pa = self.translate(dram, layout, pid, a, perms, rx_free, notices)?;
            pieces.push((pa, n as usize));
            a += n;
        }
        Ok(pieces)
    }
}

/// Copy pieces of physical memory into `out` (which has their total length).
pub fn read_pieces(dram: &mut Dram, pieces: &[(u64, usize)], out: &mut [u8]) -> bool {
    let mut at = 0;
    for &(pa, n) in pieces {
        if !dram.read(pa, &mut out[at..at + n]) {
            return false;
        }
        at += n;
    }
    true
}

/// Write `data` across the pieces.
pub fn write_pieces(dram: &mut Dram, pieces: &[(u64, usize)], data: &[u8]) -> bool {
    let mut at = 0;
    for &(pa, n) in pieces {
        if !dram.write(pa, &data[at..at + n]) {
            return false;
        }
        at += n;
    }
    true
}
