//! The pointer-chasing unit (`Opcode::PointerChase`, `clio_proto::offload::chase`): from a
//! start node, read the key word at each node and compare it; answer with the value of the
//! first match, a not-found at a null next pointer, or the next node at the hop bound. The
//! behaviour is `clio_model::offload::pointer_chase::chase`, word for word, through the
//! offload port bundle ([`super`]).
//!
//! Per node: one word read for the key, and one for the next pointer when the key does not
//! match (or none when it is in the key's block). Each read is registered as it arrives (its
//! status, the key compare, the next pointer) and acted on the cycle after (`Decide`). The unit checks the request first (layout, value length, start != 0: else
//! BAD_REQUEST); an address `node + offset` that wraps 2^64 answers UNMAPPED (the model's
//! `checked_add`), a word the executor could not read answers its status. A match answers OK
//! with `arg0` = nodes visited, `arg1` = the node, and the payload read from
//! `node + value_offset`.

use super::OffloadPort;
use clio_proto::offload::chase;
use clio_proto::Status;
use rust_hdl::prelude::*;

/// The unit's states.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum ChaseState {
    /// Waiting for a request.
    Idle,
    /// The current node's field addresses are computed into their registers (and, for the
    /// first node, the request's check is read: BAD_REQUEST).
    Addr,
    /// Ask for the current node's key word.
    Key,
    /// The key word is on its way.
    KeyWait,
    /// Ask for the current node's next pointer.
    Next,
    /// The next pointer is on its way.
    NextWait,
    /// The word read (key or next pointer) was registered with its status and compare: act on
    /// it (the R channel's word select and the 64-bit compares end at registers).
    Decide,
    /// The answer is held until the executor takes it.
    Answer,
}

/// The pointer-chasing unit.
#[derive(LogicBlock)]
pub struct PointerChase {
    /// Core clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset, active high.
    pub reset: Signal<In, Bit>,
    /// The offload port (request, memory, response); the chaser only reads, in the
    /// caller's RAS, so it drives `mem_write`, `mem_wdata`, `mem_wstrb`, `mem_own`,
    /// `pay_ready` and `rsp_read_own` idle (0).
    pub port: OffloadPort,
    state: DFF<ChaseState>,
    /// The current node.
    node: DFF<Bits<64>>,
    /// The key the chase looks for.
    key: DFF<Bits<64>>,
    /// The request's layout (key, next and value offsets, hop bound).
    layout: DFF<Bits<64>>,
    /// The value's length.
    vlen: DFF<Bits<12>>,
    /// Nodes visited so far, counting the current one.
    hop: DFF<Bits<16>>,
    /// The answer.
    a_status: DFF<Bits<8>>,
    a_arg0: DFF<Bits<64>>,
    a_arg1: DFF<Bits<64>>,
    a_read: DFF<Bit>,
    a_va: DFF<Bits<64>>,
    /// The request's fields, and whether it is well formed.
    r_koff: Signal<Local, Bits<16>>,
    r_noff: Signal<Local, Bits<16>>,
    r_voff: Signal<Local, Bits<16>>,
    r_hops: Signal<Local, Bits<16>>,
    r_ok: Signal<Local, Bit>,
    /// `r_ok` of the request taken, registered (checked in `Addr`, not in front of the state
    /// register in the cycle the request is offered).
    req_ok: DFF<Bit>,
    /// `node` plus the key, next and value offsets, with their carries out of 64 bits,
    /// registered (valid from the cycle after `Addr`, which follows every change of `node`).
    at_k: DFF<Bits<65>>,
    at_n: DFF<Bits<65>>,
    at_v: DFF<Bits<65>>,
    /// The key word and the next pointer lie in one 64-byte block (one read serves both),
    /// from the registered addresses.
    same_blk: DFF<Bit>,
    /// The key and next words of the block on `mem_data`.
    w_key: Signal<Local, Bits<64>>,
    w_next: Signal<Local, Bits<64>>,
    /// The next pointer is known this cycle (read, or in the key's block): follow it.
    nxt_ready: Signal<Local, Bit>,
    /// The read that ended last cycle (acted on in `Decide`): a key read (else a next
    /// pointer's), its status, whether its key word is the key sought, and the next pointer
    /// in its block.
    d_key: DFF<Bit>,
    d_status: DFF<Bits<8>>,
    d_hit: DFF<Bit>,
    d_next: DFF<Bits<64>>,
    c_max_offset: Constant<Bits<16>>,
    c_max_hops: Constant<Bits<16>>,
    c_max_value: Constant<Bits<32>>,
    c_ok: Constant<Bits<8>>,
    c_unmapped: Constant<Bits<8>>,
    c_bad_request: Constant<Bits<8>>,
}

impl Default for PointerChase {
    fn default() -> Self {
        PointerChase {
            clock: Default::default(),
            reset: Default::default(),
            port: Default::default(),
            state: Default::default(),
            node: Default::default(),
            key: Default::default(),
            layout: Default::default(),
            vlen: Default::default(),
            hop: Default::default(),
            a_status: Default::default(),
            a_arg0: Default::default(),
            a_arg1: Default::default(),
            a_read: Default::default(),
            a_va: Default::default(),
            r_koff: Default::default(),
            r_noff: Default::default(),
            r_voff: Default::default(),
            r_hops: Default::default(),
            r_ok: Default::default(),
            req_ok: Default::default(),
            at_k: Default::default(),
            at_n: Default::default(),
            at_v: Default::default(),
            same_blk: Default::default(),
            w_key: Default::default(),
            w_next: Default::default(),
            nxt_ready: Default::default(),
            d_key: Default::default(),
            d_status: Default::default(),
            d_hit: Default::default(),
            d_next: Default::default(),
            c_max_offset: Constant::new((chase::MAX_OFFSET as u64).to_bits()),
            c_max_hops: Constant::new((chase::MAX_HOPS as u64).to_bits()),
            c_max_value: Constant::new((chase::MAX_VALUE as u64).to_bits()),
            c_ok: Constant::new((Status::Ok as u64).to_bits()),
            c_unmapped: Constant::new((Status::Unmapped as u64).to_bits()),
            c_bad_request: Constant::new((Status::BadRequest as u64).to_bits()),
        }
    }
}

// The packing of `ChaseLayout::pack` the unit reads (16 bits each from the least significant
// end: key, next, value offset, hop bound), and a value length that fits `rsp_read_len`.
const _: () = {
    let l = clio_proto::offload::ChaseLayout {
        key_offset: 1,
        next_offset: 2,
        value_offset: 3,
        max_hops: 4,
    };
    assert!(l.pack() == 1 | 2 << 16 | 3 << 32 | 4 << 48);
    assert!(chase::MAX_VALUE < 1 << 12 && chase::MAX_HOPS < u16::MAX);
};

impl Logic for PointerChase {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, node, key, layout, vlen, hop, a_status, a_arg0, a_arg1, a_read,
            a_va, at_k, at_n, at_v, same_blk, req_ok, d_key, d_status, d_hit, d_next
        );
        // The request as it is offered, checked as `ChaseLayout::is_valid` and `chase` do.
        self.r_koff.next = self.port.req_arg1.val().get_bits::<16>(0);
        self.r_noff.next = self.port.req_arg1.val().get_bits::<16>(16);
        self.r_voff.next = self.port.req_arg1.val().get_bits::<16>(32);
        self.r_hops.next = self.port.req_arg1.val().get_bits::<16>(48);
        self.r_ok.next = (self.r_koff.val().get_bits::<3>(0) == 0)
            & (self.r_noff.val().get_bits::<3>(0) == 0)
            & (self.r_koff.val() <= self.c_max_offset.val())
            & (self.r_noff.val() <= self.c_max_offset.val())
            & (self.r_voff.val() <= self.c_max_offset.val())
            & (self.r_hops.val() != 0)
            & (self.r_hops.val() <= self.c_max_hops.val())
            & (self.port.req_len.val() != 0)
            & (self.port.req_len.val() <= self.c_max_value.val())
            & (self.port.req_va.val() != 0);
        // The current node's fields, and their words in the block the memory answered with
        // (the words are 8-byte aligned: address bits 3..6 pick one of eight).
        self.at_k.d.next = bit_cast::<65, 64>(self.node.q.val())
            + bit_cast::<65, 16>(self.layout.q.val().get_bits::<16>(0));
        self.at_n.d.next = bit_cast::<65, 64>(self.node.q.val())
            + bit_cast::<65, 16>(self.layout.q.val().get_bits::<16>(16));
        self.at_v.d.next = bit_cast::<65, 64>(self.node.q.val())
            + bit_cast::<65, 16>(self.layout.q.val().get_bits::<16>(32));
        self.same_blk.d.next =
            self.at_k.q.val().get_bits::<59>(6) == self.at_n.q.val().get_bits::<59>(6);
        self.w_key.next = bit_cast::<64, 512>(
            self.port.mem_data.val() >> (bit_cast::<9, 3>(self.at_k.q.val().get_bits::<3>(3)) << 6),
        );
        self.w_next.next = bit_cast::<64, 512>(
            self.port.mem_data.val() >> (bit_cast::<9, 3>(self.at_n.q.val().get_bits::<3>(3)) << 6),
        );
        self.d_status.d.next = self.port.mem_status.val();
        self.d_hit.d.next = self.w_key.val() == self.key.q.val();
        self.d_next.d.next = self.w_next.val();
        self.nxt_ready.next = false;
        self.port.req_ready.next = self.state.q.val() == ChaseState::Idle;
        self.port.mem_valid.next = false;
        // The bundle's write, own-RAS and payload signals, idle: a chase only reads, in the
        // caller's RAS, and has no payload.
        self.port.mem_write.next = false;
        self.port.mem_wdata.next = 0.into();
        self.port.mem_wstrb.next = 0.into();
        self.port.mem_own.next = false;
        self.port.pay_ready.next = false;
        self.port.rsp_read_own.next = false;
        self.port.mem_va.next = bit_cast::<64, 65>(self.at_k.q.val());
        if (self.state.q.val() == ChaseState::Next) | (self.state.q.val() == ChaseState::NextWait) {
            self.port.mem_va.next = bit_cast::<64, 65>(self.at_n.q.val());
        }
        self.port.rsp_valid.next = self.state.q.val() == ChaseState::Answer;
        self.port.rsp_status.next = self.a_status.q.val();
        self.port.rsp_arg0.next = self.a_arg0.q.val();
        self.port.rsp_arg1.next = self.a_arg1.q.val();
        self.port.rsp_read.next = self.a_read.q.val();
        self.port.rsp_read_va.next = self.a_va.q.val();
        self.port.rsp_read_len.next = self.vlen.q.val();
        match self.state.q.val() {
            ChaseState::Idle => {
                self.a_read.d.next = false;
                self.a_arg0.d.next = 0.into();
                self.a_arg1.d.next = 0.into();
                if self.port.req_valid.val() {
                    self.node.d.next = self.port.req_va.val();
                    self.key.d.next = self.port.req_arg0.val();
                    self.layout.d.next = self.port.req_arg1.val();
                    self.vlen.d.next = bit_cast::<12, 32>(self.port.req_len.val());
                    self.hop.d.next = 1.into();
                    self.req_ok.d.next = self.r_ok.val();
                    self.state.d.next = ChaseState::Addr;
                }
            }
            ChaseState::Addr => {
                // (The request's check, registered as it was taken: it stays set for the
                // chase's later nodes.)
                if self.req_ok.q.val() {
                    self.state.d.next = ChaseState::Key;
                } else {
                    self.a_status.d.next = self.c_bad_request.val();
                    self.state.d.next = ChaseState::Answer;
                }
            }
            ChaseState::Key => {
                if self.node.q.val().get_bits::<3>(0) != 0 {
                    // Nodes are 8-byte aligned (so are their words, inside one page).
                    self.a_status.d.next = self.c_bad_request.val();
                    self.state.d.next = ChaseState::Answer;
                } else if self.at_k.q.val().get_bit(64) {
                    // node + offset wraps 2^64: nothing there is readable.
                    self.a_status.d.next = self.c_unmapped.val();
                    self.state.d.next = ChaseState::Answer;
                } else {
                    self.port.mem_valid.next = true;
                    if self.port.mem_ready.val() {
                        self.state.d.next = ChaseState::KeyWait;
                    }
                }
            }
            ChaseState::Next => {
                if self.at_n.q.val().get_bit(64) {
                    self.a_status.d.next = self.c_unmapped.val();
                    self.state.d.next = ChaseState::Answer;
                } else {
                    self.port.mem_valid.next = true;
                    if self.port.mem_ready.val() {
                        self.state.d.next = ChaseState::NextWait;
                    }
                }
            }
            ChaseState::KeyWait => {
                if self.port.mem_done.val() {
                    self.d_key.d.next = true;
                    self.state.d.next = ChaseState::Decide;
                }
            }
            ChaseState::NextWait => {
                if self.port.mem_done.val() {
                    self.d_key.d.next = false;
                    self.state.d.next = ChaseState::Decide;
                }
            }
            ChaseState::Decide => {
                if self.d_status.q.val() != self.c_ok.val() {
                    self.a_status.d.next = self.d_status.q.val();
                    self.state.d.next = ChaseState::Answer;
                } else if self.d_key.q.val() {
                    if self.d_hit.q.val() {
                        // Found: the value at node + value_offset.
                        self.state.d.next = ChaseState::Answer;
                        if self.at_v.q.val().get_bit(64) {
                            self.a_status.d.next = self.c_unmapped.val();
                        } else {
                            self.a_status.d.next = self.c_ok.val();
                            self.a_arg0.d.next = bit_cast::<64, 16>(self.hop.q.val());
                            self.a_arg1.d.next = self.node.q.val();
                            self.a_read.d.next = true;
                            self.a_va.d.next = bit_cast::<64, 65>(self.at_v.q.val());
                        }
                    } else if self.same_blk.q.val() {
                        // The next pointer came in the key's block: no second read.
                        self.nxt_ready.next = true;
                    } else {
                        self.state.d.next = ChaseState::Next;
                    }
                } else {
                    self.nxt_ready.next = true;
                }
            }
            ChaseState::Answer => {
                if self.port.rsp_ready.val() {
                    self.state.d.next = ChaseState::Idle;
                }
            }
        }
        // Follow the next pointer (`d_next`): null ends the walk (not found), the bound answers
        // where to go on (a cycle, or a longer structure), else on to the next node.
        if self.nxt_ready.val() {
            self.a_status.d.next = self.c_ok.val();
            self.a_arg0.d.next = bit_cast::<64, 16>(self.hop.q.val());
            self.a_arg1.d.next = self.d_next.q.val();
            self.state.d.next = ChaseState::Answer;
            if (self.d_next.q.val() != 0)
                & (self.hop.q.val() != self.layout.q.val().get_bits::<16>(48))
            {
                self.node.d.next = self.d_next.q.val();
                self.hop.d.next = self.hop.q.val() + 1;
                self.state.d.next = ChaseState::Addr;
            }
        }
        if self.reset.val() {
            self.state.d.next = ChaseState::Idle;
        }
    }
}

crate::impl_clocked!(PointerChase);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::Bench;
    use crate::util::bytes_to_bits;
    use clio_proto::offload::ChaseLayout;
    use std::collections::HashMap;

    /// What the unit answered: status, arg0, arg1 and the value range it asked for.
    #[derive(Debug, PartialEq, Eq)]
    struct Answer {
        status: u8,
        arg0: u64,
        arg1: u64,
        read: Option<(u64, u64)>,
    }

    /// Word memory as the executor would serve it: a missing word answers `miss` (UNMAPPED
    /// unless said otherwise per address), with `latency` cycles per read and `stall` cycles
    /// of `mem_ready`/`rsp_ready` low before each handshake. Returns the answer and the
    /// addresses read.
    fn run(
        words: &HashMap<u64, u64>,
        denied: &HashMap<u64, u8>,
        va: u64,
        key: u64,
        arg1: u64,
        len: u32,
        (latency, stall): (u64, u64),
    ) -> (Answer, Vec<u64>) {
        let mut b = Bench::new(PointerChase::default());
        b.uut.reset.next = true;
        b.tick();
        b.uut.reset.next = false;
        b.settle();
        assert!(b.uut.port.req_ready.val(), "idle after reset");
        b.uut.port.req_valid.next = true;
        b.uut.port.req_va.next = va.to_bits();
        b.uut.port.req_arg0.next = key.to_bits();
        b.uut.port.req_arg1.next = arg1.to_bits();
        b.uut.port.req_len.next = (len as u64).to_bits();
        b.tick();
        b.uut.port.req_valid.next = false;
        b.settle();
        assert!(!b.uut.port.req_ready.val(), "busy with the request");
        let mut reads = Vec::new();
        for _ in 0..100_000 {
            b.settle();
            if b.uut.port.mem_valid.val() {
                let a = b.uut.port.mem_va.val().to_u64();
                for _ in 0..stall {
                    b.tick();
                    assert!(b.uut.port.mem_valid.val(), "the request is held");
                    assert_eq!(b.uut.port.mem_va.val().to_u64(), a, "and its address");
                }
                b.uut.port.mem_ready.next = true;
                b.tick();
                b.uut.port.mem_ready.next = false;
                assert_eq!(a % 8, 0, "words are aligned");
                reads.push(a);
                for _ in 0..latency {
                    b.tick();
                    assert!(
                        !b.uut.port.mem_valid.val() && !b.uut.port.rsp_valid.val(),
                        "one in flight"
                    );
                }
                // The block that holds the word; garbage where a word is not in the map, and
                // all garbage when the word itself is not readable.
                let status = match (words.get(&a), denied.get(&a)) {
                    (_, Some(&s)) => s,
                    (Some(_), None) => 0,
                    (None, None) => Status::Unmapped as u8,
                };
                let block: Vec<u8> = (0..8)
                    .flat_map(|i| {
                        let w = (a & !63) + 8 * i;
                        let v = if status == 0 {
                            words.get(&w).copied()
                        } else {
                            None
                        };
                        v.unwrap_or(0xBAD0_0000 ^ w).to_le_bytes()
                    })
                    .collect();
                b.uut.port.mem_done.next = true;
                b.uut.port.mem_status.next = (status as u64).to_bits();
                b.uut.port.mem_data.next = bytes_to_bits::<512>(&block);
                b.tick();
                b.uut.port.mem_done.next = false;
                b.uut.port.mem_data.next = bytes_to_bits::<512>(&[0xEE; 64]);
                continue;
            }
            if b.uut.port.rsp_valid.val() {
                for _ in 0..stall {
                    b.tick();
                    assert!(b.uut.port.rsp_valid.val(), "the answer is held");
                }
                let a = Answer {
                    status: b.uut.port.rsp_status.val().to_u64() as u8,
                    arg0: b.uut.port.rsp_arg0.val().to_u64(),
                    arg1: b.uut.port.rsp_arg1.val().to_u64(),
                    read: b.uut.port.rsp_read.val().then(|| {
                        (
                            b.uut.port.rsp_read_va.val().to_u64(),
                            b.uut.port.rsp_read_len.val().to_u64(),
                        )
                    }),
                };
                b.uut.port.rsp_ready.next = true;
                b.tick();
                b.uut.port.rsp_ready.next = false;
                b.settle();
                assert!(
                    b.uut.port.req_ready.val() && !b.uut.port.rsp_valid.val(),
                    "idle again"
                );
                return (a, reads);
            }
            b.tick();
        }
        panic!("no answer");
    }

    const L: ChaseLayout = ChaseLayout {
        key_offset: 0,
        next_offset: 8,
        value_offset: 16,
        max_hops: 10,
    };

    /// Nodes at 0x1000, 0x2000, ...: key 100 + i, the last points at `tail` (the model's
    /// unit-test list).
    fn list(n: u64, tail: u64) -> HashMap<u64, u64> {
        let mut w = HashMap::new();
        for i in 0..n {
            let a = 0x1000 * (i + 1);
            w.insert(a, 100 + i);
            w.insert(a + 8, if i + 1 == n { tail } else { a + 0x1000 });
        }
        w
    }

    fn ok(arg0: u64, arg1: u64, read: Option<(u64, u64)>) -> Answer {
        Answer {
            status: 0,
            arg0,
            arg1,
            read,
        }
    }

    #[test]
    fn finds_misses_and_stops_at_the_bound() {
        let none = HashMap::new();
        let m = list(5, 0);
        for (latency, stall) in [(0, 0), (3, 2)] {
            let (a, reads) = run(&m, &none, 0x1000, 103, L.pack(), 8, (latency, stall));
            assert_eq!(a, ok(4, 0x4000, Some((0x4010, 8))));
            let want: Vec<u64> = vec![0x1000, 0x2000, 0x3000, 0x4000];
            assert_eq!(
                reads, want,
                "one read per node: the next pointer is in the key's block"
            );
            // The first node matches: one read.
            let (a, reads) = run(&m, &none, 0x1000, 100, L.pack(), 1024, (latency, stall));
            assert_eq!(
                (a, reads),
                (ok(1, 0x1000, Some((0x1010, 1024))), vec![0x1000])
            );
            let (a, _) = run(&m, &none, 0x1000, 7, L.pack(), 8, (latency, stall));
            assert_eq!(a, ok(5, 0, None), "null reached");
        }
        // A cycle: the bound ends it and says where to go on.
        let (a, reads) = run(&list(3, 0x1000), &none, 0x1000, 7, L.pack(), 8, (1, 0));
        assert_eq!(a, ok(10, 0x2000, None));
        assert_eq!(reads.len(), 10);
        // Next pointers in another block than the key: two reads per node.
        let far = ChaseLayout {
            next_offset: 64,
            ..L
        };
        let mut m = HashMap::new();
        for i in 0..4u64 {
            let a = 0x1000 * (i + 1);
            m.insert(a, 100 + i);
            m.insert(a + 64, if i == 3 { 0 } else { a + 0x1000 });
        }
        let (a, reads) = run(&m, &none, 0x1000, 102, far.pack(), 8, (2, 1));
        assert_eq!(a, ok(3, 0x3000, Some((0x3010, 8))));
        assert_eq!(reads, vec![0x1000, 0x1040, 0x2000, 0x2040, 0x3000]);
        let (a, reads) = run(&m, &none, 0x1000, 7, far.pack(), 8, (0, 0));
        assert_eq!((a, reads.len()), (ok(4, 0, None), 8));
        // Other offsets: key at 24, next at 0, value at 4088 (the largest).
        let mut m = HashMap::new();
        m.insert(0x5018, 1);
        m.insert(0x5000, 0x7000);
        m.insert(0x7018, 2);
        let l = ChaseLayout {
            key_offset: 24,
            next_offset: 0,
            value_offset: chase::MAX_OFFSET,
            max_hops: chase::MAX_HOPS,
        };
        let (a, _) = run(&m, &none, 0x5000, 2, l.pack(), 1, (0, 0));
        assert_eq!(a, ok(2, 0x7000, Some((0x7000 + 4088, 1))));
        // One hop allowed, no match: the next node is the answer.
        let one = ChaseLayout { max_hops: 1, ..l };
        let (a, _) = run(&m, &none, 0x5000, 2, one.pack(), 1, (0, 0));
        assert_eq!(a, ok(1, 0x7000, None));
    }

    #[test]
    fn hostile_requests_are_refused_or_stop_at_the_first_unreadable_node() {
        let none = HashMap::new();
        let bad = |a: &Answer| a.status == Status::BadRequest as u8 && a.read.is_none();
        let m = list(3, 0xdead_0000);
        let (a, _) = run(&m, &none, 0x1000, 7, L.pack(), 8, (0, 0));
        assert_eq!(a.status, Status::Unmapped as u8, "a pointer to nowhere");
        assert_eq!(a.read, None);
        // The first node another RAS's: its status, nothing else.
        let mut denied = HashMap::new();
        denied.insert(0x2000u64, Status::Permission as u8);
        let (a, reads) = run(&m, &denied, 0x1000, 7, L.pack(), 8, (0, 0));
        assert_eq!((a.status, reads.len()), (Status::Permission as u8, 2));
        for arg1 in [
            ChaseLayout { key_offset: 3, ..L }.pack(),
            ChaseLayout {
                next_offset: 12,
                ..L
            }
            .pack(),
            ChaseLayout {
                key_offset: chase::MAX_OFFSET + 8,
                ..L
            }
            .pack(),
            ChaseLayout {
                value_offset: chase::MAX_OFFSET + 1,
                ..L
            }
            .pack(),
            ChaseLayout { max_hops: 0, ..L }.pack(),
            ChaseLayout {
                max_hops: chase::MAX_HOPS + 1,
                ..L
            }
            .pack(),
            u64::MAX,
        ] {
            let (a, reads) = run(&m, &none, 0x1000, 7, arg1, 8, (0, 0));
            assert!(bad(&a) && reads.is_empty(), "{arg1:#x}: {a:?}");
        }
        for len in [0, chase::MAX_VALUE + 1, u32::MAX] {
            let (a, reads) = run(&m, &none, 0x1000, 7, L.pack(), len, (0, 0));
            assert!(bad(&a) && reads.is_empty(), "len {len}");
        }
        let (a, _) = run(&m, &none, 0, 7, L.pack(), 8, (0, 0));
        assert!(bad(&a), "start 0");
        // A node that is not 8-byte aligned, first or later.
        let (a, reads) = run(&m, &none, 0x1004, 7, L.pack(), 8, (0, 0));
        assert!(bad(&a) && reads.is_empty(), "unaligned start");
        let mut odd = list(2, 0);
        odd.insert(0x1008, 0x2001);
        let (a, reads) = run(&odd, &none, 0x1000, 7, L.pack(), 8, (0, 0));
        assert!(bad(&a) && reads.len() == 1, "unaligned next: {a:?}");
        // Offsets that wrap the address space are unreadable, not a wrap to low memory.
        let (a, reads) = run(
            &m,
            &none,
            u64::MAX - 7,
            7,
            ChaseLayout { key_offset: 8, ..L }.pack(),
            8,
            (0, 0),
        );
        assert_eq!((a.status, reads.len()), (Status::Unmapped as u8, 0));
        let mut m = HashMap::new();
        m.insert(u64::MAX - 23, 5);
        let wrap = ChaseLayout {
            key_offset: 0,
            next_offset: 8,
            value_offset: 24,
            max_hops: 2,
        };
        let (a, reads) = run(&m, &none, u64::MAX - 23, 5, wrap.pack(), 8, (0, 0));
        assert_eq!(
            (a.status, a.read, reads.len()),
            (Status::Unmapped as u8, None, 1),
            "the value's address wraps"
        );
    }
}
