# kernel/: portable files in PSRCS (kernel and host tests), kernel-only in KSRCS.
PSRCS += kernel/dt.c kernel/page.c kernel/kmalloc.c kernel/lib/format.c kernel/lib/string.c \
	kernel/lib/ksym.c
KSRCS += kernel/main.c kernel/mm.c kernel/printk.c kernel/sched.c kernel/smp.c kernel/time.c \
	kernel/ksvc.c kernel/usertrap.c kernel/selftest.c kernel/userinit.c kernel/lib/stackprot.c \
	kernel/vm.c kernel/sys_mm.c kernel/mutex.c kernel/proc.c kernel/exec.c kernel/syscall.c kernel/sys_bpf.c kernel/sys_perf.c kernel/klog.c \
	kernel/ptrace.c kernel/ptrace_req.c kernel/jit_text.c kernel/uprobes.c kernel/probe_insn.c kernel/kprobes.c \
	kernel/uprobe_events.c

UNIT_TESTS += dt page format ksym
UNIT_SRCS_dt := kernel/dt.c
UNIT_LIBS_dt := -lfdt
UNIT_SRCS_page := kernel/page.c kernel/kmalloc.c
UNIT_SRCS_format := kernel/lib/format.c
UNIT_SRCS_ksym := kernel/lib/ksym.c
KSRCS += kernel/vdso.c
