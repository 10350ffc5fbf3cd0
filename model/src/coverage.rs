//! How often each rule of the spec (`clio_proto::rules::Rule`) decided an answer of the model.
//!
//! Each unit of the model that applies a rule counts it where the rule makes its decision (a
//! refused request, a FetchAdd whose carry crosses bit 32, a ring lookup that another RAS's
//! entry would have matched without the pid), and `CBoard::coverage` (clio-sim)
//! adds the units' counts. The conformance suite replays streams through the model and fails
//! for a rule they never exercised (`rules_exercised_by_the_streams`), and `make cosim` prints
//! the table of its long run.

use clio_proto::rules::Rule;
use std::fmt::Write as _;

/// Counts per rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Coverage {
    counts: [u64; Rule::ALL.len()],
}

impl Default for Coverage {
    fn default() -> Self {
        Coverage {
            counts: [0; Rule::ALL.len()],
        }
    }
}

impl Coverage {
    /// `rule` decided an answer once more.
    pub fn hit(&mut self, rule: Rule) {
        self.counts[rule as usize] += 1;
    }

    /// Count `rule` when `cond` holds (the condition is the rule's corner).
    pub fn hit_if(&mut self, cond: bool, rule: Rule) {
        if cond {
            self.hit(rule);
        }
    }

    /// How often `rule` decided an answer.
    pub fn count(&self, rule: Rule) -> u64 {
        self.counts[rule as usize]
    }

    /// Add another unit's (or run's) counts.
    pub fn add(&mut self, other: &Coverage) {
        for (a, b) in self.counts.iter_mut().zip(other.counts) {
            *a += b;
        }
    }

    /// The rules never exercised.
    pub fn unexercised(&self) -> Vec<Rule> {
        Rule::ALL
            .iter()
            .copied()
            .filter(|&r| self.count(r) == 0)
            .collect()
    }

    /// One line per rule: its count, name and statement.
    pub fn table(&self) -> String {
        let mut s = String::new();
        for &r in Rule::ALL {
            let _ = writeln!(
                s,
                "{:>9}  {:<30} {}",
                self.count(r),
                r.name(),
                r.statement()
            );
        }
        s
    }
}

/// The board's own rule counts and the little history some rules need to tell that they
/// decided (the last write, whether a write came since the last fence, the pids torn down).
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    /// The counts.
    pub cov: Coverage,
    /// The last successful write: (pid, first byte, end).
    last_write: Option<(u16, u64, u64)>,
    last_read: Option<(u16, u64, u64)>,
    writes_since_fence: bool,
    torn_down: std::collections::HashSet<u16>,
}

impl Tracker {
    /// A write of `[va, va + len)` by `pid` succeeded.
    pub fn write(&mut self, pid: u16, va: u64, len: u64) {
        let end = va.saturating_add(len);
        let overlaps = self
            .last_read
            .is_some_and(|(p, a, b)| p == pid && a < end && va < b);
        self.cov.hit_if(overlaps, Rule::WriteAfterRead);
        self.last_write = Some((pid, va, end));
        self.writes_since_fence = true;
    }

    /// A read of `[va, va + len)` by `pid` was answered; `page` is the page size.
    pub fn read(&mut self, pid: u16, va: u64, len: u64, page: u64) {
        let end = va.saturating_add(len);
        let overlaps = self
            .last_write
            .is_some_and(|(p, a, b)| p == pid && a < end && va < b);
        self.cov.hit_if(overlaps, Rule::ReadAfterWrite);
        self.last_read = Some((pid, va, end));
        self.cov.hit_if(va % page + len > page, Rule::PageEnd);
    }

    /// A fence was answered.
    pub fn fence(&mut self) {
        self.cov.hit_if(self.writes_since_fence, Rule::FenceWaits);
        self.writes_since_fence = false;
    }

    /// An atomic `op` found `old` (operand `arg0`) and stored `new` (`None`: nothing).
    pub fn atomic(&mut self, op: clio_proto::Opcode, old: u64, arg0: u64, new: Option<u64>) {
        use clio_proto::Opcode;
        let carry = (old & 0xFFFF_FFFF) + (arg0 & 0xFFFF_FFFF) > 0xFFFF_FFFF;
        match op {
            Opcode::FetchAdd => self.cov.hit_if(carry, Rule::FetchAddWide),
            Opcode::CompareAndSwap => self.cov.hit_if(new.is_none(), Rule::CasOnEqual),
            Opcode::TestAndSet => self.cov.hit_if(old == 0, Rule::TasSets),
            Opcode::Unlock => self.cov.hit_if(old != 0, Rule::UnlockClears),
            _ => {}
        }
    }

    /// A Clio-KV request was refused for its format.
    pub fn kv_format(&mut self, e: &clio_proto::kv::KvFormatError) {
        use clio_proto::kv::{KvFormatError, MAX_KEY};
        match e {
            KvFormatError::KeyLength(0) => self.cov.hit(Rule::KvKeyNotEmpty),
            KvFormatError::KeyLength(n) if *n > MAX_KEY => self.cov.hit(Rule::KvKeyBound),
            KvFormatError::Framing(_) => self.cov.hit(Rule::KvBodyLength),
            _ => {}
        }
    }

    /// The slow path wrote `pid`'s key (0: removed at teardown).
    pub fn key_write(&mut self, pid: u16, key: u64) {
        self.cov.hit(Rule::KeyWrites);
        if key == 0 {
            self.torn_down.insert(pid);
        } else if self.torn_down.remove(&pid) {
            self.cov.hit(Rule::PidReuseForgets);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_and_report_the_rules_never_hit() {
        let mut a = Coverage::default();
        a.hit(Rule::CrcChecked);
        a.hit_if(false, Rule::KeyChecked);
        let mut b = Coverage::default();
        b.hit(Rule::CrcChecked);
        b.hit(Rule::KvStoreFull);
        a.add(&b);
        assert_eq!(a.count(Rule::CrcChecked), 2);
        assert_eq!(a.count(Rule::KvStoreFull), 1);
        assert!(a.unexercised().contains(&Rule::KeyChecked));
        assert!(!a.unexercised().contains(&Rule::CrcChecked));
        assert_eq!(a.table().lines().count(), Rule::ALL.len());
        assert!(a.table().contains("integrity.crc"));
    }
}
