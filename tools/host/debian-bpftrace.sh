#!/bin/sh
# debian-bpftrace.sh BUILD OUT - an overlay (make run OVERLAY=OUT) with Debian's own arm64
# bpftrace 0.17, unmodified, and its shared libraries (LLVM 14 and libclang: 188 MB) (tools/host/debian-overlay.sh), from
# BUILD/deps/bpftrace-root (tools/host/deps.sh downloads bpftrace and the library packages).
set -eu
exec sh "$(dirname "$0")/debian-overlay.sh" "$1/deps/bpftrace-root" usr/bin/bpftrace "$2"
