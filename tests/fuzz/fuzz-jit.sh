#!/bin/sh
# fuzz-jit.sh - the JIT's differential fuzzer (bpf-run --fuzz, tools/bpf-run/bpf-run.c): random
# programs through the interpreter and the arm64 JIT as aarch64 code under qemu-aarch64, with
# LSE atomics, with LDAXR/STLXR loops, and on cortex-a72.  r0 and the stack must match.
# make test runs a bounded form (tier 20); FUZZ_LONG=1 (make fuzz) runs 200,000 per mode.
# Env: BUILD (build), FUZZ_LONG, JIT_FUZZ_N (programs per mode), JIT_FUZZ_SEED.
BUILD="${BUILD:-build}"
A64="$BUILD/host/bpf-run-a64"
N=${JIT_FUZZ_N:-$([ "${FUZZ_LONG:-}" = 1 ] && echo 200000 || echo 3000)}
SEED=${JIT_FUZZ_SEED:-$(date +%s)}
if [ ! -x "$A64" ] || ! command -v qemu-aarch64 >/dev/null 2>&1; then
	echo "SKIP jit fuzz: $A64 or qemu-aarch64 (Debian's qemu-user) missing"
	exit 0
fi
rc=0
for mode in "max --jit" "max --jit-llsc" "cortex-a72 --jit"; do
	set -- $mode
	out=$(qemu-aarch64 -cpu "$1" "$A64" "$2" --fuzz "$N" --seed "$SEED" 2>&1)
	if [ $? -eq 0 ]; then
		echo "PASS jit fuzz ($1 $2, seed $SEED): $(printf '%s\n' "$out" | tail -1)"
	else
		echo "FAIL jit fuzz ($1 $2, seed $SEED): $(printf '%s\n' "$out" | tail -1)"
		printf '%s\n' "$out" | head -80
		rc=1
	fi
done
exit $rc
