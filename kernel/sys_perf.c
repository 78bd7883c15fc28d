/*
 * sys_perf.c - the perf_event_open(2) system call (aarch64 nr 241): the table entry that hands
 * the call to the portable perf core (perf/core.c), which decodes the attribute, finds the
 * task, group and CPU, and installs the event's fd.
 *
 * The entry is perf_event_open itself, without a wrapper: under AAPCS64 its pointer, int and
 * unsigned long parameters read the argument registers as the casts of a wrapper would (an
 * int is the register's low 32 bits), as <kern/syscall.h> relies on for every handler, and
 * the open/close path (perfbench's open_close) saves the wrapper's frame.
 */
#include <perf/perf.h>
#include <kern/syscall.h>

SYSCALL(__NR_perf_event_open, perf_event_open);
