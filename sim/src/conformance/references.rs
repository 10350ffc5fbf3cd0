//! The reference streams that the deliberately broken fast paths must be told apart on
//! (`tests/rtl_mutants.rs`), and whose rule coverage the model reports
//! (`tests/conformance_model.rs`): one list, so the coverage printed is the coverage the
//! mutants meet.

use super::{conformance_config, route, Stream};
use crate::model::board::Outgoing;
use crate::{BoardConfig, CBoard, SlowPathMode};
use clio_proto::frame::Route;
use clio_proto::ring::rx_source_bucket;
use clio_proto::{Header, Opcode};

/// DRAM of the reference runs.
pub const REFERENCE_DRAM: u64 = 64 << 20;

/// One reference run: the stream, what the model answered, and the model after it.
pub struct Reference {
    /// What the stream is, for messages.
    pub name: &'static str,
    /// The node configuration the stream was made on (replay it into a node built so).
    pub cfg: BoardConfig,
    /// The model after the stream (its memory image and its rule coverage).
    pub model: CBoard,
    /// The stream (its packets in `sent`).
    pub stream: Stream,
    /// The model's answers.
    pub want: Vec<Outgoing>,
}

impl Reference {
    /// Seed `seed`, `procs` processes, the directed corners if `corners`, then `steps`
    /// random steps, with CN acks at probability `ack`.
    pub fn new(
        name: &'static str,
        seed: u64,
        procs: usize,
        corners: bool,
        steps: usize,
        ack: f64,
    ) -> Reference {
        let cfg = conformance_config(REFERENCE_DRAM);
        let mut model = CBoard::new(&cfg).expect("model node");
        let mut stream = Stream::new(seed, 1 << 16).with_ack_probability(ack);
        let mut want = Vec::new();
        stream.setup(&mut model, procs, &mut want);
        if corners {
            stream.corners(&mut model, &mut want);
        }
        for _ in 0..steps {
            stream.step(&mut model, &mut want);
        }
        Reference {
            name,
            cfg,
            model,
            stream,
            want,
        }
    }

    /// A node whose slow path is away (`SlowPathMode::Absent`, a ring of 64 entries, 32 of
    /// them kept for fault notices), so nothing is ever taken from the RX ring: one host
    /// sends 48 Registers, of which it may hold half the room past the reserve (16) and the
    /// rest are RETRY_LATER; then another host sends 16, of which it may hold as many as
    /// stay free past the reserve and what it holds (8): the per-source share.
    pub fn slow_path_away() -> Reference {
        let cfg = BoardConfig {
            slowpath: SlowPathMode::Absent,
            ring_entries: 64,
            ..conformance_config(REFERENCE_DRAM)
        };
        let mut model = CBoard::new(&cfg).expect("model node");
        let mut stream = Stream::new(5, 1 << 16);
        let mut want = Vec::new();
        let other = Route {
            peer_ip: core::net::Ipv4Addr::new(10, 66, 6, 7),
            ..route(0, 0)
        };
        assert_ne!(rx_source_bucket(&other), rx_source_bucket(&route(0, 0)));
        for i in 0..64 {
            let id = stream.id();
            let h = Header {
                arg0: stream.nonce(),
                ..Header::request(Opcode::Register, 0, id, 0)
            };
            let from = if i < 48 { route(0, 0) } else { other };
            stream.send_from(&mut model, from, h.to_packet(&[]), &mut want);
        }
        Reference {
            name: "slow path away",
            cfg,
            model,
            stream,
            want,
        }
    }
}

/// The references, in the order the mutants meet them: the mixed stream after the directed
/// corners, then a ring-pressure stream (a fifth of the results acknowledged, so the ring
/// fills and members leave holding slots), then a node whose slow path is away.
pub fn references() -> [Reference; 3] {
    [
        Reference::new("corners + mixed (seed 21)", 21, 3, true, 600, 0.9),
        Reference::new("ring pressure (seed 11)", 11, 2, false, 1500, 0.2),
        Reference::slow_path_away(),
    ]
}
