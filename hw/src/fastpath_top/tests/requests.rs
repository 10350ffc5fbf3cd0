//! Every request class end to end through the top (reads, writes, faults, errors, NACK,
//! atomics, slow-path requests and replies), and the translation latency of hits, walks and
//! first-touch faults.

use super::*;

/// Reads, writes (page-straddling, first touch), faults, errors, NACK, atomics with the
/// idempotence ring, slow-path requests and replies: every response byte-exact with
/// `Header::response_to(..).to_packet(..)`, DRAM and page table as `proto` says.
#[test]
fn requests_end_to_end() {
    let pid = 3;
    // Page table through the slow-path TX ring: vpn 0x10 valid at frame 5, 0x11 allocated
    // (first touch), 0x12 read-only; frame 9 in the free-page FIFO.
    let mut e = env_with_page(&[pid]);
    e.put_pte(Pte::allocated(pid, 0x11, PERM_READ | PERM_WRITE));
    e.put_pte(Pte {
        used: true,
        valid: true,
        perms: PERM_READ,
        pid,
        vpn: 0x12,
        pfn: 7,
    });
    e.sp_tx.push_back(Descriptor::FreePage { pfn: 9 }.encode());
    e.run();
    let mut mem = std::collections::HashMap::<u64, u8>::new();
    let pa = |va: u64| -> u64 {
        match va >> SHIFT {
            0x10 => 5 * PS + va % PS,
            0x11 => 9 * PS + va % PS,
            _ => unreachable!(),
        }
    };
    // A write straddling into the untouched page: fault maps frame 9.
    let data: Vec<u8> = (0..700u32).map(|i| (i * 13 + 1) as u8).collect();
    let va = 0x10 * PS + PS - 300 + 5;
    let (h, f) = write_req(pid, 1, va, &data);
    let (out, _) = e.request(&f);
    assert_eq!(out, vec![resp(&h, Status::Ok, &[])]);
    for (i, d) in data.iter().enumerate() {
        mem.insert(pa(va + i as u64), *d);
    }
    assert_eq!(
        e.sp_rx,
        vec![Descriptor::PageMapped {
            pid,
            vpn: 0x11,
            pfn: 9
        }]
    );
    assert_eq!(e.b.uut.stat_page_faults.val().to_u32(), 1);
    // The PTE was written back valid with frame 9.
    let bucket = bucket_index(pid, 0x11, BUCKET_BITS);
    let img: [u8; 256] = e.dram.mem().bytes(bucket * 256, 256).try_into().unwrap();
    match clio_proto::pte::bucket_lookup(&img, pid, 0x11) {
        clio_proto::pte::BucketLookup::Found(_, p) => assert!(p.valid && p.pfn == 9),
        _ => panic!("PTE lost"),
    }
    // Multi-packet write: packet 1 of a 1500-byte request lands at va + 1024.
    let big: Vec<u8> = (0..1500u32).map(|i| (i * 7 + 3) as u8).collect();
    let va2 = 0x10 * PS + 0x123;
    let mut h = req(Opcode::Write, pid, 2, va2);
    h.total_len = 1500;
    h.pkt_count = 2;
    h.pkt_index = 1;
    let f = h.to_packet(&big[1024..]);
    let (out, _) = e.request(&f);
    assert_eq!(out, vec![resp(&h, Status::Ok, &[])]);
    for (i, d) in big[1024..].iter().enumerate() {
        mem.insert(pa(va2 + 1024 + i as u64), *d);
    }
    for (a, d) in &mem {
        assert_eq!(e.dram.mem().bytes(*a, 1)[0], *d, "DRAM byte at {a:#x}");
    }
    // Reads at several alignments, straddling, up to 1024 bytes.
    for (id, va, len) in [
        (10u32, va, 700u32),
        (11, va + 3, 1024),
        (12, 0x10 * PS + 0x40, 16),
        (13, 0x11 * PS - 64, 128),
        (14, 0x10 * PS + 0x531, 1),
    ] {
        let (h, f) = read_req(pid, id, va, len);
        let (out, _) = e.request(&f);
        let want: Vec<u8> = (0..len as u64)
            .map(|i| {
                *mem.get(&pa(va + i))
                    .unwrap_or(&e.dram.mem().bytes(pa(va + i), 1)[0])
            })
            .collect();
        let mut r = h.response_to(Status::Ok);
        r.payload_len = len as u16;
        assert_eq!(out, vec![r.to_packet(&want)], "read {id}");
    }
    // Errors: permission, unmapped, too long, corrupted (NACK), bad segmentation.
    let (h, f) = write_req(pid, 20, 0x12 * PS, &[1, 2, 3]);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Permission, &[])]);
    let (h, f) = read_req(pid, 21, 0x20 * PS, 8);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Unmapped, &[])]);
    let (h, f) = read_req(pid, 22, 0x10 * PS, clio_proto::consts::MAX_REQUEST_LEN + 1);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::BadRequest, &[])]);
    let (_h, mut f) = write_req(pid, 23, 0x10 * PS, &[9; 100]);
    f[HEADER_LEN + 50] ^= 4;
    let mut nack = f[..HEADER_LEN].to_vec();
    nack[field::KEY.start..HEADER_LEN].fill(0);
    nack[2] = Status::Nack as u8;
    nack[3] = 1;
    nack[10] = 0;
    nack[11] = 0;
    Packet::new_unchecked(&mut nack[..]).fill_checksum();
    assert_eq!(e.request(&f).0, vec![nack]);
    assert_eq!(e.b.uut.stat_nacks.val().to_u32(), 1);
    let (mut h, _) = write_req(pid, 24, 0x10 * PS, &[9; 100]);
    h.pkt_count = 2;
    assert_eq!(
        e.request(&h.to_packet(&[9; 100])).0,
        vec![resp(&h, Status::BadRequest, &[])]
    );
    assert_eq!(
        e.dram.mem().bytes(pa(0x10 * PS), 1)[0],
        *mem.get(&pa(0x10 * PS)).unwrap_or(&0)
    );
    // Atomics: FAA executed once, its retry replayed from the ring, CAS, unaligned.
    let word = 0x10 * PS + 0x208;
    let old = u64::from_le_bytes(e.dram.mem().bytes(pa(word), 8).try_into().unwrap());
    let mut faa = req(Opcode::FetchAdd, pid, 30, word);
    faa.arg0 = 5;
    let want = Header {
        arg0: old,
        ..faa.response_to(Status::Ok)
    }
    .to_packet(&[]);
    assert_eq!(e.request(&faa.to_packet(&[])).0, vec![want.clone()]);
    assert_eq!(
        e.request(&faa.to_packet(&[])).0,
        vec![want],
        "retry must be replayed"
    );
    assert_eq!(
        u64::from_le_bytes(e.dram.mem().bytes(pa(word), 8).try_into().unwrap()),
        old.wrapping_add(5)
    );
    let mut cas = req(Opcode::CompareAndSwap, pid, 31, word);
    cas.arg0 = old.wrapping_add(5);
    cas.arg1 = 77;
    assert_eq!(
        e.request(&cas.to_packet(&[])).0,
        vec![Header {
            arg0: old.wrapping_add(5),
            ..cas.response_to(Status::Ok)
        }
        .to_packet(&[])]
    );
    assert_eq!(
        u64::from_le_bytes(e.dram.mem().bytes(pa(word), 8).try_into().unwrap()),
        77
    );
    let mut ack = req(Opcode::CnAck, pid, 32, 0);
    ack.arg0 = 30;
    assert_eq!(
        e.request(&ack.to_packet(&[])).0,
        vec![resp(&ack, Status::Ok, &[])]
    );
    let tas = req(Opcode::TestAndSet, pid, 33, word + 4);
    assert_eq!(
        e.request(&tas.to_packet(&[])).0,
        vec![resp(&tas, Status::BadRequest, &[])]
    );
    let fence = req(Opcode::Fence, pid, 34, 0);
    assert_eq!(
        e.request(&fence.to_packet(&[])).0,
        vec![resp(&fence, Status::Ok, &[])]
    );
    // Slow path: ALLOC becomes a REQUEST descriptor; the REPLY goes out along its route.
    e.sp_rx.clear();
    let mut alloc = req(Opcode::Alloc, pid, 40, 0);
    alloc.arg0 = 1 << 22;
    assert!(e.request(&alloc.to_packet(&[])).0.is_empty());
    // The descriptor carries the client, never the key.
    assert_eq!(
        e.sp_rx,
        vec![Descriptor::Request {
            route: e.route,
            header: Header { key: 0, ..alloc }
        }]
    );
    let reply = Header {
        va: 0x40_0000,
        ..alloc.response_to(Status::Ok)
    };
    e.sp_tx.push_back(
        Descriptor::Reply {
            route: e.route,
            header: reply,
        }
        .encode(),
    );
    let n = e.tx.len();
    e.run();
    assert_eq!(e.tx[n..].to_vec(), vec![(e.route, reply.to_packet(&[]))]);
    e.b.uut.sp_rx_room.next = 32u16.to_bits();
    assert_eq!(
        e.request(&alloc.to_packet(&[])).0,
        vec![resp(&alloc, Status::RetryLater, &[])]
    );
}

/// Cycles from a read's last RX beat to its first TX beat for a TLB hit, a TLB miss
/// whose walk finds a valid PTE, and a first-touch page fault (DRAM latency 5).
#[test]
fn page_fault_latency_is_constant() {
    let mut e = Env::new();
    let pid = 1;
    e.grant(pid, key_of(pid));
    // vpn 0..4 and 12..16 mapped, 4..12 allocated (first touch faults). PTE_WRITE puts
    // each in the TLB; 8..16 are then invalidated there, so they need a walk.
    for vpn in (0..4u64).chain(12..16) {
        e.put_pte(Pte {
            used: true,
            valid: true,
            perms: 3,
            pid,
            vpn,
            pfn: 20 + vpn,
        });
    }
    for vpn in 4..12u64 {
        e.put_pte(Pte::allocated(pid, vpn, 3));
    }
    for vpn in 8..16u64 {
        e.sp_tx
            .push_back(Descriptor::TlbInvalidate { pid, vpn }.encode());
    }
    for pfn in 40..48 {
        e.sp_tx.push_back(Descriptor::FreePage { pfn }.encode());
    }
    e.run();
    let mut lat = |vpn: u64, id: u32| e.request(&read_req(pid, id, vpn * PS + 64, 64).1).1;
    let hit: Vec<u64> = (0..4).map(|v| lat(v, v as u32)).collect();
    let fault: Vec<u64> = (4..8).map(|v| lat(v, 10 + v as u32)).collect();
    let walk: Vec<u64> = (12..16).map(|v| lat(v, 20 + v as u32)).collect();
    let walk_fault: Vec<u64> = (8..12).map(|v| lat(v, 30 + v as u32)).collect();
    let hit2: Vec<u64> = (4..16).map(|v| lat(v, 40 + v as u32)).collect();
    println!(
        "latency (cycles, last RX beat -> first TX beat): TLB hit {hit:?}, first touch with \
         the allocated PTE in the TLB {fault:?}, walk to a valid PTE {walk:?}, first touch \
         after a walk {walk_fault:?}, hits afterwards {hit2:?}"
    );
    assert!(
        hit.iter().chain(&hit2).all(|&h| h == hit[0]),
        "hit latency varies"
    );
    assert!(fault.iter().all(|&f| f == fault[0]), "fault latency varies");
    assert!(walk.iter().all(|&w| w == walk[0]), "walk latency varies");
    assert!(
        walk_fault.iter().all(|&f| f == walk_fault[0]),
        "fault-after-walk latency varies"
    );
    assert_eq!(
        fault[0] - hit[0],
        FAULT_OVER_HIT_CYCLES,
        "fault cost over a TLB hit (allocated PTE in the TLB)"
    );
    assert!(FAULT_OVER_HIT_CYCLES <= 3);
    assert_eq!(
        walk_fault[0] - walk[0],
        FAULT_EXTRA_CYCLES,
        "fault cost over a walk that finds a valid PTE"
    );
    assert_eq!(
        walk[0] - hit[0],
        WALK_EXTRA_CYCLES,
        "walk cost over a TLB hit at DRAM latency 5"
    );
}

/// A PTE_WRITE descriptor that names a slot past the bucket's 16 or a bucket past the table
/// (`cfg_bucket_mask`) is ignored: nothing is written to DRAM and the TLB is not filled, so a
/// read of the page it describes is UNMAPPED. The same PTE at a good place maps the page.
#[test]
fn pte_writes_outside_the_table_are_ignored() {
    let pid = 3;
    let mut e = Env::new();
    e.grant(pid, key_of(pid));
    let pte = Pte {
        used: true,
        valid: true,
        perms: PERM_READ | PERM_WRITE,
        pid,
        vpn: 0x20,
        pfn: 5,
    };
    let bucket = bucket_index(pid, 0x20, BUCKET_BITS);
    let writes = e.dram_traffic().1;
    for (bucket, slot) in [(bucket, 16u32), (1u64 << BUCKET_BITS, 0), (u64::MAX, 0)] {
        e.sp_tx
            .push_back(Descriptor::PteWrite { bucket, slot, pte }.encode());
        e.run();
    }
    assert_eq!(
        e.dram_traffic().1,
        writes,
        "an out-of-table PTE_WRITE wrote"
    );
    let (h, f) = read_req(pid, 1, 0x20 * PS + 8, 16);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Unmapped, &[])]);
    e.put_pte(pte);
    let (h, f) = read_req(pid, 2, 0x20 * PS + 8, 16);
    assert_eq!(e.request(&f).0, vec![resp(&h, Status::Ok, &[0; 16])]);
}
