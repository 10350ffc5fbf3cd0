//! Transactions with a redo log (AsymNVM's batched transactional writes; docs/durability.md):
//! several writes that become visible and durable together, or not at all, across crashes of
//! the node, of its slow-path daemon and of this process.
//!
//! ```no_run
//! # fn main() -> clio_clib::Result<()> {
//! # let client = clio_clib::Client::connect_udp("127.0.0.1:48850".parse().unwrap())?;
//! let a = client.ralloc(4096)?;
//! let mut log = client.rtx_log(64 << 10)?; // once: a log region, registered at the node
//! let mut tx = client.rtx_begin(&mut log);
//! tx.rtx_write(a, b"debit")?;
//! tx.rtx_write(a + 2048, b"credit")?;
//! tx.rtx_commit()?; // both writes, durable, or (on error) neither
//! # Ok(()) }
//! ```
//!
//! A commit is two round trips whatever the number of writes: the record (every write, sealed
//! by a CRC) goes to the log with one multi-packet durable write, which is the commit point;
//! then `TxApply` has the node's slow path apply it, flush it and record it as applied. If the
//! node crashes in between, its recovery applies the record; a record torn by a crash is never
//! applied. Transactions give atomicity and durability, not isolation: concurrent readers may
//! see the writes land one after the other, so protect shared data with a lock
//! ([`Client::rlock`]) as usual. Earlier asynchronous writes of this process to the same
//! bytes must be complete ([`Client::rpoll`]) before the commit.

use super::Client;
use crate::engine::{OpSpec, Output};
use crate::error::{ClioError, Result};
use clio_proto::consts::VA_LIMIT;
use clio_proto::tx::{self, TxEntry, TX_HEADER_BYTES, TX_MAX_ENTRIES, TX_MAX_RECORD_BYTES};

/// A transaction log: a region of this process's remote address space that the node knows as
/// its log. One transaction at a time uses it (it holds one record).
#[derive(Debug)]
pub struct TxLog {
    va: u64,
    bytes: u64,
    next_seq: u64,
}

impl TxLog {
    /// First byte of the log region (keep it to re-open the log after a restart).
    pub fn va(&self) -> u64 {
        self.va
    }

    /// Bytes of the log region: the largest record it takes.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Sequence number the next commit will carry.
    pub fn next_seq(&self) -> u64 {
        self.next_seq
    }
}

/// An open transaction: writes are buffered here until [`Transaction::rtx_commit`]; dropping
/// it without committing writes nothing.
#[derive(Debug)]
pub struct Transaction<'a> {
    client: &'a Client,
    log: &'a mut TxLog,
    entries: Vec<(u64, Vec<u8>)>,
    record_bytes: usize,
}

impl Client {
    /// Allocate a log region of `bytes` (at least the largest record you will commit:
    /// [`clio_proto::tx::record_len`]) and register it with the node as this member's
    /// transaction log. The node needs a persistence domain (`--memory-file`), else
    /// [`ClioError::Unsupported`].
    pub fn rtx_log(&self, bytes: u64) -> Result<TxLog> {
        if bytes < TX_HEADER_BYTES as u64 || bytes > u32::MAX as u64 {
            return Err(ClioError::InvalidArgument(
                "a transaction log holds 32 bytes to 4 GiB",
            ));
        }
        let va = self.ralloc(bytes)?;
        match self.rtx_log_open(va, bytes) {
            Ok(log) => Ok(log),
            Err(e) => {
                // Do not leak the region of a log the node refused.
                let _ = self.rfree(va);
                Err(e)
            }
        }
    }

    /// Register (or re-open, after a restart of this process or of the node) the log at
    /// `va`: a writable region of this RAS. The node answers with the last sequence number
    /// it resolved there, and the next commit numbers above it, so nothing written before is
    /// applied again.
    pub fn rtx_log_open(&self, va: u64, bytes: u64) -> Result<TxLog> {
        let len = u32::try_from(bytes)
            .map_err(|_| ClioError::InvalidArgument("a transaction log holds at most 4 GiB"))?;
        if va.checked_add(bytes).is_none_or(|e| e > VA_LIMIT) {
            return Err(ClioError::InvalidArgument("log beyond the address space"));
        }
        match self.sync_op(OpSpec::TxLog { va, len })? {
            Output::Value(resolved) => Ok(TxLog {
                va,
                bytes,
                next_seq: resolved + 1,
            }),
            _ => Err(ClioError::BadRequest),
        }
    }

    /// Begin a transaction in `log`.
    pub fn rtx_begin<'a>(&'a self, log: &'a mut TxLog) -> Transaction<'a> {
        Transaction {
            client: self,
            log,
            entries: Vec::new(),
            record_bytes: TX_HEADER_BYTES,
        }
    }
}

impl Transaction<'_> {
    /// Add a write of `data` at `va` (applied in order at commit: a later write to the same
    /// bytes wins). Refused, with nothing added, if it would break a bound: at most
    /// [`TX_MAX_ENTRIES`] writes, a record of at most the log's size and
    /// [`TX_MAX_RECORD_BYTES`].
    pub fn rtx_write(&mut self, va: u64, data: &[u8]) -> Result<()> {
        self.record_bytes = admit(
            self.entries.len(),
            self.record_bytes,
            self.log.bytes,
            va,
            data,
        )?;
        self.entries.push((va, data.to_vec()));
        Ok(())
    }

    /// Writes buffered so far.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// No write buffered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes of the record the commit will write.
    pub fn record_bytes(&self) -> usize {
        self.record_bytes
    }

    /// Commit: every write becomes visible and durable, together. `Ok` means the transaction
    /// is whole at the node and stays whole across any crash. On an error the outcome
    /// depends on how far it got: [`ClioError::Aborted`] (or any error before the record was
    /// durable) means none of the writes happened; a transport error after that (the node
    /// unreachable) leaves it in doubt: whole if the node's recovery found the record, absent
    /// otherwise, never partial. An empty transaction commits nothing and succeeds.
    pub fn rtx_commit(self) -> Result<()> {
        commit(self.client, self.log, &self.entries)
    }
}

/// Check one more write against a transaction's bounds: the record's new size.
pub(crate) fn admit(
    entries: usize,
    record_bytes: usize,
    log_bytes: u64,
    va: u64,
    data: &[u8],
) -> Result<usize> {
    if data.is_empty() {
        return Err(ClioError::InvalidArgument("empty transactional write"));
    }
    if va
        .checked_add(data.len() as u64)
        .is_none_or(|e| e > VA_LIMIT)
    {
        return Err(ClioError::InvalidArgument("write beyond the address space"));
    }
    if entries >= TX_MAX_ENTRIES {
        return Err(ClioError::InvalidArgument(
            "too many writes in one transaction",
        ));
    }
    let after = record_bytes + tx::record_len([data.len()]) - TX_HEADER_BYTES;
    if after > TX_MAX_RECORD_BYTES || after as u64 > log_bytes {
        return Err(ClioError::InvalidArgument(
            "the transaction's record would not fit its log",
        ));
    }
    Ok(after)
}

/// Commit `entries` (each admitted by [`admit`]) through `log` (see
/// [`Transaction::rtx_commit`]).
pub(crate) fn commit(client: &Client, log: &mut TxLog, entries: &[(u64, Vec<u8>)]) -> Result<()> {
    if entries.is_empty() {
        return Ok(());
    }
    let seq = log.next_seq;
    // Whatever happens from here, this sequence number is spent: the next commit must
    // number above anything the node may have seen.
    log.next_seq += 1;
    let view: Vec<TxEntry<'_>> = entries
        .iter()
        .map(|(va, data)| TxEntry { va: *va, data })
        .collect();
    let record = tx::encode(seq, &view);
    client.rwrite_durable(log.va, &record)?;
    // Each refusal for an untouched page names a new page; bound the loop by the pages the
    // writes can span (4 KiB is the smallest page).
    let mut touches_left: usize = entries.iter().map(|(_, d)| d.len() / 4096 + 2).sum();
    loop {
        match client.sync_op(OpSpec::TxApply { va: log.va }) {
            Ok(Output::Value(applied)) if applied == seq => return Ok(()),
            Ok(_) => return Err(ClioError::BadRequest),
            Err(ClioError::Untouched { va }) if touches_left > 0 => {
                touches_left -= 1;
                // A read is a first touch: the node maps the page, then applies again.
                client.rread(va, 1)?;
            }
            Err(ClioError::Untouched { .. }) => return Err(ClioError::BadRequest),
            Err(e) => return Err(e),
        }
    }
}
