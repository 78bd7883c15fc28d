#!/bin/sh
# debian-perf.sh BUILD OUT - an overlay (make run OVERLAY=OUT) with Debian's own arm64 perf,
# unmodified, and its shared libraries (tools/host/debian-overlay.sh), from BUILD/deps/perf-root
# (tools/host/deps.sh downloads linux-perf and the library packages); and OUT/usr/lib/perf-core,
# perf's scripts, among them the shell tests `perf test` lists after its C tests.
set -eu
sh "$(dirname "$0")/debian-overlay.sh" "$1/deps/perf-root" usr/bin/perf "$2"
mkdir -p "$2/usr/lib"
cp -a "$1/deps/perf-root/usr/lib/perf-core" "$2/usr/lib/perf-core"
