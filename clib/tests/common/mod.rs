//! Shared helpers: a memory-node model behind CLib's in-process transport.
#![allow(dead_code)]

pub mod relay;

use clio_clib::transport::InProcTransport;
use clio_proto::frame::Route;
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use std::sync::{Arc, Mutex};

/// 64 KiB pages keep tests small while crossing pages often.
pub const PAGE_SHIFT: u32 = 16;
pub const PAGE: u64 = 1 << PAGE_SHIFT;

pub fn board() -> CBoard {
    CBoard::new(&board_config()).expect("board")
}

/// The configuration of [`board`].
pub fn board_config() -> BoardConfig {
    BoardConfig {
        dram_bytes: 256 << 20,
        page_shift: PAGE_SHIFT,
        memory_file: None,
        slowpath: SlowPathMode::InProcess,
        ring_entries: 256,
        ..BoardConfig::default()
    }
}

/// A shared board with the extend path's offloads on or off, and Clio-KV's region size.
pub fn offload_board(offloads: bool, kv_store_bytes: u64) -> Arc<Mutex<CBoard>> {
    Arc::new(Mutex::new(
        CBoard::new(&BoardConfig {
            dram_bytes: 256 << 20,
            page_shift: PAGE_SHIFT,
            slowpath: SlowPathMode::InProcess,
            ring_entries: 256,
            offloads: if offloads {
                clio_sim::Offloads::All
            } else {
                clio_sim::Offloads::None
            },
            kv_store_bytes,
            ..BoardConfig::default()
        })
        .expect("board"),
    ))
}

/// Serve one packet on a shared board: what a node does with a datagram.
pub fn serve(b: &Mutex<CBoard>, pkt: &[u8]) -> Vec<Vec<u8>> {
    serve_from(b, &Route::default(), pkt)
}

/// Serve one packet that arrived along `route` (a source address of the test's choosing).
pub fn serve_from(b: &Mutex<CBoard>, route: &Route, pkt: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let mut g = b.lock().unwrap_or_else(|e| e.into_inner());
    g.handle(route, pkt, &mut out);
    g.service(&mut out);
    out.into_iter().map(|(_, p)| p).collect()
}

/// A client over `t` with 64 KiB tracking pages and no background heartbeat (a test that
/// counts what crosses its transport decides every packet itself).
pub fn quiet_client(t: InProcTransport) -> clio_clib::Client {
    clio_clib::Client::connect(
        Box::new(t),
        clio_clib::Config {
            track_shift: PAGE_SHIFT,
            heartbeat: false,
            ..clio_clib::Config::default()
        },
    )
    .expect("connect")
}

pub fn direct(b: Arc<Mutex<CBoard>>) -> InProcTransport {
    InProcTransport::direct(move |p| serve(&b, p))
}

pub fn pattern(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A model node (64 MiB, 64 KiB pages) serving UDP at `addr` (port 0: any), as the
/// multi-node tests use them.
pub fn udp_node_at(addr: std::net::SocketAddr) -> clio_sim::server::ServerHandle {
    udp_node_on(addr, None)
}

/// [`udp_node_at`] with its memory in `memory_file` (so `Persist` works), if given.
fn udp_node_on(
    addr: std::net::SocketAddr,
    memory_file: Option<std::path::PathBuf>,
) -> clio_sim::server::ServerHandle {
    let b = CBoard::new(&BoardConfig {
        dram_bytes: 64 << 20,
        page_shift: PAGE_SHIFT,
        memory_file,
        ..BoardConfig::default()
    })
    .expect("board");
    clio_sim::server::spawn_udp_spinning(b, addr, std::time::Duration::ZERO).expect("node")
}

/// The specs of nodes, `capacity` bytes each.
fn specs_of(
    nodes: impl Iterator<Item = Option<std::net::SocketAddr>>,
    capacity: u64,
) -> Vec<clio_clib::NodeSpec> {
    nodes
        .map(|addr| clio_clib::NodeSpec {
            addr: addr.expect("a UDP node"),
            capacity,
        })
        .collect()
}

/// `n` nodes like [`udp_nodes`]'s, each on a memory file in `dir`.
pub fn udp_nodes_on_files(
    n: usize,
    capacity: u64,
    dir: &std::path::Path,
) -> (
    Vec<clio_sim::server::ServerHandle>,
    Vec<clio_clib::NodeSpec>,
) {
    let s: Vec<_> = (0..n)
        .map(|i| {
            udp_node_on(
                "127.0.0.1:0".parse().unwrap(),
                Some(dir.join(format!("mem{i}"))),
            )
        })
        .collect();
    let specs = specs_of(s.iter().map(|h| h.udp_addr), capacity);
    (s, specs)
}

/// `n` nodes of [`udp_node_at`] (each in an `Option`, so a test can stop one by taking it)
/// and their specs with `capacity` bytes each.
pub fn udp_nodes(
    n: usize,
    capacity: u64,
) -> (
    Vec<Option<clio_sim::server::ServerHandle>>,
    Vec<clio_clib::NodeSpec>,
) {
    let s: Vec<_> = (0..n)
        .map(|_| Some(udp_node_at("127.0.0.1:0".parse().unwrap())))
        .collect();
    let specs = specs_of(
        s.iter().map(|h| h.as_ref().and_then(|h| h.udp_addr)),
        capacity,
    );
    (s, specs)
}
