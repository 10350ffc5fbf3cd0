//! Running a step of an operation on a replicated region (`MultiClient::replicated`): under
//! the region's lock (and, in a shared space, its lock at the primary, `space.rs`), after any
//! pending promotion, again after a node failure or a `Stale` answer; and why a step stopped
//! (`Failed`).

use super::*;

impl MultiClient {
    /// Run `f` on the region of `[addr, addr + len)` (snapshot and offset) under the region's
    /// lock, after any pending promotion; a node failure inside `f` is handled (the node
    /// dropped) and `f` runs again on the new replica set.
    pub(super) fn replicated<T>(
        &self,
        addr: u64,
        len: u64,
        f: impl FnMut(&Self, &Region, u64) -> std::result::Result<T, Failed>,
    ) -> Result<T> {
        self.replicated_as(addr, len, false, f)
    }

    /// [`MultiClient::replicated`]; `fill`: a step of a new replica's fill, which takes the
    /// region's local lock ahead of the operations that come after it (`RegionSync`).
    pub(super) fn replicated_as<T>(
        &self,
        addr: u64,
        len: u64,
        fill: bool,
        mut f: impl FnMut(&Self, &Region, u64) -> std::result::Result<T, Failed>,
    ) -> Result<T> {
        let mut stale = 0;
        loop {
            let (base, r) = self.locate(addr, len)?;
            let _g = if fill {
                r.sync.enter_for_fill()
            } else {
                r.sync.enter()
            };
            // A shared space's region: its lock at the primary too (`space.rs`).
            let held = if self.shared() {
                match self.enter_region(base, &r) {
                    Ok(h) => Some(h),
                    Err(Failed::Node(i)) => {
                        self.fail_node(i)?;
                        continue;
                    }
                    Err(Failed::Op(ClioError::Stale)) => {
                        self.after_stale(&mut stale)?;
                        continue;
                    }
                    Err(Failed::Op(e) | Failed::InDoubt(e)) => return Err(e),
                }
            } else {
                None
            };
            let step = (|| {
                if r.sync.stale.load(Ordering::Acquire) {
                    self.promote(base).map_err(Failed::Op)?;
                    return Ok(None);
                }
                // A fresh snapshot under the lock (a fail-over may have changed it).
                let (_, r) = self.locate(addr, len).map_err(Failed::Op)?;
                if held
                    .as_ref()
                    .is_some_and(|h| r.replicas.first().map(|x| x.0) != Some(h.node))
                {
                    return Ok(None); // the primary moved while this writer waited
                }
                f(self, &r, addr - base).map(Some)
            })();
            if let Some(h) = held {
                self.leave_region(h, step.is_ok());
            }
            match step {
                Ok(Some(v)) => return Ok(v),
                Ok(None) => {}
                Err(Failed::Node(i)) => self.fail_node(i)?,
                // Nothing of the step is acknowledged: run it again under the new view.
                Err(Failed::Op(ClioError::Stale)) => self.after_stale(&mut stale)?,
                Err(Failed::Op(e)) => return Err(e),
                Err(Failed::InDoubt(e)) => {
                    // Best effort: the caller learns the error either way.
                    let _ = self.refresh_view();
                    return Err(e);
                }
            }
        }
    }
}

/// Why a step of a replicated operation stopped.
#[derive(Debug)]
pub(super) enum Failed {
    /// This node is gone: drop it and run the step again.
    Node(usize),
    /// The operation failed for a reason a retry does not fix (or `Stale`, nothing of it
    /// acknowledged: it runs again under the pool's new view).
    Op(ClioError),
    /// The operation failed after a step that must not run again (an atomic executed at the
    /// primary): returned to the caller as it is.
    InDoubt(ClioError),
}

impl Failed {
    /// The failure of a step at node `i`: the node's, or the operation's.
    pub(super) fn at(i: usize, e: ClioError) -> Failed {
        if node_failed(&e) {
            Failed::Node(i)
        } else {
            Failed::Op(e)
        }
    }
}
