#!/usr/bin/env python3
"""Utilisation of the Yosys run of fpga/scripts/yosys_board.sh against the ZU7EV.

  util_report.py SYNTH_DIR [--out FILE.md] [--units UTILIZATION.md]
  util_report.py --selftest

Counting (same conventions as hw/scripts/util_table.sh): LUT = LUT1..LUT6 cells; LUTRAM
cells (RAM32M/RAM64M/RAM*X1*) and SRLs listed apart (the budget line below counts the LUTs they
occupy, LUT_AS_MEMORY); FF = FD* cells; BRAM36 = RAMB36E2 +
RAMB18E2 / 2; DSP = DSP48E2. Device totals of the xczu7ev (DS891): 230,400 LUTs, 460,800 FFs,
312 BRAM36, 1,728 DSP48E2. Yosys counts are pre-place-and-route estimates; Vivado's differ.
The black-boxed vendor IP (PS, MIG, 10G subsystem, AXI-Stream/AXI converters, the DRAM
crossbar) is not counted; the cells of the board run that are black boxes are listed so a
missing IP stands out.

With --units (docs/utilization.md, whose table `make synth` writes), the fast path less its
offload units (the Clio-KV unit and the pointer chaser, at their per-module figures: the board
run flattens them into the fast path) is printed against the footprint budget of issue 42
(FOOTPRINT_BUDGET), so a change that blows it shows in CI's log. Its LUTs are those of the
logic plus those used as memory (LUT RAM and shift registers: a RAM32M16 or RAM64M8 is a slice's
eight LUTs), as Vivado's "CLB LUTs" counts them: moving a table from flip-flops into LUT RAM
is not free, and from LUT RAM into block RAM it saves LUTs. It is an estimate: the units
synthesised alone are not exactly the cells they leave in the flattened fast path.
"""
import argparse
import os
import re
import sys

ZU7EV = {"LUT": 230400, "FF": 460800, "BRAM36": 312, "DSP": 1728}
# The fast path without its offload units, in the board run (issue 42, goal 1; Clio's own
# virtual memory system and network stack take about 16,400 LUTs of the same device).
FOOTPRINT_BUDGET = {"LUT": 25000, "FF": 20000}
OFFLOAD_UNITS = ("clio_kv", "pointer_chase")
# LUTs each LUT RAM or shift-register cell occupies (UltraScale+ CLB, UG574).
LUT_AS_MEMORY = {"RAM32M": 4, "RAM32M16": 8, "RAM64M": 4, "RAM64M8": 8, "RAM32X1S": 1,
                 "RAM32X1D": 2, "RAM64X1S": 1, "RAM64X1D": 2, "RAM128X1S": 2, "RAM128X1D": 4,
                 "RAM256X1S": 4, "RAM256X1D": 8, "SRL16E": 1, "SRLC16E": 1, "SRLC32E": 1}
BLACKBOXES = {"zynq_ps", "ddr4_0", "eth_10g_sfp0", "axis_rx_64_512", "axis_tx_512_64",
              "axis_fifo_512_async", "axi_cc_dram", "axi_xbar_dram"}
def sections(path):
    """Cell counts per module section of a Yosys `stat` report ('=== name ==='); the
    'design hierarchy' section holds the totals of the whole design."""
    out, cur, in_cells = {}, None, False
    for line in open(path):
        m = re.match(r"=== (.*) ===", line.strip())
        if m:
            cur, in_cells = m.group(1), False
            out[cur] = {}
            continue
        if cur is None:
            continue
        if line.strip().startswith("Number of cells"):
            in_cells = True
            continue
        m = re.match(r"\s+(\S+)\s+(\d+)\s*$", line)
        if in_cells and m:
            out[cur][m.group(1)] = out[cur].get(m.group(1), 0) + int(m.group(2))
        elif in_cells and line.strip():
            in_cells = False
    return out


def summarise(c):
    s = {"LUT": 0, "FF": 0, "BRAM36": 0.0, "DSP": 0, "LUTRAM": 0, "SRL": 0, "LUTMEM": 0}
    for k, v in c.items():
        s["LUTMEM"] += LUT_AS_MEMORY.get(k, 0) * v
        if re.fullmatch(r"LUT[1-6]", k):
            s["LUT"] += v
        elif re.fullmatch(r"FD[CPRSE]+", k):
            s["FF"] += v
        elif k == "RAMB36E2":
            s["BRAM36"] += v
        elif k == "RAMB18E2":
            s["BRAM36"] += v / 2
        elif k == "DSP48E2":
            s["DSP"] += v
        elif re.match(r"RAM(32|64|128|256)(M|M16|X1[SD])", k):
            s["LUTRAM"] += v
        elif k.startswith("SRL"):
            s["SRL"] += v
    return s


def unit_figures(path):
    """LUT and FF of each offload unit from the per-module table (`| module | LUT | FF | ...`)."""
    out = {}
    for line in open(path):
        f = [x.strip() for x in line.strip().strip("|").split("|")]
        if len(f) >= 3 and f[0] in OFFLOAD_UNITS and f[1].isdigit() and f[2].isdigit():
            out[f[0]] = (int(f[1]), int(f[2]))
    return out


def budget_line(fast, units_path):
    """The fast path less its offload units against FOOTPRINT_BUDGET, one line."""
    units = unit_figures(units_path)
    absent = [u for u in OFFLOAD_UNITS if u not in units]
    if absent:
        return "Footprint budget: no figures for %s in %s\n" % (", ".join(absent), units_path)
    logic = fast["LUT"] - sum(u[0] for u in units.values())
    lut = logic + fast["LUTMEM"]
    ff = fast["FF"] - sum(u[1] for u in units.values())
    verdict = lambda v, k: ("within" if v <= FOOTPRINT_BUDGET[k] else "OVER by %d" % (v - FOOTPRINT_BUDGET[k]))
    return ("Footprint budget (fast path less %s at their %s figures): %d LUT (%d logic + %d as "
            "memory) of %d (%s), %d FF of %d (%s)\n" % (
                " and ".join("%s %d LUT / %d FF" % (u, units[u][0], units[u][1]) for u in OFFLOAD_UNITS),
                units_path, lut, logic, fast["LUTMEM"], FOOTPRINT_BUDGET["LUT"], verdict(lut, "LUT"),
                ff, FOOTPRINT_BUDGET["FF"], verdict(ff, "FF")))


def selftest():
    """The budget line's arithmetic and its verdicts on a made-up table."""
    import tempfile
    with tempfile.NamedTemporaryFile("w", suffix=".md", delete=False) as f:
        f.write("| module | LUT | FF |\n|---|---:|---:|\n| clio_kv | 1000 | 300 |\n"
                "| pointer_chase | 500 | 200 |\n| tlb | 7 | 7 |\n")
    within = budget_line({"LUT": 26000, "FF": 20500, "LUTMEM": 0}, f.name)
    assert "24500 LUT (24500 logic + 0 as memory) of 25000 (within)" in within, within
    assert "20000 FF of 20000 (within)" in within, within
    over = budget_line({"LUT": 30000, "FF": 20501, "LUTMEM": 16}, f.name)
    assert "28516 LUT (28500 logic + 16 as memory)" in over and "OVER by 3516" in over, over
    assert "OVER by 1)" in over, over
    mem = summarise({"LUT6": 3, "RAM32M16": 2, "RAM64M8": 1, "RAM64X1D": 1, "SRLC32E": 4})
    assert (mem["LUT"], mem["LUTMEM"], mem["LUTRAM"], mem["SRL"]) == (3, 16 + 8 + 2 + 4, 4, 4), mem
    with open(f.name, "w") as g:
        g.write("| clio_kv | 1000 | 300 |\n")
    assert "no figures for pointer_chase" in budget_line({"LUT": 1, "FF": 1, "LUTMEM": 0}, f.name)
    os.unlink(f.name)
    print("util_report selftest: ok")
    return 0


def pct(v, k):
    return "%.2f%%" % (100.0 * v / ZU7EV[k])


def main():
    ap = argparse.ArgumentParser()
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    ap.add_argument("synth_dir")
    ap.add_argument("--out")
    ap.add_argument("--units", help="per-module table with the offload units' rows")
    a = ap.parse_args()
    lines = ["| block | LUT | FF | BRAM36 | DSP | LUTRAM cells | SRL |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    p = os.path.join(a.synth_dir, "board.stat")
    if not os.path.exists(p):
        print("FAIL: missing Yosys statistics " + p)
        return 1
    sec = sections(p)
    find = lambda suffix: next((v for k, v in sec.items() if k == suffix or k.endswith("\\" + suffix)), None)
    rows = [("fast path (generated fastpath_top)", find("fastpath_top")),
            ("ring/register window (clio_ring_window)", find("clio_ring_window")),
            ("board top total (fast path, window, network front end, glue)", sec.get("design hierarchy"))]
    missing = [label for label, c in rows if c is None]
    for label, c in rows:
        if c is None:
            continue
        s = summarise(c)
        lines.append("| %s | %d (%s) | %d (%s) | %g (%s) | %d (%s) | %d | %d |" % (
            label, s["LUT"], pct(s["LUT"], "LUT"), s["FF"], pct(s["FF"], "FF"),
            s["BRAM36"], pct(s["BRAM36"], "BRAM36"), s["DSP"], pct(s["DSP"], "DSP"),
            s["LUTRAM"], s["SRL"]))
    lines.append("| xczu7ev (device) | %d | %d | %d | %d | | |" % (ZU7EV["LUT"], ZU7EV["FF"], ZU7EV["BRAM36"], ZU7EV["DSP"]))
    if missing:
        print("FAIL: no statistics in %s for: %s" % (p, ", ".join(missing)))
        return 1
    board = sec.get("clio_zcu106_top", {})
    bb = sorted(k for k in board if k in BLACKBOXES)
    absent = sorted(BLACKBOXES - set(bb))
    text = "\n".join(lines) + "\n\nBlack-boxed vendor IP in the board run: %s\n" % ", ".join(bb)
    if a.units:
        text += "\n" + budget_line(summarise(find("fastpath_top")), a.units)
    # The fast path's deepest register-to-register path in the board netlist (logic_depth.py,
    # written by fpga.mk beside board.stat): the executor's figure, which no per-module run has.
    d = os.path.join(a.synth_dir, "fastpath_top.depth")
    if os.path.exists(d):
        rows = open(d).read().splitlines()
        f = rows[0].split() if rows else []
        if len(f) >= 3:
            text += "\nDeepest fast-path logic (board netlist, hw/scripts/logic_depth.py): %s LUT levels, `%s`\n" % (
                f[1], " ".join(f[3:]))
        # The deepest path into each of the deepest endpoints (`--paths`), one table row each.
        ends = [r.split() for r in rows[1:] if r.startswith("  ")]
        if ends:
            text += "\n| LUT levels | LUTs | from | to (endpoint) |\n|---:|---:|---|---|\n"
            for e in ends:
                text += "| %s | %s | `%s` | `%s` |\n" % (e[0], e[1], e[2], " ".join(e[4:]))
    print(text, end="")
    if absent:
        print("FAIL: vendor IP not instantiated in the board run: " + ", ".join(absent))
        return 1
    if a.out:
        open(a.out, "w").write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
