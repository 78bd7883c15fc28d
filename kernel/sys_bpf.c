/*
 * sys_bpf.c - the bpf(2) system call (aarch64 nr 280): the table entry that hands the call to
 * the portable eBPF runtime (bpf/syscall.c), which copies the attribute in and answers.
 */
#include <bpf/bpf.h>
#include <kern/syscall.h>

static long sys_bpf(uint64_t cmd, uint64_t uattr, uint64_t size)
{
	return bpf_sys((int)cmd, (const void *)uattr, (unsigned int)size);
}
SYSCALL(__NR_bpf, sys_bpf);
