# Userland test programs (static aarch64 glibc), run inside the kernel and on Linux (refvm.sh).
# Each program NAME: UPROGS += NAME and NAME_SRCS := tests/user/NAME.c [more]
# All include tests/user/tap.h (header only); bpf(2), perf_event_open(2) and the ring reader
# come from the userland helpers in tools/lib (sys_bpf.h, sys_perf.h; -Itools/lib).
# USCRIPTS: shell scripts for busybox sh, to be copied into the initramfs /bin as they are.
UPROGS += t_proc
t_proc_SRCS := tests/user/t_proc.c
UPROGS += t_files
t_files_SRCS := tests/user/t_files.c
UPROGS += t_pipe
t_pipe_SRCS := tests/user/t_pipe.c
UPROGS += t_mm
t_mm_SRCS := tests/user/t_mm.c
UPROGS += t_thread
t_thread_SRCS := tests/user/t_thread.c
t_thread_LIBS := -lpthread
UPROGS += t_signal
t_signal_SRCS := tests/user/t_signal.c
UPROGS += t_badptr
t_badptr_SRCS := tests/user/t_badptr.c
UPROGS += t_perf_errno
t_perf_errno_SRCS := tests/user/t_perf_errno.c
UPROGS += t_bpf_basic
t_bpf_basic_SRCS := tests/user/t_bpf_basic.c bpf/sha1.c
UPROGS += t_bpf_mmap
UPROGS += t_bpf_jit
t_bpf_jit_SRCS := tests/user/t_bpf_jit.c
UPROGS += t_perf_rdpmc
UPROGS += t_perf_swsample
t_perf_swsample_SRCS := tests/user/t_perf_swsample.c
t_perf_rdpmc_SRCS := tests/user/t_perf_rdpmc.c
t_bpf_mmap_SRCS := tests/user/t_bpf_mmap.c
UPROGS += t_perf_count
t_perf_count_SRCS := tests/user/t_perf_count.c
UPROGS += t_procsys
t_procsys_SRCS := tests/user/t_procsys.c
UPROGS += t_probe_input
t_probe_input_SRCS := tests/user/t_probe_input.c
UPROGS += t_ftrace_files
t_ftrace_files_SRCS := tests/user/t_ftrace_files.c
UPROGS += t_perf_sample
UPROGS += t_perf_bp
t_perf_bp_SRCS := tests/user/t_perf_bp.c
UPROGS += t_kbp
t_kbp_SRCS := tests/user/t_kbp.c
UPROGS += t_bpf_obj
t_bpf_obj_SRCS := tests/user/t_bpf_obj.c
UPROGS += t_bpf_btf
t_bpf_btf_SRCS := tests/user/t_bpf_btf.c
UPROGS += t_bpf_ringbuf
t_bpf_ringbuf_SRCS := tests/user/t_bpf_ringbuf.c
# dynamically linked: Debian's ld.so and libc.so.6 (mkinitramfs.sh puts them in /lib)
UPROGS += t_eventfd
t_eventfd_SRCS := tests/user/t_eventfd.c
t_eventfd_LIBS := -lpthread
UPROGS += t_socketpair
UPROGS += t_unix
UPROGS += t_lock
UPROGS += t_signalfd
UPROGS += t_inotify
UPROGS += t_fifo
t_fifo_SRCS := tests/user/t_fifo.c
t_inotify_SRCS := tests/user/t_inotify.c
t_signalfd_SRCS := tests/user/t_signalfd.c
t_lock_SRCS := tests/user/t_lock.c
t_unix_SRCS := tests/user/t_unix.c
t_unix_LIBS := -lpthread
t_socketpair_SRCS := tests/user/t_socketpair.c
UPROGS += t_fork_exec
UPROGS += t_perf_signal
t_perf_signal_SRCS := tests/user/t_perf_signal.c
t_fork_exec_SRCS := tests/user/t_fork_exec.c
UPROGS += t_ptrace
t_ptrace_SRCS := tests/user/t_ptrace.c
UPROGS += t_dynamic
t_dynamic_SRCS := tests/user/t_dynamic.c
t_dynamic_DYNAMIC := 1
t_perf_bp_SRCS := tests/user/t_perf_bp.c
t_perf_sample_SRCS := tests/user/t_perf_sample.c
t_perf_sample_CFLAGS := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
t_perf_sample_LIBS := -lpthread
# Shell tests, run with busybox sh inside the guest (copied as they are into /bin)
USCRIPTS += tests/user/t_busybox.sh tests/user/t_profile.sh
# Every C test includes tap.h: rebuild them when it changes.
UPROGS += t_tracepoint
t_tracepoint_SRCS := tests/user/t_tracepoint.c
UPROGS += t_tp_filter
t_tp_filter_SRCS := tests/user/t_tp_filter.c
UPROGS += t_tp_kmem
t_tp_kmem_SRCS := tests/user/t_tp_kmem.c
UPROGS += t_tp_irq
t_tp_irq_SRCS := tests/user/t_tp_irq.c
UPROGS += t_usdt
t_usdt_SRCS := tests/user/t_usdt.c
UPROGS += t_probe_fetch
t_probe_fetch_SRCS := tests/user/t_probe_fetch.c
TESTS_USER_C := t_tracepoint t_tp_filter t_tp_kmem t_tp_irq t_usdt t_probe_fetch t_proc t_files t_pipe t_mm t_thread t_signal t_badptr t_perf_errno t_bpf_basic t_bpf_mmap t_bpf_jit t_perf_rdpmc t_perf_swsample t_perf_count t_procsys t_perf_sample t_perf_bp t_kbp t_bpf_ringbuf t_dynamic t_eventfd t_socketpair t_unix t_lock t_signalfd t_inotify t_fifo t_fork_exec t_perf_signal t_bigexec t_procabi t_vdso t_vdso_dyn t_ptrace t_uprobe t_probe_input t_ftrace_files
# (keep whatever the default goal was: this rule must not become it)
tests_user_goal := $(.DEFAULT_GOAL)
$(patsubst %,$(BUILD)/user/bin/%,$(TESTS_USER_C)): tests/user/tap.h
$(BUILD)/user/bin/t_tracepoint $(BUILD)/user/bin/t_tp_filter $(BUILD)/user/bin/t_tp_kmem $(BUILD)/user/bin/t_tp_irq $(BUILD)/user/bin/t_usdt $(BUILD)/user/bin/t_probe_fetch $(BUILD)/user/bin/t_uprobe: tests/user/tracing.h
.DEFAULT_GOAL := $(tests_user_goal)
UPROGS += t_perf_bpf
t_perf_bpf_SRCS := tests/user/t_perf_bpf.c
# t_libbpf: Debian's arm64 libbpf (static, unpacked by make deps) with an embedded BPF object
UPROGS += t_libbpf
t_libbpf_SRCS := tests/user/t_libbpf.c $(BUILD)/user/bpf/pagefaults.bpf.lo
t_libbpf_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_libbpf_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd
# t_libbpf_probe: libbpf's SEC("uprobe//bin/hot:burn"), uretprobe and attach_kprobe
UPROGS += t_libbpf_probe
t_libbpf_probe_SRCS := tests/user/t_libbpf_probe.c $(BUILD)/user/bpf/probes.bpf.lo
t_libbpf_probe_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_libbpf_probe_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd
$(BUILD)/user/bpf/%.bpf.o: tests/user/bpf/%.bpf.c $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(Q)clang -target bpf -O2 -g -Wall -Werror -I/usr/aarch64-linux-gnu/include \
		-I$(BUILD)/deps/arm64/usr/include -c -o $@ $<
# the object as bytes in an aarch64 ELF: _binary_<name>_bpf_o_start/_end
$(BUILD)/user/bpf/%.bpf.lo: $(BUILD)/user/bpf/%.bpf.o
	$(Q)cd $(dir $<) && $(CROSS)ld -r -b binary -o $(notdir $@) $(notdir $<)
UPROGS += t_epoll
t_epoll_SRCS := tests/user/t_epoll.c
t_epoll_LIBS := -lpthread
UPROGS += t_perf_robust
t_perf_robust_SRCS := tests/user/t_perf_robust.c
t_perf_robust_LIBS := -lpthread
# a 9 MiB program: exec reads only its headers (tests/user/t_bigexec.c)
UPROGS += t_bigexec
t_bigexec_SRCS := tests/user/t_bigexec.c
# process ABI perf's own tests read: /proc/PID/fd, /proc/<tid>, times, clocks, notes, syslog
UPROGS += t_procabi
t_procabi_SRCS := tests/user/t_procabi.c
t_procabi_LIBS := -lpthread
UPROGS += t_vdso t_vdso_dyn
t_vdso_SRCS := tests/user/t_vdso.c
# the same test dynamically linked (Debian's ld.so and libc.so.6); libgcc's unwinder linked in
t_vdso_dyn_SRCS := tests/user/t_vdso.c
t_vdso_dyn_DYNAMIC := 1
t_vdso_dyn_CFLAGS := -static-libgcc
# t_bpf_loops: clang-built loop programs (bounded loops, bpf_loop, for_each_map_elem) via libbpf
UPROGS += t_bpf_loops
t_bpf_loops_SRCS := tests/user/t_bpf_loops.c $(BUILD)/user/bpf/loops.bpf.lo \
	$(BUILD)/user/bpf/badloops.bpf.lo
t_bpf_loops_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_bpf_loops_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd
$(BUILD)/user/bin/t_bpf_loops: tests/user/tap.h tests/user/bpf_faults.h tests/user/bpf_raw.h
UPROGS += t_bpf_probe
t_bpf_probe_SRCS := tests/user/t_bpf_probe.c
$(BUILD)/user/bin/t_bpf_probe: tests/user/tap.h
# t_bpf_helpers: the issue-19 helpers' results and refusals, clang-built programs via libbpf
UPROGS += t_bpf_helpers
t_bpf_helpers_SRCS := tests/user/t_bpf_helpers.c $(BUILD)/user/bpf/helpers.bpf.lo
t_bpf_helpers_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_bpf_helpers_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd
$(BUILD)/user/bin/t_bpf_helpers: tests/user/tap.h tests/user/bpf_faults.h tests/user/bpf_raw.h
UPROGS += t_uprobe
t_uprobe_SRCS := tests/user/t_uprobe.c
UPROGS += t_kprobe
t_kprobe_SRCS := tests/user/t_kprobe.c
$(BUILD)/user/bin/t_kprobe: tests/user/tap.h tests/user/tracing.h
# t_bpf_funcip: bpf_get_func_ip in KPROBE programs on kprobe, kretprobe and uprobe events
UPROGS += t_bpf_funcip
t_bpf_funcip_SRCS := tests/user/t_bpf_funcip.c
$(BUILD)/user/bin/t_bpf_funcip: tests/user/tap.h tests/user/tracing.h
UPROGS += t_bpf_hashrace
t_bpf_hashrace_SRCS := tests/user/t_bpf_hashrace.c
t_bpf_hashrace_LIBS := -lpthread
# t_bpf_tailcall: bpf_tail_call and BPF_MAP_TYPE_PROG_ARRAY (raw instructions)
UPROGS += t_bpf_tailcall
t_bpf_tailcall_SRCS := tests/user/t_bpf_tailcall.c
$(BUILD)/user/bin/t_bpf_tailcall: tests/user/tap.h tests/user/bpf_raw.h tests/user/bpf_insn.h
$(BUILD)/user/bin/t_bpf_ringbuf: tests/user/bpf_raw.h tests/user/bpf_insn.h
# t_bpf_bloom: BPF_MAP_TYPE_BLOOM_FILTER (raw instructions)
UPROGS += t_bpf_bloom
t_bpf_bloom_SRCS := tests/user/t_bpf_bloom.c
$(BUILD)/user/bin/t_bpf_bloom: tests/user/tap.h tests/user/bpf_raw.h tests/user/bpf_insn.h
# t_bpf_mapinmap: ARRAY_OF_MAPS and HASH_OF_MAPS (raw instructions)
UPROGS += t_bpf_mapinmap
t_bpf_mapinmap_SRCS := tests/user/t_bpf_mapinmap.c
$(BUILD)/user/bin/t_bpf_mapinmap: tests/user/tap.h tests/user/bpf_raw.h tests/user/bpf_insn.h
# t_bpf_dynptr: the dynptr helpers (raw instructions)
UPROGS += t_bpf_dynptr
t_bpf_dynptr_SRCS := tests/user/t_bpf_dynptr.c
$(BUILD)/user/bin/t_bpf_dynptr: tests/user/tap.h tests/user/bpf_raw.h tests/user/bpf_insn.h
# t_bpf_user_ringbuf: BPF_MAP_TYPE_USER_RINGBUF and bpf_user_ringbuf_drain (raw instructions)
UPROGS += t_bpf_user_ringbuf
t_bpf_user_ringbuf_SRCS := tests/user/t_bpf_user_ringbuf.c $(BUILD)/user/bpf/userrb.bpf.lo
t_bpf_user_ringbuf_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_bpf_user_ringbuf_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd
$(BUILD)/user/bin/t_bpf_user_ringbuf: tests/user/tap.h tests/user/bpf_raw.h tests/user/bpf_insn.h \
	tests/user/bpf_faults.h
# t_bpf_timer: bpf_timer helpers run from SYSCALL programs (clang-built, via libbpf)
UPROGS += t_bpf_timer
t_bpf_timer_SRCS := tests/user/t_bpf_timer.c $(BUILD)/user/bpf/timer.bpf.lo
t_bpf_timer_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_bpf_timer_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd -lpthread
$(BUILD)/user/bin/t_bpf_timer: tests/user/tap.h tests/user/bpf_raw.h tests/user/bpf_faults.h
# t_bpf_sleepable: the map types sleepable programs may use
UPROGS += t_bpf_sleepable
t_bpf_sleepable_SRCS := tests/user/t_bpf_sleepable.c
$(BUILD)/user/bin/t_bpf_sleepable: tests/user/tap.h tests/user/bpf_raw.h tests/user/bpf_insn.h
# t_bpf_vlog: the verifier log's line per instruction, in Linux's notation
UPROGS += t_bpf_vlog
t_bpf_vlog_SRCS := tests/user/t_bpf_vlog.c
$(BUILD)/user/bin/t_bpf_vlog: tests/user/tap.h tests/user/bpf_insn.h tools/lib/sys_bpf.h
# t_bpf_task: kernel-typed pointers (PTR_TO_BTF_ID) from the kernel's BTF, via libbpf
UPROGS += t_bpf_task
t_bpf_task_SRCS := tests/user/t_bpf_task.c $(BUILD)/user/bpf/task.bpf.lo
t_bpf_task_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_bpf_task_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd
$(BUILD)/user/bpf/task.bpf.o $(BUILD)/user/bpf/core.bpf.o: tests/user/bpf/out.h
$(BUILD)/user/bpf/task.bpf.o $(BUILD)/user/bpf/otask.bpf.o: tests/user/bpf/vma.h
$(BUILD)/user/bin/t_bpf_task: tests/user/tap.h tests/user/bpf_faults.h tests/user/bpf_raw.h \
	tests/user/bpf_insn.h
# t_bpf_kptr: kptrs in map values (raw instructions and BTF blobs, and clang-built programs via libbpf)
UPROGS += t_bpf_kptr
t_bpf_kptr_SRCS := tests/user/t_bpf_kptr.c $(BUILD)/user/bpf/kptr.bpf.lo
t_bpf_kptr_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_bpf_kptr_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd
$(BUILD)/user/bpf/kptr.bpf.o: tests/user/bpf/out.h
$(BUILD)/user/bin/t_bpf_kptr: tests/user/tap.h tests/user/bpf_insn.h tests/user/bpf_faults.h tests/user/btf_blob.h \
	tests/user/bpf_raw.h
# t_kbtf: /sys/kernel/btf/vmlinux and CO-RE relocations against it (Debian's libbpf 1.1)
UPROGS += t_kbtf
t_kbtf_SRCS := tests/user/t_kbtf.c $(BUILD)/user/bpf/core.bpf.lo
t_kbtf_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_kbtf_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd
$(BUILD)/user/bin/t_kbtf: tests/user/tap.h tests/user/bpf_faults.h tests/user/bpf_raw.h
# t_bpf_otask: other tasks through typed links, get_task_stack / task_pt_regs /
# copy_from_user_task / find_vma on them (clang-built CO-RE programs via libbpf)
UPROGS += t_bpf_otask
t_bpf_otask_SRCS := tests/user/t_bpf_otask.c $(BUILD)/user/bpf/otask.bpf.lo
t_bpf_otask_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_bpf_otask_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd -lpthread
$(BUILD)/user/bpf/otask.bpf.o: tests/user/bpf/out.h
$(BUILD)/user/bin/t_bpf_otask: tests/user/tap.h tests/user/bpf_faults.h tests/user/bpf_raw.h
# t_pidfd: pidfd_open, poll on exit, waitid(P_PIDFD), pidfd_send_signal
UPROGS += t_pidfd
t_pidfd_SRCS := tests/user/t_pidfd.c
t_pidfd_LIBS := -lpthread
# t_bpf_pcpu: typed ksyms of per-CPU variables, bpf_this_cpu_ptr / bpf_per_cpu_ptr, via libbpf
UPROGS += t_bpf_pcpu
t_bpf_pcpu_SRCS := tests/user/t_bpf_pcpu.c $(BUILD)/user/bpf/pcpu.bpf.lo
t_bpf_pcpu_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_bpf_pcpu_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd
$(BUILD)/user/bpf/pcpu.bpf.o: tests/user/bpf/out.h
$(BUILD)/user/bin/t_bpf_pcpu: tests/user/tap.h tests/user/bpf_faults.h tests/user/bpf_raw.h \
	tests/user/bpf_insn.h
# t_bpf_gfunc: func_info for callbacks, global functions verified on their own
UPROGS += t_bpf_gfunc
t_bpf_gfunc_SRCS := tests/user/t_bpf_gfunc.c
$(BUILD)/user/bin/t_bpf_gfunc: tests/user/tap.h tests/user/bpf_insn.h tests/unit/prog_btf.h
# t_bpf_pin: a BPF_PROG_TEST_RUN run stays on one CPU (migrate_disable), clang-built via libbpf
UPROGS += t_bpf_pin
t_bpf_pin_SRCS := tests/user/t_bpf_pin.c $(BUILD)/user/bpf/pin.bpf.lo
t_bpf_pin_CFLAGS := -I$(BUILD)/deps/arm64/usr/include
t_bpf_pin_LIBS := -L$(BUILD)/deps/arm64/usr/lib/aarch64-linux-gnu -lbpf -lelf -lz -lzstd -lpthread
$(BUILD)/user/bin/t_bpf_pin: tests/user/tap.h tests/user/bpf_faults.h tests/user/bpf_raw.h
# t_cgroup: the cgroup2 filesystem, membership, /proc/PID/cgroup, errnos
UPROGS += t_cgroup
t_cgroup_SRCS := tests/user/t_cgroup.c
$(BUILD)/user/bin/t_cgroup: tests/user/tap.h tests/user/cgroup_util.h
t_cgroup_LIBS := -lpthread
# t_bpf_cgroup: BPF_MAP_TYPE_CGROUP_ARRAY, current_task_under_cgroup and the cgroup id helpers
UPROGS += t_bpf_cgroup
t_bpf_cgroup_SRCS := tests/user/t_bpf_cgroup.c
$(BUILD)/user/bin/t_bpf_cgroup: tests/user/tap.h tests/user/bpf_raw.h tests/user/bpf_insn.h \
	tests/user/cgroup_util.h
# t_perf_cgroup: PERF_SAMPLE_CGROUP, cgroup-switches and PERF_FLAG_PID_CGROUP (root-only perf_event cgroup)
UPROGS += t_perf_cgroup
t_perf_cgroup_SRCS := tests/user/t_perf_cgroup.c
$(BUILD)/user/bin/t_perf_cgroup: tests/user/tap.h tests/user/cgroup_util.h
