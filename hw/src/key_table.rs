//! The key table: one 64-bit secret and one 16-bit epoch per remote address space (RAS),
//! indexed by pid, that every request but Register must present (`docs/protocol.md` section
//! 7, "Epochs" for the epoch).
//!
//! [`KEY_TABLE_ENTRIES`] (`proto::consts::KEY_TABLE_ENTRIES`, 4096) entries of 80 bits (the
//! key at bits 0..64, the epoch at 64..80) in one RAM, indexed by `pid[11:0]`: one write port,
//! one read and one sweep serve both halves (Yosys `synth_xilinx -family xcup` maps it to 9
//! BRAM36, where a 64-bit RAM and a 16-bit one beside it take 10, with the same LUTs; the
//! 64-bit table alone took 8). A lookup presents `lk_pid`, the key the request carries
//! (`lk_key`) and its epoch (`lk_epoch`) in cycle c; in cycle c+1 ([`KEY_LATENCY`], the RAM's
//! read latency) `ok` says whether the key opens that pid by the rule ([`KeyRule`]):
//! `pid[15:12] == 0`, `pid != 0`, the entry's key is not zero and equals the key. Anything else
//! (pid 0, a pid beyond the table, an empty entry, a wrong key) is refused the same way. In the
//! same cycle `epoch_ok` says whether the presented epoch is not older than the entry's
//! (`!clio_proto::epoch::older`); it is the verdict's second half, meaningful only where `ok`
//! holds (a refused key is Denied whatever its epoch; for a pid beyond the table the entry read
//! is another pid's).
//!
//! Writes (`wr_valid`, the slow path's KEY_WRITE descriptor) store `wr_key` and `wr_epoch` at
//! `wr_pid` when `wr_pid` is inside the table (a write beyond it could only alias another pid:
//! ignored); key 0 removes the RAS, epoch 0 leaves it unfenced. After reset the table is swept
//! to zeros, one entry per cycle ([`SWEEP_CYCLES`]); `ready` is low until then, every lookup
//! is refused meanwhile and writes must wait for `ready` (the sweep would overwrite them).

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
// An entry is the key (64 bits) and the epoch (16 bits, the header's 2-byte field).
const _: () = assert!(
    clio_proto::header::field::KEY.end - clio_proto::header::field::KEY.start == 8
        && clio_proto::header::field::EPOCH.end - clio_proto::header::field::EPOCH.start == 2
);
/// Cycles from a lookup to `ok` and `epoch_ok`.
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
    /// Lookup: the epoch the request presents.
    pub lk_epoch: Signal<In, Bits<16>>,
    /// The key presented a cycle ago opens its pid's RAS.
    pub ok: Signal<Out, Bit>,
    /// The epoch presented a cycle ago is not older than its pid's entry's (meaningful where
    /// `ok` holds).
    pub epoch_ok: Signal<Out, Bit>,
    /// Write `wr_key` and `wr_epoch` at `wr_pid` (ignored for a pid beyond the table).
    pub wr_valid: Signal<In, Bit>,
    /// Write: pid.
    pub wr_pid: Signal<In, Bits<16>>,
    /// Write: key (0 removes the RAS).
    pub wr_key: Signal<In, Bits<64>>,
    /// Write: epoch (0: not fenced).
    pub wr_epoch: Signal<In, Bits<16>>,
    /// The zero sweep after reset is done.
    pub ready: Signal<Out, Bit>,
    /// The entries: key at bits 0..64, epoch at 64..80.
    keys: RAM<Bits<80>, 12>,
    /// The rule: the pid's half as the lookup is presented (registered in `q_pid_ok`), the
    /// key's and the epoch's against the RAM's output the cycle after.
    rule: KeyRule,
    sweep: DFF<Bit>,
    sweep_at: DFF<Bits<12>>,
    q_pid_ok: DFF<Bit>,
    q_key: DFF<Bits<64>>,
    q_epoch: DFF<Bits<16>>,
}

impl Logic for KeyTable {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, sweep, sweep_at, q_pid_ok, q_key, q_epoch);
        self.keys.read_clock.next = self.clock.val();
        self.keys.write_clock.next = self.clock.val();
        self.keys.read_address.next = self.lk_pid.val().get_bits::<12>(0);
        self.rule.pid.next = self.lk_pid.val();
        self.q_pid_ok.d.next = self.rule.pid_ok.val() & !self.sweep.q.val();
        self.q_key.d.next = self.lk_key.val();
        self.q_epoch.d.next = self.lk_epoch.val();
        self.rule.stored.next = self.keys.read_data.val().get_bits::<64>(0);
        self.rule.presented.next = self.q_key.q.val();
        self.rule.stored_epoch.next = self.keys.read_data.val().get_bits::<16>(64);
        self.rule.presented_epoch.next = self.q_epoch.q.val();
        self.ok.next = self.q_pid_ok.q.val() & self.rule.key_ok.val();
        self.epoch_ok.next = self.rule.epoch_ok.val();
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
            self.keys.write_data.next = bit_cast::<80, 64>(self.wr_key.val())
                | (bit_cast::<80, 16>(self.wr_epoch.val()) << 64);
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
    use clio_proto::epoch::older;
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

    fn write(b: &mut Bench<KeyTable>, pid: u16, key: u64, epoch: u16) {
        b.uut.wr_valid.next = true;
        b.uut.wr_pid.next = pid.to_bits();
        b.uut.wr_key.next = key.to_bits();
        b.uut.wr_epoch.next = epoch.to_bits();
        b.tick();
        b.uut.wr_valid.next = false;
    }

    /// `ok` and `epoch_ok` for a lookup of `pid` with `key` and `epoch`.
    fn verdict(b: &mut Bench<KeyTable>, pid: u16, key: u64, epoch: u16) -> (bool, bool) {
        b.uut.lk_pid.next = pid.to_bits();
        b.uut.lk_key.next = key.to_bits();
        b.uut.lk_epoch.next = epoch.to_bits();
        b.tick();
        // The inputs move on; the answer is the one for the cycle before.
        b.uut.lk_pid.next = 0u16.to_bits();
        b.uut.lk_key.next = 0u64.to_bits();
        b.uut.lk_epoch.next = 0x5A5Au16.to_bits();
        b.settle();
        (b.uut.ok.val(), b.uut.epoch_ok.val())
    }

    fn opens(b: &mut Bench<KeyTable>, pid: u16, key: u64) -> bool {
        verdict(b, pid, key, 0).0
    }

    /// The rule of `docs/protocol.md` section 7 against a plain map of (key, epoch): write,
    /// read, remove, a pid beyond the table (refused, and its write does not alias an entry),
    /// pid 0, key 0; where the key opens, `epoch_ok` is `!epoch::older` of the entry's epoch
    /// and the presented one (epochs at the edges of the serial order and the wrap).
    #[test]
    fn keys_open_only_their_pid() {
        let mut b = Bench::new(KeyTable::default());
        reset(&mut b);
        let mut m: HashMap<u16, (u64, u16)> = HashMap::new();
        let rule = |m: &HashMap<u16, (u64, u16)>, pid: u16, key: u64| {
            (pid as usize) < ENTRIES
                && pid != 0
                && m.get(&pid).is_some_and(|&(k, _)| k != 0 && k == key)
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
        let epochs = [0u16, 1, 2, 3, 0x7FFF, 0x8000, 0x8001, 0xFFFE, 0xFFFF];
        let (mut fresh, mut stale) = (0, 0);
        for step in 0..800 {
            let pid = pids[rnd() as usize % pids.len()];
            let epoch = epochs[rnd() as usize % epochs.len()];
            let key = match rnd() % 4 {
                0 => {
                    let key = if rnd() % 5 == 0 { 0 } else { rnd() };
                    write(&mut b, pid, key, epoch);
                    if (pid as usize) < ENTRIES {
                        m.insert(pid, (key, epoch));
                    }
                    continue;
                }
                1 => m.get(&(pid & 0xFFF)).map_or(0, |e| e.0),
                2 => m.get(&pid).map_or(0, |e| e.0) ^ (1 << (rnd() % 64)),
                _ => rnd(),
            };
            let (ok, epoch_ok) = verdict(&mut b, pid, key, epoch);
            assert_eq!(ok, rule(&m, pid, key), "step {step}");
            if ok {
                let stored = m[&pid].1;
                assert_eq!(
                    epoch_ok,
                    !older(stored, epoch),
                    "step {step}: stored epoch {stored}, presented {epoch}"
                );
                fresh += epoch_ok as u32;
                stale += !epoch_ok as u32;
            }
        }
        assert!(fresh > 20 && stale > 20, "{fresh} {stale}");
        // Written, read, removed.
        write(&mut b, 9, 0xABCD, 0);
        assert!(opens(&mut b, 9, 0xABCD));
        assert!(!opens(&mut b, 9, 0xABCC), "wrong key");
        assert!(!opens(&mut b, 9 | 0x1000, 0xABCD), "pid beyond the table");
        write(&mut b, 9 | 0x1000, 0x5555, 0);
        assert!(
            opens(&mut b, 9, 0xABCD),
            "a write beyond the table aliases nothing"
        );
        write(&mut b, 9, 0, 0);
        assert!(!opens(&mut b, 9, 0xABCD), "removed");
        assert!(!opens(&mut b, 9, 0), "key 0 opens nothing");
        write(&mut b, 0, 77, 0);
        assert!(!opens(&mut b, 0, 77), "pid 0 is never a RAS");
        // The epoch is written with the key, and the key is unchanged by it.
        write(&mut b, 9, 0xABCD, 5);
        assert_eq!(verdict(&mut b, 9, 0xABCD, 4), (true, false), "older");
        assert_eq!(verdict(&mut b, 9, 0xABCD, 5), (true, true), "its epoch");
        assert_eq!(verdict(&mut b, 9, 0xABCD, 6), (true, true), "newer");
        assert!(!verdict(&mut b, 9, 0xABCC, 5).0, "wrong key, right epoch");
        write(&mut b, 9, 0xABCD, 0xFFFF);
        assert_eq!(verdict(&mut b, 9, 0xABCD, 1), (true, true), "past the wrap");
        write(&mut b, 9, 0xABCD, 1);
        assert_eq!(
            verdict(&mut b, 9, 0xABCD, 0xFFFF),
            (true, false),
            "before it"
        );
        assert_eq!(
            verdict(&mut b, 9, 0xABCD, 0),
            (true, false),
            "unpooled client"
        );
        write(&mut b, 9, 0xABCD, 0);
        assert_eq!(verdict(&mut b, 9, 0xABCD, 0xFFFF), (true, true), "unfenced");
        // Back to back lookups, one per cycle.
        write(&mut b, 10, 100, 3);
        write(&mut b, 11, 101, 0);
        let seq = [
            (10u16, 100u64, 3u16, (true, true)),
            (11, 101, 9, (true, true)),
            (10, 100, 2, (true, false)),
            (10, 101, 3, (false, true)),
            (11, 101, 0, (true, true)),
        ];
        for (i, (pid, key, epoch, want)) in seq.into_iter().enumerate() {
            b.uut.lk_pid.next = pid.to_bits();
            b.uut.lk_key.next = key.to_bits();
            b.uut.lk_epoch.next = epoch.to_bits();
            b.tick();
            b.settle();
            assert_eq!(b.uut.ok.val(), want.0, "back to back {i}");
            if want.0 {
                assert_eq!(b.uut.epoch_ok.val(), want.1, "back to back {i}: epoch");
            }
        }
        // A reset sweeps everything away.
        reset(&mut b);
        assert!(!opens(&mut b, 10, 100), "cleared by the reset sweep");
    }
}
