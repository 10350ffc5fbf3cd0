//! Framing of Clio packets on the wire, written with `smoltcp::wire`.
//!
//! Two encapsulations: raw Ethernet (EtherType [`ETHERTYPE_CLIO`], needs root at the client,
//! no IP routing) and Ethernet/IPv4/UDP (routable, the default for development). A [`Route`]
//! records both ends of a packet so that the node can answer it without keeping state: the
//! response goes back along the route of its request, reversed.

use crate::consts::ETHERTYPE_CLIO;
use crate::header::WireError;
use core::net::Ipv4Addr;
use smoltcp::phy::ChecksumCapabilities;
use smoltcp::wire::{
    EthernetAddress, EthernetFrame, EthernetProtocol, EthernetRepr, IpAddress, IpProtocol,
    Ipv4Packet, Ipv4Repr, UdpPacket, UdpRepr,
};

/// Bytes of an encoded [`Route`] (in ring descriptors).
pub const ROUTE_BYTES: usize = 32;
/// Ethernet header bytes.
pub const ETH_HEADER_LEN: usize = 14;
/// Ethernet + IPv4 + UDP header bytes.
pub const UDP_OVERHEAD: usize = 14 + 20 + 8;
/// IPv4 TTL used in emitted frames.
pub const HOP_LIMIT: u8 = 64;

/// How a packet is carried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Encap {
    /// Ethernet / IPv4 / UDP.
    #[default]
    Udp = 1,
    /// Ethernet with EtherType 0x88B5.
    RawEthernet = 2,
}

/// Both ends of a packet as seen by its receiver: `peer` sent it, `local` received it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Route {
    /// Encapsulation.
    pub encap: Encap,
    /// MAC of the sender.
    pub peer_mac: [u8; 6],
    /// MAC of the receiver.
    pub local_mac: [u8; 6],
    /// IPv4 of the sender (UDP only).
    pub peer_ip: Ipv4Addr,
    /// IPv4 of the receiver (UDP only).
    pub local_ip: Ipv4Addr,
    /// UDP port of the sender.
    pub peer_port: u16,
    /// UDP port of the receiver.
    pub local_port: u16,
}

impl Default for Route {
    fn default() -> Self {
        Route {
            encap: Encap::Udp,
            peer_mac: [0; 6],
            local_mac: [0; 6],
            peer_ip: Ipv4Addr::UNSPECIFIED,
            local_ip: Ipv4Addr::UNSPECIFIED,
            peer_port: 0,
            local_port: 0,
        }
    }
}

impl Route {
    /// A UDP route for kernel sockets, where MACs are not visible (left zero).
    pub fn udp(peer: core::net::SocketAddrV4, local: core::net::SocketAddrV4) -> Route {
        Route {
            encap: Encap::Udp,
            peer_ip: *peer.ip(),
            peer_port: peer.port(),
            local_ip: *local.ip(),
            local_port: local.port(),
            ..Route::default()
        }
    }

    /// The sender's UDP socket address.
    pub fn peer_socket(&self) -> core::net::SocketAddrV4 {
        core::net::SocketAddrV4::new(self.peer_ip, self.peer_port)
    }

    /// Encode into [`ROUTE_BYTES`] bytes (ring descriptors). Layout: encap u8, pad u8,
    /// peer_mac 6, local_mac 6, peer_ip 4, local_ip 4, peer_port u16 BE, local_port u16 BE, pad 6.
    pub fn to_bytes(&self) -> [u8; ROUTE_BYTES] {
        let mut b = [0u8; ROUTE_BYTES];
        b[0] = self.encap as u8;
        b[2..8].copy_from_slice(&self.peer_mac);
        b[8..14].copy_from_slice(&self.local_mac);
        b[14..18].copy_from_slice(&self.peer_ip.octets());
        b[18..22].copy_from_slice(&self.local_ip.octets());
        b[22..24].copy_from_slice(&self.peer_port.to_be_bytes());
        b[24..26].copy_from_slice(&self.local_port.to_be_bytes());
        b
    }

    /// Decode from [`ROUTE_BYTES`] bytes.
    pub fn from_bytes(b: &[u8; ROUTE_BYTES]) -> Result<Route, WireError> {
        let encap = match b[0] {
            1 => Encap::Udp,
            2 => Encap::RawEthernet,
            _ => return Err(WireError::Frame("unknown encapsulation in route")),
        };
        let mut peer_mac = [0u8; 6];
        let mut local_mac = [0u8; 6];
        peer_mac.copy_from_slice(&b[2..8]);
        local_mac.copy_from_slice(&b[8..14]);
        Ok(Route {
            encap,
            peer_mac,
            local_mac,
            peer_ip: Ipv4Addr::new(b[14], b[15], b[16], b[17]),
            local_ip: Ipv4Addr::new(b[18], b[19], b[20], b[21]),
            peer_port: u16::from_be_bytes([b[22], b[23]]),
            local_port: u16::from_be_bytes([b[24], b[25]]),
        })
    }

    /// The same route seen from the other end.
    pub fn reversed(&self) -> Route {
        Route {
            encap: self.encap,
            peer_mac: self.local_mac,
            local_mac: self.peer_mac,
            peer_ip: self.local_ip,
            local_ip: self.peer_ip,
            peer_port: self.local_port,
            local_port: self.peer_port,
        }
    }
}

/// Build a frame that carries `clio` from `route.local` to `route.peer`.
pub fn emit_frame(route: &Route, clio: &[u8]) -> Vec<u8> {
    let caps = ChecksumCapabilities::default();
    let eth = |ethertype| EthernetRepr {
        src_addr: EthernetAddress(route.local_mac),
        dst_addr: EthernetAddress(route.peer_mac),
        ethertype,
    };
    match route.encap {
        Encap::RawEthernet => {
            let repr = eth(EthernetProtocol::Unknown(ETHERTYPE_CLIO));
            let mut buf = vec![0u8; repr.buffer_len() + clio.len()];
            let mut f = EthernetFrame::new_unchecked(&mut buf[..]);
            repr.emit(&mut f);
            f.payload_mut().copy_from_slice(clio);
            buf
        }
        Encap::Udp => {
            let udp = UdpRepr {
                src_port: route.local_port,
                dst_port: route.peer_port,
            };
            let ip = Ipv4Repr {
                src_addr: route.local_ip,
                dst_addr: route.peer_ip,
                next_header: IpProtocol::Udp,
                payload_len: udp.header_len() + clio.len(),
                hop_limit: HOP_LIMIT,
            };
            let repr = eth(EthernetProtocol::Ipv4);
            let mut buf = vec![0u8; repr.buffer_len() + ip.buffer_len() + ip.payload_len];
            let mut f = EthernetFrame::new_unchecked(&mut buf[..]);
            repr.emit(&mut f);
            let mut ipp = Ipv4Packet::new_unchecked(f.payload_mut());
            ip.emit(&mut ipp, &caps);
            let mut up = UdpPacket::new_unchecked(ipp.payload_mut());
            udp.emit(
                &mut up,
                &IpAddress::Ipv4(route.local_ip),
                &IpAddress::Ipv4(route.peer_ip),
                clio.len(),
                |p| p.copy_from_slice(clio),
                &caps,
            );
            buf
        }
    }
}

/// Parse a received frame: the route (peer = sender) and the Clio bytes it carries.
/// `udp_port`, if given, is the only UDP destination port accepted.
pub fn parse_frame(frame: &[u8], udp_port: Option<u16>) -> Result<(Route, &[u8]), WireError> {
    let caps = ChecksumCapabilities::default();
    let f =
        EthernetFrame::new_checked(frame).map_err(|_| WireError::Frame("short Ethernet frame"))?;
    let eth = EthernetRepr::parse(&f).map_err(|_| WireError::Frame("bad Ethernet header"))?;
    let mut route = Route {
        peer_mac: eth.src_addr.0,
        local_mac: eth.dst_addr.0,
        ..Route::default()
    };
    let payload_start = ETH_HEADER_LEN;
    match eth.ethertype {
        EthernetProtocol::Unknown(ETHERTYPE_CLIO) => {
            route.encap = Encap::RawEthernet;
            Ok((route, &frame[payload_start..]))
        }
        EthernetProtocol::Ipv4 => {
            let ipp = Ipv4Packet::new_checked(&frame[payload_start..])
                .map_err(|_| WireError::Frame("short IPv4 packet"))?;
            let ip =
                Ipv4Repr::parse(&ipp, &caps).map_err(|_| WireError::Frame("bad IPv4 header"))?;
            if ip.next_header != IpProtocol::Udp {
                return Err(WireError::Frame("IPv4 packet is not UDP"));
            }
            let ip_hl = ipp.header_len() as usize;
            let ip_payload = &frame[payload_start + ip_hl..payload_start + ip_hl + ip.payload_len];
            let up = UdpPacket::new_checked(ip_payload)
                .map_err(|_| WireError::Frame("short UDP datagram"))?;
            let udp = UdpRepr::parse(
                &up,
                &IpAddress::Ipv4(ip.src_addr),
                &IpAddress::Ipv4(ip.dst_addr),
                &caps,
            )
            .map_err(|_| WireError::Frame("bad UDP header or checksum"))?;
            if udp_port.is_some_and(|p| p != udp.dst_port) {
                return Err(WireError::Frame("UDP datagram for another port"));
            }
            route.encap = Encap::Udp;
            route.peer_ip = ip.src_addr;
            route.local_ip = ip.dst_addr;
            route.peer_port = udp.src_port;
            route.local_port = udp.dst_port;
            let start = payload_start + ip_hl + 8;
            let end = payload_start + ip_hl + up.len() as usize;
            Ok((route, &frame[start..end]))
        }
        _ => Err(WireError::Frame("not a Clio frame")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::header::Header;
    use crate::opcode::Opcode;
    use proptest::prelude::*;

    fn arb_route() -> impl Strategy<Value = Route> {
        (
            any::<bool>(),
            any::<[u8; 6]>(),
            any::<[u8; 6]>(),
            any::<u32>(),
            any::<u32>(),
            1u16..,
            1u16..,
        )
            .prop_map(|(raw, pm, lm, pi, li, pp, lp)| Route {
                encap: if raw { Encap::RawEthernet } else { Encap::Udp },
                peer_mac: pm,
                local_mac: lm,
                peer_ip: if raw {
                    Ipv4Addr::UNSPECIFIED
                } else {
                    Ipv4Addr::from(pi)
                },
                local_ip: if raw {
                    Ipv4Addr::UNSPECIFIED
                } else {
                    Ipv4Addr::from(li)
                },
                peer_port: if raw { 0 } else { pp },
                local_port: if raw { 0 } else { lp },
            })
    }

    proptest! {
        #[test]
        fn frames_round_trip(route in arb_route(), payload in prop::collection::vec(any::<u8>(), 0..1024)) {
            let clio = Header::request(Opcode::Write, 1, 9, 0x1000).to_packet(&payload);
            let frame = emit_frame(&route, &clio);
            let (seen, bytes) = parse_frame(&frame, None).unwrap();
            prop_assert_eq!(seen, route.reversed());
            prop_assert_eq!(bytes, &clio[..]);
            prop_assert_eq!(Route::from_bytes(&route.to_bytes()).unwrap(), route);
        }

        #[test]
        fn garbage_frames_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..200)) {
            let _ = parse_frame(&bytes, Some(1));
        }
    }

    #[test]
    fn ethernet_padding_is_trimmed() {
        let route = Route {
            encap: Encap::Udp,
            peer_port: 5,
            local_port: 6,
            ..Route::default()
        };
        let clio = Header::request(Opcode::Read, 1, 1, 0).to_packet(&[]);
        let mut frame = emit_frame(&route, &clio);
        frame.extend_from_slice(&[0u8; 20]);
        let (_, bytes) = parse_frame(&frame, Some(5)).unwrap();
        assert_eq!(bytes, &clio[..]);
        assert!(parse_frame(&frame, Some(7)).is_err());
    }
}
