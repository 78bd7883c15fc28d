# Signals, futexes, and the small process/time syscalls (kernel/signal*.c, futex.c, sys_*.c).
KSRCS += kernel/signal.c kernel/signal_frame.c kernel/sys_signal.c kernel/sys_misc.c kernel/sys_sched.c kernel/sys_time.c kernel/futex.c kernel/sys_timer.c kernel/signalfd.c
