//! Typed errors of the library.

use clio_proto::Status;
use thiserror::Error;

/// Everything a CLib call can fail with.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ClioError {
    /// The process may not access this address in this way (read-only region, or another process's memory).
    #[error("permission denied at 0x{va:x}")]
    Permission {
        /// Address of the failed request.
        va: u64,
    },
    /// No allocation covers this address.
    #[error("address 0x{va:x} is not allocated")]
    Unmapped {
        /// Address of the failed request.
        va: u64,
    },
    /// The memory node has no physical memory or page-table room for the allocation.
    #[error("memory node is out of memory")]
    OutOfMemory,
    /// The process has no free virtual range of the requested size.
    #[error("no free remote virtual range of that size")]
    OutOfVirtualSpace,
    /// The node rejected the request as malformed (a CLib bug or a bad argument that slipped through).
    #[error("memory node rejected the request as malformed")]
    BadRequest,
    /// The node does not know this member (its lease ended, or the node restarted).
    #[error("process is not (or no longer) a member of the remote address space")]
    UnknownProcess,
    /// The node refused the credentials: wrong key, or the remote address space no longer
    /// exists (torn down after its last member left or its lease ended). Nothing executed.
    #[error("access denied: wrong key, or the remote address space is gone")]
    Denied,
    /// The node has no room for another remote address space (or member).
    #[error("the memory node's table of remote address spaces (or members) is full")]
    TableFull,
    /// The node does not implement this operation.
    #[error("operation not supported by the memory node")]
    Unsupported,
    /// No valid response after the configured number of retries.
    #[error("{op} timed out after {retries} retries")]
    Timeout {
        /// The operation.
        op: &'static str,
        /// Retries made.
        retries: u32,
    },
    /// The node stayed busy (RetryLater) for too long.
    #[error("memory node stayed busy for {retries} attempts of {op}")]
    Busy {
        /// The operation.
        op: &'static str,
        /// Attempts made.
        retries: u32,
    },
    /// A bad argument (checked locally, nothing was sent).
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// The handle is unknown or its result was already taken.
    #[error("unknown or already-polled handle {0}")]
    UnknownHandle(u64),
    /// The transaction was dropped: its commit was in doubt when the node recovered (or its
    /// log went away) and a target could no longer be written. None of its writes is visible.
    #[error("transaction aborted: none of its writes is visible")]
    Aborted,
    /// The transaction's target page at `va` has never been touched (no frame yet). Internal
    /// to `rtx_commit`, which touches the page and applies again; never returned by it.
    #[error("page at 0x{va:x} not touched yet")]
    Untouched {
        /// The page.
        va: u64,
    },
    /// A Clio-KV put of a new key found the node's store full (nothing changed).
    #[error("the memory node's key-value store has no free record (nothing changed)")]
    KvStoreFull,
    /// An Append found no room in the log (nothing written): apply and reset it, then append.
    #[error("the log has no room for the record")]
    LogFull,
    /// Every replica of a region of a multi-node client is gone (docs/replication.md).
    #[error("every replica of the region at 0x{addr:x} is lost")]
    NodeLost {
        /// The region's global address.
        addr: u64,
    },
    /// A quota of the node refused the request (nothing executed); `quota` names which,
    /// when the node said.
    #[error("{}", quota_message(*.quota))]
    QuotaExceeded {
        /// The limit.
        quota: Option<clio_proto::quota::Quota>,
    },
    /// The node admits only compute nodes that present its admission secret at Register.
    #[error(
        "the memory node refused to register this process: it admits only compute nodes \
             that present its admission secret (set CLIO_ADMISSION_SECRET to the value its \
             operator gave to `clio board --admission-secret-file`)"
    )]
    AdmissionRefused,
    /// The node would answer this operation with more than twice what its request carried,
    /// and did not accept this host's route cookie (`docs/protocol.md` section 7) even after
    /// a fresh one was fetched: this host's packets reach the node from an address other than
    /// the one its answers go to (a NAT or a multi-homed route that changes per packet).
    #[error(
        "the memory node does not accept this host's route cookie for {op} (refreshed {} \
         times): its answers to this host's address are limited to twice the request; \
         check for a NAT or an asymmetric route between this host and the node",
        ROUTE_RETRIES
    )]
    RouteUnverified {
        /// The operation.
        op: &'static str,
    },
    /// The node refused the request because its remote address space holds a newer epoch
    /// than the request carried (`docs/protocol.md` section 7, "Epochs"): the replicated
    /// pool's view changed and this client had not seen it. Nothing executed; a multi-node
    /// client reads the view again and retries under it.
    #[error("the memory node holds a newer epoch of the pool than this request (the pool's view changed)")]
    Stale,
    /// Opening or using the network failed.
    #[error("transport: {0}")]
    Transport(String),
    /// A multi-node client's pool configuration store (etcd) could not be read or changed:
    /// a fail-over needs it, so the operation that met the failure did not go on.
    #[error("{0}")]
    ConfigStore(String),
}

impl ClioError {
    /// Map a final (non-retryable) node status to an error; `None` for `Ok` and the
    /// statuses the transport retries itself (`Nack`, `RetryLater`).
    pub fn from_status(s: Status, va: u64) -> Option<ClioError> {
        Some(match s {
            Status::Ok | Status::Nack | Status::RetryLater => return None,
            Status::Permission => ClioError::Permission { va },
            Status::Unmapped => ClioError::Unmapped { va },
            Status::OutOfMemory => ClioError::OutOfMemory,
            Status::OutOfVirtualSpace => ClioError::OutOfVirtualSpace,
            Status::BadRequest => ClioError::BadRequest,
            Status::UnknownProcess => ClioError::UnknownProcess,
            Status::Unsupported => ClioError::Unsupported,
            Status::Denied => ClioError::Denied,
            Status::TableFull => ClioError::TableFull,
            Status::Aborted => ClioError::Aborted,
            Status::LogFull => ClioError::LogFull,
            Status::QuotaExceeded => ClioError::QuotaExceeded { quota: None },
            Status::RouteUnverified => ClioError::RouteUnverified { op: "request" },
            Status::Stale => ClioError::Stale,
        })
    }

    /// The error of a final answer `h` to a request of `opcode` at `va`: as
    /// [`ClioError::from_status`], with what the answer adds (the quota in `arg1`; a Register
    /// denied for want of the admission secret).
    pub fn from_answer(
        h: &clio_proto::Header,
        opcode: clio_proto::Opcode,
        va: u64,
    ) -> Option<ClioError> {
        match h.status {
            Status::QuotaExceeded => Some(ClioError::QuotaExceeded {
                quota: clio_proto::quota::Quota::from_u64(h.arg1),
            }),
            Status::Denied if opcode == clio_proto::Opcode::Register => {
                Some(ClioError::AdmissionRefused)
            }
            s => ClioError::from_status(s, va),
        }
    }

    /// I/O error from a transport.
    pub(crate) fn io(what: &str, e: std::io::Error) -> ClioError {
        ClioError::Transport(format!("{what}: {e}"))
    }
}

fn quota_message(q: Option<clio_proto::quota::Quota>) -> String {
    match q {
        Some(q) => format!(
            "the memory node's quota on {} refused the request (its operator raises it with \
             `clio board {}`)",
            q.describe(),
            q.flag()
        ),
        None => "a quota of the memory node refused the request".into(),
    }
}

/// Cookie refreshes a request gets before it fails with [`ClioError::RouteUnverified`].
pub const ROUTE_RETRIES: u32 = 3;

impl From<crate::multi::StoreError> for ClioError {
    fn from(e: crate::multi::StoreError) -> ClioError {
        ClioError::ConfigStore(e.to_string())
    }
}

/// Result alias.
pub type Result<T> = std::result::Result<T, ClioError>;

/// A socket step failed (`clio_netio`): a transport error with the step's message.
impl From<clio_netio::NetError> for ClioError {
    fn from(e: clio_netio::NetError) -> ClioError {
        ClioError::Transport(e.0)
    }
}
