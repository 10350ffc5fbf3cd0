//! Tunables of the transport. The defaults suit loopback and a LAN; every field is public so
//! tests and benchmarks can change one thing at a time.

use std::time::Duration;

/// Configuration of a [`crate::Client`].
#[derive(Debug, Clone)]
pub struct Config {
    /// Retries (after the first attempt) before an operation fails with
    /// [`crate::ClioError::Timeout`]. NACKs, corrupt responses and timeouts all count.
    pub max_retries: u32,
    /// How many `RetryLater` answers (node momentarily full) an operation accepts before
    /// failing with [`crate::ClioError::Busy`]. They are not losses, so they have their own budget.
    pub max_busy_retries: u32,
    /// First wait after a `RetryLater`; doubles on each further one up to 64x.
    pub busy_backoff: Duration,
    /// RTO before the first RTT sample (RFC 6298 uses 1 s; a memory network is far faster).
    pub initial_rto: Duration,
    /// Lower bound of the RTO. Below the scheduler's noise, retransmissions are spurious.
    pub min_rto: Duration,
    /// Upper bound of the RTO, also after exponential backoff.
    pub max_rto: Duration,
    /// Congestion window at start, in packets.
    pub initial_cwnd: f64,
    /// Smallest congestion window (below 1 the sender paces: one packet every `srtt / cwnd`).
    pub min_cwnd: f64,
    /// Largest congestion window, in packets.
    pub max_cwnd: f64,
    /// Additive increase per RTT, in packets.
    pub additive_increase: f64,
    /// Multiplicative-decrease gain on the excess of delay over the target (Swift's beta).
    pub md_beta: f64,
    /// Largest fraction by which one decrease may shrink the window.
    pub max_md: f64,
    /// Target end-to-end delay: above it the window shrinks, below it it grows.
    pub target_delay: Duration,
    /// Incast window: bytes of responses that may be outstanding towards this compute node.
    pub incast_window: u64,
    /// Largest single write request; longer writes are split into several requests so that
    /// no burst overflows the node's receive buffer and a loss costs at most this much.
    pub max_request_bytes: u32,
    /// Largest single read request (at most `MAX_REQUEST_LEN`, 1 MiB, the default): a read
    /// is one request packet answered by one packet per KiB, so its answer arrives as one
    /// burst into this client's receive buffer (the UDP transport asks for 4 MiB, capped by
    /// `net.core.rmem_max`; a 1 MiB answer takes about 2.3 MB of it). Longer reads are split
    /// into requests of this size; lower it where the receive buffer is small.
    pub max_read_bytes: u32,
    /// Granularity of dependency tracking (log2 bytes). The paper tracks at the page size
    /// of the node (4 MiB by default); any value is correct, smaller means fewer false
    /// dependencies.
    pub track_shift: u32,
    /// Renew the membership lease from a background thread (every quarter of the node's
    /// lease). Turn it off only for short-lived tests: without it the node removes the member
    /// when its lease ends (10 s by default).
    pub heartbeat: bool,
    /// The node's admission secret, which `Register` presents (`clio board
    /// --admission-secret-file`); 0 for a node without one. The default reads the environment
    /// variable `CLIO_ADMISSION_SECRET` (hex with 0x, or decimal); unset or unparsable: 0.
    pub admission_secret: u64,
    /// The epoch of a replicated pool's view that requests carry from the first one on
    /// (`clio_proto::epoch`; 0, the default: none). A member joining an address space that a
    /// pool client has fenced sets it to the view's epoch, or its Join is refused `Stale`;
    /// [`crate::Client::set_epoch`] and [`crate::Client::use_epoch`] change it later.
    pub epoch: u16,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_retries: 20,
            max_busy_retries: 100_000,
            busy_backoff: Duration::from_micros(50),
            initial_rto: Duration::from_millis(20),
            min_rto: Duration::from_millis(2),
            max_rto: Duration::from_millis(200),
            initial_cwnd: 16.0,
            min_cwnd: 0.01,
            max_cwnd: 256.0,
            additive_increase: 1.0,
            md_beta: 0.8,
            max_md: 0.5,
            target_delay: Duration::from_micros(500),
            incast_window: 96 * 1024,
            max_request_bytes: 16 * 1024,
            max_read_bytes: clio_proto::consts::MAX_REQUEST_LEN,
            track_shift: clio_proto::consts::DEFAULT_PAGE_SHIFT,
            heartbeat: true,
            admission_secret: admission_secret_from_env(),
            epoch: 0,
        }
    }
}

/// `CLIO_ADMISSION_SECRET` as a number (0x hex or decimal), 0 when unset or not a number.
fn admission_secret_from_env() -> u64 {
    let Ok(v) = std::env::var("CLIO_ADMISSION_SECRET") else {
        return 0;
    };
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).unwrap_or(0),
        None => v.parse().unwrap_or(0),
    }
}

impl Config {
    /// Longest time a request keeps being retried after losses (every retransmission at the
    /// largest RTO). A ring-recorded request (TAS, Unlock, CAS, FAA) is exactly-once only while
    /// the node keeps its idempotence-ring slot, i.e. while the member's lease lasts, so this
    /// must stay well below the node's lease.
    pub fn retry_budget(&self) -> Duration {
        self.max_rto * (self.max_retries + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retries_give_up_well_inside_the_default_lease() {
        let lease = Duration::from_millis(clio_proto::consts::DEFAULT_LEASE_MS);
        assert!(
            Config::default().retry_budget() * 2 <= lease,
            "a retried atomic could outlive its idempotence-ring slot"
        );
    }
}
