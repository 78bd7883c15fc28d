#!/bin/sh
# fuzz-bpf.sh - the eBPF verifier/interpreter fuzzer (tests/unit/test_bpf_fuzz.c) run long:
# random and mutated programs through BPF_PROG_LOAD, every accepted one run under ASan.
# make fuzz (FUZZ_LONG=1): 4 seeds x 500,000 programs; otherwise 4 x 20,000.
# BPF_FUZZ_ITERS and BPF_FUZZ_SEED ("1 2 3") override; a failing seed reproduces exactly.
BUILD="${BUILD:-build}"
bin="$BUILD/unit/test_bpf_fuzz"
[ -x "$bin" ] || { echo "FAIL fuzz-bpf: $bin not built"; exit 1; }
if [ -n "$FUZZ_LONG" ]; then iters=500000; else iters=20000; fi
iters="${BPF_FUZZ_ITERS:-$iters}"
rc=0
for s in ${BPF_FUZZ_SEED:-1 2 3 4}; do
	if out=$(BPF_FUZZ_SEED=$s BPF_FUZZ_ITERS=$iters "$bin" 2>&1); then
		echo "PASS fuzz-bpf seed $s: $(printf '%s\n' "$out" | grep '^fuzz:')"
	else
		echo "FAIL fuzz-bpf seed $s"
		printf '%s\n' "$out" | grep -E 'ERROR|SUMMARY|#[0-9] |iteration' | head -20
		rc=1
	fi
done
exit $rc
