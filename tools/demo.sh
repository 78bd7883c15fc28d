#!/bin/sh
# The demo `make run` shows with no CMD: count a workload with perf stat, record it with
# perf record -g into /out/perf.data (the runner then shows the host's perf report of it).
echo "perfkernel demo: $(uname -srm), $(grep -c ^processor /proc/cpuinfo 2>/dev/null || echo ?) CPUs"
echo
echo "\$ perf stat -e cycles,instructions,task-clock,page-faults,context-switches,cpu-migrations -- hot 5"
perf stat -e cycles,instructions,task-clock,page-faults,context-switches,cpu-migrations -- hot 5
echo "\$ perf record -g -e cycles -c 100000 -o /out/perf.data -- hot 5"
perf record -g -e cycles -c 100000 -o /out/perf.data -- hot 5
