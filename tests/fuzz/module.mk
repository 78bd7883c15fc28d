# Guest fuzzers (static aarch64 glibc), in the initramfs at /bin/NAME like UPROGS; run by
# tests/fuzz/fuzz-syscalls.sh (make fuzz).
UPROGS += sysfuzz perffuzz perftorture filefuzz
sysfuzz_SRCS := tests/fuzz/sysfuzz.c
filefuzz_SRCS := tests/fuzz/filefuzz.c
perffuzz_SRCS := tests/fuzz/perffuzz.c
perftorture_SRCS := tests/fuzz/perftorture.c
perftorture_LIBS := -lpthread
FUZZ_BINS += $(BUILD)/perfkernel.img $(BUILD)/initramfs.cpio
# the verifier compared with Linux's answers (tests/e2e/verifier-diff.sh)
UPROGS += vdiff
vdiff_SRCS := tests/fuzz/vdiff.c
