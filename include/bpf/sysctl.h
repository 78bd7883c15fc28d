/*
 * sysctl.h - the bpf sysctls /proc/sys/kernel shows (bpf/obj.c), for fs/procfs.c, which must
 * not see the uapi headers include/bpf/bpf.h pulls in.
 */
#pragma once

/* [proc] net.core.bpf_jit_enable (jit.h), kernel.bpf_stats_enabled (0/1, EINVAL otherwise), kernel.unprivileged_bpf_disabled
 * (1: bpf(2) is for uid 0 only, and stays so: EPERM), and, read-only, net.core.bpf_jit_harden
 * and net.core.bpf_jit_kallsyms (0: not done).  0 or -errno; -ENOENT for another name. */
int bpf_sysctl_get(const char *name, long *v);
int bpf_sysctl_set(const char *name, long v);
