#!/bin/sh
# Run `make test`'s steps in stages and print how long each took (also when one fails).
#
#   timed_steps.sh MAKE STAGE [STAGE ...]
#
# A stage is one word or several lanes separated by `|`; a lane is make targets run one after
# the other. The lanes of a stage run side by side: the Yosys runs (`synth`, the board
# synthesis in `fpga-check`) are single-threaded, so on a 2-core machine they take half the
# wall time when they share a stage. Each lane's output is prefixed with `[its+targets]`. A stage
# starts only when the one before it passed; the first failing stage ends the run, after the
# table.
#
# Example: timed_steps.sh make cargo-test rtl "c-example lint synth | fpga-check" cosim-test
set -u
make_cmd=$1
shift
logdir=${TIMED_STEPS_LOG_DIR:-build/test-steps}
mkdir -p "$logdir"
table="$logdir/times.txt"
: > "$table"
now() { date +%s; }
run_start=$(now)
failed=""

run_lane() { # run_lane NAME TARGET...: each target in turn, stop at the first failure
  name=$1
  shift
  for t in "$@"; do
    s=$(now)
    # Each step's own `make rtl` / `make fpga-regs` is skipped: a stage before makes them once.
    if $make_cmd --no-print-directory "$t" HW_RTL_DEP= FPGA_RTL_DEP= FPGA_REGS_DEP=; then rc=0; else rc=$?; fi
    printf '%s %s %s\n' "$t" "$(($(now) - s))" "$rc" >> "$table"
    [ "$rc" -eq 0 ] || return "$rc"
  done
}

print_table() {
  echo
  echo "==== make test: time per step (wall seconds; steps in one stage ran side by side)"
  printf '%-14s %8s  %s\n' step seconds result
  while read -r t secs rc; do
    if [ "$rc" = 0 ]; then r=ok; else r="FAIL (exit $rc)"; fi
    printf '%-14s %8s  %s\n' "$t" "$secs" "$r"
  done < "$table"
  total=$(($(now) - run_start))
  printf '%-14s %8s  %s\n' total "$total" "$(printf '%dm%02ds' $((total / 60)) $((total % 60)))"
}

for stage in "$@"; do
  case "$stage" in
  *"|"*)
    # Lanes side by side, each lane's lines prefixed with its targets.
    pids=""
    lanes=$(printf '%s\n' "$stage" | tr '|' '\n')
    i=0
    old_ifs=$IFS
    IFS='
'
    for lane in $lanes; do
      IFS=$old_ifs
      i=$((i + 1))
      # shellcheck disable=SC2086
      set -- $lane
      name=$(printf '%s' "$*" | tr ' ' '+')
      : > "$logdir/lane$i.out"
      (
        run_lane "$name" "$@" > "$logdir/lane$i.out" 2>&1
        echo $? > "$logdir/lane$i.rc"
      ) &
      pids="$pids $!"
      # Follow the lane's output as it is written.
      tail -n +1 -f --pid=$! "$logdir/lane$i.out" 2>/dev/null | sed -u "s/^/[$name] /" &
      IFS='
'
    done
    IFS=$old_ifs
    wait
    j=1
    while [ "$j" -le "$i" ]; do
      rc=$(cat "$logdir/lane$j.rc" 2>/dev/null || echo 1)
      [ "$rc" = 0 ] || failed="$failed lane$j"
      j=$((j + 1))
    done
    ;;
  *)
    # shellcheck disable=SC2086
    run_lane "$stage" $stage || failed="$failed $stage"
    ;;
  esac
  [ -z "$failed" ] || break
done
print_table
if [ -n "$failed" ]; then
  echo "make test FAILED (see the step above marked FAIL)"
  exit 1
fi
echo "make test: all steps pass"
