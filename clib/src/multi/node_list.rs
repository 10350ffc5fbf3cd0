//! The nodes of a [`super::MultiClient`]: each node's engine and accounting, in a list that
//! only grows (a node announced in the pool after the client connected is added), read
//! without a lock on the request path.

use crate::{Client, ClioError, Result};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// Most nodes one client can know (the connect list plus nodes announced later).
pub(super) const MAX_NODES: usize = 256;

pub(super) struct Node {
    pub(super) addr: SocketAddr,
    /// The engine; `None` for a node that was out of the pool's service when this client
    /// connected (dead from the start, never used until readmitted). Replaced when the node
    /// is readmitted (a fresh address space there).
    pub(super) client: RwLock<Option<Arc<Client>>>,
    pub(super) capacity: u64,
    pub(super) used: AtomicU64,
    pub(super) dead: AtomicBool,
    /// The revision of the node's entry in the pool (`Pool::nodes_prefix`) while it was in
    /// service: a dead node whose entry is newer announced itself again (restarted).
    pub(super) entry_rev: AtomicU64,
    /// The node-ordered log this client appends to when the node is a backup (allocated on
    /// first use); its mutex serialises applying it.
    pub(super) log: Mutex<Option<u64>>,
    /// A thread is bringing the node back ([`super::MultiClient::revive`]): another one
    /// leaves it to that one.
    pub(super) reviving: AtomicBool,
}

impl Node {
    /// A node at `addr` on which the client may place `capacity` bytes, with its engine
    /// (`None`: out of service, `dead`).
    pub(super) fn new(
        addr: SocketAddr,
        capacity: u64,
        client: Option<Arc<Client>>,
        dead: bool,
    ) -> Node {
        Node {
            addr,
            client: RwLock::new(client),
            capacity,
            used: AtomicU64::new(0),
            dead: AtomicBool::new(dead),
            entry_rev: AtomicU64::new(0),
            log: Mutex::new(None),
            reviving: AtomicBool::new(false),
        }
    }

    /// The node's engine (an error for a node that was out of service from the start:
    /// treated as a failed node, which it already is).
    pub(super) fn engine(&self) -> Result<Arc<Client>> {
        self.client
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .ok_or_else(|| {
                ClioError::Transport(format!("node {} is out of the pool's service", self.addr))
            })
    }
}

/// The nodes, by index: slots filled once, in order, and never emptied.
pub(super) struct NodeList {
    slots: Vec<OnceLock<Arc<Node>>>,
    len: AtomicUsize,
    /// Serialises additions.
    adding: Mutex<()>,
}

impl NodeList {
    pub(super) fn new(nodes: Vec<Node>) -> Result<NodeList> {
        if nodes.len() > MAX_NODES {
            return Err(ClioError::InvalidArgument(
                "more nodes than a client can use (256)",
            ));
        }
        let slots: Vec<OnceLock<Arc<Node>>> = (0..MAX_NODES).map(|_| OnceLock::new()).collect();
        for (slot, n) in slots.iter().zip(nodes) {
            let _ = slot.set(Arc::new(n));
        }
        let len = slots.iter().take_while(|s| s.get().is_some()).count();
        Ok(NodeList {
            slots,
            len: AtomicUsize::new(len),
            adding: Mutex::new(()),
        })
    }

    /// Nodes known now.
    pub(super) fn len(&self) -> usize {
        self.len.load(Ordering::Acquire)
    }

    /// Node `i`, if there is one.
    pub(super) fn get(&self, i: usize) -> Option<&Arc<Node>> {
        if i < self.len() {
            self.slots.get(i)?.get()
        } else {
            None
        }
    }

    /// Node `i`, which the caller took from this list (a region's replica, a placement
    /// choice): nodes are never removed, so it is there.
    pub(super) fn at(&self, i: usize) -> &Arc<Node> {
        self.get(i)
            .expect("node indices come from this list, which only grows")
    }

    /// Every node known now, with its index.
    pub(super) fn iter(&self) -> impl Iterator<Item = (usize, &Arc<Node>)> {
        (0..self.len()).filter_map(|i| Some((i, self.get(i)?)))
    }

    /// Add a node: its index and `true`, unless one with its address is there already (that
    /// index and `false`: two threads that found the node missing both came here).
    pub(super) fn add(&self, n: Node) -> Result<(usize, bool)> {
        let _g = self.adding.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((i, _)) = self.iter().find(|(_, m)| m.addr == n.addr) {
            return Ok((i, false));
        }
        let i = self.len();
        let slot = self.slots.get(i).ok_or(ClioError::InvalidArgument(
            "more nodes than a client can use (256)",
        ))?;
        let _ = slot.set(Arc::new(n));
        self.len.store(i + 1, Ordering::Release);
        Ok((i, true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(port: u16) -> Node {
        Node::new(SocketAddr::from(([127, 0, 0, 1], port)), 0, None, true)
    }

    /// Threads that all found a node missing (the pool entries' watch and the healer's round)
    /// add it once: one of them is told it added it, the rest get its index.
    #[test]
    fn a_node_added_by_racing_threads_is_added_once() {
        for _ in 0..50 {
            let list = Arc::new(NodeList::new(vec![node(1), node(2)]).unwrap());
            let added: Vec<(usize, bool)> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..8)
                    .map(|_| {
                        let list = Arc::clone(&list);
                        s.spawn(move || list.add(node(3)).unwrap())
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            assert_eq!(list.len(), 3);
            assert_eq!(added.iter().filter(|a| a.1).count(), 1, "{added:?}");
            assert!(added.iter().all(|a| a.0 == 2));
        }
    }
}
