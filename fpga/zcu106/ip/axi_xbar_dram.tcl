# AXI crossbar in front of the PL DDR4 MIG (PG059 axi_crossbar: 2 SI, 1 MI, shared-address
# multiple-data), in the MIG's ui_clk domain (300 MHz), 512-bit data, 31-bit addresses (2 GiB).
#   S00  the fast path, through axi_cc_dram (250 -> 300 MHz): arbitration priority 15, so it is
#        granted first whenever it asks; it is the data path. 32 reads and 32 writes accepted.
#   S01  the PS: M_AXI_HPM1_FPD through the SmartConnect in ip/zynq_ps.tcl (already 512 bit,
#        no ID). Priority 0: it gets the address slots the fast path leaves, which is nearly
#        all of them (the fast path's DRAM traffic follows a 10G link: tens of millions of
#        bursts a second at most, against 300 million address slots). 8 outstanding each way.
# IDs: one per master (S00 0, S01 1; no thread bits), so responses go back by ID and each
# master's own transactions stay in order. The MIG's 4-bit ID takes it in its low bit.
create_ip -name axi_crossbar -vendor xilinx.com -library ip -module_name axi_xbar_dram
set_property -dict [list \
    CONFIG.PROTOCOL {AXI4} \
    CONFIG.CONNECTIVITY_MODE {SAMD} \
    CONFIG.NUM_SI {2} \
    CONFIG.NUM_MI {1} \
    CONFIG.DATA_WIDTH {512} \
    CONFIG.ADDR_WIDTH {31} \
    CONFIG.ID_WIDTH {1} \
    CONFIG.S00_THREAD_ID_WIDTH {0} \
    CONFIG.S01_THREAD_ID_WIDTH {0} \
    CONFIG.S00_BASE_ID {0x00000000} \
    CONFIG.S01_BASE_ID {0x00000001} \
    CONFIG.S00_ARB_PRIORITY {15} \
    CONFIG.S01_ARB_PRIORITY {0} \
    CONFIG.S00_READ_ACCEPTANCE {32} \
    CONFIG.S00_WRITE_ACCEPTANCE {32} \
    CONFIG.S01_READ_ACCEPTANCE {8} \
    CONFIG.S01_WRITE_ACCEPTANCE {8} \
    CONFIG.M00_READ_ISSUING {32} \
    CONFIG.M00_WRITE_ISSUING {32} \
    CONFIG.M00_A00_BASE_ADDR {0x0000000000000000} \
    CONFIG.M00_A00_ADDR_WIDTH {31} \
] [get_ips axi_xbar_dram]
