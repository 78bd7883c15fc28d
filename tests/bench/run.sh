#!/bin/sh
# run.sh - every benchmark (tests/bench/bench-*.sh); each prints its figures with the baseline
# run beside it and the ratio.  Benchmarks are not tests: they measure, they do not pass or fail.
rc=0
for b in tests/bench/bench-*.sh; do
	[ -e "$b" ] || continue
	echo "=== $(basename "$b" .sh) ==="
	sh "$b" || rc=1
done
exit $rc
