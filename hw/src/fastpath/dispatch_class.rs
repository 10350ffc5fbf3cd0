//! The class of the frame the executor takes: its opcode's branch in Dispatch and the
//! match-action table's rules for it ([`Mat`]), decoded from the slot's header in the cycle
//! the executor takes the frame and registered, so Dispatch's decision starts from
//! flip-flops. (Decoded from the executor's header register in Dispatch itself, the opcode's
//! compares and the table's rules would sit in front of the state register, `dec$hdr ->
//! exec.state`; docs/utilization.md has the measured depths.)
//!
//! The branches are exclusive and follow Dispatch's order: READ, WRITE, a slow-path opcode,
//! FENCE, CN_ACK, a Clio-KV opcode, POINTER_CHASE, APPEND; an opcode in none of them is an
//! atomic's (or fails the parse, which Dispatch checks first from the look-ahead's
//! `use_parse_ok`). The rules are `Mat`'s (`extend`, `needs_key`, `ring`), so one table says
//! what each opcode does.

use crate::mat::Mat;
use clio_proto::Opcode;
use rust_hdl::prelude::*;

use crate::spec::OpcodeSpec as Op;

/// The taken frame's class, registered.
#[derive(LogicBlock, Default)]
pub struct DispatchClass {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// The executor takes a frame this cycle: its opcode is `opcode`.
    pub load: Signal<In, Bit>,
    /// The taken frame's opcode byte (the slot queue's next header).
    pub opcode: Signal<In, Bits<8>>,
    /// The taken frame's branch (from the cycle after `load`, held until the next).
    pub is_read: Signal<Out, Bit>,
    /// The taken frame is a WRITE.
    pub is_write: Signal<Out, Bit>,
    /// The taken frame has a slow-path opcode.
    pub is_slow: Signal<Out, Bit>,
    /// The taken frame is a FENCE.
    pub is_fence: Signal<Out, Bit>,
    /// The taken frame is a CN_ACK.
    pub is_cn_ack: Signal<Out, Bit>,
    /// The taken frame has a Clio-KV opcode.
    pub is_kv: Signal<Out, Bit>,
    /// The taken frame is a POINTER_CHASE.
    pub is_chase: Signal<Out, Bit>,
    /// The taken frame is an APPEND.
    pub is_append: Signal<Out, Bit>,
    /// Its rules: an extend-path opcode (a parse failure answers UNSUPPORTED), it must carry
    /// its RAS's key, its result goes to the idempotence ring.
    pub is_extend: Signal<Out, Bit>,
    /// The taken frame's opcode must carry its RAS's key.
    pub needs_key: Signal<Out, Bit>,
    /// The taken frame's result goes to the idempotence ring.
    pub uses_ring: Signal<Out, Bit>,
    /// The registers behind the outputs above, in the same order.
    r_read: DFF<Bit>,
    r_write: DFF<Bit>,
    r_slow: DFF<Bit>,
    r_fence: DFF<Bit>,
    r_cn_ack: DFF<Bit>,
    r_kv: DFF<Bit>,
    r_chase: DFF<Bit>,
    r_append: DFF<Bit>,
    r_extend: DFF<Bit>,
    r_key: DFF<Bit>,
    r_ring: DFF<Bit>,
    /// The match-action table on the taken opcode (its path and rules; the parse's version
    /// and status checks are the look-ahead's).
    mat: Mat,
    op_read: Op<{ Opcode::Read as u64 }>,
    op_write: Op<{ Opcode::Write as u64 }>,
    op_fence: Op<{ Opcode::Fence as u64 }>,
    op_cn_ack: Op<{ Opcode::CnAck as u64 }>,
    op_append: Op<{ Opcode::Append as u64 }>,
    op_pointer_chase: Op<{ Opcode::PointerChase as u64 }>,
}

impl Logic for DispatchClass {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, r_read, r_write, r_slow, r_fence, r_cn_ack, r_kv, r_chase, r_append,
            r_extend, r_key, r_ring
        );
        self.mat.opcode.next = self.opcode.val();
        self.mat.version.next = 0.into();
        self.mat.status.next = 0.into();
        self.mat.kv_en.next = false;
        if self.load.val() {
            self.r_read.d.next = self.opcode.val() == self.op_read.val();
            self.r_write.d.next = self.opcode.val() == self.op_write.val();
            self.r_slow.d.next = self.mat.slow.val();
            self.r_fence.d.next = self.opcode.val() == self.op_fence.val();
            self.r_cn_ack.d.next = self.opcode.val() == self.op_cn_ack.val();
            self.r_kv.d.next = self.mat.kv.val();
            self.r_chase.d.next = self.opcode.val() == self.op_pointer_chase.val();
            self.r_append.d.next = self.opcode.val() == self.op_append.val();
            self.r_extend.d.next = self.mat.extend.val();
            self.r_key.d.next = self.mat.needs_key.val();
            self.r_ring.d.next = self.mat.ring.val();
        }
        self.is_read.next = self.r_read.q.val();
        self.is_write.next = self.r_write.q.val();
        self.is_slow.next = self.r_slow.q.val();
        self.is_fence.next = self.r_fence.q.val();
        self.is_cn_ack.next = self.r_cn_ack.q.val();
        self.is_kv.next = self.r_kv.q.val();
        self.is_chase.next = self.r_chase.q.val();
        self.is_append.next = self.r_append.q.val();
        self.is_extend.next = self.r_extend.q.val();
        self.needs_key.next = self.r_key.q.val();
        self.uses_ring.next = self.r_ring.q.val();
    }
}

crate::impl_clocked!(DispatchClass);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use clio_proto::kv::is_kv;
    use clio_proto::offload::in_hardware;
    use clio_proto::opcode::{path_of, Path};

    /// Every opcode byte, loaded and then held while the input moves on: each output is what
    /// `proto` says of the loaded opcode, and exactly one branch (or none, an atomic's or an
    /// unknown opcode) is set.
    #[test]
    fn every_opcode_classifies_as_proto_says() {
        let mut b = Bench::new(DispatchClass::default());
        for op in 0..=255u8 {
            b.uut.opcode.next = (op as u64).to_bits();
            b.uut.load.next = true;
            b.tick();
            // The next frame's opcode is on the input, not loaded: no effect.
            b.uut.load.next = false;
            b.uut.opcode.next = (op.wrapping_add(1) as u64).to_bits();
            b.tick();
            b.settle();
            let u = &b.uut;
            let opc = Opcode::from_u8(op);
            let at = format!("opcode {op:#04x}");
            let got = [
                u.is_read.val(),
                u.is_write.val(),
                u.is_slow.val(),
                u.is_fence.val(),
                u.is_cn_ack.val(),
                u.is_kv.val(),
                u.is_chase.val(),
                u.is_append.val(),
            ];
            let want = [
                opc == Some(Opcode::Read),
                opc == Some(Opcode::Write),
                path_of(op) == Some(Path::SlowPath),
                opc == Some(Opcode::Fence),
                opc == Some(Opcode::CnAck),
                opc.is_some_and(|o| is_kv(o) && in_hardware(o)),
                opc == Some(Opcode::PointerChase),
                opc == Some(Opcode::Append),
            ];
            assert_eq!(got, want, "{at}: branches");
            assert!(got.iter().filter(|&&x| x).count() <= 1, "{at}: exclusive");
            assert_eq!(u.is_extend.val(), path_of(op) == Some(Path::Extend), "{at}");
            assert_eq!(
                u.needs_key.val(),
                opc.is_some_and(|o| o.needs_key()),
                "{at}: needs_key"
            );
            assert_eq!(
                u.uses_ring.val(),
                opc.is_some_and(|o| o.uses_idempotence_ring()),
                "{at}: uses_ring"
            );
        }
    }
}
