#!/bin/sh
# run-linux.sh - run every tests/user program on real Linux 6.1 (Debian's arm64 kernel under
# the same QEMU, ../shared/tools/refvm.sh): the ABI reference each program must also pass.
#   make test-linux      (not part of make test: the first run downloads ~60 MB)
set -eu
BUILD=${BUILD:-build}
ov=$(mktemp -d)
trap 'rm -rf "$ov"' EXIT
mkdir -p "$ov/bin"
cp "$BUILD"/user/bin/t_* "$BUILD"/user/bin/profile "$BUILD"/user/bin/hot tests/user/t_*.sh "$ov/bin/"
sh ../shared/tools/refvm.sh --smp 4 --overlay "$ov" -- \
	'for t in /bin/t_*; do $t; echo "rc($t)=$?"; done' | tee "$ov/log"
p=$(grep -c '^PASS ' "$ov/log" || true)
f=$(grep -c '^FAIL ' "$ov/log" || true)
echo "$p passed, $f failed"
[ "$f" -eq 0 ]
