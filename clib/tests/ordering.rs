//! Dependency tracking: a request that depends on an incomplete earlier one on the same page
//! is held back at the compute node; requests to unrelated pages go out meanwhile.

mod common;
use clio_clib::transport::Transport;
use clio_clib::{Client, ClioError, Config, Output};
use clio_proto::header::parse_verified;
use clio_proto::Opcode;
use common::*;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// A node whose responses are held while the gate is closed; it logs what it received.
struct Gated {
    board: Mutex<clio_sim::CBoard>,
    open: AtomicBool,
    log: Mutex<Vec<(Opcode, u64)>>,
    held: Mutex<Vec<Vec<u8>>>,
    inbox: Mutex<VecDeque<Vec<u8>>>,
    ready: Condvar,
}

impl Transport for Gated {
    fn send(&self, p: &[u8]) -> clio_clib::Result<()> {
        if let Ok((h, _)) = parse_verified(p) {
            self.log.lock().unwrap().push((h.opcode, h.va));
        }
        let out = serve(&self.board, p);
        if self.open.load(Ordering::SeqCst) {
            self.inbox.lock().unwrap().extend(out);
            self.ready.notify_all();
        } else {
            self.held.lock().unwrap().extend(out);
        }
        Ok(())
    }
    fn recv(&self, timeout: Duration) -> clio_clib::Result<Option<Vec<u8>>> {
        let end = Instant::now() + timeout;
        let mut q = self.inbox.lock().unwrap();
        loop {
            if self.open.load(Ordering::SeqCst) {
                q.extend(self.held.lock().unwrap().drain(..));
            }
            if let Some(p) = q.pop_front() {
                return Ok(Some(p));
            }
            let now = Instant::now();
            if now >= end {
                return Ok(None);
            }
            q = self.ready.wait_timeout(q, end - now).unwrap().0;
        }
    }
    fn name(&self) -> &'static str {
        "gated"
    }
}

fn setup() -> (Client, Arc<Gated>, u64) {
    let g = Arc::new(Gated {
        board: Mutex::new(board()),
        open: AtomicBool::new(true),
        log: Mutex::new(Vec::new()),
        held: Mutex::new(Vec::new()),
        inbox: Mutex::new(VecDeque::new()),
        ready: Condvar::new(),
    });
    // A long RTO: while the gate is closed nothing is retransmitted, so the log shows
    // first transmissions only.
    let cfg = Config {
        track_shift: PAGE_SHIFT,
        initial_rto: Duration::from_secs(5),
        min_rto: Duration::from_secs(5),
        max_rto: Duration::from_secs(5),
        ..Config::default()
    };
    let c = Client::connect(Box::new(g.clone()) as Box<dyn Transport>, cfg).unwrap();
    let va = c.ralloc(4 * PAGE).unwrap();
    (c, g, va)
}

fn sent(g: &Gated, op: Opcode, va: u64) -> bool {
    g.log
        .lock()
        .unwrap()
        .iter()
        .any(|&(o, v)| o == op && v == va)
}

#[test]
fn async_write_then_read_of_the_same_page_sees_the_new_data_and_other_pages_overlap() {
    let (c, g, va) = setup();
    c.rwrite(va + 8, b"old").unwrap();
    g.open.store(false, Ordering::SeqCst);
    let w = c.rwrite_async(va + 8, b"new").unwrap();
    let r = c.rread_async(va + 8, 3).unwrap(); // RAW: same page
    let r2 = c.rread_async(va + 100, 3).unwrap(); // RAW on a different address of the same page: a (false) dependency too
    let u = c.rwrite_async(va + PAGE + 8, b"elsewhere").unwrap(); // unrelated page
    let ur = c.rread_async(va + 2 * PAGE, 4).unwrap(); // unrelated page
    assert!(sent(&g, Opcode::Write, va + 8), "the write went out");
    assert!(
        !sent(&g, Opcode::Read, va + 8) && !sent(&g, Opcode::Read, va + 100),
        "reads of its page wait for it"
    );
    assert!(
        sent(&g, Opcode::Write, va + PAGE + 8) && sent(&g, Opcode::Read, va + 2 * PAGE),
        "unrelated pages overlap with it"
    );
    assert_eq!(c.stats().dependency_waits, 2);
    g.open.store(true, Ordering::SeqCst);
    g.ready.notify_all();
    let out = c.rpoll(&[w, r, r2, u, ur]).unwrap();
    assert_eq!(out[1], Output::Data(b"new".to_vec()));
    assert_eq!(out[4], Output::Data(vec![0; 4]));
    assert_eq!(c.rread(va + PAGE + 8, 9).unwrap(), b"elsewhere");
}

#[test]
fn war_and_waw_wait_and_rrelease_waits_for_everything() {
    let (c, g, va) = setup();
    g.open.store(false, Ordering::SeqCst);
    let r = c.rread_async(va, 4).unwrap();
    let w1 = c.rwrite_async(va + 4, b"AAAA").unwrap(); // WAR on the page
    let w2 = c.rwrite_async(va + 4, b"BBBB").unwrap(); // WAW behind it
    assert!(sent(&g, Opcode::Read, va) && !sent(&g, Opcode::Write, va + 4));
    // Release from another thread blocks until everything issued so far is complete.
    let c2 = c.clone();
    let done = Arc::new(AtomicBool::new(false));
    let d2 = done.clone();
    let t = std::thread::spawn(move || {
        c2.rrelease();
        d2.store(true, Ordering::SeqCst);
    });
    std::thread::sleep(Duration::from_millis(50));
    assert!(
        !done.load(Ordering::SeqCst),
        "rrelease waits for in-flight requests"
    );
    g.open.store(true, Ordering::SeqCst);
    g.ready.notify_all();
    t.join().unwrap();
    assert!(done.load(Ordering::SeqCst));
    // rrelease left the results for rpoll.
    assert_eq!(c.rpoll(&[r, w1, w2]).unwrap()[0], Output::Data(vec![0; 4]));
    assert_eq!(
        c.rread(va + 4, 4).unwrap(),
        b"BBBB",
        "WAW kept program order"
    );
}

#[test]
fn rfree_blocks_later_accesses_to_its_range() {
    let (c, g, va) = setup();
    c.rwrite(va + 3 * PAGE, b"last page").unwrap();
    g.open.store(false, Ordering::SeqCst);
    let f = c.rfree_async(va).unwrap();
    let r = c.rread_async(va + 3 * PAGE, 9).unwrap();
    assert!(
        sent(&g, Opcode::Free, va) && !sent(&g, Opcode::Read, va + 3 * PAGE),
        "the read waits for the free of its range"
    );
    g.open.store(true, Ordering::SeqCst);
    g.ready.notify_all();
    c.rpoll_one(f).unwrap();
    assert_eq!(
        c.rpoll_one(r),
        Err(ClioError::Unmapped { va: va + 3 * PAGE }),
        "so it sees the range freed"
    );
}
