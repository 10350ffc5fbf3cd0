//! Fault injection around any transport: seeded drop, duplicate, reorder and corrupt, in
//! both directions.
//!
//! Reordering is bounded, as in a real network: a held packet goes out after the next one,
//! and at the latest when the client starts waiting for responses. So a packet is never
//! delivered after a response the client has already seen (a network that delays a packet
//! past a whole later request/response exchange would also defeat the idempotence of plain
//! writes, in the paper's design as in ours).
//!
//! Over a transport that opens lanes (UDP), every lane is faulty too, with a seed of its own;
//! [`FaultyTransport::stats`] counts all of them.

use super::Transport;
use crate::error::Result;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Fault rates (each a probability per packet, per direction) and the seed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FaultConfig {
    /// Probability that a packet is lost.
    pub drop: f64,
    /// Probability that a packet is delivered twice.
    pub duplicate: f64,
    /// Probability that a packet is delivered after the next one.
    pub reorder: f64,
    /// Probability that one random bit of a packet is flipped.
    pub corrupt: f64,
    /// Seed of the random choices.
    pub seed: u64,
}

impl FaultConfig {
    /// No faults.
    pub fn none() -> FaultConfig {
        FaultConfig {
            drop: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            corrupt: 0.0,
            seed: 0,
        }
    }
}

/// What the injector did (per direction summed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Packets that went through the injector.
    pub packets: u64,
    /// Packets dropped.
    pub dropped: u64,
    /// Packets duplicated.
    pub duplicated: u64,
    /// Packets reordered.
    pub reordered: u64,
    /// Packets corrupted.
    pub corrupted: u64,
}

struct State {
    rng: StdRng,
    tx_held: Option<Vec<u8>>,
    rx_held: Option<Vec<u8>>,
    rx_extra: VecDeque<Vec<u8>>,
}

/// A transport that misbehaves on purpose.
pub struct FaultyTransport<T: Transport> {
    inner: T,
    cfg: FaultConfig,
    st: Mutex<State>,
    /// What was injected, on this transport and every lane opened from it.
    stats: Arc<Mutex<FaultStats>>,
    /// Lanes opened from this one (each draws its own seed).
    lanes: AtomicU64,
}

enum Fate {
    Drop,
    Deliver {
        copies: usize,
        hold: bool,
        packet: Vec<u8>,
    },
}

impl<T: Transport> FaultyTransport<T> {
    /// Wrap `inner`.
    pub fn new(inner: T, cfg: FaultConfig) -> FaultyTransport<T> {
        Self::counted(inner, cfg, Arc::default())
    }

    fn counted(inner: T, cfg: FaultConfig, stats: Arc<Mutex<FaultStats>>) -> FaultyTransport<T> {
        let st = State {
            rng: StdRng::seed_from_u64(cfg.seed),
            tx_held: None,
            rx_held: None,
            rx_extra: VecDeque::new(),
        };
        FaultyTransport {
            inner,
            cfg,
            st: Mutex::new(st),
            stats,
            lanes: AtomicU64::new(0),
        }
    }

    /// What was injected so far (lanes included).
    pub fn stats(&self) -> FaultStats {
        *self.stats.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn fate(&self, st: &mut State, packet: &[u8]) -> Fate {
        let cfg = &self.cfg;
        let mut stats = self.stats.lock().unwrap_or_else(|e| e.into_inner());
        stats.packets += 1;
        if st.rng.gen_bool(cfg.drop) {
            stats.dropped += 1;
            return Fate::Drop;
        }
        let mut p = packet.to_vec();
        if !p.is_empty() && st.rng.gen_bool(cfg.corrupt) {
            let bit = st.rng.gen_range(0..p.len() * 8);
            p[bit / 8] ^= 1 << (bit % 8);
            stats.corrupted += 1;
        }
        let copies = if st.rng.gen_bool(cfg.duplicate) {
            stats.duplicated += 1;
            2
        } else {
            1
        };
        let hold = st.rng.gen_bool(cfg.reorder);
        if hold {
            stats.reordered += 1;
        }
        Fate::Deliver {
            copies,
            hold,
            packet: p,
        }
    }
}

impl<T: Transport> Transport for FaultyTransport<T> {
    fn burst_capacity(&self) -> Option<usize> {
        self.inner.burst_capacity()
    }

    fn send(&self, packet: &[u8]) -> Result<()> {
        let mut st = self.lock();
        let Fate::Deliver {
            copies,
            hold,
            packet,
        } = self.fate(&mut st, packet)
        else {
            return Ok(());
        };
        let earlier = st.tx_held.take();
        if hold && earlier.is_none() {
            st.tx_held = Some(packet);
            return Ok(());
        }
        for _ in 0..copies {
            self.inner.send(&packet)?;
        }
        // The held packet overtaken by this one.
        if let Some(e) = earlier {
            self.inner.send(&e)?;
        }
        Ok(())
    }

    fn recv(&self, timeout: Duration) -> Result<Option<Vec<u8>>> {
        {
            // The client is waiting: whatever the "network" holds is delivered now.
            let mut st = self.lock();
            if let Some(p) = st.tx_held.take() {
                self.inner.send(&p)?;
            }
            if let Some(p) = st.rx_extra.pop_front() {
                return Ok(Some(p));
            }
        }
        let got = self.inner.recv(timeout)?;
        let mut st = self.lock();
        let Some(p) = got else {
            return Ok(st.rx_held.take());
        };
        let Fate::Deliver {
            copies,
            hold,
            packet,
        } = self.fate(&mut st, &p)
        else {
            return Ok(None);
        };
        if copies == 2 {
            st.rx_extra.push_back(packet.clone());
        }
        if hold && st.rx_held.is_none() {
            st.rx_held = Some(packet);
            return Ok(None);
        }
        if let Some(h) = st.rx_held.take() {
            st.rx_extra.push_back(h);
        }
        Ok(Some(packet))
    }

    fn name(&self) -> &'static str {
        "faulty"
    }

    fn open_lane(&self) -> Option<Box<dyn Transport>> {
        let lane = self.inner.open_lane()?;
        let n = self.lanes.fetch_add(1, Ordering::Relaxed) + 1;
        let cfg = FaultConfig {
            seed: self.cfg.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ..self.cfg
        };
        Some(Box::new(FaultyTransport::counted(
            lane,
            cfg,
            self.stats.clone(),
        )))
    }
}
