//! Return-routability cookies: the node sends a source address more than twice what it
//! received from it only when the request proves it can receive at that address.
//!
//! Anyone admitted holds a RAS key, and a request's source address is whatever the sender
//! wrote into it. Without a check, a 64-byte Read of 1 MiB aimed at a victim's address draws
//! 1 MiB of answers towards the victim (an amplifier). The check (as DNS cookies and QUIC's
//! address validation do it):
//!
//! * The node holds a secret [`RouteSecret`] (the slow path draws it at start and hands it to
//!   the fast path in a `ROUTE_KEY` descriptor, `crate::ring`). The cookie of a source address
//!   is [`route_cookie`]: SipHash-2-4 under the secret of the address ([`route_message`]: the
//!   IPv4 address for UDP, the MAC for raw Ethernet; ports are left out, so every lane of a
//!   host shares its cookie), truncated to 32 bits.
//! * The slow path tells a client its cookie in the answers to Register, Join and Heartbeat
//!   (the high 32 bits of `arg1`, [`answer_arg1`]), which go to the address the request came
//!   from: only a host that receives there learns the cookie of that address.
//! * A request whose answer can be larger than twice the request
//!   ([`needs_route_cookie`]: a Read or PointerChase of more than [`FREE_ANSWER_BYTES`], any
//!   KvGet) must carry the cookie of its source address in the header's `cookie` field; else
//!   it is answered [`crate::Status::RouteUnverified`] (a bare header, the size of the
//!   request) and nothing executes. Every other answer is a bare header or carries at most
//!   what the request did.
//!
//! So an off-path host that writes a victim's address into requests makes the node send the
//! victim at most one header per request it sent (1x), while an honest client keeps full-size
//! reads in one round trip. Until the node has a secret (`ROUTE_KEY` not received yet) the
//! check is off; the slow path sends it before it admits anyone, and nothing but Register
//! passes the key check before someone is admitted.

use crate::frame::{Encap, Route};
use crate::header::HEADER_LEN;
use crate::Opcode;

/// The node's secret for route cookies: SipHash's 128-bit key as two words.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct RouteSecret(pub [u64; 2]);

/// Answer data a request may draw without a cookie: a Read of this many bytes is answered
/// with one header and this much data, twice its own 64-byte header.
pub const FREE_ANSWER_BYTES: u32 = HEADER_LEN as u32;

/// Where a cookie sits in the `arg1` of a Register, Join or Heartbeat answer.
pub const ANSWER_COOKIE_SHIFT: u32 = 32;

/// Whether a request must carry its source address's cookie: its answer can carry more data
/// than [`FREE_ANSWER_BYTES`] (a Read or PointerChase of more than that; a KvGet's value,
/// whose length the request does not bound).
pub fn needs_route_cookie(op: Opcode, total_len: u32) -> bool {
    match op {
        Opcode::KvGet => true,
        Opcode::Read | Opcode::PointerChase => total_len > FREE_ANSWER_BYTES,
        _ => false,
    }
}

/// Opcodes that need a cookie whatever their length (for the RTL's opcode masks).
pub fn route_cookie_always(op: Opcode) -> bool {
    needs_route_cookie(op, 0)
}

/// Opcodes that need a cookie once their `total_len` exceeds [`FREE_ANSWER_BYTES`].
pub fn route_cookie_if_long(op: Opcode) -> bool {
    !route_cookie_always(op) && needs_route_cookie(op, FREE_ANSWER_BYTES + 1)
}

/// The message the cookie authenticates, as SipHash's one final block: the source address's
/// bytes little endian in the low bytes, their count in the top byte (a 4-byte IPv4 address
/// for UDP, a 6-byte MAC for raw Ethernet; the counts keep the two apart).
pub fn route_message(route: &Route) -> u64 {
    match route.encap {
        Encap::Udp => (4u64 << 56) | u32::from_le_bytes(route.peer_ip.octets()) as u64,
        Encap::RawEthernet => {
            let mut b = [0u8; 8];
            b[..6].copy_from_slice(&route.peer_mac);
            (6u64 << 56) | u64::from_le_bytes(b)
        }
    }
}

/// The cookie of `route`'s sender under `secret`.
pub fn route_cookie(secret: &RouteSecret, route: &Route) -> u32 {
    cookie_of_message(secret, route_message(route))
}

/// The cookie of a [`route_message`]: SipHash-2-4 of the message's bytes, low 32 bits.
pub fn cookie_of_message(secret: &RouteSecret, message: u64) -> u32 {
    siphash24_final_block(secret.0, message) as u32
}

/// `arg1` of a Register, Join or Heartbeat answer: the value the opcode defines (a client id,
/// below 2^32) with the cookie of the answer's destination in the high 32 bits.
pub fn answer_arg1(value: u64, cookie: u32) -> u64 {
    (value & 0xFFFF_FFFF) | ((cookie as u64) << ANSWER_COOKIE_SHIFT)
}

/// The cookie an answer's `arg1` carries ([`answer_arg1`]).
pub fn cookie_of_answer(arg1: u64) -> u32 {
    (arg1 >> ANSWER_COOKIE_SHIFT) as u32
}

/// One SipRound on the state `v` (Aumasson and Bernstein, "SipHash: a fast short-input PRF").
pub fn sip_round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(13) ^ v[0];
    v[0] = v[0].rotate_left(32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = v[3].rotate_left(21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = v[1].rotate_left(17) ^ v[2];
    v[2] = v[2].rotate_left(32);
}

/// SipHash's initial state for the key `k`.
pub fn sip_init(k: [u64; 2]) -> [u64; 4] {
    [
        k[0] ^ 0x736f_6d65_7073_6575,
        k[1] ^ 0x646f_7261_6e64_6f6d,
        k[0] ^ 0x6c79_6765_6e65_7261,
        k[1] ^ 0x7465_6462_7974_6573,
    ]
}

/// SipHash-2-4 under `k` of a message shorter than 8 bytes, given as its final block `m`
/// (the bytes little endian, the length in the top byte): two compression rounds, then four
/// finalization rounds.
pub fn siphash24_final_block(k: [u64; 2], m: u64) -> u64 {
    let mut v = sip_init(k);
    v[3] ^= m;
    sip_round(&mut v);
    sip_round(&mut v);
    v[0] ^= m;
    v[2] ^= 0xff;
    for _ in 0..4 {
        sip_round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

#[cfg(test)]
mod tests {
    use super::*;
    use core::net::Ipv4Addr;

    /// The reference: the standard library's SipHash-2-4 over the same bytes.
    #[allow(deprecated)]
    fn std_siphash(k: [u64; 2], bytes: &[u8]) -> u64 {
        use core::hash::Hasher;
        let mut h = core::hash::SipHasher::new_with_keys(k[0], k[1]);
        h.write(bytes);
        h.finish()
    }

    #[test]
    fn the_final_block_is_siphash_2_4_of_the_address_bytes() {
        // The paper's test vector: key 00..0f, the empty message.
        let k = [0x0706_0504_0302_0100, 0x0f0e_0d0c_0b0a_0908];
        assert_eq!(siphash24_final_block(k, 0), 0x726f_db47_dd0e_0e31);
        let mut x = 0x1234_5678_9abc_def0u64;
        for _ in 0..200 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let k = [x, x.rotate_left(17) ^ 0x55];
            let ip = Ipv4Addr::from((x >> 20) as u32);
            let udp = Route {
                peer_ip: ip,
                ..Route::default()
            };
            let m = route_message(&udp);
            assert_eq!(siphash24_final_block(k, m), std_siphash(k, &ip.octets()));
            let mac = ((x >> 3) & 0xFFFF_FFFF_FFFF).to_le_bytes();
            let raw = Route {
                encap: Encap::RawEthernet,
                peer_mac: mac[..6].try_into().unwrap(),
                ..Route::default()
            };
            let m = route_message(&raw);
            assert_eq!(siphash24_final_block(k, m), std_siphash(k, &mac[..6]));
        }
    }

    #[test]
    fn ports_do_not_matter_addresses_and_secrets_do() {
        let s = RouteSecret([1, 2]);
        let a = Route::udp(
            "10.0.0.1:5000".parse().unwrap(),
            "10.0.0.9:9".parse().unwrap(),
        );
        let lane = Route::udp(
            "10.0.0.1:5001".parse().unwrap(),
            "10.0.0.9:9".parse().unwrap(),
        );
        let b = Route::udp(
            "10.0.0.2:5000".parse().unwrap(),
            "10.0.0.9:9".parse().unwrap(),
        );
        assert_eq!(route_cookie(&s, &a), route_cookie(&s, &lane));
        assert_ne!(route_cookie(&s, &a), route_cookie(&s, &b));
        assert_ne!(route_cookie(&s, &a), route_cookie(&RouteSecret([1, 3]), &a));
    }

    #[test]
    fn only_answers_larger_than_twice_the_request_need_a_cookie() {
        for op in Opcode::ALL {
            let long = needs_route_cookie(op, u32::MAX);
            assert_eq!(
                long,
                matches!(op, Opcode::Read | Opcode::PointerChase | Opcode::KvGet),
                "{op:?}"
            );
            assert_eq!(route_cookie_always(op), op == Opcode::KvGet);
            assert_eq!(
                route_cookie_if_long(op),
                matches!(op, Opcode::Read | Opcode::PointerChase)
            );
        }
        assert!(!needs_route_cookie(Opcode::Read, FREE_ANSWER_BYTES));
        assert!(needs_route_cookie(Opcode::Read, FREE_ANSWER_BYTES + 1));
        assert_eq!(cookie_of_answer(answer_arg1(7, 0xDEAD_BEEF)), 0xDEAD_BEEF);
        assert_eq!(answer_arg1(7, 0xDEAD_BEEF) & 0xFFFF, 7);
    }
}
