#!/bin/sh
# Yosys synthesis of the ZCU106 board top with the vendor IP as black boxes, for UltraScale+
# (synth_xilinx -family xcup). No Vivado needed.
#
#   yosys_board.sh RTL_DIR OUT_DIR
#
# RTL_DIR holds the generated fast path (every *.v `make rtl` wrote, fastpath_top among them)
# and the generated headers. One run over the board top: the fast path, the ring window, the
# network front end and the board glue, Xilinx primitives from Yosys's cell library, vendor IP
# black boxes (fpga/zcu106/blackbox/vendor_ip.v). `hierarchy -check` fails on any module that
# is neither defined nor a black box; `check -assert` fails on multiple drivers or undriven
# used wires (e.g. a fast-path port whose direction differs from what the board top expects).
# fastpath_top and clio_ring_window keep their hierarchy so util_report.py can list them apart.
# Writes OUT_DIR/board.{ys,log,stat} and OUT_DIR/fastpath_top.json: the mapped fast path alone
# (the other modules deleted after `stat`), for hw/scripts/logic_depth.py.
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
  echo "setattr -mod -set keep_hierarchy 1 fastpath_top *clio_ring_window"
  echo "synth_xilinx -family xcup -flatten -noiopad -top clio_zcu106_top"
  echo "tee -q -o $out/board.stat stat"
  echo "delete clio_zcu106_top"
  echo "write_json $out/fastpath_top.json"
} > "$out/board.ys"

echo "yosys board top ($out/board.log)"
if ! $yosys -q -l "$out/board.log" "$out/board.ys" >/dev/null 2>&1; then
  echo "FAIL: yosys, last lines of $out/board.log:" >&2
  tail -n 15 "$out/board.log" >&2
  exit 1
fi
