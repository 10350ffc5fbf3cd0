//! The one spec of the Clio-style memory node.
//!
//! Everything that two parts of the system must agree on lives here and nowhere else: the wire
//! header and its codec ([`header`]), opcodes and status codes ([`opcode`], [`status`]), the
//! CRC-32C integrity check ([`checksum`], the header's child), Ethernet / IPv4 / UDP encapsulation ([`frame`]), the
//! page-table entry and bucket layout ([`pte`]), the page-table hash ([`pt_hash`]), the physical
//! memory layout of a node ([`layout`]) and the FPGA <-> ARM descriptor rings ([`ring`]).
//! Defaults that size hardware structures are in [`consts`].
//!
//! Byte-level documentation of every field is in `docs/protocol.md`.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod consts;
pub mod epoch;
pub mod frame;
pub mod header;
pub mod kv;
pub mod layout;
mod le;
pub mod offload;
pub mod opcode;
pub mod persist;
pub mod pt_hash;
pub mod pte;
pub mod quota;
pub mod replog;
pub mod ring;
pub mod route_cookie;
pub mod rules;
pub mod status;
pub mod tx;

pub use header::checksum;
pub use header::{Header, Packet, WireError};
pub use opcode::Opcode;
pub use status::Status;
