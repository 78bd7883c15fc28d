#!/bin/sh
# Tier 2: eBPF on the host, outside cmocka.
#   - every bpf_conformance vector in ../shared/bpf-conformance through bpf-run (the
#     verifier-free interpreter path);
#   - bpf-run's assembler against the suite's own assembly (ASSEMBLED.tsv), slot for slot;
#   - the clang-built benchmark programs (tests/bpf/bench_*.bpf.c) give the results a host C
#     build of the same code gives;
#   - bpf-run's own behaviour: --mem, rejection of a malformed program, and of a helper
#     call whose pointer argument nothing checks (issue 14: it crashed the tool).
# Run from the repo root with $BUILD set; ends with "N passed, M failed".
BUILD="${BUILD:-build}"
RUN="$BUILD/host/bpf-run"
# The vectors are data from shared/ beside the repository (CI lays it out so); a clone on its
# own has none, and then this part is skipped with one line that says so.
CONF=${BPF_CONFORMANCE:-../shared/bpf-conformance}
pass=0 fail=0
ok() { echo "PASS $1"; pass=$((pass + 1)); }
bad() { echo "FAIL $1"; fail=$((fail + 1)); }

if [ ! -x "$RUN" ]; then
	bad "bpf-run not built ($RUN)"
	echo "$pass passed, $fail failed"
	exit 1
fi

# 1. conformance vectors
if [ -d "$CONF" ]; then
	out=$("$RUN" "$CONF")
	printf '%s\n' "$out" | grep -E '^(PASS|FAIL) '
	p=$(printf '%s\n' "$out" | grep -c '^PASS ')
	f=$(printf '%s\n' "$out" | grep -c '^FAIL ')
	pass=$((pass + p)); fail=$((fail + f))
	[ "$p" -gt 0 ] || bad "conformance: nothing ran"

	# 2. assembler vs ASSEMBLED.tsv
	asm_bad=0 asm_n=0
	while IFS='	' read -r file r0 mem prog; do
		case "$file" in '#'*|'') continue ;; esac
		asm_n=$((asm_n + 1))
		got=$("$RUN" --dump "$CONF/$file" 2>&1)
		if [ "$got" != "$prog" ]; then
			asm_bad=$((asm_bad + 1))
			bad "asm $file"
		fi
	done < "$CONF/ASSEMBLED.tsv"
	[ "$asm_bad" -eq 0 ] && ok "asm: $asm_n programs assemble exactly as ASSEMBLED.tsv"

	# 2b. the same vectors through the arm64 JIT (bpf/jit.c), as aarch64 code under qemu-user:
	# -cpu max with LSE atomics and with LDAXR/STLXR loops, and cortex-a72 (no LSE at all)
	A64="$BUILD/host/bpf-run-a64"
	if [ -x "$A64" ] && command -v qemu-aarch64 >/dev/null 2>&1; then
		for mode in "max --jit" "max --jit-llsc" "cortex-a72 --jit"; do
			set -- $mode
			jout=$(qemu-aarch64 -cpu "$1" "$A64" "$2" "$CONF" 2>&1)
			jp=$(printf '%s\n' "$jout" | grep -c '^PASS ')
			jf=$(printf '%s\n' "$jout" | grep '^FAIL ')
			ji=$(printf '%s\n' "$jout" | sed -n 's/^jit: [0-9]* compiled, \([0-9]*\) interpreted$/\1/p')
			if [ -z "$jf" ] && [ "$jp" -eq "$p" ] && [ "$ji" = 0 ]; then
				ok "jit ($1 $2): $jp vectors, all JIT-compiled"
			else
				bad "jit ($1 $2): $jp passed of $p, interpreted: ${ji:-?}"
				printf '%s\n' "$jf" | head -20
			fi
		done
	else
		echo "SKIP jit conformance: $A64 or qemu-aarch64 (Debian's qemu-user) missing"
	fi
else
	echo "SKIP conformance vectors and asm check: $CONF not found (they come from shared/bpf-conformance beside the repository, or set BPF_CONFORMANCE=DIR)"
fi

# 3. benchmark programs (r0 from a host C build of the same loops over the same buffer)
check_bench() {
	name=$1 want=$2
	bin="$BUILD/bpf/bench_$name.bin"
	if [ ! -f "$bin" ]; then bad "bench_$name: $bin not built"; return; fi
	got=$("$RUN" "$bin" | sed -n 's/^r0=\(0x[0-9a-f]*\) .*/\1/p')
	if [ "$got" = "$want" ]; then ok "bench_$name r0=$got"; else bad "bench_$name: r0=$got want $want"; fi
}
check_bench sum 0x7f4a8
check_bench fnv 0x1b4664f63f722675
check_bench classify 0x1b8041e226342097
check_bench alu 0x62163750cc7f09fd

# 3b. the benchmark programs through the JIT give the same r0
A64="$BUILD/host/bpf-run-a64"
if [ -x "$A64" ] && command -v qemu-aarch64 >/dev/null 2>&1; then
	for nv in sum:0x7f4a8 fnv:0x1b4664f63f722675 classify:0x1b8041e226342097 alu:0x62163750cc7f09fd; do
		name=${nv%%:*} want=${nv#*:}
		got=$(qemu-aarch64 "$A64" --jit "$BUILD/bpf/bench_$name.bin" 2>&1 | sed -n 's/^r0=\(0x[0-9a-f]*\) .*/\1/p')
		if [ "$got" = "$want" ]; then ok "jit bench_$name r0=$got"; else bad "jit bench_$name: r0=$got want $want"; fi
	done
fi

# 3c. the JIT's differential fuzzer, bounded (make fuzz runs it long); a fixed seed here
out=$(BUILD="$BUILD" JIT_FUZZ_N=3000 JIT_FUZZ_SEED=${JIT_FUZZ_SEED:-14} sh tests/fuzz/fuzz-jit.sh)
printf '%s\n' "$out" | grep -E '^(PASS|FAIL|SKIP) '
pass=$((pass + $(printf '%s\n' "$out" | grep -c '^PASS ')))
fail=$((fail + $(printf '%s\n' "$out" | grep -c '^FAIL ')))

# 4. bpf-run itself
tmp=$(mktemp -d)
# r0 = *(u32 *)(r1 + 0) + r2 ; exit  -- with --mem of 4 bytes 01 00 00 00
printf '\141\020\000\000\000\000\000\000\017\040\000\000\000\000\000\000\225\000\000\000\000\000\000\000' > "$tmp/p.bin"
printf '\001\000\000\000' > "$tmp/m.bin"
got=$("$RUN" --mem "$tmp/m.bin" "$tmp/p.bin")
if [ "$got" = "r0=0x5 insns=3" ]; then ok "bpf-run --mem"; else bad "bpf-run --mem: '$got'"; fi
printf '\377\000\000\000\000\000\000\000\225\000\000\000\000\000\000\000' > "$tmp/bad.bin"
if "$RUN" "$tmp/bad.bin" >/dev/null 2>&1; then bad "bpf-run accepts opcode 0xff"; else ok "bpf-run rejects opcode 0xff"; fi
printf '\225\000\000' > "$tmp/short.bin"
if "$RUN" "$tmp/short.bin" >/dev/null 2>&1; then bad "bpf-run accepts a 3-byte file"; else ok "bpf-run rejects a partial slot"; fi
# issue 14: r1 = 42; call map_lookup_elem; exit -- no verifier to vouch for the pointer: a
# clear refusal (exit 1, naming the helper), not a crash; the same under --jit
printf '\267\001\000\000\052\000\000\000\205\000\000\000\001\000\000\000\225\000\000\000\000\000\000\000' > "$tmp/lookup.bin"
check_refused() { # name rc output
	if [ "$2" = 1 ] && printf '%s' "$3" | grep -q 'map_lookup_elem'; then ok "$1"
	else bad "$1: exit $2, '$3'"; fi
}
got=$("$RUN" "$tmp/lookup.bin" 2>&1); check_refused "bpf-run refuses map_lookup_elem on a scalar" $? "$got"
if [ -x "$A64" ] && command -v qemu-aarch64 >/dev/null 2>&1; then
	got=$(qemu-aarch64 "$A64" --jit "$tmp/lookup.bin" 2>&1)
	check_refused "bpf-run --jit refuses map_lookup_elem on a scalar" $? "$got"
fi
rm -rf "$tmp"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
