#!/bin/sh
# debian-bpftool.sh BUILD OUT - an overlay (make run OVERLAY=OUT) with Debian's own arm64
# bpftool 7.1, unmodified, and its shared libraries (tools/host/debian-overlay.sh), from
# BUILD/deps/bpftool-root (tools/host/deps.sh downloads bpftool and the library packages).
set -eu
exec sh "$(dirname "$0")/debian-overlay.sh" "$1/deps/bpftool-root" usr/sbin/bpftool "$2"
