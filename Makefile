# Clio-style memory node. `make demo` runs the main job; `make test` runs every test.
# Hardware targets (rtl, lint, synth) come from hw/rtl.mk.

CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: all demo test cargo-test c-example cosim-test cosim deps bench-alloc clean

all:
	$(CARGO) build --workspace --release

## demo: start a memory node in-process and run a workload through CLib
## (BACKEND=rtl runs the same demo against the fast path's Verilog under Verilator)
BACKEND ?= model
ifeq ($(BACKEND),rtl)
demo: rtl
	$(CARGO) run --release --features rtl --bin clio -- demo --backend rtl
else
demo:
	$(CARGO) run --release --bin clio -- demo
endif

## test: unit, property, integration and process tests of every crate, the C example,
## the RTL lint/synthesis checks, the model-vs-RTL cosimulation tests and the ZCU106 checks
test: cargo-test c-example lint synth cosim-test fpga-check

cargo-test:
	$(CARGO) test --workspace

## c-example: build the C example against libclio_clib and run it against a node
c-example:
	sh clib/examples/run.sh

## cosim-test: Verilator cosimulation tests (RTL vs model)
cosim-test: rtl
	$(CARGO) test -p clio-sim --features rtl

## cosim: the cosimulation tests and the cycle benchmark (figures for docs/perf.md)
cosim: cosim-test
	$(CARGO) run --release -p clio-sim --features rtl --example cosim_bench

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

clean:
	$(CARGO) clean
	rm -rf build

-include hw/rtl.mk
-include fpga/fpga.mk
