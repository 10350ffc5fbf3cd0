//! The key check: every received frame's key and epoch against the key table, looked up as its
//! header arrives and kept per ingest slot, so that Dispatch reads flip-flops (`ok` and
//! `epoch_ok`, the dispatched slot's) instead of the table's RAM output through a 64-bit and a
//! 16-bit compare.
//!
//! * The header beat (`hdr_in`, its slot `hdr_slot`, its pid, key and epoch fields as
//!   received) presents the frame's pid, key and epoch to the [`KeyTable`] in its cycle h; the
//!   table answers in h+1 and the answers are registered into the slot's `s_ok` and
//!   `s_epoch_ok`, readable from h+2. The earliest Dispatch of a frame is in h+3 (a one-beat
//!   frame: flushed in h+1, its slot full in h+2 and taken then), so the answers are always
//!   there first.
//! * The slot also keeps the pid, key and epoch it presented (`s_pid`, `s_key`, `s_epoch`). A
//!   KEY_WRITE (`wr`, registered in `kw_*`) re-decides, in the cycle after it, every slot
//!   whose pid it names, with the table's rule ([`KeyRule`]: `pid` inside the table and not 0,
//!   key not 0 and equal; the epoch not older than the written one): answers read from the
//!   table before the write are replaced, both halves, including the ones landing in that same
//!   cycle (the re-decision wins). `ready` is low in that cycle, so nothing is taken on an
//!   answer the write has not reached.
//! * `epoch_ok` is the verdict's second half: Dispatch reads it only where `ok` holds (a wrong
//!   key is Denied whatever its epoch), so for a refused key it may be anything.
//! * `ready` is also low during the table's zero sweep after reset (every answer then is a
//!   refusal, as the swept table would give).

use crate::fastpath::ingest::SLOTS;
use crate::fastpath::links::{HeaderBeatIn, KeyVerdict, KeyWriteIn};
use crate::key_rule::KeyRule;
use crate::key_table::KeyTable;
use crate::util::ByteSwap;
use clio_proto::consts::PID_BITS;
use clio_proto::header::field;
use rust_hdl::prelude::*;

// The pid, key and epoch fields are 2, 8 and 2 bytes, big endian, at bits 32, 384 and 464 of
// the header beat.
const _: () = assert!(
    crate::spec::bit_of(field::PID.start) == 32
        && crate::spec::bit_of(field::KEY.start) == 384
        && crate::spec::bit_of(field::EPOCH.start) == 464
        && field::PID.end - field::PID.start == 2
        && field::KEY.end - field::KEY.start == 8
        && field::EPOCH.end - field::EPOCH.start == 2
        && PID_BITS == 16
        && SLOTS == 4
);

/// The key check.
#[derive(LogicBlock, Default)]
pub struct KeyCheck {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: starts the table's zero sweep.
    pub reset: Signal<In, Bit>,
    /// A frame's header beat as it arrives (`Ingest::header`): its pid, key and epoch fields go to the slot's check.
    pub hdr: HeaderBeatIn,
    /// KEY_WRITE (`SlowPathTx::keys`): store `wr.key` and `wr.epoch` at `wr.pid` (the table's
    /// write port).
    pub wr: KeyWriteIn,
    /// The slot whose answers `ok` and `epoch_ok` give (the executor's).
    pub sel: Signal<In, Bits<2>>,
    /// The verdict for the frame in slot `sel` (`Executor::keys`, joined in the top).
    pub verdict: KeyVerdict,
    /// The table.
    store: KeyTable,
    /// The header's pid, key and epoch as numbers.
    pid_swap: ByteSwap<16>,
    key_swap: ByteSwap<64>,
    epoch_swap: ByteSwap<16>,
    /// A lookup is in the table (presented last cycle), for slot `q_slot`.
    q_valid: DFF<Bit>,
    q_slot: DFF<Bits<2>>,
    /// Per slot: the pid, key and epoch its frame presented, and the answers.
    s_pid: [DFF<Bits<16>>; SLOTS],
    s_key: [DFF<Bits<64>>; SLOTS],
    s_epoch: [DFF<Bits<16>>; SLOTS],
    s_ok: [DFF<Bit>; SLOTS],
    s_epoch_ok: [DFF<Bit>; SLOTS],
    /// The KEY_WRITE of last cycle, re-deciding the slots of its pid.
    kw_valid: DFF<Bit>,
    kw_pid: DFF<Bits<16>>,
    kw_key: DFF<Bits<64>>,
    kw_epoch: DFF<Bits<16>>,
    /// Per slot, the rule on the KEY_WRITE's pid, key and epoch (stored) and the slot's key
    /// and epoch (presented).
    kw_rule: [KeyRule; SLOTS],
}

impl Logic for KeyCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, q_valid, q_slot, kw_valid, kw_pid, kw_key, kw_epoch);
        for k in 0..4 {
            self.s_pid[k].clock.next = self.clock.val();
            self.s_pid[k].d.next = self.s_pid[k].q.val();
            self.s_key[k].clock.next = self.clock.val();
            self.s_key[k].d.next = self.s_key[k].q.val();
            self.s_epoch[k].clock.next = self.clock.val();
            self.s_epoch[k].d.next = self.s_epoch[k].q.val();
            self.s_ok[k].clock.next = self.clock.val();
            self.s_ok[k].d.next = self.s_ok[k].q.val();
            self.s_epoch_ok[k].clock.next = self.clock.val();
            self.s_epoch_ok[k].d.next = self.s_epoch_ok[k].q.val();
        }
        self.store.clock.next = self.clock.val();
        self.store.reset.next = self.reset.val();
        self.pid_swap.x.next = self.hdr.data.val().get_bits::<16>(32);
        self.key_swap.x.next = self.hdr.data.val().get_bits::<64>(384);
        self.epoch_swap.x.next = self.hdr.data.val().get_bits::<16>(464);
        self.store.lk_pid.next = self.pid_swap.y.val();
        self.store.lk_key.next = self.key_swap.y.val();
        self.store.lk_epoch.next = self.epoch_swap.y.val();
        self.store.wr_valid.next = self.wr.valid.val();
        self.store.wr_pid.next = self.wr.pid.val();
        self.store.wr_key.next = self.wr.key.val();
        self.store.wr_epoch.next = self.wr.epoch.val();
        self.q_valid.d.next = self.hdr.valid.val();
        self.q_slot.d.next = self.hdr.slot.val();
        self.kw_valid.d.next = self.wr.valid.val();
        self.kw_pid.d.next = self.wr.pid.val();
        self.kw_key.d.next = self.wr.key.val();
        self.kw_epoch.d.next = self.wr.epoch.val();
        for k in 0..4 {
            if self.hdr.valid.val() & (self.hdr.slot.val() == k.to_bits::<2>()) {
                self.s_pid[k].d.next = self.pid_swap.y.val();
                self.s_key[k].d.next = self.key_swap.y.val();
                self.s_epoch[k].d.next = self.epoch_swap.y.val();
            }
            if self.q_valid.q.val() & (self.q_slot.q.val() == k.to_bits::<2>()) {
                self.s_ok[k].d.next = self.store.ok.val();
                self.s_epoch_ok[k].d.next = self.store.epoch_ok.val();
            }
            self.kw_rule[k].pid.next = self.kw_pid.q.val();
            self.kw_rule[k].stored.next = self.kw_key.q.val();
            self.kw_rule[k].presented.next = self.s_key[k].q.val();
            self.kw_rule[k].stored_epoch.next = self.kw_epoch.q.val();
            self.kw_rule[k].presented_epoch.next = self.s_epoch[k].q.val();
            if self.kw_valid.q.val() & (self.s_pid[k].q.val() == self.kw_pid.q.val()) {
                self.s_ok[k].d.next = self.kw_rule[k].pid_ok.val() & self.kw_rule[k].key_ok.val();
                self.s_epoch_ok[k].d.next = self.kw_rule[k].epoch_ok.val();
            }
        }
        self.verdict.ok.next = false;
        self.verdict.epoch_ok.next = false;
        for k in 0..4 {
            if self.sel.val() == k.to_bits::<2>() {
                self.verdict.ok.next = self.s_ok[k].q.val();
                self.verdict.epoch_ok.next = self.s_epoch_ok[k].q.val();
            }
        }
        self.verdict.ready.next = self.store.ready.val() & !self.kw_valid.q.val();
        if self.reset.val() {
            self.q_valid.d.next = false;
            self.kw_valid.d.next = false;
        }
    }
}

crate::impl_clocked!(KeyCheck);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::key_table::SWEEP_CYCLES;
    use clio_proto::consts::KEY_TABLE_BITS;
    use clio_proto::epoch::older;
    use std::collections::HashMap;

    /// Present a header's pid, key and epoch fields as they arrive (big endian).
    fn header(b: &mut Bench<KeyCheck>, slot: usize, pid: u16, key: u64, epoch: u16) {
        let mut h = [0u8; 64];
        h[field::PID].copy_from_slice(&pid.to_be_bytes());
        h[field::KEY].copy_from_slice(&key.to_be_bytes());
        h[field::EPOCH].copy_from_slice(&epoch.to_be_bytes());
        b.uut.hdr.valid.next = true;
        b.uut.hdr.slot.next = (slot as u64).to_bits();
        b.uut.hdr.data.next = crate::util::bytes_to_bits::<512>(&h);
    }

    fn key_write(b: &mut Bench<KeyCheck>, pid: u16, key: u64, epoch: u16) {
        b.uut.wr.valid.next = true;
        b.uut.wr.pid.next = pid.to_bits();
        b.uut.wr.key.next = key.to_bits();
        b.uut.wr.epoch.next = epoch.to_bits();
    }

    /// A KEY_WRITE applied to the slots: `ready` is low for the cycle they are re-decided,
    /// high again the cycle after.
    fn apply_key_write(b: &mut Bench<KeyCheck>, pid: u16, key: u64, epoch: u16) {
        key_write(b, pid, key, epoch);
        b.tick();
        b.uut.wr.valid.next = false;
        b.settle();
        assert!(!b.uut.verdict.ready.val());
        b.tick();
        b.settle();
        assert!(b.uut.verdict.ready.val());
    }

    fn reset(b: &mut Bench<KeyCheck>) {
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        for _ in 0..SWEEP_CYCLES {
            b.tick();
        }
        b.settle();
        assert!(b.uut.verdict.ready.val());
    }

    /// `ok` and `epoch_ok` of a slot.
    fn answer(b: &mut Bench<KeyCheck>, slot: usize) -> (bool, bool) {
        b.uut.sel.next = (slot as u64).to_bits();
        b.settle();
        (b.uut.verdict.ok.val(), b.uut.verdict.epoch_ok.val())
    }

    fn ok_of(b: &mut Bench<KeyCheck>, slot: usize) -> bool {
        answer(b, slot).0
    }

    /// The table's rule (`docs/protocol.md` section 7) on the map of written keys and epochs:
    /// `None` for a refused key, else whether the epoch passes (`!epoch::older`).
    fn rule(m: &HashMap<u16, (u64, u16)>, pid: u16, key: u64, epoch: u16) -> Option<bool> {
        let &(k, e) = m.get(&pid)?;
        (pid < 1 << KEY_TABLE_BITS && pid != 0 && k != 0 && k == key).then(|| !older(e, epoch))
    }

    /// Random headers into random slots, one a cycle or with gaps, and KEY_WRITEs at random
    /// cycles, some naming the pid of a frame whose answer is in the table that cycle or the
    /// next (its lookup read the old key and epoch), among them writes that keep the key and
    /// move only the epoch: two cycles after its header, and whenever `ready` is high, every
    /// slot's answer is the rule applied to the keys and epochs written so far (`ok`, and
    /// where it holds `epoch_ok`). Epochs at the serial order's edges: 0 (unfenced), 1, 2,
    /// 32768 apart, and 65535 (the wrap to 1).
    #[test]
    fn answers_follow_the_latest_keys() {
        let mut b = Bench::new(KeyCheck::default());
        reset(&mut b);
        let mut m: HashMap<u16, (u64, u16)> = HashMap::new();
        let pids = [1u16, 2, 3, 0x0FFF, 0x1002, 0];
        let keys = [0u64, 0x11, 0x22, 0xDEAD_BEEF_0000_0001];
        let epochs = [0u16, 1, 2, 0x8000, 0x8001, 0xFFFF];
        let mut rng = crate::tb::Rng(0x2545_F491_4F6C_DD1D);
        let mut rnd = || rng.next();
        // What each slot presented, and the cycle its answer is due.
        let mut slot: [Option<(u16, u64, u16, u64)>; 4] = [None; 4];
        let (mut checked, mut opened, mut stale, mut raced, mut epoch_raced) = (0, 0, 0, 0, 0);
        for cycle in 0..4000u64 {
            let r = rnd();
            let r2 = rnd();
            b.uut.hdr.valid.next = false;
            b.uut.wr.valid.next = false;
            if r % 3 != 0 {
                let k = (r >> 4) as usize % 4;
                let pid = pids[(r >> 8) as usize % pids.len()];
                let key = keys[(r >> 12) as usize % keys.len()];
                let epoch = epochs[r2 as usize % epochs.len()];
                header(&mut b, k, pid, key, epoch);
                slot[k] = Some((pid, key, epoch, cycle + 2));
            }
            if r >> 20 & 7 == 0 {
                let pid = pids[(r >> 24) as usize % pids.len()];
                // Half the writes to a known RAS keep its key and move its epoch only.
                let key = match m.get(&pid) {
                    Some(&(k, _)) if r2 >> 8 & 1 == 0 => k,
                    _ => keys[(r >> 28) as usize % keys.len()],
                };
                let epoch = epochs[(r2 >> 16) as usize % epochs.len()];
                key_write(&mut b, pid, key, epoch);
                let before = m.get(&pid).copied();
                if pid < 1 << KEY_TABLE_BITS {
                    m.insert(pid, (key, epoch));
                }
                for &(p, k, e, due) in slot.iter().flatten() {
                    if p == pid && due > cycle {
                        raced += 1;
                        let same_key = before.is_some_and(|(bk, _)| bk == key);
                        let flips = before.is_some_and(|(_, be)| older(be, e) != older(epoch, e));
                        if same_key && key != 0 && key == k && flips {
                            epoch_raced += 1;
                        }
                    }
                }
            }
            b.tick();
            b.settle();
            if b.uut.verdict.ready.val() {
                for (k, e) in slot.iter().enumerate() {
                    if let Some((pid, key, epoch, due)) = *e {
                        if due <= cycle + 1 {
                            let want = rule(&m, pid, key, epoch);
                            let (ok, epoch_ok) = answer(&mut b, k);
                            assert_eq!(ok, want.is_some(), "cycle {cycle} slot {k}");
                            if let Some(fresh) = want {
                                assert_eq!(epoch_ok, fresh, "cycle {cycle} slot {k}: epoch");
                                opened += 1;
                                stale += !fresh as u32;
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(
            checked > 6000 && opened > 300 && stale > 50 && raced > 30 && epoch_raced > 3,
            "{checked} {opened} {stale} {raced} {epoch_raced}"
        );
    }

    /// A frame's answer is there two cycles after its header and not before: the slot still
    /// shows its previous frame's answer one cycle after.
    #[test]
    fn answer_two_cycles_after_the_header() {
        let mut b = Bench::new(KeyCheck::default());
        reset(&mut b);
        key_write(&mut b, 5, 0x77, 0);
        b.tick();
        b.uut.wr.valid.next = false;
        b.tick();
        header(&mut b, 2, 5, 0x77, 0);
        b.tick();
        b.uut.hdr.valid.next = false;
        b.settle();
        assert!(!ok_of(&mut b, 2), "one cycle after the header");
        b.tick();
        assert!(ok_of(&mut b, 2), "two cycles after");
        assert!(!ok_of(&mut b, 1), "another slot");
        // Fenced at epoch 3: the frame (epoch 0) is re-decided stale, the key still opens.
        apply_key_write(&mut b, 5, 0x77, 3);
        assert_eq!(answer(&mut b, 2), (true, false), "fenced");
        // Revoked: `ready` drops for the cycle the slots are re-decided.
        apply_key_write(&mut b, 5, 0, 3);
        assert!(!ok_of(&mut b, 2), "revoked");
    }
}
