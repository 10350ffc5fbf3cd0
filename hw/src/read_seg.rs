//! The segmentation of a read's answer (docs/protocol.md section 2): a read of `total_len`
//! bytes (up to `MAX_REQUEST_LEN`) is answered by `ceil(total_len / MAX_PAYLOAD)` packets,
//! packet `i` carrying bytes `[i * MAX_PAYLOAD, ...)` of the range with `pkt_index = i`. The
//! executor of `fastpath_top` runs each packet as a read of at most one payload (translate
//! its one or two pages, address, hand to the read-data stage) and asks this block, per
//! packet, for the answer's packet count and the next packet's address and length (whether
//! another packet follows is the executor's `rd_more`, registered from the count).
//! Combinational.

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
    /// The request's VA.
    pub va: Signal<In, Bits<64>>,
    /// The request's `total_len` (checked: 1..=MAX_REQUEST_LEN).
    pub total: Signal<In, Bits<32>>,
    /// Index of the packet under way.
    pub idx: Signal<In, Bits<16>>,
    /// Packets of the answer, `ceil(total / MAX_PAYLOAD)`.
    pub count: Signal<Out, Bits<16>>,
    /// Bytes of packet 0, `min(total, MAX_PAYLOAD)`.
    pub first_len: Signal<Out, Bits<12>>,
    /// VA of packet `idx + 1`'s first byte.
    pub next_va: Signal<Out, Bits<64>>,
    /// Bytes of packet `idx + 1`, `min(total - (idx + 1) * MAX_PAYLOAD, MAX_PAYLOAD)`.
    pub next_len: Signal<Out, Bits<12>>,
    nidx: Signal<Local, Bits<16>>,
    rem: Signal<Local, Bits<32>>,
    /// `MAX_PAYLOAD` as a 32-bit length.
    max_payload: Spec<32, { MAX_PAYLOAD as u64 }>,
}

impl Logic for ReadSeg {
    #[hdl_gen]
    fn update(&mut self) {
        self.count.next = bit_cast::<16, 32>((self.total.val() + self.max_payload.val() - 1) >> 10);
        if self.total.val() > self.max_payload.val() {
            self.first_len.next = bit_cast::<12, 32>(self.max_payload.val());
        } else {
            self.first_len.next = bit_cast::<12, 32>(self.total.val());
        }
        self.nidx.next = self.idx.val() + 1;
        self.next_va.next = self.va.val() + (bit_cast::<64, 16>(self.nidx.val()) << 10);
        self.rem.next = self.total.val() - (bit_cast::<32, 16>(self.nidx.val()) << 10);
        if self.rem.val() > self.max_payload.val() {
            self.next_len.next = bit_cast::<12, 32>(self.max_payload.val());
        } else {
            self.next_len.next = bit_cast::<12, 32>(self.rem.val());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every output against the segmentation rule, for lengths around each KiB boundary up to
    /// `MAX_REQUEST_LEN` and every packet index of the answer.
    #[test]
    fn segments_follow_the_rule() {
        let mut s = ReadSeg::default();
        s.connect_all();
        let kib = MAX_PAYLOAD as u64;
        let mut totals = vec![1, 2, 16, 1000];
        for k in [1, 2, 3, 64, 1023, 1024] {
            totals.extend([k * kib - 1, k * kib, k * kib + 1]);
        }
        let va = 0x1234_5678_9ABCu64;
        let mut cases = 0;
        for &total in totals.iter().filter(|&&t| t <= MAX_REQUEST_LEN as u64) {
            let count = total.div_ceil(kib);
            for idx in (0..count).filter(|&i| i < 3 || i + 3 > count) {
                s.va.next = va.to_bits();
                s.total.next = total.to_bits();
                s.idx.next = idx.to_bits();
                assert!(simulate(&mut s, 10));
                assert_eq!(s.count.val().to_u64(), count, "total {total}");
                assert_eq!(s.first_len.val().to_u64(), total.min(kib), "total {total}");
                assert_eq!(s.next_va.val().to_u64(), va + (idx + 1) * kib, "idx {idx}");
                if idx + 1 < count {
                    let rest = total - (idx + 1) * kib;
                    assert_eq!(
                        s.next_len.val().to_u64(),
                        rest.min(kib),
                        "total {total} idx {idx}"
                    );
                }
                cases += 1;
            }
        }
        assert!(cases > 50, "{cases}");
    }
}
