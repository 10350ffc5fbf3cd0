//! Key table: one 64-bit secret and one 16-bit epoch per remote address space, indexed by
//! PID, programmed by the slow path (`KEY_WRITE`), checked for every request before anything
//! else executes.
//!
//! The model of `hw/src/key_table.rs`: 4096 entries (9 BRAM36 on the board), all empty (0) at
//! reset. A request passes when its opcode needs no key (Register only) or when its PID is
//! inside the table, the entry is not empty, equals the key the request carries, and the
//! request's epoch is not older than the entry's (`clio_proto::epoch::older`). A wrong key is
//! [`Verdict::Denied`]; the right key with an older epoch is [`Verdict::Stale`]. Both count
//! in `denied` (the fast path's one refusal counter).

use clio_proto::consts::KEY_TABLE_ENTRIES;
use clio_proto::{epoch, Header};

/// The key check's verdict on a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// The request may proceed.
    Admit,
    /// Wrong key, no such RAS or a pid outside the table.
    Denied,
    /// The right key with an epoch older than the RAS's.
    Stale,
}

/// One entry: the RAS's key (0: none) and epoch (0: unfenced).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Entry {
    /// The secret.
    pub key: u64,
    /// The epoch.
    pub epoch: u16,
}

/// The key table.
#[derive(Debug, Clone)]
pub struct KeyTable {
    entries: Vec<Entry>,
    /// Requests refused (Denied or Stale).
    pub denied: u64,
}

impl Default for KeyTable {
    fn default() -> Self {
        KeyTable {
            entries: vec![Entry::default(); KEY_TABLE_ENTRIES],
            denied: 0,
        }
    }
}

impl KeyTable {
    /// Program an entry (key 0 removes the RAS). False for a PID outside the table.
    pub fn write(&mut self, pid: u16, key: u64, epoch: u16) -> bool {
        match self.entries.get_mut(pid as usize) {
            Some(e) if pid != 0 => {
                *e = Entry { key, epoch };
                true
            }
            _ => false,
        }
    }

    /// The entry of a PID (key 0: none).
    pub fn get(&self, pid: u16) -> Entry {
        self.entries.get(pid as usize).copied().unwrap_or_default()
    }

    /// The verdict on a request; counts refusals.
    pub fn admit(&mut self, h: &Header) -> Verdict {
        if !h.opcode.needs_key() {
            return Verdict::Admit;
        }
        let e = self.get(h.pid);
        let v = if e.key == 0 || e.key != h.key {
            Verdict::Denied
        } else if epoch::older(e.epoch, h.epoch) {
            Verdict::Stale
        } else {
            Verdict::Admit
        };
        if v != Verdict::Admit {
            self.denied += 1;
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clio_proto::Opcode;

    #[test]
    fn admits_only_the_right_key() {
        let mut t = KeyTable::default();
        let req = |pid, key| Header::request(Opcode::Read, pid, 1, 0).with_credentials(key, 1);
        let ok = |t: &mut KeyTable, h| t.admit(&h) == Verdict::Admit;
        assert!(!ok(&mut t, req(5, 0)), "empty entry: even key 0 is refused");
        assert!(t.write(5, 0xABCD, 0));
        assert!(ok(&mut t, req(5, 0xABCD)));
        assert!(!ok(&mut t, req(5, 0xABCE)));
        assert!(!ok(&mut t, req(6, 0xABCD)), "another pid");
        assert!(
            !ok(&mut t, req(5 + KEY_TABLE_ENTRIES as u16, 0xABCD)),
            "aliasing pid"
        );
        assert!(!t.write(KEY_TABLE_ENTRIES as u16, 1, 0) && !t.write(0, 1, 0));
        assert!(ok(&mut t, Header::request(Opcode::Register, 0, 1, 0)));
        assert!(t.write(5, 0, 0));
        assert!(!ok(&mut t, req(5, 0xABCD)), "removed");
        assert_eq!(t.denied, 5);
    }

    #[test]
    fn an_older_epoch_is_stale_and_a_wrong_key_is_denied_first() {
        let mut t = KeyTable::default();
        let req = |key, e| {
            Header::request(Opcode::Write, 7, 1, 0)
                .with_credentials(key, 1)
                .with_epoch(e)
        };
        assert!(t.write(7, 0x55, 0));
        assert_eq!(t.admit(&req(0x55, 3)), Verdict::Admit, "unfenced");
        assert!(t.write(7, 0x55, 4));
        assert_eq!(t.admit(&req(0x55, 3)), Verdict::Stale);
        assert_eq!(t.admit(&req(0x55, 0)), Verdict::Stale, "outside the pool");
        assert_eq!(t.admit(&req(0x55, 4)), Verdict::Admit);
        assert_eq!(t.admit(&req(0x55, 5)), Verdict::Admit, "a newer view");
        assert_eq!(t.admit(&req(0x56, 3)), Verdict::Denied);
        assert_eq!(t.denied, 3);
    }
}
