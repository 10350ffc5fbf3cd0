# Synthesis: vivado -mode batch -source fpga/zcu106/synth.tcl (after create_project.tcl)
source [file join [file dirname [info script]] config.tcl]
open_project [file join $clio_out $clio_proj $clio_proj.xpr]
reset_run synth_1
launch_runs synth_1 -jobs [expr {[info exists ::env(JOBS)] ? $::env(JOBS) : 4}]
wait_on_run synth_1
if {[get_property PROGRESS [get_runs synth_1]] ne "100%"} { error "synthesis failed" }
open_run synth_1
report_utilization -file [file join $clio_out synth_utilization.rpt]
report_utilization -hierarchical -file [file join $clio_out synth_utilization_hier.rpt]
