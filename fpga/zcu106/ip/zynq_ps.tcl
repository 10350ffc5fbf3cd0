# Block design `zynq_ps`: the Zynq UltraScale+ PS (quad A53: Linux and clio-slowpath), the
# AXI path from M_AXI_HPM0_FPD to the ring/register window in the PL, and the path from
# M_AXI_HPM1_FPD to the PL DDR4 (the slow path clears frames through it).
#
# External ports (what clio_zcu106_top connects):
#   core_clk     in   250 MHz core clock; clocks M_AXI_HPM0_FPD and the interconnect, so the
#                     window sits in the fast path's clock domain (no crossing in the PL)
#   core_resetn  in   active-low reset synchronous to core_clk
#   pl_resetn0   out  PS reset to the PL
#   m_axil_ring  AXI4-Lite master, 32-bit data: the window, at $clio_ring_base, $clio_ring_range
#   dram_clk     in   the MIG's ui_clk (300 MHz); clocks M_AXI_HPM1_FPD and its SmartConnect, so
#                     the PS reaches the DRAM crossbar with no crossing in the PL (the PS-PL
#                     port crosses to the PS's own clock inside the PS)
#   dram_resetn  in   active-low reset synchronous to dram_clk
#   m_axi_dram   AXI4 master, 512-bit data, no ID: HPM1 (128 bit, 16-bit IDs) through the
#                SmartConnect `axi_sc_dram`, which widens to the MIG's 512 bits and keeps the
#                PS's IDs to itself; at $clio_dram_base, $clio_dram_range (the PS address goes
#                out whole, 40 bits; the board top keeps the low 31). To the crossbar's S01.
#
# PS settings are the ZCU106's (UG1244): PS DDR4 SODIMM, UART0 on MIO 18..19 (console),
# SD1 (boot medium), QSPI dual parallel, GEM3 with MDIO (the RJ45 port: ssh/NFS to the ARM),
# I2C0/I2C1 (the SFP Si570 and module EEPROMs sit behind the I2C1 mux), USB0, GPIO.
source [file join [file dirname [info script]] .. config.tcl]

create_bd_design zynq_ps

set ps [create_bd_cell -type ip -vlnv xilinx.com:ip:zynq_ultra_ps_e zynq_ultra_ps]
if {[get_property board_part [current_project]] ne ""} {
    apply_bd_automation -rule xilinx.com:bd_rule:zynq_ultra_ps_e -config {apply_board_preset "1"} $ps
}
set_property -dict [list \
    CONFIG.PSU_BANK_0_IO_STANDARD {LVCMOS18} \
    CONFIG.PSU_BANK_1_IO_STANDARD {LVCMOS18} \
    CONFIG.PSU_BANK_2_IO_STANDARD {LVCMOS18} \
    CONFIG.PSU_BANK_3_IO_STANDARD {LVCMOS33} \
    CONFIG.PSU__DDRC__COMPONENTS {UDIMM} \
    CONFIG.PSU__DDRC__DEVICE_CAPACITY {4096 MBits} \
    CONFIG.PSU__DDRC__SPEED_BIN {DDR4_2133P} \
    CONFIG.PSU__DDRC__ROW_ADDR_COUNT {15} \
    CONFIG.PSU__UART0__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__UART0__PERIPHERAL__IO {MIO 18 .. 19} \
    CONFIG.PSU__SD1__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__SD1__GRP_CD__ENABLE {1} \
    CONFIG.PSU__SD1__GRP_WP__ENABLE {1} \
    CONFIG.PSU__QSPI__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__QSPI__PERIPHERAL__MODE {Dual Parallel} \
    CONFIG.PSU__ENET3__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__ENET3__GRP_MDIO__ENABLE {1} \
    CONFIG.PSU__I2C0__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__I2C0__PERIPHERAL__IO {MIO 14 .. 15} \
    CONFIG.PSU__I2C1__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__I2C1__PERIPHERAL__IO {MIO 16 .. 17} \
    CONFIG.PSU__USB0__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__GPIO0_MIO__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__GPIO1_MIO__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__TTC0__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__SWDT0__PERIPHERAL__ENABLE {1} \
    CONFIG.PSU__USE__M_AXI_GP0 {1} \
    CONFIG.PSU__MAXIGP0__DATA_WIDTH {32} \
    CONFIG.PSU__USE__M_AXI_GP1 {1} \
    CONFIG.PSU__MAXIGP1__DATA_WIDTH {128} \
    CONFIG.PSU__USE__M_AXI_GP2 {0} \
    CONFIG.PSU__USE__S_AXI_GP0 {0} \
    CONFIG.PSU__FPGA_PL0_ENABLE {0} \
] $ps

# Clock and reset from the board top
set core_clk [create_bd_port -dir I -type clk -freq_hz 250000000 core_clk]
set core_resetn [create_bd_port -dir I -type rst core_resetn]
set_property CONFIG.POLARITY ACTIVE_LOW $core_resetn
set pl_resetn0 [create_bd_port -dir O -type rst pl_resetn0]
connect_bd_net [get_bd_pins $ps/pl_resetn0] $pl_resetn0

# HPM0 -> AXI interconnect (protocol and width conversion to AXI4-Lite) -> window
set ic [create_bd_cell -type ip -vlnv xilinx.com:ip:axi_interconnect axi_ic_ring]
set_property -dict [list CONFIG.NUM_SI {1} CONFIG.NUM_MI {1}] $ic
set m_axil_ring [create_bd_intf_port -mode Master -vlnv xilinx.com:interface:aximm_rtl:1.0 m_axil_ring]
set_property -dict [list CONFIG.PROTOCOL {AXI4LITE} CONFIG.DATA_WIDTH {32} CONFIG.ADDR_WIDTH {32}] $m_axil_ring
connect_bd_intf_net [get_bd_intf_pins $ps/M_AXI_HPM0_FPD] [get_bd_intf_pins $ic/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins $ic/M00_AXI] $m_axil_ring

foreach pin {maxihpm0_fpd_aclk} { connect_bd_net $core_clk [get_bd_pins $ps/$pin] }
foreach pin {ACLK S00_ACLK M00_ACLK} { connect_bd_net $core_clk [get_bd_pins $ic/$pin] }
foreach pin {ARESETN S00_ARESETN M00_ARESETN} { connect_bd_net $core_resetn [get_bd_pins $ic/$pin] }
set_property CONFIG.ASSOCIATED_BUSIF {m_axil_ring} $core_clk
set_property CONFIG.ASSOCIATED_RESET {core_resetn} $core_clk

# HPM1 -> SmartConnect (128 -> 512 bit; the PS's 16-bit IDs stay inside) -> the DRAM crossbar.
# Width conversion packs only modifiable bursts: the ARM's uncached (device) stores arrive as
# narrow single beats, which the MIG accepts with narrow-burst support (ip/ddr4_0.tcl).
set dram_clk [create_bd_port -dir I -type clk -freq_hz 300000000 dram_clk]
set dram_resetn [create_bd_port -dir I -type rst dram_resetn]
set_property CONFIG.POLARITY ACTIVE_LOW $dram_resetn
set sc [create_bd_cell -type ip -vlnv xilinx.com:ip:smartconnect axi_sc_dram]
set_property -dict [list CONFIG.NUM_SI {1} CONFIG.NUM_MI {1} CONFIG.NUM_CLKS {1}] $sc
set m_axi_dram [create_bd_intf_port -mode Master -vlnv xilinx.com:interface:aximm_rtl:1.0 m_axi_dram]
set_property -dict [list \
    CONFIG.PROTOCOL {AXI4} CONFIG.DATA_WIDTH {512} CONFIG.ADDR_WIDTH {40} CONFIG.ID_WIDTH {0} \
    CONFIG.AWUSER_WIDTH {0} CONFIG.ARUSER_WIDTH {0} CONFIG.HAS_REGION {0} CONFIG.HAS_QOS {0} \
    CONFIG.HAS_BURST {1} CONFIG.HAS_LOCK {1} CONFIG.HAS_CACHE {1} CONFIG.HAS_PROT {1} \
    CONFIG.HAS_WSTRB {1} CONFIG.HAS_BRESP {1} CONFIG.HAS_RRESP {1} \
    CONFIG.NUM_READ_OUTSTANDING {8} CONFIG.NUM_WRITE_OUTSTANDING {8} \
] $m_axi_dram
connect_bd_intf_net [get_bd_intf_pins $ps/M_AXI_HPM1_FPD] [get_bd_intf_pins $sc/S00_AXI]
connect_bd_intf_net [get_bd_intf_pins $sc/M00_AXI] $m_axi_dram
connect_bd_net $dram_clk [get_bd_pins $ps/maxihpm1_fpd_aclk] [get_bd_pins $sc/aclk]
connect_bd_net $dram_resetn [get_bd_pins $sc/aresetn]
set_property CONFIG.ASSOCIATED_BUSIF {m_axi_dram} $dram_clk
set_property CONFIG.ASSOCIATED_RESET {dram_resetn} $dram_clk

# Address map: the window in the PS's PL region, the DRAM in HPM1's high window (config.tcl;
# the device tree overlay uses the same numbers)
assign_bd_address -offset $clio_ring_base -range $clio_ring_range \
    -target_address_space [get_bd_addr_spaces $ps/Data] [get_bd_addr_segs $m_axil_ring/Reg] -force
assign_bd_address -offset $clio_dram_base -range $clio_dram_range \
    -target_address_space [get_bd_addr_spaces $ps/Data] [get_bd_addr_segs $m_axi_dram/Reg] -force

validate_bd_design
save_bd_design
close_bd_design [current_bd_design]
