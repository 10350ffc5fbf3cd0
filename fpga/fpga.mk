# Make fragment of the ZCU106 board build; the root Makefile does `include fpga/fpga.mk`.
# Paths are relative to the repository root.
#
#   make fpga-check   every check that needs no Vivado (summary at the end, fails if any fails):
#       fpga-tcl       all Vivado Tcl and XDC files run under tclsh with Vivado commands stubbed
#       fpga-ports     XDC <-> board-top ports both ways (+ a self-test that breaks copies)
#       fpga-ring      ring window layout from proto; RTL window <-> clio-slowpath --uio round trip;
#                      the ARM's DRAM path (Tcl, overlay, udev, unit) and the daemon clearing the
#                      frames it pushes in a DRAM image (--dram-file IMAGE --dram-uio-map 0)
#       fpga-frontend  network front end (Ethernet/IPv4/UDP and raw <-> packet + route) in iverilog
#       fpga-dtc       the device tree overlay compiles (dtc)
#       fpga-fastpath  generated fastpath_top's ports == the board top's instance (needs `make rtl`)
#       fpga-yosys     Yosys synthesis of the board top (vendor IP black boxes); utilisation of
#                      the fast path, the window and the board against the ZU7EV in
#                      build/fpga/utilisation.md
#   make fpga-regs    build/rtl/clio_ring_regs.vh from `clio-spec verilog-regs` and
#                     build/rtl/clio_board_cfg.vh from fpga/scripts/board_cfg.rs (both proto)
#   make bitstream    the Vivado flow in fpga/zcu106/ (project, synth, impl, bitstream, .xsa);
#                     stops with a clear message when Vivado is not installed
#
# fpga-check first runs `make rtl` (hw/rtl.mk) so the fast path's Verilog is current; set
# FPGA_RTL_DEP= to skip that.

FPGA_RTL_DIR   := build/rtl
FPGA_OUT       := build/fpga
FPGA_TOP       := fpga/zcu106/rtl/clio_zcu106_top.v
FPGA_XDC       := constraints/zcu106.xdc constraints/timing.xdc
FPGA_TCL       := $(wildcard fpga/zcu106/*.tcl fpga/zcu106/ip/*.tcl)
FPGA_REGS      := $(FPGA_RTL_DIR)/clio_ring_regs.vh
FPGA_CFG       := $(FPGA_RTL_DIR)/clio_board_cfg.vh
# The board: the ZCU106's PL DDR4 is 2 GiB; the page shift defaults to proto's
FPGA_DRAM_BYTES ?= 2147483648
FPGA_PAGE_SHIFT ?=
FPGA_CARGO_DIR := $(or $(CARGO_TARGET_DIR),target)
FPGA_DAEMON    := $(FPGA_CARGO_DIR)/debug/clio-slowpath
FPGA_RTL_DEP   ?= rtl
FPGA_CHECKS    := fpga-tcl fpga-ports fpga-ring fpga-frontend fpga-dtc fpga-fastpath fpga-yosys
TCLSH          ?= tclsh
DTC            ?= dtc
PYTHON         ?= python3

.PHONY: fpga-check fpga-check-nosynth fpga-regs fpga-daemon bitstream $(FPGA_CHECKS)

# Every check but the board synthesis: `make test` runs fpga-yosys, its longest step, in a
# lane of its own beside the others (scripts/timed_steps.sh).
fpga-check-nosynth:
	@$(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) fpga-check FPGA_CHECKS="$(filter-out fpga-yosys,$(FPGA_CHECKS))"

fpga-check: $(FPGA_RTL_DEP)
	@failed=""; for t in $(FPGA_CHECKS); do \
	  echo "==== $$t"; \
	  $(MAKE) --no-print-directory -f $(firstword $(MAKEFILE_LIST)) $$t FPGA_RTL_DEP= || failed="$$failed $$t"; \
	done; \
	echo "==== fpga-check summary"; \
	for t in $(FPGA_CHECKS); do \
	  case " $$failed " in *" $$t "*) echo "FAIL $$t";; *) echo "ok   $$t";; esac; \
	done; \
	if [ -n "$$failed" ]; then echo "fpga-check FAILED:$$failed"; exit 1; fi; \
	echo "fpga-check: all pass"

# board_cfg.rs is compiled with rustc against the clio_proto rlib cargo just built (its path
# from cargo's JSON messages), so it needs no crate of its own.
fpga-regs:
	@mkdir -p $(FPGA_RTL_DIR) $(FPGA_OUT)
	cargo run -q -p clio-proto --bin clio-spec -- verilog-regs > $(FPGA_REGS).tmp
	@mv $(FPGA_REGS).tmp $(FPGA_REGS)
	@echo "wrote $(FPGA_REGS)"
	@rlib=$$(cargo build -q -p clio-proto --lib --message-format=json | $(PYTHON) -c 'import json,sys; \
	  print(next(f for l in sys.stdin for m in [json.loads(l)] if m.get("reason") == "compiler-artifact" \
	  and m["target"]["name"] == "clio_proto" for f in m["filenames"] if f.endswith(".rlib")))') && \
	rustc --edition 2021 -L dependency=$$(dirname $$rlib)/deps --extern clio_proto=$$rlib \
	  fpga/scripts/board_cfg.rs -o $(FPGA_OUT)/board_cfg
	$(FPGA_OUT)/board_cfg $(FPGA_DRAM_BYTES) $(FPGA_PAGE_SHIFT) > $(FPGA_CFG).tmp
	@mv $(FPGA_CFG).tmp $(FPGA_CFG)
	@echo "wrote $(FPGA_CFG)"

fpga-daemon:
	cargo build -q -p clio-slowpath --bin clio-slowpath

# The Tcl is run against a scratch RTL directory holding empty stand-ins for fastpath_top.v and
# the two generated headers, so create_project.tcl's existence check passes and every line runs even
# before the fast path exists; the real files are checked by fpga-fastpath and fpga-yosys.
fpga-tcl:
	@command -v $(TCLSH) >/dev/null || { echo "FAIL: tclsh not found (Debian package: tcl)"; exit 1; }
	@rm -rf $(FPGA_OUT)/tcl-scratch && mkdir -p $(FPGA_OUT)/tcl-scratch
	@touch $(FPGA_OUT)/tcl-scratch/fastpath_top.v $(FPGA_OUT)/tcl-scratch/clio_ring_regs.vh $(FPGA_OUT)/tcl-scratch/clio_board_cfg.vh
	CLIO_RTL_DIR=$(FPGA_OUT)/tcl-scratch $(TCLSH) fpga/scripts/check_tcl.tcl $(FPGA_TCL) $(FPGA_XDC)

fpga-ports:
	$(PYTHON) fpga/scripts/check_ports.py xdc --top $(FPGA_TOP) --xdc $(FPGA_XDC)
	$(PYTHON) fpga/scripts/check_ports.py selftest --top $(FPGA_TOP) --xdc $(FPGA_XDC)

fpga-ring: fpga-regs fpga-daemon
	@command -v iverilog >/dev/null || { echo "FAIL: iverilog not found (Debian package: iverilog)"; exit 1; }
	$(PYTHON) fpga/scripts/check_ring_layout.py --regs $(FPGA_REGS) --cfg $(FPGA_CFG) --daemon $(FPGA_DAEMON) --work $(FPGA_OUT)/ring

fpga-frontend: fpga-regs
	@command -v iverilog >/dev/null || { echo "FAIL: iverilog not found (Debian package: iverilog)"; exit 1; }
	$(PYTHON) fpga/scripts/check_frontend.py --cfg $(FPGA_CFG) --work $(FPGA_OUT)/frontend

fpga-dtc:
	@command -v $(DTC) >/dev/null || { echo "FAIL: dtc not found (Debian package: device-tree-compiler)"; exit 1; }
	@mkdir -p $(FPGA_OUT)
	$(DTC) -@ -q -I dts -O dtb -o $(FPGA_OUT)/clio-ring-overlay.dtbo fpga/zcu106/linux/clio-ring-overlay.dtso
	@echo "ok   device tree overlay compiles: $(FPGA_OUT)/clio-ring-overlay.dtbo"

fpga-fastpath:
	$(PYTHON) fpga/scripts/check_ports.py fastpath --top $(FPGA_TOP) --rtl $(FPGA_RTL_DIR)/fastpath_top.v

# `make test` makes the headers once, before its lanes (FPGA_REGS_DEP= there), so that the
# board synthesis does not wait for the cargo tests' build lock.
FPGA_REGS_DEP ?= fpga-regs
fpga-yosys: $(FPGA_REGS_DEP)
	@test -f $(FPGA_RTL_DIR)/fastpath_top.v || { echo "FAIL: $(FPGA_RTL_DIR)/fastpath_top.v does not exist: \
	the fast path's top module has not been generated (run \`make rtl\` once the hw crate emits fastpath_top)"; exit 1; }
	fpga/scripts/yosys_board.sh $(FPGA_RTL_DIR) $(FPGA_OUT)/synth
	$(PYTHON) hw/scripts/logic_depth.py $(FPGA_OUT)/synth/fastpath_top.json fastpath_top --paths 12 > $(FPGA_OUT)/synth/fastpath_top.depth
	rm -f $(FPGA_OUT)/synth/fastpath_top.json
	$(PYTHON) fpga/scripts/util_report.py --selftest
	$(PYTHON) fpga/scripts/util_report.py $(FPGA_OUT)/synth --out $(FPGA_OUT)/utilisation.md --units docs/utilization.md

bitstream: fpga-regs $(FPGA_RTL_DEP)
	$(MAKE) -C fpga/zcu106 bitstream
