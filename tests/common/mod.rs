//! Helpers shared by the tests that run `clio board` processes.
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::process::{Child, ChildStdout, Command, Stdio};

/// The `clio-slowpath` daemon beside the `clio` binary under test, built first if it is not
/// there (a test run builds only this package's binaries).
pub fn slowpath_daemon_bin() -> std::path::PathBuf {
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_clio")).with_file_name("clio-slowpath");
    if !bin.exists() {
        let ok = Command::new(env!("CARGO"))
            .args(["build", "-p", "clio-slowpath"])
            .status()
            .unwrap()
            .success();
        assert!(ok, "building clio-slowpath");
    }
    bin
}

/// A UDP port free right now on loopback.
pub fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Start `clio board ARGS` with its output piped; returns it with its first line (the
/// "listening on" line once the node serves).
pub fn spawn_board_piped(args: &[&str]) -> (Child, BufReader<ChildStdout>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_clio"))
        .arg("board")
        .args(args)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    (child, out, line)
}

/// Start `clio board ARGS`, wait until it listens, and keep draining its output so it never
/// blocks on a full pipe.
pub fn spawn_board(args: &[&str]) -> Child {
    let (child, out, line) = spawn_board_piped(args);
    assert!(line.starts_with("clio board: listening"), "{line}");
    std::thread::spawn(move || for _ in out.lines() {});
    child
}

/// Node processes that are killed when this goes out of scope, also when a test panics
/// (no `clio board` outlives its test).
pub struct Boards(pub Vec<Child>);

impl Drop for Boards {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `clio board` with 64 MiB of memory (64 KiB pages) listening on loopback `port`, with
/// `extra` flags: the memory nodes of the multi-node process tests.
pub fn small_board(port: u16, extra: &[&str]) -> Child {
    try_small_board(port, extra)
        .unwrap_or_else(|| panic!("clio board on port {port} did not start listening"))
}

/// [`small_board`], or `None` (the process stopped) when it did not start listening: its
/// port was taken.
pub fn try_small_board(port: u16, extra: &[&str]) -> Option<Child> {
    let listen = format!("127.0.0.1:{port}");
    let mut args = vec!["--memory", "64M", "--page-size", "64K", "--listen", &listen];
    args.extend_from_slice(extra);
    let (mut child, out, line) = spawn_board_piped(&args);
    if line.starts_with("clio board: listening") {
        std::thread::spawn(move || for _ in out.lines() {});
        return Some(child);
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// `n` [`small_board`]s, board `i` with the flags `extra(i)`, each on a free port (another
/// one when the port was taken between [`free_port`] and the board's bind, by another
/// test's socket; up to eight tries each): their ports and the processes, each held in
/// [`Boards`] as soon as it runs, so a failed start stops the others.
pub fn small_boards_on_free_ports(
    n: usize,
    extra: impl Fn(usize) -> Vec<String>,
) -> (Vec<u16>, Boards) {
    let (mut ports, mut nodes) = (Vec::new(), Boards(Vec::new()));
    for i in 0..n {
        let flags = extra(i);
        let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
        let (port, child) = (0..8)
            .find_map(|_| {
                let port = free_port();
                try_small_board(port, &flags).map(|c| (port, c))
            })
            .expect("no free port for a board in eight tries");
        ports.push(port);
        nodes.0.push(child);
    }
    (ports, nodes)
}

/// [`small_board`] with its memory in `file`.
pub fn memory_file_board(file: &std::path::Path, port: u16) -> Child {
    let file = file.to_string_lossy();
    small_board(port, &["--memory-file", &file])
}

/// `n` [`memory_file_board`]s with their memory files in `dir`: their ports, their files and
/// the processes.
pub fn memory_file_boards(
    dir: &std::path::Path,
    n: usize,
) -> (Vec<u16>, Vec<std::path::PathBuf>, Boards) {
    let files: Vec<_> = (0..n).map(|i| dir.join(format!("mem{i}"))).collect();
    let (ports, nodes) = small_boards_on_free_ports(n, |i| {
        vec![
            "--memory-file".into(),
            files[i].to_string_lossy().into_owned(),
        ]
    });
    (ports, files, nodes)
}

/// The pool's store without its notifications: a client that missed every view change (its
/// watch cut) but still reads the store when it asks.
pub struct Deaf(pub std::sync::Arc<clio_confmgr::EtcdStore>);

struct NoWatch;
impl clio_clib::WatchGuard for NoWatch {}

impl clio_clib::ConfigStore for Deaf {
    fn read(&self, key: &str) -> Result<Option<(Vec<u8>, u64)>, clio_clib::StoreError> {
        self.0.read(key)
    }
    fn compare_and_put(
        &self,
        key: &str,
        revision: Option<u64>,
        value: &[u8],
    ) -> Result<bool, clio_clib::StoreError> {
        self.0.compare_and_put(key, revision, value)
    }
    fn watch(
        &self,
        _: &str,
        _: clio_clib::OnChange,
    ) -> Result<Box<dyn clio_clib::WatchGuard>, clio_clib::StoreError> {
        Ok(Box::new(NoWatch))
    }
    fn list(&self, prefix: &str) -> Result<Vec<(String, Vec<u8>, u64)>, clio_clib::StoreError> {
        self.0.list(prefix)
    }
    fn watch_prefix(
        &self,
        _: &str,
        _: clio_clib::OnChange,
    ) -> Result<Box<dyn clio_clib::WatchGuard>, clio_clib::StoreError> {
        Ok(Box::new(NoWatch))
    }
    fn put_leased(
        &self,
        key: &str,
        value: &[u8],
        ttl: std::time::Duration,
    ) -> Result<Box<dyn clio_clib::LeasedEntry>, clio_clib::StoreError> {
        self.0.put_leased(key, value, ttl)
    }
}

/// Wait up to [`WAIT_BOUND`] for `f`, failing the test with `what`.
pub fn wait(what: &str, f: impl FnMut() -> bool) {
    wait_or(what, f, String::new)
}

/// How long [`wait`] waits. The steps it waits for take well under a second on a quiet
/// machine; CI runs the tests beside the board's synthesis on two cores, where one step of
/// the multi-process tests has been seen to take over 20 s.
pub const WAIT_BOUND: std::time::Duration = std::time::Duration::from_secs(60);

/// [`wait`], and on failure the state `why` describes (counters, views) in the message.
pub fn wait_or(what: &str, mut f: impl FnMut() -> bool, why: impl Fn() -> String) {
    let t = std::time::Instant::now();
    while !f() {
        assert!(
            t.elapsed() < WAIT_BOUND,
            "{what} within {WAIT_BOUND:?}: {}",
            why()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// A thread that runs operation after operation (`op(i)` for i = 0, 1, ...; a panic in it
/// fails the test at [`Writer::finish`]) until stopped, counting those that returned.
pub struct Writer {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    acked: std::sync::Arc<std::sync::atomic::AtomicU64>,
    h: std::thread::JoinHandle<()>,
}

impl Writer {
    pub fn spawn(mut op: impl FnMut(u64) + Send + 'static) -> Writer {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let acked = std::sync::Arc::new(AtomicU64::new(0));
        let (s, n) = (stop.clone(), acked.clone());
        let h = std::thread::spawn(move || {
            let mut i = 0;
            while !s.load(Ordering::Acquire) {
                op(i);
                i += 1;
                n.store(i, Ordering::Release);
            }
        });
        Writer { stop, acked, h }
    }

    /// Wait until `more` further operations returned.
    pub fn progress(&self, more: u64) {
        use std::sync::atomic::Ordering;
        let start = self.acked.load(Ordering::Acquire);
        wait("a writer stalled", || {
            self.acked.load(Ordering::Acquire) >= start + more
        });
    }

    /// Stop it; the number of operations that returned.
    pub fn finish(self) -> u64 {
        use std::sync::atomic::Ordering;
        self.stop.store(true, Ordering::Release);
        self.h.join().expect("the writer rode out every failure");
        self.acked.load(Ordering::Acquire)
    }
}
