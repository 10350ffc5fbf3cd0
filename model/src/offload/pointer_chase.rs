//! The pointer-chasing unit (`Opcode::PointerChase`, `proto::offload::chase`): follow next
//! pointers from a start node, comparing the key at each, and answer with the value of the
//! first match, a not-found at a null pointer, or the next node at the hop bound.

use super::{OffloadAnswer, OffloadMemory};
use clio_proto::offload::{chase, ChaseLayout};
use clio_proto::Status;

/// Serve one chase: `start` node, `key`, `layout` (checked here: a request is hostile until
/// checked), `value_len` bytes of value to return.
pub fn chase(
    mem: &mut impl OffloadMemory,
    start: u64,
    key: u64,
    layout: ChaseLayout,
    value_len: u32,
) -> Result<OffloadAnswer, Status> {
    if !layout.is_valid() || value_len == 0 || value_len > chase::MAX_VALUE || start == 0 {
        return Err(Status::BadRequest);
    }
    let at = |node: u64, off: u16| node.checked_add(off as u64).ok_or(Status::Unmapped);
    let mut node = start;
    for hop in 1..=layout.max_hops as u64 {
        if !node.is_multiple_of(8) {
            return Err(Status::BadRequest); // nodes (and so their words) are aligned
        }
        if mem.read_word(at(node, layout.key_offset)?)? == key {
            let mut value = vec![0u8; value_len as usize];
            mem.read(at(node, layout.value_offset)?, &mut value)?;
            return Ok(OffloadAnswer {
                arg0: hop,
                arg1: node,
                payload: value,
            });
        }
        let next = mem.read_word(at(node, layout.next_offset)?)?;
        if next == 0 {
            return Ok(OffloadAnswer {
                arg0: hop,
                arg1: 0,
                payload: Vec::new(),
            });
        }
        node = next;
    }
    // The bound: a cycle, or a structure longer than the caller allowed.
    Ok(OffloadAnswer {
        arg0: layout.max_hops as u64,
        arg1: node,
        payload: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Words at addresses; anything else is unmapped.
    struct Words(HashMap<u64, u64>);

    impl OffloadMemory for Words {
        fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), Status> {
            for (i, chunk) in buf.chunks_mut(8).enumerate() {
                let w = self.0.get(&(va + 8 * i as u64)).ok_or(Status::Unmapped)?;
                chunk.copy_from_slice(&w.to_le_bytes()[..chunk.len()]);
            }
            Ok(())
        }

        fn write(&mut self, _va: u64, _data: &[u8]) -> Result<(), Status> {
            Err(Status::Permission) // the chaser never writes
        }
    }

    const L: ChaseLayout = ChaseLayout {
        key_offset: 0,
        next_offset: 8,
        value_offset: 16,
        max_hops: 10,
    };

    /// Nodes at 0x1000, 0x2000, ...: key 100 + i, value 1000 + i, the last points at `tail`.
    fn list(n: u64, tail: u64) -> Words {
        let mut w = HashMap::new();
        for i in 0..n {
            let a = 0x1000 * (i + 1);
            w.insert(a, 100 + i);
            w.insert(a + 8, if i + 1 == n { tail } else { a + 0x1000 });
            w.insert(a + 16, 1000 + i);
        }
        Words(w)
    }

    #[test]
    fn finds_misses_and_stops_at_the_bound() {
        let mut m = list(5, 0);
        let a = chase(&mut m, 0x1000, 103, L, 8).unwrap();
        assert_eq!((a.arg0, a.arg1), (4, 0x4000));
        assert_eq!(a.payload, 1003u64.to_le_bytes());
        let a = chase(&mut m, 0x1000, 7, L, 8).unwrap();
        assert_eq!((a.arg0, a.arg1, a.payload.len()), (5, 0, 0), "null reached");
        // A cycle: the bound ends it and says where to go on.
        let mut m = list(3, 0x1000);
        let a = chase(&mut m, 0x1000, 7, L, 8).unwrap();
        assert_eq!((a.arg0, a.arg1, a.payload.len()), (10, 0x2000, 0));
    }

    #[test]
    fn hostile_requests_are_refused_or_stop_at_the_first_unreadable_node() {
        let mut m = list(3, 0xdead_0000);
        assert_eq!(chase(&mut m, 0x1000, 7, L, 8), Err(Status::Unmapped));
        let bad = ChaseLayout { key_offset: 3, ..L };
        assert_eq!(chase(&mut m, 0x1000, 7, bad, 8), Err(Status::BadRequest));
        assert_eq!(chase(&mut m, 0x1000, 7, L, 0), Err(Status::BadRequest));
        assert_eq!(
            chase(&mut m, 0x1000, 7, L, chase::MAX_VALUE + 1),
            Err(Status::BadRequest)
        );
        assert_eq!(chase(&mut m, 0, 7, L, 8), Err(Status::BadRequest));
        // A node that is not 8-byte aligned, first or later.
        assert_eq!(chase(&mut m, 0x1004, 7, L, 8), Err(Status::BadRequest));
        let mut odd = list(2, 0);
        odd.0.insert(0x1008, 0x2001);
        assert_eq!(chase(&mut odd, 0x1000, 7, L, 8), Err(Status::BadRequest));
        // Offsets that wrap the address space are unreadable, not a panic.
        let mut m = list(1, 0);
        let wrap = ChaseLayout { key_offset: 8, ..L };
        assert_eq!(
            chase(&mut m, u64::MAX - 7, 7, wrap, 8),
            Err(Status::Unmapped)
        );
    }
}
