#!/bin/sh
# Turn yosys `stat` reports (build/synth/<module>.stat) into the markdown utilisation table.
# LUT = LUT1..LUT6 cells, FF = FD* cells, BRAM = RAMB18 counted as 1/2 of a RAMB36, LUTRAM =
# RAM32M/RAM64M/RAM*X1* cells (counted separately), DSP = DSP48E2; levels = the deepest
# register-to-register logic in LUT levels from build/synth/<module>.depth
# (hw/scripts/logic_depth.py: "module levels luts from -> to"), "-" when there is none.
# Usage: util_table.sh build/synth/a.stat build/synth/b.stat ...
set -eu
printf '| module | LUT | FF | BRAM (36Kb) | LUTRAM cells | DSP | LUT levels | deepest path (from -> to) |\n|---|---:|---:|---:|---:|---:|---:|---|\n'
for f in "$@"; do
  m=$(basename "$f" .stat)
  d="${f%.stat}.depth"
  if [ -f "$d" ]; then
    levels=$(awk '{ print $2 }' "$d")
    path=$(awk '{ $1 = ""; $2 = ""; $3 = ""; sub(/^ +/, ""); print }' "$d" | sed 's/|/\\|/g')
  else
    levels=-; path=-
  fi
  awk -v m="$m" -v levels="$levels" -v path="$path" '
    # Only the totals of the top design (the last "Number of cells" section).
    /=== design hierarchy ===/ { exit }
    $1 ~ /^LUT[1-6]$/ { lut += $2 }
    $1 ~ /^FD[CPRSE]+$/ { ff += $2 }
    $1 == "RAMB36E2" { bram += $2 }
    $1 == "RAMB18E2" { bram += $2 / 2 }
    $1 ~ /^RAM(32|64|128|256)(M|M16|X1[SD])/ { lutram += $2 }
    $1 == "DSP48E2" { dsp += $2 }
    END { printf "| %s | %d | %d | %g | %d | %d | %s | `%s` |\n", m, lut, ff, bram, lutram, dsp, levels, path }
  ' "$f"
done
