#!/bin/sh
# Replace the generated table in docs/utilization.md (between the synth-table markers) with
# the table in $1. Usage: update_utilization.sh build/synth/table.md docs/utilization.md
set -eu
table=$1; doc=$2
grep -q '<!-- synth-table:begin -->' "$doc" || { echo "$doc: no synth-table markers" >&2; exit 1; }
awk -v t="$table" '
  /<!-- synth-table:begin -->/ { print; while ((getline l < t) > 0) print l; skip = 1; next }
  /<!-- synth-table:end -->/ { skip = 0 }
  !skip { print }
' "$doc" > "$doc.tmp" && mv "$doc.tmp" "$doc"
