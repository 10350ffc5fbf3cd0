# Timing constraints for clio_zcu106_top. Pins are in constraints/zcu106.xdc.
#
# Clocks
#   clk_125mhz        8.000 ns  board oscillator -> core MMCM
#   core_clk          4.000 ns  250 MHz, MMCM CLKOUT0 (derived automatically from clk_125mhz);
#                               fast path, ring window, PS M_AXI_HPM0_FPD port
#   sfp_mgt_refclk_0  6.400 ns  156.25 MHz GTH reference; the 10G IP derives coreclk_out
#   clk_user_si570    3.333 ns  300 MHz DDR4 reference; the MIG derives ui_clk (its own XDC
#                               also creates this clock; Vivado keeps the first definition)

create_clock -period 8.000 -name clk_125mhz [get_ports clk_125mhz_p]
create_clock -period 6.400 -name sfp_mgt_refclk_0 [get_ports sfp_mgt_refclk_0_p]
create_clock -period 3.333 -name clk_user_si570 [get_ports clk_user_si570_p]

# The 250 MHz core clock, named for reports (generated clock of the MMCM output).
create_generated_clock -name core_clk [get_pins core_mmcm/CLKOUT0]

# Clock-domain crossings. core_clk, the Ethernet clock (coreclk_out), the MIG's ui_clk and
# clk_125mhz are unrelated. Data crosses only through vendor async FIFOs / clock converters
# (axis_rx_fifo, axis_tx_fifo: 156.25 <-> 250 MHz; axi_cc_dram: 250 <-> 300 MHz; their own IP
# XDC constrains their gray-code pointers) and the two two-flop synchronisers of the board top
# (ASYNC_REG cells). No blanket clock groups: any other crossing stays a timing violation in
# the report, which is where an unsynchronised path should show up.
set_max_delay -datapath_only 4.000 -to [get_cells -hier -filter {NAME =~ *calib_sync_reg[0]*}]
set_max_delay -datapath_only 4.000 -to [get_cells -hier -filter {NAME =~ *lock_sync_reg[0]*}]

# Asynchronous reset inputs of the core reset synchroniser
set_false_path -to [get_pins -hier -filter {NAME =~ *core_rst_sync_reg*/PRE}]


# Board I/O that has no timing relationship to any clock
set_false_path -from [get_ports btnc]
set_input_delay 0 [get_ports btnc]
set_false_path -to [get_ports {led[*] sfp0_tx_disable_b sfp1_tx_disable_b}]
set_output_delay 0 [get_ports {led[*] sfp0_tx_disable_b sfp1_tx_disable_b}]
