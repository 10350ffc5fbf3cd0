//! The extend path's offload units (Clio section 4.6), behind one interface: an offload sees
//! the node's memory only through [`OffloadMemory`], which translates in the request's RAS
//! exactly as reads and writes do (TLB, walker, page fault, permissions), so an offload can
//! touch nothing its caller could not. The board's dispatch (`board/extend.rs`) hands extend
//! opcodes to the unit that serves them; docs/offloads.md explains how to write one, with the
//! pointer chaser as the worked example.

pub mod clio_kv;
pub mod pointer_chase;

use clio_proto::Status;

/// Memory as an offload sees it: one RAS (the caller's for the pointer chaser, the store's
/// own for Clio-KV).
pub trait OffloadMemory {
    /// Read `buf.len()` bytes at `va`; a status when any byte is not readable (nothing is
    /// read then).
    fn read(&mut self, va: u64, buf: &mut [u8]) -> Result<(), Status>;

    /// Write `data` at `va`; a status when any byte is not writable (nothing is written then).
    fn write(&mut self, va: u64, data: &[u8]) -> Result<(), Status>;

    /// Write the 8-byte little-endian word `v` at `va`.
    fn write_word(&mut self, va: u64, v: u64) -> Result<(), Status> {
        self.write(va, &v.to_le_bytes())
    }

    /// The 8-byte little-endian word at `va`.
    fn read_word(&mut self, va: u64) -> Result<u64, Status> {
        let mut w = [0u8; 8];
        self.read(va, &mut w)?;
        Ok(u64::from_le_bytes(w))
    }
}

/// What an offload answers: the response header's `arg0`/`arg1` and its payload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffloadAnswer {
    /// `arg0` of the response.
    pub arg0: u64,
    /// `arg1` of the response.
    pub arg1: u64,
    /// Payload of the (single) response packet.
    pub payload: Vec<u8>,
}
