//! The segmentation of a read's answer (docs/protocol.md section 2): a read of `total_len`
//! bytes (up to `MAX_REQUEST_LEN`) is answered by `ceil(total_len / MAX_PAYLOAD)` packets,
//! packet `i` carrying bytes `[i * MAX_PAYLOAD, ...)` of the range with `pkt_index = i`. The
//! executor of `fastpath_top` runs each packet as a read of at most one payload (translate
//! its one or two pages, address, hand to the read-data stage) and asks this block, per
//! packet, for the answer's packet count and the next packet's address and length (whether
//! another packet follows is the executor's `rd_more`, registered from the count). Packet 0's
//! length, `min(total_len, MAX_PAYLOAD)`, is the look-ahead's (`TranslateAhead::use_len`,
//! kept per slot as the header arrived, so the compare is not in front of Dispatch's length
//! registers). The count is combinational (Dispatch
//! registers it); the next packet's VA
//! and remaining bytes are registers, loaded in Dispatch (`load`) and stepped a KiB as the
//! answer moves on (`step`), so the hand-over of a packet takes its successor's VA from a
//! flip-flop (the 64-bit sum `va + (i + 1) * MAX_PAYLOAD` is not in front of the executor's
//! registers; docs/utilization.md has the depths this bought).

use crate::fastpath::links::{RequestFieldsIn, SegPort};
use crate::spec::Spec;
use clio_proto::consts::{MAX_PAYLOAD, MAX_PAYLOAD_SHIFT, MAX_REQUEST_LEN};
use rust_hdl::prelude::*;

// `<< 10` / `>> 10`: packets of MAX_PAYLOAD bytes; a count of at most 1024 packets fits the
// 16-bit header field.
const _: () = assert!(MAX_PAYLOAD == 1 << MAX_PAYLOAD_SHIFT && MAX_PAYLOAD_SHIFT == 10);
const _: () = assert!((MAX_REQUEST_LEN as usize).div_ceil(MAX_PAYLOAD) <= u16::MAX as usize);

/// Read-answer segmentation.
#[derive(LogicBlock, Default)]
pub struct ReadSeg {
    /// Core clock (the next packet's VA and remaining length are registers).
    pub clock: Signal<In, Clock>,
    /// The request's fields (`Decode::fields`): its VA and `total_len` (checked:
    /// 1..=MAX_REQUEST_LEN).
    pub req: RequestFieldsIn,
    /// The executor's use of the segmenter (`Executor::seg`, joined in the top).
    pub exec: SegPort,
    /// The next packet's VA, and the bytes from its first to the range's end (wrapped when
    /// there is no next packet).
    n_va: DFF<Bits<64>>,
    n_rem: DFF<Bits<32>>,
    /// `MAX_PAYLOAD` as a 32- and a 64-bit length.
    max_payload: Spec<32, { MAX_PAYLOAD as u64 }>,
    max_payload64: Spec<64, { MAX_PAYLOAD as u64 }>,
}

impl Logic for ReadSeg {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, n_va, n_rem);
        self.exec.count.next =
            bit_cast::<16, 32>((self.req.total_len.val() + self.max_payload.val() - 1) >> 10);
        if self.exec.load.val() {
            self.n_va.d.next = self.req.va.val() + self.max_payload64.val();
            self.n_rem.d.next = self.req.total_len.val() - self.max_payload.val();
        } else if self.exec.step.val() {
            self.n_va.d.next = self.n_va.q.val() + self.max_payload64.val();
            self.n_rem.d.next = self.n_rem.q.val() - self.max_payload.val();
        }
        self.exec.next_va.next = self.n_va.q.val();
        if self.n_rem.q.val() > self.max_payload.val() {
            self.exec.next_len.next = bit_cast::<12, 32>(self.max_payload.val());
        } else {
            self.exec.next_len.next = bit_cast::<12, 32>(self.n_rem.q.val());
        }
    }
}

crate::impl_clocked!(ReadSeg);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;

    /// Every output against the segmentation rule, for lengths around each KiB boundary up to
    /// `MAX_REQUEST_LEN`, stepping through every packet of the answer (with idle cycles and a
    /// changing `va` / `total` between steps, which must not matter once loaded).
    #[test]
    fn segments_follow_the_rule() {
        let mut b = Bench::new(ReadSeg::default());
        let kib = MAX_PAYLOAD as u64;
        let mut totals = vec![1, 2, 16, 1000];
        for k in [1, 2, 3, 64, 1023, 1024] {
            totals.extend([k * kib - 1, k * kib, k * kib + 1]);
        }
        let mut cases = 0;
        for (n, &total) in totals
            .iter()
            .filter(|&&t| t <= MAX_REQUEST_LEN as u64)
            .enumerate()
        {
            let va = 0x1234_5678_9ABCu64 + 0x10_0000 * n as u64;
            let count = total.div_ceil(kib);
            b.uut.req.va.next = va.to_bits();
            b.uut.req.total_len.next = total.to_bits();
            b.uut.exec.load.next = true;
            b.settle();
            assert_eq!(b.uut.exec.count.val().to_u64(), count, "total {total}");
            b.tick();
            b.uut.exec.load.next = false;
            for idx in 0..count {
                if idx > 0 {
                    b.uut.exec.step.next = true;
                    b.tick();
                    b.uut.exec.step.next = false;
                }
                // The request's fields move on (the next request's header): no effect.
                b.uut.req.va.next = (idx * 77).to_bits();
                b.uut.req.total_len.next = (idx * 5).to_bits();
                b.tick();
                b.settle();
                assert_eq!(
                    b.uut.exec.next_va.val().to_u64(),
                    va + (idx + 1) * kib,
                    "idx {idx}"
                );
                if idx + 1 < count {
                    let rest = total - (idx + 1) * kib;
                    assert_eq!(
                        b.uut.exec.next_len.val().to_u64(),
                        rest.min(kib),
                        "total {total} idx {idx}"
                    );
                }
                cases += 1;
            }
        }
        assert!(cases > 1000, "{cases}");
    }
}
