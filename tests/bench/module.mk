# Benchmark guest programs (static aarch64 glibc), in the initramfs at /bin/NAME like UPROGS.
UPROGS += perfbench
perfbench_SRCS := tests/bench/perfbench.c
perfbench_LIBS := -lpthread
# samplebench: guest instructions per perf sample (tests/bench/bench-sample.sh); frame pointers
# in every frame, leaves included, for the 5-deep callchain case
UPROGS += samplebench
samplebench_SRCS := tests/bench/samplebench.c
samplebench_CFLAGS := -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
