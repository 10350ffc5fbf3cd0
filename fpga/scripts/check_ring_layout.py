#!/usr/bin/env python3
"""The ring/register window of the board comes from proto/, and `clio-slowpath --uio` accepts it.

  check_ring_layout.py --regs build/rtl/clio_ring_regs.vh --daemon PATH/clio-slowpath --work DIR

Static (the layout is proto's, not retyped):
  * clio_ring_regs.vh is the output of `clio-spec verilog-regs` (its generated banner);
  * the window RTL and its testbench `include` it and the window uses every CLIO_REG_* it
    defines (a register added to proto fails here until the hardware serves it);
  * the board top feeds the window (and the fast path) from clio_board_cfg.vh, which
    fpga/scripts/board_cfg.rs computes with clio-proto (MemoryLayout, FREE_PAGE_FIFO_DEPTH);
  * the AXI range in fpga/zcu106/config.tcl covers CLIO_WINDOW_BYTES, the device tree overlay
    has the same base and size, the systemd unit does not map another size, and its ExecStop
    writes proto's STOP_REQUESTED to base + CLIO_REG_DAEMON_STATE.
Dynamic (iverilog + the real daemon):
  1. the window RTL after reset, read word by word over its AXI port (the ARM's view), is
     written to an image file; the testbench also checks every register value and the RX
     descriptor path against the .vh;
  2. `clio-slowpath --uio IMAGE --uio-size CLIO_WINDOW_BYTES` (the board's code path:
     RingWindow::open on a device with an explicit size) must accept the image, report
     RUNNING and heartbeats, push its free pages into the TX ring, and stop with STOPPED when
     asked through DAEMON_STATE;
  3. the TX ring and head the daemon wrote are written back into the RTL over AXI; the window
     must hand exactly TX-head descriptors to the fast-path side, each a FREE_PAGE
     (CLIO_KIND_FREE_PAGE) with a distinct frame number.
"""
import argparse
import mmap
import os
import re
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FPGA = os.path.dirname(HERE)
REPO = os.path.dirname(FPGA)
WINDOW = os.path.join(FPGA, "zcu106", "rtl", "clio_ring_window.v")
TOP = os.path.join(FPGA, "zcu106", "rtl", "clio_zcu106_top.v")
TB = os.path.join(FPGA, "tb", "tb_ring_window.v")
CONFIG = os.path.join(FPGA, "zcu106", "config.tcl")
OVERLAY = os.path.join(FPGA, "zcu106", "linux", "clio-ring-overlay.dtso")
UNIT = os.path.join(FPGA, "zcu106", "linux", "clio-slowpath.service")

errors = []


def err(msg):
    errors.append(msg)
    print("FAIL " + msg)


def ok(msg):
    print("ok   " + msg)


def vh_params(path):
    text = open(path).read()
    if not text.startswith("// Generated from clio-proto"):
        err("%s is not the output of `clio-spec verilog-regs`" % path)
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"localparam\s+(CLIO_\w+)\s*=\s*(\d+)\s*;", text)}


def rust_const(path, name):
    m = re.search(r"pub const %s:\s*\w+\s*=\s*([0-9_]+)\s*;" % name, open(path).read())
    if not m:
        err("%s not found in %s" % (name, path))
        return None
    return int(m.group(1).replace("_", ""))


def size_value(s):
    m = re.fullmatch(r"(0x[0-9a-fA-F]+|\d+)([KMG]?)", s.strip())
    if not m:
        return None
    v = int(m.group(1), 0)
    return v * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2)]


def static_checks(p):
    win = open(WINDOW).read()
    for f, text in ((WINDOW, win), (TB, open(TB).read())):
        if '`include "clio_ring_regs.vh"' not in text:
            err("%s does not include clio_ring_regs.vh" % os.path.relpath(f, REPO))
    regs = sorted(k for k in p if k.startswith("CLIO_REG_"))
    unused = [r for r in regs if not re.search(r"\b%s\b" % r, win)]
    if unused:
        err("the window RTL does not serve proto registers: " + ", ".join(unused))
    else:
        ok("window RTL serves all %d proto registers (%s)" % (len(regs), " ".join(r[9:] for r in regs)))
    top = open(TOP).read()
    if '`include "clio_board_cfg.vh"' not in top:
        err("the board top does not include clio_board_cfg.vh (board parameters from proto)")
    for param, name in (("DRAM_BYTES", "CLIO_BOARD_DRAM_BYTES"), ("PAGE_SHIFT", "CLIO_BOARD_PAGE_SHIFT"),
                        ("FIFO_DEPTH", "CLIO_BOARD_FIFO_DEPTH")):
        if not re.search(r"\.%s\(%s\)" % (param, name), top):
            err("the board top does not give the window .%s(%s)" % (param, name))
    if not errors:
        ok("board top gives the window DRAM bytes, page shift and FIFO depth from clio_board_cfg.vh (proto)")
    cfg = open(CONFIG).read()
    base = int(re.search(r"set clio_ring_base\s+(\S+)", cfg).group(1), 0)
    rng = size_value(re.search(r"set clio_ring_range\s+(\S+)", cfg).group(1))
    aw = int(re.search(r"\.AXI_ADDR_WIDTH\((\d+)\)", top).group(1))
    if rng < p["CLIO_WINDOW_BYTES"] or (1 << aw) != rng:
        err("AXI range %d / window address width %d do not fit CLIO_WINDOW_BYTES %d" % (rng, aw, p["CLIO_WINDOW_BYTES"]))
    else:
        ok("AXI window 0x%X + %d bytes (%d address bits) holds CLIO_WINDOW_BYTES = %d" % (base, rng, aw, p["CLIO_WINDOW_BYTES"]))
    dts = open(OVERLAY).read()
    m = re.search(r"reg\s*=\s*<\s*(0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)\s+(0x[0-9a-fA-F]+)\s*>", dts)
    if not m:
        err("no 2-cell reg property in the overlay")
    else:
        dbase = int(m.group(1), 16) << 32 | int(m.group(2), 16)
        dsize = int(m.group(3), 16) << 32 | int(m.group(4), 16)
        if (dbase, dsize) != (base, rng):
            err("overlay reg 0x%X+0x%X differs from the Tcl address map 0x%X+0x%X" % (dbase, dsize, base, rng))
        else:
            ok("device tree overlay maps the window at 0x%X, 0x%X bytes" % (dbase, dsize))
        if not re.search(r"@%x\b" % base, dts, re.I):
            err("overlay node name does not carry the unit address %x" % base)
    unit = "".join(l for l in open(UNIT) if not l.lstrip().startswith("#"))
    m = re.search(r"--uio-size[ =](\S+)", unit)
    if m and size_value(m.group(1)) != p["CLIO_WINDOW_BYTES"]:
        err("systemd unit maps --uio-size %s, the window is %d bytes" % (m.group(1), p["CLIO_WINDOW_BYTES"]))
    elif "--uio " not in unit and "--uio=" not in unit:
        err("systemd unit does not start clio-slowpath with --uio")
    else:
        ok("systemd unit runs clio-slowpath --uio with the proto window size")
    m = re.search(r"devmem\s+(0x[0-9a-fA-F]+)\s+32\s+(\d+)", unit)
    stop = rust_const(os.path.join(REPO, "proto", "src", "ring.rs"), "STOP_REQUESTED")
    if m:
        want = (base + p["CLIO_REG_DAEMON_STATE"], stop)
        got = (int(m.group(1), 16), int(m.group(2)))
        if got != want:
            err("systemd ExecStop writes %d to 0x%X, proto's STOP_REQUESTED is %s at 0x%X" % (got[1], got[0], want[1], want[0]))
        else:
            ok("systemd ExecStop writes STOP_REQUESTED (%d) to DAEMON_STATE (0x%X)" % want[::-1])


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    return r.returncode, r.stdout + r.stderr


def dynamic_checks(p, regs_dir, daemon, work):
    os.makedirs(work, exist_ok=True)
    sim = os.path.join(work, "tb_ring_window.vvp")
    rc, out = run(["iverilog", "-g2012", "-I", regs_dir, "-o", sim, TB, WINDOW])
    if rc:
        err("iverilog: " + out)
        return
    hexf = os.path.join(work, "window_reset.hex")
    rc, out = run(["vvp", "-n", sim, "+mode=init", "+image=" + hexf], timeout=600)
    if rc or "PASS tb_ring_window" not in out:
        err("window testbench (init):\n" + out)
        return
    ok("window testbench: registers, RX descriptors over AXI, ring-full back-pressure, ARM-owned registers")
    words = [int(l, 16) for l in open(hexf)]
    if len(words) * 4 != p["CLIO_WINDOW_BYTES"]:
        err("image has %d bytes, CLIO_WINDOW_BYTES is %d" % (len(words) * 4, p["CLIO_WINDOW_BYTES"]))
        return
    img = os.path.join(work, "window.img")
    with open(img, "wb") as f:
        f.write(struct.pack("<%dI" % len(words), *words))

    # the daemon, on the image, through its --uio code path
    proc = subprocess.Popen([daemon, "--uio", img, "--uio-size", str(p["CLIO_WINDOW_BYTES"]), "--wait-secs", "5"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    fd = os.open(img, os.O_RDWR)
    m = mmap.mmap(fd, p["CLIO_WINDOW_BYTES"])
    rd = lambda off: struct.unpack_from("<I", m, off)[0]
    state, hb0 = None, None
    deadline = time.time() + 20
    while time.time() < deadline and proc.poll() is None:
        state = rd(p["CLIO_REG_DAEMON_STATE"])
        if state == 1:
            hb0 = rd(p["CLIO_REG_DAEMON_HEARTBEAT"])
            time.sleep(0.3)
            break
        time.sleep(0.02)
    hb1 = rd(p["CLIO_REG_DAEMON_HEARTBEAT"])
    tx_head = rd(p["CLIO_REG_TX_HEAD"])
    struct.pack_into("<I", m, p["CLIO_REG_DAEMON_STATE"], 3)     # STOP_REQUESTED
    try:
        out, _ = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        err("clio-slowpath did not stop on STOP_REQUESTED")
    final_state = rd(p["CLIO_REG_DAEMON_STATE"])
    m.flush()
    tx_bytes = bytes(m[:])
    m.close()
    os.close(fd)
    if state != 1 or hb0 is None:
        err("clio-slowpath --uio never reported RUNNING on the RTL's window (state %s):\n%s" % (state, out))
        return
    if proc.returncode != 0 or final_state != 2:
        err("clio-slowpath exit %s, final state %d (want 0, STOPPED=2):\n%s" % (proc.returncode, final_state, out))
        return
    if hb1 <= hb0:
        err("daemon heartbeat did not advance (%d -> %d)" % (hb0, hb1))
    if tx_head == 0:
        err("the daemon pushed nothing into the TX ring")
        return
    ok("clio-slowpath --uio accepted the RTL's window: RUNNING, heartbeat %d -> %d, %d TX descriptors, STOPPED on request"
       % (hb0, hb1, tx_head))

    # the daemon's TX ring back through the RTL to the fast-path side
    dhex = os.path.join(work, "window_daemon.hex")
    with open(dhex, "w") as f:
        for (w,) in struct.iter_unpack("<I", tx_bytes):
            f.write("%08x\n" % w)
    txout = os.path.join(work, "tx_stream.hex")
    rc, out = run(["vvp", "-n", sim, "+mode=tx", "+image=" + dhex, "+txout=" + txout], timeout=600)
    if rc or "PASS tb_ring_window" not in out:
        err("window testbench (tx):\n" + out)
        return
    descs = [int(l, 16).to_bytes(p["CLIO_DESC_BYTES"], "little") for l in open(txout)]
    body = p["CLIO_DESC_BODY"]
    kinds = {int.from_bytes(d[p["CLIO_DESC_KIND"]:p["CLIO_DESC_KIND"] + 2], "little") for d in descs}
    pfns = [int.from_bytes(d[body + 16:body + 24], "little") for d in descs]
    if len(descs) != tx_head:
        err("window handed out %d descriptors, the daemon published %d" % (len(descs), tx_head))
    elif kinds != {p["CLIO_KIND_FREE_PAGE"]}:
        err("streamed descriptor kinds %s, want only FREE_PAGE (%d)" % (sorted(kinds), p["CLIO_KIND_FREE_PAGE"]))
    elif len(set(pfns)) != len(pfns):
        err("free pages pushed twice: %s" % pfns)
    else:
        ok("window handed the daemon's %d FREE_PAGE descriptors to the fast-path side (frames %d..%d, distinct)"
           % (len(descs), min(pfns), max(pfns)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--regs", required=True)
    ap.add_argument("--daemon", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    if not os.path.exists(a.regs):
        print("FAIL %s missing: run `make fpga-regs`" % a.regs)
        return 1
    p = vh_params(a.regs)
    static_checks(p)
    if not os.access(a.daemon, os.X_OK):
        err("daemon %s is not built" % a.daemon)
    else:
        dynamic_checks(p, os.path.dirname(os.path.abspath(a.regs)), a.daemon, a.work)
    if errors:
        print("check_ring_layout: %d FAILED" % len(errors))
        return 1
    print("check_ring_layout: all pass")
    return 0


if __name__ == "__main__":
    sys.exit(main())
