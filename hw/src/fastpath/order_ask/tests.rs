//! The question against the executor's use of it: random runs of Dispatch, Translate, the
//! addressing states and others, the registers held as the executor holds them (`pa1`, `pa2`
//! and the length fixed while addressing, `pa1` and the length loaded by a hit). Every cycle:
//! the first line is the piece under way's (the look-ahead's in Dispatch), the end is inside the
//! line's 4 KiB block and never short of the piece's bound; while addressing after a cycle of
//! the same access (or after the Dispatch hit that started it) the end is exactly that bound,
//! otherwise the block's end.

use super::*;
use crate::bench::Bench;
use crate::tb::Rng;

#[derive(Clone, Copy, PartialEq, Debug)]
enum St {
    Other,
    Dispatch,
    Translate,
    Addressing,
}

/// The bound a piece starting at `line` of an access of `bytes` bytes ends by.
fn bound(line: u64, bytes: u64) -> u64 {
    (line + ((bytes >> 5) | 1)).min(line | 63)
}

#[test]
fn the_end_is_safe_inside_the_block_and_exact_once_the_access_is_held() {
    let mut r = Rng(0x0a5c);
    let mut b = Bench::new(OrderAsk::default());
    let mut st = St::Other;
    let (mut line1, mut line2, mut bytes, mut piece) = (0u64, 0u64, 0u64, false);
    // Whether the end asked about this cycle must be exact (the access held since last cycle).
    let mut held = false;
    let (mut exact, mut rounded) = (0u64, 0u64);
    for cycle in 0..50_000u64 {
        let ahead = r.below(256);
        let tr = r.below(256);
        let d_bytes = r.below(4096);
        let hit = matches!(st, St::Dispatch | St::Translate) && r.below(2) == 0;
        let u = &mut b.uut;
        u.dispatch.next = st == St::Dispatch;
        u.addressing.next = st == St::Addressing;
        u.hit_go.next = hit;
        u.ahead_line.next = ahead.to_bits();
        u.line1.next = line1.to_bits();
        u.line2.next = line2.to_bits();
        u.piece.next = piece;
        u.bytes.next = if st == St::Dispatch { d_bytes } else { bytes }.to_bits();
        b.settle();
        let (q, end) = (b.uut.ask_line.val().to_u64(), b.uut.ask_end.val().to_u64());
        let at = format!("cycle {cycle}: {st:?}, lines {line1} {line2}, piece {piece}, {bytes} B");
        let line = match (st, piece) {
            (St::Dispatch, _) => ahead,
            (_, true) => line2,
            _ => line1,
        };
        assert_eq!(q, line, "first line, {at}");
        assert!(
            end >= bound(line, if st == St::Dispatch { d_bytes } else { bytes }),
            "{at}: end {end} short"
        );
        assert!(end <= (line | 63), "{at}: end {end} past the block");
        if st == St::Addressing {
            if held {
                assert_eq!(end, bound(line, bytes), "exact, {at}");
                exact += 1;
            } else {
                assert_eq!(end, line | 63, "rounded, {at}");
                rounded += 1;
            }
        }
        // The executor's next cycle.
        let next = if hit {
            // On to the access: `pa1` (and in Dispatch the length) from the hit.
            line1 = if st == St::Dispatch { ahead } else { tr };
            if st == St::Dispatch {
                bytes = d_bytes;
            }
            piece = false;
            St::Addressing
        } else {
            match st {
                St::Addressing => {
                    // The second piece goes out after the first; the access ends at random.
                    if !piece && r.below(4) == 0 {
                        piece = true;
                    }
                    if r.below(3) == 0 {
                        St::Other
                    } else {
                        St::Addressing
                    }
                }
                St::Translate => {
                    // A translation done loads a piece's PA; then on to the access or not.
                    if r.below(2) == 0 {
                        line1 = r.below(256);
                    }
                    if r.below(2) == 0 {
                        line2 = r.below(256) & !63;
                    }
                    piece = r.below(4) == 0;
                    match r.below(3) {
                        0 => St::Addressing,
                        1 => St::Translate,
                        _ => St::Other,
                    }
                }
                _ => {
                    if r.below(2) == 0 {
                        line1 = r.below(256);
                        bytes = r.below(4096);
                    }
                    piece = r.below(4) == 0;
                    match r.below(4) {
                        0 => St::Dispatch,
                        1 => St::Translate,
                        2 => St::Addressing,
                        _ => St::Other,
                    }
                }
            }
        };
        // A Dispatch hit's end was computed from the look-ahead's line; a Translate hit's is not.
        held = (hit && st == St::Dispatch) || (st == St::Addressing && next == St::Addressing);
        st = next;
        b.tick();
    }
    assert!(exact > 5_000 && rounded > 2_000, "{exact} {rounded}");
}
