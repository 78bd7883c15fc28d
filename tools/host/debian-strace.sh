#!/bin/sh
# debian-strace.sh BUILD OUT - an overlay (make run OVERLAY=OUT) with Debian's own arm64 strace,
# unmodified, and its shared libraries (tools/host/debian-overlay.sh), from
# BUILD/deps/strace-root (tools/host/deps.sh downloads strace and the library packages).
set -eu
exec sh "$(dirname "$0")/debian-overlay.sh" "$1/deps/strace-root" usr/bin/strace "$2"
