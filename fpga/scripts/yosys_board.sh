#!/bin/sh
# Yosys synthesis of the ZCU106 board top with the vendor IP as black boxes, and of the fast
# path alone, for UltraScale+ (synth_xilinx -family xcup). No Vivado needed.
#
#   yosys_board.sh RTL_DIR OUT_DIR
#
# RTL_DIR holds the generated fast path (every *.v `make rtl` wrote, fastpath_top among them)
# and the generated headers. Writes OUT_DIR/board.{ys,log,stat} (board top: fast path + ring
# window + network front end + board glue, vendor IP black-boxed, Xilinx primitives from Yosys's cell library) and
# OUT_DIR/fastpath_top.{ys,log,stat}. `hierarchy -check` fails on any module that is neither
# defined nor a black box; `check -assert` fails on multiple drivers or undriven used wires
# (e.g. a fast-path port whose direction differs from what the board top expects).
set -eu
rtl=$1
out=$2
here=$(cd "$(dirname "$0")/.." && pwd)
yosys=${YOSYS:-yosys}
mkdir -p "$out"
gen=$(ls "$rtl"/*.v)

{
  echo "read_verilog -lib -specify +/xilinx/cells_sim.v +/xilinx/cells_xtra.v"
  echo "read_verilog -sv $here/zcu106/blackbox/vendor_ip.v"
  for f in $gen; do echo "read_verilog -sv $f"; done
  echo "read_verilog -sv -I $rtl $here/zcu106/rtl/clio_ring_window.v"
  echo "read_verilog -sv -I $rtl $here/zcu106/rtl/clio_eth_frontend.v"
  echo "read_verilog -sv -I $rtl $here/zcu106/rtl/clio_zcu106_top.v"
  echo "hierarchy -check -top clio_zcu106_top"
  echo "proc"
  echo "check -assert"
  echo "synth_xilinx -family xcup -flatten -noiopad -top clio_zcu106_top"
  echo "tee -q -o $out/board.stat stat"
} > "$out/board.ys"

{
  for f in $gen; do echo "read_verilog -sv $f"; done
  echo "hierarchy -check -top fastpath_top"
  echo "synth_xilinx -family xcup -flatten -noiopad -top fastpath_top"
  echo "tee -q -o $out/fastpath_top.stat stat"
} > "$out/fastpath_top.ys"

{
  echo "read_verilog -sv -I $rtl $here/zcu106/rtl/clio_ring_window.v"
  echo "hierarchy -check -top clio_ring_window"
  echo "synth_xilinx -family xcup -flatten -noiopad -top clio_ring_window"
  echo "tee -q -o $out/clio_ring_window.stat stat"
} > "$out/clio_ring_window.ys"

for d in board fastpath_top clio_ring_window; do
  echo "yosys $d"
  if ! $yosys -q -l "$out/$d.log" "$out/$d.ys" >/dev/null 2>&1; then
    echo "FAIL: yosys $d, last lines of $out/$d.log:" >&2
    tail -n 15 "$out/$d.log" >&2
    exit 1
  fi
done
