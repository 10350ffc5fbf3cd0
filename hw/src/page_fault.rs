//! The page-fault unit: turns a walk outcome into a translation, mapping first-touch pages.
//!
//! On FAULT (allocated, not valid, permitted) it pops a free frame from the asynchronous
//! free-page FIFO ([`FREE_PAGE_FIFO_DEPTH`] deep, filled by the slow path), builds the valid
//! PTE and, in the same cycle and in parallel: writes the PTE back to its page-table slot
//! (`pw_*`), inserts it in the TLB (`ti_*`), tells the slow path which frame it used
//! (`pm_*`, a PAGE_MAPPED descriptor) and continues the request with the frame (`out_*`).
//! On HIT it inserts the walked PTE in the TLB and continues. PERMISSION and UNMAPPED become
//! error statuses. An empty FIFO gives RETRY_LATER: the pipeline never waits.
//!
//! Every class takes exactly [`PF_LATENCY`] cycle (one register stage), so a fault costs no
//! cycle more than a walk that finds a valid PTE.

use crate::pt_walker::outcome;
use crate::spec::Spec;
use clio_proto::consts::{BUCKET_BYTES, FREE_PAGE_FIFO_DEPTH, PTE_BYTES, VPN_BITS};
use clio_proto::pte::{
    PERM_READ, PERM_WRITE, PID_SHIFT, READ_SHIFT, USED_SHIFT, VALID_SHIFT, WRITE_SHIFT,
};
use clio_proto::status::Status;
use rust_hdl::prelude::*;

/// Cycles from `in_valid` to `out_valid`, for every outcome.
pub const PF_LATENCY: usize = 1;

type FreeFifo = SynchronousFIFO<Bits<40>, 5, 6, 1>;
const _: () = assert!(
    FREE_PAGE_FIFO_DEPTH == 32,
    "FreeFifo is sized for 32 entries"
);
// PTE write-back: bucket * 256 + slot * 16 (`<< 8`, `<< 4`); word0 = vpn | pid << 36 |
// (USED | VALID) << 56 | perms << 58 (READ, WRITE in perms' bit order); word1 = pfn (`<< 64`).
const _: () = assert!(BUCKET_BYTES == 1 << 8 && PTE_BYTES == 1 << 4);
const _: () = assert!(
    VPN_BITS == 36
        && PID_SHIFT == 36
        && USED_SHIFT == 56
        && VALID_SHIFT == USED_SHIFT + 1
        && READ_SHIFT == 58
        && WRITE_SHIFT == READ_SHIFT + 1
        && PERM_READ == 1
        && PERM_WRITE == 2
);

/// The page-fault unit.
#[derive(LogicBlock, Default)]
pub struct PageFault {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// Physical address of bucket 0.
    pub pt_base: Signal<In, Bits<40>>,
    /// A walk result enters (from the walker).
    pub in_valid: Signal<In, Bit>,
    /// Walk outcome (`pt_walker::outcome`).
    pub in_outcome: Signal<In, Bits<2>>,
    /// Process id.
    pub in_pid: Signal<In, Bits<16>>,
    /// Virtual page number.
    pub in_vpn: Signal<In, Bits<36>>,
    /// TLB generation of the miss.
    pub in_gen: Signal<In, Bits<16>>,
    /// Caller's tag.
    pub in_tag: Signal<In, Bits<7>>,
    /// Bucket of the PTE.
    pub in_bucket: Signal<In, Bits<32>>,
    /// Slot of the PTE.
    pub in_slot: Signal<In, Bits<4>>,
    /// Frame (valid PTEs).
    pub in_pfn: Signal<In, Bits<40>>,
    /// Permissions.
    pub in_perms: Signal<In, Bits<2>>,
    /// The slow path pushes a free frame.
    pub fp_valid: Signal<In, Bit>,
    /// The frame.
    pub fp_pfn: Signal<In, Bits<40>>,
    /// The free-page FIFO is full (a push now would be lost; the slow path's flow control
    /// keeps `pushed - mapped <= depth`, so this is a diagnostic).
    pub fp_full: Signal<Out, Bit>,
    /// The free-page FIFO is empty.
    pub fp_empty: Signal<Out, Bit>,
    /// Result.
    pub out_valid: Signal<Out, Bit>,
    /// `proto::Status` code: OK, PERMISSION, UNMAPPED or RETRY_LATER.
    pub out_status: Signal<Out, Bits<8>>,
    /// Frame of the translation (OK only).
    pub out_pfn: Signal<Out, Bits<40>>,
    /// Caller's tag.
    pub out_tag: Signal<Out, Bits<7>>,
    /// The request took a page fault (for counters).
    pub out_faulted: Signal<Out, Bit>,
    /// PTE write-back: valid.
    pub pw_valid: Signal<Out, Bit>,
    /// PTE write-back: byte address of the slot.
    pub pw_addr: Signal<Out, Bits<40>>,
    /// PTE write-back: the 16 PTE bytes (word0 in bits 0..64, word1 in 64..128).
    pub pw_data: Signal<Out, Bits<128>>,
    /// TLB insert: valid.
    pub ti_valid: Signal<Out, Bit>,
    /// TLB insert: pid.
    pub ti_pid: Signal<Out, Bits<16>>,
    /// TLB insert: vpn.
    pub ti_vpn: Signal<Out, Bits<36>>,
    /// TLB insert: frame.
    pub ti_pfn: Signal<Out, Bits<40>>,
    /// TLB insert: permissions.
    pub ti_perms: Signal<Out, Bits<2>>,
    /// TLB insert: generation.
    pub ti_gen: Signal<Out, Bits<16>>,
    /// PAGE_MAPPED notice to the slow path: valid.
    pub pm_valid: Signal<Out, Bit>,
    /// Notice: pid.
    pub pm_pid: Signal<Out, Bits<16>>,
    /// Notice: vpn.
    pub pm_vpn: Signal<Out, Bits<36>>,
    /// Notice: frame.
    pub pm_pfn: Signal<Out, Bits<40>>,
    free: FreeFifo,
    o_valid: DFF<Bit>,
    o_status: DFF<Bits<8>>,
    o_pfn: DFF<Bits<40>>,
    o_tag: DFF<Bits<7>>,
    o_fault: DFF<Bit>,
    o_insert: DFF<Bit>,
    o_pid: DFF<Bits<16>>,
    o_vpn: DFF<Bits<36>>,
    o_perms: DFF<Bits<2>>,
    o_gen: DFF<Bits<16>>,
    o_addr: DFF<Bits<40>>,
    is_fault: Signal<Local, Bit>,
    take: Signal<Local, Bit>,
    st_ok: Spec<8, { Status::Ok as u64 }>,
    st_perm: Spec<8, { Status::Permission as u64 }>,
    st_unmapped: Spec<8, { Status::Unmapped as u64 }>,
    st_retry: Spec<8, { Status::RetryLater as u64 }>,
    oc_hit: Spec<2, { outcome::HIT as u64 }>,
    oc_fault: Spec<2, { outcome::FAULT as u64 }>,
    oc_permission: Spec<2, { outcome::PERMISSION as u64 }>,
    /// USED | VALID of a mapped PTE, as bits `USED_SHIFT..` of word 0.
    used_valid: Spec<2, 3>,
}

impl Logic for PageFault {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, o_valid, o_status, o_pfn, o_tag, o_fault, o_insert, o_pid, o_vpn, o_perms,
            o_gen, o_addr
        );
        clock!(self, clock, free);
        self.free.write.next = self.fp_valid.val();
        self.free.data_in.next = self.fp_pfn.val();
        self.fp_full.next = self.free.full.val();
        self.fp_empty.next = self.free.empty.val();
        self.is_fault.next = self.in_valid.val() & (self.in_outcome.val() == self.oc_fault.val());
        // Pop a frame only when there is one: an empty FIFO answers RETRY_LATER.
        self.take.next = self.is_fault.val() & !self.free.empty.val();
        self.free.read.next = self.take.val();
        self.o_valid.d.next = self.in_valid.val() & !self.reset.val();
        self.o_tag.d.next = self.in_tag.val();
        self.o_pid.d.next = self.in_pid.val();
        self.o_vpn.d.next = self.in_vpn.val();
        self.o_perms.d.next = self.in_perms.val();
        self.o_gen.d.next = self.in_gen.val();
        self.o_fault.d.next = self.take.val();
        self.o_addr.d.next = self.pt_base.val()
            + (bit_cast::<40, 32>(self.in_bucket.val()) << 8)
            + (bit_cast::<40, 4>(self.in_slot.val()) << 4);
        self.o_pfn.d.next = self.in_pfn.val();
        self.o_insert.d.next = false;
        if self.in_outcome.val() == self.oc_hit.val() {
            self.o_status.d.next = self.st_ok.val();
            self.o_insert.d.next = self.in_valid.val();
        } else if self.in_outcome.val() == self.oc_fault.val() {
            if self.free.empty.val() {
                self.o_status.d.next = self.st_retry.val();
            } else {
                self.o_status.d.next = self.st_ok.val();
                self.o_pfn.d.next = self.free.data_out.val();
                self.o_insert.d.next = self.in_valid.val();
            }
        } else if self.in_outcome.val() == self.oc_permission.val() {
            self.o_status.d.next = self.st_perm.val();
        } else {
            self.o_status.d.next = self.st_unmapped.val();
        }
        self.out_valid.next = self.o_valid.q.val();
        self.out_status.next = self.o_status.q.val();
        self.out_pfn.next = self.o_pfn.q.val();
        self.out_tag.next = self.o_tag.q.val();
        self.out_faulted.next = self.o_fault.q.val();
        // The three parallel tasks of a fault (paper §4.3), plus the notice to the slow path.
        self.pw_valid.next = self.o_valid.q.val() & self.o_fault.q.val();
        self.pw_addr.next = self.o_addr.q.val();
        // word0: vpn | pid << 36 | USED 56 | VALID 57 | READ 58 | WRITE 59; word1: pfn.
        self.pw_data.next = bit_cast::<128, 36>(self.o_vpn.q.val())
            | (bit_cast::<128, 16>(self.o_pid.q.val()) << 36)
            | (bit_cast::<128, 2>(self.used_valid.val()) << 56)
            | (bit_cast::<128, 2>(self.o_perms.q.val()) << 58)
            | (bit_cast::<128, 40>(self.o_pfn.q.val()) << 64);
        self.ti_valid.next = self.o_valid.q.val() & self.o_insert.q.val();
        self.ti_pid.next = self.o_pid.q.val();
        self.ti_vpn.next = self.o_vpn.q.val();
        self.ti_pfn.next = self.o_pfn.q.val();
        self.ti_perms.next = self.o_perms.q.val();
        self.ti_gen.next = self.o_gen.q.val();
        self.pm_valid.next = self.o_valid.q.val() & self.o_fault.q.val();
        self.pm_pid.next = self.o_pid.q.val();
        self.pm_vpn.next = self.o_vpn.q.val();
        self.pm_pfn.next = self.o_pfn.q.val();
    }
}

crate::impl_clocked!(PageFault);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use clio_proto::pte::Pte;

    struct In {
        outcome: u8,
        pid: u16,
        vpn: u64,
        perms: u8,
        slot: u8,
        bucket: u32,
        pfn: u64,
        tag: u8,
    }

    fn drive(b: &mut Bench<PageFault>, i: Option<&In>) {
        b.uut.in_valid.next = i.is_some();
        if let Some(i) = i {
            b.uut.in_outcome.next = (i.outcome as u64).to_bits();
            b.uut.in_pid.next = i.pid.to_bits();
            b.uut.in_vpn.next = i.vpn.to_bits();
            b.uut.in_perms.next = (i.perms as u64).to_bits();
            b.uut.in_slot.next = (i.slot as u64).to_bits();
            b.uut.in_bucket.next = i.bucket.to_bits();
            b.uut.in_pfn.next = i.pfn.to_bits();
            b.uut.in_tag.next = (i.tag as u64).to_bits();
            b.uut.in_gen.next = 9u16.to_bits();
        }
    }

    /// Faults consume the pushed frames in order, write back a PTE that `proto` decodes as
    /// valid with that frame, insert it in the TLB and continue the request, all in the
    /// same cycle and with the same latency as a hit; the empty FIFO gives RETRY_LATER.
    #[test]
    fn faults_map_frames_at_constant_latency() {
        const PT_BASE: u64 = 0x4000;
        let mut b = Bench::new(PageFault::default());
        b.uut.pt_base.next = PT_BASE.to_bits();
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        // The slow path pushes three frames.
        for pfn in [100u64, 101, 102] {
            b.uut.fp_valid.next = true;
            b.uut.fp_pfn.next = pfn.to_bits();
            b.tick();
        }
        b.uut.fp_valid.next = false;
        b.tick();
        let reqs = [
            In {
                outcome: outcome::HIT,
                pid: 1,
                vpn: 10,
                perms: 3,
                slot: 2,
                bucket: 5,
                pfn: 55,
                tag: 1,
            },
            In {
                outcome: outcome::FAULT,
                pid: 1,
                vpn: 11,
                perms: 3,
                slot: 7,
                bucket: 6,
                pfn: 0,
                tag: 2,
            },
            In {
                outcome: outcome::FAULT,
                pid: 2,
                vpn: 12,
                perms: 1,
                slot: 15,
                bucket: 7,
                pfn: 0,
                tag: 3,
            },
            In {
                outcome: outcome::PERMISSION,
                pid: 2,
                vpn: 13,
                perms: 1,
                slot: 0,
                bucket: 1,
                pfn: 0,
                tag: 4,
            },
            In {
                outcome: outcome::FAULT,
                pid: 3,
                vpn: 14,
                perms: 2,
                slot: 1,
                bucket: 2,
                pfn: 0,
                tag: 5,
            },
            In {
                outcome: outcome::UNMAPPED,
                pid: 3,
                vpn: 15,
                perms: 0,
                slot: 0,
                bucket: 3,
                pfn: 0,
                tag: 6,
            },
            In {
                outcome: outcome::FAULT,
                pid: 3,
                vpn: 16,
                perms: 3,
                slot: 3,
                bucket: 4,
                pfn: 0,
                tag: 7,
            },
        ];
        // Back to back, one per cycle; the result of request k appears PF_LATENCY cycles later.
        let mut results = vec![];
        for k in 0..reqs.len() + PF_LATENCY {
            drive(&mut b, reqs.get(k));
            b.settle();
            if k >= PF_LATENCY {
                assert!(b.uut.out_valid.val());
                let r = &reqs[k - PF_LATENCY];
                assert_eq!(b.uut.out_tag.val().to_u8(), r.tag);
                results.push((
                    b.uut.out_status.val().to_u8(),
                    b.uut.out_pfn.val().to_u64(),
                    b.uut.pw_valid.val().then(|| {
                        (
                            b.uut.pw_addr.val().to_u64(),
                            crate::util::bits_to_bytes(b.uut.pw_data.val()),
                        )
                    }),
                    b.uut.ti_valid.val().then(|| {
                        (
                            b.uut.ti_pid.val().to_u16(),
                            b.uut.ti_vpn.val().to_u64(),
                            b.uut.ti_pfn.val().to_u64(),
                            b.uut.ti_gen.val().to_u16(),
                        )
                    }),
                    b.uut.pm_valid.val().then(|| b.uut.pm_pfn.val().to_u64()),
                ));
            } else {
                assert!(!b.uut.out_valid.val());
            }
            b.tick();
        }
        let ok = Status::Ok as u8;
        // Hit: continue with the walked frame, insert in the TLB, no write-back.
        assert_eq!(results[0], (ok, 55, None, Some((1, 10, 55, 9)), None));
        // Faults take 100, 101, 102 in order; the fourth finds the FIFO empty.
        let fault_frames = [(1usize, 100u64), (2, 101), (4, 102)];
        for (k, pfn) in fault_frames {
            let r = &reqs[k];
            let (st, out_pfn, pw, ti, pm) = results[k].clone();
            assert_eq!((st, out_pfn, pm), (ok, pfn, Some(pfn)), "request {k}");
            assert_eq!(ti, Some((r.pid, r.vpn, pfn, 9)));
            let (addr, bytes) = pw.expect("write-back");
            assert_eq!(addr, PT_BASE + r.bucket as u64 * 256 + r.slot as u64 * 16);
            let pte = Pte::from_bytes(&bytes.try_into().unwrap());
            assert_eq!(
                pte,
                Pte {
                    used: true,
                    valid: true,
                    perms: r.perms,
                    pid: r.pid,
                    vpn: r.vpn,
                    pfn
                }
            );
        }
        assert_eq!(results[3].0, Status::Permission as u8);
        assert_eq!(results[5].0, Status::Unmapped as u8);
        assert_eq!(
            (results[6].0, results[6].2.is_none(), results[6].3.is_none()),
            (Status::RetryLater as u8, true, true)
        );
        assert!(b.uut.fp_empty.val());
    }
}
