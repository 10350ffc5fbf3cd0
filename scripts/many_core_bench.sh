#!/bin/bash
# The many-core figures (docs/perf-cores.md) on a host that has the cores but no toolchain.
#
#   scripts/many_core_bench.sh pack DIR     # here: release build, clio + memcached (+ its
#                                           # libraries, from this Debian host) into DIR
#   DIR/many_core_bench.sh run [quick]      # there: the benches; results in $OUT (default
#                                           # /tmp/many-core-out); quick: tiny parameters
#
# The packed folder is self-contained (about 11 MiB): copy it to the many-core host and run it.
# memcached is optional: without it the YCSB runs measure Clio-KV only and say so.
set -euo pipefail
self=$(readlink -f "$0")

case "${1:-}" in
pack)
	dir=$(realpath -m "${2:?usage: $0 pack DIR}")
	cd "$(dirname "$self")/.."
	cargo build --release --bin clio
	mkdir -p "$dir/bin" "$dir/lib"
	cp target/release/clio "$dir/bin/"
	cp "$self" "$dir/many_core_bench.sh"
	if mc=$(command -v memcached); then
		cp "$mc" "$dir/lib/memcached.real"
		# Its libraries as this host has them (the other host may lack them).
		ldd "$mc" | awk '/=> \// {print $3}' | grep -v -E 'libc\.so|ld-linux' |
			while read -r l; do cp -L "$l" "$dir/lib/"; done
		cat >"$dir/bin/memcached" <<'EOF'
#!/bin/sh
d=$(dirname "$(readlink -f "$0")")/../lib
LD_LIBRARY_PATH="$d" exec "$d/memcached.real" "$@"
EOF
		chmod +x "$dir/bin/memcached"
	else
		echo "memcached is not installed here (make bench-deps): packing clio alone"
	fi
	du -sh "$dir"
	;;
run)
	cd "$(dirname "$self")"
	export PATH=$PWD/bin:$PATH
	out=${OUT:-/tmp/many-core-out}
	mkdir -p "$out"
	if [ "${2:-}" = quick ]; then
		s=0.2 t=1,2 nt=1,2 k=2000 d=0.5 w=0.2 ct=2
	else
		s=1 t=1,2,4,8,16 nt=1,8 k=100000 d=3 w=1 ct=8
	fi
	{ nproc; uname -r; head -2 /etc/os-release; date; } >"$out/host.txt" 2>&1
	clio bench scale --threads $t --node-threads $nt --seconds $s --out "$out/scale" \
		>"$out/scale.txt" 2>&1
	for c in $ct 4; do
		clio bench ycsb --systems clio-kv,memcached --cns 2 --threads $c --keys $k \
			--value-size 1024 --theta 0.99 --duration $d --warmup $w --node-threads 8 \
			--out "$out/ycsb$c" >"$out/ycsb_cn_threads$c.txt" 2>&1
	done
	date >>"$out/host.txt"
	;;
*)
	sed -n 2,9p "$self"
	exit 2
	;;
esac
