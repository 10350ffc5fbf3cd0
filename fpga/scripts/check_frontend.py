#!/usr/bin/env python3
"""Check the board's network front end (clio_eth_rx / clio_eth_tx) in iverilog.

  check_frontend.py --cfg build/rtl/clio_board_cfg.vh --work DIR

Frames are built here in Python (independently of the RTL): Ethernet/IPv4/UDP to the Clio
port and raw Clio frames (EtherType from the cfg) with packet lengths from 1 byte to proto's
largest packet, CLIO_MAX_PACKET = HEADER_LEN + MAX_PAYLOAD (64 + 1024 = 1088 bytes; the cfg
has the sizes from clio-proto, fpga/scripts/board_cfg.rs), the largest in both encapsulations,
plus frames the node must ignore (ARP, UDP to another port, IPv4 with options, a fragment, a
runt). They go through clio_eth_rx, whose output goes back into clio_eth_tx with the route it
produced (the fast path answers along the route of the request). Checked:
  * RX hands out exactly the Clio packets, bytes intact, and each route decodes (offsets from
    the cfg, which board_cfg.rs derives from proto's Route::to_bytes) to the frame's
    encapsulation, MACs, IPv4 addresses and ports, the same route on every beat;
  * every ignored frame is dropped and counted;
  * TX emits, for each packet, the reply frame: MACs/IPs/ports swapped, IPv4 total length,
    a header checksum that verifies, UDP length, UDP checksum 0, then the packet bytes;
  * under random input gaps and output back-pressure;
  * clio_eth_tx's store-and-forward buffer (TX_BEATS 64-byte beats) holds the largest packet.
"""
import argparse
import os
import random
import re
import struct
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FPGA = os.path.dirname(HERE)
RTL = os.path.join(FPGA, "zcu106", "rtl", "clio_eth_frontend.v")
TB = os.path.join(FPGA, "tb", "tb_eth_frontend.v")


def cfg_params(path):
    t = open(path).read()
    p = {}
    for m in re.finditer(r"localparam\s+(?:\[[^\]]*\]\s*)?(CLIO_\w+)\s*=\s*(?:\d+'([dh]))?([0-9A-Fa-f]+)\s*;", t):
        p[m.group(1)] = int(m.group(3), 16 if m.group(2) == "h" else 10)
    return p


def ip_checksum(h):
    s = sum(struct.unpack("!%dH" % (len(h) // 2), h))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def udp_frame(dst_mac, src_mac, src_ip, dst_ip, sport, dport, payload, ihl=5, frag=0):
    opts = b"\x01" * (4 * (ihl - 5))
    ip = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(opts) + 8 + len(payload), 7, frag, 64, 17, 0, src_ip, dst_ip) + opts
    ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
    return dst_mac + src_mac + b"\x08\x00" + ip + struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def beats(frame):
    out = []
    for i in range(0, len(frame), 64):
        chunk = frame[i:i + 64]
        keep = (1 << len(chunk)) - 1
        out.append((1 if i + 64 >= len(frame) else 0, keep, int.from_bytes(chunk.ljust(64, b"\0"), "little")))
    return out


def read_packets(path, with_route):
    pkts, cur, routes, dropped = [], b"", [], None
    for line in open(path):
        f = line.split()
        if f[0] == "dropped":
            dropped = int(f[1])
            continue
        last, keep, data = int(f[0]), int(f[1], 16), int(f[2], 16).to_bytes(64, "little")
        n = bin(keep).count("1")
        if n == 0 or keep != (1 << n) - 1:
            raise SystemExit("FAIL empty or non-contiguous tkeep %x in %s" % (keep, path))
        cur += data[:n]
        if with_route:
            routes.append(int(f[3], 16).to_bytes(32, "little"))
        if last:
            pkts.append((cur, routes))
            cur, routes = b"", []
    return pkts, dropped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cfg", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    p = cfg_params(a.cfg)
    os.makedirs(a.work, exist_ok=True)
    rnd = random.Random(6)
    port = p["CLIO_UDP_PORT"]
    cases, ignored = [], 0
    frames = []
    hdr, biggest = p["CLIO_HEADER_LEN"], p["CLIO_MAX_PACKET"]
    if biggest != hdr + p["CLIO_MAX_PAYLOAD"]:
        print("FAIL cfg: CLIO_MAX_PACKET %d is not CLIO_HEADER_LEN + CLIO_MAX_PAYLOAD" % biggest)
        return 1
    tx_beats = int(re.search(r"parameter\s+TX_BEATS\s*=\s*(\d+)", open(RTL).read()).group(1))
    if tx_beats * 64 < biggest:
        print("FAIL clio_eth_tx buffers %d beats (%d bytes), proto's largest packet is %d bytes"
              % (tx_beats, tx_beats * 64, biggest))
        return 1
    # packet lengths: around the beat and header boundaries (14-byte Ethernet and 42-byte
    # Ethernet/IPv4/UDP headers realign the payload), the Clio header alone and one byte
    # more, and the largest packet (n % 3 == 2 is raw, the others UDP: both encapsulations).
    lens = [1, 2, 13, 14, 21, 22, 23, 41, 42, 43, 48, 50, 63, hdr, hdr + 1, 106, 127, 128, 129, 200,
            biggest, biggest - 1, biggest]
    for n, plen in enumerate(lens):
        payload = bytes(rnd.randrange(256) for _ in range(plen))
        cmac, nmac = bytes([2, 0, 0, 0, 1, n]), bytes([2, 0, 0, 0, 2, 1])
        if n % 3 == 2:
            frames.append(nmac + cmac + struct.pack("!H", p["CLIO_ETHERTYPE"]) + payload)
            cases.append(("raw", payload, cmac, nmac, None, None, None, None))
        else:
            cip, nip, cport = bytes([10, 0, 0, 10 + n]), bytes([10, 0, 0, 2]), 40000 + n
            frames.append(udp_frame(nmac, cmac, cip, nip, cport, port, payload))
            cases.append(("udp", payload, cmac, nmac, cip, nip, cport, port))
        if n % 4 == 1:   # something the node must ignore, between Clio frames
            bad = [bytes(6) + cmac + b"\x08\x06" + bytes(28),                                                  # ARP
                   udp_frame(nmac, cmac, b"\x0a\0\0\x09", b"\x0a\0\0\x02", 1234, port + 1, b"x" * 60),        # other port
                   udp_frame(nmac, cmac, b"\x0a\0\0\x09", b"\x0a\0\0\x02", 1234, port, b"y" * 60, ihl=6),     # IPv4 options
                   udp_frame(nmac, cmac, b"\x0a\0\0\x09", b"\x0a\0\0\x02", 1234, port, b"z" * 60, frag=0x2000)]  # fragment
            frames.append(bad[ignored % len(bad)])
            ignored += 1
    frames.append(bytes(6) + bytes(6) + struct.pack("!H", p["CLIO_ETHERTYPE"]))   # runt: no payload
    ignored += 1
    inp = os.path.join(a.work, "frames.hex")
    with open(inp, "w") as f:
        for fr in frames:
            for last, keep, data in beats(fr):
                f.write("%d %016x %0128x\n" % (last, keep, data))
    sim = os.path.join(a.work, "tb_eth_frontend.vvp")
    cfgdir = os.path.dirname(os.path.abspath(a.cfg))
    r = subprocess.run(["iverilog", "-g2012", "-I", cfgdir, "-o", sim, TB, RTL], capture_output=True, text=True)
    if r.returncode:
        print("FAIL iverilog:\n" + r.stdout + r.stderr)
        return 1
    rxo, txo = os.path.join(a.work, "rx_out.hex"), os.path.join(a.work, "tx_out.hex")
    r = subprocess.run(["vvp", "-n", sim, "+in=" + inp, "+rxout=" + rxo, "+txout=" + txo], capture_output=True, text=True, timeout=600)
    if r.returncode or "DONE" not in r.stdout:
        print("FAIL simulation:\n" + r.stdout + r.stderr)
        return 1
    rx, rx_dropped = read_packets(rxo, True)
    tx, tx_dropped = read_packets(txo, False)
    errors = []
    if len(rx) != len(cases):
        errors.append("RX passed %d packets, want %d" % (len(rx), len(cases)))
    if rx_dropped != ignored:
        errors.append("RX dropped %s frames, want %d" % (rx_dropped, ignored))
    if tx_dropped != 0:
        errors.append("TX dropped %s packets" % tx_dropped)
    o = lambda k: p["CLIO_ROUTE_" + k]
    for i, (case, (pkt, routes)) in enumerate(zip(cases, rx)):
        kind, payload, cmac, nmac, cip, nip, cport, nport = case
        if pkt != payload:
            errors.append("packet %d (%s, %d bytes): RX bytes differ" % (i, kind, len(payload)))
        if any(r != routes[0] for r in routes):
            errors.append("packet %d: route changes within the packet" % i)
        rt = routes[0]
        enc = p["CLIO_ENCAP_UDP"] if kind == "udp" else p["CLIO_ENCAP_RAW"]
        want = {"ENCAP": bytes([enc]), "PEER_MAC": cmac, "LOCAL_MAC": nmac}
        if kind == "udp":
            want.update({"PEER_IP": cip, "LOCAL_IP": nip, "PEER_PORT": struct.pack("!H", cport), "LOCAL_PORT": struct.pack("!H", nport)})
        for k, v in want.items():
            if rt[o(k):o(k) + len(v)] != v:
                errors.append("packet %d: route %s = %s, want %s" % (i, k, rt[o(k):o(k) + len(v)].hex(), v.hex()))
        if i >= len(tx):
            continue
        frame = tx[i][0]
        if kind == "raw":
            exp = cmac + nmac + struct.pack("!H", p["CLIO_ETHERTYPE"]) + payload
            if frame != exp:
                errors.append("packet %d: raw reply frame differs" % i)
        else:
            ip = frame[14:34]
            if frame[:14] != cmac + nmac + b"\x08\x00" or ip_checksum(ip) != 0:
                errors.append("packet %d: reply Ethernet header or IPv4 checksum wrong" % i)
            tot, proto, src, dst = struct.unpack("!2xH5xB2x4s4s", ip)
            sp, dp, ulen, ucs = struct.unpack("!HHHH", frame[34:42])
            if (tot, proto, src, dst, sp, dp, ulen, ucs) != (28 + len(payload), 17, nip, cip, nport, cport, 8 + len(payload), 0):
                errors.append("packet %d: reply IPv4/UDP fields %s" % (i, (tot, proto, src, dst, sp, dp, ulen, ucs)))
            if frame[42:] != payload:
                errors.append("packet %d: reply payload differs" % i)
    if len(tx) != len(cases):
        errors.append("TX sent %d frames, want %d" % (len(tx), len(cases)))
    if errors:
        for e in errors[:20]:
            print("FAIL " + e)
        return 1
    print("ok   network front end: %d Clio packets (UDP and raw, 1..%d bytes = HEADER_LEN %d + MAX_PAYLOAD %d) in and "
          "answered along their routes, %d other frames dropped; TX buffer %d bytes"
          % (len(cases), max(len(c[1]) for c in cases), hdr, p["CLIO_MAX_PAYLOAD"], ignored, tx_beats * 64))
    return 0


if __name__ == "__main__":
    sys.exit(main())
