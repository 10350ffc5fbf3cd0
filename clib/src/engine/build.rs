//! Building wire requests from operations: ids, headers with credentials, segmentation
//! of reads and writes, and the pages an operation touches (for ordering).

use super::*;

impl Engine {
    // ---- building requests ----

    pub(super) fn new_req(
        &self,
        st: &mut State,
        op: Option<u64>,
        h: Header,
        packets: Vec<Vec<u8>>,
        resp_total: u16,
        resp_bytes: u64,
    ) -> Req {
        let now = Instant::now();
        let cost = (packets.len().max(resp_total as usize)) as f64;
        let flush = h.durable || h.opcode.path() == Path::SlowPath;
        Req {
            id: h.req_id,
            lane: 0,
            op,
            opcode: h.opcode,
            va: h.va,
            offset: 0,
            len: h.total_len,
            packets,
            resp_total,
            got: vec![false; resp_total as usize],
            got_n: 0,
            cost,
            resp_bytes,
            sent_at: now,
            first_sent: now,
            deadline: now,
            rto: if flush {
                st.flush_rtt.rto()
            } else {
                st.rtt.rto()
            },
            retries: 0,
            busy: 0,
            waiting_busy: false,
            unverified: 0,
            restamp: false,
            retried_attempt: u32::MAX,
            flush,
        }
    }

    pub(super) fn req_id(st: &mut State) -> u32 {
        let id = st.next_req;
        // Wrapping keeps the low bits (the lane): 2^32 is a multiple of MAX_LANES.
        st.next_req = st.next_req.wrapping_add(MAX_LANES as u32);
        id
    }

    pub(super) fn single(
        &self,
        st: &mut State,
        op: Option<u64>,
        opcode: Opcode,
        va: u64,
        arg0: u64,
        arg1: u64,
    ) -> Req {
        let id = Self::req_id(st);
        let (pid, ras_key, client) = self.member();
        let h = Header {
            arg0,
            arg1,
            ..Header::request(opcode, pid, id, va)
        };
        // Register creates the RAS and has no credentials yet; everything else presents them.
        let h = if opcode.needs_key() {
            h.with_credentials(ras_key, client)
                .with_cookie(self.cookie())
                .with_epoch(self.epoch())
        } else {
            h.with_cookie(self.cookie()).with_epoch(self.epoch())
        };
        let p = h.to_packet(&[]);
        self.new_req(st, op, h, vec![p], 1, HEADER_LEN as u64)
    }

    pub(super) fn build(&self, st: &mut State, op_id: u64, spec: &OpSpec) -> Vec<Req> {
        let (pid, ras_key, client) = self.member();
        let chunk = (self
            .cfg
            .max_request_bytes
            .clamp(MAX_PAYLOAD as u32, MAX_REQUEST_LEN)) as usize;
        let read_chunk = (self
            .cfg
            .max_read_bytes
            .clamp(MAX_PAYLOAD as u32, MAX_REQUEST_LEN)) as usize;
        match spec {
            OpSpec::Register { nonce } => {
                // arg1: the node's admission secret (0 where it has none).
                let secret = self.cfg.admission_secret;
                vec![self.single(st, Some(op_id), Opcode::Register, 0, *nonce, secret)]
            }
            OpSpec::Join { nonce } => {
                vec![self.single(st, Some(op_id), Opcode::Join, 0, *nonce, 0)]
            }
            OpSpec::Unregister { destroy } => {
                vec![self.single(st, Some(op_id), Opcode::Unregister, 0, *destroy as u64, 0)]
            }
            OpSpec::Heartbeat => vec![self.single(st, Some(op_id), Opcode::Heartbeat, 0, 0, 0)],
            OpSpec::SetEpoch { epoch } => {
                vec![self.single(st, Some(op_id), Opcode::SetEpoch, 0, *epoch as u64, 0)]
            }
            OpSpec::Persist { va, len } | OpSpec::TxLog { va, len } => {
                let opcode = match spec {
                    OpSpec::Persist { .. } => Opcode::Persist,
                    _ => Opcode::TxLog,
                };
                let id = Self::req_id(st);
                let h = Header {
                    total_len: *len,
                    ..Header::request(opcode, pid, id, *va)
                }
                .with_credentials(ras_key, client)
                .with_cookie(self.cookie())
                .with_epoch(self.epoch());
                let p = h.to_packet(&[]);
                vec![self.new_req(st, Some(op_id), h, vec![p], 1, HEADER_LEN as u64)]
            }
            OpSpec::TxApply { va } => {
                vec![self.single(st, Some(op_id), Opcode::TxApply, *va, 0, 0)]
            }
            OpSpec::Alloc { len, perms } => {
                vec![self.single(st, Some(op_id), Opcode::Alloc, 0, *len, *perms as u64)]
            }
            OpSpec::Free { va } => vec![self.single(st, Some(op_id), Opcode::Free, *va, 0, 0)],
            OpSpec::Fence => vec![self.single(st, Some(op_id), Opcode::Fence, 0, 0, 0)],
            OpSpec::Atomic { op, va, arg0, arg1 } => {
                vec![self.single(st, Some(op_id), *op, *va, *arg0, *arg1)]
            }
            OpSpec::Append {
                va,
                cap,
                record,
                durable,
            } => {
                let id = Self::req_id(st);
                let h = Header {
                    total_len: record.len() as u32,
                    durable: *durable,
                    arg0: *cap,
                    ..Header::request(Opcode::Append, pid, id, *va)
                }
                .with_credentials(ras_key, client)
                .with_cookie(self.cookie())
                .with_epoch(self.epoch());
                let p = h.to_packet(record);
                vec![self.new_req(st, Some(op_id), h, vec![p], 1, HEADER_LEN as u64)]
            }
            OpSpec::Chase {
                va,
                key,
                layout,
                len,
            } => {
                let id = Self::req_id(st);
                let h = Header {
                    total_len: *len,
                    arg0: *key,
                    arg1: layout.pack(),
                    ..Header::request(Opcode::PointerChase, pid, id, *va)
                }
                .with_credentials(ras_key, client)
                .with_cookie(self.cookie())
                .with_epoch(self.epoch());
                let p = h.to_packet(&[]);
                let resp = HEADER_LEN as u64 + *len as u64;
                vec![self.new_req(st, Some(op_id), h, vec![p], 1, resp)]
            }
            OpSpec::Kv {
                op,
                payload,
                va,
                arg1,
            } => {
                let id = Self::req_id(st);
                let h = Header {
                    total_len: payload.len() as u32,
                    arg1: *arg1,
                    ..Header::request(*op, pid, id, *va)
                }
                .with_credentials(ras_key, client)
                .with_cookie(self.cookie())
                .with_epoch(self.epoch());
                let p = h.to_packet(payload);
                let resp = match op {
                    Opcode::KvGet => (HEADER_LEN + clio_proto::kv::MAX_STAGED_VALUE) as u64,
                    _ => HEADER_LEN as u64,
                };
                vec![self.new_req(st, Some(op_id), h, vec![p], 1, resp)]
            }
            // One request per read up to `max_read_bytes` (1 MiB by default): one request
            // packet, answered by one packet per KiB; the answer's bytes count against the
            // incast window, and an answer larger than the window goes alone.
            OpSpec::Read { va, len } => (0..*len)
                .step_by(read_chunk)
                .map(|off| {
                    let clen = read_chunk.min(len - off) as u32;
                    let id = Self::req_id(st);
                    let h = Header {
                        total_len: clen,
                        ..Header::request(Opcode::Read, pid, id, va + off as u64)
                    }
                    .with_credentials(ras_key, client)
                    .with_cookie(self.cookie())
                    .with_epoch(self.epoch());
                    let n = packet_count(clen);
                    let p = h.to_packet(&[]);
                    let mut r = self.new_req(
                        st,
                        Some(op_id),
                        h,
                        vec![p],
                        n,
                        clen as u64 + HEADER_LEN as u64 * n as u64,
                    );
                    r.offset = off;
                    r
                })
                .collect(),
            OpSpec::Write {
                va, data, durable, ..
            } => (0..data.len())
                .step_by(chunk)
                .map(|off| {
                    let clen = chunk.min(data.len() - off) as u32;
                    let id = Self::req_id(st);
                    let base = Header {
                        total_len: clen,
                        durable: *durable,
                        ..Header::request(Opcode::Write, pid, id, va + off as u64)
                    }
                    .with_credentials(ras_key, client)
                    .with_cookie(self.cookie())
                    .with_epoch(self.epoch());
                    let n = packet_count(clen);
                    let packets = (0..n)
                        .filter_map(|i| {
                            let (so, sl) = segment(clen, i)?;
                            let s = off + so as usize;
                            Some(
                                Header {
                                    pkt_index: i,
                                    pkt_count: n,
                                    ..base
                                }
                                .to_packet(&data[s..s + sl as usize]),
                            )
                        })
                        .collect();
                    let mut r = self.new_req(
                        st,
                        Some(op_id),
                        base,
                        packets,
                        n,
                        HEADER_LEN as u64 * n as u64,
                    );
                    r.offset = off;
                    r
                })
                .collect(),
        }
    }

    /// Pages (tracking units) an operation touches and whether it writes them.
    pub(super) fn footprint(&self, spec: &OpSpec) -> Option<(u64, u64, bool)> {
        let s = self.cfg.track_shift;
        let span = |va: u64, len: u64| Some((va >> s, va.saturating_add(len.max(1) - 1) >> s));
        let (range, write) = match spec {
            OpSpec::Read { va, len } => (span(*va, *len as u64), false),
            OpSpec::Write {
                va,
                data,
                ordered: true,
                ..
            } => (span(*va, data.len() as u64), true),
            OpSpec::Write { ordered: false, .. } => (None, false),
            // Persist waits for every earlier write to its range, and later ones for it.
            OpSpec::Persist { va, len } => (span(*va, *len as u64), true),
            // rtx_commit issues these after the durable write of the record has completed.
            OpSpec::TxLog { .. } | OpSpec::TxApply { .. } => (None, false),
            OpSpec::Atomic { va, .. } => (span(*va, 8), true),
            // Appenders need no order among themselves: the node orders the log.
            OpSpec::Append { .. } => (None, false),
            // Reads a structure whose extent is unknown until the walk: no tracking (as a
            // one-sided traversal would read node by node; order it with rrelease).
            OpSpec::Chase { .. } => (None, false),
            // The node orders KV requests; synchronous calls are ordered by waiting.
            OpSpec::Kv { .. } => (None, false),
            OpSpec::Free { va } => (span(*va, self.alloc_len(*va).unwrap_or(1)), true),
            OpSpec::Register { .. }
            | OpSpec::Join { .. }
            | OpSpec::Unregister { .. }
            | OpSpec::Heartbeat
            | OpSpec::SetEpoch { .. }
            | OpSpec::Alloc { .. }
            | OpSpec::Fence => (None, false),
        };
        range.map(|(a, b)| (a, b, write))
    }
}
