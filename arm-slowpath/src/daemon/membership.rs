//! Membership of the slow path's remote address spaces: registration (a RAS and its first
//! member), joining, leaving, lease expiry, and the teardown that takes everything of a RAS
//! with it (its key, its ring entries and reply-cache answers, its memory, cleared before
//! reuse).

use super::*;

impl SlowPath {
    /// Create a remote address space and its first member: `(pid, key, client)`, and
    /// program the key into the fast path's key table. The same `nonce` always gets the same
    /// answer (a retried registration must not leak PIDs).
    pub fn register_at(&mut self, nonce: u64, now: Instant) -> Result<(u16, u64, u16), AllocError> {
        let known = self.registry.by_nonce(nonce).is_some();
        let (pid, key, client) = self.registry.register(nonce, now)?;
        if !known {
            self.persist_log(&[
                MetaRecord::RasCreate { pid, key },
                MetaRecord::MemberAdd { pid, client, nonce },
            ]);
            self.procs
                .insert(pid, VaSpace::new(VA_LIMIT >> self.layout.page_shift));
            self.outbox.push_back(Descriptor::KeyWrite {
                pid,
                key,
                epoch: clio_proto::epoch::UNFENCED,
            });
            // The member's row, emptied, before the answer that names its client id.
            self.outbox.push_back(Descriptor::RingOwner { pid, client });
            self.stats.registrations += 1;
        }
        Ok((pid, key, client))
    }

    /// Register as a compute node does, through the network: `secret` is what the request
    /// carried in `arg1` (checked against the admission secret, when the node has one) and
    /// `source` where it came from (checked against the per-source quota). A retry of a
    /// registration that already succeeded gets the same answer without either check.
    pub fn register_from(
        &mut self,
        nonce: u64,
        secret: u64,
        source: Source,
        now: Instant,
    ) -> Result<(u16, u64, u16), AllocError> {
        if self.registry.by_nonce(nonce).is_none() {
            if self.limits.admission_secret.is_some_and(|s| s != secret) {
                self.stats.admission_refusals += 1;
                return Err(AllocError::AdmissionRefused);
            }
            if self.sources.count(source) >= self.limits.ras_per_source {
                self.stats.quota_refusals += 1;
                return Err(AllocError::Quota(Quota::RasPerSource));
            }
            self.members_quota(source)?;
        }
        let r = self.register_at(nonce, now)?;
        self.sources.add(r.0, source);
        self.member_sources.add((r.0, r.2), source);
        Ok(r)
    }

    /// Refuse a new member from `source` when it holds its quota of members.
    fn members_quota(&mut self, source: Source) -> Result<(), AllocError> {
        if self.member_sources.count(source) >= self.limits.members_per_source {
            self.stats.quota_refusals += 1;
            return Err(AllocError::Quota(Quota::MembersPerSource));
        }
        Ok(())
    }

    /// Join as a compute node does, through the network: `source` is where the request came
    /// from (checked against the per-source member quota). A retry of a join that already
    /// succeeded gets the same answer without the check.
    pub fn join_from(
        &mut self,
        pid: u16,
        nonce: u64,
        source: Source,
        now: Instant,
    ) -> Result<u16, AllocError> {
        if self.registry.by_nonce(nonce).is_none() {
            self.members_quota(source)?;
        }
        let client = self.join_at(pid, nonce, now)?;
        self.member_sources.add((pid, client), source);
        Ok(client)
    }

    /// Register (now) and return the PID only: for tools and tests that drive the slow path
    /// directly.
    pub fn register(&mut self, nonce: u64) -> Result<u16, AllocError> {
        self.register_at(nonce, Instant::now())
            .map(|(pid, _, _)| pid)
    }

    /// Add a member to an existing RAS (its key was checked by the fast path).
    pub fn join_at(&mut self, pid: u16, nonce: u64, now: Instant) -> Result<u16, AllocError> {
        let known = self.registry.by_nonce(nonce).is_some();
        let client = self.registry.join(pid, nonce, now)?;
        if !known {
            self.persist_log(&[MetaRecord::MemberAdd { pid, client, nonce }]);
            self.outbox.push_back(Descriptor::RingOwner { pid, client });
            self.stats.joins += 1;
        }
        Ok(client)
    }

    /// Raise the RAS's epoch (`SetEpoch`, `arg0` = the epoch; the fast path already refused a
    /// request older than the RAS's epoch): logged, then the key table is written with the
    /// RAS's key and the new epoch, so every later request of an older view is Stale. The
    /// same epoch again changes nothing. Returns the RAS's epoch.
    pub fn set_epoch(&mut self, pid: u16, arg0: u64) -> Result<u16, AllocError> {
        let epoch = u16::try_from(arg0).map_err(|_| AllocError::BadRequest)?;
        let key = self
            .registry
            .key(pid)
            .ok_or(AllocError::UnknownProcess(pid))?;
        if self.registry.raise_epoch(pid, epoch)? {
            self.persist_log(&[MetaRecord::RasEpoch { pid, epoch }]);
            self.outbox
                .push_back(Descriptor::KeyWrite { pid, key, epoch });
            self.stats.epoch_raises += 1;
        }
        Ok(epoch)
    }

    /// The node's pool moved to `epoch` (`reg::POOL_EPOCH`): every fenced RAS (epoch not 0)
    /// holding an older epoch is raised to it, as by its members' SetEpoch, so that a node
    /// taken out of a view refuses that view's stragglers without any client reaching it. An
    /// unfenced RAS (no pool client ever raised it) is left alone. Returns how many were raised.
    pub fn raise_fenced(&mut self, epoch: u16) -> usize {
        if epoch == clio_proto::epoch::UNFENCED {
            return 0;
        }
        let behind: Vec<u16> = self
            .registry
            .list()
            .into_iter()
            .map(|(pid, _)| pid)
            .filter(|&pid| {
                self.registry.epoch(pid).is_some_and(|e| {
                    e != clio_proto::epoch::UNFENCED && clio_proto::epoch::older(epoch, e)
                })
            })
            .collect();
        for &pid in &behind {
            // Cannot fail: the RAS exists and `epoch` is newer than its own.
            let _ = self.set_epoch(pid, epoch as u64);
        }
        behind.len()
    }

    /// Remove a member (`destroy`: every member) and tear the RAS down when none is left.
    pub fn unregister(&mut self, pid: u16, client: u16, destroy: bool) -> Result<(), AllocError> {
        let gone = if destroy {
            self.registry.evict_all(pid)?
        } else {
            vec![self.registry.leave(pid, client)?]
        };
        self.depart(&gone);
        Ok(())
    }

    /// Apply departures: take each member's row of the idempotence table back (emptied), and
    /// tear down every
    /// RAS left empty: key removed first (nothing new gets in), then every region freed (PTEs
    /// cleared, translations shot down, frames back to the allocator), PID retired.
    fn depart(&mut self, gone: &[Departure]) {
        for d in gone {
            self.stats.departures += 1;
            // A record its writer left in doubt is never applied.
            let client = d.client;
            self.tx_logs_remove(d.pid, |_, l| l.client == client);
            self.persist_log(&[MetaRecord::MemberRemove {
                pid: d.pid,
                client: d.client,
            }]);
            self.replies.forget_member(d.pid, d.client);
            self.member_sources.remove(&(d.pid, d.client));
            self.outbox.push_back(Descriptor::RingOwner {
                pid: clio_proto::ring::RING_NO_OWNER,
                client: d.client,
            });
            if d.ras_empty {
                self.teardown(d.pid);
            }
        }
    }

    fn teardown(&mut self, pid: u16) {
        self.persist_log(&[MetaRecord::RasRetire { pid }]);
        self.outbox.push_back(Descriptor::KeyWrite {
            pid,
            key: 0,
            epoch: clio_proto::epoch::UNFENCED,
        });
        let starts: Vec<u64> = self
            .procs
            .get(&pid)
            .map(|s| s.regions().map(|r| r.start_vpn).collect())
            .unwrap_or_default();
        for vpn in starts {
            let va = vpn << self.layout.page_shift;
            if let Ok(o) = self.free(pid, va) {
                self.push_clears(pid, &o);
            }
        }
        self.procs.remove(&pid);
        // Nothing of this RAS may reach the next owner of its PID.
        self.replies.forget_ras(pid);
        self.sources.remove(&pid);
        // Its Clio-KV records go before its PID comes back (`kv_purge.rs`).
        if self.hold_for_kv_purge(pid) {
            self.registry.withdraw(pid);
        } else {
            self.registry.retire(pid);
        }
        self.stats.teardowns += 1;
    }

    /// Remove members whose lease ended by `now` (and tear down RASes left empty).
    pub fn expire_leases(&mut self, now: Instant) {
        self.renew_kv_store(now);
        let gone = self.registry.expire(now);
        self.stats.lease_expiries += gone.len() as u64;
        self.depart(&gone);
    }
}
