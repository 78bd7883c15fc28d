#!/bin/sh
# vdiff-record.sh [OUT] - records Linux's answers for tests/e2e/verifier-diff.sh: runs
# tests/fuzz/vdiff (seeds 1-4, 1000 programs each) on Debian's arm64 Linux 6.1 under
# ../shared/tools/refvm.sh and writes one line per program (number, errno, the verifier's
# reason) to OUT (default tests/e2e/vdiff-linux.txt).  Run it again when vdiff.c changes.
set -eu
BUILD=${BUILD:-build}
out=${1:-tests/e2e/vdiff-linux.txt}
refvm=${REFVM:-../shared/tools/refvm.sh}
[ -x "$BUILD/user/bin/vdiff" ] || make -s "$BUILD/user/bin/vdiff"
ov=$(mktemp -d)
trap 'rm -rf "$ov"' EXIT
mkdir -p "$ov/bin"
cp "$BUILD/user/bin/vdiff" "$ov/bin/"
REFVM_QEMU_ARGS="${REFVM_QEMU_ARGS:--nic none}" sh "$refvm" --smp 2 --overlay "$ov" -- \
	'uname -r; for s in 1 2 3 4; do /bin/vdiff $s 1000; done' > "$ov/log" 2>&1
kver=$(grep -m1 '^[0-9]\+\.[0-9]\+\.[0-9]' "$ov/log")
{
	echo "# Linux $kver (Debian arm64, refvm.sh): tests/fuzz/vdiff seeds 1-4 x 1000, by tools/bpf/vdiff-record.sh"
	grep '^[0-9]\+\.[0-9]\+ ' "$ov/log"
} > "$out"
echo "vdiff-record: $(grep -c '^[0-9]' "$out") answers from Linux $kver in $out"
