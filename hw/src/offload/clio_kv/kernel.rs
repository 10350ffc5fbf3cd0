//! The Clio-KV unit's kernel: the request's checks, the table's walk and updates as a state
//! machine over one-word reads and writes (`Rd`/`Wr`, continuing in `ret`), the record's
//! blocks streamed from the payload (see the module above for the order and the statuses).

use super::{ClioKv, KvState};
use rust_hdl::prelude::*;

impl Logic for ClioKv {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            ret,
            op_is_get,
            op_is_put,
            op_is_delete,
            owner,
            hdr_zero,
            hdr_len,
            plen,
            b0,
            b1lo,
            pay_done,
            head,
            link,
            at,
            cand,
            hnext,
            rvlen,
            kw,
            hops,
            found,
            slot,
            ma,
            wd,
            cache,
            ctag,
            cvalid,
            bj,
            bva,
            bd,
            prev,
            cur,
            cw,
            hw_full,
            hw_slot,
            meta_bad,
            meta_match,
            chit_q,
            cand_zero,
            fail_q,
            kword,
            kmask,
            klast,
            ktail,
            kword_last,
            quota_q,
            quota_on,
            cnt_over,
            count_pass,
            hash_ready,
            at_meta_pa,
            at_key_pa,
            ma_next_pa,
            slot_meta_pa,
            a_status,
            a_arg0,
            a_read,
            a_va,
            a_len,
            a_record,
            a_replay,
            a_quota
        );
        self.khash.clock.next = self.clock.val();
        self.khash.reset.next = self.reset.val();
        self.ones64.next = 0xFFFF_FFFF_FFFF_FFFF_u64.to_bits();
        // The request: its prefix, key and the checks of KvRequest::decode.
        self.checks.clock.next = self.clock.val();
        self.checks.op.next = self.kv_port.req_op.val();
        self.checks.va.next = self.port.req_va.val();
        self.checks.arg0.next = self.port.req_arg0.val();
        self.checks.arg1.next = self.port.req_arg1.val();
        self.checks.len.next = self.port.req_len.val();
        self.checks.pay_len.next = self.kv_port.req_pay_len.val();
        self.checks.pkt_count.next = self.kv_port.req_pkt_count.val();
        self.checks.pkt_index.next = self.kv_port.req_pkt_index.val();
        self.checks.b0.next = self.b0.q.val();
        self.checks.b1lo.next = self.b1lo.q.val();
        self.checks.plen.next = self.plen.q.val();
        self.checks.is_put.next = self.op_is_put.q.val();
        // The store's layout.
        self.records.next = bit_cast::<64, 32>(self.kv_port.cfg_records.val());
        // The store's word addresses (`StoreLayout`), registered.
        self.words.clock.next = self.clock.val();
        self.words.base.next = self.kv_port.cfg_base.val();
        self.words.buckets.next = self.kv_port.cfg_buckets.val();
        self.words.records.next = self.kv_port.cfg_records.val();
        self.words.owner.next = self.owner.q.val().get_bits::<12>(0);
        self.words.hash.next = self.khash.hash.val();
        // The word at `ma` in the cached block, and the words a record header holds.
        self.chit.next =
            self.cvalid.q.val() & (self.ctag.q.val() == self.ma.q.val().get_bits::<58>(6));
        // `chit` of the next read, decided as `ma` is loaded for it: `ctag` against the source
        // the state loads (every state that enters `Rd`, below), held in `Rd`. (`ctag` and
        // `cvalid` change in `Idle`, `RdWait` and `BWait` only, none of which enters `Rd`.)
        self.cand_zero.d.next = self.cand.q.val() == 0;
        // (An OR of the states' terms, not a select of compares: no synthesis merges the
        // compares into one behind a select of their sources.)
        self.nhit.next = ((self.state.q.val() == KvState::Rd) & self.chit_q.q.val())
            | (((self.state.q.val() == KvState::LinkUse)
                | ((self.state.q.val() == KvState::FreeUse) & !self.cand_zero.q.val()))
                & (self.ctag.q.val() == self.cand.q.val().get_bits::<58>(6)))
            | ((self.state.q.val() == KvState::FreeUse)
                & self.cand_zero.q.val()
                & (self.ctag.q.val() == self.words.sb_hw.val().get_bits::<58>(6)))
            | ((self.state.q.val() == KvState::Start)
                & (self.ctag.q.val() == self.words.sb_magic.val().get_bits::<58>(6)))
            | ((self.state.q.val() == KvState::HashWait)
                & (self.ctag.q.val() == self.words.head.val().get_bits::<58>(6)))
            | ((self.state.q.val() == KvState::HdrNext)
                & (self.ctag.q.val() == self.at_meta_pa.q.val().get_bits::<58>(6)))
            | ((self.state.q.val() == KvState::HdrMeta)
                & (self.ctag.q.val() == self.at_key_pa.q.val().get_bits::<58>(6)))
            | ((self.state.q.val() == KvState::KeyChk)
                & (self.ctag.q.val() == self.ma_next_pa.q.val().get_bits::<58>(6)))
            | ((self.state.q.val() == KvState::Next)
                & (self.ctag.q.val() == self.at.q.val().get_bits::<58>(6)))
            | (((self.state.q.val() == KvState::NotFound)
                | (self.state.q.val() == KvState::AfterCommit)
                | (self.state.q.val() == KvState::Give4))
                & (self.ctag.q.val() == self.words.sb_live.val().get_bits::<58>(6)))
            | ((self.state.q.val() == KvState::LiveChk)
                & (self.ctag.q.val() == self.words.sb_quota.val().get_bits::<58>(6)))
            | (((self.state.q.val() == KvState::QuotaGot)
                | (self.state.q.val() == KvState::CntDel)
                | (self.state.q.val() == KvState::CntUp))
                & (self.ctag.q.val() == self.words.count.val().get_bits::<58>(6)))
            | (((self.state.q.val() == KvState::Take) | (self.state.q.val() == KvState::Give))
                & (self.ctag.q.val() == self.words.sb_free.val().get_bits::<58>(6)))
            | ((self.state.q.val() == KvState::Prev)
                & (self.ctag.q.val() == self.head.q.val().get_bits::<58>(6)));
        self.chit_q.d.next = self.cvalid.q.val() & self.nhit.val();
        self.cnt_over.d.next = self.quota_on.q.val() & (self.cw.q.val() >= self.quota_q.q.val());
        self.word_sh.next = bit_cast::<9, 3>(self.ma.q.val().get_bits::<3>(3)) << 6;
        self.cw.d.next = bit_cast::<64, 512>(self.cache.q.val() >> self.word_sh.val());
        if self.state.q.val() == KvState::RdWait {
            self.cw.d.next = bit_cast::<64, 512>(self.port.mem_data.val() >> self.word_sh.val());
        }
        // A record's metadata word's checks (`HdrMeta`), registered with the word.
        self.meta_bad.d.next = (self.cw.d.val().get_bits::<16>(16) > self.c_max_key.val())
            | (self.cw.d.val().get_bits::<16>(32) > self.c_max_stored.val());
        self.meta_match.d.next = (self.cw.d.val().get_bits::<16>(0) == self.owner.q.val())
            & (self.cw.d.val().get_bits::<16>(16) == self.checks.klen.val());
        self.m_vlen.next = self.cw.q.val().get_bits::<11>(32);
        self.hw_full.d.next = self.cw.q.val() >= self.records.val();
        self.hw_slot.d.next = self.words.first.val()
            + (self.cw.q.val() << 10)
            + (self.cw.q.val() << 6)
            + (self.cw.q.val() << 4);
        // The key word `kw` and its bytes that count.
        self.kword.d.next =
            bit_cast::<64, 512>(self.checks.key.val() >> (bit_cast::<9, 3>(self.kw.q.val()) << 6));
        self.klast.d.next = bit_cast::<3, 16>((self.checks.klen.val() - 1) >> 3);
        self.ktail.d.next = self.ones64.val();
        if self.checks.klen.val().get_bits::<3>(0) != 0 {
            self.ktail.d.next = !(self.ones64.val()
                << (bit_cast::<16, 3>(self.checks.klen.val().get_bits::<3>(0)) << 3));
        }
        self.k_at_last.next = self.kw.q.val() == self.klast.q.val();
        self.kword_last.d.next = self.k_at_last.val();
        self.kmask.d.next = self.ones64.val();
        if self.k_at_last.val() {
            self.kmask.d.next = self.ktail.q.val();
        }
        // `cand` is 0, or a slot: first <= cand < end, (cand - first) % RECORD_BYTES == 0.
        self.slots.clock.next = self.clock.val();
        self.slots.cand.next = self.cand.q.val();
        self.slots.first.next = self.words.first.val();
        self.slots.stop.next = self.words.rec_end.val();
        // Word addresses, registered (see their fields).
        self.hash_ready.d.next = !self.khash.busy.val();
        self.at_meta_pa.d.next = self.at.q.val() + 8;
        self.at_key_pa.d.next = self.at.q.val() + self.c_hdr_bytes.val();
        self.ma_next_pa.d.next = self.ma.q.val() + 8;
        self.slot_meta_pa.d.next = self.slot.q.val() + 8;
        // A word write: `wd` in all eight words, strobed at `ma`'s.
        self.rep.next = bit_cast::<512, 64>(self.wd.q.val())
            | (bit_cast::<512, 64>(self.wd.q.val()) << 64)
            | (bit_cast::<512, 64>(self.wd.q.val()) << 128)
            | (bit_cast::<512, 64>(self.wd.q.val()) << 192)
            | (bit_cast::<512, 64>(self.wd.q.val()) << 256)
            | (bit_cast::<512, 64>(self.wd.q.val()) << 320)
            | (bit_cast::<512, 64>(self.wd.q.val()) << 384)
            | (bit_cast::<512, 64>(self.wd.q.val()) << 448);
        self.wstrb_word.next = bit_cast::<64, 8>(0xFF_u8.to_bits())
            << (bit_cast::<6, 3>(self.ma.q.val().get_bits::<3>(3)) << 3);
        self.wmask.next = bit_cast::<512, 64>(self.ones64.val()) << self.word_sh.val();
        // The record's blocks: block bj holds payload bytes 64 bj - bd .. + 64 (beats bj - 1
        // and bj through the funnel), of which 4..plen are the record's key and value.
        self.body_at.next = self.slot.q.val() + self.c_body_off.val();
        self.blocks.clock.next = self.clock.val();
        self.blocks.prev.next = self.prev.q.val();
        self.blocks.cur.next = self.cur.q.val();
        self.blocks.bd.next = self.bd.q.val();
        self.blocks.bj.next = self.bj.q.val();
        self.blocks.plen.next = self.plen.q.val();
        // The hash's input: owner (u16 LE) ++ key.
        self.khash.data.next = bit_cast::<528, 16>(self.owner.q.val())
            | (bit_cast::<528, 512>(self.checks.key.val()) << 16);
        self.khash.len.next = bit_cast::<7, 16>(self.checks.klen.val()) + 2;
        self.khash.start.next = false;
        // Ports, idle.
        self.port.req_ready.next = self.state.q.val() == KvState::Idle;
        self.port.pay_ready.next = false;
        self.port.mem_valid.next = false;
        self.port.mem_write.next = false;
        self.port.mem_own.next = true;
        self.port.mem_va.next = self.ma.q.val();
        self.port.mem_wdata.next = self.rep.val();
        self.port.mem_wstrb.next = self.wstrb_word.val();
        self.port.rsp_valid.next = self.state.q.val() == KvState::Answer;
        self.port.rsp_status.next = self.a_status.q.val();
        self.port.rsp_arg0.next = self.a_arg0.q.val();
        // `arg1` is 0 but in a quota's refusal, where it names the quota.
        self.port.rsp_arg1.next = bit_cast::<64, 8>(self.a_quota.q.val());
        self.port.rsp_read.next = self.a_read.q.val();
        self.port.rsp_read_own.next = true;
        self.port.rsp_read_va.next = self.a_va.q.val();
        self.port.rsp_read_len.next = self.a_len.q.val();
        self.kv_port.rsp_record.next = self.a_record.q.val();
        self.kv_port.rsp_replay.next = self.a_replay.q.val();
        self.kv_port.once_valid.next = self.state.q.val() == KvState::Once;
        self.fail.next = false;
        self.fail_status.next = self.st_unmapped.val();
        self.ans.next = false;
        self.ans_hit.next = false;
        match self.state.q.val() {
            KvState::Idle => {
                if self.port.req_valid.val() {
                    self.op_is_get.d.next = self.kv_port.req_op.val() == self.op_get.val();
                    self.op_is_put.d.next = self.kv_port.req_op.val() == self.op_put.val();
                    self.op_is_delete.d.next = self.kv_port.req_op.val() == self.op_delete.val();
                    self.owner.d.next = self.kv_port.req_pid.val();
                    self.plen.d.next = self.kv_port.req_pay_len.val();
                    self.hdr_zero.d.next = self.checks.hdr_zero.val();
                    self.hdr_len.d.next = self.checks.hdr_len.val();
                    self.pay_done.d.next = self.kv_port.req_pay_len.val() == 0;
                    self.b1lo.d.next = 0.into();
                    self.cvalid.d.next = false;
                    self.found.d.next = false;
                    self.a_read.d.next = false;
                    self.a_record.d.next = false;
                    self.a_replay.d.next = false;
                    self.a_quota.d.next = 0.into();
                    self.count_pass.d.next = false;
                    if !self.checks.op_ok.val() {
                        self.fail.next = true;
                        self.fail_status.next = self.st_unsupported.val();
                    } else if self.kv_port.req_pay_len.val() == 0 {
                        self.fail.next = true;
                        self.fail_status.next = self.st_bad.val();
                    } else {
                        self.state.d.next = KvState::Beat0;
                    }
                }
            }
            KvState::Beat0 => {
                self.port.pay_ready.next = true;
                if self.kv_port.pay_valid.val() {
                    self.b0.d.next = self.kv_port.pay_data.val();
                    self.pay_done.d.next = self.kv_port.pay_last.val();
                    self.state.d.next = KvState::Sizes;
                }
            }
            KvState::Sizes => {
                self.state.d.next = KvState::Check;
            }
            KvState::Check => {
                if !(self.hdr_zero.q.val()
                    & self.hdr_len.q.val()
                    & self.checks.body_ok.val()
                    & self.checks.bounds_ok.val())
                {
                    self.fail.next = true;
                    self.fail_status.next = self.st_bad.val();
                } else if self.kv_port.cfg_status.val() != self.st_ok.val() {
                    self.fail.next = true;
                    self.fail_status.next = self.kv_port.cfg_status.val();
                } else if !self.op_is_get.q.val() {
                    // A put or delete: the idempotence ring first.
                    self.state.d.next = KvState::Once;
                } else if self.checks.key_long.val() {
                    self.state.d.next = KvState::Peek;
                } else {
                    self.state.d.next = KvState::Start;
                }
            }
            KvState::Once => {
                if self.kv_port.once_done.val() {
                    if self.kv_port.once_hit.val() {
                        // A retry: the recorded answer, nothing executes.
                        self.a_status.d.next = self.kv_port.once_status.val();
                        self.a_arg0.d.next = self.kv_port.once_value.val();
                        self.a_replay.d.next = true;
                        self.state.d.next = KvState::Drain;
                    } else if self.kv_port.once_quota.val() {
                        // The caller holds its share of the ring: refused like any error
                        // (the request's header with the status), nothing recorded.
                        self.fail.next = true;
                        self.fail_status.next = self.st_quota_exceeded.val();
                        self.a_quota.d.next = self.quota_ring_share.val();
                    } else if self.kv_port.once_stranger.val() {
                        // The caller's client id is not its RAS's member: denied.
                        self.a_status.d.next = self.st_denied.val();
                        self.a_arg0.d.next = 0.into();
                        self.a_replay.d.next = true;
                        self.state.d.next = KvState::Drain;
                    } else {
                        // Executed: its answer is recorded, whatever it is.
                        self.a_record.d.next = true;
                        if self.checks.key_long.val() {
                            self.state.d.next = KvState::Peek;
                        } else {
                            self.state.d.next = KvState::Start;
                        }
                    }
                }
            }
            KvState::Peek => {
                if self.kv_port.pay_valid.val() {
                    self.b1lo.d.next = self.kv_port.pay_data.val().get_bits::<32>(0);
                    self.state.d.next = KvState::Start;
                }
            }
            KvState::Start => {
                self.khash.start.next = true;
                self.ma.d.next = self.words.sb_magic.val();
                self.ret.d.next = KvState::MagicChk;
                self.state.d.next = KvState::Rd;
            }
            KvState::MagicChk => {
                if self.cw.q.val() != self.c_magic.val() {
                    self.fail.next = true;
                } else {
                    self.state.d.next = KvState::HashWait;
                }
            }
            KvState::HashWait => {
                // (`hash_ready` is at least two cycles past Start's `khash.start` here.)
                if self.hash_ready.q.val() {
                    self.head.d.next = self.words.head.val();
                    self.link.d.next = self.words.head.val();
                    self.hops.d.next = 0.into();
                    self.ma.d.next = self.words.head.val();
                    self.ret.d.next = KvState::LinkChk;
                    self.state.d.next = KvState::Rd;
                }
            }
            KvState::LinkChk => {
                self.cand.d.next = self.cw.q.val();
                self.ret.d.next = KvState::LinkUse;
                self.state.d.next = KvState::Cand1;
            }
            KvState::Cand1 => {
                self.state.d.next = KvState::Cand2;
            }
            KvState::Cand2 => {
                self.state.d.next = KvState::Cand3;
            }
            KvState::Cand3 => {
                self.state.d.next = KvState::Cand4;
            }
            KvState::Cand4 => {
                self.state.d.next = self.ret.q.val();
            }
            KvState::LinkUse => {
                if self.cand_zero.q.val() {
                    self.state.d.next = KvState::NotFound;
                } else if !self.slots.ok.val() {
                    self.fail.next = true;
                } else {
                    self.at.d.next = self.cand.q.val();
                    self.ma.d.next = self.cand.q.val();
                    self.ret.d.next = KvState::HdrNext;
                    self.state.d.next = KvState::Rd;
                }
            }
            KvState::HdrNext => {
                self.hnext.d.next = self.cw.q.val();
                self.ma.d.next = self.at_meta_pa.q.val();
                self.ret.d.next = KvState::HdrMeta;
                self.state.d.next = KvState::Rd;
            }
            KvState::HdrMeta => {
                self.rvlen.d.next = self.m_vlen.val();
                if self.meta_bad.q.val() {
                    self.fail.next = true;
                } else if self.meta_match.q.val() {
                    self.kw.d.next = 0.into();
                    self.ma.d.next = self.at_key_pa.q.val();
                    self.ret.d.next = KvState::KeyChk;
                    self.state.d.next = KvState::Rd;
                } else {
                    self.state.d.next = KvState::Next;
                }
            }
            KvState::KeyChk => {
                if ((self.cw.q.val() ^ self.kword.q.val()) & self.kmask.q.val()) != 0 {
                    self.state.d.next = KvState::Next;
                } else if self.kword_last.q.val() {
                    self.state.d.next = KvState::Found;
                } else {
                    self.kw.d.next = self.kw.q.val() + 1;
                    self.ma.d.next = self.ma_next_pa.q.val();
                    self.ret.d.next = KvState::KeyChk;
                    self.state.d.next = KvState::Rd;
                }
            }
            KvState::Next => {
                // At most records + 1 links: a longer chain is a cycle.
                if self.hops.q.val() == bit_cast::<33, 32>(self.kv_port.cfg_records.val()) {
                    self.fail.next = true;
                } else {
                    self.hops.d.next = self.hops.q.val() + 1;
                    self.link.d.next = self.at.q.val();
                    self.ma.d.next = self.at.q.val();
                    self.ret.d.next = KvState::LinkChk;
                    self.state.d.next = KvState::Rd;
                }
            }
            KvState::Found => {
                self.found.d.next = true;
                if self.op_is_get.q.val() {
                    self.ans.next = true;
                    self.ans_hit.next = true;
                    self.a_read.d.next = self.rvlen.q.val() != 0;
                    self.a_va.d.next =
                        self.at_key_pa.q.val() + bit_cast::<64, 16>(self.checks.klen.val());
                    self.a_len.d.next = bit_cast::<12, 11>(self.rvlen.q.val());
                } else if self.op_is_delete.q.val() {
                    self.state.d.next = KvState::Unlink;
                } else {
                    self.state.d.next = KvState::Take;
                }
            }
            KvState::NotFound => {
                if self.op_is_put.q.val() {
                    self.ma.d.next = self.words.sb_live.val();
                    self.ret.d.next = KvState::LiveChk;
                    self.state.d.next = KvState::Rd;
                } else {
                    self.ans.next = true;
                }
            }
            KvState::LiveChk => {
                // One slot stays spare for replacements: at most records - 1 keys.
                // (`cw + 1 >= records` with a 64-bit wrap, without the add in this cycle.)
                if self.words.rec_zero.val()
                    | (self.cw.q.val() != self.ones64.val())
                        & (self.cw.q.val() >= self.words.rec_m1.val())
                {
                    self.fail.next = true;
                    self.fail_status.next = self.st_oom.val();
                } else {
                    self.ma.d.next = self.words.sb_quota.val();
                    self.ret.d.next = KvState::QuotaGot;
                    self.state.d.next = KvState::Rd;
                }
            }
            KvState::QuotaGot => {
                self.quota_q.d.next = self.cw.q.val();
                self.quota_on.d.next = self.cw.q.val() != 0;
                self.ma.d.next = self.words.count.val();
                self.ret.d.next = KvState::CntCmp;
                self.state.d.next = KvState::Rd;
            }
            KvState::CntCmp => {
                self.state.d.next = KvState::CntChk;
            }
            KvState::CntChk => {
                // The owner holds its limit: refused, nothing written, nothing recorded (a
                // retry runs again).
                if self.cnt_over.q.val() {
                    self.fail.next = true;
                    self.fail_status.next = self.st_quota_exceeded.val();
                    self.a_quota.d.next = self.quota_kv_records.val();
                    self.a_record.d.next = false;
                } else {
                    self.state.d.next = KvState::Take;
                }
            }
            KvState::Take => {
                self.ma.d.next = self.words.sb_free.val();
                self.ret.d.next = KvState::FreeChk;
                self.state.d.next = KvState::Rd;
            }
            KvState::FreeChk => {
                self.cand.d.next = self.cw.q.val();
                self.ret.d.next = KvState::FreeUse;
                self.state.d.next = KvState::Cand1;
            }
            KvState::FreeUse => {
                if self.cand_zero.q.val() {
                    self.ma.d.next = self.words.sb_hw.val();
                    self.ret.d.next = KvState::HwChk;
                    self.state.d.next = KvState::Rd;
                } else if !self.slots.ok.val() {
                    self.fail.next = true;
                } else {
                    self.slot.d.next = self.cand.q.val();
                    self.ma.d.next = self.cand.q.val();
                    self.ret.d.next = KvState::FreeNext;
                    self.state.d.next = KvState::Rd;
                }
            }
            KvState::FreeNext => {
                self.wd.d.next = self.cw.q.val();
                self.ma.d.next = self.words.sb_free.val();
                self.ret.d.next = KvState::Prev;
                self.state.d.next = KvState::Wr;
            }
            KvState::HwChk => {
                self.wd.d.next = self.cw.q.val() + 1;
                self.ma.d.next = self.words.sb_hw.val();
                self.state.d.next = KvState::HwSlot;
            }
            KvState::HwSlot => {
                // The mark's checks and slot, registered from `cw` in HwChk.
                if self.hw_full.q.val() {
                    self.fail.next = true;
                    self.fail_status.next = self.st_oom.val();
                } else {
                    self.slot.d.next = self.hw_slot.q.val();
                    self.ret.d.next = KvState::Prev;
                    self.state.d.next = KvState::Wr;
                }
            }
            KvState::Prev => {
                if self.found.q.val() {
                    self.wd.d.next = self.hnext.q.val();
                    self.state.d.next = KvState::HdrW0;
                } else {
                    self.link.d.next = self.head.q.val();
                    self.ma.d.next = self.head.q.val();
                    self.ret.d.next = KvState::HeadNext;
                    self.state.d.next = KvState::Rd;
                }
            }
            KvState::HeadNext => {
                self.wd.d.next = self.cw.q.val();
                self.state.d.next = KvState::HdrW0;
            }
            KvState::HdrW0 => {
                self.ma.d.next = self.slot.q.val();
                self.ret.d.next = KvState::HdrW1;
                self.state.d.next = KvState::Wr;
            }
            KvState::HdrW1 => {
                self.ma.d.next = self.slot_meta_pa.q.val();
                self.wd.d.next = bit_cast::<64, 16>(self.owner.q.val())
                    | (bit_cast::<64, 16>(self.checks.klen.val()) << 16)
                    | (bit_cast::<64, 16>(self.checks.vlen.val()) << 32);
                self.bj.d.next = 0.into();
                self.bd.d.next = self.body_at.val().get_bits::<6>(0);
                self.bva.d.next = bit_cast::<64, 58>(self.body_at.val().get_bits::<58>(6)) << 6;
                self.ret.d.next = KvState::BLoad;
                self.state.d.next = KvState::Wr;
            }
            KvState::BLoad => {
                // `ma` is the block's address in `BWrite` (`mem_va` is `ma` but in `Wr`).
                self.ma.d.next = self.bva.q.val();
                if self.bj.q.val() == 0 {
                    self.prev.d.next = 0.into();
                    self.cur.d.next = self.b0.q.val();
                    self.state.d.next = KvState::BWrite;
                } else if self.pay_done.q.val() {
                    self.prev.d.next = self.cur.q.val();
                    self.cur.d.next = 0.into();
                    self.state.d.next = KvState::BWrite;
                } else {
                    self.port.pay_ready.next = true;
                    if self.kv_port.pay_valid.val() {
                        self.prev.d.next = self.cur.q.val();
                        self.cur.d.next = self.kv_port.pay_data.val();
                        self.pay_done.d.next = self.kv_port.pay_last.val();
                        self.state.d.next = KvState::BWrite;
                    }
                }
            }
            KvState::BWrite => {
                self.port.mem_wdata.next = self.blocks.data.val();
                self.port.mem_wstrb.next = self.blocks.strobe.val();
                // No record byte in this block (its lane window is empty: `strobe` is zero),
                // registered a cycle ahead (`blk_empty`).
                if self.blocks.empty.val() {
                    self.state.d.next = KvState::BNext;
                } else {
                    self.port.mem_valid.next = true;
                    self.port.mem_write.next = true;
                    if self.port.mem_ready.val() {
                        self.state.d.next = KvState::BWait;
                    }
                }
            }
            KvState::BWait => {
                if self.port.mem_done.val() {
                    if self.port.mem_status.val() != self.st_ok.val() {
                        self.fail.next = true;
                        self.fail_status.next = self.port.mem_status.val();
                    } else {
                        if self.ctag.q.val() == self.bva.q.val().get_bits::<58>(6) {
                            self.cvalid.d.next = false;
                        }
                        self.state.d.next = KvState::BNext;
                    }
                }
            }
            KvState::BNext => {
                if self.bj.q.val() == self.blocks.jlast.val() {
                    self.state.d.next = KvState::Commit;
                } else {
                    self.bj.d.next = self.bj.q.val() + 1;
                    self.bva.d.next = self.bva.q.val() + 64;
                    self.state.d.next = KvState::BLoad;
                }
            }
            KvState::Commit => {
                self.ma.d.next = self.link.q.val();
                self.wd.d.next = self.slot.q.val();
                self.ret.d.next = KvState::AfterCommit;
                self.state.d.next = KvState::Wr;
            }
            KvState::AfterCommit => {
                if self.found.q.val() {
                    self.state.d.next = KvState::Give;
                } else {
                    self.ma.d.next = self.words.sb_live.val();
                    self.ret.d.next = KvState::NewLive;
                    self.state.d.next = KvState::Rd;
                }
            }
            KvState::NewLive => {
                // The live count, then (`count_pass`) the owner's: the same increment, so the
                // word written has no more sources than it had without the quota.
                self.wd.d.next = self.cw.q.val() + 1;
                self.ret.d.next = KvState::CntUp;
                if self.count_pass.q.val() {
                    self.ret.d.next = KvState::AnsMiss;
                }
                self.state.d.next = KvState::Wr;
            }
            KvState::CntUp => {
                self.count_pass.d.next = true;
                self.ma.d.next = self.words.count.val();
                self.ret.d.next = KvState::NewLive;
                self.state.d.next = KvState::Rd;
            }
            KvState::Unlink => {
                self.ma.d.next = self.link.q.val();
                self.wd.d.next = self.hnext.q.val();
                self.ret.d.next = KvState::Give;
                self.state.d.next = KvState::Wr;
            }
            KvState::Give => {
                self.ma.d.next = self.words.sb_free.val();
                self.ret.d.next = KvState::Give1;
                self.state.d.next = KvState::Rd;
            }
            KvState::Give1 => {
                self.wd.d.next = self.cw.q.val();
                self.ma.d.next = self.at.q.val();
                self.ret.d.next = KvState::Give2;
                self.state.d.next = KvState::Wr;
            }
            KvState::Give2 => {
                self.wd.d.next = 0.into();
                self.ma.d.next = self.at_meta_pa.q.val();
                self.ret.d.next = KvState::Give3;
                self.state.d.next = KvState::Wr;
            }
            KvState::Give3 => {
                self.wd.d.next = self.at.q.val();
                self.ma.d.next = self.words.sb_free.val();
                self.ret.d.next = KvState::Give4;
                self.state.d.next = KvState::Wr;
            }
            KvState::Give4 => {
                if self.op_is_delete.q.val() {
                    self.ma.d.next = self.words.sb_live.val();
                    self.ret.d.next = KvState::DelLive;
                    self.state.d.next = KvState::Rd;
                } else {
                    self.state.d.next = KvState::AnsHit;
                }
            }
            KvState::DelLive => {
                self.wd.d.next = 0.into();
                if self.cw.q.val() != 0 {
                    self.wd.d.next = self.cw.q.val() - 1;
                }
                // The live count, then (`count_pass`) the owner's, as in `NewLive`.
                self.ret.d.next = KvState::CntDel;
                if self.count_pass.q.val() {
                    self.ret.d.next = KvState::AnsHit;
                }
                self.state.d.next = KvState::Wr;
            }
            KvState::CntDel => {
                self.count_pass.d.next = true;
                self.ma.d.next = self.words.count.val();
                self.ret.d.next = KvState::DelLive;
                self.state.d.next = KvState::Rd;
            }
            KvState::AnsHit => {
                self.ans.next = true;
                self.ans_hit.next = true;
            }
            KvState::AnsMiss => {
                self.ans.next = true;
            }
            KvState::Rd => {
                if self.chit_q.q.val() {
                    self.state.d.next = self.ret.q.val();
                } else {
                    self.port.mem_valid.next = true;
                    if self.port.mem_ready.val() {
                        self.state.d.next = KvState::RdWait;
                    }
                }
            }
            KvState::RdWait => {
                if self.port.mem_done.val() {
                    if self.port.mem_status.val() != self.st_ok.val() {
                        self.fail.next = true;
                        self.fail_status.next = self.port.mem_status.val();
                    } else {
                        self.cache.d.next = self.port.mem_data.val();
                        self.ctag.d.next = self.ma.q.val().get_bits::<58>(6);
                        self.cvalid.d.next = true;
                        self.state.d.next = self.ret.q.val();
                    }
                }
            }
            KvState::Wr => {
                self.port.mem_va.next = bit_cast::<64, 58>(self.ma.q.val().get_bits::<58>(6)) << 6;
                self.port.mem_valid.next = true;
                self.port.mem_write.next = true;
                if self.port.mem_ready.val() {
                    self.state.d.next = KvState::WrWait;
                }
            }
            KvState::WrWait => {
                if self.port.mem_done.val() {
                    if self.port.mem_status.val() != self.st_ok.val() {
                        self.fail.next = true;
                        self.fail_status.next = self.port.mem_status.val();
                    } else {
                        if self.chit.val() {
                            self.cache.d.next = (self.cache.q.val() & !self.wmask.val())
                                | (self.rep.val() & self.wmask.val());
                        }
                        self.state.d.next = self.ret.q.val();
                    }
                }
            }
            KvState::Fail => {
                self.a_status.d.next = self.fail_q.q.val();
                self.a_arg0.d.next = 0.into();
                self.a_read.d.next = false;
                self.state.d.next = KvState::Drain;
            }
            KvState::Drain => {
                self.port.pay_ready.next = !self.pay_done.q.val();
                if self.pay_done.q.val() {
                    self.state.d.next = KvState::Answer;
                } else if self.kv_port.pay_valid.val() & self.kv_port.pay_last.val() {
                    self.pay_done.d.next = true;
                }
            }
            KvState::Answer => {
                if self.port.rsp_ready.val() {
                    self.state.d.next = KvState::Idle;
                }
            }
        }
        if self.fail.val() {
            self.fail_q.d.next = self.fail_status.val();
            self.state.d.next = KvState::Fail;
        }
        if self.ans.val() {
            self.a_status.d.next = self.st_ok.val();
            self.a_arg0.d.next = self.c_miss.val();
            if self.ans_hit.val() {
                self.a_arg0.d.next = self.c_hit.val();
            }
            self.state.d.next = KvState::Drain;
        }
        if self.reset.val() {
            self.state.d.next = KvState::Idle;
        }
    }
}

crate::impl_clocked!(ClioKv);
