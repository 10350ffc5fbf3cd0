//! The rules of the node, each named once.
//!
//! Every rule that the docs state about what the node answers (docs/protocol.md,
//! docs/hardware.md's ordering rules, docs/security.md, docs/offloads.md, docs/durability.md)
//! is one [`Rule`]. The golden model counts each time a rule decides an answer (its
//! `Coverage`), the conformance suite requires every rule to be exercised by its streams, and
//! each deliberately broken fast path (`clio_hw::mutants`) names the rule it breaks, so "which
//! rules does the suite test, how often, and with which mutant" is one table
//! (docs/cosim.md, "Coverage").

macro_rules! rules {
    ($($(#[$doc:meta])* $v:ident => ($name:literal, $statement:literal),)*) => {
        /// A rule of the node's behaviour (see the module docs).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Rule {
            $($(#[$doc])* $v,)*
        }

        impl Rule {
            /// Every rule, in declaration order (grouped by area).
            pub const ALL: &'static [Rule] = &[$(Rule::$v,)*];

            /// Short name, `area.rule`.
            pub const fn name(self) -> &'static str {
                match self { $(Rule::$v => $name,)* }
            }

            /// The rule as the docs state it.
            pub const fn statement(self) -> &'static str {
                match self { $(Rule::$v => $statement,)* }
            }
        }
    };
}

rules! {
    /// Counted: a packet NACKed for its CRC.
    CrcChecked => ("integrity.crc", "a packet whose CRC does not match is NACKed, never executed"),
    /// Counted: a request DENIED by the key check.
    KeyChecked => ("auth.key", "a request's key must open its pid (DENIED otherwise, nothing executed)"),
    /// Counted: a request refused by the key check for its epoch (Stale).
    EpochChecked => ("auth.epoch", "a request presenting its RAS's key with an epoch older than the RAS's is STALE, nothing executed"),
    /// Counted: a request refused by the route check (RouteUnverified).
    RouteCookieChecked => ("security.route_cookie", "an answer larger than twice its request goes only to a source address whose route cookie the request carries (RouteUnverified otherwise, nothing executed)"),
    /// Counted: a key installed or removed by the slow path's KeyWrite.
    KeyWrites => ("auth.key_writes", "keys come from the slow path's KeyWrite: installed at Register, zeroed at teardown"),
    /// Counted: a pid registered again after its RAS was torn down.
    PidReuseForgets => ("isolation.pid_reuse", "a pid's next owner sees nothing of its last owner (keys, ring results, TLB entries)"),
    /// Counted: a translation of a page that another RAS also has in the TLB.
    TlbTaggedByPid => ("isolation.tlb_pid", "TLB entries are tagged by (pid, page): one RAS never hits another's translation"),
    /// Counted: a TLB hit refused for its permission.
    TlbHitPermissions => ("security.tlb_hit_permissions", "a TLB hit is checked against the access's permission like a walk"),
    /// Counted: a walk's translation refused for its permission.
    WalkPermissions => ("security.walk_permissions", "a walked translation is checked against the access's permission"),
    /// Counted: a slow-path TLB invalidation that removed a present entry.
    TlbInvalidation => ("translation.invalidation", "the slow path's invalidations reach the TLB: a freed page's translation leaves it"),
    /// Counted: a read of bytes the previous write of its RAS wrote.
    ReadAfterWrite => ("order.read_after_write", "a read returns the data of every earlier write (it waits for the B responses of the writes in flight it overlaps)"),
    /// Counted: a write of bytes the previous read of its RAS read.
    WriteAfterRead => ("order.write_after_read", "a write never changes what an earlier read returns (its addresses wait for the reads in flight it overlaps)"),
    /// Counted: a fence after writes.
    FenceWaits => ("order.fence", "a fence is answered only once every earlier write is done"),
    /// Counted: a read of 0 bytes refused.
    ReadNotEmpty => ("format.read_zero", "a read of 0 bytes is BAD_REQUEST"),
    /// Counted: a read longer than `MAX_REQUEST_LEN` refused.
    ReadLengthBound => ("format.read_max", "a read asks at most MAX_REQUEST_LEN bytes (BAD_REQUEST otherwise)"),
    /// Counted: a read that crosses a page end.
    PageEnd => ("translation.page_cross", "a request that crosses a page end is translated page by page"),
    /// Counted: a misaligned atomic refused.
    AtomicAlignment => ("format.atomic_alignment", "an atomic's address is 8-byte aligned (BAD_REQUEST otherwise)"),
    /// Counted: a FetchAdd whose low words carry into bit 32.
    FetchAddWide => ("atomics.faa_64", "FetchAdd adds whole 64-bit words, wrapping at 2^64"),
    /// Counted: a CompareAndSwap that did not match (and wrote nothing).
    CasOnEqual => ("atomics.cas", "CompareAndSwap writes only when the word equals the expected value (all 64 bits)"),
    /// Counted: a TestAndSet that found 0 and set the word.
    TasSets => ("atomics.tas", "TestAndSet writes 1 and returns the old word"),
    /// Counted: an Unlock of a non-zero word.
    UnlockClears => ("atomics.unlock", "Unlock writes 0"),
    /// Counted: a ring-recorded request answered again from the ring.
    RingReplays => ("exactly_once.replay", "a ring-recorded request that comes again is answered from the ring, not executed again"),
    /// Counted: a ring-recorded atomic refused by the key check for its epoch, answered from
    /// the ring (an earlier attempt executed before the epoch moved on).
    StaleReplay => ("exactly_once.stale_replay", "an atomic that comes again with an epoch older than its RAS's is answered from the ring when an earlier attempt executed (STALE, nothing executed, otherwise)"),
    /// Counted: a ring-recorded request under a client id whose row its RAS does not hold.
    RingKeyedByPid => ("exactly_once.ring_pid", "a member's row of the idempotence table belongs to its RAS: a ring-recorded request under a client id its RAS does not hold is DENIED, never answered from another RAS's results and never recorded"),
    /// Counted: a ring request whose req_id another member of its RAS also has recorded.
    RingKeyedByClient => ("exactly_once.ring_client", "results are kept per member (the row of its client id): one member is never answered another's result"),
    /// Counted: a CN ack that freed a ring slot.
    CnAckFrees => ("exactly_once.cn_ack", "a CN ack frees its ring slot for reuse"),
    /// Counted: a ring-recorded request refused because its entry held another
    /// unacknowledged result of its member (below its share).
    RingFull => ("exactly_once.ring_full", "a ring-recorded request whose entry (its member's row, at req_id mod 16) holds another request's unacknowledged result is QUOTA_EXCEEDED (RingShare), nothing executes"),
    /// Counted: a ring-recorded request of a member holding its share of unacknowledged
    /// results refused QUOTA_EXCEEDED.
    RingShareQuota => ("isolation.ring_share", "a member holding its share of unacknowledged results is QUOTA_EXCEEDED (RingShare) and nothing executes"),
    /// Counted: a result recorded over an acknowledged result of its member.
    RingShareOwnSlots => ("isolation.ring_evict", "a result is recorded only into its member's own row: it replaces an acknowledged result of that member, never another member's"),
    /// Counted: a row emptied by the slow path's RING_OWNER while it held results.
    ReleaseFrees => ("membership.release", "a row the slow path hands to a new owner or takes back from a departed member is emptied: none of its results is answered again"),
    /// Counted: a request for the slow path refused because its source holds its share of
    /// the RX ring (`ring::rx_share_admits`), or the ring is full past the notices' reserve.
    SlowPathRingRoom => ("slow_path.ring_room", "a request for the slow path is RETRY_LATER unless its source holds fewer RX ring descriptors than are free past the notices' reserve"),
    /// Counted: a durable write on a node without a persistence domain.
    DurableNeedsDomain => ("durability.domain", "a durable write on a node without a persistence domain is UNSUPPORTED and writes nothing"),
    /// Counted: an append placed (a record written).
    AppendFootprint => ("log.footprint", "a record takes its 8-byte header plus its payload rounded up to 8 bytes"),
    /// Counted: an append refused LOG_FULL.
    AppendCapacity => ("log.capacity", "an append past the log's capacity is LOG_FULL"),
    /// Counted: an append to a misaligned log refused.
    AppendAlignment => ("log.alignment", "an append names an 8-byte aligned log (BAD_REQUEST otherwise)"),
    /// Counted: an append whose payload is not its total_len refused.
    AppendLength => ("log.length", "an append's payload is exactly its total_len (BAD_REQUEST otherwise)"),
    /// Counted: a pointer chase with a payload refused.
    ChaseNoPayload => ("chase.payload", "a pointer chase carries no payload (BAD_REQUEST otherwise)"),
    /// Counted: a pointer chase from address 0 refused.
    ChaseStartNonZero => ("chase.start", "a pointer chase starting at address 0 is BAD_REQUEST"),
    /// Counted: a chase that stopped at its hop bound.
    ChaseHopBound => ("chase.hops", "each hop is counted, and a chase stops at its hop bound (a cycle ends there)"),
    /// Counted: a chase whose found value is longer than `MAX_VALUE`.
    ChaseValueBound => ("chase.value", "the value read at the found node is at most the chase's MAX_VALUE"),
    /// Counted: a chase with a layout that cannot be walked refused.
    ChaseLayout => ("chase.layout", "a chase's layout (key, next and value offsets and lengths) fits its node and is aligned"),
    /// Counted: a Clio-KV request with an empty key refused.
    KvKeyNotEmpty => ("kv.key_empty", "an empty Clio-KV key is BAD_REQUEST"),
    /// Counted: a Clio-KV request with a key over `MAX_KEY` bytes refused.
    KvKeyBound => ("kv.key_max", "Clio-KV keys are at most MAX_KEY bytes (BAD_REQUEST otherwise)"),
    /// Counted: a Clio-KV request whose lengths do not match its body refused.
    KvBodyLength => ("kv.body_length", "a Clio-KV request's body is exactly its key and value (BAD_REQUEST otherwise)"),
    /// Counted: a Clio-KV lookup that passed over another owner's record of the same key hash bucket.
    KvOwner => ("kv.owner", "a Clio-KV record belongs to its owner's RAS: another owner's equal key never matches it"),
    /// Counted: a Clio-KV put refused OUT_OF_MEMORY.
    KvStoreFull => ("kv.store_full", "a Clio-KV put that finds no free record is OUT_OF_MEMORY and changes nothing"),
    /// Counted: a Clio-KV put of a new key refused because its RAS holds its record quota.
    KvRecordQuota => ("isolation.kv_records", "a Clio-KV put of a new key while its RAS holds its record quota is QUOTA_EXCEEDED (KvRecords), changes nothing and is not recorded; deletes give records back"),
}

#[cfg(test)]
mod tests {
    use super::Rule;

    #[test]
    fn names_are_unique_and_say_their_area() {
        let mut names: Vec<&str> = Rule::ALL.iter().map(|r| r.name()).collect();
        names.sort_unstable();
        let n = names.len();
        names.dedup();
        assert_eq!(names.len(), n, "two rules share a name");
        for r in Rule::ALL {
            assert!(r.name().contains('.'), "{:?}: name is area.rule", r);
            assert!(!r.statement().is_empty());
        }
    }
}
