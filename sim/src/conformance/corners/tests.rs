//! Every directed corner reached with the answer the spec gives.

use super::*;
use crate::conformance::conformance_config;
use crate::CBoard;

/// The corners' word after the carrying FetchAdd (2^32) and process 0's FetchAdd of 5
/// (`shared`), which its replay must not add again.
const WORD_AFTER_SHARED: u64 = 0x1_0000_0005;
/// The name of the corners that put new keys until refused (`kv_corners`).
const KV_FILL: &str = "KV put of new keys until the RAS's quota or the store refuses one";

#[test]
fn every_corner_is_reached_with_the_answer_the_spec_gives() {
    let mut node = CBoard::new(&conformance_config(64 << 20)).expect("model node");
    let mut s = Stream::new(21, 1 << 16);
    let mut out = Vec::new();
    s.setup(&mut node, 3, &mut out);
    assert_ne!(
        s.procs[0].clients[0], s.procs[1].clients[0],
        "client ids are node-wide: each RAS's first member has its own"
    );
    let mut got = s.corners(&mut node, &mut out);
    let want: &[(&str, Status, Option<u64>)] = &[
        ("read of 0 bytes", Status::BadRequest, None),
        (
            "read of MAX_REQUEST_LEN + 1 bytes",
            Status::BadRequest,
            None,
        ),
        ("read of exactly MAX_REQUEST_LEN bytes", Status::Ok, None),
        ("read ending at a page end", Status::Ok, None),
        ("read one byte past a page end", Status::Ok, None),
        ("fetch-add carrying across bit 32", Status::Ok, None),
        (
            "word after the carrying fetch-add",
            Status::Ok,
            Some(0x1_0000_0000),
        ),
        (
            "compare-and-swap differing only above bit 31",
            Status::Ok,
            None,
        ),
        (
            "word after the failed compare-and-swap",
            Status::Ok,
            Some(0x1_0000_0000),
        ),
        ("atomic 4 bytes off alignment", Status::BadRequest, None),
        ("atomic 1 byte off alignment", Status::BadRequest, None),
        ("ring-recorded request of one RAS", Status::Ok, None),
        (
            "same request id under that client id from another RAS",
            Status::Denied,
            None,
        ),
        (
            "same request id from another RAS's own member",
            Status::Ok,
            None,
        ),
        (
            "append to a log 4 bytes off alignment",
            Status::BadRequest,
            None,
        ),
        (
            "append whose payload is not its total_len",
            Status::BadRequest,
            None,
        ),
        ("append of the log's first record", Status::Ok, None),
        (
            "append filling the log to exactly its capacity",
            Status::Ok,
            None,
        ),
        ("append past the log's capacity", Status::LogFull, None),
        (
            "chase with an aligned layout",
            Status::Ok,
            Some(0x5A5A_5A5A_5A5A_5A5A),
        ),
        (
            "chase with its key offset 4 bytes off alignment",
            Status::BadRequest,
            None,
        ),
        (
            "chase with its next offset 4 bytes off alignment",
            Status::BadRequest,
            None,
        ),
        ("chase carrying a payload", Status::BadRequest, None),
        (
            "ring request whose entry holds its member's unacknowledged result",
            Status::QuotaExceeded,
            None,
        ),
        (
            "ring request of a member holding its share, none acknowledged",
            Status::QuotaExceeded,
            None,
        ),
        (
            "ring request of a member at its share, over its own oldest result",
            Status::Ok,
            None,
        ),
        (
            "ring request again after a member at its share recorded past its result",
            Status::Ok,
            None,
        ),
        (
            "word after the replayed ring request",
            Status::Ok,
            Some(WORD_AFTER_SHARED),
        ),
        (
            "read of 65 bytes without a route cookie",
            Status::RouteUnverified,
            None,
        ),
        (
            "read of 64 bytes from another address without a route cookie",
            Status::Ok,
            None,
        ),
        (
            "read of 1 KiB with this host's route cookie from another address",
            Status::RouteUnverified,
            None,
        ),
        (
            "read of 1 KiB with this host's route cookie",
            Status::Ok,
            None,
        ),
        ("KV get with an empty key", Status::BadRequest, None),
        (
            "KV get with a key of MAX_KEY + 1 bytes",
            Status::BadRequest,
            None,
        ),
        // Process 0 holds its RAS's quota (11 of the 22 records), process 1 fills the store
        // (21 keys), process 2 finds it full.
        (KV_FILL, Status::QuotaExceeded, None),
        (KV_FILL, Status::OutOfMemory, None),
        (KV_FILL, Status::OutOfMemory, None),
        (
            "KV put of one key by two tenants into one bucket",
            Status::Ok,
            None,
        ),
        (
            "KV put of one key by two tenants into one bucket",
            Status::Ok,
            None,
        ),
        ("KV get of the twin key by each tenant", Status::Ok, None),
        ("KV get of the twin key by each tenant", Status::Ok, None),
        (
            "ring request of a pid's next owner with its last owner's request id",
            Status::Ok,
            None,
        ),
        (
            "KV get by a pid's next owner of its last owner's key",
            Status::Ok,
            None,
        ),
        (
            "read by a pid's next owner of its word and where its last owner wrote",
            Status::Ok,
            None,
        ),
    ];
    // The page-end sweep (after the five length corners): every read answered whole.
    let sweep: Vec<Corner> = got.drain(5..5 + 128).collect();
    for (i, c) in sweep.iter().enumerate() {
        let len = i / 2 + 1 + i % 2;
        assert_eq!(c.status, Some(Status::Ok), "{} ({len} bytes)", c.name);
        assert_eq!(c.data.len(), len, "{} ({len} bytes)", c.name);
    }
    // The ordering corners (last): per length, a write and a read of its bytes per round.
    use crate::conformance::order_corners::{order_pattern, ORDER_LENGTHS, ORDER_ROUNDS};
    let order = got.split_off(got.len() - 2 * ORDER_ROUNDS * ORDER_LENGTHS.len());
    for (i, case) in order.chunks(2 * ORDER_ROUNDS).enumerate() {
        let len = ORDER_LENGTHS[i];
        for (k, pair) in case.chunks(2).enumerate() {
            for c in pair {
                assert_eq!(c.status, Some(Status::Ok), "{} ({len} bytes)", c.name);
            }
            let want = vec![order_pattern(i, k); len];
            assert_eq!(pair[1].data, want, "{} ({len} bytes)", pair[1].name);
        }
    }
    assert_eq!(got.len(), want.len());
    for (c, (name, status, word)) in got.iter().zip(want) {
        assert_eq!(c.name, *name);
        assert_eq!(c.status, Some(*status), "{name}");
        if let Some(w) = word {
            assert_eq!(c.data, w.to_le_bytes(), "{name}");
        }
    }
    assert!(
        got[2].data.len() >= 64 << 10,
        "the 1 MiB read runs to its region's end"
    );
    assert_eq!(got[3].data.len(), 16);
    let twins: Vec<&Corner> = got
        .iter()
        .filter(|c| c.name == "KV get of the twin key by each tenant")
        .collect();
    assert_eq!(twins.len(), 2);
    assert!(
        twins[0].data.ends_with(b"first owner"),
        "{:?}",
        twins[0].data
    );
    assert!(
        twins[1].data.ends_with(b"other owner"),
        "{:?}",
        twins[1].data
    );
    let kv = &got[got.len() - 2];
    assert!(
        kv.data.is_empty(),
        "a miss: the last owner's record is gone"
    );
    let last = got.last().expect("corners");
    assert_eq!(
        last.data[..8],
        3u64.to_le_bytes(),
        "the next owner's fetch-add executed"
    );
    assert_eq!(
        last.data[8..],
        [0; 72],
        "the next owner reads zeros, not the last owner's data"
    );
    assert_eq!(got[4].data.len(), 17, "the read crosses into the next page");
    let answered = |name: &str| {
        got.iter()
            .find(|c| c.name == name)
            .map_or(usize::MAX, |c| c.data.len())
    };
    assert_eq!(
        answered("read of 1 KiB with this host's route cookie from another address"),
        0,
        "nothing but a header goes to an address the cookie does not prove"
    );
    assert_eq!(
        answered("read of 64 bytes from another address without a route cookie"),
        64
    );
    assert_eq!(
        answered("read of 1 KiB with this host's route cookie"),
        1024
    );
}
