//! The slow-path rings' descriptors as the executor sees them (`proto::ring::Descriptor`, one
//! 128-byte slot): the TX descriptor it takes (`take`), held and decoded into its kind and
//! fields, and the REQUEST descriptor it hands the slow path, encoded from the request's client,
//! route and header.
//!
//! TX kinds (one flag each; an unknown kind sets none and is ignored): PTE_WRITE (its PTE is the
//! PTE writer's, decoded as it is taken), TLB_INVALIDATE (`pid`, `vpn`; `vpn_fits`: no bits
//! beyond `VPN_BITS`, else it can match nothing), FREE_PAGE (`pfn`), KEY_WRITE (`pid`, `key`,
//! `epoch`),
//! ROUTE_KEY (`key`, `secret1`), RING_SHARE (`share`), RING_OWNER (`pid`; its member as it is taken, `take_member`), KV_CONFIG (`pid`, `kv_status`, `kv_base`, `kv_buckets`,
//! `kv_records`) and REPLY (`route`, `header`, its `reply_status` and `reply_flags`: the
//! RESPONSE bit). The body's words are shared by the kinds as `proto::ring` lays them out.
//! A PTE_WRITE's body is also given as the descriptor is taken (`take_*`: the PTE writer
//! decodes and range-checks it in that cycle), and a RING_OWNER's member (`take_member`). RX descriptors: REQUEST (the request's member,
//! route and header) and PAGE_MAPPED (a fault's page and frame) are encoded here.
//! All of the ring's layout the fast path uses is in this file.

use crate::fastpath::links::{DescKind, DescTaken, KvConfig, PageMappedIn, PteDesc};
use crate::spec::{bit_of, Spec};
use clio_proto::consts::VPN_BITS;
use clio_proto::header::{field, FLAG_RESPONSE, ROUTED_HEADER_LEN};
use clio_proto::ring::{desc, desc::body, kind, DESC_BYTES};
use rust_hdl::prelude::*;

// The slot: kind u16 @0, client u16 @2 (16), route @8 (64, 32 bytes), header @40 (320, 48
// bytes; its status @42 = 336, flags @43 = 344, FLAG_RESPONSE bit 0); the body's fields
// (`proto::ring::desc::body`) where the kernels below select them: pid and bucket @88 (704),
// client, KEY_WRITE's epoch and KV status @90 (720), key, vpn, base and slot @96 (768), pfn,
// buckets and the PTE @104 (832), records and the PTE's frame word @112 (896); ROUTE_KEY's
// secret @96 and @104; RING_SHARE's share @88 (704). A field proto moves breaks the build.
const _: () = assert!(
    DESC_BYTES == 128
        && desc::KIND == 0
        && bit_of(desc::CLIENT) == 16
        && bit_of(desc::ROUTE) == 64
        && bit_of(desc::HEADER) == 320
        && ROUTED_HEADER_LEN == 48
        && bit_of(desc::HEADER + field::STATUS) == 336
        && bit_of(desc::HEADER + field::FLAGS) == 344
        && FLAG_RESPONSE == 1
        && bit_of(body::PID.start) == 704
        && body::PID.end - body::PID.start == 2
        && bit_of(body::SHARE) == 704
        && bit_of(body::BUCKET.start) == 704
        && body::BUCKET.end - body::BUCKET.start == 8
        && bit_of(body::CLIENT.start) == 720
        && body::CLIENT.end - body::CLIENT.start == 2
        && bit_of(body::EPOCH.start) == 720
        && body::EPOCH.end - body::EPOCH.start == 2
        && bit_of(body::STATUS) == 720
        && bit_of(body::KEY.start) == 768
        && body::KEY.end - body::KEY.start == 8
        && bit_of(body::VPN.start) == 768
        && bit_of(body::VPN.start) + VPN_BITS as usize == 804
        && body::VPN.end - body::VPN.start == 8
        && bit_of(body::BASE.start) == 768
        && body::BASE.end - body::BASE.start == 8
        && bit_of(body::SLOT.start) == 768
        && body::SLOT.end - body::SLOT.start == 4
        && bit_of(body::PFN.start) == 832
        && body::PFN.end - body::PFN.start == 8
        && bit_of(body::BUCKETS.start) == 832
        && body::BUCKETS.end - body::BUCKETS.start == 8
        && bit_of(body::PTE.start) == 832
        && bit_of(body::PTE.start + 8) == 896
        && bit_of(body::RECORDS.start) == 896
        && body::RECORDS.end - body::RECORDS.start == 4
        && bit_of(body::SECRET0.start) == 768
        && body::SECRET0.end - body::SECRET0.start == 8
        && bit_of(body::SECRET1.start) == 832
        && body::SECRET1.end - body::SECRET1.start == 8
);

type Kind<const V: u64> = Spec<16, V>;

/// The slow-path descriptors.
#[derive(LogicBlock, Default)]
pub struct SlowPathDesc {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Take `desc` (the TX ring's head) this cycle.
    pub take: Signal<In, Bit>,
    /// The TX ring's head descriptor, one 128-byte slot (byte k at bits 8k..).
    pub desc: Signal<In, Bits<1024>>,
    /// The descriptor's kind and invalidation fields (`SlowPathTx::desc`, joined in the top).
    pub kind: DescKind,
    /// The KV_CONFIG store, for the extend port (`Extend::cfg`, joined in the top).
    pub kv: KvConfig,
    /// The descriptor, for the executor (`Executor::desc`, joined in the top).
    pub taken: DescTaken,
    /// The PTE_WRITE fields, for the PTE writer (`PteWriter::desc`, joined in the top).
    pub pte: PteDesc,
    /// The notice's page (`Translate::notice`, joined in the top).
    pub pm: PageMappedIn,
    /// The PAGE_MAPPED descriptor, one 128-byte slot.
    pub page_mapped: Signal<Out, Bits<1024>>,
    /// A REQUEST descriptor for the request of member `req_client` along `req_route` with
    /// header bytes 0..48 `req_header` (`Header::emit_header`, never the key).
    pub req_client: Signal<In, Bits<16>>,
    /// The request's route.
    pub req_route: Signal<In, Bits<256>>,
    /// The request's header bytes 0..48.
    pub req_header: Signal<In, Bits<384>>,
    /// The REQUEST descriptor, one 128-byte slot.
    pub request: Signal<Out, Bits<1024>>,
    /// The taken descriptor.
    held: DFF<Bits<1024>>,
    /// Its kind.
    k: Signal<Local, Bits<16>>,
    kind_request: Kind<{ kind::REQUEST as u64 }>,
    kind_page_mapped: Kind<{ kind::PAGE_MAPPED as u64 }>,
    kind_reply: Kind<{ kind::REPLY as u64 }>,
    kind_pte_write: Kind<{ kind::PTE_WRITE as u64 }>,
    kind_tlb_invalidate: Kind<{ kind::TLB_INVALIDATE as u64 }>,
    kind_free_page: Kind<{ kind::FREE_PAGE as u64 }>,
    kind_key_write: Kind<{ kind::KEY_WRITE as u64 }>,
    kind_ring_owner: Kind<{ kind::RING_OWNER as u64 }>,
    kind_kv_config: Kind<{ kind::KV_CONFIG as u64 }>,
    kind_route_key: Kind<{ kind::ROUTE_KEY as u64 }>,
    kind_ring_share: Kind<{ kind::RING_SHARE as u64 }>,
}

impl Logic for SlowPathDesc {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, held);
        if self.take.val() {
            self.held.d.next = self.desc.val();
        }
        self.k.next = self.held.q.val().get_bits::<16>(0);
        self.kind.pte_write.next = self.k.val() == self.kind_pte_write.val();
        self.kind.tlb_invalidate.next = self.k.val() == self.kind_tlb_invalidate.val();
        self.kind.free_page.next = self.k.val() == self.kind_free_page.val();
        self.kind.key_write.next = self.k.val() == self.kind_key_write.val();
        self.kind.ring_owner.next = self.k.val() == self.kind_ring_owner.val();
        self.kind.route_key.next = self.k.val() == self.kind_route_key.val();
        self.kind.ring_share.next = self.k.val() == self.kind_ring_share.val();
        self.kind.kv_config.next = self.k.val() == self.kind_kv_config.val();
        self.kind.reply.next = self.k.val() == self.kind_reply.val();
        self.kind.pid.next = self.held.q.val().get_bits::<16>(704);
        self.kind.key.next = self.held.q.val().get_bits::<64>(768);
        self.kind.epoch.next = self.held.q.val().get_bits::<16>(720);
        self.kind.secret1.next = self.held.q.val().get_bits::<64>(832);
        self.kind.share.next = self.held.q.val().get_bits::<8>(704);
        self.kind.vpn.next = self.held.q.val().get_bits::<36>(768);
        self.kind.vpn_fits.next = self.held.q.val().get_bits::<28>(804) == 0;
        self.kind.pfn.next = self.held.q.val().get_bits::<40>(832);
        self.kv.status.next = self.held.q.val().get_bits::<8>(720);
        self.kv.base.next = self.held.q.val().get_bits::<64>(768);
        self.kv.buckets.next = self.held.q.val().get_bits::<64>(832);
        self.kv.records.next = self.held.q.val().get_bits::<32>(896);
        self.taken.route.next = self.held.q.val().get_bits::<256>(64);
        self.taken.header.next = self.held.q.val().get_bits::<384>(320);
        self.taken.reply_status.next = self.held.q.val().get_bits::<8>(336);
        self.taken.reply_flags.next = bit_cast::<8, 1>(self.held.q.val().get_bits::<1>(344));
        self.pte.bucket.next = self.desc.val().get_bits::<64>(704);
        self.pte.slot.next = self.desc.val().get_bits::<32>(768);
        self.pte.word0.next = self.desc.val().get_bits::<64>(832);
        self.pte.pfn.next = self.desc.val().get_bits::<40>(896);
        self.taken.member.next = (bit_cast::<32, 16>(self.desc.val().get_bits::<16>(704)) << 16)
            | bit_cast::<32, 16>(self.desc.val().get_bits::<16>(720));
        self.page_mapped.next = bit_cast::<1024, 16>(self.kind_page_mapped.val())
            | (bit_cast::<1024, 16>(self.pm.pid.val()) << 704)
            | (bit_cast::<1024, 36>(self.pm.vpn.val()) << 768)
            | (bit_cast::<1024, 40>(self.pm.pfn.val()) << 832);
        self.request.next = bit_cast::<1024, 16>(self.kind_request.val())
            | (bit_cast::<1024, 16>(self.req_client.val()) << 16)
            | (bit_cast::<1024, 256>(self.req_route.val()) << 64)
            | (bit_cast::<1024, 384>(self.req_header.val()) << 320);
    }
}

crate::impl_clocked!(SlowPathDesc);

#[cfg(test)]
mod tests;
