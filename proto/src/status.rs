//! Response status codes.

use core::fmt;

/// Status of a response (byte 2 of the header). Requests carry [`Status::Ok`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Status {
    /// Success.
    Ok = 0,
    /// The packet failed its integrity check; nothing was executed. Retry the request.
    Nack = 1,
    /// The process may not access this address in this way (other process, or read-only).
    Permission = 2,
    /// No allocation covers this address.
    Unmapped = 3,
    /// No physical page, or no page-table room: the allocation cannot be served.
    OutOfMemory = 4,
    /// The process has no free virtual range of the requested size.
    OutOfVirtualSpace = 5,
    /// A bounded resource is momentarily empty or full (free-page buffer, idempotence ring,
    /// slow-path ring). Nothing was executed; retry after a short wait.
    RetryLater = 6,
    /// Malformed or inconsistent request (bad length, alignment, segmentation, opcode...).
    BadRequest = 7,
    /// The PID is not registered at this node.
    UnknownProcess = 8,
    /// The opcode is valid but not served by this node (e.g. an extend op with no offload).
    Unsupported = 9,
    /// The request's key does not open this PID's remote address space (wrong or missing key,
    /// or no such RAS). Nothing was executed. The same answer for a wrong key and an unknown
    /// PID, so it tells a prober nothing it did not send.
    Denied = 10,
    /// The node's table of remote address spaces (or of a RAS's members) is full.
    TableFull = 11,
    /// A transaction whose commit was in doubt (its writer crashed, or its target page was
    /// never touched when recovery rolled its log forward) was dropped: none of its writes is
    /// visible. Answered to [`crate::Opcode::TxApply`] of that record.
    Aborted = 12,
    /// An [`crate::Opcode::Append`] record does not fit between the log's tail and its end
    /// (or the tail word is not a valid tail); nothing was written. Apply and reset the log,
    /// then append again.
    LogFull = 13,
    /// A quota of the node refused the request ([`crate::quota::Quota`] in the answer's
    /// `arg1` names which); nothing was executed. Free something first, or ask the operator
    /// to raise the limit with the quota's flag.
    QuotaExceeded = 14,
    /// The answer would be larger than twice the request, and the request does not carry the
    /// route cookie of its source address (`crate::route_cookie`); nothing was executed. A
    /// client learns its cookie from the answers to Register, Join and Heartbeat.
    RouteUnverified = 15,
    /// The request presents its RAS's key with an epoch older than the RAS's (`crate::epoch`):
    /// its sender's view of the pool is out of date; nothing was executed. Read the pool's
    /// view again and retry under it.
    Stale = 16,
}

impl Status {
    /// All defined status codes.
    pub const ALL: [Status; 17] = [
        Status::Ok,
        Status::Nack,
        Status::Permission,
        Status::Unmapped,
        Status::OutOfMemory,
        Status::OutOfVirtualSpace,
        Status::RetryLater,
        Status::BadRequest,
        Status::UnknownProcess,
        Status::Unsupported,
        Status::Denied,
        Status::TableFull,
        Status::Aborted,
        Status::LogFull,
        Status::QuotaExceeded,
        Status::RouteUnverified,
        Status::Stale,
    ];

    /// The largest status byte defined (requests carrying a larger one are malformed).
    pub const MAX: u8 = Status::Stale as u8;

    /// Decode a byte; `None` for undefined values.
    pub fn from_u8(v: u8) -> Option<Status> {
        Self::ALL.iter().copied().find(|s| *s as u8 == v)
    }

    /// A one-line human explanation.
    pub fn describe(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Nack => "packet failed its integrity check (NACK)",
            Status::Permission => "permission denied",
            Status::Unmapped => "address is not allocated",
            Status::OutOfMemory => "memory node is out of physical memory or page-table room",
            Status::OutOfVirtualSpace => "no free virtual range of that size",
            Status::RetryLater => "memory node is momentarily busy; retry",
            Status::BadRequest => "malformed request",
            Status::UnknownProcess => "process is not registered at this node",
            Status::Unsupported => "operation not supported by this node",
            Status::Denied => "not authorized: wrong key, or no such remote address space",
            Status::TableFull => {
                "the node's table of remote address spaces (or of a space's members) is full"
            }
            Status::Aborted => "the transaction was dropped: none of its writes is visible",
            Status::LogFull => "the log has no room for the record; apply and reset it",
            Status::QuotaExceeded => "a quota of the memory node refused the request",
            Status::RouteUnverified => {
                "the request's route cookie does not match its source address (refresh it with a heartbeat)"
            }
            Status::Stale => "the request's epoch is older than its address space's: the pool's view changed",
        }
    }
}

#[cfg(test)]
#[test]
fn max_is_the_largest() {
    assert_eq!(
        Status::ALL.iter().map(|s| *s as u8).max(),
        Some(Status::MAX)
    );
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.describe())
    }
}
