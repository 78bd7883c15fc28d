#!/bin/sh
# bench-bpf.sh - the eBPF interpreter's cost per executed instruction, on the clang -O2
# -target bpf programs in tests/bpf/bench_*.bpf.c run through bpf-run (4 KiB benchmark buffer).
#   host insn/insn: valgrind callgrind instruction counts, (I(repeat N) - I(repeat 1)) over
#                   (N-1) * insns, so start-up, decoding and the counting run cancel out;
#   ns/insn:        wall time of the fast interpreter over a few hundred ms of runs.
# Target: at most 8 host instructions per eBPF instruction on every program.
BUILD="${BUILD:-build}"
RUN="$BUILD/host/bpf-run"
[ -x "$RUN" ] || { echo "bpf-run not built: $RUN"; exit 1; }
have_vg=1
command -v valgrind >/dev/null 2>&1 || have_vg=0

collected() { # instructions valgrind counted for: bpf-run --repeat $1 $2
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$RUN" --repeat "$1" "$2" 2>&1 |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

printf '%-10s %12s %16s %10s\n' program insns/run host-insn/insn ns/insn
rc=0
for name in sum fnv classify alu helper; do
	bin="$BUILD/bpf/bench_$name.bin"
	[ -f "$bin" ] || { echo "missing $bin"; rc=1; continue; }
	insns=$("$RUN" "$bin" | sed -n 's/.* insns=\([0-9]*\).*/\1/p')
	# about 2 million eBPF instructions under callgrind, at least 2 repeats
	n=$((2000000 / insns + 2))
	if [ $have_vg -eq 1 ]; then
		i1=$(collected 1 "$bin")
		iN=$(collected "$n" "$bin")
		hpi=$(awk -v a="$i1" -v b="$iN" -v n="$n" -v k="$insns" 'BEGIN { printf "%.2f", (b - a) / ((n - 1) * k) }')
	else
		hpi="n/a"
	fi
	# about 200 ms natively
	r=$((200000000 / insns + 1))
	ns=$("$RUN" --time --repeat "$r" "$bin" | sed -n 's/^ns_per_run=//p')
	npi=$(awk -v t="$ns" -v k="$insns" 'BEGIN { printf "%.3f", t / k }')
	printf '%-10s %12s %16s %10s\n' "$name" "$insns" "$hpi" "$npi"
done
exit $rc
