//! Round-trip estimation (RFC 6298), the delay-based AIMD congestion window (Swift-like,
//! allowed below one packet) and the incast window. All state lives at the compute node.

use crate::config::Config;
use std::time::{Duration, Instant};

/// Smoothed RTT and retransmission timeout, RFC 6298 section 2.
#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt: Option<Duration>,
    rttvar: Duration,
    rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
    min_rtt: Option<Duration>,
    /// The RTO floor in force: `min_rto`, raised by needless retransmissions above the delay
    /// that caused them; the excess halves every [`FLOOR_HALF_LIFE`] after the last raise.
    floor: Duration,
    floor_at: Instant,
}

/// How fast a raised RTO floor wears off: its excess over `min_rto` halves this often.
pub const FLOOR_HALF_LIFE: Duration = Duration::from_secs(2);

impl RttEstimator {
    /// Before any sample the RTO is `cfg.initial_rto`.
    pub fn new(cfg: &Config) -> RttEstimator {
        RttEstimator {
            srtt: None,
            rttvar: Duration::ZERO,
            rto: cfg.initial_rto,
            min_rto: cfg.min_rto,
            max_rto: cfg.max_rto,
            min_rtt: None,
            floor: cfg.min_rto,
            floor_at: Instant::now(),
        }
    }

    /// Take one RTT sample (only from requests answered on their first attempt: Karn).
    pub fn sample(&mut self, r: Duration) {
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(s) => {
                let diff = s.abs_diff(r);
                self.rttvar = self.rttvar * 3 / 4 + diff / 4;
                self.srtt = Some(s * 7 / 8 + r / 8);
            }
        }
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        if self.floor > self.min_rto {
            let now = Instant::now();
            if now.duration_since(self.floor_at) >= FLOOR_HALF_LIFE {
                self.floor -= (self.floor - self.min_rto) / 2;
                self.floor_at = now;
            }
        }
        self.update();
    }

    fn update(&mut self) {
        let s = self.srtt.unwrap_or(self.rto);
        self.rto = (s + (self.rttvar * 4).max(Duration::from_micros(1)))
            .clamp(self.floor.min(self.max_rto), self.max_rto);
    }

    /// A retransmission turned out needless: its answer came `delay` after the first attempt.
    /// Keep the RTO above that delay (1.5x) until samples wear the floor down again.
    pub fn on_spurious(&mut self, delay: Duration) {
        self.floor = self.floor.max(delay * 3 / 2).min(self.max_rto);
        self.floor_at = Instant::now();
        self.update();
    }

    /// The RTO floor in force (`min_rto` unless needless retransmissions raised it).
    pub fn floor(&self) -> Duration {
        self.floor
    }

    /// Current retransmission timeout.
    pub fn rto(&self) -> Duration {
        self.rto
    }

    /// Smoothed RTT, if measured.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// Smallest RTT seen.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// Double `rto` for a retry, within the bounds (RFC 6298 5.5).
    pub fn backoff(&self, rto: Duration) -> Duration {
        (rto * 2).min(self.max_rto)
    }
}

/// One congestion window per memory node, in packets, driven by delay.
#[derive(Debug, Clone)]
pub struct CongestionWindow {
    cwnd: f64,
    min: f64,
    max: f64,
    ai: f64,
    beta: f64,
    max_md: f64,
    target: Duration,
    /// The longest gap a paced sender leaves between requests (`Config::max_rto`).
    max_gap: Duration,
    last_decrease: Option<Instant>,
    /// The window before the last timeout's cut (for [`CongestionWindow::undo_timeout`]).
    before_timeout: Option<f64>,
    /// Smallest and largest value reached since the last [`CongestionWindow::reset_extremes`].
    pub extremes: (f64, f64),
}

impl CongestionWindow {
    /// Window at `cfg.initial_cwnd`.
    pub fn new(cfg: &Config) -> CongestionWindow {
        let c = cfg.initial_cwnd.clamp(cfg.min_cwnd, cfg.max_cwnd);
        CongestionWindow {
            cwnd: c,
            min: cfg.min_cwnd,
            max: cfg.max_cwnd,
            ai: cfg.additive_increase,
            beta: cfg.md_beta,
            max_md: cfg.max_md,
            target: cfg.target_delay,
            max_gap: cfg.max_rto,
            last_decrease: None,
            before_timeout: None,
            extremes: (c, c),
        }
    }

    /// Current window in packets (may be below 1).
    pub fn get(&self) -> f64 {
        self.cwnd
    }

    fn set(&mut self, v: f64) {
        self.cwnd = v.clamp(self.min, self.max);
        self.extremes = (
            self.extremes.0.min(self.cwnd),
            self.extremes.1.max(self.cwnd),
        );
    }

    /// Forget the extremes (benchmarks and tests look at one phase at a time).
    pub fn reset_extremes(&mut self) {
        self.extremes = (self.cwnd, self.cwnd);
    }

    // Decrease at most once per RTT, like Swift: one congestion event, one reaction.
    fn may_decrease(&self, now: Instant, srtt: Duration) -> bool {
        self.last_decrease
            .is_none_or(|t| now.duration_since(t) >= srtt)
    }

    /// `acked` packets were answered after `delay` (a first-attempt RTT).
    pub fn on_ack(&mut self, delay: Duration, acked: f64, srtt: Duration, now: Instant) {
        if delay < self.target {
            // +ai per RTT above one packet; below one packet grow per ack so that a paced
            // sender climbs back within a few round trips.
            let inc = if self.cwnd >= 1.0 {
                self.ai * acked / self.cwnd
            } else {
                self.ai * acked
            };
            self.set(self.cwnd + inc);
        } else if self.may_decrease(now, srtt) {
            let excess = (delay - self.target).as_secs_f64() / delay.as_secs_f64();
            let factor = (1.0 - self.beta * excess).max(1.0 - self.max_md);
            self.set(self.cwnd * factor);
            self.last_decrease = Some(now);
        }
    }

    /// A retransmission timeout: treat as the strongest congestion signal.
    pub fn on_timeout(&mut self, srtt: Duration, now: Instant) {
        if self.may_decrease(now, srtt) {
            self.before_timeout = Some(self.cwnd);
            self.set(self.cwnd * (1.0 - self.max_md));
            self.last_decrease = Some(now);
        }
    }

    /// The last timeout was needless (its answer was only late): restore the window it cut.
    pub fn undo_timeout(&mut self) {
        if let Some(w) = self.before_timeout.take() {
            self.set(self.cwnd.max(w));
        }
    }

    /// Whether a request of `cost` packets may be sent with `inflight` packets outstanding.
    /// Below one packet the sender paces: nothing outstanding and one pacing gap
    /// ([`CongestionWindow::pace_gap`]) since the last send. A request larger than the window
    /// goes alone, so progress is guaranteed.
    pub fn admits(
        &self,
        cost: f64,
        inflight: f64,
        since_last_send: Duration,
        srtt: Duration,
    ) -> bool {
        if self.cwnd < 1.0 {
            return inflight == 0.0 && since_last_send >= self.pace_gap(srtt);
        }
        inflight == 0.0 || inflight + cost <= self.cwnd
    }

    /// The gap between a paced sender's requests: `srtt / cwnd`, at most `max_rto`. A lost
    /// request is sent again every `max_rto` at the slowest, so pacing new ones more slowly
    /// than that relieves no congestion; without the bound a round trip stretched by a
    /// starved host (a 0.5 s srtt at the 0.01 floor) kept requests, heartbeats among them,
    /// queued for 50 s.
    pub fn pace_gap(&self, srtt: Duration) -> Duration {
        Duration::from_secs_f64(srtt.as_secs_f64() / self.cwnd.max(1e-6)).min(self.max_gap)
    }

    /// When a paced sender may send next (`None` if the window is at least one packet).
    pub fn pace_after(&self, last_send: Instant, srtt: Duration) -> Option<Instant> {
        (self.cwnd < 1.0).then(|| last_send + self.pace_gap(srtt))
    }
}

/// The incast window: bytes of responses this compute node has asked for and not received.
#[derive(Debug, Clone)]
pub struct IncastWindow {
    limit: u64,
    used: u64,
}

impl IncastWindow {
    /// Window of `limit` bytes.
    pub fn new(limit: u64) -> IncastWindow {
        IncastWindow { limit, used: 0 }
    }
    /// Whether a request expecting `bytes` of responses may go; one request always may when
    /// nothing is outstanding.
    pub fn admits(&self, bytes: u64) -> bool {
        self.used == 0 || self.used + bytes <= self.limit
    }
    /// Account a sent request.
    pub fn take(&mut self, bytes: u64) {
        self.used += bytes;
    }
    /// Account a finished request.
    pub fn give(&mut self, bytes: u64) {
        self.used = self.used.saturating_sub(bytes);
    }
    /// Bytes outstanding.
    pub fn used(&self) -> u64 {
        self.used
    }
    /// The limit.
    pub fn limit(&self) -> u64 {
        self.limit
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rto_follows_rfc6298() {
        let cfg = Config {
            min_rto: Duration::from_micros(1),
            ..Config::default()
        };
        let mut r = RttEstimator::new(&cfg);
        assert_eq!(r.rto(), cfg.initial_rto);
        r.sample(Duration::from_micros(100));
        // srtt = 100, rttvar = 50, rto = 100 + 200
        assert_eq!(r.rto(), Duration::from_micros(300));
        r.sample(Duration::from_micros(100));
        // rttvar = 37.5, srtt = 100 -> 250
        assert_eq!(r.rto(), Duration::from_micros(250));
        assert_eq!(r.backoff(Duration::from_millis(150)), cfg.max_rto);
    }

    #[test]
    fn window_grows_below_target_and_shrinks_above_it() {
        let cfg = Config::default();
        let mut w = CongestionWindow::new(&cfg);
        let t0 = Instant::now();
        let srtt = Duration::from_micros(100);
        for _ in 0..16 {
            w.on_ack(Duration::from_micros(50), 1.0, srtt, t0);
        }
        assert!(
            (w.get() - 17.0).abs() < 0.1,
            "one packet per window of acks: {}",
            w.get()
        );
        // Long delay: shrink, at most once per RTT, at most max_md.
        w.on_ack(Duration::from_millis(50), 1.0, srtt, t0);
        let after = w.get();
        assert!(after < 17.0 * 0.51 && after > 17.0 * 0.49);
        w.on_ack(Duration::from_millis(50), 1.0, srtt, t0);
        assert_eq!(w.get(), after, "no second decrease within one RTT");
        let mut t = t0;
        for _ in 0..20 {
            t += Duration::from_millis(1);
            w.on_ack(Duration::from_millis(50), 1.0, srtt, t);
        }
        assert!(w.get() < 1.0, "falls below one packet: {}", w.get());
        assert!(!w.admits(1.0, 0.0, Duration::ZERO, srtt), "paced");
        assert!(w.admits(1.0, 0.0, Duration::from_secs(1), srtt));
        assert!(!w.admits(1.0, 1.0, Duration::from_secs(1), srtt));
    }

    #[test]
    fn a_paced_sender_waits_at_most_max_rto() {
        let cfg = Config::default();
        let mut w = CongestionWindow::new(&cfg);
        let t0 = Instant::now();
        // A starved host: every answer half a second late, the window down to its floor.
        let srtt = Duration::from_millis(500);
        for i in 0..100 {
            w.on_timeout(srtt, t0 + srtt * i);
        }
        assert_eq!(w.get(), cfg.min_cwnd);
        assert_eq!(w.pace_gap(srtt), cfg.max_rto, "srtt / cwnd would be 50 s");
        assert!(!w.admits(1.0, 0.0, cfg.max_rto / 2, srtt), "still paced");
        assert!(w.admits(1.0, 0.0, cfg.max_rto, srtt));
        assert_eq!(w.pace_after(t0, srtt), Some(t0 + cfg.max_rto));
        // A short round trip paces by srtt / cwnd as before.
        let fast = Duration::from_micros(100);
        assert_eq!(w.pace_gap(fast), Duration::from_millis(10));
    }

    #[test]
    fn needless_retransmissions_raise_the_rto_floor_then_it_wears_off() {
        let cfg = Config::default();
        let mut r = RttEstimator::new(&cfg);
        for _ in 0..50 {
            r.sample(Duration::from_micros(20));
        }
        assert_eq!(r.rto(), cfg.min_rto, "fast samples sit on the floor");
        // A 6 ms stall of the node made a timeout fire needlessly.
        r.on_spurious(Duration::from_millis(6));
        assert_eq!(r.floor(), Duration::from_millis(9));
        assert_eq!(r.rto(), Duration::from_millis(9));
        // Many fast samples right after: the floor holds (it wears off with time).
        for _ in 0..4000 {
            r.sample(Duration::from_micros(20));
        }
        assert_eq!(r.rto(), Duration::from_millis(9));
        // A half-life later the excess halves at the next sample.
        r.floor_at -= FLOOR_HALF_LIFE;
        r.sample(Duration::from_micros(20));
        assert_eq!(r.floor(), Duration::from_micros(5500));
        // Never above the ceiling.
        r.on_spurious(Duration::from_secs(10));
        assert_eq!(r.rto(), cfg.max_rto);

        let mut w = CongestionWindow::new(&cfg);
        let before = w.get();
        w.on_timeout(Duration::from_micros(20), Instant::now());
        assert!(w.get() < before);
        w.undo_timeout();
        assert_eq!(w.get(), before, "a needless timeout's cut is taken back");
        w.undo_timeout();
        assert_eq!(w.get(), before);
    }

    #[test]
    fn incast_window_counts_bytes() {
        let mut i = IncastWindow::new(1000);
        assert!(i.admits(5000), "a lone request always fits");
        i.take(600);
        assert!(!i.admits(500));
        assert!(i.admits(400));
        i.give(600);
        assert_eq!(i.used(), 0);
    }
}
