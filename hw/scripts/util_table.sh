#!/bin/sh
# Turn yosys `stat` reports into the markdown utilisation table. Each module is synthesised
# with two LUT mappings (hw/rtl.mk): `wide` (synth_xilinx's default, LUT7-9 built from
# MUXF7/F8/F9) and `lut6` (-nowidelut). Both are implementations of the same RTL; the table
# reports the one with fewer LUTs and names the other's LUTs and depth beside it (Yosys's
# delay-driven mapping builds wide XOR trees, such as a CRC's, from MUXF cascades at two to
# three times the LUTs of a LUT6 tree that is no deeper).
# LUT = LUT1..LUT6 cells, FF = FD* cells, BRAM = RAMB18 counted as 1/2 of a RAMB36, LUTRAM =
# RAM32M/RAM64M/RAM*X1* cells (counted separately), DSP = DSP48E2; levels = the deepest
# register-to-register logic in LUT levels from <module>.<mapping>.depth
# (hw/scripts/logic_depth.py: "module levels luts from -> to"), "-" when there is none.
# Usage: util_table.sh build/synth/a build/synth/b ... (each with a.wide.stat, a.lut6.stat;
# a.lut6.stat may be missing when only the wide mapping ran)
set -eu
printf '| module | LUT | FF | BRAM (36Kb) | LUTRAM cells | DSP | LUT levels | mapping (the other one) | deepest path (from -> to) |\n|---|---:|---:|---:|---:|---:|---:|---|---|\n'
# One stat file -> "lut ff bram lutram dsp".
counts() {
  awk '
    /=== design hierarchy ===/ { exit }
    $1 ~ /^LUT[1-6]$/ { lut += $2 }
    $1 ~ /^FD[CPRSE]+$/ { ff += $2 }
    $1 == "RAMB36E2" { bram += $2 }
    $1 == "RAMB18E2" { bram += $2 / 2 }
    $1 ~ /^RAM(32|64|128|256)(M|M16|X1[SD])/ { lutram += $2 }
    $1 == "DSP48E2" { dsp += $2 }
    END { printf "%d %d %g %d %d\n", lut, ff, bram, lutram, dsp }
  ' "$1"
}
levels_of() { if [ -f "$1" ]; then awk '{ print $2 }' "$1"; else echo -; fi; }
path_of() {
  if [ -f "$1" ]; then
    awk '{ $1 = ""; $2 = ""; $3 = ""; sub(/^ +/, ""); print }' "$1" | sed 's/|/\\|/g'
  else
    echo -
  fi
}
for base in "$@"; do
  m=$(basename "$base")
  if [ ! -f "$base.lut6.stat" ]; then
    # One mapping run (SYNTH_MAPPINGS=wide): report it, the other as not run.
    set -- $(counts "$base.wide.stat")
    printf '| %s | %d | %d | %s | %d | %d | %s | wide (lut6 not run) | `%s` |\n' \
      "$m" "$1" "$2" "$3" "$4" "$5" "$(levels_of "$base.wide.depth")" "$(path_of "$base.wide.depth")"
    continue
  fi
  set -- $(counts "$base.wide.stat"); wl=$1
  set -- $(counts "$base.lut6.stat"); ll=$1
  if [ "$ll" -lt "$wl" ]; then pick=lut6; other=wide; ol=$wl; else pick=wide; other=lut6; ol=$ll; fi
  set -- $(counts "$base.$pick.stat")
  printf '| %s | %d | %d | %s | %d | %d | %s | %s (%s: %d LUT, %s levels) | `%s` |\n' \
    "$m" "$1" "$2" "$3" "$4" "$5" "$(levels_of "$base.$pick.depth")" \
    "$pick" "$other" "$ol" "$(levels_of "$base.$other.depth")" "$(path_of "$base.$pick.depth")"
done
