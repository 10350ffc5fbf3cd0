//! The deliberately broken fast paths (each one rule of `clio_proto::rules` dropped by a
//! textual edit of the emitted Verilog) and the rules that have none, with the reason.

use super::{Edit, Mutant};
use clio_proto::rules::Rule;

/// Every mutant of `fastpath_top`.
pub const MUTANTS: &[Mutant] = &[
    Mutant {
        name: "tlb_ignores_pid",
        rule: Rule::TlbTaggedByPid,
        breaks: "isolation: the TLB tags entries by virtual page only, so one RAS can hit \
                 another's translation of the same page",
        edits: &[
            Edit {
                module: "fastpath_top$mem$tlb",
                find: "lk_key = (((lk_rev$y) & 52'hfffffffffffff) << 32'h24) | ((lk_vpn) & 52'hfffffffffffff);",
                replace: "lk_key = ((lk_vpn) & 52'hfffffffffffff);",
            },
            Edit {
                module: "fastpath_top$mem$tlb",
                find: "up_key = (((up_rev$y) & 52'hfffffffffffff) << 32'h24) | ((up_vpn) & 52'hfffffffffffff);",
                replace: "up_key = ((up_vpn) & 52'hfffffffffffff);",
            },
            // The update's set is taken from each source's pid and page, not from `up_key`:
            // without the pid there too, inserts land in the set the pid-less lookups read.
            Edit {
                module: "fastpath_top$mem$tlb",
                find: "walk_rev$x = walk$pid[(32'h0)+:(4)];",
                replace: "walk_rev$x = 4'h0;",
            },
            Edit {
                module: "fastpath_top$mem$tlb",
                find: "slow_rev$x = slow$pid[(32'h0)+:(4)];",
                replace: "slow_rev$x = 4'h0;",
            },
        ],
    },
    Mutant {
        name: "key_not_checked",
        rule: Rule::KeyChecked,
        breaks: "authentication: any key is accepted for a registered RAS",
        edits: &[Edit {
            module: "fastpath_top$recv$keys_chk$store",
            find: "ok = q_pid_ok$q & rule$key_ok;",
            replace: "ok = q_pid_ok$q;",
        }],
    },
    Mutant {
        name: "epoch_not_checked",
        rule: Rule::EpochChecked,
        breaks: "fencing: a request presenting its RAS's key with an epoch older than the RAS's \
                 executes instead of being STALE (the key check's epoch verdict is ignored)",
        edits: &[Edit {
            module: "fastpath_top",
            find: "core$recv$keys$epoch_ok = recv$core$keys$epoch_ok;",
            replace: "core$recv$keys$epoch_ok = 1'b1;",
        }],
    },
    Mutant {
        name: "route_cookie_ignored",
        rule: Rule::RouteCookieChecked,
        breaks: "amplification: an answer larger than twice its request goes to any source \
                 address, whatever cookie the request carries",
        edits: &[Edit {
            module: "fastpath_top",
            find: "core$recv$routes$ok = recv$core$routes$ok;",
            replace: "core$recv$routes$ok = 1'b1;",
        }],
    },
    Mutant {
        name: "read_overtakes_write",
        rule: Rule::ReadAfterWrite,
        breaks: "read-after-write order: a read goes to DRAM before earlier writes have their B \
                 responses",
        edits: &[Edit {
            module: "fastpath_top$mem$order",
            find: "data_clear = ~data_wait$q & ~w_busy;",
            // Only the data still streaming is waited for, not its B response.
            replace: "data_clear = ~w_busy;",
        }],
    },
    Mutant {
        name: "read_passes_write_in_flight",
        rule: Rule::ReadAfterWrite,
        breaks: "read-after-write order: a read goes to DRAM past an earlier write it overlaps \
                 that has no B response yet (the writes' table sees no overlap)",
        edits: &[Edit {
            module: "fastpath_top$mem$order$writes",
            find: "clash = over$q | any_hit;",
            replace: "clash = over$q;",
        }],
    },
    Mutant {
        name: "write_passes_read_in_flight",
        rule: Rule::WriteAfterRead,
        breaks: "write-after-read order: a write's addresses go to DRAM past an earlier read it \
                 overlaps whose data has not all come back (the reads' table sees no overlap)",
        edits: &[Edit {
            module: "fastpath_top$mem$order$reads",
            find: "clash = over$q | any_hit;",
            replace: "clash = over$q;",
        }],
    },
    Mutant {
        name: "cn_ack_ignored",
        rule: Rule::CnAckFrees,
        breaks: "exactly once: a CN ack frees its entry for reuse; ignored, a member's row fills with results it acknowledged and it is refused QUOTA_EXCEEDED",
        edits: &[
            Edit {
                module: "fastpath_top$core",
                find: "sync$port$ack = exec$ring$ack;",
                replace: "sync$port$ack = 1'b0;",
            },
        ],
    },
    Mutant {
        name: "release_frees_nothing",
        rule: Rule::ReleaseFrees,
        breaks: "membership: a row the slow path hands on (to a new member or to nobody) is emptied; here it keeps its results",
        edits: &[Edit {
            module: "fastpath_top$core$sync",
            find: "bits$write_enable = ~|o_key$q[(32'h2a)+:(6)];",
            replace: "bits$write_enable = 1'b0;",
        }],
    },
    Mutant {
        name: "ring_ignores_pid",
        rule: Rule::RingKeyedByPid,
        breaks: "exactly once: a member's row belongs to its RAS; without the owner compare another RAS's request under that client id is answered from the row (or recorded into it)",
        edits: &[Edit {
            module: "fastpath_top$core$sync",
            find: "r_own = (o_data == r_member[(32'h10)+:(16)]) & |o_data & ~|r_member[(32'ha)+:(6)];",
            replace: "r_own = |o_data & ~|r_member[(32'ha)+:(6)];",
        }],
    },
    Mutant {
        name: "ring_ignores_client",
        rule: Rule::RingKeyedByClient,
        breaks: "exactly once: results are kept per member; looked up without the client id (row 0's entries), one member's request is answered with another member's result",
        edits: &[Edit {
            module: "fastpath_top$core$sync",
            find: "entries$read_address = ((k_way) & 14'h3fff) | (((k_row) & 14'h3fff) << 32'h4);",
            replace: "entries$read_address = ((k_way) & 14'h3fff);",
        }],
    },
    Mutant {
        name: "faa_drops_carry_at_32",
        rule: Rule::FetchAddWide,
        breaks: "atomics: FetchAdd adds whole 64-bit words (wrapping at 2^64); here the carry out of bit 31 is lost",
        edits: &[
            Edit {
                module: "fastpath_top$core$sync",
                find: "alu_new = alu_old + req$arg0;",
                replace: "alu_new = {alu_old[63:32], alu_old[31:0] + req$arg0[31:0]};",
            },
        ],
    },
    Mutant {
        name: "cas_writes_always",
        rule: Rule::CasOnEqual,
        breaks: "atomics: CompareAndSwap writes only when the word equals the expected value",
        edits: &[
            Edit {
                module: "fastpath_top$core$sync",
                find: "alu_write = alu_eq;",
                replace: "alu_write = 1'b1;",
            },
        ],
    },
    Mutant {
        name: "unlock_keeps_the_word",
        rule: Rule::UnlockClears,
        breaks: "atomics: Unlock writes 0",
        edits: &[
            Edit {
                module: "fastpath_top$core$sync",
                find: "alu_new = 32'h0;",
                replace: "alu_new = alu_old;",
            },
        ],
    },
    Mutant {
        name: "tas_sets_nothing",
        rule: Rule::TasSets,
        breaks: "atomics: TestAndSet writes 1",
        edits: &[
            Edit {
                module: "fastpath_top$core$sync",
                find: "alu_new = 32'h1;",
                replace: "alu_new = alu_old;",
            },
        ],
    },
    Mutant {
        name: "atomic_alignment_unchecked",
        rule: Rule::AtomicAlignment,
        breaks: "format: an atomic's address must be 8-byte aligned (BAD_REQUEST otherwise)",
        edits: &[
            Edit {
                module: "fastpath_top$recv$la$dec_chk",
                find: "atomic_ok = (fields$va[(32'h0)+:(3)] == 32'h0) & (fields$payload_len == 32'h0);",
                replace: "atomic_ok = (fields$payload_len == 32'h0);",
            },
        ],
    },
    Mutant {
        name: "read_length_unbounded",
        rule: Rule::ReadLengthBound,
        breaks: "format: a read asks at most MAX_REQUEST_LEN bytes",
        edits: &[
            Edit {
                module: "fastpath_top$recv$la$dec_chk",
                find: "read_form = (fields$payload_len == 32'h0) & (fields$pkt_count == 32'h1) & (fields$total_len != 32'h0) & (fields$total_len <= max_request_len);",
                replace: "read_form = (fields$payload_len == 32'h0) & (fields$pkt_count == 32'h1) & (fields$total_len != 32'h0);",
            },
        ],
    },
    Mutant {
        name: "read_of_zero_bytes_accepted",
        rule: Rule::ReadNotEmpty,
        breaks: "format: a read of 0 bytes is BAD_REQUEST",
        edits: &[
            Edit {
                module: "fastpath_top$recv$la$dec_chk",
                find: "read_form = (fields$payload_len == 32'h0) & (fields$pkt_count == 32'h1) & (fields$total_len != 32'h0) & (fields$total_len <= max_request_len);",
                replace: "read_form = (fields$payload_len == 32'h0) & (fields$pkt_count == 32'h1) & (fields$total_len <= max_request_len);",
            },
        ],
    },
    Mutant {
        name: "append_alignment_unchecked",
        rule: Rule::AppendAlignment,
        breaks: "format: an append names an 8-byte aligned log",
        edits: &[
            Edit {
                module: "fastpath_top$recv$la$dec_chk",
                find: "append_ok = (fields$va[(32'h0)+:(3)] == 32'h0) & (fields$pkt_count == 32'h1) & (fields$total_len != 32'h0) & (fields$total_len <= max_record) & (((fields$payload_len) & 32'hffffffff) == fields$total_len);",
                replace: "append_ok = (fields$pkt_count == 32'h1) & (fields$total_len != 32'h0) & (fields$total_len <= max_record) & (((fields$payload_len) & 32'hffffffff) == fields$total_len);",
            },
        ],
    },
    Mutant {
        name: "append_length_unchecked",
        rule: Rule::AppendLength,
        breaks: "format: an append's payload is exactly its total_len",
        edits: &[
            Edit {
                module: "fastpath_top$recv$la$dec_chk",
                find: "append_ok = (fields$va[(32'h0)+:(3)] == 32'h0) & (fields$pkt_count == 32'h1) & (fields$total_len != 32'h0) & (fields$total_len <= max_record) & (((fields$payload_len) & 32'hffffffff) == fields$total_len);",
                replace: "append_ok = (fields$va[(32'h0)+:(3)] == 32'h0) & (fields$pkt_count == 32'h1) & (fields$total_len != 32'h0) & (fields$total_len <= max_record);",
            },
        ],
    },
    Mutant {
        name: "chase_payload_accepted",
        rule: Rule::ChaseNoPayload,
        breaks: "format: a pointer chase carries no payload",
        edits: &[
            Edit {
                module: "fastpath_top$recv$la$dec_chk",
                find: "chase_ok = (fields$payload_len == 32'h0) & (fields$pkt_count == 32'h1);",
                replace: "chase_ok = (fields$pkt_count == 32'h1);",
            },
        ],
    },
    Mutant {
        name: "durable_write_without_persistence",
        rule: Rule::DurableNeedsDomain,
        breaks: "durability: a durable write on a node without a persistence domain is UNSUPPORTED, and writes nothing",
        edits: &[
            Edit {
                module: "fastpath_top$core$exec$dsp",
                find: "no_persist = durable & ~persist;",
                replace: "no_persist = 1'b0;",
            },
        ],
    },
    Mutant {
        name: "tlb_hit_ignores_permissions",
        rule: Rule::TlbHitPermissions,
        breaks: "security: a TLB hit is checked against the access's permission like a walk",
        edits: &[
            Edit {
                module: "fastpath_top$mem$tr",
                find: "tlb_perm_ok = (tlb$perms & exec$need) == exec$need;",
                replace: "tlb_perm_ok = 1'b1;",
            },
        ],
    },
    Mutant {
        name: "slow_path_tlb_updates_dropped",
        rule: Rule::TlbInvalidation,
        breaks: "translation: the slow path's PTE writes and invalidations reach the TLB (a freed page's translation leaves it)",
        edits: &[
            Edit {
                module: "fastpath_top$mem$tlb",
                find: "up_valid = walk$valid | slow$valid;",
                replace: "up_valid = walk$valid;",
            },
        ],
    },
    Mutant {
        name: "tlb_invalidation_inserts",
        rule: Rule::TlbInvalidation,
        breaks: "translation: a TLB invalidation removes the entry instead of installing it",
        edits: &[
            Edit {
                module: "fastpath_top$mem$tlb",
                find: "up_inval = slow$inval;",
                replace: "up_inval = 1'b0;",
            },
        ],
    },
    Mutant {
        name: "key_writes_dropped",
        rule: Rule::KeyWrites,
        breaks: "authentication: keys come from the slow path's KeyWrite (installed at Register, zeroed at teardown)",
        edits: &[
            Edit {
                module: "fastpath_top",
                find: "recv$slow$key_wr$valid = slow$recv$key_wr$valid;",
                replace: "recv$slow$key_wr$valid = 1'b0;",
            },
        ],
    },
    Mutant {
        name: "append_footprint_without_header",
        rule: Rule::AppendFootprint,
        breaks: "replicated log: a record takes its 8-byte header plus its payload rounded up to 8 bytes",
        edits: &[
            Edit {
                module: "fastpath_top$core$apl",
                find: "fp = ((len + 32'hf) >> 32'h3) << 32'h3;",
                replace: "fp = ((len + 32'h7) >> 32'h3) << 32'h3;",
            },
        ],
    },
    Mutant {
        name: "append_ignores_capacity",
        rule: Rule::AppendCapacity,
        breaks: "replicated log: an append past the log's capacity is LOG_FULL",
        edits: &[
            Edit {
                module: "fastpath_top$core$apl",
                find: "fits$d = (tail[(32'h0)+:(3)] == 32'h0) & ~room$q[32'h41] & (tail <= room$q[(32'h0)+:(64)]);",
                replace: "fits$d = (tail[(32'h0)+:(3)] == 32'h0);",
            },
        ],
    },
    Mutant {
        name: "crc_not_checked",
        rule: Rule::CrcChecked,
        breaks: "integrity: a packet whose CRC does not match is NACKed, never executed",
        edits: &[
            Edit {
                module: "fastpath_top$recv$ingest$ack",
                find: "nack = (have$q >= 32'h40) & ((have$q < len$q) | (engine$port$crc != carried$q));",
                replace: "nack = (have$q >= 32'h40) & (have$q < len$q);",
            },
        ],
    },
    Mutant {
        name: "chase_hops_not_counted",
        rule: Rule::ChaseHopBound,
        breaks: "pointer chase: each hop is counted, and a chase stops at its hop bound (a cycle ends there)",
        edits: &[
            Edit {
                module: "fastpath_top$core$ext$chase",
                find: "hop$d = hop$q + 32'h1;",
                replace: "hop$d = hop$q;",
            },
        ],
    },
    Mutant {
        name: "chase_value_unbounded",
        rule: Rule::ChaseValueBound,
        breaks: "pointer chase: the value read at the found node is at most the chase's MAX_VALUE",
        edits: &[
            Edit {
                module: "fastpath_top$core$ext$chase",
                find: "r_ok = (r_koff[(32'h0)+:(3)] == 32'h0) & (r_noff[(32'h0)+:(3)] == 32'h0) & (r_koff <= c_max_offset) & (r_noff <= c_max_offset) & (r_voff <= c_max_offset) & (r_hops != 32'h0) & (r_hops <= c_max_hops) & (port$req_len != 32'h0) & (port$req_len <= c_max_value) & (port$req_va != 32'h0);",
                replace: "r_ok = (r_koff[(32'h0)+:(3)] == 32'h0) & (r_noff[(32'h0)+:(3)] == 32'h0) & (r_koff <= c_max_offset) & (r_noff <= c_max_offset) & (r_voff <= c_max_offset) & (r_hops != 32'h0) & (r_hops <= c_max_hops) & (port$req_len != 32'h0) & (port$req_va != 32'h0);",
            },
        ],
    },
    Mutant {
        name: "chase_unaligned_layout_accepted",
        rule: Rule::ChaseLayout,
        breaks: "pointer chase: the key and next offsets are 8-byte aligned (an unaligned one \
                 is BAD_REQUEST, not a read of the aligned word below it)",
        edits: &[
            Edit {
                module: "fastpath_top$core$ext$chase",
                find: "r_ok = (r_koff[(32'h0)+:(3)] == 32'h0) & (r_noff[(32'h0)+:(3)] == 32'h0) & (r_koff <= c_max_offset) & (r_noff <= c_max_offset) & (r_voff <= c_max_offset) & (r_hops != 32'h0) & (r_hops <= c_max_hops) & (port$req_len != 32'h0) & (port$req_len <= c_max_value) & (port$req_va != 32'h0);",
                replace: "r_ok = (r_koff <= c_max_offset) & (r_noff <= c_max_offset) & (r_voff <= c_max_offset) & (r_hops != 32'h0) & (r_hops <= c_max_hops) & (port$req_len != 32'h0) & (port$req_len <= c_max_value) & (port$req_va != 32'h0);",
            },
        ],
    },
    Mutant {
        name: "chase_from_address_zero",
        rule: Rule::ChaseStartNonZero,
        breaks: "pointer chase: a chase starting at address 0 is BAD_REQUEST",
        edits: &[
            Edit {
                module: "fastpath_top$core$ext$chase",
                find: "r_ok = (r_koff[(32'h0)+:(3)] == 32'h0) & (r_noff[(32'h0)+:(3)] == 32'h0) & (r_koff <= c_max_offset) & (r_noff <= c_max_offset) & (r_voff <= c_max_offset) & (r_hops != 32'h0) & (r_hops <= c_max_hops) & (port$req_len != 32'h0) & (port$req_len <= c_max_value) & (port$req_va != 32'h0);",
                replace: "r_ok = (r_koff[(32'h0)+:(3)] == 32'h0) & (r_noff[(32'h0)+:(3)] == 32'h0) & (r_koff <= c_max_offset) & (r_noff <= c_max_offset) & (r_voff <= c_max_offset) & (r_hops != 32'h0) & (r_hops <= c_max_hops) & (port$req_len != 32'h0) & (port$req_len <= c_max_value);",
            },
        ],
    },
    Mutant {
        name: "kv_key_length_unbounded",
        rule: Rule::KvKeyBound,
        breaks: "Clio-KV: keys are 1 to MAX_KEY bytes",
        edits: &[
            Edit {
                module: "fastpath_top$core$ext$clio_kv$checks",
                find: "bounds_q$d = (klen != 32'h0) & (klen <= c_max_key) & value_ok;",
                replace: "bounds_q$d = (klen != 32'h0) & value_ok;",
            },
        ],
    },
    Mutant {
        name: "kv_empty_key_accepted",
        rule: Rule::KvKeyNotEmpty,
        breaks: "Clio-KV: an empty key is BAD_REQUEST",
        edits: &[
            Edit {
                module: "fastpath_top$core$ext$clio_kv$checks",
                find: "bounds_q$d = (klen != 32'h0) & (klen <= c_max_key) & value_ok;",
                replace: "bounds_q$d = (klen <= c_max_key) & value_ok;",
            },
        ],
    },
    Mutant {
        name: "kv_body_length_unchecked",
        rule: Rule::KvBodyLength,
        breaks: "Clio-KV: a request's body is exactly its key and value (lying lengths are BAD_REQUEST)",
        edits: &[
            Edit {
                module: "fastpath_top$core$ext$clio_kv$checks",
                find: "body_q$d = sz_x == sz_k;",
                replace: "body_q$d = 1'b1;",
            },
        ],
    },
    Mutant {
        name: "kv_ignores_owner",
        rule: Rule::KvOwner,
        breaks: "Clio-KV: a record matches a request only if its owner is the requester's RAS; here equal key bytes of another owner in the same chain match",
        edits: &[Edit {
            module: "fastpath_top$core$ext$clio_kv",
            find: "meta_match$d = (cw$d[(32'h0)+:(16)] == owner$q) & (cw$d[(32'h10)+:(16)] == checks$klen);",
            replace: "meta_match$d = (cw$d[(32'h10)+:(16)] == checks$klen);",
        }],
    },
    Mutant {
        name: "kv_store_never_full",
        rule: Rule::KvStoreFull,
        breaks: "Clio-KV: a new key needs live + 1 < records (one slot stays spare), else OUT_OF_MEMORY; here the live-count check never refuses, and only the high-water mark's bound is left",
        edits: &[Edit {
            module: "fastpath_top$core$ext$clio_kv$words",
            find: "rec_m1_q$d = recs - 32'h1;",
            replace: "rec_m1_q$d = 64'hffffffffffffffff;",
        }],
    },
    Mutant {
        name: "kv_records_unlimited",
        rule: Rule::KvRecordQuota,
        breaks: "Clio-KV: a put of a new key needs its RAS's count below the store's per-RAS limit, else QUOTA_EXCEEDED (KvRecords); here the limit reads as none, and one RAS may fill the store",
        edits: &[Edit {
            module: "fastpath_top$core$ext$clio_kv",
            find: "quota_on$d = cw$q != 32'h0;",
            replace: "quota_on$d = 1'b0;",
        }],
    },
    Mutant {
        name: "second_page_assumed_contiguous",
        rule: Rule::PageEnd,
        breaks: "translation: a request that crosses a page is translated page by page; here the bytes past the page end go to the frame after the first page's (physically contiguous pages assumed)",
        edits: &[Edit {
            module: "fastpath_top$core$exec",
            find: "pa2$d = tr$pa;",
            replace: "pa2$d = pa1$q + n1$q;",
        }],
    },
    Mutant {
        name: "ring_never_replays",
        rule: Rule::RingReplays,
        breaks: "exactly once: a ring-recorded request that comes again is answered from its entry; here it never hits, so a retry executes again",
        edits: &[Edit {
            module: "fastpath_top$core$sync",
            find: "port$verdict$hit = v_hit$q;",
            replace: "port$verdict$hit = 1'b0;",
        }],
    },
    Mutant {
        name: "stale_atomic_never_replayed",
        rule: Rule::StaleReplay,
        breaks: "exactly once: an atomic that comes again with an older epoch than its RAS's is answered from the ring if an earlier attempt executed; here it is always STALE, so its sender cannot tell that it ran",
        edits: &[Edit {
            module: "fastpath_top$core$exec$dsp",
            find: "stale_ring = uses_ring & ~is_append & atomic_ok;",
            replace: "stale_ring = 1'b0;",
        }],
    },
    Mutant {
        name: "ring_busy_entry_overwritten",
        rule: Rule::RingFull,
        breaks: "exactly once: an entry holding the member's unacknowledged result refuses another request of that entry; here it executes and overwrites the result",
        edits: &[Edit {
            module: "fastpath_top$core$sync",
            find: "v_quota$d = m_own$q & ~m_match$q & (at_share | m_busy$q);",
            replace: "v_quota$d = m_own$q & ~m_match$q & at_share;",
        }],
    },
    Mutant {
        name: "ring_share_unbounded",
        rule: Rule::RingShareQuota,
        breaks: "isolation: a member holding its share of unacknowledged results is QUOTA_EXCEEDED; here it executes while its entry is free",
        edits: &[Edit {
            module: "fastpath_top$core$sync",
            find: "v_quota$d = m_own$q & ~m_match$q & (at_share | m_busy$q);",
            replace: "v_quota$d = m_own$q & ~m_match$q & m_busy$q;",
        }],
    },
    Mutant {
        name: "ring_records_into_another_row",
        rule: Rule::RingShareOwnSlots,
        breaks: "isolation: a result is recorded only into its member's own row; here into the neighbouring client id's row, over another member's result",
        edits: &[Edit {
            module: "fastpath_top$core$sync",
            find: "entries$write_address = ((w_way) & 14'h3fff) | (((l_key$q[(32'h20)+:(10)]) & 14'h3fff) << 32'h4);",
            replace: "entries$write_address = ((w_way) & 14'h3fff) | (((l_key$q[(32'h20)+:(10)] ^ 10'h1) & 14'h3fff) << 32'h4);",
        }],
    },
    Mutant {
        name: "slow_path_ring_room_ignored",
        rule: Rule::SlowPathRingRoom,
        breaks: "slow path: a request for it when its RX ring has no room past the notices' reserve is RETRY_LATER; here it is pushed anyway",
        edits: &[Edit {
            module: "fastpath_top$slow$rxs",
            find: "ok_q$d = ok_sel;",
            replace: "ok_q$d = 1'b1;",
        }],
    },
    Mutant {
        name: "rx_share_ignored",
        rule: Rule::SlowPathRingRoom,
        breaks: "isolation: a source holds at most as many RX ring descriptors as are free past the notices' reserve; here no source is counted, so one source can fill the ring up to the reserve",
        edits: &[Edit {
            module: "fastpath_top$slow$rxs",
            find: "count_push = push & counted;",
            replace: "count_push = 1'b0;",
        }],
    },
];

/// The rules of the spec that no mutant breaks, and why: the suite exercises each (the
/// coverage test), but no single edit of today's RTL drops it so that an answer shows.
pub const NO_MUTANT: &[(Rule, &str)] = &[
    (
        Rule::PidReuseForgets,
        "its idempotence-table part is `release_frees_nothing`'s (a row handed on keeps its \
         results); keys and TLB entries of a torn-down RAS go by the slow path's KEY_WRITE and \
         invalidations, which the key and TLB mutants break",
    ),
    (
        Rule::WalkPermissions,
        "the walk's permission check in `translate` repeats the page-fault unit's, which answers \
         PERMISSION from the walker's outcome anyway: redundant logic, a lead for issue 42",
    ),
    (
        Rule::FenceWaits,
        "a fence's answer is the same whenever it leaves; only its timing shows the rule, and \
         the harness compares answers, not times",
    ),
];
