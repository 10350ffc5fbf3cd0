//! Defaults that size the system. Change them here, with a reason; every implementer follows.

/// Virtual addresses are 48 bits wide (like x86-64 / ARMv8 user space).
pub const VA_BITS: u32 = 48;
/// One past the highest valid virtual address.
pub const VA_LIMIT: u64 = 1 << VA_BITS;
/// Process ids are 16 bits on the wire, assigned by the memory node. PID 0 means "not
/// registered". A PID names a remote address space (RAS); the processes that join it share it.
pub const PID_BITS: u32 = 16;
/// Entries of the fast path's key table, indexed by PID: one 64-bit secret per RAS, 4096 x 64
/// bits = 8 BRAM36 on the board. PIDs are 1..KEY_TABLE_ENTRIES (entry 0 is never valid); a
/// request whose PID is outside the table is denied; Register beyond it answers TableFull.
pub const KEY_TABLE_ENTRIES: usize = 4096;
/// log2 of [`KEY_TABLE_ENTRIES`] (the bits of a PID the key table decodes).
pub const KEY_TABLE_BITS: u32 = 12;
/// Members (processes) that one RAS may have at a time: half of the node's client ids
/// ([`RING_MEMBERS`] less the unused 0), so one RAS cannot hold them all.
pub const MAX_MEMBERS_PER_RAS: usize = (RING_MEMBERS - 1) / 2;
/// Default lease of a RAS member in milliseconds: a member that neither heartbeats nor sends
/// any slow-path request for this long is removed (its idempotence-ring slots released); the
/// last member's removal tears the RAS down. CLib heartbeats every quarter lease.
pub const DEFAULT_LEASE_MS: u64 = 10_000;
/// Default page size: 4 MiB huge pages, as in the paper (page table = a tiny fraction of DRAM).
pub const DEFAULT_PAGE_SHIFT: u32 = 22;
/// Smallest page size a node may be configured with (4 KiB).
pub const MIN_PAGE_SHIFT: u32 = 12;
/// Largest page size a node may be configured with (1 GiB).
pub const MAX_PAGE_SHIFT: u32 = 30;
/// Width of a virtual page number at the smallest page size.
pub const VPN_BITS: u32 = VA_BITS - MIN_PAGE_SHIFT;

/// Bytes in one page-table entry.
pub const PTE_BYTES: usize = 16;
/// Slots per hash bucket. 16 slots x 16 B = 256 B = one 4-beat burst of the 512-bit datapath.
/// With the 2x over-provisioned table this keeps allocation retry-free well past half of
/// physical memory (measured by the Figure 13 test and `clio bench alloc`).
pub const BUCKET_SLOTS: usize = 16;
/// Bytes in one hash bucket (read in one DRAM burst on a TLB miss).
pub const BUCKET_BYTES: usize = PTE_BYTES * BUCKET_SLOTS;
/// Page-table slots per physical page (over-provisioning factor).
pub const PT_OVERPROVISION: u64 = 2;
/// Seed of the page-table hash (ASCII "Clio").
pub const PT_HASH_SEED: u32 = 0x436C_696F;

/// TLB entries: [`TLB_SETS`] sets of [`TLB_WAYS`] ways, a tree pseudo-LRU per set.
pub const TLB_ENTRIES: usize = TLB_SETS * TLB_WAYS;
/// TLB sets (the set of a key is [`tlb_set`]).
pub const TLB_SETS: usize = 16;
/// TLB ways per set: a lookup compares this many keys, read from LUT RAM, instead of every
/// entry's key in flip-flops.
pub const TLB_WAYS: usize = 4;

/// The TLB set of `(pid, vpn)`: the page's low 4 bits XOR the pid's low 4 bits in reverse
/// bit order. Consecutive pages of a process spread over all sets (any 64 consecutive pages
/// fill every set's four ways exactly), and so do tenants that use the same pages (small pids
/// differ in the reversed nibble's top bits). Pages 16 apart share a set: a stride of 16
/// pages over more than four pages misses where a fully associative TLB would not. The
/// hardware takes the set from two slices of its key, which holds the pid reversed above the
/// page (`hw/src/tlb.rs`).
pub fn tlb_set(pid: u16, vpn: u64) -> usize {
    let pid_rev = (pid & 0xF).reverse_bits() >> 12;
    (vpn as usize & (TLB_SETS - 1)) ^ usize::from(pid_rev)
}
/// Depth of the asynchronous free-page buffer that the slow path keeps full.
pub const FREE_PAGE_FIFO_DEPTH: usize = 32;
/// Rows of the fast path's idempotence table, one per member: client ids are handed out
/// node-wide by the slow path from `1..RING_MEMBERS` (0 is nobody's), and a member's
/// ring-recorded results (atomics, Append, Clio-KV writes) live only in its own row, so no
/// member can evict another's. The row is emptied whenever the slow path hands it to a new
/// owner or takes it back (`ring::Descriptor::RingOwner`).
pub const RING_MEMBERS: usize = 1024;
/// log2 of [`RING_MEMBERS`] (the client-id bits that select a row).
pub const RING_MEMBER_BITS: usize = 10;
/// Entries per member row: a request's entry is [`ring_way`] of its request id.
pub const RING_WAYS: usize = 16;
/// log2 of [`RING_WAYS`].
pub const RING_WAY_BITS: usize = 4;
/// Entries of the idempotence table in all.
pub const IDEMPOTENCE_RING_ENTRIES: usize = RING_MEMBERS * RING_WAYS;
const _: () = assert!(1 << RING_MEMBER_BITS == RING_MEMBERS && 1 << RING_WAY_BITS == RING_WAYS);

/// The entry of a member's row that request `req_id` records into: the id's low
/// [`RING_WAY_BITS`] XOR the next ones. Both matter: CLib keeps a lane in the low bits of its
/// ids and counts above them, a plain client may count from bit 0; either way consecutive ids
/// of one sequence take different entries until the sequence has gone round the row.
pub const fn ring_way(req_id: u32) -> usize {
    ((req_id ^ (req_id >> RING_WAY_BITS)) as usize) % RING_WAYS
}

/// Payload bytes carried by one full packet. Packet `i` of a request carries bytes
/// `[i * MAX_PAYLOAD, ...)`, so the node places it at `va + i * MAX_PAYLOAD` (a shift in hardware).
/// 1024 B + 64 B header + 42 B Ethernet/IPv4/UDP fits a standard 1500 B MTU.
pub const MAX_PAYLOAD: usize = 1024;
/// log2 of [`MAX_PAYLOAD`].
pub const MAX_PAYLOAD_SHIFT: u32 = 10;
/// Largest read or write in one request (1 MiB = 1024 packets). A write arrives as
/// `ceil(len / MAX_PAYLOAD)` request packets; a read is one request packet answered by
/// `ceil(len / MAX_PAYLOAD)` response packets, segmented the same way (packet `i` carries bytes
/// `[i * MAX_PAYLOAD, ...)` of the range; `header::check_read`, `header::read_response`).
pub const MAX_REQUEST_LEN: u32 = 1 << 20;
/// Atomic operations (TAS, CAS, FAA) act on naturally aligned 8-byte words.
pub const ATOMIC_BYTES: u64 = 8;

/// EtherType of Clio frames in raw-Ethernet mode (IEEE local experimental 2).
pub const ETHERTYPE_CLIO: u16 = 0x88B5;
/// Default UDP port of a memory node.
pub const DEFAULT_UDP_PORT: u16 = 48_850;

/// Width of the hardware datapath in bits (one beat).
pub const DATAPATH_BITS: usize = 512;
/// Bytes per datapath beat.
pub const BEAT_BYTES: usize = DATAPATH_BITS / 8;
/// Target core clock of the fast path in MHz.
pub const CORE_CLOCK_MHZ: u32 = 250;

const _: () = assert!(1 << KEY_TABLE_BITS == KEY_TABLE_ENTRIES);

#[cfg(test)]
mod tests {
    use super::*;

    /// Any 64 consecutive pages of one process fill every set's ways exactly; tenants that
    /// use the same 16 pages spread too (no set holds more than 4 of 4 tenants' 16 pages each).
    #[test]
    fn pages_and_tenants_spread_over_the_tlb_sets() {
        for first in [0u64, 5, 1 << 20] {
            let mut per_set = [0usize; TLB_SETS];
            for vpn in first..first + TLB_ENTRIES as u64 {
                per_set[tlb_set(3, vpn)] += 1;
            }
            assert_eq!(per_set, [TLB_WAYS; TLB_SETS], "pages from {first}");
        }
        let mut per_set = [0usize; TLB_SETS];
        for pid in 1..=4u16 {
            for vpn in 0..16u64 {
                per_set[tlb_set(pid, vpn)] += 1;
            }
        }
        assert_eq!(per_set, [TLB_WAYS; TLB_SETS]);
        assert_eq!(tlb_set(1, 0), 8, "pid 1's nibble reversed");
        assert_eq!(
            tlb_set(0x11, 0x7_0000_0030),
            tlb_set(1, 0),
            "4 bits of each"
        );
        assert!(TLB_ENTRIES.is_power_of_two() && TLB_WAYS == 4);
    }
}
