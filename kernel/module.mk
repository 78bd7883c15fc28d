# kernel/: portable files in PSRCS (kernel and host tests), kernel-only in KSRCS.
PSRCS += kernel/dt.c kernel/page.c kernel/kmalloc.c kernel/lib/string.c kernel/lib/ksym.c
# the parsers exec uses: ELF load planning and the exec stack image
PSRCS += kernel/elf.c kernel/exec_stack.c
# The primitives perf/ and bpf/ link beside the seam (include/kern/format.h): in the kernel, and
# in every host test and host tool that builds portable sources.
KLIB_SRCS := kernel/lib/format.c
PSRCS += $(KLIB_SRCS)
KSRCS += kernel/main.c kernel/mm.c kernel/printk.c kernel/sched.c kernel/smp.c kernel/time.c \
	kernel/ksvc.c kernel/usertrap.c kernel/selftest.c kernel/userinit.c kernel/lib/stackprot.c \
	kernel/vm.c kernel/sys_mm.c kernel/mutex.c kernel/proc.c kernel/exec.c kernel/syscall.c kernel/sys_bpf.c kernel/sys_perf.c kernel/klog.c \
	kernel/ptrace.c kernel/ptrace_req.c kernel/jit_text.c kernel/uprobes.c kernel/probe_insn.c kernel/kprobes.c \
	kernel/uprobe_events.c kernel/vdso.c kernel/irq.c kernel/percpu.c kernel/cgroup.c
# signals, futexes, and the small process/time syscalls
KSRCS += kernel/signal.c kernel/signal_frame.c kernel/sys_signal.c kernel/sys_misc.c kernel/sys_sched.c \
	kernel/sys_time.c kernel/futex.c kernel/sys_timer.c kernel/signalfd.c kernel/pidfd.c kernel/sys_wait.c

UNIT_TESTS += dt page format ksym elf exec_stack
UNIT_SRCS_dt := kernel/dt.c
UNIT_LIBS_dt := -lfdt
UNIT_SRCS_page := kernel/page.c kernel/kmalloc.c
UNIT_SRCS_format :=
UNIT_SRCS_ksym := kernel/lib/ksym.c
UNIT_SRCS_elf := kernel/elf.c
UNIT_SRCS_exec_stack := kernel/exec_stack.c
