# Settings shared by every script of the ZCU106 build (sourced first by each of them).
set clio_part      xczu7ev-ffvc1156-2-e
set clio_board     xilinx.com:zcu106:part0:2.6
set clio_top       clio_zcu106_top
set clio_proj      clio_zcu106
set clio_here      [file normalize [file dirname [info script]]]
set clio_repo      [file normalize [file join $clio_here .. ..]]
# CLIO_RTL_DIR overrides where the generated Verilog is (default build/rtl)
set clio_rtl_gen   [expr {[info exists ::env(CLIO_RTL_DIR)] ? [file normalize $::env(CLIO_RTL_DIR)] : [file join $clio_repo build rtl]}]
set clio_out       [file join $clio_repo build fpga zcu106]
# Address of the ring/register window on M_AXI_HPM0_FPD: the PS map's PL region at 0xA000_0000,
# 128 KiB (the window is CLIO_WINDOW_BYTES = 68 KiB; AXI ranges are powers of two). The device
# tree overlay (linux/clio-ring-overlay.dtso) uses the same numbers (checked by
# fpga/scripts/check_ring_layout.py).
set clio_ring_base  0xA0000000
set clio_ring_range 128K
# Address of the PL DDR4 (the MIG's 2 GiB, CLIO_BOARD_DRAM_BYTES) as the ARM sees it, for the
# slow path to clear frames (clio-slowpath --dram-file /dev/clio-dram --dram-uio-map 0):
# M_AXI_HPM1_FPD's high window 0x5_0000_0000..0x5_FFFF_FFFF (4 GiB; the low windows are
# 256 MiB each, too small), through the SmartConnect in ip/zynq_ps.tcl and the crossbar in
# ip/axi_xbar_dram.tcl, where the fast path has priority. The base is a multiple of the
# range, so a PS address's low 31 bits are the DRAM byte address (the board top keeps those).
# The overlay's clio-dram node uses the same numbers (checked by check_ring_layout.py).
set clio_dram_base  0x500000000
set clio_dram_range 2G

# Open the project and run one Vivado run (synth_1, impl_1) to completion, or stop the
# script: the step every flow script shares.
proc clio_run {run what} {
    global clio_out clio_proj
    open_project [file join $clio_out $clio_proj $clio_proj.xpr]
    reset_run $run
    launch_runs $run -jobs [expr {[info exists ::env(JOBS)] ? $::env(JOBS) : 4}]
    wait_on_run $run
    if {[get_property PROGRESS [get_runs $run]] ne "100%"} { error "$what failed" }
    open_run $run
}
