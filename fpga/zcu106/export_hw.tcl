# Hardware export for PetaLinux / the Vitis platform: build/fpga/zcu106/clio_zcu106.xsa
# (hardware description with the PS configuration, address map and bitstream).
source [file join [file dirname [info script]] config.tcl]
open_project [file join $clio_out $clio_proj $clio_proj.xpr]
open_run impl_1
set xsa [file join $clio_out $clio_proj.xsa]
write_hw_platform -fixed -include_bit -force -file $xsa
puts "hardware export: $xsa"
