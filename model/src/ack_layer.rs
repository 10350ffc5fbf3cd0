//! Ack layer: integrity check of every incoming packet and framing of every response.
//!
//! The node keeps no transport state: a good packet goes on, a corrupt one is answered with
//! a NACK carrying whatever request id it holds (the client retries the whole request), and
//! the response to a request is its acknowledgement.

use clio_proto::header::{field, Packet, FLAG_RESPONSE, HEADER_LEN};
use clio_proto::Status;

/// Verdict on an incoming packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Checksum good.
    Pass,
    /// Checksum bad: send this NACK, execute nothing.
    Nack(Vec<u8>),
    /// Too short to carry a header (or a response sent to the node): drop silently.
    Drop,
}

/// Check a packet.
pub fn verify(bytes: &[u8]) -> Verdict {
    let Ok(p) = Packet::new_checked(bytes) else {
        return if bytes.len() >= HEADER_LEN {
            Verdict::Nack(error_response(bytes, Status::Nack))
        } else {
            Verdict::Drop
        };
    };
    if !p.verify_checksum() {
        return Verdict::Nack(error_response(bytes, Status::Nack));
    }
    if p.flags() & FLAG_RESPONSE != 0 {
        return Verdict::Drop;
    }
    Verdict::Pass
}

/// A payload-less response built from a request's raw header bytes (which need not parse:
/// NACKs and bad-request answers echo what arrived), with a fresh checksum.
pub fn error_response(request: &[u8], status: Status) -> Vec<u8> {
    let mut h = [0u8; HEADER_LEN];
    h.copy_from_slice(&request[..HEADER_LEN]);
    h[field::STATUS] = status as u8;
    h[field::FLAGS] = FLAG_RESPONSE;
    h[field::PAYLOAD_LEN].fill(0);
    // A response never echoes the key (nor the client or reserved bytes).
    h[field::KEY.start..].fill(0);
    let mut p = Packet::new_unchecked(&mut h[..]);
    p.fill_checksum();
    h.to_vec()
}
