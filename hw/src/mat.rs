//! The match-action table: steer each verified packet to the path that serves its opcode.
//!
//! The opcode is byte 1 of the Clio header, i.e. bits 8..16 of a packet's first 512-bit beat.
//! The decision is taken on the first beat and held for the rest of the packet, so every beat
//! of a packet leaves on the same port, [`MAT_LATENCY`] cycle after it entered (II = 1).
//! The table is `proto::opcode::path_of`, built into four 256-bit constants at elaboration
//! ([`crate::util::path_table`]): READ/WRITE -> virtual memory; ALLOC/FREE/REGISTER/JOIN/
//! UNREGISTER/HEARTBEAT -> slow path; TAS/UNLOCK/CAS/FAA/FENCE/CN_ACK -> sync unit;
//! 0x40..=0x7F -> extend port; anything else -> `bad` (the response builder answers
//! BAD_REQUEST).

use crate::util::path_table;
use clio_proto::opcode::Path;
use rust_hdl::prelude::*;

/// Cycles from a beat entering to it leaving on its port.
pub const MAT_LATENCY: usize = 1;

/// The match-action table.
#[derive(LogicBlock)]
pub struct Mat {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub reset: Signal<In, Bit>,
    /// A beat enters.
    pub in_valid: Signal<In, Bit>,
    /// First beat of a packet (carries the header).
    pub in_first: Signal<In, Bit>,
    /// Last beat of a packet.
    pub in_last: Signal<In, Bit>,
    /// The beat.
    pub in_data: Signal<In, Bits<512>>,
    /// Shared output data (valid on the port whose `*_valid` is set).
    pub out_data: Signal<Out, Bits<512>>,
    /// First beat.
    pub out_first: Signal<Out, Bit>,
    /// Last beat.
    pub out_last: Signal<Out, Bit>,
    /// Beat for the virtual-memory path.
    pub vm_valid: Signal<Out, Bit>,
    /// Beat for the sync unit.
    pub sync_valid: Signal<Out, Bit>,
    /// Beat for the slow-path ring.
    pub slow_valid: Signal<Out, Bit>,
    /// Beat for the extend port.
    pub ext_valid: Signal<Out, Bit>,
    /// Beat of a packet with an undefined opcode.
    pub bad_valid: Signal<Out, Bit>,
    port: DFF<Bits<3>>,
    o_port: DFF<Bits<3>>,
    o_valid: DFF<Bit>,
    o_first: DFF<Bit>,
    o_last: DFF<Bit>,
    o_data: DFF<Bits<512>>,
    op: Signal<Local, Bits<8>>,
    op1h: Signal<Local, Bits<256>>,
    decoded: Signal<Local, Bits<3>>,
    sel: Signal<Local, Bits<3>>,
    t_vm: Constant<Bits<256>>,
    t_sync: Constant<Bits<256>>,
    t_slow: Constant<Bits<256>>,
    t_ext: Constant<Bits<256>>,
}

impl Default for Mat {
    fn default() -> Self {
        Mat {
            clock: Default::default(),
            reset: Default::default(),
            in_valid: Default::default(),
            in_first: Default::default(),
            in_last: Default::default(),
            in_data: Default::default(),
            out_data: Default::default(),
            out_first: Default::default(),
            out_last: Default::default(),
            vm_valid: Default::default(),
            sync_valid: Default::default(),
            slow_valid: Default::default(),
            ext_valid: Default::default(),
            bad_valid: Default::default(),
            port: Default::default(),
            o_port: Default::default(),
            o_valid: Default::default(),
            o_first: Default::default(),
            o_last: Default::default(),
            o_data: Default::default(),
            op: Default::default(),
            op1h: Default::default(),
            decoded: Default::default(),
            sel: Default::default(),
            t_vm: Constant::new(path_table(Path::VirtualMemory)),
            t_sync: Constant::new(path_table(Path::Sync)),
            t_slow: Constant::new(path_table(Path::SlowPath)),
            t_ext: Constant::new(path_table(Path::Extend)),
        }
    }
}

/// Port codes (internal; exposed for the documentation and tests).
pub mod port {
    /// Virtual memory.
    pub const VM: u8 = 0;
    /// Sync unit.
    pub const SYNC: u8 = 1;
    /// Slow path.
    pub const SLOW: u8 = 2;
    /// Extend.
    pub const EXT: u8 = 3;
    /// Undefined opcode.
    pub const BAD: u8 = 4;
}

impl Logic for Mat {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, port, o_port, o_valid, o_first, o_last, o_data);
        self.op.next = self.in_data.val().get_bits::<8>(8);
        // proto::opcode::path_of, one table per path.
        self.op1h.next = bit_cast::<256, 1>(1.into()) << self.op.val();
        if (self.t_vm.val() & self.op1h.val()).any() {
            self.decoded.next = 0.into();
        } else if (self.t_sync.val() & self.op1h.val()).any() {
            self.decoded.next = 1.into();
        } else if (self.t_slow.val() & self.op1h.val()).any() {
            self.decoded.next = 2.into();
        } else if (self.t_ext.val() & self.op1h.val()).any() {
            self.decoded.next = 3.into();
        } else {
            self.decoded.next = 4.into();
        }
        if self.in_first.val() {
            self.sel.next = self.decoded.val();
        } else {
            self.sel.next = self.port.q.val();
        }
        if self.in_valid.val() {
            self.port.d.next = self.sel.val();
        }
        self.o_port.d.next = self.sel.val();
        self.o_valid.d.next = self.in_valid.val() & !self.reset.val();
        self.o_first.d.next = self.in_first.val();
        self.o_last.d.next = self.in_last.val();
        self.o_data.d.next = self.in_data.val();
        self.out_data.next = self.o_data.q.val();
        self.out_first.next = self.o_first.q.val();
        self.out_last.next = self.o_last.q.val();
        self.vm_valid.next = self.o_valid.q.val() & (self.o_port.q.val() == 0);
        self.sync_valid.next = self.o_valid.q.val() & (self.o_port.q.val() == 1);
        self.slow_valid.next = self.o_valid.q.val() & (self.o_port.q.val() == 2);
        self.ext_valid.next = self.o_valid.q.val() & (self.o_port.q.val() == 3);
        self.bad_valid.next = self.o_valid.q.val() & (self.o_port.q.val() == 4);
    }
}

crate::impl_clocked!(Mat);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::util::bytes_to_bits;
    use clio_proto::opcode::{path_of, Path};
    use clio_proto::{Header, Opcode};

    /// Every opcode byte, as a real two-beat Clio packet: both beats leave on the port
    /// `proto::opcode::path_of` names, one cycle later.
    #[test]
    fn every_opcode_goes_where_proto_says() {
        let mut b = Bench::new(Mat::default());
        let mut expect: Vec<Option<(u8, bool, bool)>> = vec![];
        let check = |b: &mut Bench<Mat>, e: Option<(u8, bool, bool)>| {
            b.settle();
            let ports = [
                b.uut.vm_valid.val(),
                b.uut.sync_valid.val(),
                b.uut.slow_valid.val(),
                b.uut.ext_valid.val(),
                b.uut.bad_valid.val(),
            ];
            match e {
                None => assert!(ports.iter().all(|p| !p)),
                Some((port, first, last)) => {
                    let want: Vec<bool> = (0..5).map(|i| i == port as usize).collect();
                    assert_eq!(ports.to_vec(), want, "port {port}");
                    assert_eq!((b.uut.out_first.val(), b.uut.out_last.val()), (first, last));
                }
            }
        };
        for op in 0..=255u8 {
            let mut pkt =
                Header::request(Opcode::Write, 5, op as u32, 0x1000).to_packet(&[0xA5; 40]);
            pkt[1] = op;
            let port = match path_of(op) {
                Some(Path::VirtualMemory) => port::VM,
                Some(Path::Sync) => port::SYNC,
                Some(Path::SlowPath) => port::SLOW,
                Some(Path::Extend) => port::EXT,
                None => port::BAD,
            };
            // The second beat carries garbage in the opcode position: the decision must hold.
            for (i, chunk) in [&pkt[..64], &[0x02u8; 64][..]].iter().enumerate() {
                b.uut.in_valid.next = true;
                b.uut.in_first.next = i == 0;
                b.uut.in_last.next = i == 1;
                b.uut.in_data.next = bytes_to_bits(chunk);
                expect.push(Some((port, i == 0, i == 1)));
                let e = expect
                    .len()
                    .checked_sub(MAT_LATENCY + 1)
                    .and_then(|k| expect[k]);
                check(&mut b, e);
                b.tick();
            }
            b.uut.in_valid.next = false;
            expect.push(None);
            let e = expect[expect.len() - 1 - MAT_LATENCY];
            check(&mut b, e);
            b.tick();
        }
    }
}
