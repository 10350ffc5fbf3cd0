//! The executor's behaviour, cycle by cycle: its `update` (the state register's transitions
//! and every output's value). The ports, registers and their meaning are in `executor.rs`.

use super::*;

impl Logic for Executor {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            hdr,
            route_q,
            o,
            vaq,
            len,
            need,
            two,
            n1,
            piece,
            pa1,
            pa2,
            rs_status,
            rs_flags,
            rs_plen,
            rs_use_arg0,
            rs_arg0,
            rs_arg1,
            rs_arg1_on,
            rs_len,
            once,
            stale,
            hcli,
            ring_key,
            durable,
            ap,
            rd_seg,
            rd_i,
            rd_n,
            rd_more,
            again,
            page_rem,
            va_next,
            pmask,
            one_page
        );
        clock!(self, clock, cls, oq);
        // ---- The request's registers, out.
        self.header.next = self.hdr.q.val();
        self.route.next = self.route_q.q.val();
        self.client.next = self.hcli.q.val();
        self.ring.key.next = self.ring_key.q.val();
        self.placer.slot_word.next = self.o.q.val().get_bits::<3>(3);
        self.write.len.next = self.len.q.val();
        self.tr.need.next = self.need.q.val();
        self.write.two.next = self.two.q.val();
        self.write.n1.next = self.n1.q.val();
        self.placer.tail_pa.next = self.pa1.q.val();
        self.rsp.status.next = self.rs_status.q.val();
        self.rsp.flags.next = self.rs_flags.q.val();
        self.rsp.payload_len.next = self.rs_plen.q.val();
        self.rsp.arg0_on.next = self.rs_use_arg0.q.val();
        self.rsp.arg0.next = self.rs_arg0.q.val();
        self.rsp_arg1.next = self.rs_arg1.q.val();
        self.rsp_arg1_on.next = self.rs_arg1_on.q.val();
        self.append.next = self.ap.q.val();
        // The access's pieces, as the persist handshake and a response job take them.
        self.persist.pa1.next = self.pa1.q.val();
        self.persist.n1.next = self.n1.q.val();
        self.persist.two.next = self.two.q.val();
        self.persist.pa2.next = self.pa2.q.val();
        self.persist.len.next = self.len.q.val();
        self.persist.append.next = self.ap.q.val();
        self.job.o.next = self.o.q.val();
        self.job.route.next = self.route_q.q.val();
        self.write.o.next = self.o.q.val();
        self.write.append.next = self.ap.q.val();
        self.word.pa.next = self.pa1.q.val();
        self.word.tail.next = self.ap.q.val();
        self.rsp.seg_on.next = self.rd_seg.q.val();
        self.rsp.pkt_index.next = self.rd_i.q.val();
        self.rsp.pkt_count.next = self.rd_n.q.val();
        self.again.d.next = self.state.q.val() == State::Dispatch;

        // ---- Geometry of the current access.
        self.pmask.d.next = !(self.ones.val() << self.cfg_piece_shift.val());
        self.page_rem.d.next = bit_cast::<32, 64>(!self.vaq.q.val() & self.pmask.q.val()) + 1;
        self.va_next.d.next = (self.vaq.q.val() | self.pmask.q.val()) + 1;
        self.one_page.d.next = (self.len.q.val() == 0)
            | (bit_cast::<32, 12>(self.len.q.val() - 1)
                <= bit_cast::<32, 64>(!self.vaq.q.val() & self.pmask.q.val()));
        self.kt.next = (bit_cast::<12, 6>(self.o.q.val()) + self.len.q.val() + 63) >> 6;
        if self.two.q.val() {
            self.k1.next = (bit_cast::<12, 6>(self.o.q.val()) + self.n1.q.val()) >> 6;
        } else {
            self.k1.next = self.kt.val();
        }
        self.job.kt.next = self.kt.val();

        // ---- What the state says to the other blocks.
        self.x_only.next = self.state.q.val() == State::Resp;
        self.persist.run.next = self.state.q.val() == State::Persist;
        self.sptx.act.next = self.state.q.val() == State::SpTx;
        self.seg.load.next = self.state.q.val() == State::Dispatch;
        self.seg.step.next = false;
        self.unit.serving.next = self.state.q.val() == State::Offload;
        // A word access's R beat is awaited: sampled by `WordAccess`, and R is ready for it.
        self.word.sample.next = self.state.q.val() == State::SData;
        self.beat_pte.next = self.state.q.val() == State::SpPte;
        self.beat_word.next = self.state.q.val() == State::SWrite;
        self.sp_push.next = self.state.q.val() == State::SlowPush;
        self.ahead.lookup.next =
            (self.state.q.val() == State::Dispatch) & self.ahead.rw.val() & !self.ahead.ok.val();
        // The unit's access failed its translation; its word's R beat arrives; its block is
        // written.
        self.unit.tr_fail.next = (self.state.q.val() == State::Translate)
            & self.tr.done.val()
            & (self.tr.status.val() != self.st_ok.val());
        self.u_word_in.next =
            (self.state.q.val() == State::SData) & self.unit.accessing.val() & self.r_word.val();
        self.u_block_done.next = (self.state.q.val() == State::SWrite)
            & !self.w_busy.val()
            & self.beat_done.val()
            & self.unit.writing.val();
        self.unit.word_in.next = self.u_word_in.val();
        self.unit.block_done.next = self.u_block_done.val();

        // ---- Dispatch's decision (applied in Dispatch).
        self.dsp.is_read.next = self.cls.is_read.val();
        self.dsp.is_write.next = self.cls.is_write.val();
        self.dsp.is_slow.next = self.cls.is_slow.val();
        self.dsp.is_fence.next = self.cls.is_fence.val();
        self.dsp.is_cn_ack.next = self.cls.is_cn_ack.val();
        self.dsp.is_kv.next = self.cls.is_kv.val();
        self.dsp.is_chase.next = self.cls.is_chase.val();
        self.dsp.is_append.next = self.cls.is_append.val();
        self.dsp.is_extend.next = self.cls.is_extend.val();
        self.dsp.needs_key.next = self.cls.needs_key.val();
        self.dsp.uses_ring.next = self.cls.uses_ring.val();
        self.dsp.parse_ok.next = self.ahead.parse_ok.val();
        self.dsp.read_ok.next = self.ahead.read_ok.val();
        self.dsp.write_ok.next = self.ahead.write_ok.val();
        self.dsp.write_in_va.next = self.ahead.write_in_va.val();
        self.dsp.append_ok.next = self.ahead.append_ok.val();
        self.dsp.chase_ok.next = self.ahead.chase_ok.val();
        self.dsp.atomic_ok.next = self.ahead.atomic_ok.val();
        self.dsp.ahead_ok.next = self.ahead.ok.val();
        self.dsp.key_ok.next = self.keys.ok.val();
        self.dsp.epoch_ok.next = self.keys.epoch_ok.val();
        self.dsp.needs_route.next = self.routes.need.val();
        self.dsp.route_ok.next = self.routes.ok.val();
        self.dsp.route_done.next = self.routes.done.val();
        self.dsp.durable.next = self.h_durable.val();
        self.dsp.persist.next = self.cfg_persist.val();
        self.dsp.room_ok.next = self.rx_ok.val();
        self.dsp.room_fresh.next = self.again.q.val();
        self.dsp.fence_clear.next = self.order.fence_clear.val();
        self.dsp.kv_ready.next = self.start.kv_ready.val();
        self.dsp.chase_ready.next = self.start.chase_ready.val();

        // ---- Defaults.
        self.cls.load.next = false;
        self.cls.opcode.next = self.frame.hdr.val().get_bits::<8>(8);
        self.ar.own.next = false;
        self.ar.valid.next = false;
        self.ar.addr.next = self.pa1.q.val() & !bit_cast::<64, 6>(0x3F.into());
        self.ar.len.next = 0.into();
        self.aw.own.next = false;
        self.aw.valid.next = false;
        self.aw.addr.next = 0.into();
        self.aw.len.next = 0.into();
        self.job.valid.next = false;
        self.job.only.next = self.x_only.val();
        self.job.len.next = self.rs_len.q.val();
        if self.x_only.val() {
            self.job.len.next = self.header_len.val();
        }
        self.job.hdr.next = self.rsp.response.val();
        self.tr.start.next = false;
        self.tr.start_va.next = self.vaq.q.val();
        self.tr.hit_take.next = false;
        self.ring.lookup.next = false;
        self.ring.ack.next = false;
        self.ring.record.next = false;
        self.ring.rec_status.next = self.st_ok.val();
        self.ring.rec_value.next = self.word.old.val();
        self.word.alu_load.next = false;
        self.word.tail_load.next = false;
        self.placer.load.next = false;
        self.start.chase.next = false;
        self.start.kv.next = false;
        self.unit.clear.next = false;
        self.ev.nack.next = false;
        self.ev.denied.next = false;
        self.sp_tx_ready.next = false;
        self.desc_take.next = false;
        self.x_take.next = false;
        self.x_done.next = false;
        self.x_free.next = false;
        self.rd_hand.next = false;
        self.wr_hand.next = false;
        self.hit_go.next = false;
        self.hit_pa.next = self.ahead.pa.val();
        self.hit_len.next = self.len.q.val();
        self.hit_need.next = self.need.q.val();
        // The question to the ordering rules' tables (`RAddr`, `WAddr`, Dispatch below): the
        // piece under way, or the access a hit goes on to (`OrderAsk`). Its length comes from
        // registers, not the exact AxLEN (`k1 - 1`, too deep).
        self.order.ask.next = false;
        self.oq.dispatch.next = self.state.q.val() == State::Dispatch;
        self.oq.addressing.next =
            (self.state.q.val() == State::RAddr) | (self.state.q.val() == State::WAddr);
        self.oq.ahead_line.next = self.ahead.pa.val().get_bits::<8>(6);
        self.oq.line1.next = self.pa1.q.val().get_bits::<8>(6);
        self.oq.line2.next = self.pa2.q.val().get_bits::<8>(6);
        self.oq.piece.next = self.piece.q.val();
        self.oq.bytes.next = self.len.q.val();
        self.order.ask_line.next = self.oq.ask_line.val();
        self.order.ask_end.next = self.oq.ask_end.val();
        self.ask_bytes.next = bit_cast::<12, 16>(self.req.payload_len.val());

        match self.state.q.val() {
            State::Idle => {
                // Ready does not wait for valid: every output comes from registers, so the
                // cosimulation can sample them without settling the inputs first. Nothing is
                // taken until the key table's zero sweep after reset is done. The frame or
                // descriptor is taken below (`x_free`).
                self.sp_tx_ready.next = self.keys.ready.val();
                self.x_free.next = true;
            }
            State::Dispatch => {
                // The decision is `dsp`'s (wired above, module `dispatch`); here it is applied.
                self.piece.d.next = false;
                self.once.d.next = self.cls.uses_ring.val();
                self.stale.d.next = self.dsp.stale_replay.val();
                self.rs_status.d.next = self.dsp.status.val();
                self.ev.denied.next = self.dsp.denied.val();
                self.ring.ack.next = self.dsp.ring_ack.val();
                self.start.kv.next = self.dsp.kv_start.val();
                self.start.chase.next = self.dsp.chase_start.val();
                self.state.d.next = State::Resp;
                if self.dsp.to_translate.val() {
                    // (A read's `data_va` is its `va`.)
                    self.tr.start.next = true;
                    self.tr.start_va.next = self.ahead.va.val();
                    self.state.d.next = State::Translate;
                }
                if self.dsp.to_slow_push.val() {
                    self.state.d.next = State::SlowPush;
                }
                if self.dsp.to_offload.val() {
                    self.state.d.next = State::Offload;
                }
                if self.dsp.to_sync_check.val() {
                    self.ring.lookup.next = true;
                    self.state.d.next = State::SyncWait;
                }
                if self.dsp.fence_wait.val() | self.dsp.route_wait.val() | self.dsp.room_wait.val()
                {
                    // A FENCE waits for every earlier write's B response; a request that needs
                    // its route cookie checked, for the route check's verdict; a slow-path
                    // request, a cycle for its source's share.
                    self.state.d.next = State::Dispatch;
                }
                if self.dsp.branch_read.val() {
                    // READ: answered one packet per KiB, packet 0 first (each packet of the
                    // answer is a read of its own bytes: RData goes on with the next,
                    // translating as it reaches each page).
                    self.vaq.d.next = self.req.va.val();
                    self.o.d.next = self.req.va.val().get_bits::<6>(0);
                    self.len.d.next = self.ahead.len.val();
                    self.need.d.next = self.need_read.val();
                    self.rd_i.d.next = 0.into();
                    self.rd_n.d.next = self.seg.count.val();
                    self.rd_more.d.next = self.seg.count.val() > 1;
                }
                if self.dsp.read_go.val() {
                    self.rd_seg.d.next = true;
                    self.rs_len.d.next = self.ahead.len.val() + self.header_len.val();
                    self.rs_plen.d.next = bit_cast::<16, 12>(self.ahead.len.val());
                }
                if self.dsp.branch_write.val() {
                    // The packet's first byte (`Decode::data_va`: exact once the checks hold,
                    // the only case it is used).
                    self.vaq.d.next = self.ahead.va.val();
                    self.len.d.next = bit_cast::<12, 16>(self.req.payload_len.val());
                    self.need.d.next = self.need_write.val();
                    self.durable.d.next = self.h_durable.val();
                }
                if self.dsp.branch_word.val() {
                    // An atomic's word, or an Append's tail word (read and written as one).
                    self.vaq.d.next = self.req.va.val();
                    self.len.d.next = self.atomic_bytes.val();
                    self.need.d.next = self.need_atomic.val();
                }
                if self.dsp.branch_append.val() {
                    self.durable.d.next = self.h_durable.val();
                }
                self.ap.d.next = self.dsp.append_go.val();
                // Ask about the access a look-ahead hit goes on to (`hit_go`: the burst starts at
                // the look-ahead's PA, `RAddr` / `WAddr` hold it next cycle; `OrderAsk` rounds
                // its end up to its 4 KiB block's, and keeps the exact end for next cycle's
                // question). Without a hit the answer is not used. The registered class picks
                // the length, not `branch_read` (late: it waits for the checks); the two agree on
                // every hit.
                if self.cls.is_read.val() {
                    self.ask_bytes.next = self.ahead.len.val();
                }
                self.oq.bytes.next = self.ask_bytes.val();
                self.order.ask.next = true;
                if self.dsp.hit.val() {
                    // Translated ahead: the first page is mapped, permitted and holds the
                    // packet's first bytes, so straight to the access (`hit_go`).
                    self.hit_go.next = true;
                    self.hit_pa.next = self.ahead.pa.val();
                    self.hit_len.next = bit_cast::<12, 16>(self.req.payload_len.val());
                    self.hit_need.next = self.need_write.val();
                    if self.dsp.branch_read.val() {
                        self.hit_len.next = self.ahead.len.val();
                        self.hit_need.next = self.need_read.val();
                    }
                }
            }
            State::SyncWait => {
                // The ring's verdict is registered from the held lookup over this cycle and
                // the next (`sync_unit::RING_VERDICT_LATENCY`).
                self.state.d.next = State::SyncShare;
            }
            State::SyncShare => {
                self.state.d.next = State::SyncCheck;
            }
            State::SyncCheck => {
                self.rs_use_arg0.d.next = true;
                self.rs_status.d.next = self.ring.verdict.status.val();
                self.rs_arg0.d.next = self.ring.verdict.value.val();
                // (A replayed Append's `arg1` is the new tail: the old tail it recorded and
                // the record's footprint, as it answered first.)
                self.rs_arg1.d.next =
                    self.ring.verdict.value.val() + bit_cast::<64, 12>(self.place.footprint.val());
                if self.once.q.val() & self.ring.verdict.hit.val() {
                    self.state.d.next = State::Resp;
                } else if self.stale.q.val() {
                    // A stale atomic that never executed: STALE, as Dispatch answers it.
                    self.rs_use_arg0.d.next = false;
                    self.rs_status.d.next = self.st_stale.val();
                    self.state.d.next = State::Resp;
                } else if self.once.q.val() & self.ring.verdict.quota.val() {
                    // The member holds its share of the ring, none of it acknowledged:
                    // refused, nothing moves; the quota in `arg1` (`Quota::RingShare`; an
                    // Append's `arg0` is 0, as for any Append that did not append).
                    self.rs_use_arg0.d.next = false;
                    self.rs_status.d.next = self.st_quota_exceeded.val();
                    self.rs_arg0.d.next = 0.into();
                    self.rs_arg1.d.next = self.quota_ring_share.val();
                    self.rs_arg1_on.d.next = true;
                    self.state.d.next = State::Resp;
                } else if self.once.q.val() & self.ring.verdict.stranger.val() {
                    // The client id's row is not this RAS's: denied, nothing executes.
                    self.rs_use_arg0.d.next = false;
                    self.rs_status.d.next = self.st_denied.val();
                    self.state.d.next = State::Resp;
                } else if self.req.va.val().get_bits::<16>(48) != 0 {
                    // Beyond the 48-bit VA space no PTE can match.
                    self.rs_use_arg0.d.next = false;
                    self.rs_status.d.next = self.st_unmapped.val();
                    self.state.d.next = State::Resp;
                } else {
                    self.rs_use_arg0.d.next = false;
                    self.tr.start.next = true;
                    self.state.d.next = State::Translate;
                }
                if self.ap.q.val()
                    & !(self.once.q.val()
                        & (self.ring.verdict.hit.val() | self.ring.verdict.quota.val()))
                {
                    // An Append answers arg0 = 0 unless it appended (or is replayed).
                    self.rs_arg0.d.next = 0.into();
                    self.rs_arg1.d.next = bit_cast::<64, 12>(self.place.footprint.val());
                }
            }
            State::Translate => {
                if self.tr.only_hit.val()
                    & !self.piece.q.val()
                    & !self.unit.accessing.val()
                    & self.one_page.q.val()
                {
                    // A request's only page (not an offload's access), mapped and permitted
                    // in the TLB: on to the access now (`hit_go`).
                    self.hit_go.next = true;
                    self.hit_pa.next = self.tr.hit_pa.val();
                    self.hit_len.next = self.len.q.val();
                    self.hit_need.next = self.need.q.val();
                }
                if self.tr.done.val() {
                    if self.piece.q.val() {
                        self.pa2.d.next = self.tr.pa.val();
                    } else {
                        self.pa1.d.next = self.tr.pa.val();
                    }
                    // Second page of a straddling range, or the access.
                    if !self.piece.q.val() {
                        self.n1.d.next = self.len.q.val();
                        self.two.d.next = false;
                        if !self.one_page.q.val() {
                            self.n1.d.next = bit_cast::<12, 32>(self.page_rem.q.val());
                            self.two.d.next = true;
                        }
                    }
                    if (self.tr.status.val() != self.st_ok.val()) & self.unit.accessing.val() {
                        // An offload's access failed: the unit is told (`xs.tr_fail`), and
                        // answers.
                        self.state.d.next = State::Offload;
                    } else if self.tr.status.val() != self.st_ok.val() {
                        self.rs_status.d.next = self.tr.status.val();
                        self.rs_plen.d.next = 0.into();
                        self.rs_len.d.next = self.header_len.val();
                        self.state.d.next = State::Resp;
                    } else if !self.piece.q.val() & !self.one_page.q.val() {
                        self.piece.d.next = true;
                        self.tr.start_va.next = self.va_next.q.val();
                        self.tr.start.next = true;
                        self.state.d.next = State::Translate;
                    } else {
                        self.piece.d.next = false;
                        if self.unit.writing.val() {
                            // An offload's block write: AW and W as an atomic's write-back (its
                            // request's first access was a read, after every earlier read).
                            self.state.d.next = State::SWrite;
                        } else if self.unit.accessing.val() {
                            self.state.d.next = State::SAddr;
                        } else if self.need.q.val() == self.need_read.val() {
                            self.state.d.next = State::RAddr;
                        } else if self.need.q.val() == self.need_write.val() {
                            self.state.d.next = State::WAddr;
                        } else {
                            self.state.d.next = State::SAddr;
                        }
                    }
                }
            }
            State::WAddr => {
                // The bursts' addresses; their data follows from the write-data stage. Not
                // before every earlier read has its data (write-after-read order: AXI does not
                // order a later write against an earlier read).
                self.aw.own.next = true;
                self.order.ask.next = true;
                self.aw.valid.next = self.order.write_clear.val() | self.order.write_near.val();
                if self.piece.q.val() {
                    self.aw.addr.next = self.pa2.q.val() & !bit_cast::<64, 6>(0x3F.into());
                    self.aw.len.next = bit_cast::<8, 12>(self.kt.val() - self.k1.val() - 1);
                } else {
                    self.aw.addr.next = self.pa1.q.val() & !bit_cast::<64, 6>(0x3F.into());
                    self.aw.len.next = bit_cast::<8, 12>(self.k1.val() - 1);
                }
                if self.aw.ready.val()
                    & (self.order.write_clear.val() | self.order.write_near.val())
                {
                    if self.two.q.val() & !self.piece.q.val() {
                        self.piece.d.next = true;
                    } else {
                        // WData unless the hand-over below happens now.
                        self.wr_hand.next = true;
                        self.state.d.next = State::WData;
                    }
                }
            }
            State::WData => {
                // Waits here while the write-data stage streams an earlier write.
                self.wr_hand.next = true;
            }
            State::Persist => {
                // A durable write: once its data is in DRAM, the board makes each page piece
                // durable (and an Append's tail word after its record): the persist handshake.
                if self.persist.done.val() {
                    self.state.d.next = State::Resp;
                    if self.persist.failed.val() {
                        // Not known durable: the client retries the write.
                        self.rs_status.d.next = self.st_retry_later.val();
                    }
                }
            }
            State::RAddr => {
                // After every earlier data write has its B response (read-after-write order).
                self.ar.own.next = true;
                self.order.ask.next = true;
                self.ar.valid.next = self.order.read_clear.val() | self.order.read_near.val();
                if self.piece.q.val() {
                    self.ar.addr.next = self.pa2.q.val() & !bit_cast::<64, 6>(0x3F.into());
                    self.ar.len.next = bit_cast::<8, 12>(self.kt.val() - self.k1.val() - 1);
                } else {
                    self.ar.len.next = bit_cast::<8, 12>(self.k1.val() - 1);
                }
                if self.ar.ready.val() & (self.order.read_clear.val() | self.order.read_near.val())
                {
                    if self.two.q.val() & !self.piece.q.val() {
                        self.piece.d.next = true;
                    } else {
                        // RData unless the hand-over below happens now.
                        self.rd_hand.next = true;
                        self.state.d.next = State::RData;
                    }
                }
            }
            State::RData => {
                // Waits here while the read-data stage and its queue are both full (they wait
                // for the transmit stage).
                self.rd_hand.next = true;
            }
            State::SAddr => {
                self.ar.own.next = true;
                self.ar.valid.next = self.order.atomic_clear.val();
                if self.ar.ready.val() & self.order.atomic_clear.val() {
                    self.state.d.next = State::SData;
                }
            }
            State::SData => {
                // The word is registered each cycle here (`wa.sample`): the one of the cycle
                // the R beat arrives is what SAlu (an atomic) or ALoad (Append's tail) reads.
                if self.u_word_in.val() {
                    // An offload's word: its block goes to the unit now (`xs.word_in`).
                    self.state.d.next = State::Offload;
                } else if self.r_word.val() & self.ap.q.val() {
                    self.state.d.next = State::ALoad;
                } else if self.r_word.val() {
                    self.state.d.next = State::SAlu;
                }
            }
            State::SAlu => {
                self.rs_status.d.next = self.st_ok.val();
                self.rs_use_arg0.d.next = true;
                self.rs_arg0.d.next = self.word.old.val();
                self.word.alu_load.next = true;
                self.ring.record.next = self.once.q.val();
                if self.alu_write.val() {
                    self.state.d.next = State::SWrite;
                } else {
                    self.state.d.next = State::Resp;
                }
            }
            State::ALoad => {
                // The registered tail word into the placement's sums; placed next cycle.
                self.placer.load.next = true;
                self.state.d.next = State::APlace;
            }
            State::APlace => {
                // Placed, the record's range is translated with write permission (one or two
                // pages) like a write's.
                self.state.d.next = State::Resp;
                if self.place.log_full.val() {
                    self.rs_status.d.next = self.st_log_full.val();
                } else if self.place.past_va.val() {
                    self.rs_status.d.next = self.st_bad_request.val();
                } else {
                    self.vaq.d.next = self.place.record_va.val();
                    self.tr.start_va.next = self.place.record_va.val();
                    self.o.d.next = self.place.record_va.val().get_bits::<6>(0);
                    self.len.d.next = self.place.footprint.val();
                    self.need.d.next = self.need_write.val();
                    self.piece.d.next = false;
                    self.tr.start.next = true;
                    self.state.d.next = State::Translate;
                }
            }
            State::SWrite => {
                // The W channel is the write-data stage's until it is done.
                // The word (or the offload's block) goes out through the one-beat writer.
                if !self.w_busy.val() {
                    if self.u_block_done.val() {
                        // The offload's block is written: the unit is told.
                        self.state.d.next = State::Offload;
                    } else if self.beat_done.val() & self.ap.q.val() {
                        self.ring.record.next = self.once.q.val();
                        self.ring.rec_value.next = self.place.old_tail.val();
                        self.rs_status.d.next = self.st_ok.val();
                        self.rs_arg0.d.next = self.place.old_tail.val();
                        self.rs_arg1.d.next = self.place.new_tail.val();
                        if self.durable.q.val() {
                            self.state.d.next = State::Persist;
                        } else {
                            self.state.d.next = State::Resp;
                        }
                    } else if self.beat_done.val() {
                        self.state.d.next = State::Resp;
                    }
                }
            }
            State::Offload => {
                // Serve the offload unit (`OffloadService`): its access (a word read, or
                // Clio-KV's block write) goes through the translation of the request's RAS, or
                // the store's (`xs.own`), like a Read's (a Write's permission for a write); its
                // answer, a cycle after the unit gives it, is the response, with a payload read
                // like a Read's when it asks for one.
                // Clio-KV's put or delete asks the idempotence ring under the caller's
                // (pid, client, req_id): looked up now, the verdict to the unit when it is
                // decided (`sync_unit::RING_VERDICT_LATENCY`).
                self.ring.lookup.next = self.unit.ring_lookup.val();
                if self.unit.access.val() {
                    self.vaq.d.next = self.unit.access_va.val();
                    self.tr.start_va.next = self.unit.access_va.val();
                    // An 8-byte aligned word, read as an atomic's.
                    self.len.d.next = self.atomic_bytes.val();
                    self.need.d.next = self.need_read.val();
                    if self.unit.access_write.val() {
                        // A 64-byte block (aligned: one page), kept with its strobes.
                        self.len.d.next = self.block_bytes.val();
                        self.need.d.next = self.need_write.val();
                    }
                    self.piece.d.next = false;
                    self.tr.start.next = true;
                    self.state.d.next = State::Translate;
                }
                if self.unit.ans_valid.val() {
                    // A Clio-KV put or delete that executed records its answer (errors too,
                    // with value 0); a replay is the request's header with the recorded status
                    // and arg0, nothing else.
                    self.ring.record.next = self.unit.ring_record.val();
                    self.ring.rec_status.next = self.unit.ring_status.val();
                    self.ring.rec_value.next = self.unit.ring_value.val();
                    self.rs_status.d.next = self.unit.ans_status.val();
                    self.rs_plen.d.next = 0.into();
                    self.rs_arg0.d.next = self.unit.ans_arg0.val();
                    self.rs_use_arg0.d.next = self.unit.ans_replay.val();
                    self.state.d.next = State::Resp;
                    if self.unit.ans_read.val() {
                        self.vaq.d.next = self.unit.ans_read_va.val();
                        self.tr.start_va.next = self.unit.ans_read_va.val();
                        self.o.d.next = self.unit.ans_read_va.val().get_bits::<6>(0);
                        self.len.d.next = self.unit.ans_read_len.val();
                        self.need.d.next = self.need_read.val();
                        self.piece.d.next = false;
                        self.rs_len.d.next = self.unit.ans_read_len.val() + self.header_len.val();
                        self.rs_plen.d.next = bit_cast::<16, 12>(self.unit.ans_read_len.val());
                        self.tr.start.next = true;
                        self.state.d.next = State::Translate;
                    }
                }
            }
            State::Resp => {
                // Payload-less response: its header beat goes to the read-data stage like a
                // read's job (below), and the executor goes on.
                self.rd_hand.next = true;
            }
            State::SlowPush => {
                // REQUEST (`sp_push`: `SlowPathDesc::request`): kind, the member (client, u16
                // LE at byte 2), route, header bytes 0..48 (never the key).
                if self.sp_rx_ready.val() {
                    self.state.d.next = State::Drain;
                }
            }
            State::SpTx => {
                // The descriptor's actions are `sptx`'s (wired above); the executor waits for a
                // PTE_WRITE's beat, or sends a REPLY's header as a payload-less response along
                // its route.
                self.state.d.next = State::Drain;
                if self.sptx.to_pte.val() {
                    self.state.d.next = State::SpPte;
                }
                if self.sptx.reply.val() {
                    self.route_q.d.next = self.desc.route.val();
                    self.hdr.d.next = self.desc.header.val();
                    self.rs_status.d.next = self.desc.reply_status.val();
                    self.rs_flags.d.next = self.desc.reply_flags.val();
                    self.rs_plen.d.next = 0.into();
                    self.rs_use_arg0.d.next = false;
                    self.state.d.next = State::Resp;
                }
            }
            State::SpPte => {
                // The W channel is the write-data stage's until it is done.
                // The PTE goes out through the one-beat writer (as a fault's write-back does).
                if self.beat_done.val() {
                    self.state.d.next = State::Drain;
                }
            }
            State::Drain => {
                // Writes still in flight need not finish here: every DRAM read (walk, read,
                // atomic) waits for all B responses first, so it sees them.
                self.x_done.next = true;
                self.x_free.next = true;
                self.state.d.next = State::Idle;
            }
        }
        // ---- A translated request's only page hit (the translate stage's `only_hit`, or Dispatch
        // with the look-ahead's translation): straight on to its access, the work of the
        // translation's `done` cycle done here.
        if self.hit_go.val() {
            // (From Translate: the translate stage's hit, taken now.)
            self.tr.hit_take.next = self.state.q.val() == State::Translate;
            self.pa1.d.next = self.hit_pa.val();
            self.n1.d.next = self.hit_len.val();
            self.two.d.next = false;
            if self.hit_need.val() == self.need_read.val() {
                self.state.d.next = State::RAddr;
            } else if self.hit_need.val() == self.need_write.val() {
                self.state.d.next = State::WAddr;
            } else {
                self.state.d.next = State::SAddr;
            }
        }
        // ---- Hand-overs from the executor: RData, or RAddr in the cycle its last address
        // goes out; WData, or WAddr likewise. A read or write that finds its next stage free
        // spends no cycle waiting in RData / WData.
        if self.rd_hand.val() {
            // Hand the response (a read's job, or a payload-less one) to the read-data stage;
            // it takes it straight in or queues it while it works on another (a read's beats
            // wait in DRAM meanwhile), so the executor goes on with the next request and the
            // next read's address goes out early enough to hide the DRAM latency. This waits
            // only while the stage's queue is full (it waits for the transmit stage).
            // A read's answer goes on with its next packet.
            self.job.valid.next = true;
            if self.job.ready.val() {
                self.x_done.next = true;
                self.x_free.next = true;
                self.state.d.next = State::Idle;
            }
            if self.x_done.val() & self.rd_seg.q.val() & self.rd_more.q.val() & !self.x_only.val() {
                self.seg.step.next = true;
                self.rd_i.d.next = self.rd_i.q.val() + 1;
                self.rd_more.d.next = bit_cast::<17, 16>(self.rd_i.q.val()) + 2
                    < bit_cast::<17, 16>(self.rd_n.q.val());
                self.vaq.d.next = self.seg.next_va.val();
                self.tr.start_va.next = self.seg.next_va.val();
                self.len.d.next = self.seg.next_len.val();
                self.rs_len.d.next = self.seg.next_len.val() + self.header_len.val();
                self.rs_plen.d.next = bit_cast::<16, 12>(self.seg.next_len.val());
                self.piece.d.next = false;
                self.x_free.next = false;
                self.tr.start.next = true;
                self.state.d.next = State::Translate;
            }
        }
        // Hand the data beats to the write-data stage once it is free; the slot goes
        // with them, and the response follows at once (later reads wait for the B).
        self.w_pass.next = self.wr_hand.val() & !self.w_busy.val();
        if self.w_pass.val() {
            self.rs_status.d.next = self.st_ok.val();
            if self.ap.q.val() {
                self.word.tail_load.next = true;
                self.state.d.next = State::SWrite;
            } else if self.durable.q.val() {
                self.state.d.next = State::Persist;
            } else {
                // A plain write's OK answer (header only) goes to the read-data stage in the
                // same cycle when it takes it, and the executor takes the next frame.
                self.state.d.next = State::Resp;
                self.job.valid.next = true;
                self.job.only.next = true;
                self.job.len.next = self.header_len.val();
                self.job.hdr.next = self.rsp.response_ok.val();
                if self.job.ready.val() {
                    self.x_free.next = true;
                    self.state.d.next = State::Idle;
                }
            }
        }
        // ---- Take the next frame or descriptor (`x_free`: idle, or finishing a request with
        // nothing after it). A descriptor is taken from Idle only (its `sp_tx_ready` comes
        // from registers): a finishing request that sees one waiting goes to Idle first.
        if self.x_free.val() {
            self.rs_flags.d.next = self.flags_response.val();
            self.rs_plen.d.next = 0.into();
            self.rs_use_arg0.d.next = false;
            self.rs_arg1_on.d.next = false;
            self.ap.d.next = false;
            self.unit.clear.next = true;
            self.rd_seg.d.next = false;
            self.rs_len.d.next = self.header_len.val();
            if self.keys.ready.val() & self.sp_tx_valid.val() {
                if self.state.q.val() == State::Idle {
                    self.desc_take.next = true;
                    self.ring_key.d.next = bit_cast::<64, 32>(self.desc.member.val()) << 32;
                    self.state.d.next = State::SpTx;
                }
            } else if self.keys.ready.val() & self.frame.full.val() {
                // Take the received frame: its header, route and offset, and act on the
                // ack layer's verdict (drop, NACK, or dispatch next cycle). Its key is
                // looked up this cycle (above), for Dispatch.
                self.x_take.next = true;
                self.hdr.d.next = self.frame.hdr.val();
                self.cls.load.next = true;
                self.hcli.d.next = self.frame.client.val();
                self.ring_key.d.next = self.frame.ring_key.val();
                self.route_q.d.next = self.frame.route.val();
                self.o.d.next = self.frame.lane.val();
                if self.frame.verdict.val().get_bit(0) {
                    self.state.d.next = State::Drain;
                } else if self.frame.verdict.val().get_bit(1) {
                    self.ev.nack.next = true;
                    self.rs_status.d.next = self.st_nack.val();
                    self.state.d.next = State::Resp;
                } else {
                    self.state.d.next = State::Dispatch;
                }
            }
        }
        self.queue.take.next = self.x_take.val();
        self.queue.done.next = self.x_done.val();
        self.queue.pass.next = self.w_pass.val();
        self.write.start.next = self.w_pass.val();
        // A TLB hit for the statistics: a look-ahead translation taken in Dispatch.
        self.ev.ahead_hit.next = self.hit_go.val() & (self.state.q.val() == State::Dispatch);
        self.oq.hit_go.next = self.hit_go.val();
        if self.reset.val() {
            self.state.d.next = State::Idle;
        }
    }
}
