#!/usr/bin/env python3
"""Deepest register-to-register logic of a Yosys-mapped UltraScale+ netlist, in LUT levels.

Usage: logic_depth.py NETLIST.json MODULE [--paths N] [--trace ENDPOINT] [--into ENDPOINT]
       logic_depth.py --selftest
  -> one line: "MODULE LEVELS LUTS FROM -> TO"; with --paths, then up to N lines
     "  LEVELS LUTS FROM -> TO": the deepest path into each of the N deepest endpoints (a
     register, RAM or output port, its bits taken together), deepest first. With --trace,
     the deepest path into the endpoint named ENDPOINT (as --paths names it, e.g.
     `la.s_write_in_va$q`), cell by cell: arrival, cell type, the net it drives. With --into,
     every start of a path into ENDPOINT (a register's or RAM's output, a module input; its
     bits taken together) with the deepest path from it, deepest first (up to N with --paths):
     which inputs of a deep endpoint are the late ones. --selftest checks all of this on a
     small netlist built in the script.

Input is `write_json` after `synth_xilinx -family xcup -flatten`. Every path starts at a
register output or a module input and ends at a register input or a module output; the
depth of a path is the sum of the delays of its cells in this model (one unit = one LUT
level, a LUT plus the general routing into the next one, about 0.5 ns on a -2 part):

  LUT1..LUT6                          1     (the unit)
  MUXF7, MUXF8, MUXF9                 0.25  (dedicated slice muxes right after the LUTs)
  CARRY4, CARRY8                      0.25  (one carry-chain cell, 4 or 8 bits, no routing)
  INV                                 0     (absorbed into the LUT it drives)
  RAM32M*/RAM64M*/RAM*X1* read path   1     (LUTRAM: a read address to its data out is a LUT
                                            read; each output counts from its own port's
                                            address only: DOx from ADDRx, SPO from A, DPO
                                            from DPRA; the write is clocked)
  DSP48E2 without M and P registers   4     (a combinational 27x18 multiply, ~2 ns)

Every other cell (FD*, RAMB*, registered DSP48E2, SRL*, I/O buffers) is a path boundary.
The model has no placement: it ignores fan-out and long routes, so it is a lower bound on
what place and route sees, and a carry chain longer than the model's 0.25 per cell could be
worse on a real part (Vivado would use CARRY8: half the cells).
"""
import json
import re
import sys

COMB_WEIGHT = [
    (re.compile(r"^LUT[1-6]$"), 1.0),
    (re.compile(r"^MUXF[789]$"), 0.25),
    (re.compile(r"^CARRY[48]$"), 0.25),
    (re.compile(r"^INV$"), 0.0),
]
LUTRAM = re.compile(r"^RAM(32|64|128|256)(M|M8|M16|X1[SD])")


def lutram_read_ports(cell):
    """{output port: its read-address input ports} of a LUTRAM cell."""
    dirs = cell["port_directions"]
    outs = [p for p, d in dirs.items() if d == "output"]
    ins = [p for p, d in dirs.items() if d == "input"]
    ports = {}
    for o in outs:
        if o.startswith("DO") and len(o) == 3:      # RAM32M/64M/M8/M16: DOx <- ADDRx
            ports[o] = [p for p in ins if p == "ADDR" + o[2]]
        elif o == "DPO":                            # RAM*X1D: the second read port
            ports[o] = [p for p in ins if p.startswith("DPRA")]
        else:                                       # SPO / O: the read-write port
            ports[o] = [p for p in ins if re.match(r"^A(\d+)?$|^A_", p)]
    return ports
DSP_WEIGHT = 4.0


def param_int(v):
    """A Yosys JSON parameter: a string of binary digits, or a number."""
    v = str(v)
    return int(v, 2) if v and set(v) <= {"0", "1"} else int(v)


def cell_models(cell):
    """[(weight, comb input ports, output ports)] of a cell that passes logic through (one
    entry per independent read port of a LUTRAM), else []."""
    t = cell["type"]
    dirs = cell["port_directions"]
    outs = [p for p, d in dirs.items() if d == "output"]
    for pat, w in COMB_WEIGHT:
        if pat.match(t):
            return [(w, [p for p, d in dirs.items() if d == "input"], outs)]
    if LUTRAM.match(t):
        return [(1.0, ins, [o]) for o, ins in lutram_read_ports(cell).items()]
    if t == "DSP48E2":
        params = cell.get("parameters", {})
        if all(param_int(params.get(r, "1")) == 0 for r in ("MREG", "PREG")):
            return [(DSP_WEIGHT, [p for p in ("A", "B", "C", "D") if p in cell["connections"]],
                     outs)]
    return []


def main():
    args = sys.argv[1:]
    paths = 0
    trace = None
    if "--paths" in args:
        i = args.index("--paths")
        paths = int(args[i + 1])
        del args[i:i + 2]
    if "--trace" in args:
        i = args.index("--trace")
        trace = args[i + 1]
        del args[i:i + 2]
        paths = max(paths, 1)
    into = None
    if "--into" in args:
        i = args.index("--into")
        into = args[i + 1]
        del args[i:i + 2]
    if len(args) != 2:
        sys.exit(__doc__.split("\n\n")[1])
    path, top = args[0], args[1]
    report(json.load(open(path))["modules"][top], top, paths, trace, into)


def report(mod, top, paths=0, trace=None, into=None):
    """Print the report of module `mod` (a Yosys JSON module) named `top`."""
    if into is not None:
        paths = paths or 1 << 30
    if trace is not None:
        paths = max(paths, 1)
    names = {}
    for name, n in mod["netnames"].items():
        for b in n["bits"]:
            if isinstance(b, int) and (b not in names or (names[b][0] and not n.get("hide_name", 0))):
                names[b] = (n.get("hide_name", 0), name)
    # A node per combinational cell, or per read port of a LUTRAM ("cell#port"); `cells` maps
    # each node to its cell.
    comb = {}
    driver = {}
    cells = {}
    for cname, c in mod["cells"].items():
        models = cell_models(c)
        for weight, ins, outs in models:
            node = cname if len(models) == 1 else f"{cname}#{outs[0]}"
            comb[node] = (weight, ins, outs)
            cells[node] = c
            for p in outs:
                for b in c["connections"].get(p, []):
                    if isinstance(b, int):
                        driver[b] = node
    arrival = {}
    via = {}
    lut_count = {}
    # Iterative depth-first evaluation (netlists are deep; no recursion).
    for start in comb:
        if start in arrival:
            continue
        stack = [(start, False)]
        on_stack = set()
        while stack:
            cname, done = stack.pop()
            if cname in arrival:
                continue
            weight, ins, _ = comb[cname]
            preds = [driver[b] for p in ins for b in cells[cname]["connections"].get(p, [])
                     if isinstance(b, int) and b in driver]
            if not done:
                if cname in on_stack:
                    sys.exit(f"{top}: combinational loop through {cname}")
                on_stack.add(cname)
                stack.append((cname, True))
                stack.extend((p, False) for p in preds if p not in arrival)
                continue
            on_stack.discard(cname)
            best, src = 0.0, None
            for p in preds:
                if arrival[p] > best:
                    best, src = arrival[p], p
            arrival[cname] = best + weight
            via[cname] = src
            is_lut = 1 if cells[cname]["type"].startswith("LUT") else 0
            lut_count[cname] = lut_count.get(src, 0) + is_lut if src else is_lut
    if not arrival:
        print(f"{top} 0 0 - -> -")
        return
    end = max(arrival, key=lambda c: (arrival[c], lut_count[c]))
    first = end
    while via[first] is not None:
        first = via[first]

    def net_of(cname, direction):
        c = cells[cname]
        _, ins, outs = comb[cname]
        ports = ins if direction == "input" else outs
        for p in ports:
            for b in c["connections"].get(p, []):
                if isinstance(b, int) and (direction == "output" or b not in driver):
                    return names.get(b, (1, f"bit{b}"))[1]
        # Every input comes from a cell of no delay (a LUTRAM's read, a constant-free mux):
        # name the path's start by the net it reads.
        for p in ports:
            for b in c["connections"].get(p, []):
                if isinstance(b, int):
                    return names.get(b, (1, f"bit{b}"))[1]
        return "?"

    # Yosys escapes in generated names (`$\\name`) would read as escapes further down the line.
    def clean(n):
        return n.replace("\\", "")

    def start_of(node):
        while via[node] is not None:
            node = via[node]
        return node

    print(f"{top} {arrival[end]:g} {lut_count[end]} "
          f"{clean(net_of(first, 'input'))} -> {clean(net_of(end, 'output'))}")
    if paths:
        # Endpoints: the boundary cells (registers, RAMs, ...) and module output ports that
        # read a node's output, each named by what it drives (a register by its Q net), its
        # bits taken together.
        def base(n):
            return re.sub(r"\[\d+(:\d+)?\]$", "", clean(n))

        end_name = {}
        for cname, c in mod["cells"].items():
            if cell_models(c):
                continue
            outs = [b for p, d in c["port_directions"].items() if d == "output"
                    for b in c["connections"].get(p, []) if isinstance(b, int)]
            label = None
            for b in outs:
                hidden, n = names.get(b, (1, None))
                if n is not None and (label is None or not hidden):
                    label = base(n)
                    if not hidden:
                        break
            for p, d in c["port_directions"].items():
                if d == "input":
                    for b in c["connections"].get(p, []):
                        if isinstance(b, int):
                            end_name.setdefault(b, label or base(names.get(b, (1, f"bit{b}"))[1]))
        for pname, pdef in mod["ports"].items():
            if pdef["direction"] == "output":
                for b in pdef["bits"]:
                    if isinstance(b, int):
                        end_name.setdefault(b, clean(pname))
        best = {}
        for node, (_, _, outs) in comb.items():
            for p in outs:
                for b in cells[node]["connections"].get(p, []):
                    if isinstance(b, int) and b in end_name:
                        key = (arrival[node], lut_count[node])
                        name = end_name[b]
                        if name not in best or key > best[name][0]:
                            best[name] = (key, node)
        if into is not None:
            starts_into(mod, comb, cells, driver, names, end_name, into, paths, clean, base)
            return
        if trace is not None:
            if trace not in best:
                sys.exit(f"{top}: no endpoint named {trace}")
            node = best[trace][1]
            chain = []
            while node is not None:
                chain.append(node)
                node = via[node]
            print(f"  from {clean(net_of(chain[-1], 'input'))}")
            for node in reversed(chain):
                kind = cells[node]["type"]
                print(f"  {arrival[node]:6g} {kind:8} {clean(net_of(node, 'output'))}")
            print(f"  into {trace}")
            return
        ranked = sorted(best.items(), key=lambda kv: kv[1][0], reverse=True)[:paths]
        for name, ((depth, luts), node) in ranked:
            print(f"  {depth:g} {luts} {clean(net_of(start_of(node), 'input'))} -> {name}")


def starts_into(mod, comb, cells, driver, names, end_name, into, limit, clean, base):
    """Print, for endpoint `into`, each start of a path into it and the deepest path from it."""
    ends = {b for b, n in end_name.items() if n == into}
    if not ends:
        sys.exit(f"no endpoint named {into}")
    readers = {}
    for node, (_, ins, _) in comb.items():
        for p in ins:
            for b in cells[node]["connections"].get(p, []):
                if isinstance(b, int):
                    readers.setdefault(b, []).append(node)
    # tail[node]: the deepest path from the node's inputs into `ends`, the node included
    # (None: it reaches none of them). Iterative depth-first, as the arrival times.
    tail = {}
    for start in comb:
        stack = [(start, False)]
        while stack:
            node, done = stack.pop()
            if node in tail:
                continue
            weight, _, outs = comb[node]
            out_bits = [b for p in outs for b in cells[node]["connections"].get(p, [])
                        if isinstance(b, int)]
            succ = [r for b in out_bits for r in readers.get(b, [])]
            if not done:
                stack.append((node, True))
                stack.extend((r, False) for r in succ if r not in tail)
                continue
            best = 0.0 if any(b in ends for b in out_bits) else None
            for r in succ:
                if tail.get(r) is not None and (best is None or tail[r] > best):
                    best = tail[r]
            tail[node] = None if best is None else best + weight
    deepest = {}
    for b, rs in readers.items():
        if b in driver:
            continue
        d = max((tail[r] for r in rs if tail.get(r) is not None), default=None)
        if d is None:
            continue
        n = base(names.get(b, (1, f"bit{b}"))[1])
        if d > deepest.get(n, -1.0):
            deepest[n] = d
    for pname, pdef in mod["ports"].items():
        if pdef["direction"] == "input":
            for b in pdef["bits"]:
                if isinstance(b, int) and b in readers and b not in driver:
                    d = max((tail[r] for r in readers[b] if tail.get(r) is not None),
                            default=None)
                    if d is not None and d > deepest.get(clean(pname), -1.0):
                        deepest[clean(pname)] = d
    print(f"  into {into}")
    for n, d in sorted(deepest.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]:
        print(f"  {d:6g} {n}")


def selftest():
    """A register `r` (Q net `rq`) fed back through two LUTs and a MUXF7 whose select is the
    input `a`, which also enters the second LUT; output `y` is the second LUT."""
    import contextlib
    import io

    def cell(t, ins, outs):
        dirs = {p: "input" for p in ins}
        dirs.update({p: "output" for p in outs})
        conns = {**ins, **outs}
        return {"type": t, "port_directions": dirs, "connections": conns, "parameters": {}}

    mod = {
        "ports": {"a": {"direction": "input", "bits": [2]},
                  "y": {"direction": "output", "bits": [5]}},
        "cells": {
            "r": cell("FDRE", {"D": [6], "C": [9], "CE": ["1"], "R": ["0"]}, {"Q": [3]}),
            "l1": cell("LUT1", {"I0": [3]}, {"O": [4]}),
            "l2": cell("LUT2", {"I0": [4], "I1": [2]}, {"O": [5]}),
            "m": cell("MUXF7", {"I0": [5], "I1": [3], "S": [2]}, {"O": [6]}),
        },
        "netnames": {
            "a": {"bits": [2], "hide_name": 0}, "rq": {"bits": [3], "hide_name": 0},
            "$n4": {"bits": [4], "hide_name": 1}, "y": {"bits": [5], "hide_name": 0},
            "$n6": {"bits": [6], "hide_name": 1}, "clk": {"bits": [9], "hide_name": 0},
        },
    }

    def run(**kw):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            report(mod, "t", **kw)
        return out.getvalue().splitlines()

    got = run(paths=5)
    assert got[0] == "t 2.25 2 rq -> $n6", got
    assert got[1:] == ["  2.25 2 rq -> rq", "  2 2 rq -> y"], got
    got = run(trace="rq")
    assert got[1:] == ["  from rq", "       1 LUT1     $n4", "       2 LUT2     y",
                       "    2.25 MUXF7    $n6", "  into rq"], got
    got = run(into="rq")
    assert got[1:] == ["  into rq", "    2.25 rq", "    1.25 a"], got
    got = run(into="y")
    assert got[1:] == ["  into y", "       2 rq", "       1 a"], got
    print("logic_depth selftest: ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--selftest"]:
        selftest()
    else:
        main()
