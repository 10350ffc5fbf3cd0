//! Checking what concurrent clients saw.
//!
//! * Values are self-describing ([`make_value`], [`parse_value`]): writer, sequence number,
//!   length, a CRC-32C and a body pattern derived from (writer, seq). A reader can tell a
//!   whole value from a torn one (parts of two writes) or garbage, and which write it was.
//! * [`check_history`]: single-key linearizability of recorded get/put/delete histories, key
//!   by key, by a Wing & Gong search with memoisation of (linearised set, state) as in
//!   Lowe's and Knossos' checkers. An operation whose outcome is unknown (it failed or timed
//!   out: it may or may not have taken effect) may be linearised anywhere after its start or
//!   not at all. Histories are bounded ([`MAX_OPS_PER_KEY`], [`MAX_STATES`]).

use clio_proto::checksum::crc32c;
use std::collections::{BTreeMap, HashSet};

/// Which write a value came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueId {
    /// Writer (thread/CN) id.
    pub writer: u32,
    /// Its sequence number.
    pub seq: u64,
}

/// Bytes of a value before its body: magic, writer, seq, length, CRC.
pub const VALUE_HEADER: usize = 4 + 4 + 8 + 4 + 4;
const VALUE_MAGIC: u32 = 0x5641_4C31; // "VAL1"

fn body_byte(id: ValueId, i: usize) -> u8 {
    let x = (id.seq ^ ((id.writer as u64) << 40))
        .wrapping_add(i as u64)
        .wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (x >> 56) as u8
}

/// A value of `len` bytes (at least [`VALUE_HEADER`]) that identifies write `id`.
pub fn make_value(id: ValueId, len: usize) -> Vec<u8> {
    let len = len.max(VALUE_HEADER);
    let mut v = Vec::with_capacity(len);
    v.extend_from_slice(&VALUE_MAGIC.to_le_bytes());
    v.extend_from_slice(&id.writer.to_le_bytes());
    v.extend_from_slice(&id.seq.to_le_bytes());
    v.extend_from_slice(&(len as u32).to_le_bytes());
    v.extend_from_slice(&[0; 4]);
    for i in VALUE_HEADER..len {
        v.push(body_byte(id, i));
    }
    let c = crc32c(&v);
    v[20..24].copy_from_slice(&c.to_le_bytes());
    v
}

/// Why a value is not a whole value from [`make_value`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TornValue {
    /// Too short to hold the header.
    #[error("value of {0} bytes is shorter than its header")]
    Short(usize),
    /// The magic is wrong: not one of ours at all.
    #[error("not a recorded value (bad magic)")]
    Magic,
    /// The length field disagrees with the length.
    #[error("length field {field} but {actual} bytes")]
    Length {
        /// Field.
        field: usize,
        /// Bytes received.
        actual: usize,
    },
    /// The checksum fails: parts of different writes, or damaged.
    #[error("checksum mismatch (torn or damaged value of {0:?})")]
    Checksum(ValueId),
    /// The body is not the pattern of the write the header names.
    #[error("body differs from the pattern of {0:?} at byte {1}")]
    Pattern(ValueId, usize),
}

/// Check that `v` is one whole value and say which write it came from.
pub fn parse_value(v: &[u8]) -> Result<ValueId, TornValue> {
    if v.len() < VALUE_HEADER {
        return Err(TornValue::Short(v.len()));
    }
    let u32_at = |o: usize| u32::from_le_bytes([v[o], v[o + 1], v[o + 2], v[o + 3]]);
    if u32_at(0) != VALUE_MAGIC {
        return Err(TornValue::Magic);
    }
    let mut seq = [0u8; 8];
    seq.copy_from_slice(&v[8..16]);
    let id = ValueId {
        writer: u32_at(4),
        seq: u64::from_le_bytes(seq),
    };
    let field = u32_at(16) as usize;
    if field != v.len() {
        return Err(TornValue::Length {
            field,
            actual: v.len(),
        });
    }
    let c = clio_proto::checksum::crc32c_append(crc32c(&v[..20]), &[0; 4]);
    if clio_proto::checksum::crc32c_append(c, &v[VALUE_HEADER..]) != u32_at(20) {
        return Err(TornValue::Checksum(id));
    }
    if let Some(i) = (VALUE_HEADER..v.len()).find(|&i| v[i] != body_byte(id, i)) {
        return Err(TornValue::Pattern(id, i));
    }
    Ok(id)
}

/// What an operation did and (for a get) saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// A get that returned the value of this write, or nothing.
    Get(Option<ValueId>),
    /// A put of this write's value.
    Put(ValueId),
    /// A delete.
    Delete,
}

/// One recorded operation on one key. Times are nanoseconds on one clock shared by all
/// clients of the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Op {
    /// Which key (any label).
    pub key: u64,
    /// What it did.
    pub kind: OpKind,
    /// Time just before the call.
    pub invoke: u64,
    /// Time just after it returned successfully; `None` if it failed (outcome unknown).
    pub complete: Option<u64>,
}

/// Longest per-key history the checker accepts.
pub const MAX_OPS_PER_KEY: usize = 4096;
/// Most search states the checker visits per key before giving up.
pub const MAX_STATES: usize = 2_000_000;

/// Why a history is not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HistoryError {
    /// No linearisation exists for this key.
    #[error("key {key}: not linearizable ({ops} operations); e.g. {witness}")]
    NotLinearizable {
        /// The key.
        key: u64,
        /// Its operation count.
        ops: usize,
        /// An operation no linearisation could place next, from the deepest point reached.
        witness: String,
    },
    /// The history is too long or the search too large to decide.
    #[error("key {key}: undecided ({what} exceeded)")]
    TooLarge {
        /// The key.
        key: u64,
        /// What was exceeded.
        what: &'static str,
    },
    /// A get completed before it was invoked, or similar nonsense.
    #[error("operation ends before it starts: {0}")]
    BadTimes(String),
}

/// Check every key's history; keys start with no value.
pub fn check_history(ops: &[Op]) -> Result<(), HistoryError> {
    let mut by_key: BTreeMap<u64, Vec<&Op>> = BTreeMap::new();
    for o in ops {
        if let Some(c) = o.complete {
            if c < o.invoke {
                return Err(HistoryError::BadTimes(format!("{o:?}")));
            }
        }
        by_key.entry(o.key).or_default().push(o);
    }
    for (key, v) in by_key {
        check_key(key, &v)?;
    }
    Ok(())
}

type State = Option<ValueId>;

fn apply(kind: OpKind, s: State) -> Option<State> {
    match kind {
        OpKind::Get(seen) => (seen == s).then_some(s),
        OpKind::Put(v) => Some(Some(v)),
        OpKind::Delete => Some(None),
    }
}

fn check_key(key: u64, ops: &[&Op]) -> Result<(), HistoryError> {
    // Gets whose outcome is unknown say nothing: drop them.
    let mut ops: Vec<&Op> = ops
        .iter()
        .copied()
        .filter(|o| o.complete.is_some() || !matches!(o.kind, OpKind::Get(_)))
        .collect();
    if ops.len() > MAX_OPS_PER_KEY {
        return Err(HistoryError::TooLarge {
            key,
            what: "operations per key",
        });
    }
    ops.sort_by_key(|o| o.invoke);
    let n = ops.len();
    let words = n.div_ceil(64).max(1);
    let end = |o: &Op| o.complete.unwrap_or(u64::MAX);
    let required = ops.iter().filter(|o| o.complete.is_some()).count();
    // Depth-first search over (done set, state), memoised.
    let mut seen: HashSet<(Vec<u64>, State)> = HashSet::new();
    let mut stack: Vec<(Vec<u64>, State, usize)> = vec![(vec![0; words], None, 0)];
    let mut deepest = (0usize, String::new());
    while let Some((done, state, count)) = stack.pop() {
        if count == required {
            return Ok(());
        }
        if !seen.insert((done.clone(), state)) {
            continue;
        }
        if seen.len() > MAX_STATES {
            return Err(HistoryError::TooLarge {
                key,
                what: "search states",
            });
        }
        // An operation may go next if it started before every pending operation ended.
        let horizon = ops
            .iter()
            .enumerate()
            .filter(|(i, _)| done[i / 64] >> (i % 64) & 1 == 0)
            .map(|(_, o)| end(o))
            .min()
            .unwrap_or(u64::MAX);
        let mut progressed = false;
        for (i, o) in ops.iter().enumerate() {
            if o.invoke > horizon {
                break; // sorted by invoke
            }
            if done[i / 64] >> (i % 64) & 1 == 1 {
                continue;
            }
            let Some(next) = apply(o.kind, state) else {
                continue;
            };
            let mut d = done.clone();
            d[i / 64] |= 1 << (i % 64);
            let c = count + usize::from(o.complete.is_some());
            stack.push((d, next, c));
            progressed = true;
        }
        if !progressed && count >= deepest.0 {
            let blocked = ops
                .iter()
                .enumerate()
                .find(|(i, o)| done[i / 64] >> (i % 64) & 1 == 0 && end(o) == horizon)
                .map(|(_, o)| format!("{o:?} with the key holding {state:?}"))
                .unwrap_or_default();
            deepest = (count, blocked);
        }
    }
    Err(HistoryError::NotLinearizable {
        key,
        ops: n,
        witness: deepest.1,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(w: u32, s: u64) -> ValueId {
        ValueId { writer: w, seq: s }
    }
    fn op(key: u64, kind: OpKind, a: u64, b: u64) -> Op {
        Op {
            key,
            kind,
            invoke: a,
            complete: Some(b),
        }
    }

    #[test]
    fn values_identify_their_write_and_torn_ones_are_caught() {
        let a = make_value(id(1, 5), 1024);
        let b = make_value(id(2, 9), 1024);
        assert_eq!(parse_value(&a), Ok(id(1, 5)));
        assert_eq!(parse_value(&b), Ok(id(2, 9)));
        // Half of one, half of the other (a torn read of a 2-packet write).
        let mut torn = a[..512].to_vec();
        torn.extend_from_slice(&b[512..]);
        assert!(matches!(parse_value(&torn), Err(TornValue::Checksum(_))));
        assert!(matches!(
            parse_value(&a[..1000]),
            Err(TornValue::Length { .. })
        ));
        assert!(matches!(parse_value(&a[..10]), Err(TornValue::Short(10))));
        assert_eq!(parse_value(&[0u8; 64]), Err(TornValue::Magic));
        let mut flipped = a.clone();
        flipped[700] ^= 1;
        assert!(parse_value(&flipped).is_err());
        assert_eq!(make_value(id(0, 0), 3).len(), VALUE_HEADER);
    }

    #[test]
    fn accepts_linearizable_histories() {
        // Sequential.
        let h = vec![
            op(1, OpKind::Get(None), 0, 1),
            op(1, OpKind::Put(id(1, 1)), 2, 3),
            op(1, OpKind::Get(Some(id(1, 1))), 4, 5),
            op(1, OpKind::Delete, 6, 7),
            op(1, OpKind::Get(None), 8, 9),
        ];
        check_history(&h).unwrap();
        // Concurrent put and get: the get may see either.
        for seen in [None, Some(id(1, 1))] {
            let h = vec![
                op(1, OpKind::Put(id(1, 1)), 0, 10),
                op(1, OpKind::Get(seen), 2, 5),
            ];
            check_history(&h).unwrap();
        }
        // A failed put may or may not have happened.
        let mut h = vec![
            Op {
                key: 2,
                kind: OpKind::Put(id(3, 1)),
                invoke: 0,
                complete: None,
            },
            op(2, OpKind::Get(Some(id(3, 1))), 5, 6),
            op(2, OpKind::Get(Some(id(3, 1))), 7, 8),
        ];
        check_history(&h).unwrap();
        h[1].kind = OpKind::Get(None);
        check_history(&h).unwrap();
    }

    #[test]
    fn rejects_non_linearizable_histories() {
        // A stale read after a completed write.
        let h = vec![
            op(1, OpKind::Put(id(1, 1)), 0, 1),
            op(1, OpKind::Put(id(1, 2)), 2, 3),
            op(1, OpKind::Get(Some(id(1, 1))), 4, 5),
        ];
        assert!(matches!(
            check_history(&h),
            Err(HistoryError::NotLinearizable { key: 1, .. })
        ));
        // Two readers see two concurrent writes in opposite orders (each read after both
        // writes completed would pin one order; here: new-old after both ended).
        let h = vec![
            op(7, OpKind::Put(id(1, 1)), 0, 10),
            op(7, OpKind::Put(id(2, 1)), 0, 10),
            op(7, OpKind::Get(Some(id(1, 1))), 11, 12),
            op(7, OpKind::Get(Some(id(2, 1))), 13, 14),
            op(7, OpKind::Get(Some(id(1, 1))), 15, 16),
        ];
        assert!(check_history(&h).is_err());
        // A value nobody wrote.
        let h = vec![op(3, OpKind::Get(Some(id(9, 9))), 0, 1)];
        assert!(check_history(&h).is_err());
        // A read of a deleted key's old value.
        let h = vec![
            op(4, OpKind::Put(id(1, 1)), 0, 1),
            op(4, OpKind::Delete, 2, 3),
            op(4, OpKind::Get(Some(id(1, 1))), 4, 5),
        ];
        assert!(check_history(&h).is_err());
        // Keys are independent: a fine key does not hide a broken one.
        let mut h2 = h.clone();
        h2.push(op(5, OpKind::Get(None), 0, 1));
        assert!(check_history(&h2).is_err());
        // Ends before it starts.
        let h = vec![op(1, OpKind::Get(None), 5, 1)];
        assert!(matches!(check_history(&h), Err(HistoryError::BadTimes(_))));
    }
}
