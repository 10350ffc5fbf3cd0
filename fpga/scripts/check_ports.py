#!/usr/bin/env python3
"""Port checks of the ZCU106 board top, without Vivado.

  check_ports.py xdc --top TOP.v --xdc XDC...     every port the XDC names exists on the board
                                                top (and the bit index is in range); every bit
                                                of every top-level port has a PACKAGE_PIN and
                                                (except GT serial/refclk pins) an IOSTANDARD;
                                                no package pin is used twice; every PACKAGE_PIN
                                                line carries a `;# NET` comment.
  check_ports.py fastpath --top TOP.v --rtl build/rtl/fastpath_top.v
                                                the ports the board top connects on its
                                                fastpath_top instance are exactly the ports of
                                                the generated module, and each connected wire
                                                has the port's width.
  check_ports.py selftest --top TOP.v --xdc XDC...  breaks copies of the inputs (drops a pin,
                                                adds an unconstrained port, renames a fast-path
                                                port, changes a width) and fails unless every
                                                broken copy is rejected.
"""
import argparse
import os
import re
import sys
import tempfile

GT_PORT = re.compile(r"^(sfp\d+_(rx|tx)_[pn]|sfp_mgt_refclk_\d+_[pn])$")


def strip_comments(v):
    v = re.sub(r"/\*.*?\*/", "", v, flags=re.S)
    return re.sub(r"//[^\n]*", "", v)


def module_text(src, name):
    m = re.search(r"\bmodule\s+%s(?![\w$])(.*?)\bendmodule\b" % re.escape(name), src, re.S)
    if not m:
        raise SystemExit("FAIL: module %s not found" % name)
    return m.group(1)


def eval_width(msb, lsb, params):
    def ev(e):
        e = e.strip()
        for k, v in params.items():
            e = re.sub(r"\b%s\b" % re.escape(k), str(v), e)
        if not re.fullmatch(r"[0-9+\-*/() ]+", e):
            raise SystemExit("FAIL: cannot evaluate width expression %r" % e)
        return int(eval(e.replace("/", "//")))
    return abs(ev(msb) - ev(lsb)) + 1


def parse_ports(path, name):
    """Ports of module `name` in `path`: {port: (direction, width)}. ANSI or non-ANSI headers."""
    src = strip_comments(open(path).read())
    body = module_text(src, name)
    params = {}
    for pm in re.finditer(r"\b(?:parameter|localparam)\s+(?:\[[^\]]*\]\s*)?(\w+)\s*=\s*([0-9]+)\s*[,;)]", body):
        params[pm.group(1)] = int(pm.group(2))
    ports = {}
    decl = re.compile(r"\b(input|output|inout)\s+(?:wire|reg|logic)?\s*(?:signed\s+)?(\[[^\]]+\])?\s*([^;()]*?)(?=[;)]|\b(?:input|output|inout)\b)", re.S)
    for d in decl.finditer(body):
        direction, rng, names = d.group(1), d.group(2), d.group(3)
        width = 1
        if rng:
            msb, lsb = rng[1:-1].split(":")
            width = eval_width(msb, lsb, params)
        for n in re.split(r"\s*,\s*", names.strip().rstrip(",")):
            n = n.strip()
            if re.fullmatch(r"[A-Za-z_][\w$]*", n):
                ports[n] = (direction, width)
    if not ports:
        raise SystemExit("FAIL: no ports parsed from module %s in %s" % (name, path))
    return ports


def wire_widths(top_src):
    """Widths of wires/regs declared in the board top body."""
    widths = {}
    for d in re.finditer(r"\b(?:wire|reg)\s+(?:signed\s+)?(\[[^\]]+\])?\s*([^;=]+)[;=]", top_src):
        w = 1
        if d.group(1):
            msb, lsb = d.group(1)[1:-1].split(":")
            try:
                w = eval_width(msb, lsb, {})
            except SystemExit:
                continue
        for n in d.group(2).split(","):
            n = n.strip().split()[0] if n.strip() else ""
            if re.fullmatch(r"\w+", n):
                widths.setdefault(n, w)
    return widths


def xdc_entries(paths):
    """(file, line, port, index or None, dict of properties, comment) for every get_ports use."""
    out = []
    for p in paths:
        for ln, line in enumerate(open(p), 1):
            code, _, comment = line.partition(";#")
            if code.lstrip().startswith("#"):
                continue
            for gm in re.finditer(r"\[get_ports\s+(\{[^}]*\}|\S+?)\]", code):
                names = gm.group(1).strip("{}").split()
                props = {}
                dm = re.search(r"-dict\s+\{([^}]*)\}", code)
                if dm:
                    toks = dm.group(1).split()
                    props = dict(zip(toks[0::2], toks[1::2]))
                pm = re.search(r"set_property\s+(PACKAGE_PIN|IOSTANDARD|LOC)\s+(\S+)\s+\[get_ports", code)
                if pm:
                    props[pm.group(1)] = pm.group(2)
                for n in names:
                    m = re.fullmatch(r"([A-Za-z_]\w*)(?:\[(\d+|\*)\])?", n)
                    if not m:
                        out.append((p, ln, n, "bad", props, comment.strip()))
                        continue
                    out.append((p, ln, m.group(1), m.group(2), props, comment.strip()))
    return out


def check_xdc(top_path, xdc_paths):
    ports = parse_ports(top_path, "clio_zcu106_top")
    errors = []
    pins = {}       # (port, bit) -> props
    used_locs = {}
    for f, ln, port, idx, props, comment in xdc_entries(xdc_paths):
        where = "%s:%d" % (os.path.basename(f), ln)
        if idx == "bad":
            errors.append("%s: cannot parse port name %r" % (where, port))
            continue
        if port not in ports:
            errors.append("%s: port %s is not a port of the board top" % (where, port))
            continue
        width = ports[port][1]
        if idx not in (None, "*"):
            if int(idx) >= width:
                errors.append("%s: %s[%s] is out of range (width %d)" % (where, port, idx, width))
                continue
        elif idx is None and width > 1 and ("PACKAGE_PIN" in props or "LOC" in props):
            errors.append("%s: pin constraint on the whole bus %s (width %d)" % (where, port, width))
        loc = props.get("PACKAGE_PIN") or props.get("LOC")
        if loc:
            bit = int(idx) if idx not in (None, "*") else 0
            if not comment:
                errors.append("%s: pin %s of %s has no `;# NET` comment naming the board net" % (where, loc, port))
            if loc in used_locs:
                errors.append("%s: package pin %s used by %s and %s" % (where, loc, used_locs[loc], port))
            used_locs[loc] = "%s[%d]" % (port, bit)
            pins.setdefault((port, bit), {}).update(props)
        elif "IOSTANDARD" in props and idx not in (None, "*"):
            pins.setdefault((port, int(idx)), {}).update(props)
    for port, (_, width) in sorted(ports.items()):
        for bit in range(width):
            p = pins.get((port, bit))
            name = port if width == 1 else "%s[%d]" % (port, bit)
            if not p or not (p.get("PACKAGE_PIN") or p.get("LOC")):
                errors.append("top-level port %s has no PACKAGE_PIN in the XDC" % name)
            elif not GT_PORT.match(port) and "IOSTANDARD" not in p:
                errors.append("top-level port %s has no IOSTANDARD" % name)
    return ports, used_locs, errors


def instance_connections(top_path):
    src = strip_comments(open(top_path).read())
    m = re.search(r"\bfastpath_top\s+(\w+)\s*\((.*?)\);", src, re.S)
    if not m:
        raise SystemExit("FAIL: no fastpath_top instance in %s" % top_path)
    conns = {}
    for c in re.finditer(r"\.(\w+)\s*\(([^()]*)\)", m.group(2)):
        conns[c.group(1)] = c.group(2).strip()
    return conns, src


def check_fastpath(top_path, rtl_path):
    if not os.path.exists(rtl_path):
        return ["%s does not exist: the fast path's top module has not been generated. "
                "Run `make rtl` (hw/rtl.mk) once the hw crate emits fastpath_top." % rtl_path]
    gen = parse_ports(rtl_path, "fastpath_top")
    conns, src = instance_connections(top_path)
    widths = wire_widths(src)
    errors = []
    for p in sorted(set(conns) - set(gen)):
        errors.append("board top connects .%s, which generated fastpath_top does not have" % p)
    for p in sorted(set(gen) - set(conns)):
        errors.append("generated fastpath_top has port %s (%s [%d]) the board top does not connect"
                      % (p, gen[p][0], gen[p][1]))
    for p in sorted(set(gen) & set(conns)):
        expr = conns[p]
        w = widths.get(expr)
        if w is not None and w != gen[p][1]:
            errors.append(".%s(%s): wire is %d bits, fastpath_top's %s port is %d bits"
                          % (p, expr, w, gen[p][0], gen[p][1]))
    return errors


def report(title, errors, ok_line):
    if errors:
        print("FAIL %s:" % title)
        for e in errors:
            print("  - " + e)
        return 1
    print("ok   %s: %s" % (title, ok_line))
    return 0


def selftest(top_path, xdc_paths):
    top = open(top_path).read()
    xdcs = [open(p).read() for p in xdc_paths]
    tmp = tempfile.mkdtemp(prefix="clio-ports-")

    def write(name, text):
        p = os.path.join(tmp, name)
        open(p, "w").write(text)
        return p

    # a fastpath_top with exactly the ports the instance connects, widths from the wires
    conns, src = instance_connections(top_path)
    widths = wire_widths(src)
    decls = ["    input wire [%d:0] %s;" % (widths.get(e, 1) - 1, p) for p, e in conns.items()]
    fp_ok = "module fastpath_top(%s);\n%s\nendmodule\n" % (",".join(conns), "\n".join(decls))
    first = next(iter(conns))
    wide = next(p for p, e in conns.items() if widths.get(e, 1) > 1)
    cases = [
        ("an XDC pin line dropped", [write("top.v", top)],
         [write("a.xdc", re.sub(r"^set_property -dict \{PACKAGE_PIN AM11[^\n]*\n", "", xdcs[0], flags=re.M))] +
         [write("b%d.xdc" % i, x) for i, x in enumerate(xdcs[1:])], None),
        ("a board-top port without constraint", [write("top2.v", top.replace("output wire [7:0]  led,", "output wire [7:0]  led,\n    output wire        spare_out,"))],
         [write("c%d.xdc" % i, x) for i, x in enumerate(xdcs)], None),
        ("an XDC port missing on the top", [write("top3.v", top.replace("input  wire        btnc,", "input  wire        btn_centre,").replace("(btnc)", "(btn_centre)").replace("btnc ||", "btn_centre ||").replace(".RST(btnc)", ".RST(btn_centre)"))],
         [write("d%d.xdc" % i, x) for i, x in enumerate(xdcs)], None),
        ("a pin without its net comment", [write("top4.v", top)],
         [write("e0.xdc", xdcs[0].replace(" ;# GPIO_SW_C", ""))] + [write("e%d.xdc" % (i + 1), x) for i, x in enumerate(xdcs[1:])], None),
        ("a fast-path port renamed", None, None, fp_ok.replace(first, first + "_x")),
        ("a fast-path width changed", None, None, re.sub(r"\[%d:0\] %s;" % (widths[conns[wide]] - 1, wide), "[%d:0] %s;" % (widths[conns[wide]], wide), fp_ok)),
    ]
    bad = 0
    if check_fastpath(top_path, write("fp_ok.v", fp_ok)):
        print("FAIL selftest: a fastpath_top matching the instance is rejected")
        bad += 1
    for name, tops, xs, fp in cases:
        if fp is not None:
            errs = check_fastpath(top_path, write("fp_bad.v", fp))
        else:
            _, _, errs = check_xdc(tops[0], xs)
        if errs:
            print("ok   selftest: %s is caught (%s)" % (name, errs[0]))
        else:
            print("FAIL selftest: %s is NOT caught" % name)
            bad += 1
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["xdc", "fastpath", "selftest"])
    ap.add_argument("--top", required=True)
    ap.add_argument("--rtl")
    ap.add_argument("--xdc", nargs="+", default=[])
    a = ap.parse_args()
    if a.mode == "xdc":
        ports, locs, errs = check_xdc(a.top, a.xdc)
        bits = sum(w for _, w in ports.values())
        return report("XDC vs board top", errs, "%d ports (%d bits), %d package pins, every bit constrained"
                      % (len(ports), bits, len(locs)))
    if a.mode == "fastpath":
        errs = check_fastpath(a.top, a.rtl)
        return report("fastpath_top ports vs board-top instance", errs, "%d ports match (names and widths)"
                      % len(instance_connections(a.top)[0]))
    return 1 if selftest(a.top, a.xdc) else 0


if __name__ == "__main__":
    sys.exit(main())
