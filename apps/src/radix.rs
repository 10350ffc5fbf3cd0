//! A radix tree (trie over the bytes of 32-bit keys, 4 levels) in remote memory, laid out for
//! the pointer-chasing offload (`proto::offload::chase`) and searched two ways:
//!
//! * [`RadixTree::get_offloaded`]: one `rchase` per level walks that level's sibling list at
//!   the node and returns the matching child (4 requests per lookup, whatever the tree's size);
//! * [`RadixTree::get_from_cn`]: the compute node reads node after node (one round trip per
//!   node visited: the siblings before the match, on every level).
//!
//! A node is 32 bytes: `next` sibling (0 = last), `label` (the key byte of this edge),
//! `child` (first node of the next level; on the last level, 0), `value` (on the last level:
//! the value stored under the key, non-zero). Siblings are kept in insertion order.

use clio_clib::{ChaseLayout, ChaseOutcome, Client, ClioError};
use std::collections::BTreeMap;
use thiserror::Error;

/// Bytes of one node.
pub const NODE_BYTES: u64 = 32;
const NEXT: u16 = 0;
const LABEL: u16 = 8;
const CHILD: u16 = 16;
/// Levels: one per key byte.
pub const LEVELS: usize = 4;

/// The chase layout of a level's sibling list: compare the label, follow `next`, return
/// `child` and `value` (16 bytes).
const LAYOUT: ChaseLayout = ChaseLayout {
    key_offset: LABEL,
    next_offset: NEXT,
    value_offset: CHILD,
    max_hops: 256,
};

/// Errors of the radix tree.
#[derive(Debug, Error)]
pub enum RadixError {
    /// CLib refused or the node answered an error.
    #[error(transparent)]
    Clio(#[from] ClioError),
    /// Value 0 means "absent" in this layout.
    #[error("value 0 cannot be stored (it marks an absent key)")]
    ZeroValue,
    /// A level's sibling list was longer than 256 (corrupt tree) or a chase answered a
    /// value of the wrong length.
    #[error("corrupt tree at level {level}")]
    Corrupt {
        /// The level.
        level: usize,
    },
}

/// A radix tree stored in one remote allocation.
pub struct RadixTree {
    root: u64,
    nodes: u64,
}

/// Lookup cost as seen from the compute node.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cost {
    /// Requests sent (round trips).
    pub requests: u64,
}

impl RadixTree {
    /// Build the tree of `entries` (key -> non-zero value) locally and write it to a new
    /// allocation of `c` in large writes.
    pub fn build(c: &Client, entries: &BTreeMap<u32, u64>) -> Result<RadixTree, RadixError> {
        if entries.values().any(|&v| v == 0) {
            return Err(RadixError::ZeroValue);
        }
        // Nodes as (next, label, child, value), index 0 unused (0 = null).
        let mut nodes: Vec<[u64; 4]> = vec![[0; 4]];
        // First child of each node (index), and the last of its children to append to.
        let mut first: Vec<u64> = vec![0];
        let mut last: Vec<u64> = vec![0];
        // A virtual root node (index 1) whose children are level 0.
        nodes.push([0; 4]);
        first.push(0);
        last.push(0);
        for (&key, &value) in entries {
            let mut parent = 1usize;
            for (level, byte) in key.to_be_bytes().into_iter().enumerate() {
                // Find the child with this label (linear, as the searches do).
                let mut at = first[parent];
                while at != 0 && nodes[at as usize][1] != byte as u64 {
                    at = nodes[at as usize][0];
                }
                if at == 0 {
                    at = nodes.len() as u64;
                    nodes.push([0, byte as u64, 0, 0]);
                    first.push(0);
                    last.push(0);
                    match last[parent] {
                        0 => first[parent] = at,
                        l => nodes[l as usize][0] = at,
                    }
                    last[parent] = at;
                }
                if level + 1 == LEVELS {
                    nodes[at as usize][3] = value;
                }
                parent = at as usize;
            }
        }
        let count = nodes.len() as u64;
        let base = c.ralloc(count * NODE_BYTES)?;
        let addr = |i: u64| if i == 0 { 0 } else { base + i * NODE_BYTES };
        let mut image = Vec::with_capacity((count * NODE_BYTES) as usize);
        for (i, n) in nodes.iter().enumerate() {
            let child = first[i];
            for w in [addr(n[0]), n[1], addr(child), n[3]] {
                image.extend_from_slice(&w.to_le_bytes());
            }
        }
        for (k, chunk) in image.chunks(1 << 20).enumerate() {
            c.rwrite(base + (k as u64) * (1 << 20), chunk)?;
        }
        Ok(RadixTree {
            root: addr(first[1]),
            nodes: count - 2,
        })
    }

    /// Nodes in the tree.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// Look `key` up with the pointer-chasing offload: one request per level.
    pub fn get_offloaded(&self, c: &Client, key: u32) -> Result<(Option<u64>, Cost), RadixError> {
        let mut list = self.root;
        let mut cost = Cost::default();
        for (level, byte) in key.to_be_bytes().into_iter().enumerate() {
            if list == 0 {
                return Ok((None, cost));
            }
            cost.requests += 1;
            match c.rchase(list, byte as u64, LAYOUT, 16)? {
                ChaseOutcome::Found { value, .. } => {
                    let word = |i: usize| {
                        value
                            .get(i * 8..i * 8 + 8)
                            .and_then(|b| b.try_into().ok())
                            .map(u64::from_le_bytes)
                            .ok_or(RadixError::Corrupt { level })
                    };
                    if level + 1 == LEVELS {
                        return Ok((Some(word(1)?).filter(|v| *v != 0), cost));
                    }
                    list = word(0)?;
                }
                ChaseOutcome::NotFound { .. } => return Ok((None, cost)),
                ChaseOutcome::HopLimit { .. } => return Err(RadixError::Corrupt { level }),
            }
        }
        Ok((None, cost))
    }

    /// Look `key` up from the compute node: read each node visited (one round trip each).
    pub fn get_from_cn(&self, c: &Client, key: u32) -> Result<(Option<u64>, Cost), RadixError> {
        let mut list = self.root;
        let mut cost = Cost::default();
        for (level, byte) in key.to_be_bytes().into_iter().enumerate() {
            let mut at = list;
            let mut hops = 0;
            let node = loop {
                if at == 0 {
                    return Ok((None, cost));
                }
                hops += 1;
                if hops > 256 {
                    return Err(RadixError::Corrupt { level });
                }
                cost.requests += 1;
                let b = c.rread(at, NODE_BYTES as usize)?;
                let w =
                    |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
                if w(1) == byte as u64 {
                    break [w(0), w(1), w(2), w(3)];
                }
                at = w(0);
            };
            if level + 1 == LEVELS {
                return Ok((Some(node[3]).filter(|v| *v != 0), cost));
            }
            list = node[2];
        }
        Ok((None, cost))
    }
}
