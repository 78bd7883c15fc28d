#!/bin/sh
# debian-perf.sh - tier 5, end to end: Debian's own arm64 perf 6.1 (linux-perf, unmodified,
# dynamically linked; make debian-perf builds the overlay) runs inside perfkernel: perf stat
# counts cycles, task-clock and page-faults of a workload; perf record -g writes a perf.data
# that perf report inside names burn first, and that the host's perf report reads the same way;
# perf list shows the hardware, software and breakpoint events; perf stat -e mem:ADDR:x counts
# the calls of a function with a hardware breakpoint; perf report names the kernel functions of
# a syscall-heavy workload's samples (/proc/kallsyms); perf list shows the tracepoints, perf
# record -e sched:sched_switch -a + perf script decodes them (inside and on the host), perf trace
# -s summarizes a program's syscalls; perf probe -x /bin/hot burn adds a uprobe that perf
# record -e probe_hot:burn samples, and perf probe -d deletes it; perf sched record + latency,
# perf kmem record + stat (kmem:kmalloc/kfree) and perf lock record + report run as on Linux,
# and perf trace -- true lists a program's syscalls; perf probe -a sys_getpid adds a kprobe
# that perf stat counts; perf record -e irq:irq_handler_entry -a + perf script/report show the
# timer's interrupts (irq=11 name=arch_timer, as on Linux) and perf stat -e 'irq:*' -e
# 'timer:*' counts them and the hrtimers.
set -u
BUILD=${BUILD:-build}
OV="$BUILD/debian-perf"
pass=0 fail=0
ok() { echo "PASS debian-perf: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL debian-perf: $1"; fail=$((fail + 1)); }
if [ ! -x "$OV/usr/bin/perf" ]; then
	bad "no $OV/usr/bin/perf (make debian-perf)"
	echo "$pass passed, $fail failed"
	exit 1
fi
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/out" "$w/symfs"
ln -s "$(cd "$BUILD/user/bin" && pwd)" "$w/symfs/bin"
P=/usr/bin/perf
# hot is static (ET_EXEC): burn's address is the same inside; main calls it 8 times
burn=0x$(aarch64-linux-gnu-nm "$BUILD/user/bin/hot" | awk '$3 == "burn" { print $1 }')
SMP=2 TIMEOUT=240 OVERLAY="$OV" OUTDIR="$w/out" sh tools/host/run.sh "$BUILD/perfkernel.img" \
	"$BUILD/initramfs.cpio" "
$P --version
$P stat -x, -e cycles,task-clock,page-faults -- hot 5 2> /out/stat.csv
$P record -g -e cycles -c 100000 -o /out/perf.data -- hot 20 2> /out/record.err && echo RECORD-OK
$P report -i /out/perf.data --stdio --no-children --sort sym > /out/report.txt 2> /out/report.err
$P list > /out/list.txt 2>&1
$P stat -x, -e mem:$burn:x -- hot 1 2> /out/bp.csv
$P record -q -e cycles -c 20000 -o /out/k.data -- dd if=/dev/zero of=/dev/null bs=64 count=20000 2> /dev/null
$P report -i /out/k.data --stdio --no-children --sort sym > /out/k.txt 2> /dev/null
$P record -e sched:sched_switch -a -o /out/sw.data -- sleep 0.3 2> /out/sw.err
$P script -i /out/sw.data > /out/sw.txt 2> /dev/null
$P trace -s -- true > /out/trace.txt 2>&1
$P trace -- true > /out/trace-l.txt 2>&1
$P record -e irq:irq_handler_entry -a -o /out/irq.data -- sleep 1 2> /out/irq.err
$P report -i /out/irq.data --stdio --sort comm > /out/irq-rep.txt 2>&1
$P script -i /out/irq.data > /out/irq.txt 2> /dev/null
$P stat -x, -a -e 'irq:*' -e 'timer:*' -- sleep 0.5 2> /out/irq-stat.csv
$P sched record -o /out/sched.data -- sleep 0.2 2> /out/sched-rec.err
$P sched latency -i /out/sched.data > /out/sched-lat.txt 2>&1
$P kmem record -o /out/kmem.data -- hot 1 2> /out/kmem-rec.err
$P kmem -i /out/kmem.data stat > /out/kmem-stat.txt 2>&1
$P lock record -o /out/lock.data -- hot 1 2> /out/lock-rec.err
$P lock report -i /out/lock.data > /out/lock-rep.txt 2>&1
$P ftrace -- true > /out/ftrace.txt 2>&1; echo "rc=\$?" >> /out/ftrace.txt
$P ftrace -t nop -- true > /out/ftrace-nop.txt 2>&1; echo "rc=\$?" >> /out/ftrace-nop.txt
$P probe -x /bin/hot burn > /out/probe.txt 2>&1
$P record -e probe_hot:burn -o /out/up.data -- hot 1 2> /out/up.err
$P script -i /out/up.data > /out/up.txt 2> /dev/null
$P probe -d probe_hot:burn >> /out/probe.txt 2>&1
cat /sys/kernel/tracing/uprobe_events > /out/up-left.txt
$P probe -a sys_getpid > /out/kp.txt 2>&1
$P stat -x, -e probe:sys_getpid -- sh -c 'echo \$\$; echo \$\$' 2> /out/kp.csv > /dev/null
$P probe -d probe:sys_getpid >> /out/kp.txt 2>&1
cat /sys/kernel/tracing/kprobe_events > /out/kp-left.txt
echo DONE" > "$w/run.log" 2>&1
grep -q '^perf version 6\.1' "$w/run.log" && ok "perf --version: $(grep '^perf version' "$w/run.log")" ||
	{ bad "perf --version"; tail -20 "$w/run.log"; }
grep -q '^DONE' "$w/run.log" || { bad "the guest run ended early"; tail -20 "$w/run.log"; }
# perf stat -x,: value,unit,event,...
for ev in cycles task-clock page-faults; do
	v=$(awk -F, -v e="$ev" '$3 == e { print $1 }' "$w/out/stat.csv" 2> /dev/null)
	case "$v" in
	'' | 0 | '<not supported>' | '<not counted>') bad "perf stat $ev: '$v'"; cat "$w/out/stat.csv" 2> /dev/null ;;
	*) ok "perf stat counts $ev ($v)" ;;
	esac
done
grep -q '^RECORD-OK' "$w/run.log" && ok "perf record -g inside the guest" || { bad "perf record"; cat "$w/out/record.err"; }
top=$(grep -E '^ +[0-9.]+%.*\[\.\]' "$w/out/report.txt" 2> /dev/null | head -n 1)
case "$top" in *" burn"*) ok "perf report inside: burn first ($top)" ;; *) bad "perf report inside: top '$top'" ;; esac
perf report -i "$w/out/perf.data" --stdio --no-children --sort sym --symfs="$w/symfs" \
	> "$w/host-report.txt" 2> /dev/null
htop=$(grep -E '^ +[0-9.]+%.*\[\.\]' "$w/host-report.txt" | head -n 1)
case "$htop" in *" burn"*) ok "the host's perf report of that file: burn first" ;; *) bad "host perf report: top '$htop'" ;; esac
for e in 'cpu-cycles OR cycles' 'task-clock' 'mem:<addr>'; do
	grep -q -- "$e" "$w/out/list.txt" && ok "perf list shows $e" || bad "perf list lacks $e"
done
# tracepoints (tracefs at /sys/kernel/tracing, PERF_TYPE_TRACEPOINT)
grep -q 'sched:sched_switch *\[Tracepoint event\]' "$w/out/list.txt" && ok "perf list shows the tracepoints" ||
	bad "perf list lacks sched:sched_switch [Tracepoint event]"
grep -q 'sched:sched_switch: prev_comm=.*==> next_comm=' "$w/out/sw.txt" 2> /dev/null &&
	ok "perf record -e sched:sched_switch -a, perf script inside: $(grep -c sched_switch "$w/out/sw.txt") switches" ||
	{ bad "perf script of sched:sched_switch"; cat "$w/out/sw.err" 2> /dev/null; }
perf script -i "$w/out/sw.data" 2> /dev/null | grep -q 'prev_comm=.*==> next_comm=' &&
	ok "the host's perf script decodes those sched_switch records" || bad "host perf script of sched_switch"
grep -Eq '^ +brk +[0-9]+ ' "$w/out/trace.txt" 2> /dev/null && ok "perf trace -s -- true: syscall summary" ||
	{ bad "perf trace -s"; tail -5 "$w/out/trace.txt" 2> /dev/null; }
grep -q 'true/[0-9]* exit_group()' "$w/out/trace-l.txt" 2> /dev/null &&
	ok "perf trace -- true: the program's syscalls, to exit_group" ||
	{ bad "perf trace -- true"; tail -5 "$w/out/trace-l.txt" 2> /dev/null; }
# irq and timer tracepoints: the timer's interrupt as Linux names and numbers it (/proc/interrupts)
grep -q 'irq:irq_handler_entry: irq=11 name=arch_timer$' "$w/out/irq.txt" 2> /dev/null &&
	ok "perf record -e irq:irq_handler_entry -a, perf script: $(grep -c arch_timer "$w/out/irq.txt") arch_timer entries" ||
	{ bad "perf script of irq:irq_handler_entry"; cat "$w/out/irq.err" 2> /dev/null; head -5 "$w/out/irq.txt" 2> /dev/null; }
grep -Eq "^# Samples: [1-9][0-9]* +of event 'irq:irq_handler_entry'" "$w/out/irq-rep.txt" 2> /dev/null &&
	grep -Eq '^ +[0-9.]+% +swapper' "$w/out/irq-rep.txt" &&
	ok "perf report of those samples: by command, swapper among them" ||
	{ bad "perf report of irq:irq_handler_entry"; head -20 "$w/out/irq-rep.txt" 2> /dev/null; }
for ev in irq:irq_handler_entry irq:irq_handler_exit timer:hrtimer_start timer:hrtimer_expire_entry \
	timer:hrtimer_expire_exit; do
	v=$(awk -F, -v e="$ev" '$3 == e { print $1 }' "$w/out/irq-stat.csv" 2> /dev/null)
	case "$v" in
	'' | 0 | '<not supported>' | '<not counted>') bad "perf stat -a -e 'irq:*' -e 'timer:*': $ev '$v'"; cat "$w/out/irq-stat.csv" 2> /dev/null ;;
	*) ok "perf stat -a -e 'irq:*' -e 'timer:*' counts $ev ($v)" ;;
	esac
done
# perf sched/kmem/lock: the outputs Linux 6.1 gives for the same commands under refvm.sh
grep -q '^ *sleep:[0-9]* *|' "$w/out/sched-lat.txt" 2> /dev/null &&
	ok "perf sched record -- sleep, perf sched latency: sleep's line" ||
	{ bad "perf sched latency"; cat "$w/out/sched-rec.err" "$w/out/sched-lat.txt" 2> /dev/null | tail -8; }
req=$(sed -n 's/^Total bytes requested: *\([0-9]*\)$/\1/p' "$w/out/kmem-stat.txt" 2> /dev/null)
grep -q '^SUMMARY (SLAB allocator)' "$w/out/kmem-stat.txt" 2> /dev/null && [ "${req:-0}" -gt 0 ] &&
	ok "perf kmem record, perf kmem stat: $req bytes requested" ||
	{ bad "perf kmem stat"; cat "$w/out/kmem-rec.err" "$w/out/kmem-stat.txt" 2> /dev/null | tail -8; }
grep -Eq '^ +Name +acquired +contended' "$w/out/lock-rep.txt" 2> /dev/null &&
	ok "perf lock record, perf lock report: the report" ||
	{ bad "perf lock report"; cat "$w/out/lock-rec.err" "$w/out/lock-rep.txt" 2> /dev/null | tail -8; }
# perf ftrace: it resets the function tracer's files, then finds no function_graph tracer (as a
# Linux built without it answers); with the nop tracer it runs and shows the empty trace
grep -q '^failed to set current_tracer to function_graph$' "$w/out/ftrace.txt" 2> /dev/null &&
	! grep -q 'failed to reset ftrace' "$w/out/ftrace.txt" &&
	grep -q '^# tracer: nop$' "$w/out/ftrace-nop.txt" && grep -q '^rc=0$' "$w/out/ftrace-nop.txt" &&
	ok "perf ftrace: no function_graph tracer (as Linux without it); perf ftrace -t nop runs" ||
	{ bad "perf ftrace"; cat "$w/out/ftrace.txt" "$w/out/ftrace-nop.txt" 2> /dev/null | tail -8; }
# a uprobe: perf probe -x writes uprobe_events, perf record -e probe_hot:burn samples each call
n=$(grep -c "probe_hot:burn: ($(printf %x $((burn))))" "$w/out/up.txt" 2> /dev/null)
[ "$n" = 8 ] && grep -q 'Added new event' "$w/out/probe.txt" && ! [ -s "$w/out/up-left.txt" ] &&
	ok "perf probe -x /bin/hot burn, perf record -e probe_hot:burn: burn's 8 calls, then perf probe -d" ||
	{ bad "uprobe via perf probe: $n samples"; cat "$w/out/probe.txt" "$w/out/up.err" 2> /dev/null; }
# a kprobe: perf probe -a writes kprobe_events (_stext+offset), perf stat counts its hits
v=$(awk -F, '$3 ~ /^probe:sys_getpid/ { print $1 }' "$w/out/kp.csv" 2> /dev/null)
[ -n "$v" ] && [ "$v" -ge 1 ] 2> /dev/null && grep -q 'Added new event' "$w/out/kp.txt" &&
	grep -q 'Removed event: probe:sys_getpid' "$w/out/kp.txt" && ! [ -s "$w/out/kp-left.txt" ] &&
	ok "perf probe -a sys_getpid, perf stat -e probe:sys_getpid: $v, then perf probe -d" ||
	{ bad "kprobe via perf probe: '$v'"; cat "$w/out/kp.txt" "$w/out/kp.csv" 2> /dev/null; }
v=$(awk -F, '$3 ~ /^mem:/ { print $1 }' "$w/out/bp.csv" 2> /dev/null)
[ "$v" = 8 ] && ok "perf stat -e mem:<burn>:x counts burn's 8 calls" || { bad "breakpoint count '$v'"; cat "$w/out/bp.csv"; }
# kernel samples of a syscall-heavy dd resolve through /proc/kallsyms to kernel functions
ktop=$(grep -E '^ +[0-9.]+%.*\[k\]' "$w/out/k.txt" 2> /dev/null | head -n 1)
knamed=$(grep -E '^ +[0-9.]+%.*\[k\] [a-z_][a-z0-9_.]*$' "$w/out/k.txt" 2> /dev/null | grep -vc -e ' _stext$' -e ' _text$')
case "$ktop" in
*"[k] 0x"* | *"[k] _stext" | *"[k] _text" | "") bad "perf report inside: kernel samples unnamed ('$ktop')" ;;
*) [ "$knamed" -ge 3 ] && ok "perf report inside names kernel functions ($knamed, first:$ktop)" ||
	bad "perf report inside: $knamed named kernel functions" ;;
esac
# perf record --call-graph dwarf: user stack dumps, unwound inside by Debian's perf (libdw);
# under icount the samples split over burn's two callers by their work, 2:1, as on Linux
# (Linux 6.1 under refvm.sh --icount: caller_a 66.02%, caller_b 33.33%).  The host's perf
# cannot unwind arm64 dwarf stacks ("target platform=arm64 is not supported").
ICOUNT=1 SMP=2 TIMEOUT=240 OVERLAY="$OV" OUTDIR="$w/out" sh tools/host/run.sh "$BUILD/perfkernel.img" \
	"$BUILD/initramfs.cpio" "
$P record --call-graph dwarf -e cycles -c 100000 -o /out/dwarf.data -- hot 5 2> /out/dwarf.err
$P report --no-inline -i /out/dwarf.data --stdio --no-children --sort sym > /out/dwarf.txt 2> /dev/null
echo DWARF-DONE" > "$w/dwarf.log" 2>&1
share() { grep -E -- "--[0-9.]+%--$1\$" "$w/out/dwarf.txt" 2> /dev/null | head -n 1 | sed 's/.*--\([0-9.]*\)%--.*/\1/'; }
a=$(share caller_a) b=$(share caller_b)
if [ -n "$a" ] && [ -n "$b" ] && awk -v a="$a" -v b="$b" 'BEGIN { exit !(a > 60 && a < 72 && b > 28 && b < 39) }'; then
	ok "perf record --call-graph dwarf: burn <- caller_a $a% / caller_b $b% (Linux 66.0 / 33.3)"
else
	bad "dwarf call graph: caller_a '$a' caller_b '$b'"
	head -20 "$w/out/dwarf.txt" 2> /dev/null
	tail -5 "$w/dwarf.log"
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
