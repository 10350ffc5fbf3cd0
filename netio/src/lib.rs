//! Socket I/O for Clio packets, shared by both ends: CLib's transports (`clio-clib`) and the
//! software memory node's front ends (`clio-sim`) use the same batched UDP calls
//! ([`mmsg`]) and the same AF_XDP socket ([`xdp`]), so neither end depends on the other.
//!
//! Everything arriving here is hostile: lengths come from the kernel and are checked before
//! any slice is taken.
#![warn(missing_docs)]

pub mod mmsg;
pub mod xdp;

/// A socket could not be set up or used; the message says which step failed and, where the
/// cause is usually a missing privilege or kernel feature, which.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct NetError(pub String);

/// This crate's result.
pub type Result<T> = std::result::Result<T, NetError>;
