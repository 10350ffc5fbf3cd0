# 10G Ethernet Subsystem (PG157 axi_10g_ethernet): 10GBASE-R MAC + PCS/PMA on SFP0.
# GTH channel X0Y10 (quad 225, lane 2); reference clock 156.25 MHz on MGTREFCLK1 of quad 226
# (U56 Si570 via U51); shared logic (QPLL, reference buffer) inside the core (SupportLevel 1),
# no AXI4-Lite management (configuration vectors from the board top), no statistics,
# DRP/management clock: the 125 MHz board clock. MAC AXI-Stream: 64 bit at coreclk_out
# (156.25 MHz).
create_ip -name axi_10g_ethernet -vendor xilinx.com -library ip -module_name eth_10g_sfp0
set_property -dict [list \
    CONFIG.Management_Interface {false} \
    CONFIG.base_kr {BASE-R} \
    CONFIG.SupportLevel {1} \
    CONFIG.autonegotiation {0} \
    CONFIG.fec {0} \
    CONFIG.Statistics_Gathering {0} \
    CONFIG.DClkRate {125} \
    CONFIG.Locations {X0Y10} \
    CONFIG.RefClk {clk1} \
    CONFIG.RefClkRate {156.25} \
] [get_ips eth_10g_sfp0]
