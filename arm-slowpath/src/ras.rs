//! Remote address spaces (RAS): who may open which PID, with which key, and which members are
//! still alive.
//!
//! A RAS is named by its PID and opened by a 64-bit secret the registry draws from the OS
//! CSPRNG when the first process registers. Further processes, on any CN, join it with the
//! key and become members with their own client id (which tags their idempotence-ring
//! entries). Every member holds a lease renewed by heartbeats and slow-path requests; a
//! member that leaves or whose lease ends is removed, and when the last member is gone the RAS
//! is torn down. The registry only decides; the [`crate::SlowPath`] turns its decisions into
//! descriptors (key-table writes, ring releases, PTE clears, TLB shootdowns).

use clio_proto::consts::{KEY_TABLE_ENTRIES, MAX_MEMBERS_PER_RAS, RING_MEMBERS};
use rand::rngs::{OsRng, StdRng};
use rand::{RngCore, SeedableRng};
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};
use thiserror::Error;

/// Where RAS keys come from.
#[derive(Debug)]
pub enum KeySource {
    /// The operating system's CSPRNG (`getrandom`): what a node uses.
    Os,
    /// A seeded generator: only for tests that replay one request stream into two nodes
    /// (model-vs-RTL conformance) and need both to draw the same keys. Never for a real node.
    Seeded(Box<StdRng>),
}

impl KeySource {
    /// A deterministic source (tests only).
    pub fn seeded(seed: u64) -> KeySource {
        KeySource::Seeded(Box::new(StdRng::seed_from_u64(seed)))
    }

    /// A fresh key; never 0 (0 marks an empty key-table entry).
    pub fn draw(&mut self) -> u64 {
        loop {
            let k = match self {
                KeySource::Os => OsRng.next_u64(),
                KeySource::Seeded(r) => r.next_u64(),
            };
            if k != 0 {
                return k;
            }
        }
    }
}

/// Why a registry operation was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum RasError {
    /// Every PID of the key table is in use.
    #[error("the key table is full ({} remote address spaces)", KEY_TABLE_ENTRIES - 1)]
    KeyTableFull,
    /// The RAS has [`MAX_MEMBERS_PER_RAS`] members already.
    #[error("the remote address space has {MAX_MEMBERS_PER_RAS} members already")]
    MembersFull,
    /// Every client id (a row of the fast path's idempotence table) is held by a member.
    #[error("every client id of the node is in use ({} members)", RING_MEMBERS - 1)]
    ClientIdsFull,
    /// No such RAS.
    #[error("no remote address space {0}")]
    UnknownRas(u16),
    /// The RAS exists but this member is not (or no longer) in it.
    #[error("client {client} is not a member of remote address space {pid}")]
    UnknownMember {
        /// RAS.
        pid: u16,
        /// Member.
        client: u16,
    },
    /// A SetEpoch asked for an epoch older than the RAS's (or for 0).
    #[error("remote address space holds epoch {held}; {asked} is older")]
    StaleEpoch {
        /// The RAS's epoch.
        held: u16,
        /// The epoch asked for.
        asked: u16,
    },
}

#[derive(Debug)]
struct Member {
    deadline: Instant,
    nonce: u64,
}

#[derive(Debug)]
struct Space {
    key: u64,
    /// `clio_proto::epoch`: 0 until a SetEpoch raises it.
    epoch: u16,
    members: HashMap<u16, Member>,
}

/// One RAS as the metadata log's snapshot records it: `(pid, key, epoch, members)`, each
/// member `(client, nonce)`.
pub type SpaceSnapshot = (u16, u64, u16, Vec<(u16, u64)>);

/// A member that is gone (left, or lease ended), and whether its RAS went with it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departure {
    /// RAS.
    pub pid: u16,
    /// The member.
    pub client: u16,
    /// The RAS has no member left: tear it down.
    pub ras_empty: bool,
}

/// The registry of remote address spaces.
#[derive(Debug)]
pub struct Registry {
    spaces: HashMap<u16, Space>,
    free_pids: VecDeque<u16>,
    /// Client ids no member holds, node-wide (each names a row of the fast path's
    /// idempotence table), handed out first-in first-out like PIDs.
    free_clients: VecDeque<u16>,
    nonces: HashMap<u64, (u16, u16)>,
    keys: KeySource,
    lease: Duration,
}

impl Registry {
    /// An empty registry: PIDs `1..=pids` free (at most `KEY_TABLE_ENTRIES - 1`) and client
    /// ids `1..=clients` (at most `RING_MEMBERS - 1`), each handed out in order and recycled
    /// first-in first-out (a retired one comes back only after every other free one).
    pub fn new(keys: KeySource, lease: Duration, pids: u16, clients: u16) -> Registry {
        let last = pids.min((KEY_TABLE_ENTRIES - 1) as u16);
        let last_client = clients.min((RING_MEMBERS - 1) as u16);
        Registry {
            spaces: HashMap::new(),
            free_pids: (1..=last).collect(),
            free_clients: (1..=last_client).collect(),
            nonces: HashMap::new(),
            keys,
            lease,
        }
    }

    /// The lease of a member.
    pub fn lease(&self) -> Duration {
        self.lease
    }

    /// Remote address spaces in use.
    pub fn len(&self) -> usize {
        self.spaces.len()
    }

    /// Whether no RAS exists.
    pub fn is_empty(&self) -> bool {
        self.spaces.is_empty()
    }

    /// Whether `pid` names a live RAS.
    pub fn exists(&self, pid: u16) -> bool {
        self.spaces.contains_key(&pid)
    }

    /// Members of a RAS (0 if it does not exist).
    pub fn members(&self, pid: u16) -> usize {
        self.spaces.get(&pid).map_or(0, |s| s.members.len())
    }

    /// The key of a RAS.
    pub fn key(&self, pid: u16) -> Option<u64> {
        self.spaces.get(&pid).map(|s| s.key)
    }

    /// The epoch of a RAS (`clio_proto::epoch`; 0: unfenced).
    pub fn epoch(&self, pid: u16) -> Option<u16> {
        self.spaces.get(&pid).map(|s| s.epoch)
    }

    /// Raise a RAS's epoch to `epoch`: `Ok(true)` if it changed, `Ok(false)` if it held that
    /// epoch already, [`RasError::StaleEpoch`] (nothing changed) if `epoch` is older than the
    /// RAS's or is 0 (an epoch never goes back to unfenced).
    pub fn raise_epoch(&mut self, pid: u16, epoch: u16) -> Result<bool, RasError> {
        let s = self.spaces.get_mut(&pid).ok_or(RasError::UnknownRas(pid))?;
        if epoch == clio_proto::epoch::UNFENCED || clio_proto::epoch::older(s.epoch, epoch) {
            return Err(RasError::StaleEpoch {
                held: s.epoch,
                asked: epoch,
            });
        }
        let changed = s.epoch != epoch;
        s.epoch = epoch;
        Ok(changed)
    }

    /// Every live RAS with its key and member count (for operators: `clio board` stats).
    pub fn list(&self) -> Vec<(u16, usize)> {
        let mut v: Vec<_> = self
            .spaces
            .iter()
            .map(|(p, s)| (*p, s.members.len()))
            .collect();
        v.sort_unstable();
        v
    }

    /// Restore a RAS from the log (recovery): its PID leaves the free list.
    pub fn restore_space(&mut self, pid: u16, key: u64, epoch: u16) {
        self.free_pids.retain(|p| *p != pid);
        self.spaces.insert(
            pid,
            Space {
                key,
                epoch,
                members: HashMap::new(),
            },
        );
    }

    /// Restore a member from the log with a fresh lease (a live client renews it; a dead one
    /// is removed when it ends).
    pub fn restore_member(&mut self, pid: u16, client: u16, nonce: u64, now: Instant) {
        let lease = self.lease;
        if let Some(s) = self.spaces.get_mut(&pid) {
            s.members.insert(
                client,
                Member {
                    deadline: now + lease,
                    nonce,
                },
            );
            self.free_clients.retain(|c| *c != client);
            self.nonces.insert(nonce, (pid, client));
        }
    }

    /// Every RAS with its key, epoch and members `(client, nonce)`, in order (the log's
    /// snapshot).
    pub fn snapshot(&self) -> Vec<SpaceSnapshot> {
        let mut v: Vec<_> = self
            .spaces
            .iter()
            .map(|(pid, s)| {
                let mut m: Vec<(u16, u64)> = s.members.iter().map(|(c, m)| (*c, m.nonce)).collect();
                m.sort_unstable();
                (*pid, s.key, s.epoch, m)
            })
            .collect();
        v.sort_unstable_by_key(|x| x.0);
        v
    }

    /// Client ids no member holds, in the order they are handed out.
    pub fn free_clients(&self) -> Vec<u16> {
        self.free_clients.iter().copied().collect()
    }

    /// The member a nonce already created, if any (a retried Register or Join).
    pub fn by_nonce(&self, nonce: u64) -> Option<(u16, u16)> {
        self.nonces.get(&nonce).copied()
    }

    fn add_member(&mut self, pid: u16, nonce: u64, now: Instant) -> Result<u16, RasError> {
        let lease = self.lease;
        let s = self.spaces.get_mut(&pid).ok_or(RasError::UnknownRas(pid))?;
        if s.members.len() >= MAX_MEMBERS_PER_RAS {
            return Err(RasError::MembersFull);
        }
        // Client ids are node-wide, never 0, and not reused while their holder is a member.
        let c = self
            .free_clients
            .pop_front()
            .ok_or(RasError::ClientIdsFull)?;
        s.members.insert(
            c,
            Member {
                deadline: now + lease,
                nonce,
            },
        );
        self.nonces.insert(nonce, (pid, c));
        Ok(c)
    }

    /// Create a RAS with a fresh key and make the caller its first member:
    /// `(pid, key, client)`. A retry with the same nonce gets the same answer.
    pub fn register(&mut self, nonce: u64, now: Instant) -> Result<(u16, u64, u16), RasError> {
        if let Some((pid, client)) = self.by_nonce(nonce) {
            let key = self.key(pid).ok_or(RasError::UnknownRas(pid))?;
            return Ok((pid, key, client));
        }
        let pid = self.free_pids.pop_front().ok_or(RasError::KeyTableFull)?;
        let key = self.keys.draw();
        self.spaces.insert(
            pid,
            Space {
                key,
                epoch: clio_proto::epoch::UNFENCED,
                members: HashMap::new(),
            },
        );
        let client = match self.add_member(pid, nonce, now) {
            Ok(c) => c,
            Err(e) => {
                // No client id left: the RAS goes again, its PID first in line.
                self.spaces.remove(&pid);
                self.free_pids.push_front(pid);
                return Err(e);
            }
        };
        Ok((pid, key, client))
    }

    /// Add a member to an existing RAS (the fast path already checked the key). A retry with
    /// the same nonce gets the same client id.
    pub fn join(&mut self, pid: u16, nonce: u64, now: Instant) -> Result<u16, RasError> {
        match self.by_nonce(nonce) {
            Some((p, c)) if p == pid => Ok(c),
            _ => self.add_member(pid, nonce, now),
        }
    }

    /// Renew a member's lease.
    pub fn renew(&mut self, pid: u16, client: u16, now: Instant) -> Result<(), RasError> {
        let lease = self.lease;
        let m = self
            .spaces
            .get_mut(&pid)
            .ok_or(RasError::UnknownRas(pid))?
            .members
            .get_mut(&client)
            .ok_or(RasError::UnknownMember { pid, client })?;
        m.deadline = now + lease;
        Ok(())
    }

    /// A secret nonce from the key source (the slow path's own registrations: a nonce that
    /// anyone could guess would let a compute node re-register as that member and be handed
    /// its key).
    pub fn draw_nonce(&mut self) -> u64 {
        self.keys.draw()
    }

    /// Remove one member.
    pub fn leave(&mut self, pid: u16, client: u16) -> Result<Departure, RasError> {
        let s = self.spaces.get_mut(&pid).ok_or(RasError::UnknownRas(pid))?;
        let m = s
            .members
            .remove(&client)
            .ok_or(RasError::UnknownMember { pid, client })?;
        self.nonces.remove(&m.nonce);
        self.free_clients.push_back(client);
        Ok(Departure {
            pid,
            client,
            ras_empty: s.members.is_empty(),
        })
    }

    /// Remove every member of a RAS (the caller tears it down): the departures.
    pub fn evict_all(&mut self, pid: u16) -> Result<Vec<Departure>, RasError> {
        let s = self.spaces.get_mut(&pid).ok_or(RasError::UnknownRas(pid))?;
        let mut out: Vec<Departure> = s
            .members
            .drain()
            .map(|(client, m)| {
                self.nonces.remove(&m.nonce);
                Departure {
                    pid,
                    client,
                    ras_empty: false,
                }
            })
            .collect();
        out.sort_unstable_by_key(|d| d.client);
        self.free_clients.extend(out.iter().map(|d| d.client));
        if let Some(last) = out.last_mut() {
            last.ras_empty = true;
        }
        Ok(out)
    }

    /// Withdraw an empty RAS without handing its PID out again yet (its Clio-KV records are
    /// still to be freed); [`Registry::release_pid`] returns it to the free list.
    pub fn withdraw(&mut self, pid: u16) -> bool {
        self.spaces.remove(&pid).is_some()
    }

    /// A withdrawn RAS's PID goes to the back of the free list.
    pub fn release_pid(&mut self, pid: u16) {
        if !self.spaces.contains_key(&pid) && !self.free_pids.contains(&pid) {
            self.free_pids.push_back(pid);
        }
    }

    /// Retire an empty RAS: its PID goes to the back of the free list.
    pub fn retire(&mut self, pid: u16) {
        if self.spaces.remove(&pid).is_some() {
            self.free_pids.push_back(pid);
        }
    }

    /// Members whose lease ended by `now`, removed, in a stable order.
    pub fn expire(&mut self, now: Instant) -> Vec<Departure> {
        let mut gone: Vec<(u16, u16)> = self
            .spaces
            .iter()
            .flat_map(|(pid, s)| {
                s.members
                    .iter()
                    .filter(|(_, m)| m.deadline <= now)
                    .map(move |(c, _)| (*pid, *c))
            })
            .collect();
        gone.sort_unstable();
        gone.into_iter()
            .filter_map(|(pid, client)| self.leave(pid, client).ok())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reg() -> Registry {
        Registry::new(
            KeySource::seeded(1),
            Duration::from_secs(10),
            crate::limits::ALL_PIDS,
            crate::limits::ALL_CLIENTS,
        )
    }

    #[test]
    fn register_join_leave() {
        let now = Instant::now();
        let mut r = reg();
        let (pid, key, c1) = r.register(11, now).unwrap();
        assert_eq!((pid, c1), (1, 1));
        assert_ne!(key, 0);
        assert_eq!(
            r.register(11, now).unwrap(),
            (pid, key, c1),
            "retry, same answer"
        );
        let c2 = r.join(pid, 22, now).unwrap();
        assert_ne!(c2, c1);
        assert_eq!(r.join(pid, 22, now).unwrap(), c2, "retried join");
        assert_eq!(r.members(pid), 2);
        assert!(!r.leave(pid, c1).unwrap().ras_empty);
        assert!(r.leave(pid, c2).unwrap().ras_empty);
        assert_eq!(
            r.leave(pid, c2),
            Err(RasError::UnknownMember { pid, client: c2 })
        );
        r.retire(pid);
        assert!(!r.exists(pid));
        // PIDs are recycled first-in first-out: the next one is 2, not the retired 1.
        assert_eq!(r.register(33, now).unwrap().0, 2);
    }

    #[test]
    fn keys_differ_and_os_keys_are_random() {
        let now = Instant::now();
        let mut r = Registry::new(
            KeySource::Os,
            Duration::from_secs(1),
            crate::limits::ALL_PIDS,
            crate::limits::ALL_CLIENTS,
        );
        let a = r.register(1, now).unwrap().1;
        let b = r.register(2, now).unwrap().1;
        assert_ne!(a, b);
        let mut s1 = KeySource::seeded(5);
        let mut s2 = KeySource::seeded(5);
        assert_eq!(s1.draw(), s2.draw(), "seeded sources agree (conformance)");
    }

    #[test]
    fn leases_expire_and_renew() {
        let t0 = Instant::now();
        let mut r = Registry::new(
            KeySource::seeded(2),
            Duration::from_millis(100),
            crate::limits::ALL_PIDS,
            crate::limits::ALL_CLIENTS,
        );
        let (pid, _, c1) = r.register(1, t0).unwrap();
        let c2 = r.join(pid, 2, t0).unwrap();
        r.renew(pid, c2, t0 + Duration::from_millis(80)).unwrap();
        let gone = r.expire(t0 + Duration::from_millis(120));
        assert_eq!(
            gone,
            vec![Departure {
                pid,
                client: c1,
                ras_empty: false
            }]
        );
        let gone = r.expire(t0 + Duration::from_millis(200));
        assert_eq!(gone.len(), 1);
        assert!(gone[0].ras_empty);
    }

    #[test]
    fn tables_full() {
        let now = Instant::now();
        let mut r = reg();
        for n in 0..crate::limits::ALL_CLIENTS as u64 {
            r.register(n, now).unwrap();
        }
        assert_eq!(r.register(u64::MAX, now), Err(RasError::ClientIdsFull));
        assert_eq!(
            r.len(),
            crate::limits::ALL_CLIENTS as usize,
            "no RAS left behind"
        );
        let mut r = Registry::new(KeySource::seeded(1), Duration::from_secs(10), 3, 100);
        for n in 0..3 {
            r.register(n, now).unwrap();
        }
        assert_eq!(r.register(99, now), Err(RasError::KeyTableFull));
    }

    #[test]
    fn client_ids_are_node_wide_and_come_back_last() {
        let now = Instant::now();
        let mut r = Registry::new(KeySource::seeded(1), Duration::from_secs(10), 10, 3);
        let (a, _, ca) = r.register(1, now).unwrap();
        let (b, _, cb) = r.register(2, now).unwrap();
        let cb2 = r.join(b, 3, now).unwrap();
        assert_eq!((ca, cb, cb2), (1, 2, 3), "one sequence across RASes");
        assert_eq!(r.join(a, 4, now), Err(RasError::ClientIdsFull));
        r.leave(a, ca).unwrap();
        assert_eq!(r.join(b, 5, now), Ok(ca), "the only free id");
        r.leave(b, cb).unwrap();
        r.leave(b, ca).unwrap();
        assert_eq!(r.free_clients(), vec![cb, ca], "first in, first out");
    }
}
