#!/bin/sh
# run.sh - every fuzzer (tests/fuzz/fuzz-*.sh).  FUZZ_LONG=1 (make fuzz) runs them long.
# The eBPF fuzzer's bounded form runs inside make test (tier 10's test_bpf_fuzz); the guest
# syscall fuzzers run only here.
rc=0
for f in tests/fuzz/fuzz-*.sh; do
	[ -e "$f" ] || continue
	echo "=== $(basename "$f" .sh) ==="
	sh "$f" || rc=1
done
exit $rc
