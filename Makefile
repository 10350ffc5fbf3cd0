# Clio-style memory node. `make demo` runs the main job; `make test` runs every test.
# Hardware targets (rtl, lint, synth) come from hw/rtl.mk.

CARGO ?= cargo
export CARGO_TERM_COLOR ?= never

.PHONY: all demo test cargo-test deps bench-alloc clean

all:
	$(CARGO) build --workspace --release

## demo: start a memory node in-process and run a workload through CLib
demo:
	$(CARGO) run --release --bin clio -- demo

## test: unit, property, integration and process tests of every crate
test: cargo-test

cargo-test:
	$(CARGO) test --workspace

## deps: install the system tools the hardware flow needs (Debian; run as root)
deps:
	@if command -v verilator >/dev/null && command -v yosys >/dev/null && command -v iverilog >/dev/null; then \
		echo "verilator, yosys and iverilog are installed"; \
	else \
		apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y verilator yosys iverilog; \
	fi

## bench-alloc: the paper's Figure 13 (allocation retries vs utilisation)
bench-alloc:
	$(CARGO) bench -p clio-slowpath --bench fig13_alloc

clean:
	$(CARGO) clean
	rm -rf build

-include hw/rtl.mk
