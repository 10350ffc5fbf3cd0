# Program the board over JTAG (the bitstream only; Linux then loads nothing):
#   vivado -mode batch -source fpga/zcu106/program.tcl
# On a running Linux the usual route is fpgautil with the .bit.bin (docs/fpga.md).
source [file join [file dirname [info script]] config.tcl]
open_hw_manager
connect_hw_server
open_hw_target
set dev [lindex [get_hw_devices xczu7*] 0]
current_hw_device $dev
set_property PROGRAM.FILE [file join $clio_out $clio_proj.bit] $dev
program_hw_devices $dev
close_hw_manager
