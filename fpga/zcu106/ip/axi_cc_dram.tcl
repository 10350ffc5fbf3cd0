# AXI4 clock converter between the fast path's DRAM master (250 MHz core clock) and the DRAM
# crossbar in front of the DDR4 MIG (300 MHz ui_clk; ip/axi_xbar_dram.tcl, slave slot S00).
# PG065. 512-bit data, 31-bit addresses (2 GiB), no IDs (the fast path uses one ID).
create_ip -name axi_clock_converter -vendor xilinx.com -library ip -module_name axi_cc_dram
set_property -dict [list \
    CONFIG.PROTOCOL {AXI4} \
    CONFIG.DATA_WIDTH {512} \
    CONFIG.ADDR_WIDTH {31} \
    CONFIG.ID_WIDTH {0} \
    CONFIG.ACLK_ASYNC {1} \
    CONFIG.SYNCHRONIZATION_STAGES {3} \
] [get_ips axi_cc_dram]
