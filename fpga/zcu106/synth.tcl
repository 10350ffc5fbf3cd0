# Synthesis: vivado -mode batch -source fpga/zcu106/synth.tcl (after create_project.tcl)
source [file join [file dirname [info script]] config.tcl]
clio_run synth_1 synthesis
report_utilization -file [file join $clio_out synth_utilization.rpt]
report_utilization -hierarchical -file [file join $clio_out synth_utilization_hier.rpt]
