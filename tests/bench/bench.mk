# Benchmark guest programs (static aarch64 glibc), in the initramfs at /bin/NAME like UPROGS.
# Include from the top-level Makefile next to tests/user/module.mk: include tests/bench/bench.mk
UPROGS += perfbench
perfbench_SRCS := tests/bench/perfbench.c
perfbench_LIBS := -lpthread
