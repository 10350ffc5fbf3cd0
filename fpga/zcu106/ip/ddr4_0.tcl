# PL DDR4 memory controller (PG150 DDR4 SDRAM, "MIG"): the memory node's data DRAM.
# ZCU106 PL DDR4: 64-bit component interface, 4x MT40A256M16GE-075E (2 GiB), DDR4-2400
# (tCK 833 ps), reference clock the 300 MHz user Si570 (3332 ps), AXI4 slave 512 bit at the
# 300 MHz ui_clk (4:1). CAS latencies for -075E at 2400: CL 17, CWL 12. Its AXI port is the
# crossbar's (ip/axi_xbar_dram.tcl: the fast path and the PS); narrow-burst support because the
# ARM's uncached stores reach it as narrow (8/16-byte) single beats. 4-bit IDs: the crossbar
# drives the low bit (which master), the rest are tied to zero in the board top.
create_ip -name ddr4 -vendor xilinx.com -library ip -module_name ddr4_0
set_property -dict [list \
    CONFIG.C0.DDR4_TimePeriod {833} \
    CONFIG.C0.DDR4_InputClockPeriod {3332} \
    CONFIG.C0.DDR4_MemoryType {Components} \
    CONFIG.C0.DDR4_MemoryPart {MT40A256M16GE-075E} \
    CONFIG.C0.DDR4_DataWidth {64} \
    CONFIG.C0.DDR4_DataMask {DM_NO_DBI} \
    CONFIG.C0.DDR4_CasLatency {17} \
    CONFIG.C0.DDR4_CasWriteLatency {12} \
    CONFIG.C0.DDR4_AxiSelection {true} \
    CONFIG.C0.DDR4_AxiDataWidth {512} \
    CONFIG.C0.DDR4_AxiAddressWidth {31} \
    CONFIG.C0.DDR4_AxiIDWidth {4} \
    CONFIG.C0.DDR4_AxiNarrowBurst {true} \
    CONFIG.C0.DDR4_AxiArbitrationScheme {RD_PRI_REG} \
    CONFIG.C0.DDR4_Mem_Add_Map {ROW_COLUMN_BANK_INTLV} \
    CONFIG.C0.DDR4_AUTO_AP_COL_A3 {true} \
] [get_ips ddr4_0]
