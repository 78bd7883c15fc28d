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
# bpftrace's start-up: parse, LLVM, feature probes, load, attach, the first 1 ms tick, exit
t0=$(cut -d' ' -f1 /proc/uptime)
bpftrace -e 'interval:ms:1 { exit(); }' > /dev/null
t1=$(cut -d' ' -f1 /proc/uptime)
echo "start-seconds $t0 $t1"
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
# ended by SIGINT, as a user's ^C: the maps print all the same
timeout -s INT 10 bpftrace -e 'hardware:cycles:1000000 { @[comm] = count(); }'
echo "rc=$?"
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
sec pagefaults
bpftrace -e 'software:page-faults:1 { @[comm] = count(); }' -c '/bin/hot 1'
echo "rc=$?"
sec end
