//! The node-ordered log that [`crate::Opcode::Append`] writes, and the replication record
//! that the multi-node client keeps in it (docs/replication.md).
//!
//! A log is a region of a RAS (8-byte aligned, at least [`LOG_HEAD`] bytes), little-endian:
//!
//! ```text
//! 0   tail u64       bytes of records appended so far (a multiple of 8)
//! 8   apply lock u64 0, or the token of the writer applying the log (a shared space's
//!                    writers take it so one applies at a time; the node never touches it)
//! 16  reserved       48 bytes, zero
//! 64  records ...    each: len u32, reserved u32 (zero), len bytes, zero pad to 8
//! ```
//!
//! The node reserves the tail and writes the framed record in one operation, in arrival order:
//! concurrent appenders need no coordination (Rowan's remote-ordered shared log). Whoever
//! applies the log reads records `[0, tail)` in order, then resets the tail with a
//! compare-and-swap from the tail it applied to 0 (records appended meanwhile make it fail:
//! apply those too, then reset again).
//!
//! The replication record (the payload of one Append) is `va u64` (the target in the
//! backup's own RAS) followed by the bytes to write there. Applying records in log order is
//! a redo: applying a prefix again and continuing gives the same state, so a crash while
//! applying is repaired by applying the whole log again.

/// Bytes of the log head; records start here.
pub const LOG_HEAD: u64 = 64;
/// Offset of the tail word in the head.
pub const TAIL_OFFSET: u64 = 0;
/// Offset of the apply lock word in the head: writers of a shared space
/// (docs/replication.md, "Several writers") apply a log only while it holds their token,
/// because two appliers' resets of the tail can drop records (the second reset meets a tail
/// that came back to the value it read). `Append` never reads or writes it.
pub const APPLY_LOCK_OFFSET: u64 = 8;
const _: () = assert!(APPLY_LOCK_OFFSET != TAIL_OFFSET && APPLY_LOCK_OFFSET + 8 <= LOG_HEAD);
/// Bytes of a record's frame (len u32, reserved u32) before its payload.
pub const FRAME_BYTES: u64 = 8;
/// Largest Append payload: one packet, the record travels in one request and one response.
pub const MAX_RECORD: u32 = crate::consts::MAX_PAYLOAD as u32;
/// Bytes of a replication record's header (the target va) before its data.
pub const REPL_HEADER: usize = 8;
/// Largest data a replication record carries.
pub const MAX_REPL_DATA: usize = MAX_RECORD as usize - REPL_HEADER;

/// Bytes a record of `len` payload bytes occupies in the log (frame + payload, padded to 8).
pub const fn footprint(len: u32) -> u64 {
    FRAME_BYTES + (len as u64).div_ceil(8) * 8
}

/// Where an Append of `len` bytes at a log of `capacity` bytes whose tail word reads `tail`
/// goes: `Some(offset of the frame from the log base)`, or `None` when the tail is not a valid
/// tail (unaligned, or past the end) or the record does not fit ([`crate::Status::LogFull`]).
/// The one rule the model and the RTL follow; checked arithmetic, so no tail wraps.
pub fn place(capacity: u64, tail: u64, len: u32) -> Option<u64> {
    if len == 0 || len > MAX_RECORD || !tail.is_multiple_of(8) {
        return None;
    }
    let at = LOG_HEAD.checked_add(tail)?;
    let end = at.checked_add(footprint(len))?;
    (end <= capacity).then_some(at)
}

/// The frame written before a record's payload.
pub fn frame(len: u32) -> [u8; FRAME_BYTES as usize] {
    let mut f = [0u8; FRAME_BYTES as usize];
    f[..4].copy_from_slice(&len.to_le_bytes());
    f
}

/// Why a log image could not be walked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LogError {
    /// A frame whose length is 0, above [`MAX_RECORD`], runs past the tail, or whose reserved
    /// word is not zero: the log was written by something else than Append.
    #[error("bad record frame at log offset {0}")]
    BadFrame(u64),
}

/// The records of a log's data area (`data` = bytes `[LOG_HEAD, LOG_HEAD + tail)`), in order,
/// each as (offset in the data area, payload).
pub fn records(data: &[u8]) -> Result<Vec<(u64, &[u8])>, LogError> {
    let mut out = Vec::new();
    let mut off = 0usize;
    while off < data.len() {
        let bad = LogError::BadFrame(off as u64);
        let f = data.get(off..off + FRAME_BYTES as usize).ok_or(bad)?;
        let len = u32::from_le_bytes([f[0], f[1], f[2], f[3]]);
        if len == 0 || len > MAX_RECORD || f[4..8] != [0; 4] {
            return Err(bad);
        }
        let start = off + FRAME_BYTES as usize;
        let payload = data.get(start..start + len as usize).ok_or(bad)?;
        out.push((off as u64, payload));
        off += footprint(len) as usize;
    }
    Ok(out)
}

/// A replication record: write `data` at `va` of the backup's RAS.
pub fn repl_record(va: u64, data: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(REPL_HEADER + data.len());
    r.extend_from_slice(&va.to_le_bytes());
    r.extend_from_slice(data);
    r
}

/// Split a replication record into (target va, data); `None` if it is shorter than its header
/// or carries no data.
pub fn parse_repl_record(r: &[u8]) -> Option<(u64, &[u8])> {
    let (h, data) = r.split_at_checked(REPL_HEADER)?;
    let va = u64::from_le_bytes(h.try_into().ok()?);
    (!data.is_empty()).then_some((va, data))
}

/// The writes that applying `records` (target va, data) in log order amounts to: disjoint
/// extents where every byte holds the data of the last record that wrote it. Writing them in
/// any order gives the state that applying the records one by one in log order gives.
pub fn coalesce<'a>(
    records: impl IntoIterator<Item = (u64, &'a [u8])>,
) -> std::collections::BTreeMap<u64, Vec<u8>> {
    let mut ext: std::collections::BTreeMap<u64, Vec<u8>> = std::collections::BTreeMap::new();
    for (va, d) in records {
        let end = va.saturating_add(d.len() as u64);
        // Extents that overlap or touch [va, end): disjoint and sorted, so their ends grow
        // with their starts; walk down from the last one starting at or before `end`.
        let hit: Vec<u64> = ext
            .range(..=end)
            .rev()
            .take_while(|(k, v)| **k + v.len() as u64 >= va)
            .map(|(k, _)| *k)
            .collect();
        let start = hit.iter().copied().fold(va, u64::min);
        let stop = hit
            .iter()
            .map(|k| k + ext[k].len() as u64)
            .fold(end, u64::max);
        let mut buf = vec![0u8; (stop - start) as usize];
        for k in hit {
            if let Some(old) = ext.remove(&k) {
                let at = (k - start) as usize;
                buf[at..at + old.len()].copy_from_slice(&old);
            }
        }
        let at = (va - start) as usize;
        buf[at..at + d.len()].copy_from_slice(d);
        ext.insert(start, buf);
    }
    ext
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn placement_refuses_what_does_not_fit() {
        assert_eq!(place(LOG_HEAD + 16, 0, 8), Some(LOG_HEAD));
        assert_eq!(
            place(LOG_HEAD + 16, 0, 9),
            None,
            "9 bytes pad to 16 + 8 frame"
        );
        assert_eq!(place(LOG_HEAD + 32, 16, 8), Some(LOG_HEAD + 16));
        assert_eq!(place(1 << 20, 4, 8), None, "unaligned tail");
        assert_eq!(place(1 << 20, u64::MAX - 7, 8), None, "no wrap");
        assert_eq!(place(1 << 20, 0, 0), None);
        assert_eq!(place(1 << 20, 0, MAX_RECORD + 1), None);
    }

    proptest! {
        #[test]
        fn records_round_trip(lens in prop::collection::vec(1u32..=MAX_RECORD, 0..20)) {
            let mut data = Vec::new();
            for (i, &l) in lens.iter().enumerate() {
                let at = place(u64::MAX / 2, data.len() as u64, l).unwrap() - LOG_HEAD;
                prop_assert_eq!(at, data.len() as u64);
                data.extend_from_slice(&frame(l));
                data.extend((0..l).map(|j| (i as u32 ^ j) as u8));
                data.resize(at as usize + footprint(l) as usize, 0);
            }
            let rs = records(&data).unwrap();
            prop_assert_eq!(rs.len(), lens.len());
            for (i, (_, p)) in rs.iter().enumerate() {
                prop_assert_eq!(p.len(), lens[i] as usize);
                prop_assert!(p.iter().enumerate().all(|(j, b)| *b == (i as u32 ^ j as u32) as u8));
            }
        }
    }

    proptest! {
        #[test]
        fn coalescing_equals_applying_in_log_order(
            recs in prop::collection::vec((0u64..600, prop::collection::vec(any::<u8>(), 1..80)), 0..40)
        ) {
            let mut mem = vec![None::<u8>; 700];
            for (va, d) in &recs {
                for (i, b) in d.iter().enumerate() {
                    mem[*va as usize + i] = Some(*b);
                }
            }
            let ext = coalesce(recs.iter().map(|(va, d)| (*va, d.as_slice())));
            let mut got = vec![None::<u8>; 700];
            let mut last_end = 0;
            for (va, d) in &ext {
                prop_assert!(*va >= last_end, "extents overlap");
                last_end = va + d.len() as u64;
                for (i, b) in d.iter().enumerate() {
                    got[*va as usize + i] = Some(*b);
                }
            }
            prop_assert_eq!(got, mem);
        }
    }

    #[test]
    fn garbage_logs_are_refused_not_walked() {
        assert_eq!(records(&[0u8; 16]), Err(LogError::BadFrame(0)));
        let mut d = frame(100).to_vec();
        d.extend([0u8; 8]);
        assert_eq!(
            records(&d),
            Err(LogError::BadFrame(0)),
            "runs past the tail"
        );
        let r = repl_record(0x1000, b"abc");
        assert_eq!(parse_repl_record(&r), Some((0x1000, &b"abc"[..])));
        assert_eq!(parse_repl_record(&r[..8]), None);
    }
}
