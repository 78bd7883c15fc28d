#!/bin/sh
# debian-perf.sh BUILD OUT - an overlay (make run OVERLAY=OUT) with Debian's own arm64 perf,
# unmodified, and its shared libraries (tools/host/debian-overlay.sh), from BUILD/deps/perf-root
# (tools/host/deps.sh downloads linux-perf and the library packages).
set -eu
exec sh "$(dirname "$0")/debian-overlay.sh" "$1/deps/perf-root" usr/bin/perf "$2"
