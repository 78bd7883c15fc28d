# perf/ sources: portable files go in PSRCS (kernel and host tests), kernel-only ones in KSRCS.
PSRCS += perf/record.c perf/attr.c perf/ring.c perf/sideband.c perf/pmu.c perf/pmuv3.c \
	perf/core.c perf/ctx.c perf/sw.c perf/mmap.c perf/sample.c perf/overflow.c perf/sysfs.c \
	perf/bpf_attach.c perf/bp.c perf/tp.c perf/uprobe.c perf/kprobe.c
# Host cmocka tests: tests/unit/test_<name>.c, one per portable file.  Add the name here.
# A test needing extra host libraries sets UNIT_LIBS_<name>.
FAKE_SRCS += tests/fakes/ksvc_fake.c
# The whole perf core for the tests that drive it (events, contexts, rings) as the kernel
# does: every perf/ source, bpf/ (programs on events) and the fake PMUv3 registers.
PERF_HOST_SRCS = $(filter perf/%,$(PSRCS)) $(BPF_SRCS) tests/fakes/pmu_fake.c
UNIT_TESTS += perf_record perf_attr perf_ring perf_sideband perf_pmu perf_pmuv3
UNIT_SRCS_perf_record := perf/record.c
UNIT_SRCS_perf_attr := perf/attr.c
UNIT_SRCS_perf_ring := perf/ring.c perf/record.c
UNIT_LIBS_perf_ring := -lpthread
UNIT_SRCS_perf_sideband = $(PERF_HOST_SRCS)
UNIT_SRCS_perf_pmu := perf/pmu.c
# pmuv3 runs against the fake PMUv3 register file (tests/fakes/include/arch/pmu_sysreg.h)
UNIT_SRCS_perf_pmuv3 := perf/pmuv3.c perf/pmu.c tests/fakes/pmu_fake.c
UNIT_TESTS += perf_sysfs
UNIT_SRCS_perf_sysfs := perf/sysfs.c perf/pmuv3.c perf/pmu.c tests/fakes/pmu_fake.c
UNIT_TESTS += perf_bpf_attach
UNIT_SRCS_perf_bpf_attach := perf/bpf_attach.c
UNIT_TESTS += perf_bp
# bp runs against the fake debug registers (tests/fakes/include/arch/dbg_sysreg.h)
UNIT_SRCS_perf_bp := perf/bp.c perf/pmu.c
# the perf core end to end: perf_event_open, the file operations, the hooks, the overflow path
UNIT_TESTS += perf_core
UNIT_SRCS_perf_core = $(PERF_HOST_SRCS)
UNIT_LIBS_perf_core := -lpthread
