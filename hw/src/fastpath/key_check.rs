//! The key check: every received frame's key against the key table, looked up as its header
//! arrives and kept per ingest slot, so that Dispatch reads a flip-flop (`ok`, the dispatched
//! slot's) instead of the table's RAM output through a 64-bit compare.
//!
//! * The header beat (`hdr_in`, its slot `hdr_slot`, its pid and key fields as received)
//!   presents the frame's pid and key to the [`KeyTable`] in its cycle h; the table answers in h+1 and the answer is
//!   registered into the slot's `s_ok`, readable from h+2. The earliest Dispatch of a frame is
//!   in h+3 (a one-beat frame: flushed in h+1, its slot full in h+2 and taken then), so the
//!   answer is always there first.
//! * The slot also keeps the pid and key it presented (`s_pid`, `s_key`). A KEY_WRITE
//!   (`wr_*`, registered in `kw_*`) re-decides, in the cycle after it, every slot whose pid it
//!   names, with the table's rule ([`KeyRule`]: `pid` inside the table and not 0, key not 0 and
//!   equal):
//!   answers read from the table before the write are replaced, including the one landing in
//!   that same cycle (the re-decision wins). `ready` is low in that cycle, so nothing is taken
//!   on an answer the write has not reached.
//! * `ready` is also low during the table's zero sweep after reset (every answer then is a
//!   refusal, as the swept table would give).

use crate::fastpath::ingest::SLOTS;
use crate::key_rule::KeyRule;
use crate::key_table::KeyTable;
use crate::util::ByteSwap;
use clio_proto::consts::PID_BITS;
use clio_proto::header::field;
use rust_hdl::prelude::*;

// The pid and key fields are 2 and 8 bytes, big endian.
const _: () = assert!(
    field::PID.end - field::PID.start == 2
        && field::KEY.end - field::KEY.start == 8
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
    /// A frame's header beat is in (its slot `hdr_slot`, its pid and key fields below).
    pub hdr_in: Signal<In, Bit>,
    /// The slot the frame goes to.
    pub hdr_slot: Signal<In, Bits<2>>,
    /// The header's pid field (`proto::header::field::PID`) as received: big endian, byte k
    /// of the field at bits 8k..8k+8.
    pub hdr_pid_field: Signal<In, Bits<16>>,
    /// The header's key field (`field::KEY`) as received.
    pub hdr_key_field: Signal<In, Bits<64>>,
    /// KEY_WRITE: store `wr_key` at `wr_pid` (the table's write port).
    pub wr_valid: Signal<In, Bit>,
    /// KEY_WRITE's pid.
    pub wr_pid: Signal<In, Bits<16>>,
    /// KEY_WRITE's key (0 removes the RAS).
    pub wr_key: Signal<In, Bits<64>>,
    /// The slot whose answer `ok` gives (the executor's).
    pub sel: Signal<In, Bits<2>>,
    /// The key of the frame in slot `sel` opens its pid's RAS.
    pub ok: Signal<Out, Bit>,
    /// Answers are current: the sweep is done and no KEY_WRITE is being applied to the slots.
    pub ready: Signal<Out, Bit>,
    /// The table.
    store: KeyTable,
    /// The header's pid and key as numbers.
    pid_swap: ByteSwap<16>,
    key_swap: ByteSwap<64>,
    /// A lookup is in the table (presented last cycle), for slot `q_slot`.
    q_valid: DFF<Bit>,
    q_slot: DFF<Bits<2>>,
    /// Per slot: the pid and key its frame presented, and the answer.
    s_pid: [DFF<Bits<16>>; SLOTS],
    s_key: [DFF<Bits<64>>; SLOTS],
    s_ok: [DFF<Bit>; SLOTS],
    /// The KEY_WRITE of last cycle, re-deciding the slots of its pid.
    kw_valid: DFF<Bit>,
    kw_pid: DFF<Bits<16>>,
    kw_key: DFF<Bits<64>>,
    /// Per slot, the rule on the KEY_WRITE's pid and key (stored) and the slot's key
    /// (presented).
    kw_rule: [KeyRule; SLOTS],
}

impl Logic for KeyCheck {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, q_valid, q_slot, kw_valid, kw_pid, kw_key);
        for k in 0..4 {
            self.s_pid[k].clock.next = self.clock.val();
            self.s_pid[k].d.next = self.s_pid[k].q.val();
            self.s_key[k].clock.next = self.clock.val();
            self.s_key[k].d.next = self.s_key[k].q.val();
            self.s_ok[k].clock.next = self.clock.val();
            self.s_ok[k].d.next = self.s_ok[k].q.val();
        }
        self.store.clock.next = self.clock.val();
        self.store.reset.next = self.reset.val();
        self.pid_swap.x.next = self.hdr_pid_field.val();
        self.key_swap.x.next = self.hdr_key_field.val();
        self.store.lk_pid.next = self.pid_swap.y.val();
        self.store.lk_key.next = self.key_swap.y.val();
        self.store.wr_valid.next = self.wr_valid.val();
        self.store.wr_pid.next = self.wr_pid.val();
        self.store.wr_key.next = self.wr_key.val();
        self.q_valid.d.next = self.hdr_in.val();
        self.q_slot.d.next = self.hdr_slot.val();
        self.kw_valid.d.next = self.wr_valid.val();
        self.kw_pid.d.next = self.wr_pid.val();
        self.kw_key.d.next = self.wr_key.val();
        for k in 0..4 {
            if self.hdr_in.val() & (self.hdr_slot.val() == k.to_bits::<2>()) {
                self.s_pid[k].d.next = self.pid_swap.y.val();
                self.s_key[k].d.next = self.key_swap.y.val();
            }
            if self.q_valid.q.val() & (self.q_slot.q.val() == k.to_bits::<2>()) {
                self.s_ok[k].d.next = self.store.ok.val();
            }
            self.kw_rule[k].pid.next = self.kw_pid.q.val();
            self.kw_rule[k].stored.next = self.kw_key.q.val();
            self.kw_rule[k].presented.next = self.s_key[k].q.val();
            if self.kw_valid.q.val() & (self.s_pid[k].q.val() == self.kw_pid.q.val()) {
                self.s_ok[k].d.next = self.kw_rule[k].pid_ok.val() & self.kw_rule[k].key_ok.val();
            }
        }
        self.ok.next = false;
        for k in 0..4 {
            if self.sel.val() == k.to_bits::<2>() {
                self.ok.next = self.s_ok[k].q.val();
            }
        }
        self.ready.next = self.store.ready.val() & !self.kw_valid.q.val();
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
    use std::collections::HashMap;

    /// Present a header's pid and key fields as they arrive (big endian).
    fn header(b: &mut Bench<KeyCheck>, slot: usize, pid: u16, key: u64) {
        b.uut.hdr_in.next = true;
        b.uut.hdr_slot.next = (slot as u64).to_bits();
        b.uut.hdr_pid_field.next = crate::util::bytes_to_bits::<16>(&pid.to_be_bytes());
        b.uut.hdr_key_field.next = crate::util::bytes_to_bits::<64>(&key.to_be_bytes());
    }

    fn reset(b: &mut Bench<KeyCheck>) {
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        for _ in 0..SWEEP_CYCLES {
            b.tick();
        }
        b.settle();
        assert!(b.uut.ready.val());
    }

    fn ok_of(b: &mut Bench<KeyCheck>, slot: usize) -> bool {
        b.uut.sel.next = (slot as u64).to_bits();
        b.settle();
        b.uut.ok.val()
    }

    /// The table's rule (`docs/protocol.md` section 7) on the map of written keys.
    fn rule(m: &HashMap<u16, u64>, pid: u16, key: u64) -> bool {
        pid < 1 << KEY_TABLE_BITS && pid != 0 && m.get(&pid).is_some_and(|&k| k != 0 && k == key)
    }

    /// Random headers into random slots, one a cycle or with gaps, and KEY_WRITEs at random
    /// cycles, some naming the pid of a frame whose answer is in the table that cycle or the
    /// next (its lookup read the old key): two cycles after its header, and whenever `ready`
    /// is high, every slot's answer is the rule applied to the keys written so far.
    #[test]
    fn answers_follow_the_latest_keys() {
        let mut b = Bench::new(KeyCheck::default());
        reset(&mut b);
        let mut m: HashMap<u16, u64> = HashMap::new();
        let pids = [1u16, 2, 3, 0x0FFF, 0x1002, 0];
        let keys = [0u64, 0x11, 0x22, 0xDEAD_BEEF_0000_0001];
        let mut rng = crate::tb::Rng(0x2545_F491_4F6C_DD1D);
        let mut rnd = || rng.next();
        // What each slot presented, and the cycle its answer is due.
        let mut slot: [Option<(u16, u64, u64)>; 4] = [None; 4];
        let (mut checked, mut opened, mut raced) = (0, 0, 0);
        for cycle in 0..3000u64 {
            let r = rnd();
            b.uut.hdr_in.next = false;
            b.uut.wr_valid.next = false;
            if r % 3 != 0 {
                let k = (r >> 4) as usize % 4;
                let pid = pids[(r >> 8) as usize % pids.len()];
                let key = keys[(r >> 12) as usize % keys.len()];
                header(&mut b, k, pid, key);
                slot[k] = Some((pid, key, cycle + 2));
            }
            if r >> 20 & 7 == 0 {
                let pid = pids[(r >> 24) as usize % pids.len()];
                let key = keys[(r >> 28) as usize % keys.len()];
                b.uut.wr_valid.next = true;
                b.uut.wr_pid.next = pid.to_bits();
                b.uut.wr_key.next = key.to_bits();
                if pid < 1 << KEY_TABLE_BITS {
                    m.insert(pid, key);
                }
                if slot
                    .iter()
                    .flatten()
                    .any(|&(p, _, due)| p == pid && due > cycle)
                {
                    raced += 1;
                }
            }
            b.tick();
            b.settle();
            if b.uut.ready.val() {
                for (k, e) in slot.iter().enumerate() {
                    if let Some((pid, key, due)) = *e {
                        if due <= cycle + 1 {
                            let want = rule(&m, pid, key);
                            assert_eq!(ok_of(&mut b, k), want, "cycle {cycle} slot {k}");
                            checked += 1;
                            opened += want as u32;
                        }
                    }
                }
            }
        }
        assert!(
            checked > 5000 && opened > 200 && raced > 30,
            "{checked} {opened} {raced}"
        );
    }

    /// A frame's answer is there two cycles after its header and not before: the slot still
    /// shows its previous frame's answer one cycle after.
    #[test]
    fn answer_two_cycles_after_the_header() {
        let mut b = Bench::new(KeyCheck::default());
        reset(&mut b);
        b.uut.wr_valid.next = true;
        b.uut.wr_pid.next = 5u16.to_bits();
        b.uut.wr_key.next = 0x77u64.to_bits();
        b.tick();
        b.uut.wr_valid.next = false;
        b.tick();
        header(&mut b, 2, 5, 0x77);
        b.tick();
        b.uut.hdr_in.next = false;
        b.settle();
        assert!(!ok_of(&mut b, 2), "one cycle after the header");
        b.tick();
        assert!(ok_of(&mut b, 2), "two cycles after");
        assert!(!ok_of(&mut b, 1), "another slot");
        // Revoked: `ready` drops for the cycle the slots are re-decided.
        b.uut.wr_valid.next = true;
        b.uut.wr_key.next = 0u64.to_bits();
        b.tick();
        b.uut.wr_valid.next = false;
        b.settle();
        assert!(!b.uut.ready.val());
        b.tick();
        b.settle();
        assert!(b.uut.ready.val());
        assert!(!ok_of(&mut b, 2), "revoked");
    }
}
