//! YCSB-style workload generation: workloads A (50% update), B (5% update), C (read only) and
//! custom mixes; keys drawn from a Zipfian distribution (YCSB's `ZipfianGenerator`, Gray et
//! al.'s method) scrambled by FNV-1a as YCSB's `ScrambledZipfianGenerator` does, so the hot keys
//! are spread over the key space. Everything is seeded.
//!
//! One difference from YCSB: YCSB's scrambled generator draws from a Zipfian over 10^10 items
//! with a constant precomputed for theta 0.99 and folds the hash into the key count; here the
//! Zipfian is over the key count itself (so any theta works) and then hashed and folded the
//! same way. As in YCSB, the fold is not a permutation: a few keys are never drawn.

use crate::store::fnv1a64;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Operation mix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Workload {
    /// 50% reads, 50% updates.
    A,
    /// 95% reads, 5% updates.
    B,
    /// 100% reads.
    C,
    /// Fractions of reads, updates and deletes (summing to 1).
    Custom {
        /// Reads.
        read: f64,
        /// Updates (puts of existing keys).
        update: f64,
        /// Deletes.
        delete: f64,
    },
}

impl Workload {
    /// (read, update, delete) fractions.
    pub fn mix(&self) -> (f64, f64, f64) {
        match *self {
            Workload::A => (0.5, 0.5, 0.0),
            Workload::B => (0.95, 0.05, 0.0),
            Workload::C => (1.0, 0.0, 0.0),
            Workload::Custom {
                read,
                update,
                delete,
            } => (read, update, delete),
        }
    }

    /// Name for tables (`A`, `B`, `C`, `custom:R:U:D` in percent).
    pub fn name(&self) -> String {
        match self {
            Workload::A => "A".into(),
            Workload::B => "B".into(),
            Workload::C => "C".into(),
            Workload::Custom { .. } => {
                let (r, u, d) = self.mix();
                let pct = |x: f64| (x * 1e4).round() / 1e2;
                format!("custom:{}:{}:{}", pct(r), pct(u), pct(d))
            }
        }
    }
}

impl std::str::FromStr for Workload {
    type Err = String;
    /// `A`, `B`, `C`, or `custom:READ:UPDATE:DELETE` in percent (e.g. `custom:80:15:5`).
    fn from_str(s: &str) -> Result<Workload, String> {
        match s.trim() {
            "A" | "a" => Ok(Workload::A),
            "B" | "b" => Ok(Workload::B),
            "C" | "c" => Ok(Workload::C),
            x => {
                let bad = || {
                    format!("workload `{x}`: want A, B, C or custom:READ:UPDATE:DELETE (percent)")
                };
                let rest = x.strip_prefix("custom:").ok_or_else(bad)?;
                let p: Vec<f64> = rest
                    .split(':')
                    .map(|v| v.parse::<f64>().map_err(|_| bad()))
                    .collect::<Result<_, _>>()?;
                if p.len() != 3 || p.iter().any(|v| !(0.0..=100.0).contains(v)) {
                    return Err(bad());
                }
                if (p.iter().sum::<f64>() - 100.0).abs() > 1e-6 {
                    return Err(format!("workload `{x}`: percentages must sum to 100"));
                }
                Ok(Workload::Custom {
                    read: p[0] / 100.0,
                    update: p[1] / 100.0,
                    delete: p[2] / 100.0,
                })
            }
        }
    }
}

/// YCSB's Zipfian generator over `0..n` (item 0 the most popular).
#[derive(Debug, Clone)]
pub struct Zipf {
    n: u64,
    theta: f64,
    alpha: f64,
    zetan: f64,
    eta: f64,
    half_pow_theta: f64,
}

fn zeta(n: u64, theta: f64) -> f64 {
    (1..=n).map(|i| 1.0 / (i as f64).powf(theta)).sum()
}

impl Zipf {
    /// `n >= 1` items, `0 <= theta < 1` (0 is uniform).
    pub fn new(n: u64, theta: f64) -> Result<Zipf, String> {
        if n == 0 {
            return Err("need at least one key".into());
        }
        if !(0.0..1.0).contains(&theta) {
            return Err(format!("theta {theta} must be in [0, 1)"));
        }
        let zetan = zeta(n, theta);
        let zeta2 = zeta(2.min(n), theta);
        let eta = if n > 1 {
            (1.0 - (2.0 / n as f64).powf(1.0 - theta)) / (1.0 - zeta2 / zetan)
        } else {
            1.0
        };
        Ok(Zipf {
            n,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zetan,
            eta,
            half_pow_theta: 1.0 + 0.5f64.powf(theta),
        })
    }

    /// Draw one item.
    pub fn sample(&self, rng: &mut impl Rng) -> u64 {
        if self.theta == 0.0 {
            return rng.gen_range(0..self.n);
        }
        let u: f64 = rng.gen();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < self.half_pow_theta && self.n > 1 {
            return 1;
        }
        let v = (self.n as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.n - 1)
    }
}

/// One operation of the workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum YcsbOp {
    /// Read this key.
    Read(u64),
    /// Overwrite this key.
    Update(u64),
    /// Delete this key.
    Delete(u64),
}

/// A seeded stream of operations.
pub struct Generator {
    rng: StdRng,
    zipf: Zipf,
    keys: u64,
    mix: (f64, f64, f64),
}

impl Generator {
    /// `keys` keys, Zipf `theta`, workload mix, seed.
    pub fn new(w: Workload, keys: u64, theta: f64, seed: u64) -> Result<Generator, String> {
        Ok(Generator {
            rng: StdRng::seed_from_u64(seed),
            zipf: Zipf::new(keys, theta)?,
            keys,
            mix: w.mix(),
        })
    }

    /// The next key (scrambled Zipfian).
    pub fn key(&mut self) -> u64 {
        let z = self.zipf.sample(&mut self.rng);
        if self.zipf.theta == 0.0 {
            return z;
        }
        fnv1a64(&z.to_le_bytes()) % self.keys
    }

    /// The next operation.
    pub fn next_op(&mut self) -> YcsbOp {
        let k = self.key();
        let x: f64 = self.rng.gen();
        if x < self.mix.0 {
            YcsbOp::Read(k)
        } else if x < self.mix.0 + self.mix.1 {
            YcsbOp::Update(k)
        } else {
            YcsbOp::Delete(k)
        }
    }
}

/// The key name of item `i` (`user` and ten digits, like YCSB's ordered keys).
pub fn key_name(i: u64) -> Vec<u8> {
    format!("user{i:010}").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zipf_is_skewed_and_uniform_is_not() {
        let mut r = StdRng::seed_from_u64(1);
        let z = Zipf::new(1000, 0.99).unwrap();
        let mut counts = vec![0u32; 1000];
        for _ in 0..100_000 {
            counts[z.sample(&mut r) as usize] += 1;
        }
        // Item 0 gets about 1/zeta(1000) ~ 13% of draws; the top 10 well over a third.
        assert!(counts[0] > 10_000 && counts[0] < 16_000, "{}", counts[0]);
        let top10: u32 = counts[..10].iter().sum();
        assert!(top10 > 35_000, "{top10}");
        let u = Zipf::new(1000, 0.0).unwrap();
        let mut c = [0u32; 1000];
        for _ in 0..100_000 {
            c[u.sample(&mut r) as usize] += 1;
        }
        assert!(c.iter().all(|&x| x > 40 && x < 170));
        assert!(Zipf::new(0, 0.5).is_err());
        assert!(Zipf::new(10, 1.0).is_err());
        assert_eq!(Zipf::new(1, 0.99).unwrap().sample(&mut r), 0);
    }

    #[test]
    fn mixes_and_seeds() {
        let mut g = Generator::new(Workload::A, 1000, 0.99, 7).unwrap();
        let ops: Vec<YcsbOp> = (0..10_000).map(|_| g.next_op()).collect();
        let updates = ops
            .iter()
            .filter(|o| matches!(o, YcsbOp::Update(_)))
            .count();
        assert!((4_700..5_300).contains(&updates), "{updates}");
        let mut g2 = Generator::new(Workload::A, 1000, 0.99, 7).unwrap();
        assert!(
            ops.iter().all(|o| *o == g2.next_op()),
            "same seed, same ops"
        );
        let mut c = Generator::new(Workload::C, 1000, 0.99, 7).unwrap();
        assert!((0..1000).all(|_| matches!(c.next_op(), YcsbOp::Read(k) if k < 1000)));
        let b: Workload = "B".parse().unwrap();
        assert_eq!(b.mix(), (0.95, 0.05, 0.0));
        let x: Workload = "custom:80:15:5".parse().unwrap();
        assert_eq!(x.mix(), (0.8, 0.15, 0.05));
        assert_eq!(x.name(), "custom:80:15:5");
        assert_eq!(x.name().parse::<Workload>().unwrap(), x);
        assert!("custom:80:15".parse::<Workload>().is_err());
        assert!("custom:80:15:6".parse::<Workload>().is_err());
        assert!("D".parse::<Workload>().is_err());
        // Scrambling spreads the hottest keys: the most drawn key is not key 0.
        let mut g = Generator::new(Workload::C, 1000, 0.99, 1).unwrap();
        let mut counts = vec![0u32; 1000];
        for _ in 0..20_000 {
            counts[g.key() as usize] += 1;
        }
        let hottest = (0..1000).max_by_key(|&i| counts[i]).unwrap();
        assert_eq!(hottest as u64, fnv1a64(&0u64.to_le_bytes()) % 1000);
        assert_eq!(key_name(42), b"user0000000042");
    }
}
