#!/bin/sh
# record-report.sh - tier 4, end to end: our perf record -g runs inside perfkernel on a workload
# with a known hot function (tools/workloads/hot.c: burn() called from caller_a and caller_b);
# the perf.data leaves the guest through OUTDIR; the host's real perf report and perf script
# (Debian's linux-perf 6.1) must read it: burn first among user symbols with most of the user
# samples, both callers in its callchains, and perf script without warnings (the host perf's
# "unwind: target platform=arm64 is not supported" note is printed for Linux's own files too);
# given the guest kernel's symbol table (--kallsyms=build/perfkernel.kallsyms), the kernel
# samples by function name.  The guest runs with -icount shift=0 (ICOUNT=1): without it QEMU's
# cycle counter follows host time, so code the emulator is translating for the first time
# (printf, malloc at exit) took up to half of the user samples under host load and failed the
# "most of the user samples" check; with it burn has 99.4 %, every run.
set -u
BUILD=${BUILD:-build}
pass=0 fail=0
ok() { echo "PASS e2e: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL e2e: $1"; fail=$((fail + 1)); }
if ! command -v perf > /dev/null; then
	echo "SKIP e2e: no host perf (linux-perf)"; echo "0 passed, 0 failed"; exit 0
fi
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/out" "$w/symfs"
ln -s "$(cd "$BUILD/user/bin" && pwd)" "$w/symfs/bin"
SMP=2 ICOUNT=1 TIMEOUT=180 OUTDIR="$w/out" sh tools/host/run.sh "$BUILD/perfkernel.img" "$BUILD/initramfs.cpio" \
	'perf record -g -e cycles -c 100000 -o /out/perf.data -- hot 8 && echo RECORD-OK' > "$w/run.log" 2>&1
[ -n "${E2E_KEEP:-}" ] && cp "$w/run.log" "$E2E_KEEP.run.log" && cp "$w/out/perf.data" "$E2E_KEEP.perf.data" 2>/dev/null
grep -q '^RECORD-OK' "$w/run.log" && ok "perf record inside the guest" || { bad "perf record inside the guest"; tail -20 "$w/run.log"; }
[ -s "$w/out/perf.data" ] && ok "perf.data delivered through OUTDIR" || bad "perf.data delivered through OUTDIR"
perf report -i "$w/out/perf.data" --stdio --no-children --sort sym --symfs="$w/symfs" \
	> "$w/report.txt" 2> "$w/report.err"
grep -v -e '^$' "$w/report.err" | grep -v -i -e 'kptr_restrict' -e 'kallsyms' -e 'kernel samples' \
	-e 'kernel modules' -e 'Kernel address maps' -e '^Warning:$' -e "can't be resolved" \
	-e 'unwind: target platform=arm64 is not supported' > "$w/report.warn"
[ ! -s "$w/report.warn" ] && ok "perf report: no warnings beyond kernel symbols" || { bad "perf report warnings"; cat "$w/report.warn"; }
top=$(grep -E '^ +[0-9.]+%.*\[\.\]' "$w/report.txt" | head -n 1)
echo "# top user symbol: $top"
case "$top" in *" burn"*) ok "burn is the hottest user function" ;; *) bad "hottest user function is not burn: $top" ;; esac
burn_pct=$(printf '%s\n' "$top" | sed -n 's/^ *\([0-9.]*\)%.*/\1/p')
user_pct=$(grep -E '^ +[0-9.]+%.*\[\.\]' "$w/report.txt" | sed -n 's/^ *\([0-9.]*\)%.*/\1/p' | awk '{s+=$1} END {print s+0}')
echo "# burn ${burn_pct}% of all samples, user symbols ${user_pct}%"
awk -v b="$burn_pct" -v u="$user_pct" 'BEGIN { exit !(u > 0 && b * 2 > u) }' && ok "burn has most of the user samples" || bad "burn ${burn_pct}% of user ${user_pct}%"
perf report -i "$w/out/perf.data" --stdio --children --sort sym --symfs="$w/symfs" -G \
	> "$w/callers.txt" 2> /dev/null
grep -q caller_a "$w/callers.txt" && grep -q caller_b "$w/callers.txt" && ok "callchains show burn's callers caller_a and caller_b" || bad "callers missing from callchains"
perf script -i "$w/out/perf.data" --symfs="$w/symfs" > "$w/script.txt" 2> "$w/script.err"
grep -v -e 'unwind: target platform=arm64 is not supported' "$w/script.err" | grep -v '^$' > "$w/script.warn"
[ ! -s "$w/script.warn" ] && ok "perf script reads every record without a warning" || { bad "perf script warnings"; head "$w/script.warn"; }
# the guest kernel's samples by name on the host too, given its symbol table
perf report -i "$w/out/perf.data" --stdio --no-children --sort sym --symfs="$w/symfs" \
	--kallsyms="$BUILD/perfkernel.kallsyms" > "$w/kreport.txt" 2> /dev/null
ktop=$(grep -E '^ +[0-9.]+%.*\[k\]' "$w/kreport.txt" | head -n 1)
case "$ktop" in
*"[k] 0x"* | "") bad "perf report --kallsyms: kernel samples unnamed ('$ktop')" ;;
*) ok "perf report --kallsyms=build/perfkernel.kallsyms names kernel functions ($ktop)" ;;
esac
n=$(grep -c 'cycles' "$w/script.txt")
[ "$n" -gt 50 ] && ok "perf script: $n samples" || bad "perf script: only $n samples"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
