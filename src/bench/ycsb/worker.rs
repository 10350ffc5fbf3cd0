//! One compute node of `clio bench ycsb` (`clio bench ycsb-worker`, a process of its own):
//! its threads run the workload against the store for the given time and print what they
//! measured (`result` and `hist` lines) for the parent to parse ([`parse_worker`]).

use super::*;

/// Arguments of one worker process.
#[derive(Args, Debug)]
pub struct WorkerArgs {
    /// The store.
    #[arg(long)]
    spec: String,
    #[arg(long)]
    workload: Workload,
    #[arg(long)]
    keys: u64,
    #[arg(long)]
    theta: f64,
    #[arg(long)]
    value_size: usize,
    #[arg(long)]
    threads: usize,
    #[arg(long)]
    warmup: f64,
    #[arg(long)]
    duration: f64,
    #[arg(long)]
    seed: u64,
    /// This worker's number (writer ids and seeds).
    #[arg(long)]
    cn: u32,
}

/// The worker process: open the store as one CN, wait for `go`, run, print the results.
pub(crate) fn worker(w: WorkerArgs) -> Result<()> {
    let spec: StoreSpec = w.spec.parse()?;
    let f: Arc<dyn StoreFactory> = Arc::from(open_factory(&spec, loopback_config())?);
    let handles: Vec<Box<dyn KvStore>> =
        (0..w.threads).map(|_| f.open()).collect::<Result<_, _>>()?;
    println!("ready");
    std::io::stdout().flush()?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(w.warmup);
    let end = measure_from + Duration::from_secs_f64(w.duration);
    let threads: Vec<_> = handles
        .into_iter()
        .enumerate()
        .map(|(t, mut s)| {
            let wl = w.workload;
            let (keys, theta, vs) = (w.keys, w.theta, w.value_size);
            let seed = w.seed ^ (u64::from(w.cn) << 40) ^ ((t as u64) << 20);
            let writer = w.cn * 1000 + t as u32;
            std::thread::spawn(move || -> Result<Measured> {
                let mut g = Generator::new(wl, keys, theta, seed).map_err(anyhow::Error::msg)?;
                let mut m = Measured::new()?;
                let mut seq = 0u64;
                let mut at_start: Option<Cost> = None;
                loop {
                    let mut now = Instant::now();
                    if now >= end {
                        break;
                    }
                    if now >= measure_from && at_start.is_none() {
                        at_start = Some(s.cost()?);
                        now = Instant::now();
                    }
                    let op = g.next_op();
                    seq += 1;
                    let ok = do_op(s.as_mut(), &op, writer, seq, vs, &mut m);
                    let t1 = Instant::now();
                    if now >= measure_from && t1 <= end && ok {
                        m.hists[op_index(&op)]
                            .record(t1.duration_since(now).as_nanos().max(1) as u64)?;
                        m.ops += 1;
                    }
                }
                if let Some(c0) = at_start {
                    let c1 = s.cost()?;
                    m.round_trips = c1.round_trips.saturating_sub(c0.round_trips);
                    m.server_requests = c1.rpc_requests.saturating_sub(c0.rpc_requests);
                }
                Ok(m)
            })
        })
        .collect();
    let mut total = Measured::new()?;
    for t in threads {
        let m = t
            .join()
            .map_err(|_| anyhow::anyhow!("a worker thread panicked"))??;
        total.merge(&m)?;
    }
    drop(f);
    let mut out = String::new();
    writeln!(
        out,
        "result {} {} {} {} {} {}",
        total.ops,
        total.errors,
        total.torn,
        total.round_trips,
        total.server_requests,
        total.first_error.unwrap_or_default().replace('\n', " ")
    )?;
    for (i, h) in total.hists.iter().enumerate() {
        write!(out, "hist {i}")?;
        for v in h.iter_recorded() {
            write!(out, " {}:{}", v.value_iterated_to(), v.count_at_value())?;
        }
        writeln!(out)?;
    }
    print!("{out}");
    std::io::stdout().flush()?;
    Ok(())
}

/// Parse a worker's output.
pub(super) fn parse_worker(text: &str) -> Result<Measured> {
    let mut m = Measured::new()?;
    let mut got = false;
    for line in text.lines() {
        let mut f = line.split(' ');
        match f.next() {
            Some("result") => {
                let n: Vec<&str> = f.collect();
                if n.len() < 5 {
                    bail!("worker result line `{line}`");
                }
                m.ops = n[0].parse()?;
                m.errors = n[1].parse()?;
                m.torn = n[2].parse()?;
                m.round_trips = n[3].parse()?;
                m.server_requests = n[4].parse()?;
                let e = n[5..].join(" ");
                if !e.is_empty() {
                    m.first_error = Some(e);
                }
                got = true;
            }
            Some("hist") => {
                let i: usize = f.next().context("hist index")?.parse()?;
                let h = m.hists.get_mut(i).context("hist index out of range")?;
                for p in f {
                    let (v, c) = p.split_once(':').context("hist pair")?;
                    h.record_n(v.parse()?, c.parse()?)?;
                }
            }
            _ => {}
        }
    }
    if !got {
        bail!("worker printed no result");
    }
    Ok(m)
}
