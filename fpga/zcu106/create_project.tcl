# Create the Vivado project of the Clio memory node for the ZCU106 (run from any directory):
#   vivado -mode batch -source fpga/zcu106/create_project.tcl
# Needs build/rtl/fastpath_top.v and build/rtl/clio_ring_regs.vh (`make rtl fpga-regs`).
source [file join [file dirname [info script]] config.tcl]

foreach f [list fastpath_top.v clio_ring_regs.vh clio_board_cfg.vh] {
    if {![file exists [file join $clio_rtl_gen $f]]} {
        error "missing [file join $clio_rtl_gen $f]: run `make rtl fpga-regs` in the repository first"
    }
}

file mkdir $clio_out
create_project -force $clio_proj [file join $clio_out $clio_proj] -part $clio_part
# The board part is optional (only used for the PS presets); the part alone is enough.
if {[lsearch -exact [get_board_parts -quiet] $clio_board] >= 0} {
    set_property board_part $clio_board [current_project]
}
set_property target_language Verilog [current_project]
set_property default_lib work [current_project]

# RTL: the generated fast path (every module file make rtl produced) and the hand-written board
set gen_files [glob -nocomplain [file join $clio_rtl_gen *.v]]
add_files -fileset sources_1 $gen_files
add_files -fileset sources_1 [glob [file join $clio_here rtl *.v]]
foreach vh {clio_ring_regs.vh clio_board_cfg.vh} {
    add_files -fileset sources_1 [file join $clio_rtl_gen $vh]
    set_property file_type {Verilog Header} [get_files $vh]
}
set_property include_dirs [list $clio_rtl_gen] [get_filesets sources_1]
set_property top $clio_top [get_filesets sources_1]

# Constraints
add_files -fileset constrs_1 [file join $clio_repo constraints zcu106.xdc]
add_files -fileset constrs_1 [file join $clio_repo constraints timing.xdc]

# Vendor IP and the PS block design
foreach ip_tcl {zynq_ps.tcl ddr4_0.tcl eth_10g_sfp0.tcl axis_net.tcl axi_cc_dram.tcl axi_xbar_dram.tcl} {
    source [file join $clio_here ip $ip_tcl]
}
generate_target all [get_ips]
set bd_file [get_files zynq_ps.bd]
generate_target all $bd_file
create_ip_run $bd_file
update_compile_order -fileset sources_1
puts "created [file join $clio_out $clio_proj $clio_proj.xpr]"
