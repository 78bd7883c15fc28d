# Userland tools (static aarch64 glibc) that land in the initramfs /bin, and scripts copied as
# they are (USCRIPTS).
UPROGS += init hot
init_SRCS := tools/init/init.c
hot_SRCS := tools/workloads/hot.c
# burn() must keep its own symbol and frame record for callchains (see hot.c)
hot_CFLAGS := -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -fno-inline
# forkecho: forks, both write a line (strace -f end to end, tests/e2e/debian-strace.sh)
UPROGS += forkecho
forkecho_SRCS := tools/workloads/forkecho.c
USCRIPTS += tools/demo.sh
# profile: per-CPU cpu-clock + a PERF_EVENT eBPF program -> folded stacks (tools/profile)
UPROGS += profile
profile_SRCS := tools/profile/profile.c
