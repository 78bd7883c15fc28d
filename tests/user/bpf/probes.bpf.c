/* probes.bpf.c - BPF_PROG_TYPE_KPROBE programs for t_libbpf_probe, attached by libbpf 1.1 the
 * way its users write them: SEC("uprobe//bin/hot:burn") and SEC("uretprobe//bin/hot:burn")
 * (auto-attached: libbpf finds burn's file offset in /bin/hot's symbol table and opens the
 * uprobe PMU), and a kprobe on the kernel's getpid handler (bpf_program__attach_kprobe: its
 * name differs between kernels).  Each counts the hits of the process whose tgid is in
 * target[0]: counts[0] burn's entries (and counts[3] the iterations it was asked for, its
 * first argument, from pt_regs), counts[1] its returns, counts[2] getpid calls.
 * Built by clang -target bpf. */
#include <linux/bpf.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4);
	__type(key, __u32);
	__type(value, __u64);
} counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} target SEC(".maps");

static int mine(void)
{
	__u32 k = 0;
	__u64 *t = bpf_map_lookup_elem(&target, &k);

	return t && *t == bpf_get_current_pid_tgid() >> 32;
}

static void bump(__u32 k, __u64 by)
{
	__u64 *v = bpf_map_lookup_elem(&counts, &k);

	if (v)
		__sync_fetch_and_add(v, by);
}

SEC("uprobe//bin/hot:burn")
int on_burn(struct user_pt_regs *ctx)
{
	if (mine()) {
		bump(0, 1);
		bump(3, ctx->regs[0]);
	}
	return 0;
}

SEC("uretprobe//bin/hot:burn")
int on_burn_ret(struct user_pt_regs *ctx)
{
	if (mine())
		bump(1, 1);
	return 0;
}

SEC("kprobe")
int on_getpid(struct user_pt_regs *ctx)
{
	if (mine())
		bump(2, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
