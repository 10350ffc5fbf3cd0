//! Applications on remote memory, each over CLib only (issue 12's applications; more to
//! come: Clio-KV's workload).
//!
//! * [`image`]: a FaaS-style image compression utility: originals and compressed images are
//!   arrays in remote memory, compressed and decompressed at the compute node (Figure 15).
//! * [`radix`]: a radix tree in remote memory, searched either with the node's
//!   pointer-chasing offload (one request per level) or from the compute node (one read per
//!   node visited): the paper's Figure 16.

pub mod image;
pub mod radix;
