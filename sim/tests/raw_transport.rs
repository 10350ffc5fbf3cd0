//! The node on raw Ethernet (pnet datalink) across a veth pair (frames never leave the pair;
//! the UDP-encapsulated frames carry loopback-range addresses). Needs root (CAP_NET_ADMIN to
//! make the pair, CAP_NET_RAW to open AF_PACKET sockets); without it the test says so and
//! passes without checking anything.

use clio_proto::consts::ETHERTYPE_CLIO;
use clio_proto::frame::{emit_frame, parse_frame, Encap, Route};
use clio_proto::header::parse_verified;
use clio_proto::{Header, Opcode, Status};
use clio_sim::server::spawn_raw;
use clio_sim::{BoardConfig, CBoard};
use pnet_datalink::{self as dl, Channel};
use std::net::Ipv4Addr;
use std::process::Command;
use std::time::{Duration, Instant};

struct Veth(String);
impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["link", "del", &self.0]).status();
    }
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

#[test]
fn node_answers_raw_and_udp_frames_on_a_veth_pair() {
    let (a, b) = (
        format!("clr{}a", std::process::id() % 10000),
        format!("clr{}b", std::process::id() % 10000),
    );
    let _ = Command::new("ip").args(["link", "del", &a]).output();
    if !ip(&["link", "add", &a, "type", "veth", "peer", "name", &b]) {
        eprintln!("SKIPPED: cannot create a veth pair here (needs root and iproute2)");
        return;
    }
    let _guard = Veth(a.clone());
    assert!(ip(&["link", "set", &a, "up"]) && ip(&["link", "set", &b, "up"]));
    std::thread::sleep(Duration::from_millis(200));

    let board = CBoard::new(&BoardConfig {
        dram_bytes: 64 << 20,
        page_shift: 16,
        ..BoardConfig::default()
    })
    .unwrap();
    let server = spawn_raw(board, &a, 48850).unwrap();
    let itf_a = dl::interfaces().into_iter().find(|i| i.name == a).unwrap();
    let itf_b = dl::interfaces().into_iter().find(|i| i.name == b).unwrap();
    let (node_mac, my_mac) = (itf_a.mac.unwrap().octets(), itf_b.mac.unwrap().octets());
    let cfg = dl::Config {
        read_timeout: Some(Duration::from_millis(50)),
        ..Default::default()
    };
    let Ok(Channel::Ethernet(mut tx, mut rx)) = dl::channel(&itf_b, cfg) else {
        panic!("raw channel on {b}")
    };

    let mut exchange = |route: Route, h: Header| -> Header {
        tx.send_to(&emit_frame(&route, &h.to_packet(&[])), None)
            .unwrap()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            let Ok(frame) = rx.next() else { continue };
            if frame[6..12] == my_mac {
                continue; // our own transmission, looped back by AF_PACKET
            }
            if let Ok((r, clio)) = parse_frame(frame, None) {
                if let Ok((resp, _)) = parse_verified(clio) {
                    if resp.req_id == h.req_id {
                        assert_eq!(r.encap, route.encap);
                        assert_eq!(r.peer_mac, node_mac);
                        return resp;
                    }
                }
            }
        }
        panic!("no answer to {h:?} over {:?}", route.encap);
    };

    let raw = Route {
        encap: Encap::RawEthernet,
        peer_mac: node_mac,
        local_mac: my_mac,
        ..Route::default()
    };
    let reg = exchange(
        raw,
        Header {
            arg0: 5,
            ..Header::request(Opcode::Register, 0, 1, 0)
        },
    );
    assert_eq!(reg.status, Status::Ok);
    let udp = Route {
        encap: Encap::Udp,
        peer_mac: node_mac,
        local_mac: my_mac,
        peer_ip: Ipv4Addr::new(127, 0, 0, 2),
        local_ip: Ipv4Addr::new(127, 0, 0, 3),
        peer_port: 48850,
        local_port: 40000,
    };
    let alloc = exchange(
        udp,
        Header {
            arg0: 1 << 16,
            arg1: 3,
            ..Header::request(Opcode::Alloc, reg.pid, 2, 0)
        }
        .with_credentials(reg.arg0, reg.arg1 as u16),
    );
    assert_eq!(alloc.status, Status::Ok);
    assert_eq!(ETHERTYPE_CLIO, 0x88B5);
    let c = server.board().lock().unwrap().counters();
    assert_eq!(c.slowpath_requests, 2);
    server.stop().unwrap();
}
