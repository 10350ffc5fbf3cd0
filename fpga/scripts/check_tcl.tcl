#!/usr/bin/env tclsh
# Tcl-level check of the Vivado scripts and XDC files without Vivado.
#
#   tclsh fpga/scripts/check_tcl.tcl FILE...
#
# Each file is first checked for complete commands (balanced braces, brackets, quotes), then
# *executed* in a fresh interpreter in which the Vivado commands the flow uses are stubbed:
# each stub records the call and returns a placeholder object (get_property answers as a
# finished, timing-clean run would, so every branch of the scripts runs). Everything else is
# real Tcl, so an undefined variable, a misspelt command (not in the stub list), a bad expr,
# `source` of a missing file or an error raised by the script itself fails the check.
# What this cannot know: whether Vivado accepts the command options and IP parameter names.

set vivado_cmds {
    add_files apply_bd_automation assign_bd_address close_bd_design close_hw_manager
    connect_bd_intf_net connect_bd_net connect_hw_server create_bd_cell create_bd_design
    create_bd_intf_port create_bd_port create_clock create_generated_clock create_ip create_ip_run
    create_project current_bd_design current_design current_hw_device current_project
    generate_target get_bd_addr_segs get_bd_addr_spaces get_bd_intf_pins get_bd_pins get_board_parts
    get_cells get_clocks get_files get_filesets get_hw_devices get_ips get_pins get_ports
    get_property get_runs get_timing_paths launch_runs open_hw_manager open_hw_target open_project
    open_run program_hw_devices report_cdc report_clock_interaction report_timing_summary
    report_utilization reset_run save_bd_design set_clock_groups set_false_path set_input_delay
    set_max_delay set_output_delay set_property update_compile_order validate_bd_design
    wait_on_run write_bitstream write_cfgmem write_hw_platform
}

proc stub {log cmd args} {
    upvar #0 $log calls
    lappend calls [list $cmd {*}$args]
    switch -- $cmd {
        get_property {
            set prop [lindex $args end-1]
            switch -- $prop { PROGRESS { return 100% } SLACK { return 0.000 } default { return "" } }
        }
        get_board_parts { return {} }
        default { return "stub:$cmd" }
    }
}

set failures 0
set checked 0
foreach f $argv {
    incr checked
    if {![file readable $f]} { puts "FAIL $f: not readable"; incr failures; continue }
    set fh [open $f]; set text [read $fh]; close $fh
    if {![info complete $text]} {
        puts "FAIL $f: incomplete Tcl (unbalanced braces, brackets or quotes)"
        incr failures; continue
    }
    set ::calls_$checked {}
    set i [interp create]
    foreach c $vivado_cmds { $i alias $c stub ::calls_$checked $c }
    $i eval [list set ::argv {}]
    $i eval [list set ::argc 0]
    if {[catch {$i eval [list source $f]} err]} {
        puts "FAIL $f: $err"
        incr failures
    } else {
        puts [format "ok   %-45s %4d Vivado commands" $f [llength [set ::calls_$checked]]]
    }
    interp delete $i
}
if {$checked == 0} { puts "FAIL: no files given"; exit 2 }
if {$failures} { puts "check_tcl: $failures of $checked files FAILED"; exit 1 }
puts "check_tcl: all $checked files pass"
