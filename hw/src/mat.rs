//! The match-action table (Clio's MAT): what the fast path does with a request, by its opcode.
//!
//! The executor consults it in Dispatch, after the frame's verdict and before anything runs.
//! The tables are `proto::opcode`'s, built into 256-bit constants at elaboration
//! ([`crate::util::path_table`], [`crate::util::rule_table`]): one bit per opcode byte, so a
//! change in proto changes the hardware. The paths: READ/WRITE -> virtual memory (`vm`);
//! TAS/UNLOCK/CAS/FAA/FENCE/CN_ACK -> the sync unit (`sync`); ALLOC/FREE/REGISTER/JOIN/
//! UNREGISTER/HEARTBEAT/SET_EPOCH -> the slow path (`slow`); 0x40..=0x7F -> the extend path
//! (`extend`: the offload port bundle, docs/hardware.md); anything else fails `head_ok`
//! (BAD_REQUEST).
//! With them, the rules the executor needs (`needs_key`, `ring`) and `Header::parse`'s
//! version and status checks. Combinational: the decision takes no cycle of its own.

use crate::util::{opcode_table, path_table, rule_table};
use clio_proto::header::VERSION;
use clio_proto::kv::is_kv;
use clio_proto::offload::in_hardware;
use clio_proto::opcode::{path_of, Path};
use clio_proto::{Opcode, Status};
use rust_hdl::prelude::*;

/// The match-action table: the opcode's path and rules, and `Header::parse`'s version and
/// status checks (version == `VERSION`, status <= `Status::MAX`).
#[derive(LogicBlock)]
pub struct Mat {
    /// Opcode byte.
    pub opcode: Signal<In, Bits<8>>,
    /// Version byte.
    pub version: Signal<In, Bits<8>>,
    /// Status byte.
    pub status: Signal<In, Bits<8>>,
    /// Clio-KV's unit is enabled (`Extend::kv_en`, from KV_CONFIG): its opcodes are known.
    pub kv_en: Signal<In, Bit>,
    /// A Clio-KV opcode the unit serves (`KvGet`, `KvPut`, `KvDelete`).
    pub kv: Signal<Out, Bit>,
    /// Version and status valid and the opcode defined (`Opcode::from_u8`).
    pub head_ok: Signal<Out, Bit>,
    /// Virtual-memory opcode (READ, WRITE).
    pub vm: Signal<Out, Bit>,
    /// Sync-unit opcode (atomics, FENCE, CN_ACK).
    pub sync: Signal<Out, Bit>,
    /// Extend opcode (`path_of` = Extend): a parse failure answers UNSUPPORTED.
    pub extend: Signal<Out, Bit>,
    /// Slow-path opcode (`Opcode::path` = SlowPath): forwarded as a REQUEST descriptor.
    pub slow: Signal<Out, Bit>,
    /// The request must carry its RAS's key (`Opcode::needs_key`).
    pub needs_key: Signal<Out, Bit>,
    /// The result is recorded in the idempotence ring (`Opcode::uses_idempotence_ring`).
    pub ring: Signal<Out, Bit>,
    t_known: Constant<Bits<256>>,
    t_kv: Constant<Bits<256>>,
    t_vm: Constant<Bits<256>>,
    t_sync: Constant<Bits<256>>,
    t_ext: Constant<Bits<256>>,
    t_slow: Constant<Bits<256>>,
    t_key: Constant<Bits<256>>,
    t_ring: Constant<Bits<256>>,
    c_version: Constant<Bits<8>>,
    c_status_max: Constant<Bits<8>>,
}

impl Default for Mat {
    fn default() -> Self {
        Mat {
            opcode: Default::default(),
            version: Default::default(),
            status: Default::default(),
            kv_en: Default::default(),
            kv: Default::default(),
            head_ok: Default::default(),
            vm: Default::default(),
            sync: Default::default(),
            extend: Default::default(),
            slow: Default::default(),
            needs_key: Default::default(),
            ring: Default::default(),
            // Extend opcodes without a unit here (`proto::offload::IN_HARDWARE`) fail the
            // parse and are answered UNSUPPORTED, as by a model node without that offload.
            // Clio-KV's are known only while its unit is configured (`t_kv`, `kv_en`).
            t_known: Constant::new(opcode_table(|v| {
                Opcode::from_u8(v).is_some_and(|op| {
                    path_of(v) != Some(Path::Extend) || (in_hardware(op) && !is_kv(op))
                })
            })),
            // Clio-KV's opcodes the unit serves (`IN_HARDWARE`), known while `kv_en`: before
            // the slow path's KV_CONFIG they are UNSUPPORTED, as on a model node.
            t_kv: Constant::new(opcode_table(|v| {
                Opcode::from_u8(v).is_some_and(|op| is_kv(op) && in_hardware(op))
            })),
            t_vm: Constant::new(path_table(Path::VirtualMemory)),
            t_sync: Constant::new(path_table(Path::Sync)),
            t_ext: Constant::new(path_table(Path::Extend)),
            t_slow: Constant::new(path_table(Path::SlowPath)),
            t_key: Constant::new(rule_table(Opcode::needs_key)),
            t_ring: Constant::new(rule_table(Opcode::uses_idempotence_ring)),
            c_version: Constant::new((VERSION as u64).to_bits()),
            c_status_max: Constant::new((Status::MAX as u64).to_bits()),
        }
    }
}

impl Logic for Mat {
    #[hdl_gen]
    fn update(&mut self) {
        // Each table's bit at the opcode: a bit select of a constant (a 256-way mux of
        // constants, which synthesis reduces to a function of the opcode's eight bits, and
        // which Verilator evaluates as one word select and shift per table, where a one-hot
        // `1 << opcode` and an AND with each table cost eight words each).
        self.kv.next = self.t_kv.val().get_bit(self.opcode.val().index());
        self.head_ok.next = (self.version.val() == self.c_version.val())
            & (self.status.val() <= self.c_status_max.val())
            & (self.t_known.val().get_bit(self.opcode.val().index())
                | (self.kv_en.val() & self.kv.val()));
        self.vm.next = self.t_vm.val().get_bit(self.opcode.val().index());
        self.sync.next = self.t_sync.val().get_bit(self.opcode.val().index());
        self.extend.next = self.t_ext.val().get_bit(self.opcode.val().index());
        self.slow.next = self.t_slow.val().get_bit(self.opcode.val().index());
        self.needs_key.next = self.t_key.val().get_bit(self.opcode.val().index());
        self.ring.next = self.t_ring.val().get_bit(self.opcode.val().index());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every opcode byte, with the Clio-KV unit off and on, a good and a bad version and a
    /// status at and past the maximum: each output is what `proto` says.
    #[test]
    fn every_opcode_decodes_as_proto_says() {
        let mut m = Mat::default();
        m.connect_all();
        for kv_en in [false, true] {
            for op in 0..=255u8 {
                for (version, status) in [
                    (VERSION, 0u8),
                    (VERSION, Status::MAX as u8),
                    (VERSION ^ 1, 0),
                    (VERSION, Status::MAX as u8 + 1),
                ] {
                    m.opcode.next = (op as u64).to_bits();
                    m.version.next = (version as u64).to_bits();
                    m.status.next = (status as u64).to_bits();
                    m.kv_en.next = kv_en;
                    assert!(simulate(&mut m, 100));
                    let u = &m;
                    let opc = Opcode::from_u8(op);
                    let kv = opc.is_some_and(|o| is_kv(o) && in_hardware(o));
                    let known = opc.is_some_and(|o| {
                        path_of(op) != Some(Path::Extend) || (in_hardware(o) && !is_kv(o))
                    });
                    let at = format!("opcode {op:#04x} kv_en {kv_en} v {version} s {status}");
                    assert_eq!(u.vm.val(), path_of(op) == Some(Path::VirtualMemory), "{at}");
                    assert_eq!(u.sync.val(), path_of(op) == Some(Path::Sync), "{at}");
                    assert_eq!(u.slow.val(), path_of(op) == Some(Path::SlowPath), "{at}");
                    assert_eq!(u.extend.val(), path_of(op) == Some(Path::Extend), "{at}");
                    assert_eq!(u.kv.val(), kv, "{at}");
                    assert_eq!(
                        u.needs_key.val(),
                        opc.is_some_and(Opcode::needs_key),
                        "{at}"
                    );
                    assert_eq!(
                        u.ring.val(),
                        opc.is_some_and(Opcode::uses_idempotence_ring),
                        "{at}"
                    );
                    let head = version == VERSION
                        && status <= Status::MAX as u8
                        && (known || (kv_en && kv));
                    assert_eq!(u.head_ok.val(), head, "{at}");
                }
            }
        }
    }
}
