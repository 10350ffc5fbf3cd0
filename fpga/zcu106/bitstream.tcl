# Bitstream: vivado -mode batch -source fpga/zcu106/bitstream.tcl (after impl.tcl)
# Writes build/fpga/zcu106/clio_zcu106.bit and, for Linux's FPGA manager (fpgautil, device
# tree overlays), clio_zcu106.bit.bin (the same bitstream without the header, byte-swapped).
source [file join [file dirname [info script]] config.tcl]
open_project [file join $clio_out $clio_proj $clio_proj.xpr]
open_run impl_1
set bit [file join $clio_out $clio_proj.bit]
write_bitstream -force $bit
write_cfgmem -force -format bin -interface SMAPx32 -disablebitswap \
    -loadbit [list up 0x0 $bit] [file join $clio_out $clio_proj.bit.bin]
puts "bitstream: $bit"
