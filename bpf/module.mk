# bpf/: the eBPF runtime (portable: built into the kernel and into host tests), the bpf-run
# host tool, the BPF C programs under tests/bpf/ (clang -target bpf) and the bpf tests.
BPF_SRCS := bpf/interp.c bpf/log.c bpf/disasm.c bpf/verify_cfg.c bpf/verify.c bpf/verify_alu.c bpf/verify_jmp.c \
	bpf/verify_mem.c bpf/verify_kptr.c bpf/verify_prec.c bpf/verify_dynptr.c bpf/verify_func.c \
	bpf/helpers.c bpf/helpers_task.c bpf/helpers_timer.c bpf/helpers_str.c bpf/helpers_dynptr.c bpf/bprintf.c bpf/map.c bpf/map_array.c bpf/map_hash.c bpf/map_misc.c bpf/map_queue.c bpf/map_ringbuf.c bpf/map_prog_array.c bpf/map_bloom.c bpf/map_in_map.c bpf/map_btf.c bpf/map_task_storage.c bpf/map_cgroup_array.c \
	bpf/btf.c bpf/btf_access.c bpf/btf_meta.c bpf/btf_resolve.c bpf/btf_sys.c bpf/btf_show.c bpf/ksym.c bpf/prog.c bpf/prog_btf.c bpf/sha1.c bpf/syscall.c bpf/jit.c bpf/obj.c bpf/info.c bpf/link.c
PSRCS += $(BPF_SRCS)

# ---- bpf-run: the verifier-free interpreter path, for conformance vectors and benchmarks ----
# Built without sanitizers and with -O2 so benchmark figures mean something; it links the
# portable sources and the host fake of the kernel-services seam.
BPF_RUN := $(BUILD)/host/bpf-run
BPF_RUN_SRCS := tools/bpf-run/bpf-run.c tools/bpf-run/asm.c $(BPF_SRCS) $(KLIB_SRCS) tests/fakes/ksvc_fake.c
BPF_RUN_CFLAGS := -std=gnu11 -O2 -g $(WARN) -Itests/fakes/include -Iinclude -Itests/fakes -I$(UAPI)

$(BPF_RUN): $(BPF_RUN_SRCS) $(wildcard bpf/*.h include/bpf/*.h tools/bpf-run/*.h) $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(HOSTCC) $(BPF_RUN_CFLAGS) -o $@ $(BPF_RUN_SRCS)

TEST_EXTRA_BINS += $(BPF_RUN)
BENCH_BINS += $(BPF_RUN)

# bpf-run as a static aarch64 Linux program: with --jit it runs the JIT's code, which the
# tests run under qemu-aarch64 (Debian's qemu-user) with and without LSE atomics.
BPF_RUN_A64 := $(BUILD)/host/bpf-run-a64
$(BPF_RUN_A64): $(BPF_RUN_SRCS) $(wildcard bpf/*.h include/bpf/*.h tools/bpf-run/*.h) $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(CROSS)gcc -static $(BPF_RUN_CFLAGS) -Wno-stringop-truncation -o $@ $(BPF_RUN_SRCS)

TEST_EXTRA_BINS += $(BPF_RUN_A64)

# ---- BPF C programs (tests/bpf/*.bpf.c) compiled by clang -target bpf ----
# bench_*: raw bytecode of their "bench" section for bpf-run; perf_*: ELF objects the host
# tests load through tests/bpf/bpf_elf.c.  They see the kernel's uapi headers ($(UAPI), arm64's
# struct bpf_perf_event_data), as the kernel and the host tests do.
BPF_CLANG ?= clang
BPF_OBJCOPY ?= llvm-objcopy
BPF_CFLAGS := -O2 -g0 -target bpf -Wall -Werror -I$(UAPI)
BPF_BENCH_NAMES := sum fnv classify alu helper
BPF_BENCH_BINS := $(patsubst %,$(BUILD)/bpf/bench_%.bin,$(BPF_BENCH_NAMES))
BPF_TEST_OBJS := $(patsubst tests/bpf/%.bpf.c,$(BUILD)/bpf/%.o,$(wildcard tests/bpf/perf_*.bpf.c)) \
	$(patsubst tests/bpf/%.bpf.c,$(BUILD)/bpf/%_v3.o,$(wildcard tests/bpf/perf_*.bpf.c))

# the perf programs also as -mcpu=v3 code (32-bit ALU and JMP32) as newer toolchains emit
$(BUILD)/bpf/%_v3.o: tests/bpf/%.bpf.c tests/bpf/bpf_defs.h $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(BPF_CLANG) $(BPF_CFLAGS) -mcpu=v3 -c $< -o $@

$(BUILD)/bpf/%.o: tests/bpf/%.bpf.c tests/bpf/bpf_defs.h $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(BPF_CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bpf/bench_%.bin: $(BUILD)/bpf/bench_%.o
	$(Q)$(BPF_OBJCOPY) -O binary --only-section=bench $< $@

TEST_EXTRA_BINS += $(BPF_BENCH_BINS) $(BPF_TEST_OBJS)
BENCH_BINS += $(BPF_BENCH_BINS)

# ---- host unit tests ----
BPF_TEST_SRCS := $(BPF_SRCS) tests/bpf/bpf_elf.c
UNIT_TESTS += bpf_interp bpf_verify bpf_map bpf_sys bpf_fuzz bpf_sha1 bpf_jit bpf_obj bpf_disasm bpf_btf bpf_btf_access \
	bpf_btf_show \
	bpf_kptr bpf_timer
UNIT_SRCS_bpf_timer := $(BPF_SRCS)
UNIT_SRCS_bpf_btf_show := $(BPF_SRCS)
UNIT_SRCS_bpf_btf_access := $(BPF_SRCS)
UNIT_SRCS_bpf_kptr := $(BPF_SRCS)
UNIT_SRCS_bpf_btf := $(BPF_SRCS)
UNIT_SRCS_bpf_obj := $(BPF_SRCS)
UNIT_SRCS_bpf_jit := $(BPF_SRCS)
UNIT_SRCS_bpf_sha1 := bpf/sha1.c
UNIT_SRCS_bpf_disasm := bpf/disasm.c
UNIT_SRCS_bpf_interp := $(BPF_SRCS)
UNIT_SRCS_bpf_verify := $(BPF_TEST_SRCS)
UNIT_SRCS_bpf_map := $(BPF_SRCS)
UNIT_SRCS_bpf_sys := $(BPF_SRCS)
UNIT_SRCS_bpf_fuzz := $(BPF_SRCS)
# the tests read the clang-built objects at run time: build them first (order-only, not linked)
$(BUILD)/unit/test_bpf_verify $(BUILD)/unit/test_bpf_sys $(BUILD)/unit/test_bpf_fuzz: | $(BPF_TEST_OBJS)
FUZZ_BINS += $(BUILD)/unit/test_bpf_fuzz
