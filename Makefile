# perfkernel - top-level Makefile.
#
#   make run [CMD='...'] [SMP=n] [ICOUNT=1] [OVERLAY=dir] [OUTDIR=dir]   build, boot, run CMD
#   make test                                                             every test tier
#   make bench | make fuzz | make deps | make clean
#
# Each directory appends to the source lists in its own module.mk:
#   KSRCS       kernel-only sources (cross-compiled)
#   PSRCS       portable sources: cross-compiled into the kernel AND compiled for host tests
#   UNIT_TESTS  host cmocka programs, tests/unit/test_<name>.c, each linked with the portable
#               sources it lists in UNIT_SRCS_<name>, with tests/fakes (FAKE_SRCS) and with
#               the kernel's portable primitives (KLIB_SRCS, kernel/module.mk)
#   UPROGS      userland programs (static aarch64 glibc); each NAME builds from $(NAME_SRCS)
#               and lands in the initramfs at /bin/NAME
# Nothing else needs editing to add a file.

BUILD ?= build
CROSS ?= aarch64-linux-gnu-
KCC := $(CROSS)gcc
KLD := $(CROSS)ld
KOBJCOPY := $(CROSS)objcopy
HOSTCC ?= gcc
Q ?= @

SMP ?= 4
ICOUNT ?=
CMD ?=
OVERLAY ?=
OUTDIR ?=

# The Linux uapi headers of the kernel's arch (arm64), for the kernel, the host tests and the BPF
# programs alike (below); defined here because the module.mk files use them.
UAPI := $(BUILD)/uapi
UAPI_STAMP := $(UAPI)/.ok

KSRCS :=
PSRCS :=
ASRCS :=
UNIT_TESTS :=
UPROGS :=
USCRIPTS :=
FAKE_SRCS :=

include arch/arm64/module.mk
include kernel/module.mk
include fs/module.mk
include perf/module.mk
include bpf/module.mk
include trace/module.mk
include tests/unit/module.mk
include tests/user/module.mk
include tools/module.mk
include tools/perf/module.mk
include tests/bench/module.mk
include tests/fuzz/module.mk

.DEFAULT_GOAL := all

.PHONY: all deps kernel debug-kernel initramfs run test test-unit test-qemu test-linux bench fuzz clean debian-perf \
	debian-strace debian-bpftool debian-bpftrace test-tools
all: kernel initramfs

DEPS_STAMP := $(BUILD)/deps/.ok
deps: $(DEPS_STAMP)
$(DEPS_STAMP): tools/host/deps.sh
	$(Q)sh tools/host/deps.sh $(BUILD)
	$(Q)touch $@

# Debian's own arm64 perf as an overlay: make run OVERLAY=$(BUILD)/debian-perf CMD='perf ...'
DEBIAN_PERF := $(BUILD)/debian-perf
debian-perf: $(DEBIAN_PERF)/usr/bin/perf
$(DEBIAN_PERF)/usr/bin/perf: tools/host/debian-perf.sh tools/host/debian-overlay.sh $(DEPS_STAMP)
	$(Q)sh tools/host/debian-perf.sh $(BUILD) $(DEBIAN_PERF)
# and Debian's own arm64 strace: make run OVERLAY=$(BUILD)/debian-strace CMD='strace -f ...'
DEBIAN_STRACE := $(BUILD)/debian-strace
debian-strace: $(DEBIAN_STRACE)/usr/bin/strace
$(DEBIAN_STRACE)/usr/bin/strace: tools/host/debian-strace.sh tools/host/debian-overlay.sh $(DEPS_STAMP)
	$(Q)sh tools/host/debian-strace.sh $(BUILD) $(DEBIAN_STRACE)
# and Debian's own arm64 bpftool: make run OVERLAY=$(BUILD)/debian-bpftool CMD='bpftool prog'
DEBIAN_BPFTOOL := $(BUILD)/debian-bpftool
debian-bpftool: $(DEBIAN_BPFTOOL)/usr/sbin/bpftool
$(DEBIAN_BPFTOOL)/usr/sbin/bpftool: tools/host/debian-bpftool.sh tools/host/debian-overlay.sh $(DEPS_STAMP)
	$(Q)sh tools/host/debian-bpftool.sh $(BUILD) $(DEBIAN_BPFTOOL)
# and Debian's own arm64 bpftrace with LLVM (188 MB; run it with MEM=2048):
# make run MEM=2048 OVERLAY=$(BUILD)/debian-bpftrace CMD='bpftrace -e ...'
DEBIAN_BPFTRACE := $(BUILD)/debian-bpftrace
debian-bpftrace: $(DEBIAN_BPFTRACE)/usr/bin/bpftrace
$(DEBIAN_BPFTRACE)/usr/bin/bpftrace: tools/host/debian-bpftrace.sh tools/host/debian-overlay.sh $(DEPS_STAMP)
	$(Q)sh tools/host/debian-bpftrace.sh $(BUILD) $(DEBIAN_BPFTRACE)

# ---- include paths ----
# The kernel sees the Linux uapi headers through a directory that holds only linux/, asm/ and
# asm-generic/, never libc headers.
$(UAPI_STAMP): $(DEPS_STAMP)
	$(Q)rm -rf $(UAPI) && mkdir -p $(UAPI)
	$(Q)cp -r /usr/aarch64-linux-gnu/include/linux /usr/aarch64-linux-gnu/include/asm \
		/usr/aarch64-linux-gnu/include/asm-generic $(UAPI)/
	$(Q)touch $@

ARM64_DEPS := $(BUILD)/deps/arm64
LIBFDT_A := $(ARM64_DEPS)/usr/lib/aarch64-linux-gnu/libfdt.a
GCC_INC := $(shell $(KCC) -print-file-name=include 2>/dev/null)
LIBGCC := $(shell $(KCC) -print-libgcc-file-name 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wno-unused-parameter -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-missing-field-initializers
# The layers' include paths.  perf/ and bpf/ see include/ (the seam and primitives in kern/,
# and perf/'s and bpf/'s public headers), the arch headers (pmuv3.c's and bp.c's register
# accessors) and the uapi headers; everything else also sees the kernel's own headers
# (kernel/include: kern/sched.h, fs/vfs.h, ...) and libfdt's.  tests/tier/10-layers.sh checks
# what perf/ and bpf/ include and that every header compiles on its own.
SEAM_INC := -Iinclude -Iarch/arm64/include
KERNEL_INC := -Ikernel/include
inc_of = $(if $(filter perf/% bpf/%,$(1)),,$(KERNEL_INC))
# -gdwarf-4 -gstrict-dwarf: DWARF without DW_TAG_atomic_type (C11 _Atomic), which pahole 1.24
# cannot encode as BTF (tools/host/btf.sh)
KCFLAGS := -std=gnu11 -O2 -g -gdwarf-4 -gstrict-dwarf -ffreestanding -nostdinc -isystem $(GCC_INC) \
	-mgeneral-regs-only -mno-outline-atomics -fno-pie -fno-pic -mcmodel=small \
	-fno-stack-protector -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-common -fno-strict-aliasing -ffunction-sections -fdata-sections \
	$(WARN) $(SEAM_INC) -I$(UAPI) -MMD -MP
# the kernel's own code (not perf/, bpf/): its headers, libfdt's and the libc ones libfdt wants
KCFLAGS_KERNEL := $(KERNEL_INC) -Ikernel/libc-compat -I$(ARM64_DEPS)/usr/include
# make DEBUG=1 (into its own BUILD, e.g. BUILD=build/debug): the kernel's debug checks
# (KDEBUG in <kern/assert.h>); host tests always have them
DEBUG ?=
KCFLAGS += $(if $(filter 1,$(DEBUG)),-DKDEBUG=1)
KASFLAGS := $(filter-out -std=gnu11,$(KCFLAGS)) $(KCFLAGS_KERNEL) -D__ASSEMBLY__

# Host tests see the same uapi headers as the kernel ($(UAPI), arm64's), not the host's.
HCFLAGS := -std=gnu11 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined $(WARN) -DKDEBUG=1 -Itests/fakes/include -Iinclude -I$(UAPI) \
	-MMD -MP
HLDFLAGS := -fsanitize=address,undefined

# ---- kernel ----
KOBJS := $(patsubst %.S,$(BUILD)/k/%.o,$(ASRCS)) \
	$(patsubst %.c,$(BUILD)/k/%.o,$(KSRCS) $(PSRCS))
KERNEL_ELF := $(BUILD)/perfkernel.elf
KERNEL_IMG := $(BUILD)/perfkernel.img

kernel: $(KERNEL_IMG)

# The compiler flags of the last build: objects are rebuilt when they change (a changed -g
# option changes the BTF), the file's date moves only then.
KFLAGS_STAMP := $(BUILD)/k/.kcflags
$(KFLAGS_STAMP): FORCE
	@mkdir -p $(dir $@)
	@echo '$(KCFLAGS) $(KCFLAGS_KERNEL)' | cmp -s - $@ || echo '$(KCFLAGS) $(KCFLAGS_KERNEL)' > $@
.PHONY: FORCE
FORCE:

$(BUILD)/k/%.o: %.c $(UAPI_STAMP) $(KFLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(KCC) $(KCFLAGS) $(if $(call inc_of,$<),$(KCFLAGS_KERNEL)) -c $< -o $@

$(BUILD)/k/%.o: %.S $(UAPI_STAMP) $(KFLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(KCC) $(KASFLAGS) -c $< -o $@

KLINK := $(KLD) -nostdlib -T linker.ld --gc-sections --build-id=sha1 -z max-page-size=4096 $(KOBJS) \
	$(LIBFDT_A) $(LIBGCC)
# The kernel's BTF (/sys/kernel/btf/vmlinux): pahole's encoding of the kernel's DWARF, in .BTF
KERNEL_BTF := $(BUILD)/perfkernel.btf
KBTF_OBJ := $(BUILD)/k/kernel/btf.o
$(KERNEL_BTF): $(KOBJS) linker.ld kernel/kallsyms.S kernel/btf.S tools/host/btf.sh $(DEPS_STAMP)
	$(Q)sh tools/host/btf.sh $@ pahole "$(KLINK)" "$(KCC) $(KASFLAGS)"
$(KBTF_OBJ): kernel/btf.S $(KERNEL_BTF) $(UAPI_STAMP) $(KFLAGS_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(KCC) $(KASFLAGS) -DBTF_FILE='"$(KERNEL_BTF)"' -c $< -o $@

# three links: the image carries its own symbol table (/proc/kallsyms)
$(KERNEL_ELF): $(KOBJS) $(KBTF_OBJ) linker.ld kernel/kallsyms.S tools/host/kallsyms.sh \
		tools/host/check-nosimd.sh tools/host/btf.sh $(DEPS_STAMP)
	$(Q)sh tools/host/kallsyms.sh $@.tmp $(CROSS)nm "$(KLINK) $(KBTF_OBJ)" "$(KCC) $(KASFLAGS)" \
		$(BUILD)/perfkernel.kallsyms
	$(Q)sh tools/host/check-nosimd.sh $@.tmp $(CROSS)objdump
	$(Q)sh tools/host/btf.sh --check $@.tmp $(KERNEL_BTF) pahole $(KOBJCOPY)
	$(Q)mv $@.tmp $@

$(KERNEL_IMG): $(KERNEL_ELF)
	$(Q)$(KOBJCOPY) -O binary $< $@

# ---- host unit tests ----
HOBJS := $(patsubst %.c,$(BUILD)/h/%.o,$(PSRCS))
HFAKEOBJS := $(patsubst %.c,$(BUILD)/h/%.o,$(FAKE_SRCS) $(KLIB_SRCS))
UNIT_BINS := $(patsubst %,$(BUILD)/unit/test_%,$(UNIT_TESTS))

$(BUILD)/h/%.o: %.c $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(HOSTCC) $(HCFLAGS) $(call inc_of,$<) -c $< -o $@

.SECONDEXPANSION:
$(BUILD)/unit/test_%: $(BUILD)/h/tests/unit/test_%.o \
		$$(addprefix $(BUILD)/h/,$$(subst .c,.o,$$(UNIT_SRCS_$$*))) $(HFAKEOBJS)
	@mkdir -p $(dir $@)
	$(Q)$(HOSTCC) $(HLDFLAGS) -o $@ $(filter %.o,$^) $(UNIT_LIBS_$*) -lcmocka

test-unit: $(UNIT_BINS)
	$(Q)sh tests/unit/run.sh $(UNIT_BINS)

# ---- userland and initramfs ----
UCC := $(CROSS)gcc
# tools/lib: the userland helpers (bpf(2), perf_event_open(2), the ring reader) of tests and tools
UCFLAGS := -static -O2 -g -Wall -Wextra -Werror -Wno-unused-parameter -fno-omit-frame-pointer \
	-Itests/user -Itools/lib
UBINS := $(patsubst %,$(BUILD)/user/bin/%,$(UPROGS))
INITRAMFS := $(BUILD)/initramfs.cpio

$(BUILD)/user/bin/%: $$($$*_SRCS) $(DEPS_STAMP)
	@mkdir -p $(dir $@)
	$(Q)$(UCC) $(if $($*_DYNAMIC),$(filter-out -static,$(UCFLAGS)),$(UCFLAGS)) $($*_CFLAGS) \
		-o $@ $($*_SRCS) $($*_LIBS)

initramfs: $(INITRAMFS)
$(INITRAMFS): $(UBINS) $(USCRIPTS) tools/host/mkinitramfs.sh $(DEPS_STAMP)
	$(Q)sh tools/host/mkinitramfs.sh $@ $(BUILD) $(UBINS) $(USCRIPTS)

# ---- running ----
RUN_ENV = SMP='$(SMP)' ICOUNT='$(ICOUNT)' OVERLAY='$(OVERLAY)' OUTDIR='$(OUTDIR)' MEM='$(MEM)' \
	MACHINE='$(MACHINE)' CPU='$(CPU)' BUILD='$(BUILD)'
run: $(KERNEL_IMG) $(INITRAMFS)
	$(Q)$(RUN_ENV) sh tools/host/run.sh $(KERNEL_IMG) $(INITRAMFS) '$(CMD)'

test-qemu: $(KERNEL_IMG) $(INITRAMFS)
	$(Q)BUILD='$(BUILD)' sh tests/qemu/matrix.sh $(KERNEL_IMG) $(INITRAMFS)

test-linux: $(UBINS)
	$(Q)BUILD='$(BUILD)' sh tests/user/run-linux.sh

# The debug kernel (DEBUG=1) for tier 45: its own objects, the same deps and initramfs.
DEBUG_BUILD := $(BUILD)/debug
debug-kernel: $(DEPS_STAMP)
	$(Q)mkdir -p $(DEBUG_BUILD) && ln -sfn ../deps $(DEBUG_BUILD)/deps
	$(Q)$(MAKE) --no-print-directory BUILD=$(DEBUG_BUILD) DEBUG=1 kernel

test: deps
	$(Q)$(MAKE) --no-print-directory all $(UNIT_BINS) $(TEST_EXTRA_BINS) debian-perf debian-strace debian-bpftool \
		debug-kernel
	$(Q)BUILD='$(BUILD)' sh tests/run-all.sh

# Debian's bpftrace one-liners inside (LLVM in a 2 GiB guest: 2 to 6 minutes), kept out of
# make test; tests/e2e/debian-bpftrace.sh --linux runs the same on Linux under refvm.sh
test-tools: deps
	$(Q)$(MAKE) --no-print-directory all debian-bpftrace
	$(Q)BUILD='$(BUILD)' sh tests/e2e/debian-bpftrace.sh

bench: deps
	$(Q)$(MAKE) --no-print-directory all $(BENCH_BINS)
	$(Q)BUILD='$(BUILD)' sh tests/bench/run.sh

fuzz: deps
	$(Q)$(MAKE) --no-print-directory $(FUZZ_BINS) debug-kernel
	$(Q)BUILD='$(BUILD)' FUZZ_LONG=1 sh tests/fuzz/run.sh

clean:
	rm -rf $(BUILD)/k $(BUILD)/h $(BUILD)/unit $(BUILD)/user $(BUILD)/*.elf $(BUILD)/*.img \
		$(BUILD)/*.cpio $(BUILD)/uapi $(BUILD)/vdso

.SECONDARY:

-include $(KOBJS:.o=.d) $(HOBJS:.o=.d) $(HFAKEOBJS:.o=.d) \
	$(patsubst %,$(BUILD)/h/tests/unit/test_%.d,$(UNIT_TESTS))
