//! Following a pool (`pool.rs`): connecting to the nodes it announces, adopting the views
//! its store holds, and fencing every node at this client's view's epoch
//! (docs/replication.md, "The configuration manager" and "Epochs").

use super::*;

/// Consecutive `Stale` answers one operation takes (reading the pool's view again after
/// each) before it fails with `ClioError::Stale`.
const STALE_RETRIES: u32 = 16;

impl Inner {
    /// Node `i`'s engine, fenced at this client's epoch: before the first request of a newer
    /// view reaches the node, the node's RAS is raised to the view's epoch (`SetEpoch`,
    /// docs/replication.md "Epochs"), so that from then on it refuses every request of an
    /// older view, this client's or another's. `ClioError::Stale` if the node holds a newer
    /// epoch (this client's view is out of date).
    pub(super) fn engine(&self, i: usize) -> Result<Arc<Client>> {
        let c = self.nodes.at(i).engine()?;
        let e = clio_proto::epoch::wire(self.epoch.load(Ordering::Acquire));
        if c.epoch() != e {
            c.set_epoch(e)?;
        }
        Ok(c)
    }
}

impl MultiClient {
    /// As [`MultiClient::connect_udp`], following `pool`'s view (`pool.rs`): a node is
    /// declared dead only through a view stored in the pool's configuration store, so every
    /// client of the pool agrees on which nodes are in service; a view another client stored
    /// is adopted as soon as the store's watch reports it. Nodes out of service in the
    /// current view are not contacted. Clients name a node by the same address.
    pub fn connect_udp_pool(
        nodes: &[NodeSpec],
        cfg: MultiConfig,
        pool: Pool,
    ) -> Result<MultiClient> {
        Self::connect(nodes, cfg, Some(pool), false)
    }

    /// A client of the nodes announced in `pool` (`clio board --etcd ADDR --pool NAME`
    /// announces a node, with its capacity, under a lease): it follows the pool's view as
    /// [`MultiClient::connect_udp_pool`] does, and also the entries: a node whose entry goes
    /// (its process died and its lease ended, or it stopped) is taken out of service at once,
    /// without a request of this client's timing out; with `auto_heal`, a node out of service
    /// that announces itself again (restarted) is readmitted, and a node announced later
    /// joins this client (up to 256 nodes in all): placement and healing use it.
    pub fn connect_pool(pool: Pool, cfg: MultiConfig) -> Result<MultiClient> {
        let announced = pool.announced()?;
        if announced.is_empty() {
            return Err(ClioError::InvalidArgument(
                "the pool has no announced nodes",
            ));
        }
        let specs: Vec<NodeSpec> = announced
            .iter()
            .map(|&(addr, capacity, _)| NodeSpec { addr, capacity })
            .collect();
        let m = Self::connect(&specs, cfg, Some(pool.clone()), true)?;
        for ((_, n), &(_, _, rev)) in m.inner.nodes.iter().zip(&announced) {
            n.entry_rev.store(rev, Ordering::Release);
        }
        // Entries that cannot be read now are read again at the next change, and every
        // second by the healer.
        let guard = pool.store.watch_prefix(
            &pool.nodes_prefix(),
            m.on_change(MultiClient::refresh_nodes),
        )?;
        lock(&m.inner.watch).push(guard);
        m.refresh_nodes()?;
        Ok(m)
    }

    /// Act on the pool's node entries (clients of [`MultiClient::connect_pool`]): a node in
    /// service whose entry is gone is taken out; with `auto_heal`, a node out of service
    /// whose entry is newer than when it was in service is readmitted.
    pub(super) fn refresh_nodes(&self) -> Result<()> {
        let Some(p) = self.inner.pool.as_ref().filter(|_| self.inner.follow) else {
            return Ok(());
        };
        let _one = lock(&self.inner.refreshing);
        let announced = p.announced()?;
        // Nodes announced after this client connected join it: in service unless the view
        // has them out (then, as for any out node, only a later announcement readmits them).
        let mut view: Option<View> = None;
        for &(addr, capacity, rev) in &announced {
            if self.inner.nodes.iter().any(|(_, n)| n.addr == addr) {
                continue;
            }
            let v = match &mut view {
                Some(v) => v,
                none => none.insert(pool::read_view(p)?.0),
            };
            let out = v.out.contains(&addr);
            let client = if out {
                None
            } else {
                match connect_node(addr, &self.inner.cfg) {
                    Ok(c) => Some(Arc::new(c)),
                    // Not answering yet: tried again at the next change or healer round.
                    Err(e) if node_failed(&e) => continue,
                    Err(e) => return Err(e),
                }
            };
            let n = Node::new(addr, capacity, client, out);
            n.entry_rev.store(rev, Ordering::Release);
            if self.inner.nodes.add(n)?.1 {
                lock(&self.inner.stats).nodes_added += 1;
                self.wake_healer();
            }
        }
        let now: std::collections::HashMap<SocketAddr, u64> =
            announced.into_iter().map(|(a, _, rev)| (a, rev)).collect();
        for (i, n) in self.inner.nodes.iter() {
            let dead = n.dead.load(Ordering::Acquire);
            match now.get(&n.addr) {
                None if !dead => self.fail_node(i)?,
                Some(&rev) if !dead => {
                    n.entry_rev.fetch_max(rev, Ordering::AcqRel);
                }
                Some(&rev)
                    if dead
                        && self.inner.cfg.auto_heal
                        && rev > n.entry_rev.load(Ordering::Acquire) =>
                {
                    self.readmit(i)?;
                    n.entry_rev.fetch_max(rev, Ordering::AcqRel);
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// A store watch's callback that runs `f` on this client (its errors are left to the next
    /// change) and ends the watch once the client is gone.
    pub(super) fn on_change(&self, f: fn(&MultiClient) -> Result<()>) -> OnChange {
        let me: Weak<Inner> = Arc::downgrade(&self.inner);
        Box::new(move || match me.upgrade() {
            Some(inner) => {
                let _ = f(&MultiClient::internal(inner));
                true
            }
            None => false,
        })
    }

    /// This client's id in its pool's presence entries (`/clio/pools/<name>/clients/<id>`).
    pub fn client_id(&self) -> &str {
        &self.inner.id
    }

    /// The epoch of the pool's view this client follows (0 without a pool): one more with
    /// every node the pool took out of service.
    pub fn epoch(&self) -> u64 {
        self.inner.epoch.load(Ordering::Acquire)
    }

    /// Read the pool's view and adopt it (no-op without a pool).
    pub fn refresh_view(&self) -> Result<()> {
        if let Some(p) = &self.inner.pool {
            let (v, _) = pool::read_view(p)?;
            self.adopt(&v);
        }
        Ok(())
    }

    /// Act on a stored view: every node it has out is dropped here too, and a node it has
    /// back in service (readmitted by another client) gets a fresh address space here.
    pub(super) fn adopt(&self, v: &View) {
        for (i, n) in self.inner.nodes.iter() {
            if v.out.contains(&n.addr) {
                self.drop_node(i);
            }
        }
        if self.shared() && v.epoch > self.epoch() {
            self.adopt_space(v);
        }
        let before = self.inner.epoch.fetch_max(v.epoch, Ordering::AcqRel);
        // Nodes back in service get a fresh address space here, under the new epoch (a
        // writer of a shared space joins the one another writer published, raised to it).
        for (i, n) in self.inner.nodes.iter() {
            if !v.out.contains(&n.addr) && n.dead.load(Ordering::Acquire) {
                // Best effort: a node that does not answer stays dead here (this client's
                // next failure on it would take it out again).
                let _ = self.revive(i);
            }
        }
        if v.epoch > before {
            // The presence entry says which view this client follows (best effort: the
            // store may be away; the next view sets it again).
            if let Some(e) = lock(&self.inner.presence).as_ref() {
                let _ = e.set(Pool::client_entry(v.epoch).as_bytes());
            }
            // Every node in service enters the new epoch now, not at this client's next
            // request to it: an idle client's heartbeats would otherwise be refused as
            // Stale by a node another client raised, and its lease there would end. On a
            // thread of its own (a node that does not answer takes its retries), best
            // effort: a node missed here is raised by the next request to it.
            let me = Arc::downgrade(&self.inner);
            let _ = std::thread::Builder::new()
                .name("clio-epoch".into())
                .spawn(move || {
                    if let Some(inner) = me.upgrade() {
                        for (i, n) in inner.nodes.iter() {
                            if !n.dead.load(Ordering::Acquire) {
                                let _ = inner.engine(i);
                            }
                        }
                    }
                });
        }
    }

    /// This client found node `i` dead. With a pool, the node is taken out of service by a
    /// view stored in the pool's store first (this client's proposal, or another's that came
    /// first), then dropped here; without one it is dropped at once. An error (the store
    /// unreachable) leaves the node in service: the operation fails rather than decide alone.
    pub(super) fn fail_node(&self, i: usize) -> Result<()> {
        match &self.inner.pool {
            Some(p) => {
                let v = pool::take_out(p, self.inner.nodes.at(i).addr)?;
                self.adopt(&v);
            }
            None => self.drop_node(i),
        }
        Ok(())
    }

    /// A node answered `Stale`: this client's view of the pool is out of date. Read the view
    /// again (the operation then runs again under it); after [`STALE_RETRIES`] in a row, fail
    /// with `Stale`.
    pub(super) fn after_stale(&self, count: &mut u32) -> Result<()> {
        *count += 1;
        lock(&self.inner.stats).stale_answers += 1;
        if *count > STALE_RETRIES {
            return Err(ClioError::Stale);
        }
        self.refresh_view()?;
        // A shared space's table may have changed with the view.
        self.refresh_space()
    }
}
