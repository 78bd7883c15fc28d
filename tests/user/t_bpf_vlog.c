/*
 * t_bpf_vlog.c - the verifier log at log_level 1 as Linux 6.1 writes it: a line per
 * instruction walked ("3: (85) call bpf_ktime_get_ns#5"), in kernel/bpf/disasm.c's notation.
 * Tools read those lines back: libbpf explains a failed CO-RE relocation by finding
 * "N: (85) call unknown#195896080" just before "invalid func unknown#195896080".
 * Runs on perfkernel and on Linux (make test-linux).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/bpf.h>

#include "tap.h"
#include "bpf_insn.h"
#include "sys_bpf.h"

static char log_buf[65536], insn_lines[65536];

/*
 * Load p at log_level 1; insn_lines gets the log less what Linux adds and perfkernel does not
 * write: the register states after each instruction ("   ; R0_w=0") and those that start each
 * path taken from the stack ("from 1 to 4: <states>", or " 4: <states>" after the branch).  What stays is the line per
 * instruction, the start state, the reason and the statistics.
 */
static int load(const struct bpf_insn *p, unsigned n, int *err)
{
	int fd = bpf_prog_new(BPF_PROG_TYPE_PERF_EVENT, 0, p, n, log_buf, sizeof(log_buf));
	char *o = insn_lines;

	*err = fd < 0 ? errno : 0;
	if (fd >= 0)
		close(fd);
	for (const char *l = log_buf; *l;) {
		const char *e = strchr(l, '\n'), *cut;
		size_t len = e ? (size_t)(e - l) : strlen(l);

		cut = memchr(l, ';', len);
		if (cut && cut > l && cut[-1] == ' ')
			len = (size_t)(cut - l);
		/* a path taken from the stack: Linux cuts its log back into the branch's line
		 * and writes the states there, "... goto pc+2 4: R0_w=0 R10=fp0" */
		for (size_t i = 1; i + 3 < len; i++) {
			size_t d = i;

			while (d < len && l[d] >= '0' && l[d] <= '9')
				d++;
			if (l[i - 1] == ' ' && d > i && d + 2 < len && l[d] == ':' && l[d + 1] == ' ' &&
			    l[d + 2] == 'R') {
				len = i;
				break;
			}
		}
		while (len && l[len - 1] == ' ')
			len--;
		if (len && strncmp(l, "from ", 5) != 0) {
			memcpy(o, l, len);
			o += len;
			*o++ = '\n';
		}
		l += e ? (size_t)(e - l) + 1 : strlen(l);
	}
	*o = 0;
	return fd;
}

static void straight_line(void)
{
	struct bpf_insn p[] = {
		MOV_X(6, 1),
		MOV_K(0, 0),
		INSN(BPF_STX | BPF_MEM | BPF_DW, 10, 0, -8, 0),
		CALL(BPF_FUNC_ktime_get_ns),
		INSN(BPF_LDX | BPF_MEM | BPF_DW, 1, 10, -8, 0),
		INSN(BPF_ALU | BPF_ADD | BPF_K, 1, 0, 0, -3),
		MOV_K(0, 1),
		EXIT_INSN,
	};
	/* Linux's pop_log: at log_level 1 the walk of a program that passes is not kept */
	static const char want[] = "processed 8 insns (limit 1000000) max_states_per_insn 0 "
				   "total_states 0 peak_states 0 mark_read 0\n";
	int err;

	if (load(p, N_INSNS(p), &err) < 0) {
		tap_fail("a straight-line program loads", "errno %d: %s", err, log_buf);
		return;
	}
	tap_check(strcmp(log_buf, want) == 0,
		  "log_level 1, a program that passes: its statistics alone", "log:\n%s", log_buf);
	/* level 2 keeps every line: the first four instructions, in order */
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	a.insns = (uintptr_t)p;
	a.insn_cnt = N_INSNS(p);
	a.license = (uintptr_t) "GPL";
	a.log_level = 2;
	a.log_buf = (uintptr_t)log_buf;
	a.log_size = sizeof(log_buf);
	int fd = (int)sys_bpf(BPF_PROG_LOAD, &a);
	const char *l0 = strstr(log_buf, "\n0: (bf) r6 = r1"), *l1 = strstr(log_buf, "\n1: (b7) r0 = 0"),
		   *l2 = strstr(log_buf, "\n2: (7b) *(u64 *)(r10 -8) = r0"),
		   *l3 = strstr(log_buf, "\n3: (85) call bpf_ktime_get_ns#5"),
		   *l5 = strstr(log_buf, "\n5: (04) w1 += -3");

	tap_check(fd >= 0 && l0 && l1 > l0 && l2 > l1 && l3 > l2 && l5 > l3,
		  "log_level 2: every instruction's line, in order", "fd %d, log:\n%s", fd, log_buf);
	if (fd >= 0)
		close(fd);
}

static void poisoned_call(void)
{
	/* what libbpf writes for a CO-RE relocation it could not resolve */
	struct bpf_insn p[] = { MOV_K(0, 0), CALL(195896080), EXIT_INSN };
	static const char want[] = "0: R1=ctx(off=0,imm=0) R10=fp0\n"
				   "0: (b7) r0 = 0\n"
				   "1: (85) call unknown#195896080\n"
				   "invalid func unknown#195896080\n";
	int err;

	load(p, N_INSNS(p), &err);
	tap_check(err == EINVAL, "a call to a helper id that does not exist: EINVAL", "errno %d", err);
	tap_check(strncmp(insn_lines, want, strlen(want)) == 0,
		  "its log names the instruction before the reason (libbpf's CO-RE fixup reads it)",
		  "log:\n%s", log_buf);
}

static void unknown_for_type(void)
{
	/* a helper that exists, but not for perf_event programs */
	struct bpf_insn p[] = { MOV_K(0, 0), CALL(BPF_FUNC_skb_load_bytes), EXIT_INSN };
	static const char want[] = "0: R1=ctx(off=0,imm=0) R10=fp0\n"
				   "0: (b7) r0 = 0\n"
				   "1: (85) call bpf_skb_load_bytes#26\n"
				   "unknown func bpf_skb_load_bytes#26\n";
	int err;

	load(p, N_INSNS(p), &err);
	tap_check(err == EINVAL, "a helper of another program type: EINVAL", "errno %d", err);
	tap_check(strncmp(insn_lines, want, strlen(want)) == 0, "its log line names the helper",
		  "log:\n%s", log_buf);
}

static void map_and_branch(void)
{
	int map = bpf_map_new(BPF_MAP_TYPE_ARRAY, 4, 8, 1, 0);
	struct bpf_insn p[] = {
		INSN(BPF_ST | BPF_MEM | BPF_W, 10, 0, -4, 0),
		MOV_X(2, 10),
		ADD_K(2, -4),
		LD_MAP(1, map),
		CALL(BPF_FUNC_map_lookup_elem),
		JEQ_K(0, 0, 1),
		INSN(BPF_STX | BPF_ATOMIC | BPF_DW, 0, 6, 0, BPF_ADD),
		RET0,
	};
	static const char want_head[] = "0: R1=ctx(off=0,imm=0) R10=fp0\n"
					"0: (62) *(u32 *)(r10 -4) = 0\n"
					"1: (bf) r2 = r10\n"
					"2: (07) r2 += -4\n"
					"3: (18) r1 = 0x";
	static const char want_tail[] = "\n5: (85) call bpf_map_lookup_elem#1\n"
					"6: (15) if r0 == 0x0 goto pc+1\n"
					"7: (db) lock *(u64 *)(r0 +0) += r6\n"
					"R6 !read_ok\n";
	int err;

	if (map < 0) {
		tap_fail("an array map", "errno %d", errno);
		return;
	}
	load(p, N_INSNS(p), &err);
	tap_check(err == EACCES, "an atomic add of an unset register: EACCES", "errno %d", err);
	/* the map's address is the kernel's: its 16 hex digits are not compared */
	const char *tail = strchr(insn_lines + strlen(want_head) - 1, '\n');

	tap_check(strncmp(insn_lines, want_head, strlen(want_head)) == 0 && tail &&
			  strncmp(tail, want_tail, strlen(want_tail)) == 0,
		  "a map load, a lookup, a branch and an atomic add, as Linux writes them",
		  "log:\n%s", log_buf);
	close(map);
}

static void failing_branch(void)
{
	/* the fall-through path passes, the jump's path fails: only the path to the failure is
	 * in the log, from the start through the branch to the reason */
	struct bpf_insn p[] = {
		CALL(BPF_FUNC_get_prandom_u32),
		JEQ_K(0, 0, 2),
		MOV_K(0, 0),
		EXIT_INSN,
		MOV_X(0, 6),
		EXIT_INSN,
	};
	static const char want[] = "0: R1=ctx(off=0,imm=0) R10=fp0\n"
				   "0: (85) call bpf_get_prandom_u32#7\n"
				   "1: (15) if r0 == 0x0 goto pc+2\n"
				   "4: (bf) r0 = r6\n"
				   "R6 !read_ok\n"
				   "processed 5 insns (limit 1000000) ";
	int err;

	load(p, N_INSNS(p), &err);
	tap_check(err == EACCES, "a branch that reads an unset register: EACCES", "errno %d", err);
	tap_check(strncmp(insn_lines, want, strlen(want)) == 0,
		  "its log: the failing path alone, the passing one taken back",
		  "log:\n%s", log_buf);
}

int main(void)
{
	tap_init("t_bpf_vlog", 30);
	straight_line();
	poisoned_call();
	unknown_for_type();
	map_and_branch();
	failing_branch();
	return tap_done();
}
