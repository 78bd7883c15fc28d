#!/bin/sh
# fuzz-torture.sh [KERNEL INITRAMFS] - perftorture (tests/fuzz/perftorture.c) inside the kernel
# at -smp 4: per seed, 4 threads on one shared table of perf fds for TORTURE_SECS seconds.  The
# kernel must neither panic nor hang, every run must end, and afterwards the kernel's kmalloc
# bytes (/proc/meminfo Slab) and MemAvailable must be back where they were before the first
# (within 8 kB: a page-table page may stay cached).  /proc is listed before each reading so the
# entries of dead processes are dropped first.
# Tier 45 runs it bounded on the debug kernel; make fuzz (FUZZ_LONG=1) runs it long, on the
# debug kernel when it is built.
BUILD=${BUILD:-build}
kernel=${1:-}
initramfs=${2:-$BUILD/initramfs.cpio}
if [ -z "$kernel" ]; then
	kernel=$BUILD/perfkernel.img
	[ -f "$BUILD/debug/perfkernel.img" ] && kernel=$BUILD/debug/perfkernel.img
fi
if [ -n "$FUZZ_LONG" ]; then seeds=$(seq 1 12) secs=20 t=1500; else seeds="1 2 3" secs=4 t=300; fi
seeds=${TORTURE_SEEDS:-$seeds}
secs=${TORTURE_SECS:-$secs}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
mem='ls /proc > /dev/null; sed -n "s/^\(MemAvailable\|Slab\): *\([0-9]*\) kB/MEM \1 \2/p" /proc/meminfo'
cmd="$mem; for s in $(echo $seeds); do perftorture 4 $secs \$s || echo TORTURE-FAILED \$s; done; sleep 1; $mem; echo TORTURE-DONE"
SMP=4 TIMEOUT=$t sh tools/host/run.sh "$kernel" "$initramfs" "$cmd" > "$log" 2>&1
st=$?
runs=$(grep -c '^perftorture: seed' "$log")
n=$(echo $seeds | wc -w)
if [ $st -eq 0 ] && grep -q '^TORTURE-DONE' "$log" && [ "$runs" -eq "$n" ] &&
	! grep -q -e '^TORTURE-FAILED' -e '^kernel panic' -e 'HUNG' "$log"; then
	echo "PASS torture: $runs runs (seeds $(echo $seeds), ${secs} s each), no panic, no hang: $(grep '^perftorture: seed' "$log" | sed 's/.*s: //' | head -n 1) ..."
else
	echo "FAIL torture (exit $st, $runs of $n runs ended)"
	grep -a -e 'HUNG' -e 'FAILED' -e '^perfkernel:' -e 'run.sh' "$log" | head -10
	grep -a -A30 '^\*\*\*\|^kernel panic' "$log" | head -40
	echo "--- the run's last 60 lines (hungdump's task dump, when APPEND=hungdump=N fired):"
	tail -n 60 "$log"
	exit 1
fi
before_slab=$(grep '^MEM Slab' "$log" | head -n 1 | awk '{print $3}')
after_slab=$(grep '^MEM Slab' "$log" | tail -n 1 | awk '{print $3}')
before_av=$(grep '^MEM MemAvailable' "$log" | head -n 1 | awk '{print $3}')
after_av=$(grep '^MEM MemAvailable' "$log" | tail -n 1 | awk '{print $3}')
if [ -n "$before_slab" ] && [ -n "$after_slab" ] && [ "$after_slab" -le $((before_slab + 8)) ] &&
	[ "$after_av" -ge $((before_av - 8)) ]; then
	echo "PASS torture: no leak (Slab $before_slab -> $after_slab kB, MemAvailable $before_av -> $after_av kB)"
else
	echo "FAIL torture: a leak (Slab $before_slab -> $after_slab kB, MemAvailable $before_av -> $after_av kB)"
	exit 1
fi
