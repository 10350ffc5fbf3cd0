#!/bin/sh
# Build the C example against CLib's static library and header, start a memory node
# (`clio board` on a free loopback port), run the example against it, and exit with its
# status. Usage: clib/examples/run.sh   (from anywhere; honours CARGO_TARGET_DIR and CC)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cc=${CC:-cc}

cd "$root"
cargo build --quiet -p clio-clib
cargo build --quiet -p clio --bin clio
work=$(mktemp -d)
board_pid=""
cleanup() {
    [ -n "$board_pid" ] && kill "$board_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

"$cc" -std=c99 -Wall -Wextra -Werror -O2 -I "$root/clib/include" "$here/example.c" \
    "$target/debug/libclio_clib.a" -lpthread -ldl -lm -lrt -o "$work/example"

"$target/debug/clio" board --listen 127.0.0.1:0 --memory 256M > "$work/board.out" 2>&1 &
board_pid=$!
addr=""
for _ in $(seq 1 100); do
    addr=$(sed -n 's/^clio board: listening on \([0-9.:]*\).*/\1/p' "$work/board.out" | head -n 1)
    [ -n "$addr" ] && break
    sleep 0.1
done
if [ -z "$addr" ]; then
    echo "run.sh: the memory node did not start:" >&2
    cat "$work/board.out" >&2
    exit 1
fi
"$work/example" "$addr"
