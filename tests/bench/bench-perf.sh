#!/bin/sh
# bench-perf.sh - guest instructions per operation of perf_event_open(2) paths (tests/bench/
# perfbench.c: null syscall, clock_gettime by svc and by the vDSO, counter read(), perf_event_open+close, context switch with 0 and 4
# counting events), in perfkernel and in Debian's Linux 6.1, both under QEMU -icount shift=0
# with one CPU (guest time = guest instructions; QEMU's icount is global, so one vCPU keeps
# the figures clean).  Prints operation, perfkernel, Linux 6.1, ours/Linux.
# Target (issue 4): ours/Linux <= 0.50 on every line ('*' marks the ones above).
# Builds nothing: make bench builds $BUILD/user/bin/perfbench (tests/bench/module.mk) first.
# Linux runs through refvm.sh (REFVM, default /work/shared/tools/refvm.sh or ../shared/tools/
# refvm.sh); without it, or when it fails (no cache and no network), the Linux column is n/a.
# Env: BUILD (build), REFVM, PERFBENCH_SCALE (iteration multiplier, 1), REFVM_LIMIT (s, 100).
cd "$(dirname "$0")/../.." || exit 1
SCALE="${PERFBENCH_SCALE:-1}"
. tests/bench/lib.sh
bench_init bench-perf perfbench

# figures NAME VALUE from perfbench's "NAME: N guest instructions per op" lines
figures() {
	sed -n 's/^\([a-z_0-9]*\): \([0-9.]*\) guest instructions per op$/\1 \2/p' "$1"
}

# ---- perfkernel: ICOUNT=1 SMP=1 ----
bench_ours "/bin/perfbench -s $SCALE"
figures "$w/ours.log" > "$w/ours"
grep '^# ' "$w/ours.log" | sed 's/^# /perfkernel: /'

# ---- Linux 6.1: refvm --icount --smp 1 ----
bench_linux "/bin/perfbench -s $SCALE"
grep '^# ' "$w/linux.log" | sed 's/^# /Linux 6.1: /'
[ "$linux" = ok ] || echo "Linux: n/a ($linux)"

# ---- the table ----
printf '%-16s %12s %12s %11s\n' operation perfkernel "Linux 6.1" ours/Linux
for name in null_syscall clock_gettime_svc clock_gettime_vdso read_taskclock read_instr open_close ctxsw_0ev ctxsw_4sw ctxsw_4hw; do
	o=$(awk -v n="$name" '$1 == n { print $2 }' "$w/ours")
	l=$(awk -v n="$name" '$1 == n { print $2 }' "$w/linux")
	[ -n "$o" ] || [ -n "$l" ] || continue
	awk -v n="$name" -v o="${o:-n/a}" -v l="${l:-n/a}" 'BEGIN {
		r = "n/a"; m = ""
		if (o != "n/a" && l != "n/a" && l + 0 > 0) {
			r = sprintf("%.2f", o / l); if (o / l > 0.5) m = " *"
		}
		fo = (o == "n/a") ? o : sprintf("%.0f", o)
		fl = (l == "n/a") ? l : sprintf("%.0f", l)
		printf "%-16s %12s %12s %9s%s\n", n, fo, fl, r, m
	}'
done
echo "(guest instructions per op; ctxsw = per switch, futex ping-pong on one CPU, 4 events per thread; * = above the 0.50 target)"
exit $rc
