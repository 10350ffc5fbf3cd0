# Make fragment for the fast path's RTL flow; the root Makefile does `include hw/rtl.mk`.
# Paths are relative to the repository root.
#
#   make rtl    Verilog of every module into build/rtl/ (the hw crate's emit-rtl binary)
#   make lint   verilator --lint-only -Wall on each module, waivers in hw/lint/waivers.vlt
#   make synth  yosys synth_xilinx -family xcup per module, twice (the default wide-LUT mapping
#               and -nowidelut, LUT6 only; the smaller is reported, the other beside it); table
#               (LUT/FF/BRAM/LUTRAM/DSP and the deepest register-to-register path in LUT levels,
#               hw/scripts/logic_depth.py) into docs/utilization.md
#               SYNTH_MAPPINGS=wide maps once (half the time: what `make test` does, since the
#               board synthesis in fpga-check maps the whole fast path again); the table is then
#               printed and written to build/synth/table.md, not into docs/utilization.md

# The modules are the hw crate's (`clio_hw::all_modules`): emit-rtl writes their list as
# $(RTL_DIR)/modules.txt, read here when a recipe runs (after `rtl`), so there is no second
# list to keep in step.
HW_MODULES      = $(shell cat $(RTL_DIR)/modules.txt)
# fastpath_top is synthesised whole inside the board top by `make fpga-check` (fpga/fpga.mk),
# which reports its utilisation against the ZU7EV; synthesising it a second time alone here
# would double the longest step of `make test`. `extend` is the pointer chaser and Clio-KV
# (each synthesised alone above) with a feeder and the store's registers: not mapped again.
HW_SYNTH_MODULES ?= $(filter-out fastpath_top extend,$(HW_MODULES))
HW_CARGO_ENV   ?= CARGO_TARGET_DIR=$(or $(HW_TARGET_DIR),$(CARGO_TARGET_DIR),target)
RTL_DIR        := build/rtl
SYNTH_DIR      := build/synth
VERILATOR      ?= verilator
YOSYS          ?= yosys
PYTHON         ?= python3
# lint and synth first run `make rtl` through HW_RTL_DEP (set in the root Makefile, which
# needs it earlier; HW_RTL_DEP= skips it: `make test` runs `rtl` once, before the steps that
# share build/rtl run side by side).
SYNTH_MAPPINGS ?= wide lut6

.PHONY: rtl lint synth synth-wide

rtl:
	$(HW_CARGO_ENV) cargo run -q -p clio-hw --bin emit-rtl -- $(RTL_DIR)

# What `make test` runs: every module mapped once (see SYNTH_MAPPINGS above).
synth-wide:
	@$(MAKE) --no-print-directory synth SYNTH_MAPPINGS=wide

lint: $(HW_RTL_DEP)
	@set -e; for m in $(HW_MODULES); do \
	  echo "lint $$m"; \
	  $(VERILATOR) --lint-only -Wall hw/lint/waivers.vlt $(RTL_DIR)/$$m.v --top-module $$m; \
	done

synth: $(HW_RTL_DEP)
	@mkdir -p $(SYNTH_DIR)
	@case " $(SYNTH_MAPPINGS) " in *" lut6 "*) ;; *) rm -f $(SYNTH_DIR)/*.lut6.* ;; esac
	$(PYTHON) hw/scripts/logic_depth.py --selftest
	@set -e; for m in $(HW_SYNTH_MODULES); do \
	  for v in $(SYNTH_MAPPINGS); do \
	    if [ $$v = lut6 ]; then opts=-nowidelut; else opts=; fi; \
	    echo "synth $$m ($$v)"; \
	    sed "s/@MODULE@/$$m/g; s/@OPTS@/$$opts/; s/@OUT@/$$m.$$v/g" hw/scripts/synth.ys.in > $(SYNTH_DIR)/$$m.$$v.ys; \
	    $(YOSYS) -q -l $(SYNTH_DIR)/$$m.$$v.log $(SYNTH_DIR)/$$m.$$v.ys; \
	    $(PYTHON) hw/scripts/logic_depth.py $(SYNTH_DIR)/$$m.$$v.json $$m > $(SYNTH_DIR)/$$m.$$v.depth; \
	    rm -f $(SYNTH_DIR)/$$m.$$v.json; \
	  done; \
	done
	hw/scripts/util_table.sh $(addprefix $(SYNTH_DIR)/,$(HW_SYNTH_MODULES)) > $(SYNTH_DIR)/table.md
	@if [ "$(SYNTH_MAPPINGS)" = "wide lut6" ]; then \
	  hw/scripts/update_utilization.sh $(SYNTH_DIR)/table.md docs/utilization.md; \
	else \
	  cat $(SYNTH_DIR)/table.md; echo "synth: mappings '$(SYNTH_MAPPINGS)' only: docs/utilization.md left as it is"; \
	fi
