# Place and route: vivado -mode batch -source fpga/zcu106/impl.tcl (after synth.tcl)
source [file join [file dirname [info script]] config.tcl]
clio_run impl_1 implementation
report_utilization -file [file join $clio_out impl_utilization.rpt]
report_timing_summary -max_paths 20 -file [file join $clio_out impl_timing.rpt]
report_clock_interaction -file [file join $clio_out impl_clock_interaction.rpt]
report_cdc -file [file join $clio_out impl_cdc.rpt]
set wns [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]]
set whs [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -hold]]
puts "timing: WNS $wns ns, WHS $whs ns"
if {$wns < 0 || $whs < 0} { error "timing not met (WNS $wns, WHS $whs): see impl_timing.rpt" }
