//! Key table: one 64-bit secret per remote address space, indexed by PID, programmed by the
//! slow path (`KEY_WRITE`), checked for every request before anything else executes.
//!
//! The model of `hw/src/key_table.rs`: 4096 entries (8 BRAM36 on the board), all empty (0) at
//! reset. A request passes when its opcode needs no key (Register only) or when its PID is
//! inside the table, the entry is not empty and equals the key the request carries.

use clio_proto::consts::KEY_TABLE_ENTRIES;
use clio_proto::Header;

/// The key table.
#[derive(Debug, Clone)]
pub struct KeyTable {
    keys: Vec<u64>,
    /// Requests refused.
    pub denied: u64,
}

impl Default for KeyTable {
    fn default() -> Self {
        KeyTable {
            keys: vec![0; KEY_TABLE_ENTRIES],
            denied: 0,
        }
    }
}

impl KeyTable {
    /// Program an entry (key 0 removes the RAS). False for a PID outside the table.
    pub fn write(&mut self, pid: u16, key: u64) -> bool {
        match self.keys.get_mut(pid as usize) {
            Some(k) if pid != 0 => {
                *k = key;
                true
            }
            _ => false,
        }
    }

    /// The key of a PID (0: none).
    pub fn get(&self, pid: u16) -> u64 {
        self.keys.get(pid as usize).copied().unwrap_or(0)
    }

    /// Whether the request may proceed; counts refusals.
    pub fn admit(&mut self, h: &Header) -> bool {
        if !h.opcode.needs_key() {
            return true;
        }
        let k = self.get(h.pid);
        let ok = k != 0 && k == h.key;
        if !ok {
            self.denied += 1;
        }
        ok
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
        assert!(!t.admit(&req(5, 0)), "empty entry: even key 0 is refused");
        assert!(t.write(5, 0xABCD));
        assert!(t.admit(&req(5, 0xABCD)));
        assert!(!t.admit(&req(5, 0xABCE)));
        assert!(!t.admit(&req(6, 0xABCD)), "another pid");
        assert!(
            !t.admit(&req(5 + KEY_TABLE_ENTRIES as u16, 0xABCD)),
            "aliasing pid"
        );
        assert!(!t.write(KEY_TABLE_ENTRIES as u16, 1) && !t.write(0, 1));
        assert!(t.admit(&Header::request(Opcode::Register, 0, 1, 0)));
        assert!(t.write(5, 0));
        assert!(!t.admit(&req(5, 0xABCD)), "removed");
        assert_eq!(t.denied, 5);
    }
}
