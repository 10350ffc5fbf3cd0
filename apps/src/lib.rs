//! Applications on remote memory, each over CLib only (issue 12's applications; more to
//! come: image compression, Clio-KV's workload).
//!
//! * [`radix`]: a radix tree in remote memory, searched either with the node's
//!   pointer-chasing offload (one request per level) or from the compute node (one read per
//!   node visited): the paper's Figure 16.

pub mod radix;
