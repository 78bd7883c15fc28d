#!/bin/sh
# debian-bpftrace.sh BUILD OUT - an overlay (make run OVERLAY=OUT) with Debian's own arm64
# bpftrace 0.17, unmodified, and its shared libraries (LLVM 14 and libclang: 188 MB;
# tools/host/debian-overlay.sh), from BUILD/deps/bpftrace-root (tools/host/deps.sh downloads bpftrace and the library packages).
# It also carries the uapi headers (linux/, asm-generic/, the arm64 asm/) that bpftrace's
# clang includes to parse a tracepoint's fields when the kernel has no BTF (on Linux too).
set -eu
root=$1/deps/bpftrace-root
sh "$(dirname "$0")/debian-overlay.sh" "$root" usr/bin/bpftrace "$2"
mkdir -p "$2/usr/include/aarch64-linux-gnu"
cp -a "$root/usr/include/linux" "$root/usr/include/asm-generic" "$2/usr/include/"
cp -a "$root/usr/include/aarch64-linux-gnu/asm" "$2/usr/include/aarch64-linux-gnu/"
