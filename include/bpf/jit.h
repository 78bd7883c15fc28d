/* jit.h - the eBPF JIT's sysctl, for procfs (net.core.bpf_jit_enable); bpf/jit.c implements it.
 * Apart from include/bpf/bpf.h so that fs/ needs no uapi headers for it. */
#pragma once

/* net.core.bpf_jit_enable: get, and set (0, or -EINVAL outside 0..2; 2 is Linux's debug value,
 * taken as 1).  It applies to programs loaded afterwards, as on Linux. */
int bpf_jit_enable_get(void);
int bpf_jit_enable_set(long v);
