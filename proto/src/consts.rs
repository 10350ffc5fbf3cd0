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

/// TLB entries (fully associative, tree pseudo-LRU).
pub const TLB_ENTRIES: usize = 64;
/// Bits of the TLB's update tag ([`tlb_tag`]).
pub const TLB_TAG_BITS: u32 = 12;

/// The TLB's update tag of `(pid, vpn)`: the low [`TLB_TAG_BITS`] of `vpn`, XOR the low
/// [`TLB_TAG_BITS`] of `pid` in reverse bit order (so the small pids a node hands out first
/// differ in the tag's top bits and the pages each touches first in its low bits: tenants
/// that use the same virtual addresses do not share tags). Lookups match the whole
/// `(pid, vpn)`; updates match the tag: an insert takes the entry whose key has its tag (so
/// at most one entry holds each tag, and never two hold one key), an invalidation drops it.
/// Keys that share a tag replace each other (another key's entry dropped costs a miss, never
/// a wrong translation), and the update port compares 12 bits per entry instead of 52.
pub fn tlb_tag(pid: u16, vpn: u64) -> u16 {
    let mask = (1u16 << TLB_TAG_BITS) - 1;
    let pid_rev = (pid & mask).reverse_bits() >> (16 - TLB_TAG_BITS);
    (vpn as u16 & mask) ^ pid_rev
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

    /// Tenants that use the same pages keep apart in the TLB's update tags: pids below 16
    /// touching their first 256 pages never share a tag.
    #[test]
    fn small_pids_and_pages_have_their_own_tlb_tags() {
        let mut seen = std::collections::HashSet::new();
        for pid in 0..16u16 {
            for vpn in 0..256u64 {
                assert!(seen.insert(tlb_tag(pid, vpn)), "pid {pid} vpn {vpn}");
            }
        }
        assert_eq!(tlb_tag(1, 0), 0x800);
        assert_eq!(
            tlb_tag(0x1001, 0x7_0000_0003),
            tlb_tag(1, 3),
            "12 bits of each"
        );
    }
}
