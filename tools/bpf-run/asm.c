/*
 * asm.c - assembler for the bpf_conformance text syntax (the `-- asm` section of a `.data` file),
 * for the host tool bpf-run.  Two passes: label slots, then encoding to struct bpf_insn.
 *
 * Syntax: `mov %r0, 1`, `add32 %r0, %r1`, `ldxw %r0, [%r1+2]`, `stdw [%r10-8], 0xab`,
 * `lddw %r0, 0x1122334455667788`, `jne %r1, 5, label`, `ja32 L1`, `call 5`, `call %r2`,
 * `call local func1`, `lock [fetch] add[32] [%r10-8], %r1`, `lock xchg`, `lock cmpxchg`,
 * sdiv/smod, movsx{8,16,32}{32,64}, ldxs{b,h,w}, be/le/bswap/swap{16,32,64}, neg, `name:`.
 * Host-only (libc); not part of the kernel.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/bpf.h>

#include "bpf-run.h"

#define MAX_LABELS 256

struct label {
	char name[64];
	int slot;
};

struct asm_state {
	struct label labels[MAX_LABELS];
	int nlabels;
	int exits[1024]; /* slots of exit instructions */
	int nexits;
	char *err;
	size_t errlen;
};

static int fail(struct asm_state *st, int line, const char *what, const char *text)
{
	snprintf(st->err, st->errlen, "line %d: %s: %s", line, what, text);
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

static int parse_num(const char *s, int64_t *out)
{
	char *end;
	int neg = 0;
	uint64_t v;

	s = trim((char *)s);
	if (*s == '+')
		s++;
	else if (*s == '-') {
		neg = 1;
		s++;
	}
	if (!isdigit((unsigned char)*s))
		return -1;
	v = strtoull(s, &end, 0);
	if (*trim(end))
		return -1;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

static int parse_reg(const char *s, uint8_t *r)
{
	char *end;
	long v;

	s = trim((char *)s);
	if (s[0] != '%' || s[1] != 'r')
		return -1;
	v = strtol(s + 2, &end, 10);
	if (end == s + 2 || *trim(end) || v < 0 || v > 10)
		return -1;
	*r = (uint8_t)v;
	return 0;
}

/* [%rN+off] */
static int parse_mem(const char *s, uint8_t *r, int16_t *off)
{
	char buf[64], *p;
	int64_t o = 0;

	s = trim((char *)s);
	if (*s != '[' || strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s + 1);
	p = strchr(buf, ']');
	if (!p)
		return -1;
	*p = 0;
	p = strpbrk(buf, "+-");
	if (p) {
		if (parse_num(p, &o))
			return -1;
		*p = 0;
	}
	*off = (int16_t)o;
	return parse_reg(buf, r);
}

/* struct bpf_insn's registers are bit-fields: parse through a temporary. */
static int reg_dst(struct bpf_insn *in, const char *s)
{
	uint8_t r;

	if (parse_reg(s, &r))
		return -1;
	in->dst_reg = r;
	return 0;
}

static int reg_src(struct bpf_insn *in, const char *s)
{
	uint8_t r;

	if (parse_reg(s, &r))
		return -1;
	in->src_reg = r;
	return 0;
}

static int mem_dst(struct bpf_insn *in, const char *s)
{
	uint8_t r;

	if (parse_mem(s, &r, &in->off))
		return -1;
	in->dst_reg = r;
	return 0;
}

static int mem_src(struct bpf_insn *in, const char *s)
{
	uint8_t r;

	if (parse_mem(s, &r, &in->off))
		return -1;
	in->src_reg = r;
	return 0;
}

static int find_label(struct asm_state *st, const char *name)
{
	for (int i = 0; i < st->nlabels; i++)
		if (!strcmp(st->labels[i].name, name))
			return st->labels[i].slot;
	return -1;
}

/* The upstream assembler resolves an undefined label `exit` to the program's first exit. */
static int next_exit(struct asm_state *st, int slot)
{
	(void)slot;
	return st->nexits ? st->exits[0] : -1;
}

/* A jump target: a label or a relative slot offset. */
static int parse_target(struct asm_state *st, const char *s, int slot, int64_t *off)
{
	int t;

	s = trim((char *)s);
	if (!parse_num(s, off))
		return 0;
	t = find_label(st, s);
	if (t < 0 && !strcmp(s, "exit"))
		t = next_exit(st, slot);
	if (t < 0)
		return -1;
	*off = t - (slot + 1);
	return 0;
}

struct opname {
	const char *name;
	uint8_t op;
};

static const struct opname alu_ops[] = {
	{ "add", BPF_ADD }, { "sub", BPF_SUB }, { "mul", BPF_MUL }, { "div", BPF_DIV },
	{ "or", BPF_OR },   { "and", BPF_AND }, { "lsh", BPF_LSH }, { "rsh", BPF_RSH },
	{ "mod", BPF_MOD }, { "xor", BPF_XOR }, { "mov", BPF_MOV }, { "arsh", BPF_ARSH },
	{ "sdiv", BPF_DIV }, { "smod", BPF_MOD }, { NULL, 0 },
};
static const struct opname jmp_ops[] = {
	{ "jeq", BPF_JEQ },   { "jgt", BPF_JGT },   { "jge", BPF_JGE },   { "jlt", BPF_JLT },
	{ "jle", BPF_JLE },   { "jset", BPF_JSET }, { "jne", BPF_JNE },   { "jsgt", BPF_JSGT },
	{ "jsge", BPF_JSGE }, { "jslt", BPF_JSLT }, { "jsle", BPF_JSLE }, { NULL, 0 },
};

static int lookup_op(const struct opname *t, const char *m, size_t len, uint8_t *op)
{
	for (; t->name; t++)
		if (strlen(t->name) == len && !strncmp(t->name, m, len)) {
			*op = t->op;
			return 0;
		}
	return -1;
}

static int size_code(const char *s, uint8_t *code)
{
	if (!strcmp(s, "b"))
		*code = BPF_B;
	else if (!strcmp(s, "h"))
		*code = BPF_H;
	else if (!strcmp(s, "w"))
		*code = BPF_W;
	else if (!strcmp(s, "dw"))
		*code = BPF_DW;
	else
		return -1;
	return 0;
}

static int split_args(char *s, char **args, int max)
{
	int n = 0;

	s = trim(s);
	if (!*s)
		return 0;
	while (n < max) {
		char *c = strchr(s, ',');

		if (c)
			*c = 0;
		args[n++] = trim(s);
		if (!c)
			break;
		s = c + 1;
	}
	return n;
}

static int encode_atomic(struct asm_state *st, int line, char *rest, struct bpf_insn *in)
{
	char *args[3], word[32];
	int fetch = 0, n, imm;
	size_t len;

	if (!strncmp(rest, "fetch ", 6)) {
		fetch = BPF_FETCH;
		rest = trim(rest + 6);
	}
	len = strcspn(rest, " \t");
	if (len >= sizeof(word))
		return fail(st, line, "bad atomic", rest);
	memcpy(word, rest, len);
	word[len] = 0;
	in->code = BPF_STX | BPF_ATOMIC | BPF_DW;
	if (len > 2 && !strcmp(word + len - 2, "32")) {
		in->code = BPF_STX | BPF_ATOMIC | BPF_W;
		word[len - 2] = 0;
	}
	if (!strcmp(word, "add"))
		imm = BPF_ADD | fetch;
	else if (!strcmp(word, "and"))
		imm = BPF_AND | fetch;
	else if (!strcmp(word, "or"))
		imm = BPF_OR | fetch;
	else if (!strcmp(word, "xor"))
		imm = BPF_XOR | fetch;
	else if (!strcmp(word, "xchg"))
		imm = BPF_XCHG;
	else if (!strcmp(word, "cmpxchg"))
		imm = BPF_CMPXCHG;
	else
		return fail(st, line, "bad atomic", word);
	in->imm = imm;
	n = split_args(rest + len, args, 3);
	if (n != 2 || mem_dst(in, args[0]) || reg_src(in, args[1]))
		return fail(st, line, "bad atomic operands", rest);
	return 1;
}

/* Encode one statement at slot; returns slots used (1 or 2) or -1. */
static int encode(struct asm_state *st, int line, char *text, int slot, struct bpf_insn *in)
{
	char m[32], *rest, *args[4];
	size_t ml = strcspn(text, " \t");
	int n, is32 = 0;
	int64_t v;
	uint8_t op;

	if (ml >= sizeof(m))
		return fail(st, line, "bad mnemonic", text);
	memcpy(m, text, ml);
	m[ml] = 0;
	rest = trim(text + ml);
	memset(in, 0, 2 * sizeof(*in));

	if (!strcmp(m, "exit")) {
		in->code = BPF_JMP | BPF_EXIT;
		return 1;
	}
	if (!strcmp(m, "lock"))
		return encode_atomic(st, line, rest, in);
	if (!strcmp(m, "call")) {
		in->code = BPF_JMP | BPF_CALL;
		if (!strncmp(rest, "local ", 6)) {
			int t = find_label(st, trim(rest + 6));

			if (t < 0)
				return fail(st, line, "unknown label", rest);
			in->src_reg = BPF_PSEUDO_CALL;
			in->imm = t - (slot + 1);
			return 1;
		}
		if (rest[0] == '%') {
			in->code = BPF_JMP | BPF_CALL | BPF_X;
			if (reg_dst(in, rest))
				return fail(st, line, "bad register", rest);
			return 1;
		}
		if (parse_num(rest, &v))
			return fail(st, line, "bad call", rest);
		in->imm = (int32_t)v;
		return 1;
	}
	n = split_args(rest, args, 4);
	if (!strcmp(m, "lddw")) {
		if (n != 2 || reg_dst(in, args[0]) || parse_num(args[1], &v))
			return fail(st, line, "bad lddw", rest);
		in[0].code = BPF_LD | BPF_IMM | BPF_DW;
		in[0].imm = (int32_t)(uint32_t)v;
		in[1].imm = (int32_t)(uint32_t)((uint64_t)v >> 32);
		return 2;
	}
	if (!strncmp(m, "ldxs", 4) && !size_code(m + 4, &op)) {
		in->code = BPF_LDX | BPF_MEMSX | op;
		goto ldx;
	}
	if (!strncmp(m, "ldx", 3) && !size_code(m + 3, &op)) {
		in->code = BPF_LDX | BPF_MEM | op;
ldx:
		if (n != 2 || reg_dst(in, args[0]) || mem_src(in, args[1]))
			return fail(st, line, "bad load", rest);
		return 1;
	}
	if (!strncmp(m, "stx", 3) && !size_code(m + 3, &op)) {
		in->code = BPF_STX | BPF_MEM | op;
		if (n != 2 || mem_dst(in, args[0]) || reg_src(in, args[1]))
			return fail(st, line, "bad store", rest);
		return 1;
	}
	if (!strncmp(m, "st", 2) && !size_code(m + 2, &op)) {
		in->code = BPF_ST | BPF_MEM | op;
		if (n != 2 || mem_dst(in, args[0]) || parse_num(args[1], &v))
			return fail(st, line, "bad store", rest);
		in->imm = (int32_t)v;
		return 1;
	}
	if (!strcmp(m, "ja") || !strcmp(m, "ja32")) {
		if (n != 1 || parse_target(st, args[0], slot, &v))
			return fail(st, line, "bad jump", rest);
		if (m[2]) {
			in->code = BPF_JMP32 | BPF_JA;
			in->imm = (int32_t)v;
		} else {
			in->code = BPF_JMP | BPF_JA;
			in->off = (int16_t)v;
		}
		return 1;
	}
	/* Byte order: be/le convert, bswap and swap swap unconditionally (ALU64 END). */
	{
		static const char *const ends[] = { "le", "be", "bswap", "swap" };

		for (unsigned int i = 0; i < 4; i++) {
			size_t l = strlen(ends[i]);

			if (!strncmp(m, ends[i], l) && isdigit((unsigned char)m[l])) {
				if (n != 1 || reg_dst(in, args[0]))
					return fail(st, line, "bad byte swap", rest);
				in->imm = atoi(m + l);
				in->code = i == 0 ? (BPF_ALU | BPF_END | BPF_TO_LE) :
				  i == 1	  ? (BPF_ALU | BPF_END | BPF_TO_BE) :
						    (BPF_ALU64 | BPF_END);
				return 1;
			}
		}
	}
	ml = strlen(m);
	if (ml > 2 && !strcmp(m + ml - 2, "32")) {
		is32 = 1;
		ml -= 2;
	}
	if (!strncmp(m, "movsx", 5)) {
		/* movsx<from><to>: movsx832 = sign-extend 8 bits into 32, movsx3264 = 32 into 64 */
		const char *d = m + 5;
		size_t dl = strlen(d);
		char from[8] = { 0 };

		if (dl < 3 || dl - 2 >= sizeof(from))
			return fail(st, line, "bad movsx", m);
		memcpy(from, d, dl - 2);
		in->code = (!strcmp(d + dl - 2, "64") ? BPF_ALU64 : BPF_ALU) | BPF_MOV | BPF_X;
		in->off = (int16_t)atoi(from);
		if (n != 2 || reg_dst(in, args[0]) || reg_src(in, args[1]))
			return fail(st, line, "bad movsx", rest);
		return 1;
	}
	if (!strncmp(m, "neg", ml) && ml == 3) {
		in->code = (is32 ? BPF_ALU : BPF_ALU64) | BPF_NEG;
		if (n != 1 || reg_dst(in, args[0]))
			return fail(st, line, "bad neg", rest);
		return 1;
	}
	if (!lookup_op(alu_ops, m, ml, &op)) {
		in->code = (is32 ? BPF_ALU : BPF_ALU64) | op;
		if (m[0] == 's' && m[1] != 'u')
			in->off = 1; /* sdiv, smod */
		if (n != 2 || reg_dst(in, args[0]))
			return fail(st, line, "bad alu operands", rest);
		if (!reg_src(in, args[1]))
			in->code |= BPF_X;
		else if (!parse_num(args[1], &v))
			in->imm = (int32_t)v;
		else
			return fail(st, line, "bad alu source", rest);
		return 1;
	}
	if (!lookup_op(jmp_ops, m, ml, &op)) {
		in->code = (is32 ? BPF_JMP32 : BPF_JMP) | op;
		if (n != 3 || reg_dst(in, args[0]) || parse_target(st, args[2], slot, &v))
			return fail(st, line, "bad jump operands", rest);
		in->off = (int16_t)v;
		if (!reg_src(in, args[1]))
			in->code |= BPF_X;
		else if (!parse_num(args[1], &v))
			in->imm = (int32_t)v;
		else
			return fail(st, line, "bad jump source", rest);
		return 1;
	}
	return fail(st, line, "unknown mnemonic", m);
}

/* Statement text of a line without comment and label; label (if any) in *label. */
static char *statement(char *line, char **label)
{
	char *c = strchr(line, '#'), *s, *colon;

	if (c)
		*c = 0;
	s = trim(line);
	*label = NULL;
	colon = strchr(s, ':');
	if (colon && !strchr(s, '[') && !strchr(s, ' ')) {
		*colon = 0;
		*label = s;
		s = trim(colon + 1);
	} else if (colon && colon < s + strcspn(s, " \t[")) {
		*colon = 0;
		*label = s;
		s = trim(colon + 1);
	}
	return s;
}

int bpfrun_assemble(const char *text, struct bpf_insn **out, int *nslots, char *err, size_t errlen)
{
	struct asm_state st = { .err = err, .errlen = errlen };
	char *copy = strdup(text), *line, *save = NULL;
	int slot = 0, pass, cap = 0;
	struct bpf_insn *insns = NULL;

	if (!copy)
		return -1;
	for (pass = 0; pass < 2; pass++) {
		char *buf = strdup(copy);
		int lineno = 0;

		slot = 0;
		for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *label, *s = statement(line, &label);
			int used;

			lineno++;
			if (label && pass == 0) {
				if (st.nlabels == MAX_LABELS || strlen(label) >= 64)
					return free(buf), free(copy), fail(&st, lineno, "label", label);
				strcpy(st.labels[st.nlabels].name, label);
				st.labels[st.nlabels++].slot = slot;
			}
			if (!*s)
				continue;
			if (pass == 0) {
				if (!strcmp(s, "exit") && st.nexits < 1024)
					st.exits[st.nexits++] = slot;
				slot += !strncmp(s, "lddw", 4) ? 2 : 1;
				continue;
			}
			used = encode(&st, lineno, s, slot, &insns[slot]);
			if (used < 0) {
				free(buf);
				free(copy);
				free(insns);
				return -1;
			}
			slot += used;
		}
		free(buf);
		if (pass == 0) {
			cap = slot + 2;
			insns = calloc((size_t)cap, sizeof(*insns));
			if (!insns)
				return free(copy), -1;
		}
	}
	free(copy);
	*out = insns;
	*nslots = slot;
	return 0;
}
