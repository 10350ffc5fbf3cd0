//! The stored form of a shared space (`/clio/pools/<pool>/spaces/<name>`,
//! docs/replication.md "Several writers"): the address space every writer of the space
//! joins at each node, the node-ordered log each node keeps for the space, and the region
//! table. Text, one fact per line, readable with `etcdctl get`:
//!
//! ```text
//! clio-space 1
//! next 0x100600000
//! node 10.0.0.7:48850 5:0123456789abcdef log 0x200000
//! region 0x100000000 len 4096 target 2 10.0.0.7:48850@0x10000 +10.0.0.9:48850@0x10000#9f3c0a11d2e4b781
//! ```
//!
//! A replica written `+node@va#token` is *joining*: being filled by re-replication by the
//! writer whose lock token that is (`space.rs`); it gets every write's records but is neither
//! read nor promoted until the filler makes it a replica.
//!
//! A region's replicas are listed primary first, as they were placed; which of them serve
//! is the pool's view (a node out of service is skipped, so the first one in service is the
//! primary), the same for every writer. What the store holds is checked before it is used:
//! a region naming a node the space does not list, a replica twice on one node, zero
//! lengths, overlapping regions and unknown lines are errors naming the line.

use super::StoreError;
use crate::Credentials;
use std::collections::BTreeMap;
use std::net::SocketAddr;

const MAGIC: &str = "clio-space 1";

/// One node of a shared space.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct SpaceNode {
    /// The address space the writers share there.
    pub(super) creds: Credentials,
    /// The space's node-ordered log there (0: not allocated yet).
    pub(super) log: u64,
}

/// One region of a shared space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SpaceRegion {
    pub(super) len: u64,
    /// Replicas asked for at allocation.
    pub(super) target: usize,
    /// `(node, va)` of every replica as placed, primary first.
    pub(super) replicas: Vec<(SocketAddr, u64)>,
    /// Replicas being filled: `(node, va, token of the writer filling it)`.
    pub(super) joining: Vec<(SocketAddr, u64, u64)>,
}

/// A shared space's record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct SpaceRecord {
    /// The next global address to hand out.
    pub(super) next: u64,
    pub(super) nodes: BTreeMap<SocketAddr, SpaceNode>,
    pub(super) regions: BTreeMap<u64, SpaceRegion>,
}

fn hex(s: &str) -> Option<u64> {
    u64::from_str_radix(s.strip_prefix("0x")?, 16).ok()
}

impl SpaceRecord {
    /// A new space whose first region will be at `base`.
    pub(super) fn new(base: u64) -> SpaceRecord {
        SpaceRecord {
            next: base,
            ..SpaceRecord::default()
        }
    }

    /// Forget `node`: its address space entry and every replica (or joining one) on it.
    /// True if anything changed.
    pub(super) fn strip(&mut self, node: SocketAddr) -> bool {
        let mut changed = self.nodes.remove(&node).is_some();
        for r in self.regions.values_mut() {
            let before = (r.replicas.len(), r.joining.len());
            r.replicas.retain(|&(a, _)| a != node);
            r.joining.retain(|&(a, _, _)| a != node);
            changed |= before != (r.replicas.len(), r.joining.len());
        }
        changed
    }

    pub(super) fn encode(&self) -> Vec<u8> {
        let mut s = format!("{MAGIC}\nnext {:#x}\n", self.next);
        for (a, n) in &self.nodes {
            s.push_str(&format!("node {a} {} log {:#x}\n", n.creds, n.log));
        }
        for (base, r) in &self.regions {
            s.push_str(&format!(
                "region {base:#x} len {} target {}",
                r.len, r.target
            ));
            for (a, va) in &r.replicas {
                s.push_str(&format!(" {a}@{va:#x}"));
            }
            for (a, va, token) in &r.joining {
                s.push_str(&format!(" +{a}@{va:#x}#{token:016x}"));
            }
            s.push('\n');
        }
        s.into_bytes()
    }

    pub(super) fn decode(b: &[u8]) -> Result<SpaceRecord, StoreError> {
        let bad = |what: &str| StoreError(format!("a shared space's record is malformed: {what}"));
        let s = std::str::from_utf8(b).map_err(|_| bad("not UTF-8"))?;
        let mut lines = s.lines();
        if lines.next() != Some(MAGIC) {
            return Err(bad("no header"));
        }
        let mut rec = SpaceRecord::default();
        let mut regions = Vec::new();
        for l in lines {
            let w: Vec<&str> = l.split(' ').collect();
            match w.as_slice() {
                ["next", n] => rec.next = hex(n).ok_or_else(|| bad(l))?,
                ["node", a, creds, "log", log] => {
                    let a: SocketAddr = a.parse().map_err(|_| bad(l))?;
                    let node = SpaceNode {
                        creds: creds.parse().map_err(|_| bad(l))?,
                        log: hex(log).ok_or_else(|| bad(l))?,
                    };
                    if rec.nodes.insert(a, node).is_some() {
                        return Err(bad(l));
                    }
                }
                ["region", base, "len", len, "target", target, reps @ ..] => {
                    let base = hex(base).ok_or_else(|| bad(l))?;
                    let len: u64 = len.parse().map_err(|_| bad(l))?;
                    let target: usize = target.parse().map_err(|_| bad(l))?;
                    let mut replicas = Vec::new();
                    let mut joining = Vec::new();
                    let mut nodes = std::collections::BTreeSet::new();
                    for r in reps {
                        let (r, token) = match r.strip_prefix('+') {
                            Some(j) => {
                                let (r, t) = j.split_once('#').ok_or_else(|| bad(l))?;
                                let t = u64::from_str_radix(t, 16).map_err(|_| bad(l))?;
                                (r, Some(t))
                            }
                            None => (*r, None),
                        };
                        let (a, va) = r.split_once('@').ok_or_else(|| bad(l))?;
                        let a: SocketAddr = a.parse().map_err(|_| bad(l))?;
                        let va = hex(va).ok_or_else(|| bad(l))?;
                        if !nodes.insert(a) {
                            return Err(bad(l));
                        }
                        match token {
                            Some(t) => joining.push((a, va, t)),
                            None if joining.is_empty() => replicas.push((a, va)),
                            None => return Err(bad(l)), // joining ones come last
                        }
                    }
                    if len == 0 || !(1..=3).contains(&target) || replicas.len() + joining.len() > 4
                    {
                        return Err(bad(l));
                    }
                    regions.push((
                        l,
                        base,
                        SpaceRegion {
                            len,
                            target,
                            replicas,
                            joining,
                        },
                    ));
                }
                _ => return Err(bad(l)),
            }
        }
        // Checked once every node is known (the lines may come in any order).
        let mut end = 0u64;
        regions.sort_by_key(|&(_, base, _)| base);
        for (l, base, r) in regions {
            let Some(last) = base.checked_add(r.len) else {
                return Err(bad(l));
            };
            let mut named = r.replicas.iter().map(|(a, _)| a);
            let unknown = named.any(|a| !rec.nodes.contains_key(a))
                || r.joining.iter().any(|(a, _, _)| !rec.nodes.contains_key(a));
            if base < end || last > rec.next || unknown {
                return Err(bad(l));
            }
            end = last;
            rec.regions.insert(base, r);
        }
        Ok(rec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(p: u16) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, 7], p))
    }

    fn sample() -> SpaceRecord {
        let mut r = SpaceRecord::new(1 << 32);
        for (k, p) in [1u16, 2, 3].into_iter().enumerate() {
            r.nodes.insert(
                addr(p),
                SpaceNode {
                    creds: Credentials {
                        pid: 5 + k as u16,
                        key: 0x0123_4567_89ab_cdef ^ k as u64,
                    },
                    log: if k == 2 { 0 } else { 0x20_0000 },
                },
            );
        }
        r.regions.insert(
            1 << 32,
            SpaceRegion {
                len: 4096,
                target: 2,
                replicas: vec![(addr(1), 0x1_0000), (addr(3), 0x3_0000)],
                joining: vec![(addr(2), 0x2_0000, 0x9f3c_0a11_d2e4_b781)],
            },
        );
        r.next = (1 << 32) + (4 << 20);
        r
    }

    #[test]
    fn a_space_survives_its_stored_form() {
        let r = sample();
        let text = r.encode();
        assert_eq!(SpaceRecord::decode(&text).unwrap(), r);
        let s = String::from_utf8(text).unwrap();
        assert!(s.starts_with("clio-space 1\nnext 0x100400000\n"), "{s}");
        assert!(
            s.contains(
                "region 0x100000000 len 4096 target 2 10.0.0.7:1@0x10000 10.0.0.7:3@0x30000 \
                 +10.0.0.7:2@0x20000#9f3c0a11d2e4b781\n"
            ),
            "{s}"
        );
    }

    #[test]
    fn a_record_that_lies_is_refused_naming_the_line() {
        let good = String::from_utf8(sample().encode()).unwrap();
        let cases = [
            ("garbage", "clio-space 2\n".to_string()),
            ("unknown line", format!("{good}colour blue\n")),
            (
                "node twice",
                format!("{good}node 10.0.0.7:1 9:00ff log 0x0\n"),
            ),
            (
                "a region on an unknown node",
                format!("{good}region 0x100200000 len 8 target 1 10.0.0.9:1@0x0\n"),
            ),
            (
                "overlapping regions",
                format!("{good}region 0x100000800 len 8 target 1 10.0.0.7:1@0x0\n"),
            ),
            (
                "two replicas on one node",
                format!("{good}region 0x100200000 len 8 target 2 10.0.0.7:1@0x0 10.0.0.7:1@0x8\n"),
            ),
            (
                "a replica after a joining one",
                format!(
                    "{good}region 0x100200000 len 8 target 2 +10.0.0.7:1@0x0#1 10.0.0.7:2@0x0\n"
                ),
            ),
            (
                "a joining replica with no token",
                format!("{good}region 0x100200000 len 8 target 2 +10.0.0.7:1@0x0\n"),
            ),
            (
                "a joining replica on a replica's node",
                format!(
                    "{good}region 0x100200000 len 8 target 2 10.0.0.7:1@0x0 +10.0.0.7:1@0x8#1\n"
                ),
            ),
            (
                "zero length",
                format!("{good}region 0x100200000 len 0 target 1\n"),
            ),
            (
                "target 4",
                format!("{good}region 0x100200000 len 8 target 4\n"),
            ),
            (
                "past next",
                format!("{good}region 0x100400000 len 8 target 1 10.0.0.7:1@0x0\n"),
            ),
            (
                "wraps",
                format!("{good}region 0xffffffffffffff00 len 4096 target 1\n"),
            ),
            ("bad key", good.replace("5:0123456789abcdef", "5:xyz")),
        ];
        for (what, text) in cases {
            assert_ne!(text, good, "{what}: the case changed nothing");
            let e = SpaceRecord::decode(text.as_bytes());
            assert!(e.is_err(), "{what}: accepted");
        }
        assert!(SpaceRecord::decode(&[0xff, 0xfe]).is_err());
    }
}
