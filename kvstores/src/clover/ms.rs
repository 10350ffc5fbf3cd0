//! Clover's metadata server (MS): hands out anchors and version buffers in batches, takes
//! retirements, and recycles buffers by GC version (the parent module's doc has the scheme).
//! Its own process (`clio-kv-ms`) or a thread of `clio bench ycsb`; it never reads or writes
//! the memory it hands out.

use super::*;

/// The metadata server's command line (`clio-kv-ms`; `clio bench ycsb` runs the same code).
#[derive(Args, Debug, Clone)]
pub struct MsArgs {
    /// Node, credentials, address, value size, threads, faults.
    #[command(flatten)]
    pub server: rpc::ServerArgs,
    /// The GC epoch `Te` in milliseconds (CNs must use the same).
    #[arg(long, default_value_t = 2000)]
    pub epoch_ms: u64,
}

/// The MS's buffer bookkeeping (no network: unit-testable).
#[derive(Debug, Default)]
pub struct GcState {
    /// Per buffer: current GC version and whether a CN holds it.
    bufs: HashMap<u64, (u8, bool)>,
    free: VecDeque<u64>,
    overflow: VecDeque<(Instant, u64)>,
    /// Counters: buffers handed out, retirements accepted, retirements refused (unknown,
    /// not allocated, wrong GC version), buffers parked on the overflow list.
    pub handed: u64,
    /// See `handed`.
    pub retired: u64,
    /// See `handed`.
    pub refused: u64,
    /// See `handed`.
    pub overflowed: u64,
    /// Buffers handed out again after a retirement.
    pub reused: u64,
}

impl GcState {
    /// Add fresh buffers (GC version 1) to the free list.
    pub fn add_fresh(&mut self, vas: impl IntoIterator<Item = u64>) {
        for va in vas {
            self.bufs.insert(va, (1, false));
            self.free.push_back(va);
        }
    }

    /// Up to `n` free buffers with their GC versions (overflowed ones whose epoch passed
    /// first join the free list).
    pub fn take(&mut self, n: usize, now: Instant) -> Vec<(u64, u8)> {
        while self.overflow.front().is_some_and(|(t, _)| *t <= now) {
            if let Some((_, va)) = self.overflow.pop_front() {
                self.free.push_back(va);
            }
        }
        let mut out = Vec::new();
        while out.len() < n {
            let Some(va) = self.free.pop_front() else {
                break;
            };
            if let Some(s) = self.bufs.get_mut(&va) {
                s.1 = true;
                out.push((va, s.0));
                self.handed += 1;
                self.reused += u64::from(s.0 != 1);
            }
        }
        out
    }

    /// A CN retires buffer `va` that it knew with GC version `gc`. Refused (and ignored)
    /// unless the buffer is handed out with that version: a duplicate or forged retirement
    /// cannot free a buffer twice.
    pub fn retire(&mut self, va: u64, gc: u8, now: Instant, epoch: Duration) -> bool {
        match self.bufs.get_mut(&va) {
            Some(s) if s.1 && s.0 == gc => {
                s.1 = false;
                s.0 = gc.wrapping_add(1);
                self.retired += 1;
                if s.0 == 0 {
                    self.overflowed += 1;
                    self.overflow.push_back((now + epoch, va));
                } else {
                    // Reused first (LIFO): recently retired buffers are the ones stale
                    // cursors still point at, so their GC-version checks get exercised.
                    self.free.push_front(va);
                }
                true
            }
            _ => {
                self.refused += 1;
                false
            }
        }
    }
}

struct Ms {
    c: Client,
    buf_bytes: u64,
    epoch: Duration,
    st: Mutex<MsState>,
}

#[derive(Default)]
struct MsState {
    anchors: HashMap<Vec<u8>, u64>,
    anchor_pool: Vec<u64>,
    gc: GcState,
}

impl Ms {
    fn handle(&self, kind: u8, body: &[u8]) -> KvResult<(u8, Vec<u8>)> {
        let mut r = Reader::new(body, "a compute node");
        let mut st = self.st.lock().map_err(poisoned)?;
        let now = Instant::now();
        match kind {
            LOOKUP => {
                let key = r.blob(MAX_KEY)?;
                check_key(key)?;
                if let Some(&a) = st.anchors.get(key) {
                    return Ok((OK, a.to_le_bytes().to_vec()));
                }
                if st.anchor_pool.is_empty() {
                    let base = self.c.ralloc(ANCHOR * CHUNK_ANCHORS)?;
                    st.anchor_pool = (0..CHUNK_ANCHORS)
                        .rev()
                        .map(|i| base + i * ANCHOR)
                        .collect();
                }
                let a = st
                    .anchor_pool
                    .pop()
                    .ok_or(KvError::Full("clover anchors"))?;
                st.anchors.insert(key.to_vec(), a);
                Ok((OK, a.to_le_bytes().to_vec()))
            }
            ALLOC => {
                let n = (r.u32()?).min(1024) as usize;
                let mut got = st.gc.take(n, now);
                if got.len() < n {
                    let base = self.c.ralloc(self.buf_bytes * CHUNK_BUFFERS)?;
                    st.gc
                        .add_fresh((0..CHUNK_BUFFERS).map(|i| base + i * self.buf_bytes));
                    got.extend(st.gc.take(n - got.len(), now));
                }
                let mut out = Vec::with_capacity(4 + 9 * got.len());
                out.extend_from_slice(&(got.len() as u32).to_le_bytes());
                for (va, gc) in got {
                    out.extend_from_slice(&va.to_le_bytes());
                    out.push(gc);
                }
                Ok((OK, out))
            }
            RETIRE => {
                let n = r.u32()?;
                if n as usize > rpc::MAX_DATAGRAM / 9 {
                    return Err(KvError::Corrupt {
                        from: "a compute node",
                        detail: format!("retire count {n}"),
                    });
                }
                let mut accepted = 0u32;
                for _ in 0..n {
                    let va = r.u64()?;
                    let gc = r.bytes(1)?[0];
                    accepted += u32::from(st.gc.retire(va, gc, now, self.epoch));
                }
                Ok((OK, accepted.to_le_bytes().to_vec()))
            }
            STATS => {
                let mut out = Vec::new();
                for x in [
                    st.gc.handed,
                    st.gc.retired,
                    st.gc.refused,
                    st.gc.overflowed,
                    st.gc.reused,
                    self.c.stats().requests,
                ] {
                    out.extend_from_slice(&x.to_le_bytes());
                }
                Ok((OK, out))
            }
            k => Err(KvError::Corrupt {
                from: "a compute node",
                detail: format!("unknown request kind {k}"),
            }),
        }
    }
}

/// Run a metadata server until `stop` is set: join the RAS, bind, print `listening ADDR`,
/// serve.
pub fn run_metadata_server(a: &MsArgs, stop: Arc<AtomicBool>) -> KvResult<()> {
    let (buf_bytes, epoch) = (
        buffer_bytes(a.server.max_value),
        Duration::from_millis(a.epoch_ms.max(1)),
    );
    a.server.run(stop, |c| {
        let ms = Ms {
            c,
            buf_bytes,
            epoch,
            st: Mutex::default(),
        };
        move |kind, body: &[u8]| ms.handle(kind, body)
    })
}

/// MS arguments for `link`'s RAS (the fault seed is changed for the MS).
pub fn ms_args(link: &NodeLink, max_value: usize, epoch_ms: u64) -> Vec<String> {
    let mut v = rpc::ServerArgs::for_link(link, max_value, 0x3500);
    v.extend(["--epoch-ms".to_string(), epoch_ms.to_string()]);
    v
}

/// Counters of the MS: buffers handed out, retirements accepted, refused, overflowed,
/// buffers reused, the MS's own requests to the node.
pub fn ms_stats(addr: SocketAddr) -> KvResult<[u64; 6]> {
    let mut c = RpcClient::connect(addr, PEER, None)?;
    let b = ok(c.call(STATS, Vec::new())?)?;
    let mut r = Reader::new(&b, PEER);
    Ok([r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?, r.u64()?])
}
