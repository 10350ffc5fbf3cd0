//! The key rule of `docs/protocol.md` section 7, written once for the hardware: a pid can hold
//! a remote address space when it lies inside the key table (`pid[15:12] == 0`) and is not 0
//! (`pid_ok`); a stored key opens it to a presented key when the stored key is not 0 (0 means
//! no RAS) and equals the presented one (`key_ok`). A request is let in when both hold.
//!
//! Combinational, with the two halves on ports of their own, so a user may apply them in
//! different cycles: the key table checks the pid as the lookup is presented and the key
//! against its RAM's output the cycle after ([`crate::key_table::KeyTable`]); the key check
//! re-decides its slots against a KEY_WRITE's pid and key
//! ([`crate::fastpath::key_check::KeyCheck`]).

use clio_proto::consts::{KEY_TABLE_BITS, PID_BITS};
use rust_hdl::prelude::*;

// `pid[15:12] == 0`: the pid bits beyond the table (proto's, as the key table's address).
const _: () = assert!(PID_BITS == 16 && KEY_TABLE_BITS == 12);

/// The key rule (module doc).
#[derive(LogicBlock, Default)]
pub struct KeyRule {
    /// The pid a request names.
    pub pid: Signal<In, Bits<16>>,
    /// `pid` can hold a RAS: inside the table and not 0.
    pub pid_ok: Signal<Out, Bit>,
    /// The key the table holds for the pid (0: no RAS).
    pub stored: Signal<In, Bits<64>>,
    /// The key the request presents.
    pub presented: Signal<In, Bits<64>>,
    /// `stored` opens the RAS to `presented`: not 0 and equal.
    pub key_ok: Signal<Out, Bit>,
}

impl Logic for KeyRule {
    #[hdl_gen]
    fn update(&mut self) {
        self.pid_ok.next = (self.pid.val().get_bits::<4>(12) == 0) & (self.pid.val() != 0);
        self.key_ok.next = (self.stored.val() != 0) & (self.stored.val() == self.presented.val());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tb::Rng;
    use clio_proto::consts::KEY_TABLE_ENTRIES;

    /// Pids at the table's edges and beyond, keys equal, different, one bit off, and 0 on
    /// either side, against the rule as the protocol states it.
    #[test]
    fn follows_the_protocols_rule() {
        let mut r = Rng(0x4E7_2011);
        let mut u = KeyRule::default();
        u.connect_all();
        let edge = KEY_TABLE_ENTRIES as u64;
        let pids = [
            0,
            1,
            2,
            edge - 1,
            edge,
            edge + 1,
            0x8000,
            0xFFFF,
            0x0FFF,
            0x1000,
        ];
        for i in 0..4000 {
            let pid = if i < pids.len() * 8 {
                pids[i % pids.len()]
            } else {
                r.below(1 << 16)
            };
            let stored = match r.below(4) {
                0 => 0,
                _ => r.next(),
            };
            let presented = match r.below(5) {
                0 => stored,
                1 => stored ^ (1 << r.below(64)),
                2 => 0,
                3 => r.next(),
                _ => stored,
            };
            u.pid.next = pid.to_bits();
            u.stored.next = stored.to_bits();
            u.presented.next = presented.to_bits();
            assert!(simulate(&mut u, 100));
            let pid_ok = pid != 0 && pid < edge;
            let key_ok = stored != 0 && stored == presented;
            assert_eq!(u.pid_ok.val(), pid_ok, "pid {pid:#x}");
            assert_eq!(
                u.key_ok.val(),
                key_ok,
                "stored {stored:#x} presented {presented:#x}"
            );
        }
    }
}
