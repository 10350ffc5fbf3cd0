//! The DRAM port's arbiter alone, 20,000 random cycles of its clients and the port.
//!
//! Clients keep their contract (at most one client owns AR and at most one AW in a cycle; the
//! one-beat writer owns W only while the write-data stage does not stream), and then every
//! handshake a client sees is the port's: a client that owns its channel and whose `valid`
//! meets its `ready` is the one whose address, length, data, strobes and last went out with
//! the port's handshake, and a port handshake always belongs to a client. A client's `valid`
//! while it does not own the channel (drawn too) never reaches the port.
//! Cycles that break the contract on purpose check the documented priority (the executor over
//! the walk on AR, over the one-beat writer on AW; the one-beat writer over the stream on W).

use super::*;
use crate::tb::Rng;
use crate::util::bytes_to_bits;

/// One client's address request as drawn.
#[derive(Clone, Copy)]
struct Addr {
    own: bool,
    valid: bool,
    addr: u64,
    len: u64,
}

/// One client's W beat as drawn.
#[derive(Clone)]
struct Wr {
    own: bool,
    valid: bool,
    data: Vec<u8>,
    strb: u64,
    last: bool,
}

fn addr(r: &mut Rng, own: bool) -> Addr {
    Addr {
        own,
        valid: r.below(4) != 0,
        addr: r.next(),
        len: r.below(256),
    }
}

fn wr(r: &mut Rng, own: bool) -> Wr {
    Wr {
        own,
        valid: r.below(4) != 0,
        data: r.bytes(64),
        strb: r.next(),
        last: r.below(2) == 0,
    }
}

fn drive_addr(p: &mut AddrReqIn, a: &Addr) {
    p.own.next = a.own;
    p.valid.next = a.valid;
    p.addr.next = a.addr.to_bits();
    p.len.next = a.len.to_bits();
}

fn drive_wr(p: &mut WriteBeatsIn, w: &Wr) {
    p.own.next = w.own;
    p.valid.next = w.valid;
    p.data.next = bytes_to_bits(&w.data);
    p.strb.next = w.strb.to_bits();
    p.last.next = w.last;
}

/// Which of two clients the contract lets own a channel this cycle: neither, the first, the
/// second, or (off contract, one cycle in eight) both.
fn owners(r: &mut Rng) -> (bool, bool) {
    match r.below(8) {
        0 => (true, true),
        1 | 2 => (false, false),
        3..=5 => (true, false),
        _ => (false, true),
    }
}

#[test]
fn every_handshake_is_the_granted_clients() {
    let mut r = Rng(0xD7A3);
    let mut u = DramPort::default();
    u.connect_all();
    let (mut ar_fires, mut aw_fires, mut w_fires, mut walk_blocked) = (0, 0, 0, 0);
    for _ in 0..20_000 {
        let (xo, wo) = owners(&mut r);
        let (exec_ar, walk_ar) = (addr(&mut r, xo), addr(&mut r, wo));
        let (xo, bo) = owners(&mut r);
        let (exec_aw, beat_aw) = (addr(&mut r, xo), addr(&mut r, bo));
        let (bo, so) = owners(&mut r);
        let (beat_w, stream_w) = (wr(&mut r, bo), wr(&mut r, so));
        let walk_clear = r.below(3) != 0;
        let (arready, awready, wready) = (r.below(2) == 0, r.below(2) == 0, r.below(2) == 0);
        let (rvalid, rlast, bvalid) = (r.below(2) == 0, r.below(2) == 0, r.below(2) == 0);
        let rdata = r.bytes(64);
        let (reads_ready, reads_idle, word_sample) =
            (r.below(2) == 0, r.below(2) == 0, r.below(4) == 0);
        drive_addr(&mut u.exec_ar, &exec_ar);
        drive_addr(&mut u.walk_ar, &walk_ar);
        drive_addr(&mut u.exec_aw, &exec_aw);
        drive_addr(&mut u.beat_aw, &beat_aw);
        drive_wr(&mut u.beat_w, &beat_w);
        drive_wr(&mut u.stream_w, &stream_w);
        u.walk_clear.next = walk_clear;
        u.axi.arready.next = arready;
        u.axi.awready.next = awready;
        u.axi.wready.next = wready;
        u.axi.rvalid.next = rvalid;
        u.axi.rlast.next = rlast;
        u.axi.rdata.next = bytes_to_bits(&rdata);
        u.axi.bvalid.next = bvalid;
        u.reads_r.ready.next = reads_ready;
        u.reads_r.idle.next = reads_idle;
        u.word_sample.next = word_sample;
        assert!(simulate(&mut u, 1000));

        // AR: the executor's when it owns the channel, else the walk's while it is cleared.
        let ar_port = u.axi.arvalid.val() && arready;
        let exec_fire = exec_ar.own && exec_ar.valid && u.exec_ar.ready.val();
        let walk_fire = walk_ar.own && walk_ar.valid && u.walk_ar.ready.val();
        let ar_from = if exec_ar.own {
            Some(exec_ar)
        } else if walk_ar.own {
            Some(walk_ar)
        } else {
            None
        };
        match ar_from {
            Some(a) => {
                assert_eq!(u.axi.araddr.val(), a.addr.to_bits::<64>());
                assert_eq!(u.axi.arlen.val(), a.len.to_bits::<8>());
            }
            None => assert!(!u.axi.arvalid.val(), "AR valid with no owner"),
        }
        if exec_ar.own && walk_ar.own {
            assert_eq!(u.axi.arvalid.val(), exec_ar.valid, "the executor's AR wins");
        } else {
            assert_eq!(ar_port, exec_fire || walk_fire, "AR handshakes differ");
            if walk_ar.own && walk_ar.valid && !walk_clear {
                assert!(!u.axi.arvalid.val(), "a walk's read before walk_clear");
                assert!(!walk_fire);
                walk_blocked += 1;
            }
        }
        ar_fires += ar_port as u32;

        // R: ready for the reads' beats, and for a walk's or word's while no read's are due.
        assert_eq!(
            u.axi.rready.val(),
            reads_ready || (reads_idle && (walk_ar.own || word_sample))
        );
        assert_eq!(u.reads_r.valid.val(), rvalid);
        assert_eq!(u.reads_r.data.val(), bytes_to_bits::<512>(&rdata));
        assert_eq!(u.idle_r.valid.val(), rvalid && reads_idle);
        assert_eq!(u.idle_r.data.val(), bytes_to_bits::<512>(&rdata));
        assert_eq!(u.idle_r.last.val(), rlast);

        // AW: the executor's bursts, else the one-beat writer's beat.
        let aw_port = u.axi.awvalid.val() && awready;
        let aw_from = if exec_aw.own {
            Some(exec_aw)
        } else if beat_aw.own {
            Some(beat_aw)
        } else {
            None
        };
        match aw_from {
            Some(a) => {
                assert_eq!(u.axi.awvalid.val(), a.valid);
                assert_eq!(u.axi.awaddr.val(), a.addr.to_bits::<64>());
                assert_eq!(u.axi.awlen.val(), a.len.to_bits::<8>());
            }
            None => assert!(!u.axi.awvalid.val(), "AW valid with no owner"),
        }
        if !(exec_aw.own && beat_aw.own) {
            let fires = (exec_aw.own && exec_aw.valid && u.exec_aw.ready.val())
                || (beat_aw.own && beat_aw.valid && u.beat_aw.ready.val());
            assert_eq!(aw_port, fires, "AW handshakes differ");
        }
        aw_fires += aw_port as u32;

        // W: the one-beat writer's beat, else the stream's.
        let w_port = u.axi.wvalid.val() && wready;
        let w_from = if beat_w.own {
            Some(&beat_w)
        } else if stream_w.own {
            Some(&stream_w)
        } else {
            None
        };
        match w_from {
            Some(w) => {
                assert_eq!(u.axi.wvalid.val(), w.valid);
                assert_eq!(u.axi.wdata.val(), bytes_to_bits::<512>(&w.data));
                assert_eq!(u.axi.wstrb.val(), w.strb.to_bits::<64>());
                assert_eq!(u.axi.wlast.val(), w.last);
            }
            None => assert!(!u.axi.wvalid.val(), "W valid with no owner"),
        }
        if !(beat_w.own && stream_w.own) {
            let fires = (beat_w.own && beat_w.valid && u.beat_w.ready.val())
                || (stream_w.own && stream_w.valid && u.stream_w.ready.val());
            assert_eq!(w_port, fires, "W handshakes differ");
        }
        assert_eq!(u.order.w_done.val(), w_port && u.axi.wlast.val());
        w_fires += w_port as u32;

        // B: always ready, each response counted.
        assert!(u.axi.bready.val());
        assert_eq!(u.order.b_done.val(), bvalid);
        assert_eq!(u.order.reads_idle.val(), reads_idle);
    }
    // The draw reaches every case it checks.
    assert!(ar_fires > 2_000 && aw_fires > 2_000 && w_fires > 2_000);
    assert!(walk_blocked > 500, "walks held back: {walk_blocked}");
}
