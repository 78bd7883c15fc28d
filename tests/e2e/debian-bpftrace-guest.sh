#!/bin/sh
# debian-bpftrace-guest.sh - what tests/e2e/debian-bpftrace.sh runs inside the guest (perfkernel
# or Linux under refvm.sh): Debian's bpftrace one-liners on the hot workload, each section's
# output after a "### name" line, and the time bpftrace takes to start.  The host checks it.
sec() { echo "### $1"; echo "# uptime $(cut -d' ' -f1 /proc/uptime)"; }
sec version
bpftrace --version
sec info
bpftrace --info 2>&1
sec start
# bpftrace's start-up: parse, LLVM, feature probes, load, attach, the first 1 ms tick (or the
# BEGIN uprobe on bpftrace's own BEGIN_trigger), exit
for p in 'interval:ms:1 { exit(); }' 'BEGIN { exit(); }'; do
	t0=$(cut -d' ' -f1 /proc/uptime)
	bpftrace -e "$p" > /dev/null
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "start-seconds $t0 $t1 $p"
done
sec begin-end
bpftrace -e 'BEGIN { printf("begin\n"); exit(); } END { printf("end\n"); }'
echo "rc=$?"
sec uprobe
# burn is called 8 times (4 by caller_a, 4 by caller_b); at its entry the frame is not yet made
bpftrace -e 'uprobe:/bin/hot:burn { @[ustack] = count(); @n = count(); }' -c '/bin/hot 5'
echo "rc=$?"
sec uretprobe
# burn's return values: the same 8 numbers on every kernel
bpftrace -e 'uretprobe:/bin/hot:burn { @ret = hist(retval); @n = count(); }' -c '/bin/hot 5'
echo "rc=$?"
sec tick
bpftrace -e 'interval:s:1 { printf("tick\n"); exit(); }'
echo "rc=$?"
sec ustack-c
bpftrace -e 'profile:hz:99 /comm == "hot"/ { @[ustack] = count(); }' -c '/bin/hot 500'
echo "rc=$?"
# a process still running when the map prints: its stacks are symbolized (bcc reads its
# /proc/PID/maps and its ELF through /proc/PID/root)
hot 100000 > /dev/null & # killed below
hotpid=$!
sleep 1
sec ustack-live
bpftrace -e 'profile:hz:99 /comm == "hot"/ { @[ustack] = count(); } interval:s:2 { exit(); }'
echo "rc=$?"
sec cycles
bpftrace -e 'hardware:cycles:1000000 { @[comm] = count(); } interval:s:2 { exit(); }'
echo "rc=$?"
sec cycles-sigint
# ended by SIGINT, as a user's ^C, once it runs (its start-up takes from 2 to 15 s as the host
# is loaded): the maps print all the same.  It has attached when the cycles events are open,
# one per CPU after the perf buffer's bpf-output events, one per CPU.
bpftrace -e 'hardware:cycles:1000000 { @[comm] = count(); }' > /tmp/sigint.out 2>&1 &
bt=$!
ncpu=$(grep -c '^processor' /proc/cpuinfo)
i=0
while [ $i -lt 600 ] && [ "$(ls -l /proc/$bt/fd 2> /dev/null | grep -c 'perf_event')" -lt $((2 * ncpu)) ]; do
	sleep 0.1
	i=$((i + 1))
done
sleep 3
kill -INT $bt
wait $bt
echo "rc=$?"
cat /tmp/sigint.out
sec kstack
bpftrace -e 'profile:hz:99 { @[kstack] = count(); } interval:s:2 { exit(); }'
echo "rc=$?"
sec hist
bpftrace -e 'profile:hz:99 /comm == "hot"/ { @us = hist((nsecs / 1000) % 1000); @cpu = lhist(cpu, 0, 8, 1); @n = count(); } interval:s:2 { exit(); }'
echo "rc=$?"
sec printf
bpftrace -e 'profile:hz:99 /comm == "hot"/ { printf("sample %s %d\n", comm, pid); @n = @n + 1; if (@n == 3) { exit(); } }'
echo "rc=$?"
echo "hotpid $hotpid"
kill $hotpid
wait
sec tracepoint
# printf and ustack from a TRACEPOINT program (no args->: without BTF bpftrace would need the
# kernel's internal types, u64, size_t, to parse a syscall's fields, on Linux too)
# (hot's printf writes its line; busybox cat would use sendfile on Linux)
bpftrace -e 'tracepoint:syscalls:sys_enter_write /comm == "hot"/ { printf("write by %s\n", comm); @[ustack] = count(); }' -c '/bin/hot 1'
echo "rc=$?"
sec sched-switch
bpftrace -e 'tracepoint:sched:sched_switch { @[kstack] = count(); @n = count(); } interval:s:1 { exit(); }'
echo "rc=$?"
sec kprobe
# the kernel function behind write(2): ksys_write on Linux, sys_write here
fn=$(awk '$3 == "ksys_write" || $3 == "sys_write" { print $3; exit }' /proc/kallsyms)
echo "function $fn"
# (here bpftrace warns that it "is not traceable": there is no available_filter_functions)
bpftrace -e "kprobe:$fn /comm == \"hot\"/ { @[comm] = count(); @s[kstack] = count(); }" -c '/bin/hot 1'
echo "rc=$?"
sec btf-struct
# the kernel's BTF handed to bpftrace as a file (BPFTRACE_BTF; bpftrace 0.17 looks for the
# kernel's own only as the BTF object named vmlinux, which perfkernel does not have yet): a
# kprobe reads the current thread's id through the kernel's own thread struct, typed from that
# BTF (Linux's struct task_struct .pid, perfkernel's struct task .tid)
if grep -q task_struct /sys/kernel/btf/vmlinux; then
	expr='((struct task_struct *)curtask)->pid'
else
	expr='((struct task *)curtask)->tid'
fi
BPFTRACE_BTF=/sys/kernel/btf/vmlinux bpftrace -e "kprobe:$fn /comm == \"hot\"/ { printf(\"btf tid %d tid %d\\n\", $expr, tid); exit(); }" -c '/bin/hot 1'
echo "rc=$?"
sec pagefaults
bpftrace -e 'software:page-faults:1 { @[comm] = count(); }' -c '/bin/hot 1'
echo "rc=$?"
sec end
