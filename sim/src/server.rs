//! Network front ends of a memory node.
