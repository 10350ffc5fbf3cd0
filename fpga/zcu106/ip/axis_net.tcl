# Width and clock conversion between the 10G MAC (64 bit, 156.25 MHz) and the fast path
# (512 bit, 250 MHz). PG085 AXI4-Stream infrastructure IP.
#   RX: axis_rx_64_512 (MAC clock) -> axis_fifo_512_async (156.25 -> 250, packet mode)
#   TX: axis_fifo_512_async (250 -> 156.25, packet mode, so a frame starts only when it is
#       complete: the MAC cannot pause mid-frame) -> axis_tx_512_64 (MAC clock)
# FIFO depth 512 beats of 512 bit = 32 KiB, several jumbo-free frames (Clio frames are at
# most MAX_PAYLOAD 1024 + headers).
foreach {name s_bytes m_bytes} {axis_rx_64_512 8 64 axis_tx_512_64 64 8} {
    create_ip -name axis_dwidth_converter -vendor xilinx.com -library ip -module_name $name
    set_property -dict [list \
        CONFIG.S_TDATA_NUM_BYTES $s_bytes \
        CONFIG.M_TDATA_NUM_BYTES $m_bytes \
        CONFIG.HAS_TLAST {1} \
        CONFIG.HAS_TKEEP {1} \
        CONFIG.HAS_ACLKEN {0} \
    ] [get_ips $name]
}
# One FIFO IP, two instances in the board top (axis_rx_fifo, axis_tx_fifo).
create_ip -name axis_data_fifo -vendor xilinx.com -library ip -module_name axis_fifo_512_async
set_property -dict [list \
    CONFIG.TDATA_NUM_BYTES {64} \
    CONFIG.FIFO_DEPTH {512} \
    CONFIG.HAS_TLAST {1} \
    CONFIG.HAS_TKEEP {1} \
    CONFIG.IS_ACLK_ASYNC {1} \
    CONFIG.SYNCHRONIZATION_STAGES {3} \
    CONFIG.FIFO_MODE {2} \
] [get_ips axis_fifo_512_async]
