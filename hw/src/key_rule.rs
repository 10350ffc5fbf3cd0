//! The key rule of `docs/protocol.md` section 7, written once for the hardware: a pid can hold
//! a remote address space when it lies inside the key table (`pid[15:12] == 0`) and is not 0
//! (`pid_ok`); a stored key opens it to a presented key when the stored key is not 0 (0 means
//! no RAS) and equals the presented one (`key_ok`). A request is let in when both hold; it is
//! then refused as Stale when its epoch is older than its RAS's (`epoch_ok` low).
//!
//! The epoch half is `!clio_proto::epoch::older(stored, presented)`: the stored epoch is 0
//! (the RAS is not fenced), or `stored - presented` (mod 2^16) is 0 (the RAS's own epoch) or has
//! bit 15 set (a serial number at or after the RAS's: a newer view, also across the wrap from
//! 65535 to 1). `older` is "not 0 and in 1..=32767 ahead", so this is its negation exactly.
//!
//! Combinational, with the three parts on ports of their own, so a user may apply them in
//! different cycles: the key table checks the pid as the lookup is presented and the key and
//! epoch against its RAM's output the cycle after ([`crate::key_table::KeyTable`]); the key
//! check re-decides its slots against a KEY_WRITE's pid, key and epoch
//! ([`crate::fastpath::key_check::KeyCheck`]).

use clio_proto::consts::{KEY_TABLE_BITS, PID_BITS};
use clio_proto::epoch::{older, UNFENCED};
use clio_proto::header::field;
use rust_hdl::prelude::*;

// `pid[15:12] == 0`: the pid bits beyond the table (proto's, as the key table's address).
const _: () = assert!(PID_BITS == 16 && KEY_TABLE_BITS == 12);
// The epoch is the header's 2-byte field; 0 is proto's unfenced value; and proto's `older` is
// the serial order the kernel computes (`d = stored - presented`, older iff stored != 0,
// d != 0 and d[15] == 0), at its edges: equal, one apart, 32767 and 32768 apart, the wrap.
const _: () = assert!(
    field::EPOCH.end - field::EPOCH.start == 2
        && UNFENCED == 0
        && !older(0, 0)
        && !older(0, 1)
        && !older(0, 0xFFFF)
        && !older(7, 7)
        && older(7, 6)
        && !older(7, 8)
        && older(1, 0xFFFF)
        && !older(0xFFFF, 1)
        && older(1, 0)
        && older(0x8000, 1)
        && !older(0x8001, 1)
);

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
    /// The epoch the table holds for the pid (0: not fenced).
    pub stored_epoch: Signal<In, Bits<16>>,
    /// The epoch the request presents (the header's, as a number).
    pub presented_epoch: Signal<In, Bits<16>>,
    /// `presented_epoch` is not older than `stored_epoch` (`!epoch::older`).
    pub epoch_ok: Signal<Out, Bit>,
    /// `stored_epoch - presented_epoch`, mod 2^16.
    e_diff: Signal<Local, Bits<16>>,
}

impl Logic for KeyRule {
    #[hdl_gen]
    fn update(&mut self) {
        self.pid_ok.next = (self.pid.val().get_bits::<4>(12) == 0) & (self.pid.val() != 0);
        self.key_ok.next = (self.stored.val() != 0) & (self.stored.val() == self.presented.val());
        self.e_diff.next = self.stored_epoch.val() - self.presented_epoch.val();
        self.epoch_ok.next = (self.stored_epoch.val() == 0)
            | (self.e_diff.val() == 0)
            | self.e_diff.val().get_bit(15);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tb::Rng;
    use clio_proto::consts::KEY_TABLE_ENTRIES;
    use clio_proto::epoch::older;

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

    /// The epoch half against `clio_proto::epoch::older`: every pair of the edge values (0,
    /// 1, the wrap at 65535, one apart, 32767 and 32768 apart in both directions), then random
    /// pairs, half of them near each other.
    #[test]
    fn epoch_half_follows_proto() {
        let mut r = Rng(0xE90C_2011);
        let mut u = KeyRule::default();
        u.connect_all();
        let check = |u: &mut KeyRule, stored: u16, presented: u16| {
            u.stored_epoch.next = stored.to_bits();
            u.presented_epoch.next = presented.to_bits();
            assert!(simulate(u, 100));
            assert_eq!(
                u.epoch_ok.val(),
                !older(stored, presented),
                "stored {stored} presented {presented}"
            );
            !older(stored, presented)
        };
        let base = [
            0u16, 1, 2, 100, 0x7FFE, 0x7FFF, 0x8000, 0x8001, 0xFFFE, 0xFFFF,
        ];
        let mut edges = Vec::new();
        for b in base {
            for d in [0u16, 1, 0xFFFF, 0x7FFF, 0x8000, 0x8001, 0x7FFE] {
                edges.push(b.wrapping_add(d));
            }
        }
        let (mut pass, mut refused) = (0, 0);
        for &s in &edges {
            for &p in &edges {
                if check(&mut u, s, p) {
                    pass += 1;
                } else {
                    refused += 1;
                }
            }
        }
        // Named cases: 65535 -> 1 is a step forward; 32767 behind is older, 32768 apart is
        // not (the half of the circle `older` leaves to "newer").
        assert!(check(&mut u, 1, 1) && check(&mut u, 1, 2) && !check(&mut u, 1, 0xFFFF));
        assert!(check(&mut u, 0xFFFF, 1) && !check(&mut u, 2, 1) && check(&mut u, 0, 0x1234));
        assert!(!check(&mut u, 0x7FFF, 0) && check(&mut u, 0x8000, 0));
        assert!(!check(&mut u, 0x8000, 1) && check(&mut u, 0x8001, 1));
        for i in 0..3000 {
            let s = r.below(1 << 16) as u16;
            let p = if i % 2 == 0 {
                s.wrapping_add(r.below(9) as u16).wrapping_sub(4)
            } else {
                r.below(1 << 16) as u16
            };
            check(&mut u, s, p);
        }
        assert!(pass > 1000 && refused > 1000, "{pass} {refused}");
    }
}
