#!/bin/sh
# run.sh - every fuzzer (tests/fuzz/fuzz-*.sh).  FUZZ_LONG=1 (make fuzz) runs them long;
# the bounded form runs inside make test through a tier script.
rc=0
for f in tests/fuzz/fuzz-*.sh; do
	[ -e "$f" ] || continue
	echo "=== $(basename "$f" .sh) ==="
	sh "$f" || rc=1
done
exit $rc
