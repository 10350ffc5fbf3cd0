//! The translate-ahead stage's behaviour, cycle by cycle: its `update`. The ports, registers and
//! their meaning are in `translate_ahead.rs`.

use super::*;

impl Logic for TranslateAhead {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            ptr,
            looked,
            e_ok,
            s_rw,
            s_read_ok,
            s_write_ok,
            s_write_in_va,
            s_parse_kv,
            s_kv_op,
            s_append_ok,
            s_atomic_ok,
            s_chase_ok,
            chk_in,
            chk_seg,
            lk_key_pid,
            lk_key_vpn,
            use_key_pid,
            use_key_vpn,
            use_key_len,
            chk_slot,
            chk_hdr,
            res_in,
            res_slot,
            res_read_form,
            res_rd_terms,
            res_wr_terms,
            res_write_ok,
            res_parse_kv,
            res_kv_op,
            res_append_ok,
            res_atomic_ok,
            res_chase_ok,
            psize,
            pcmask,
            pmask,
            p1_valid,
            p1_slot,
            p1_need,
            p1_fits,
            p1_off,
            p2_valid,
            p2_slot,
            p2_need,
            p2_fits,
            p2_off,
            h_pid,
            h_va,
            h_gen,
            s_hok
        );
        clock!(self, clock, hash, e_pa, s_va, s_sel, s_len12, s_hash);
        self.hash.reset.next = self.reset.val();
        for k in 0..4 {
            self.s_pid[k].clock.next = self.clock.val();
            self.s_vpn[k].clock.next = self.clock.val();
            self.s_hgen[k].clock.next = self.clock.val();
            self.s_hgen[k].d.next = self.s_hgen[k].q.val();
        }
        // ---- An incoming header: what its lookup needs, kept for its slot.
        self.dec.hdr.next = bit_cast::<384, 512>(self.hdr.data.val());
        self.dec.kv_en.next = false;
        self.chk_in.d.next = self.hdr.valid.val() & !self.reset.val();
        self.chk_slot.d.next = self.hdr.slot.val();
        self.chk_hdr.d.next = bit_cast::<384, 512>(self.hdr.data.val());
        self.dec_chk.hdr.next = self.chk_hdr.q.val();
        self.dec_chk.kv_en.next = true;
        self.opcode.next = self.dec.fields.opcode.val();
        self.is_write.next = self.opcode.val() == self.op_write.val();
        self.is_rw.next = self.is_write.val() | (self.opcode.val() == self.op_read.val());
        // The packet's first byte (a write's segment `pkt_index` KiB in), and its length.
        self.va.next = self.dec.data_va.val();
        self.len.next = self.dec.fields.total_len.val();
        if self.len.val() > self.max_payload.val() {
            self.len.next = self.max_payload.val();
        }
        self.need.next = self.need_read.val();
        if self.is_write.val() {
            self.len.next = bit_cast::<32, 16>(self.dec.fields.payload_len.val());
            self.need.next = self.need_write.val();
        }
        self.psize.d.next = bit_cast::<64, 1>(1.into()) << self.piece_shift.val();
        self.pcmask.d.next = bit_cast::<32, 64>(!(self.ones.val() << self.piece_shift.val()));
        self.pmask.d.next = !(self.ones.val() << self.page_shift.val());
        self.off.next = self.va.val() & self.pmask.q.val();
        self.hdr_vpn.next = bit_cast::<36, 64>(self.dec.fields.va.val() >> self.page_shift.val());
        self.seg.next = self.is_write.val() & (self.dec.fields.pkt_index.val() != 0);
        self.chk_seg.d.next = self.seg.val();
        // A write segment's page, the cycle after its header (the slot's `hdr_in` below wins,
        // but a slot's next header cannot come the cycle after: its frame is still in it).
        self.chk_vpn.next = bit_cast::<36, 64>(self.h_va.q.val() >> self.page_shift.val());
        self.chk_hold.next = 0.into();
        if self.chk_in.q.val() & self.chk_seg.q.val() {
            self.chk_hold.next = bit_cast::<4, 1>(1.into()) << self.chk_slot.q.val();
        }
        for k in 0..4 {
            self.nx_pid[k].next = self.s_pid[k].q.val();
            self.nx_vpn[k].next = self.s_vpn[k].q.val();
            if self.chk_hold.val().get_bit(k) {
                self.nx_vpn[k].next = self.chk_vpn.val();
            }
            if self.hdr.valid.val() & (self.hdr.slot.val() == k.to_bits::<2>()) {
                self.nx_pid[k].next = self.dec.fields.pid.val();
                self.nx_vpn[k].next = self.hdr_vpn.val();
            }
            self.s_pid[k].d.next = self.nx_pid[k].val();
            self.s_vpn[k].d.next = self.nx_vpn[k].val();
        }
        self.h_pid.d.next = self.dec.fields.pid.val();
        self.h_va.d.next = self.va.val();
        // The header's fields into its slot's words of the LUT RAMs.
        self.s_va.write_address.next = self.hdr.slot.val();
        self.s_va.write_data.next = self.va.val();
        self.s_va.write_enable.next = self.hdr.valid.val();
        self.s_sel.write_address.next = self.hdr.slot.val();
        self.s_sel.write_data.next = bit_cast::<98, 2>(self.need.val())
            | (bit_cast::<98, 64>(self.off.val()) << 2)
            | (bit_cast::<98, 32>(self.len.val()) << 66);
        self.s_sel.write_enable.next = self.hdr.valid.val();
        self.s_len12.write_address.next = self.hdr.slot.val();
        self.s_len12.write_data.next = self.len.val().get_bits::<12>(0);
        self.s_len12.write_enable.next = self.hdr.valid.val();
        if self.hdr.valid.val() {
            for k in 0..4 {
                if self.hdr.slot.val() == k.to_bits::<2>() {
                    self.s_hgen[k].d.next = self.s_hgen[k].q.val() + 1;
                    self.h_gen.d.next = self.s_hgen[k].q.val() + 1;
                }
            }
            if self.is_rw.val() {
                self.s_rw.d.next =
                    self.s_rw.q.val() | (bit_cast::<4, 1>(1.into()) << self.hdr.slot.val());
            } else {
                self.s_rw.d.next =
                    self.s_rw.q.val() & !(bit_cast::<4, 1>(1.into()) << self.hdr.slot.val());
            }
        }
        // The checks, registered with their slot; then the per-slot bits: the other slots' as
        // they are, the result stage's slot's from its results.
        self.res_in.d.next = self.chk_in.q.val() & !self.reset.val();
        self.res_slot.d.next = self.chk_slot.q.val();
        self.res_read_form.d.next = self.dec_chk.read_form.val();
        self.res_rd_terms.d.next = self.dec_chk.rd_terms.val();
        self.res_wr_terms.d.next = self.dec_chk.wr_terms.val();
        self.res_write_ok.d.next = self.dec_chk.write_ok.val();
        self.res_parse_kv.d.next = self.dec_chk.parse_ok.val();
        self.res_kv_op.d.next = self.dec_chk.kv.val();
        self.res_append_ok.d.next = self.dec_chk.append_ok.val();
        self.res_atomic_ok.d.next = self.dec_chk.atomic_ok.val();
        self.res_chase_ok.d.next = self.dec_chk.chase_ok.val();
        self.rd_rule.terms.next = self.res_rd_terms.q.val();
        self.wr_rule.terms.next = self.res_wr_terms.q.val();
        self.res_keep.next = !(bit_cast::<4, 1>(1.into()) << self.res_slot.q.val());
        if self.res_in.q.val() {
            self.s_read_ok.d.next = (self.s_read_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(
                    (self.res_read_form.q.val() & self.rd_rule.in_va.val()).into(),
                ) << self.res_slot.q.val());
            self.s_write_ok.d.next = (self.s_write_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_write_ok.q.val().into()) << self.res_slot.q.val());
            self.s_write_in_va.d.next = (self.s_write_in_va.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.wr_rule.in_va.val().into()) << self.res_slot.q.val());
            self.s_parse_kv.d.next = (self.s_parse_kv.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_parse_kv.q.val().into()) << self.res_slot.q.val());
            self.s_kv_op.d.next = (self.s_kv_op.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_kv_op.q.val().into()) << self.res_slot.q.val());
            self.s_append_ok.d.next = (self.s_append_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_append_ok.q.val().into()) << self.res_slot.q.val());
            self.s_atomic_ok.d.next = (self.s_atomic_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_atomic_ok.q.val().into()) << self.res_slot.q.val());
            self.s_chase_ok.d.next = (self.s_chase_ok.q.val() & self.res_keep.val())
                | (bit_cast::<4, 1>(self.res_chase_ok.q.val().into()) << self.res_slot.q.val());
        }
        // ---- The page hash: the header's pid and VPN the cycle after, its result kept for
        // the slot unless the slot has had another header since.
        self.hash.in_valid.next = self.chk_in.q.val();
        self.hash.in_pid.next = self.h_pid.q.val();
        self.hash.in_vpn.next = self.chk_vpn.val();
        self.hash.in_ctx.next =
            (bit_cast::<4, 2>(self.h_gen.q.val()) << 2) | bit_cast::<4, 2>(self.chk_slot.q.val());
        self.hok_kept.next = self.s_hok.q.val();
        if self.hdr.valid.val() {
            self.hok_kept.next =
                self.s_hok.q.val() & !(bit_cast::<4, 1>(1.into()) << self.hdr.slot.val());
        }
        // The context is the tag: slot, generation.
        for k in 0..4 {
            self.hok_set[k].next = self.hash.out_valid.val()
                & (self.hash.out_ctx.val().get_bits::<2>(0) == k.to_bits::<2>())
                & (self.hash.out_ctx.val().get_bits::<2>(2) == self.s_hgen[k].q.val());
        }
        self.hok_any.next = self.hok_set[0].val()
            | self.hok_set[1].val()
            | self.hok_set[2].val()
            | self.hok_set[3].val();
        self.s_hash.write_address.next = self.hash.out_ctx.val().get_bits::<2>(0);
        self.s_hash.write_data.next = self.hash.out_hash.val();
        self.s_hash.write_enable.next = self.hok_any.val();
        self.s_hok.d.next = (self.hok_kept.val()
            | bit_cast::<4, 1>(self.hok_set[0].val().into())
            | (bit_cast::<4, 1>(self.hok_set[1].val().into()) << 1)
            | (bit_cast::<4, 1>(self.hok_set[2].val().into()) << 2)
            | (bit_cast::<4, 1>(self.hok_set[3].val().into()) << 3))
            & !self.freed.val();
        if self.reset.val() {
            self.s_hok.d.next = 0.into();
        }

        // ---- The frame at the pointer: its kept fields.
        self.s_sel.read_address.next = self.ptr.q.val();
        self.sel_need.next = self.s_sel.read_data.val().get_bits::<2>(0);
        self.sel_off.next = self.s_sel.read_data.val().get_bits::<64>(2);
        self.sel_len.next = self.s_sel.read_data.val().get_bits::<32>(66);
        self.lk.pid.next = self.lk_key_pid.q.val();
        self.lk.vpn.next = self.lk_key_vpn.q.val();

        // ---- Walk the slots: look up, skip, or wait.
        self.at.next = bit_cast::<4, 1>(1.into()) << self.ptr.q.val();
        self.kill.next = self.tlb_update.val() | self.reset.val();
        self.skip.next = (self.headed.val() & self.at.val()).any()
            & ((self.queue.taken.val() & self.at.val()).any()
                | (self.looked.q.val() & self.at.val()).any()
                | !(self.s_rw.q.val() & self.at.val()).any());
        self.issue.next = (self.headed.val() & self.at.val()).any()
            & !self.skip.val()
            & !(self.chk_hold.val() & self.at.val()).any()
            & self.port_free.val()
            & !self.kill.val();
        self.lk.valid.next = self.issue.val();
        self.looked_n.next = self.looked.q.val();
        if self.issue.val() {
            self.looked_n.next = self.looked.q.val() | self.at.val();
        }
        self.p1_valid.d.next = self.issue.val();
        self.p1_slot.d.next = self.ptr.q.val();
        self.p1_need.d.next = self.sel_need.val();
        // `poff + len <= psize` (the offset in the piece) as one three-operand sum: `poff + len
        // + !psize` is `poff + len - psize - 1` (35 bits; the piece is at most 4 KiB, the
        // offset below it, the length at most MAX_PAYLOAD), negative exactly when the bytes fit.
        self.fits_sum.next =
            bit_cast::<35, 32>(self.sel_off.val().get_bits::<32>(0) & self.pcmask.q.val())
                + bit_cast::<35, 32>(self.sel_len.val())
                + !bit_cast::<35, 33>(self.psize.q.val().get_bits::<33>(0));
        self.p1_fits.d.next = (self.fits_sum.val() & self.sign35.val()) != 0;
        self.p1_off.d.next = self.sel_off.val();
        self.p2_valid.d.next = self.p1_valid.q.val();
        self.p2_slot.d.next = self.p1_slot.q.val();
        self.p2_need.d.next = self.p1_need.q.val();
        self.p2_fits.d.next = self.p1_fits.q.val();
        self.p2_off.d.next = self.p1_off.q.val();

        // ---- Keep the result of the lookup issued two cycles ago.
        self.p2_at.next = bit_cast::<4, 1>(1.into()) << self.p2_slot.q.val();
        self.e_ok_n.next = self.e_ok.q.val();
        if self.p2_valid.q.val() {
            if self.res.hit.val()
                & !self.res.alloc.val()
                & ((self.res.perms.val() & self.p2_need.q.val()) == self.p2_need.q.val())
                & self.p2_fits.q.val()
            {
                self.e_ok_n.next = self.e_ok.q.val() | self.p2_at.val();
            } else {
                self.e_ok_n.next = self.e_ok.q.val() & !self.p2_at.val();
            }
        }
        self.e_pa.write_address.next = self.p2_slot.q.val();
        self.e_pa.write_data.next =
            (bit_cast::<64, 40>(self.res.pfn.val()) << self.page_shift.val()) | self.p2_off.q.val();
        self.e_pa.write_enable.next = self.p2_valid.q.val();

        // ---- Forget: a freed slot's entry (and a lookup of it on its way); everything on a
        // TLB change.
        self.p1_at.next = bit_cast::<4, 1>(1.into()) << self.p1_slot.q.val();
        if (self.freed.val() & self.p1_at.val()).any() {
            self.p2_valid.d.next = false;
        }
        self.looked.d.next = self.looked_n.val() & !self.freed.val();
        self.e_ok.d.next = self.e_ok_n.val() & !self.freed.val();
        if self.kill.val() {
            self.looked.d.next = 0.into();
            self.e_ok.d.next = 0.into();
            self.p1_valid.d.next = false;
            self.p2_valid.d.next = false;
        }
        // The pointer, and the key of the slot it goes to (the slot's fields from the next
        // cycle on).
        self.ptr_n.next = self.ptr.q.val();
        if self.issue.val() | self.skip.val() {
            self.ptr_n.next = self.ptr.q.val() + 1;
        }
        if self.kill.val() {
            self.ptr_n.next = self.queue.head.val();
        }
        if self.reset.val() {
            self.ptr_n.next = 0.into();
        }
        self.ptr.d.next = self.ptr_n.val();
        // The key register loads the slot at `ptr_n`. Each candidate of `ptr_n` is selected from
        // the slots' registers, and what comes into that slot this cycle (a header's pid and
        // page; a write segment's page, the cycle after its header) is forwarded over it, beside
        // the pointer's decision; the decision picks one. (A select of the forwarded `nx_*` by
        // `ptr_n` put the decision in front of a 4-way 36-bit mux, 7.5 levels on the board at
        // db76bc6; selecting the forwarded `nx_*` per candidate put the header's arrival in
        // front of it, 7.5 at cd10827.)
        self.ptr_up.next = self.ptr.q.val() + 1;
        self.ptr_back.next = self.queue.head.val();
        if self.reset.val() {
            self.ptr_back.next = 0.into();
        }
        self.key_stay_pid.next = 0.into();
        self.key_stay_vpn.next = 0.into();
        self.key_up_pid.next = 0.into();
        self.key_up_vpn.next = 0.into();
        self.key_back_pid.next = 0.into();
        self.key_back_vpn.next = 0.into();
        for k in 0..4 {
            if self.ptr.q.val() == k.to_bits::<2>() {
                self.key_stay_pid.next = self.s_pid[k].q.val();
                self.key_stay_vpn.next = self.s_vpn[k].q.val();
            }
            if self.ptr_up.val() == k.to_bits::<2>() {
                self.key_up_pid.next = self.s_pid[k].q.val();
                self.key_up_vpn.next = self.s_vpn[k].q.val();
            }
            if self.ptr_back.val() == k.to_bits::<2>() {
                self.key_back_pid.next = self.s_pid[k].q.val();
                self.key_back_vpn.next = self.s_vpn[k].q.val();
            }
        }
        // The forwards, in `nx_*`'s order (the header wins).
        if self.chk_in.q.val() & self.chk_seg.q.val() {
            if self.chk_slot.q.val() == self.ptr.q.val() {
                self.key_stay_vpn.next = self.chk_vpn.val();
            }
            if self.chk_slot.q.val() == self.ptr_up.val() {
                self.key_up_vpn.next = self.chk_vpn.val();
            }
            if self.chk_slot.q.val() == self.ptr_back.val() {
                self.key_back_vpn.next = self.chk_vpn.val();
            }
        }
        if self.hdr.valid.val() {
            if self.hdr.slot.val() == self.ptr.q.val() {
                self.key_stay_pid.next = self.dec.fields.pid.val();
                self.key_stay_vpn.next = self.hdr_vpn.val();
            }
            if self.hdr.slot.val() == self.ptr_up.val() {
                self.key_up_pid.next = self.dec.fields.pid.val();
                self.key_up_vpn.next = self.hdr_vpn.val();
            }
            if self.hdr.slot.val() == self.ptr_back.val() {
                self.key_back_pid.next = self.dec.fields.pid.val();
                self.key_back_vpn.next = self.hdr_vpn.val();
            }
        }
        self.lk_key_pid.d.next = self.key_stay_pid.val();
        self.lk_key_vpn.d.next = self.key_stay_vpn.val();
        if self.issue.val() | self.skip.val() {
            self.lk_key_pid.d.next = self.key_up_pid.val();
            self.lk_key_vpn.d.next = self.key_up_vpn.val();
        }
        if self.kill.val() {
            self.lk_key_pid.d.next = self.key_back_pid.val();
            self.lk_key_vpn.d.next = self.key_back_vpn.val();
        }
        self.s_len12.read_address.next = self.queue.next_slot.val();
        self.use_key_len.d.next = self.s_len12.read_data.val();
        for k in 0..4 {
            if self.queue.next_slot.val() == k.to_bits::<2>() {
                self.use_key_pid.d.next = self.s_pid[k].q.val();
                self.use_key_vpn.d.next = self.s_vpn[k].q.val();
            }
        }

        // ---- The executor's slot.
        self.slot.ok.next = false;
        self.slot.rw.next = false;
        self.dlk.valid.next = self.slot.lookup.val();
        self.dlk.pid.next = self.use_key_pid.q.val();
        self.dlk.vpn.next = self.use_key_vpn.q.val();
        self.slot.len.next = self.use_key_len.q.val();
        self.slot.read_ok.next = false;
        self.slot.write_ok.next = false;
        self.slot.write_in_va.next = false;
        self.slot.parse_ok.next = false;
        self.slot.append_ok.next = false;
        self.slot.atomic_ok.next = false;
        self.slot.chase_ok.next = false;
        self.use_hash.ok.next = false;
        self.e_pa.read_address.next = self.queue.slot.val();
        self.s_va.read_address.next = self.queue.slot.val();
        self.s_hash.read_address.next = self.queue.slot.val();
        self.slot.pa.next = self.e_pa.read_data.val();
        self.slot.va.next = self.s_va.read_data.val();
        self.use_hash.value.next = self.s_hash.read_data.val();
        for k in 0..4 {
            if self.queue.slot.val() == k.to_bits::<2>() {
                self.slot.ok.next = self.e_ok.q.val().get_bit(k);
                self.slot.rw.next = self.s_rw.q.val().get_bit(k);
                self.slot.read_ok.next = self.s_read_ok.q.val().get_bit(k);
                self.slot.write_ok.next = self.s_write_ok.q.val().get_bit(k);
                self.slot.write_in_va.next = self.s_write_in_va.q.val().get_bit(k);
                // A Clio-KV opcode parses only while the unit is enabled (`Mat::head_ok`).
                self.slot.parse_ok.next = self.s_parse_kv.q.val().get_bit(k)
                    & (self.kv_en.val() | !self.s_kv_op.q.val().get_bit(k));
                self.slot.append_ok.next = self.s_append_ok.q.val().get_bit(k);
                self.slot.atomic_ok.next = self.s_atomic_ok.q.val().get_bit(k);
                self.slot.chase_ok.next = self.s_chase_ok.q.val().get_bit(k);
                // (Or the hash coming out for it this cycle.)
                self.use_hash.ok.next = self.s_hok.q.val().get_bit(k) | self.hok_set[k].val();
                if self.hok_set[k].val() {
                    self.use_hash.value.next = self.hash.out_hash.val();
                }
            }
        }
    }
}
