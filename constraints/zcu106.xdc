# ZCU106 (xczu7ev-ffvc1156-2-e) pin constraints for clio_zcu106_top (fpga/zcu106/rtl/clio_zcu106_top.v).
# Pin locations and I/O standards from the board's public documentation (UG1244 ZCU106 user guide;
# cross-checked with corundum's fpga/mqnic/ZCU106/fpga_zynqmp/fpga.xdc). Every pin names its board
# net. Timing is in constraints/timing.xdc. fpga/scripts/check_ports.py checks that every port here
# exists on the board top and every board-top port is constrained here.

set_property BITSTREAM.GENERAL.COMPRESS true [current_design]
set_property CONFIG_VOLTAGE 1.8 [current_design]

# ---- system clock: 125 MHz LVDS, bank 66
set_property -dict {PACKAGE_PIN H9  IOSTANDARD LVDS} [get_ports clk_125mhz_p] ;# CLK_125_P
set_property -dict {PACKAGE_PIN G9  IOSTANDARD LVDS} [get_ports clk_125mhz_n] ;# CLK_125_N

# ---- user Si570 (U42), 300 MHz default: DDR4 MIG reference, bank 64
set_property -dict {PACKAGE_PIN AH12 IOSTANDARD DIFF_SSTL12} [get_ports clk_user_si570_p] ;# USER_SI570_P
set_property -dict {PACKAGE_PIN AJ12 IOSTANDARD DIFF_SSTL12} [get_ports clk_user_si570_n] ;# USER_SI570_N

# ---- LEDs DS34..DS41 (via level shifter), bank 65/66, LVCMOS12
set_property -dict {PACKAGE_PIN AL11 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[0]}] ;# GPIO_LED_0_LS
set_property -dict {PACKAGE_PIN AL13 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[1]}] ;# GPIO_LED_1_LS
set_property -dict {PACKAGE_PIN AK13 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[2]}] ;# GPIO_LED_2_LS
set_property -dict {PACKAGE_PIN AE15 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[3]}] ;# GPIO_LED_3_LS
set_property -dict {PACKAGE_PIN AM8  IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[4]}] ;# GPIO_LED_4_LS
set_property -dict {PACKAGE_PIN AM9  IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[5]}] ;# GPIO_LED_5_LS
set_property -dict {PACKAGE_PIN AM10 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[6]}] ;# GPIO_LED_6_LS
set_property -dict {PACKAGE_PIN AM11 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports {led[7]}] ;# GPIO_LED_7_LS

# ---- centre push button SW15 (GPIO_SW_C), used as the board reset, LVCMOS12
set_property -dict {PACKAGE_PIN AL10 IOSTANDARD LVCMOS12} [get_ports btnc] ;# GPIO_SW_C

# ---- SFP0 (P2 cage) on GTH quad 225 channel 2 (GTHE4_CHANNEL_X0Y10); no IOSTANDARD on MGT pins
set_property PACKAGE_PIN AA2 [get_ports sfp0_rx_p] ;# SFP0_RX_P, MGTHRXP2_225
set_property PACKAGE_PIN AA1 [get_ports sfp0_rx_n] ;# SFP0_RX_N, MGTHRXN2_225
set_property PACKAGE_PIN Y4  [get_ports sfp0_tx_p] ;# SFP0_TX_P, MGTHTXP2_225
set_property PACKAGE_PIN Y3  [get_ports sfp0_tx_n] ;# SFP0_TX_N, MGTHTXN2_225
# 156.25 MHz SFP reference: U56 Si570 (programmed to 156.25 MHz) via U51 SI53340 buffer
set_property PACKAGE_PIN U10 [get_ports sfp_mgt_refclk_0_p] ;# SFP_SI570_CLOCK_C_P, MGTREFCLK1P_226
set_property PACKAGE_PIN U9  [get_ports sfp_mgt_refclk_0_n] ;# SFP_SI570_CLOCK_C_N, MGTREFCLK1N_226
set_property -dict {PACKAGE_PIN AE22 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports sfp0_tx_disable_b] ;# SFP0_TX_DISABLE_B
set_property -dict {PACKAGE_PIN AF20 IOSTANDARD LVCMOS12 SLEW SLOW DRIVE 8} [get_ports sfp1_tx_disable_b] ;# SFP1_TX_DISABLE_B

# ---- PL DDR4: 64 bit, 4x MT40A256M16GE-075E (U101, U99, U100, U2), banks 64/65
set_property -dict {PACKAGE_PIN AK9  IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[0]}] ;# DDR4_A0
set_property -dict {PACKAGE_PIN AG11 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[1]}] ;# DDR4_A1
set_property -dict {PACKAGE_PIN AJ10 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[2]}] ;# DDR4_A2
set_property -dict {PACKAGE_PIN AL8  IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[3]}] ;# DDR4_A3
set_property -dict {PACKAGE_PIN AK10 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[4]}] ;# DDR4_A4
set_property -dict {PACKAGE_PIN AH8  IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[5]}] ;# DDR4_A5
set_property -dict {PACKAGE_PIN AJ9  IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[6]}] ;# DDR4_A6
set_property -dict {PACKAGE_PIN AG8  IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[7]}] ;# DDR4_A7
set_property -dict {PACKAGE_PIN AH9  IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[8]}] ;# DDR4_A8
set_property -dict {PACKAGE_PIN AG10 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[9]}] ;# DDR4_A9
set_property -dict {PACKAGE_PIN AH13 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[10]}] ;# DDR4_A10
set_property -dict {PACKAGE_PIN AG9  IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[11]}] ;# DDR4_A11
set_property -dict {PACKAGE_PIN AM13 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[12]}] ;# DDR4_A12
set_property -dict {PACKAGE_PIN AF8  IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[13]}] ;# DDR4_A13
set_property -dict {PACKAGE_PIN AC12 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[14]}] ;# DDR4_A14_WE_B
set_property -dict {PACKAGE_PIN AE12 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[15]}] ;# DDR4_A15_CAS_B
set_property -dict {PACKAGE_PIN AF11 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_adr[16]}] ;# DDR4_A16_RAS_B
set_property -dict {PACKAGE_PIN AK8  IOSTANDARD SSTL12_DCI} [get_ports {ddr4_ba[0]}] ;# DDR4_BA0
set_property -dict {PACKAGE_PIN AL12 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_ba[1]}] ;# DDR4_BA1
set_property -dict {PACKAGE_PIN AE14 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_bg[0]}] ;# DDR4_BG0
set_property -dict {PACKAGE_PIN AH11 IOSTANDARD DIFF_SSTL12_DCI} [get_ports {ddr4_ck_t[0]}] ;# DDR4_CK_T
set_property -dict {PACKAGE_PIN AJ11 IOSTANDARD DIFF_SSTL12_DCI} [get_ports {ddr4_ck_c[0]}] ;# DDR4_CK_C
set_property -dict {PACKAGE_PIN AB13 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_cke[0]}] ;# DDR4_CKE
set_property -dict {PACKAGE_PIN AD12 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_cs_n[0]}] ;# DDR4_CS_B
set_property -dict {PACKAGE_PIN AD14 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_act_n}] ;# DDR4_ACT_B
set_property -dict {PACKAGE_PIN AF10 IOSTANDARD SSTL12_DCI} [get_ports {ddr4_odt[0]}] ;# DDR4_ODT
set_property -dict {PACKAGE_PIN AF12 IOSTANDARD LVCMOS12} [get_ports {ddr4_reset_n}] ;# DDR4_RESET_B
# U101: DQ0..DQ15
set_property -dict {PACKAGE_PIN AF16 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[0]}] ;# DDR4_DQ0 (U101.G2)
set_property -dict {PACKAGE_PIN AF18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[1]}] ;# DDR4_DQ1 (U101.F7)
set_property -dict {PACKAGE_PIN AG15 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[2]}] ;# DDR4_DQ2 (U101.H3)
set_property -dict {PACKAGE_PIN AF17 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[3]}] ;# DDR4_DQ3 (U101.H7)
set_property -dict {PACKAGE_PIN AF15 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[4]}] ;# DDR4_DQ4 (U101.H2)
set_property -dict {PACKAGE_PIN AG18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[5]}] ;# DDR4_DQ5 (U101.H8)
set_property -dict {PACKAGE_PIN AG14 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[6]}] ;# DDR4_DQ6 (U101.J3)
set_property -dict {PACKAGE_PIN AE17 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[7]}] ;# DDR4_DQ7 (U101.J7)
set_property -dict {PACKAGE_PIN AA14 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[8]}] ;# DDR4_DQ8 (U101.A3)
set_property -dict {PACKAGE_PIN AC16 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[9]}] ;# DDR4_DQ9 (U101.B8)
set_property -dict {PACKAGE_PIN AB15 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[10]}] ;# DDR4_DQ10 (U101.C3)
set_property -dict {PACKAGE_PIN AD16 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[11]}] ;# DDR4_DQ11 (U101.C7)
set_property -dict {PACKAGE_PIN AB16 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[12]}] ;# DDR4_DQ12 (U101.C2)
set_property -dict {PACKAGE_PIN AC17 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[13]}] ;# DDR4_DQ13 (U101.C8)
set_property -dict {PACKAGE_PIN AB14 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[14]}] ;# DDR4_DQ14 (U101.D3)
set_property -dict {PACKAGE_PIN AD17 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[15]}] ;# DDR4_DQ15 (U101.D7)
set_property -dict {PACKAGE_PIN AH14 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_t[0]}] ;# DDR4_DQS0_T (U101.G3)
set_property -dict {PACKAGE_PIN AJ14 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_c[0]}] ;# DDR4_DQS0_C (U101.F3)
set_property -dict {PACKAGE_PIN AH18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dm_dbi_n[0]}] ;# DDR4_DM0_B (U101.E7)
set_property -dict {PACKAGE_PIN AA16 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_t[1]}] ;# DDR4_DQS1_T (U101.B7)
set_property -dict {PACKAGE_PIN AA15 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_c[1]}] ;# DDR4_DQS1_C (U101.A7)
set_property -dict {PACKAGE_PIN AD15 IOSTANDARD POD12_DCI} [get_ports {ddr4_dm_dbi_n[1]}] ;# DDR4_DM1_B (U101.E2)
# U99: DQ16..DQ31
set_property -dict {PACKAGE_PIN AJ16 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[16]}] ;# DDR4_DQ16 (U99.G2)
set_property -dict {PACKAGE_PIN AJ17 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[17]}] ;# DDR4_DQ17 (U99.F7)
set_property -dict {PACKAGE_PIN AL15 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[18]}] ;# DDR4_DQ18 (U99.H3)
set_property -dict {PACKAGE_PIN AK17 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[19]}] ;# DDR4_DQ19 (U99.H7)
set_property -dict {PACKAGE_PIN AJ15 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[20]}] ;# DDR4_DQ20 (U99.H2)
set_property -dict {PACKAGE_PIN AK18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[21]}] ;# DDR4_DQ21 (U99.H8)
set_property -dict {PACKAGE_PIN AL16 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[22]}] ;# DDR4_DQ22 (U99.J3)
set_property -dict {PACKAGE_PIN AL18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[23]}] ;# DDR4_DQ23 (U99.J7)
set_property -dict {PACKAGE_PIN AP13 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[24]}] ;# DDR4_DQ24 (U99.A3)
set_property -dict {PACKAGE_PIN AP16 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[25]}] ;# DDR4_DQ25 (U99.B8)
set_property -dict {PACKAGE_PIN AP15 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[26]}] ;# DDR4_DQ26 (U99.C3)
set_property -dict {PACKAGE_PIN AN16 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[27]}] ;# DDR4_DQ27 (U99.C7)
set_property -dict {PACKAGE_PIN AN13 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[28]}] ;# DDR4_DQ28 (U99.C2)
set_property -dict {PACKAGE_PIN AM18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[29]}] ;# DDR4_DQ29 (U99.C8)
set_property -dict {PACKAGE_PIN AN17 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[30]}] ;# DDR4_DQ30 (U99.D3)
set_property -dict {PACKAGE_PIN AN18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[31]}] ;# DDR4_DQ31 (U99.D7)
set_property -dict {PACKAGE_PIN AK15 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_t[2]}] ;# DDR4_DQS2_T (U99.G3)
set_property -dict {PACKAGE_PIN AK14 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_c[2]}] ;# DDR4_DQS2_C (U99.F3)
set_property -dict {PACKAGE_PIN AM16 IOSTANDARD POD12_DCI} [get_ports {ddr4_dm_dbi_n[2]}] ;# DDR4_DM2_B (U99.E7)
set_property -dict {PACKAGE_PIN AM14 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_t[3]}] ;# DDR4_DQS3_T (U99.B7)
set_property -dict {PACKAGE_PIN AN14 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_c[3]}] ;# DDR4_DQS3_C (U99.A7)
set_property -dict {PACKAGE_PIN AP18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dm_dbi_n[3]}] ;# DDR4_DM3_B (U99.E2)
# U100: DQ32..DQ47
set_property -dict {PACKAGE_PIN AB19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[32]}] ;# DDR4_DQ32 (U100.G2)
set_property -dict {PACKAGE_PIN AD19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[33]}] ;# DDR4_DQ33 (U100.F7)
set_property -dict {PACKAGE_PIN AC18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[34]}] ;# DDR4_DQ34 (U100.H3)
set_property -dict {PACKAGE_PIN AC19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[35]}] ;# DDR4_DQ35 (U100.H7)
set_property -dict {PACKAGE_PIN AA20 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[36]}] ;# DDR4_DQ36 (U100.H2)
set_property -dict {PACKAGE_PIN AE20 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[37]}] ;# DDR4_DQ37 (U100.H8)
set_property -dict {PACKAGE_PIN AA19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[38]}] ;# DDR4_DQ38 (U100.J3)
set_property -dict {PACKAGE_PIN AD20 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[39]}] ;# DDR4_DQ39 (U100.J7)
set_property -dict {PACKAGE_PIN AF22 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[40]}] ;# DDR4_DQ40 (U100.A3)
set_property -dict {PACKAGE_PIN AH21 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[41]}] ;# DDR4_DQ41 (U100.B8)
set_property -dict {PACKAGE_PIN AG19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[42]}] ;# DDR4_DQ42 (U100.C3)
set_property -dict {PACKAGE_PIN AG21 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[43]}] ;# DDR4_DQ43 (U100.C7)
set_property -dict {PACKAGE_PIN AE24 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[44]}] ;# DDR4_DQ44 (U100.C2)
set_property -dict {PACKAGE_PIN AG20 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[45]}] ;# DDR4_DQ45 (U100.C8)
set_property -dict {PACKAGE_PIN AE23 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[46]}] ;# DDR4_DQ46 (U100.D3)
set_property -dict {PACKAGE_PIN AF21 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[47]}] ;# DDR4_DQ47 (U100.D7)
set_property -dict {PACKAGE_PIN AA18 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_t[4]}] ;# DDR4_DQS4_T (U100.G3)
set_property -dict {PACKAGE_PIN AB18 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_c[4]}] ;# DDR4_DQS4_C (U100.F3)
set_property -dict {PACKAGE_PIN AE18 IOSTANDARD POD12_DCI} [get_ports {ddr4_dm_dbi_n[4]}] ;# DDR4_DM4_B (U100.E7)
set_property -dict {PACKAGE_PIN AF23 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_t[5]}] ;# DDR4_DQS5_T (U100.B7)
set_property -dict {PACKAGE_PIN AG23 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_c[5]}] ;# DDR4_DQS5_C (U100.A7)
set_property -dict {PACKAGE_PIN AH22 IOSTANDARD POD12_DCI} [get_ports {ddr4_dm_dbi_n[5]}] ;# DDR4_DM5_B (U100.E2)
# U2: DQ48..DQ63
set_property -dict {PACKAGE_PIN AL22 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[48]}] ;# DDR4_DQ48 (U2.G2)
set_property -dict {PACKAGE_PIN AJ22 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[49]}] ;# DDR4_DQ49 (U2.F7)
set_property -dict {PACKAGE_PIN AL23 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[50]}] ;# DDR4_DQ50 (U2.H3)
set_property -dict {PACKAGE_PIN AJ21 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[51]}] ;# DDR4_DQ51 (U2.H7)
set_property -dict {PACKAGE_PIN AK20 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[52]}] ;# DDR4_DQ52 (U2.H2)
set_property -dict {PACKAGE_PIN AJ19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[53]}] ;# DDR4_DQ53 (U2.H8)
set_property -dict {PACKAGE_PIN AK19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[54]}] ;# DDR4_DQ54 (U2.J3)
set_property -dict {PACKAGE_PIN AJ20 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[55]}] ;# DDR4_DQ55 (U2.J7)
set_property -dict {PACKAGE_PIN AP22 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[56]}] ;# DDR4_DQ56 (U2.A3)
set_property -dict {PACKAGE_PIN AN22 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[57]}] ;# DDR4_DQ57 (U2.B8)
set_property -dict {PACKAGE_PIN AP21 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[58]}] ;# DDR4_DQ58 (U2.C3)
set_property -dict {PACKAGE_PIN AP23 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[59]}] ;# DDR4_DQ59 (U2.C7)
set_property -dict {PACKAGE_PIN AM19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[60]}] ;# DDR4_DQ60 (U2.C2)
set_property -dict {PACKAGE_PIN AM23 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[61]}] ;# DDR4_DQ61 (U2.C8)
set_property -dict {PACKAGE_PIN AN19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[62]}] ;# DDR4_DQ62 (U2.D3)
set_property -dict {PACKAGE_PIN AN23 IOSTANDARD POD12_DCI} [get_ports {ddr4_dq[63]}] ;# DDR4_DQ63 (U2.D7)
set_property -dict {PACKAGE_PIN AK22 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_t[6]}] ;# DDR4_DQS6_T (U2.G3)
set_property -dict {PACKAGE_PIN AK23 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_c[6]}] ;# DDR4_DQS6_C (U2.F3)
set_property -dict {PACKAGE_PIN AL20 IOSTANDARD POD12_DCI} [get_ports {ddr4_dm_dbi_n[6]}] ;# DDR4_DM6_B (U2.E7)
set_property -dict {PACKAGE_PIN AM21 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_t[7]}] ;# DDR4_DQS7_T (U2.B7)
set_property -dict {PACKAGE_PIN AN21 IOSTANDARD DIFF_POD12_DCI} [get_ports {ddr4_dqs_c[7]}] ;# DDR4_DQS7_C (U2.A7)
set_property -dict {PACKAGE_PIN AP19 IOSTANDARD POD12_DCI} [get_ports {ddr4_dm_dbi_n[7]}] ;# DDR4_DM7_B (U2.E2)
