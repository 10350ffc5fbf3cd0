//! A response job as the executor hands it to the read-data stage, with the bytes the
//! response must leave the node with: the testbenches of the read-data stage and of the
//! response side (`fastpath::respond`) draw theirs here.

use super::Rng;
use clio_proto::checksum::packet_crc;
use clio_proto::header::{field, HEADER_LEN};

/// A job and the response it must produce.
#[derive(Debug, Clone)]
pub struct ResponseJob {
    /// Payload-less (the header beat alone).
    pub only: bool,
    /// A read's lane offset in its first DRAM block.
    pub o: u64,
    /// A read's DRAM blocks (R beats).
    pub kt: u64,
    /// The response's length in bytes, header included.
    pub len: u64,
    /// The response header, bytes 0..48, the checksum zero (the stage fills it in).
    pub hdr: [u8; 48],
    /// The response's route.
    pub route: [u8; 32],
    /// The read's DRAM blocks (`kt` of them).
    pub blocks: Vec<[u8; 64]>,
    /// The response's bytes, the checksum filled in.
    pub want: Vec<u8>,
}

impl ResponseJob {
    /// A random header and route; payload-less if `only`, else a read of 1 to `max_payload`
    /// bytes at a random lane offset, its blocks random.
    pub fn random(r: &mut Rng, only: bool, max_payload: u64) -> ResponseJob {
        let mut hdr = [0u8; 48];
        hdr.copy_from_slice(&r.bytes(48));
        hdr[field::CHECKSUM].fill(0);
        let mut route = [0u8; 32];
        route.copy_from_slice(&r.bytes(32));
        let (o, plen) = if only {
            (0, 0)
        } else {
            (r.below(64), 1 + r.below(max_payload))
        };
        let kt = if only { 0 } else { (o + plen).div_ceil(64) };
        let blocks: Vec<[u8; 64]> = (0..kt)
            .map(|_| {
                let mut b = [0u8; 64];
                b.copy_from_slice(&r.bytes(64));
                b
            })
            .collect();
        let flat: Vec<u8> = blocks.iter().flatten().copied().collect();
        let mut want = hdr.to_vec();
        want.extend_from_slice(&[0u8; 16]);
        want.extend_from_slice(&flat[o as usize..(o + plen) as usize]);
        let crc = packet_crc(&want);
        want[field::CHECKSUM].copy_from_slice(&crc.to_be_bytes());
        ResponseJob {
            only,
            o,
            kt,
            len: HEADER_LEN as u64 + plen,
            hdr,
            route,
            blocks,
            want,
        }
    }
}
