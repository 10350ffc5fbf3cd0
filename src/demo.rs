//! `clio demo`: a memory node in this process (the model, UDP on loopback) and a workload
//! through CLib: register, allocate, write and read back, a lock shared by threads and by a
//! second OS process that joins the remote address space from its own socket (another CN),
//! atomics, a forged key refused, a short latency run. Prints a readable summary; fails
//! loudly if any check fails.

use anyhow::{ensure, Context, Result};
use clap::Args;
use clio_clib::{Client, ClioError, Credentials, Output};
use clio_sim::server::spawn_udp;
use clio_sim::{BoardConfig, CBoard, SlowPathMode};
use hdrhistogram::Histogram;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Arguments of `clio demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Threads contending for the remote lock.
    #[arg(long, default_value_t = 4)]
    threads: u64,
    /// Lock-protected increments per thread.
    #[arg(long, default_value_t = 100)]
    increments: u64,
    /// 16-byte reads in the short latency run.
    #[arg(long, default_value_t = 5000)]
    reads: u64,
    /// What executes requests: the behavioural model, or the fast path's Verilog under
    /// Verilator (`rtl`, needs a build with `--features rtl` after `make rtl`).
    #[arg(long, value_enum, default_value_t = crate::board::Backend::Model)]
    backend: crate::board::Backend,
    /// (Internal) run as the demo's second process: join the RAS `PID:KEY` at this node.
    #[arg(long, hide = true, requires_all = ["creds", "shared_va"])]
    member_of: Option<std::net::SocketAddr>,
    /// (Internal) credentials of the RAS to join.
    #[arg(long, hide = true)]
    creds: Option<Credentials>,
    /// (Internal) address of the shared lock; the counter follows it.
    #[arg(long, hide = true)]
    shared_va: Option<u64>,
}

/// Increment the counter at `lock + 64` under the lock, `n` times.
fn locked_increments(c: &Client, lock: u64, n: u64) -> clio_clib::Result<()> {
    let counter = lock + 64;
    for _ in 0..n {
        c.rlock(lock)?;
        let v = u64::from_le_bytes(c.rread(counter, 8)?.try_into().unwrap_or([0; 8]));
        c.rwrite(counter, &(v + 1).to_le_bytes())?;
        c.runlock(lock)?;
    }
    Ok(())
}

/// `a.threads` threads of this process, each doing `a.increments` locked increments.
fn locked_threads(c: &Client, lock: u64, a: &DemoArgs) -> Result<()> {
    let threads: Vec<_> = (0..a.threads)
        .map(|_| {
            let c = c.clone();
            let n = a.increments;
            std::thread::spawn(move || locked_increments(&c, lock, n))
        })
        .collect();
    for t in threads {
        t.join()
            .map_err(|_| anyhow::anyhow!("a lock thread panicked"))??;
    }
    Ok(())
}

/// The demo's second process: join, share the lock with the first process's threads.
fn member(node: std::net::SocketAddr, creds: Credentials, lock: u64, a: &DemoArgs) -> Result<()> {
    let c = Client::join_udp(node, creds).context("joining the remote address space")?;
    locked_threads(&c, lock, a)?;
    println!(
        "member: OS pid {}, RAS {} as client {}, {} threads x {} increments done",
        std::process::id(),
        c.pid(),
        c.client_id(),
        a.threads,
        a.increments
    );
    Ok(())
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1000.0
}

/// Run the demo.
pub fn run(a: DemoArgs) -> Result<()> {
    if let (Some(node), Some(creds), Some(va)) = (a.member_of, a.creds, a.shared_va) {
        return member(node, creds, va, &a);
    }
    let t0 = Instant::now();
    let cfg = BoardConfig {
        dram_bytes: 1 << 30,
        slowpath: SlowPathMode::InProcess,
        ..BoardConfig::default()
    };
    let page = 1u64 << cfg.page_shift;
    let (board, what): (Box<dyn clio_sim::MemoryNode>, &str) = match a.backend {
        crate::board::Backend::Model => (
            Box::new(CBoard::new(&cfg).context("starting the memory node model")?),
            "behavioural CBoard model",
        ),
        #[cfg(feature = "rtl")]
        crate::board::Backend::Rtl => (
            Box::new(
                clio_sim::cosim::RtlBoard::new(&cfg, 20, None)
                    .context("starting the cosimulated memory node")?,
            ),
            "fast-path RTL under Verilator",
        ),
    };
    let server =
        spawn_udp(board, "127.0.0.1:0".parse()?).context("serving the node on loopback UDP")?;
    let addr = server.udp_addr.context("the node has no UDP address")?;
    println!(
        "1. memory node ({what}) serving UDP on {addr}, 1 GiB DRAM, {} KiB pages",
        page >> 10
    );

    // A simulated RTL node answers in about a millisecond of wall time (it is clocked in
    // software): tell the delay-based congestion control so, or it would read the simulator's
    // slowness as congestion and pace itself down to a crawl.
    let cfg = match a.backend {
        crate::board::Backend::Model => clio_clib::Config::default(),
        #[cfg(feature = "rtl")]
        crate::board::Backend::Rtl => clio_clib::Config {
            target_delay: std::time::Duration::from_millis(20),
            min_rto: std::time::Duration::from_millis(50),
            initial_rto: std::time::Duration::from_millis(100),
            max_rto: std::time::Duration::from_secs(2),
            ..clio_clib::Config::default()
        },
    };
    let transport = clio_clib::TransportKind::Udp(addr)
        .open()
        .context("opening a UDP socket")?;
    let c = Client::connect(transport, cfg.clone()).context("registering with the node")?;
    println!(
        "2. registered: remote address space {} (its 64-bit key came from the node's CSPRNG; every request carries it)",
        c.pid()
    );

    let va = c.ralloc(16 << 20).context("ralloc")?;
    println!(
        "3. ralloc(16 MiB) -> remote VA 0x{va:x} ({} bytes after rounding to pages)",
        c.allocation_len(va).unwrap_or(0)
    );

    let msg = b"hello, disaggregated memory";
    c.rwrite(va, msg)?;
    let back = c.rread(va, msg.len())?;
    ensure!(
        back == msg,
        "read back {:?}",
        String::from_utf8_lossy(&back)
    );
    let big: Vec<u8> = (0..200_000u32).map(|i| (i * 31 + 7) as u8).collect();
    c.rwrite(va + page - 1000, &big)?; // crosses a page boundary, 196 packets
    ensure!(
        c.rread(va + page - 1000, big.len())? == big,
        "200 KB read back differs"
    );
    let w = c.rwrite_async(va + 3 * page, b"async")?;
    let r = c.rread_async(va + 3 * page, 5)?;
    let out = c.rpoll(&[w, r])?;
    ensure!(
        out[1] == Output::Data(b"async".to_vec()),
        "async read after async write saw {:?}",
        out[1]
    );
    println!("4. wrote and read back {} B, 200 KB across a page boundary, and an async write+read pair: all equal", msg.len());

    let (lock, counter) = (va + 2 * page, va + 2 * page + 64);
    // A second OS process, with its own socket (another CN), joins this RAS and contends for
    // the same lock while this process's threads do.
    let exe = std::env::current_exe().context("locating this executable")?;
    let second = Command::new(exe)
        .arg("demo")
        .arg("--member-of")
        .arg(addr.to_string())
        .arg("--creds")
        .arg(c.credentials().to_string())
        .arg("--shared-va")
        .arg(lock.to_string())
        .arg("--threads")
        .arg(a.threads.to_string())
        .arg("--increments")
        .arg(a.increments.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .context("starting the second process")?;
    locked_threads(&c, lock, &a)?;
    let out = second
        .wait_with_output()
        .context("waiting for the second process")?;
    ensure!(out.status.success(), "the second process failed");
    let member_line = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let total = u64::from_le_bytes(c.rread(counter, 8)?.try_into().unwrap_or([0; 8]));
    ensure!(
        total == 2 * a.threads * a.increments,
        "lock-protected counter is {total}, expected {}",
        2 * a.threads * a.increments
    );
    let faa = va + 2 * page + 128;
    for _ in 0..100 {
        c.fetch_add(faa, 3)?;
    }
    ensure!(
        c.compare_and_swap(faa, 300, 1)? == 300,
        "fetch-add total wrong"
    );
    println!(
        "5. two OS processes on two sockets share the RAS: this one (OS pid {}, client {}) and a second that joined it ({member_line});\n   {} threads each x {} increments under one rlock/runlock: counter = {total} (exact); 100 fetch-adds + CAS: exact",
        std::process::id(),
        c.client_id(),
        a.threads,
        a.increments
    );
    let forged = Credentials {
        key: c.credentials().key ^ 1,
        ..c.credentials()
    };
    let refused = Client::join(clio_clib::TransportKind::Udp(addr).open()?, cfg, forged);
    ensure!(
        matches!(refused, Err(ClioError::Denied)),
        "a join with a forged key was not refused: {:?}",
        refused.err()
    );
    println!(
        "   a join with the key one bit off is refused by the node's key check: access denied"
    );

    // The extend path: a 64-node linked list in remote memory, searched at the node by the
    // pointer-chasing offload in one request (the RTL has the same unit) against one read per
    // node from here.
    let list = va + 3 * page + 4096;
    let order: Vec<u64> = (0..64u64).map(|i| (i * 37) % 64).collect(); // scattered nodes
    let node_at = |i: usize| list + order[i] * 64;
    let mut image = vec![0u8; 64 * 64];
    for i in 0..64 {
        let next = if i + 1 < 64 { node_at(i + 1) } else { 0 };
        let at = (order[i] * 64) as usize;
        image[at..at + 8].copy_from_slice(&(1000 + i as u64).to_le_bytes());
        image[at + 8..at + 16].copy_from_slice(&next.to_le_bytes());
        let value = format!("value of key {}", 1000 + i); // 17 bytes
        image[at + 16..at + 16 + value.len()].copy_from_slice(value.as_bytes());
    }
    c.rwrite(list, &image)?;
    let layout = clio_clib::ChaseLayout {
        key_offset: 0,
        next_offset: 8,
        value_offset: 16,
        max_hops: 64,
    };
    let before = c.stats().requests;
    let found = c.rchase(node_at(0), 1050, layout, 17)?;
    let chase_requests = c.stats().requests - before;
    ensure!(
        found
            == clio_clib::ChaseOutcome::Found {
                value: b"value of key 1050".to_vec(),
                node: node_at(50),
                hops: 51,
            },
        "pointer chase answered {found:?}"
    );
    let (mut at, mut reads) = (node_at(0), 0u64);
    loop {
        let n = c.rread(at, 32)?;
        reads += 1;
        if n[..8] == 1050u64.to_le_bytes() {
            break;
        }
        at = u64::from_le_bytes(n[8..16].try_into().unwrap_or([0; 8]));
        ensure!(at != 0, "key 1050 not found walking from the CN");
    }
    let hops = match found {
        clio_clib::ChaseOutcome::Found { hops, .. } => hops,
        _ => 0,
    };
    println!(
        "6. a 64-node linked list in remote memory: key 1050 found at the node by the pointer-chasing offload in {chase_requests} request ({hops} hops), from the CN in {reads} reads"
    );

    // Clio-KV: a key-value store that runs at the node in its own address space (the slow
    // path set it up at start; the RTL has the same unit), one request per operation.
    let before = c.stats().requests;
    let keys = 100u32;
    for i in 0..keys {
        let outcome = c.kv_put(
            format!("user{i:04}").as_bytes(),
            format!("v1 of {i}").as_bytes(),
        )?;
        ensure!(
            outcome == clio_clib::KvPutOutcome::Created,
            "put {i}: {outcome:?}"
        );
    }
    let updated = c.kv_put(b"user0042", b"v2 of 42")?;
    let got = c.kv_get(b"user0042")?;
    ensure!(
        updated == clio_clib::KvPutOutcome::Replaced && got.as_deref() == Some(&b"v2 of 42"[..]),
        "update then get of user0042: {updated:?}, {got:?}"
    );
    ensure!(
        c.kv_delete(b"user0007")?,
        "delete of user0007 found nothing"
    );
    ensure!(
        c.kv_get(b"user0007")?.is_none(),
        "user0007 still there after its delete"
    );
    let kv_requests = c.stats().requests - before;
    let ops = keys as u64 + 4;
    println!(
        "7. Clio-KV at the node: {keys} puts, an update, a get, a delete and a get that misses: {ops} operations in {kv_requests} requests ({} CN acks release the idempotence-ring slots of puts and deletes)",
        kv_requests.saturating_sub(ops)
    );

    let mut h = Histogram::<u64>::new(3)?;
    for _ in 0..200 {
        c.rread(va, 16)?;
    }
    let t = Instant::now();
    for _ in 0..a.reads {
        let s = Instant::now();
        c.rread(va, 16)?;
        h.record(s.elapsed().as_nanos() as u64)?;
    }
    let secs = t.elapsed().as_secs_f64();
    println!(
        "8. {} synchronous 16 B reads: median {:.1} us, p99 {:.1} us, p99.9 {:.1} us ({:.0} ops/s, one thread)",
        a.reads,
        us(h.value_at_quantile(0.5)),
        us(h.value_at_quantile(0.99)),
        us(h.value_at_quantile(0.999)),
        a.reads as f64 / secs
    );

    c.rfree(va)?;
    ensure!(c.rread(va, 8).is_err(), "read after rfree succeeded");
    let s = c.stats();
    let n = server
        .board()
        .lock()
        .map(|b| b.counters())
        .map_err(|_| anyhow::anyhow!("node lock poisoned"))?;
    println!(
        "9. rfree done; reads of the freed range now fail with: {}",
        c.rread(va, 8)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    );
    println!();
    println!("summary ({:.2} s)", t0.elapsed().as_secs_f64());
    println!(
        "  client: {} ops, {} requests, {} packets sent, {} retransmits, cwnd {:.1}, srtt {:.1} us, rto {:.2} ms",
        s.ops_completed,
        s.requests,
        s.packets_sent,
        s.retransmits,
        s.cwnd,
        s.srtt.map_or(0.0, |d| d.as_secs_f64() * 1e6),
        s.rto.as_secs_f64() * 1e3
    );
    println!(
        "  node:   {} packets in, {} out, TLB {} hits / {} misses, {} page faults (first touch), {} atomics, {} slow-path requests, {} denied",
        n.rx_packets, n.tx_packets, n.tlb_hits, n.tlb_misses, n.page_faults, n.atomics, n.slowpath_requests, n.denied
    );
    println!("demo: all checks passed");
    drop(c);
    server
        .stop()
        .map_err(|e| anyhow::anyhow!("stopping the node: {e}"))?;
    Ok(())
}
