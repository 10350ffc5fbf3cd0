//! The key table: one 64-bit secret per remote address space (RAS), indexed by pid, that
//! every request but Register must present (`docs/protocol.md` section 7).
//!
//! [`KEY_TABLE_ENTRIES`] (`proto::consts::KEY_TABLE_ENTRIES`, 4096) x 64 bits in one RAM
//! (8 BRAM36 on the board), indexed by `pid[11:0]`. A lookup presents `lk_pid` and the key the
//! request carries (`lk_key`) in cycle c; `ok` in cycle c+1 ([`KEY_LATENCY`], the RAM's read
//! latency) says whether the key opens that pid by the rule ([`KeyRule`]): `pid[15:12] == 0`,
//! `pid != 0`, the entry is not zero and equals the key. Anything else (pid 0, a pid beyond the table, an empty entry,
//! a wrong key) is refused the same way.
//!
//! Writes (`wr_valid`, the slow path's KEY_WRITE descriptor) store `wr_key` at `wr_pid` when
//! `wr_pid` is inside the table (a write beyond it could only alias another pid: ignored);
//! key 0 removes the RAS. After reset the table is swept to zeros, one entry per cycle
//! ([`SWEEP_CYCLES`]); `ready` is low until then, every lookup is refused meanwhile and
//! writes must wait for `ready` (the sweep would overwrite them).

use crate::key_rule::KeyRule;
use clio_proto::consts::{KEY_TABLE_BITS, KEY_TABLE_ENTRIES};
use rust_hdl::prelude::*;

/// Entries of the table.
pub const ENTRIES: usize = KEY_TABLE_ENTRIES;
/// Address bits of the table (the low bits of a pid).
pub const ADDR_BITS: usize = 12;
const _: () = assert!(ADDR_BITS as u32 == KEY_TABLE_BITS && 1 << ADDR_BITS == ENTRIES);
// `pid[15:12] == 0`: the pid bits beyond the table.
const _: () = assert!(clio_proto::consts::PID_BITS == 16);
/// Cycles from a lookup to `ok`.
pub const KEY_LATENCY: usize = 1;
/// Cycles after reset before `ready` (the zero sweep).
pub const SWEEP_CYCLES: usize = ENTRIES;

/// The key table.
#[derive(LogicBlock, Default)]
pub struct KeyTable {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: starts the zero sweep.
    pub reset: Signal<In, Bit>,
    /// Lookup: the request's pid (every cycle; `ok` follows one cycle later).
    pub lk_pid: Signal<In, Bits<16>>,
    /// Lookup: the key the request presents.
    pub lk_key: Signal<In, Bits<64>>,
    /// The key presented a cycle ago opens its pid's RAS.
    pub ok: Signal<Out, Bit>,
    /// Write `wr_key` at `wr_pid` (ignored for a pid beyond the table).
    pub wr_valid: Signal<In, Bit>,
    /// Write: pid.
    pub wr_pid: Signal<In, Bits<16>>,
    /// Write: key (0 removes the RAS).
    pub wr_key: Signal<In, Bits<64>>,
    /// The zero sweep after reset is done.
    pub ready: Signal<Out, Bit>,
    keys: RAM<Bits<64>, 12>,
    /// The rule: the pid's half as the lookup is presented (registered in `q_pid_ok`), the
    /// key's against the RAM's output the cycle after.
    rule: KeyRule,
    sweep: DFF<Bit>,
    sweep_at: DFF<Bits<12>>,
    q_pid_ok: DFF<Bit>,
    q_key: DFF<Bits<64>>,
}

impl Logic for KeyTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sweep, sweep_at, q_pid_ok, q_key);
        self.keys.read_clock.next = self.clock.val();
        self.keys.write_clock.next = self.clock.val();
        self.keys.read_address.next = self.lk_pid.val().get_bits::<12>(0);
        self.rule.pid.next = self.lk_pid.val();
        self.q_pid_ok.d.next = self.rule.pid_ok.val() & !self.sweep.q.val();
        self.q_key.d.next = self.lk_key.val();
        self.rule.stored.next = self.keys.read_data.val();
        self.rule.presented.next = self.q_key.q.val();
        self.ok.next = self.q_pid_ok.q.val() & self.rule.key_ok.val();
        self.ready.next = !self.sweep.q.val();
        if self.sweep.q.val() {
            self.keys.write_enable.next = true;
            self.keys.write_address.next = self.sweep_at.q.val();
            self.keys.write_data.next = 0.into();
            self.sweep_at.d.next = self.sweep_at.q.val() + 1;
            if self.sweep_at.q.val() == 0xFFF {
                self.sweep.d.next = false;
            }
        } else {
            self.keys.write_enable.next =
                self.wr_valid.val() & (self.wr_pid.val().get_bits::<4>(12) == 0);
            self.keys.write_address.next = self.wr_pid.val().get_bits::<12>(0);
            self.keys.write_data.next = self.wr_key.val();
        }
        if self.reset.val() {
            self.sweep.d.next = true;
            self.sweep_at.d.next = 0.into();
            self.q_pid_ok.d.next = false;
        }
    }
}

crate::impl_clocked!(KeyTable);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use std::collections::HashMap;

    fn reset(b: &mut Bench<KeyTable>) {
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        b.settle();
        assert!(!b.uut.ready.val(), "sweeping after reset");
        let mut n = 0;
        while !b.uut.ready.val() {
            b.tick();
            n += 1;
        }
        assert_eq!(n, SWEEP_CYCLES);
    }

    fn write(b: &mut Bench<KeyTable>, pid: u16, key: u64) {
        b.uut.wr_valid.next = true;
        b.uut.wr_pid.next = pid.to_bits();
        b.uut.wr_key.next = key.to_bits();
        b.tick();
        b.uut.wr_valid.next = false;
    }

    fn opens(b: &mut Bench<KeyTable>, pid: u16, key: u64) -> bool {
        b.uut.lk_pid.next = pid.to_bits();
        b.uut.lk_key.next = key.to_bits();
        b.tick();
        // The inputs move on; the answer is the one for the cycle before.
        b.uut.lk_pid.next = 0u16.to_bits();
        b.uut.lk_key.next = 0u64.to_bits();
        b.settle();
        b.uut.ok.val()
    }

    /// The rule of `docs/protocol.md` section 7 against a plain map: write, read, remove, a
    /// pid beyond the table (refused, and its write does not alias an entry), pid 0, key 0.
    #[test]
    fn keys_open_only_their_pid() {
        let mut b = Bench::new(KeyTable::default());
        reset(&mut b);
        let mut m: HashMap<u16, u64> = HashMap::new();
        let rule = |m: &HashMap<u16, u64>, pid: u16, key: u64| {
            (pid as usize) < ENTRIES && pid != 0 && m.get(&pid).is_some_and(|&k| k != 0 && k == key)
        };
        // Empty table: nothing opens, not even key 0.
        for (pid, key) in [(1u16, 0u64), (1, 5), (4095, 0), (0, 0)] {
            assert!(!opens(&mut b, pid, key), "empty table, pid {pid} key {key}");
        }
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut rnd = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let pids = [1u16, 2, 7, 4095, 0x0FFF, 0x1001, 0xF007, 0];
        for step in 0..600 {
            let pid = pids[rnd() as usize % pids.len()];
            match rnd() % 4 {
                0 => {
                    let key = if rnd() % 5 == 0 { 0 } else { rnd() };
                    write(&mut b, pid, key);
                    if (pid as usize) < ENTRIES {
                        m.insert(pid, key);
                    }
                }
                1 => {
                    let key = m.get(&(pid & 0xFFF)).copied().unwrap_or(0);
                    assert_eq!(opens(&mut b, pid, key), rule(&m, pid, key), "step {step}");
                }
                2 => {
                    let key = m.get(&pid).copied().unwrap_or(0) ^ (1 << (rnd() % 64));
                    assert_eq!(opens(&mut b, pid, key), rule(&m, pid, key), "step {step}");
                }
                _ => {
                    let key = rnd();
                    assert_eq!(opens(&mut b, pid, key), rule(&m, pid, key), "step {step}");
                }
            }
        }
        // Written, read, removed.
        write(&mut b, 9, 0xABCD);
        assert!(opens(&mut b, 9, 0xABCD));
        assert!(!opens(&mut b, 9, 0xABCC), "wrong key");
        assert!(!opens(&mut b, 9 | 0x1000, 0xABCD), "pid beyond the table");
        write(&mut b, 9 | 0x1000, 0x5555);
        assert!(
            opens(&mut b, 9, 0xABCD),
            "a write beyond the table aliases nothing"
        );
        write(&mut b, 9, 0);
        assert!(!opens(&mut b, 9, 0xABCD), "removed");
        assert!(!opens(&mut b, 9, 0), "key 0 opens nothing");
        write(&mut b, 0, 77);
        assert!(!opens(&mut b, 0, 77), "pid 0 is never a RAS");
        // Back to back lookups, one per cycle.
        write(&mut b, 10, 100);
        write(&mut b, 11, 101);
        let seq = [
            (10u16, 100u64, true),
            (11, 101, true),
            (10, 101, false),
            (11, 101, true),
        ];
        for (i, (pid, key, _)) in seq.iter().enumerate() {
            b.uut.lk_pid.next = pid.to_bits();
            b.uut.lk_key.next = key.to_bits();
            b.tick();
            b.settle();
            assert_eq!(b.uut.ok.val(), seq[i].2, "back to back {i}");
        }
        // A reset sweeps everything away.
        reset(&mut b);
        assert!(!opens(&mut b, 10, 100), "cleared by the reset sweep");
    }
}
