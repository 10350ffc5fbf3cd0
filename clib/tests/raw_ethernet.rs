//! Raw Ethernet transport against a node served on the other end of a veth pair. Needs root
//! (creates and deletes the pair itself); skips with a printed reason otherwise.

mod common;
use clio_clib::transport::RawEthernetTransport;
use clio_clib::{Client, Config};
use std::process::Command;

struct Veth(String);

impl Drop for Veth {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["link", "del", self.0.as_str()])
            .status();
    }
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .status()
        .is_ok_and(|s| s.success())
}

fn mac_of(iface: &str) -> Option<[u8; 6]> {
    let s = std::fs::read_to_string(format!("/sys/class/net/{iface}/address")).ok()?;
    let v: Vec<u8> = s
        .trim()
        .split(':')
        .filter_map(|x| u8::from_str_radix(x, 16).ok())
        .collect();
    v.try_into().ok()
}

#[test]
fn raw_ethernet_round_trip_over_a_veth_pair() {
    // Per-process names: concurrent test runs must not share the pair.
    let id = std::process::id() % 100_000;
    let (a, b) = (format!("clio{id}a"), format!("clio{id}b"));
    let (a, b) = (a.as_str(), b.as_str());
    if !ip(&["link", "add", a, "type", "veth", "peer", "name", b]) {
        println!("SKIP raw_ethernet: cannot create a veth pair (needs root / CAP_NET_ADMIN)");
        return;
    }
    let _guard = Veth(a.to_string());
    assert!(ip(&["link", "set", a, "up"]) && ip(&["link", "set", b, "up"]));
    let node_mac = mac_of(b).expect("veth MAC");
    let server =
        match clio_sim::server::spawn_raw(common::board(), b, clio_proto::consts::DEFAULT_UDP_PORT)
        {
            Ok(s) => s,
            Err(e) => {
                println!("SKIP raw_ethernet: cannot open a raw socket: {e}");
                return;
            }
        };
    let t = RawEthernetTransport::open(a, node_mac).expect("raw transport");
    let c = Client::connect(
        Box::new(t),
        Config {
            track_shift: common::PAGE_SHIFT,
            ..Config::default()
        },
    )
    .expect("register over raw Ethernet");
    let va = c.ralloc(2 * common::PAGE).unwrap();
    let d = common::pattern(9000, 3);
    c.rwrite(va + 100, &d).unwrap();
    assert_eq!(c.rread(va + 100, d.len()).unwrap(), d);
    assert_eq!(c.fetch_add(va, 2).unwrap(), 0);
    assert_eq!(c.fetch_add(va, 2).unwrap(), 2);
    assert_eq!(c.transport_name(), "raw-ethernet");
    // A second member joins the same RAS over its own raw socket and shares the counter.
    let t2 = RawEthernetTransport::open(a, node_mac).expect("second raw transport");
    let peer = Client::join(Box::new(t2), Config::default(), c.credentials())
        .expect("join over raw Ethernet");
    assert_eq!(peer.fetch_add(va, 2).unwrap(), 4);
    assert_eq!(peer.rread(va + 100, d.len()).unwrap(), d);
    drop(peer);
    drop(c);
    server.stop().unwrap();
}
