/*
 * filter.c - tracefs's event filter language: "field op value" predicates joined by &&, ||,
 * ! and parentheses, parsed against an event's fields, and records matched against it.
 *
 * What it does: trace_filter_parse checks a filter string the way Linux 6.1 does, in the same
 * order (a first pass over quotes and parentheses, then left to right), so that a bad string
 * gets Linux's errno and its error (code and position, for the filter file's text); a good
 * one becomes a list of predicates in string order, each with where to go next when it is
 * true and when it is false (the next predicate to test, or the answer), so matching a
 * record walks forward once, without a stack.  Fields: the event's own, then the generic
 * cpu/CPU (the CPU the hit happens on) and comm/COMM (the current task's name), then the
 * common ones.  Integers compare as the field's type; strings (char[N], __data_loc char[],
 * comm) with ==, != and ~ (a glob: "*x", "x*", "*x*", or any pattern with ?, [..], \ or an
 * inner *; a leading ! inverts).
 *
 * "char *" fields (syscalls' path arguments) are pointers: as on Linux, FIELD compares the
 * string at a kernel address (a user one never matches, whatever the operator), and
 * FIELD.ustring the user string there (at most USTRING_BUF_SIZE, 1024 bytes; unreadable: no
 * match); ".ustring" after any other field changes nothing.
 *
 * What it does not do: the function event's "ip" filter of ftrace:function.
 *
 * ABI: Linux 6.1 kernel/trace/trace_events_filter.c: calc_stack's errors are returned as
 * -1 (too few '(', EPERM), -2 (too many '(', ENOENT), -3 (a missing quote, ESRCH); a
 * predicate that does not start with a name, and anything but &&, ||, ')' or the end after a
 * predicate, are -1 (EPERM); the predicate errors are EINVAL; no predicate at all and a
 * trailing && or || are EINVAL.  Numbers as kstrtoll/kstrtoull with base 0 (signedness of the
 * field), at most 23 characters; quoted strings at most 255.  regex_match_end matches the end
 * of a fixed-size field's whole buffer (its last byte is taken as the terminator), as 6.1 does.
 * Portable: built into the kernel and into host tests.
 */
#include <kern/errno.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include <kern/trace.h>

enum { OP_GLOB, OP_NE, OP_EQ, OP_LE, OP_LT, OP_GE, OP_GT, OP_BAND, NR_OPS };
/* two-character operators before their one-character prefixes */
static const char *const op_text[NR_OPS] = { "~", "!=", "==", "<=", "<", ">=", ">", "&" };

enum pred_kind { K_NUM, K_CPU, K_COMM, K_SSTR, K_DSTR, K_PSTR, K_USTR };
enum match_kind { M_FULL, M_FRONT, M_MIDDLE, M_END, M_GLOB };

struct pred {
	uint8_t kind, op, size, is_signed, match, inv;
	uint16_t offset;
	uint16_t plen; /* pattern length */
	uint64_t val;
	char *pat;
};

#define GO_FALSE (-1)
#define GO_TRUE (-2)

struct trace_filter {
	int n;
	struct pred *preds;
	int32_t (*go)[2]; /* after predicate i gave r: the next predicate, GO_TRUE or GO_FALSE */
};

#define MAX_STR 256 /* MAX_FILTER_STR_VAL */
#define MAX_NUM 24  /* num_buf */

static const struct trace_field common_fields[] = {
	{ "unsigned short common_type", "common_type", 0, 2, 0 },
	{ "unsigned char common_flags", "common_flags", 2, 1, 0 },
	{ "unsigned char common_preempt_count", "common_preempt_count", 3, 1, 0 },
	{ "int common_pid", "common_pid", 4, 4, 1 },
};

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alnum(char c)
{
	return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool has(const char *s, const char *sub)
{
	size_t n = strlen(sub);

	for (; *s; s++)
		if (!strncmp(s, sub, n))
			return true;
	return false;
}

/* filter_assign_type: how a field's declaration compares */
static enum pred_kind kind_of(const struct trace_field *f)
{
	if (has(f->decl, "__data_loc") && has(f->decl, "char"))
		return K_DSTR;
	if (strchr(f->decl, '[') && has(f->decl, "char"))
		return K_SSTR;
	if (!strncmp(f->decl, "char *", 6) || !strncmp(f->decl, "const char *", 12))
		return K_PSTR;
	return K_NUM;
}

struct parser {
	const char *s;
	const struct trace_field *fields;
	unsigned int nfields;
	struct trace_filter_err *err;
	struct pred *preds;
	int np, maxp;
	/* the expression tree; a leaf names its predicate */
	struct node {
		int32_t left, right, parent, pred;
		uint8_t type; /* 0 leaf, 1 and, 2 or */
		uint8_t neg;
	} *nodes;
	int nn;
	int32_t *vals; /* operand stack: nodes */
	int nv;
	int32_t *ops; /* operator stack: OPEN|saved invert, AND, OR */
	int no;
};

enum { S_OPEN = 0x10, S_OR = 1, S_AND = 2 }; /* the value is the precedence */

static int fail(struct parser *p, int err, int code, int pos)
{
	p->err->code = code;
	p->err->pos = pos;
	return err;
}

static const struct trace_field *find_field(struct parser *p, const char *name, size_t len,
					    enum pred_kind *kind)
{
	static const struct trace_field generic[] = {
		{ "int CPU", "CPU", 0, 4, 1 },
		{ "int cpu", "cpu", 0, 4, 1 },
		{ "char * COMM", "COMM", 0, 16, 0 },
		{ "char * comm", "comm", 0, 16, 0 },
	};

	for (unsigned int i = 0; i < p->nfields; i++)
		if (strlen(p->fields[i].name) == len && !memcmp(p->fields[i].name, name, len)) {
			*kind = kind_of(&p->fields[i]);
			return &p->fields[i];
		}
	for (unsigned int i = 0; i < 4; i++)
		if (strlen(generic[i].name) == len && !memcmp(generic[i].name, name, len)) {
			*kind = i < 2 ? K_CPU : K_COMM;
			return &generic[i];
		}
	for (unsigned int i = 0; i < 4; i++)
		if (strlen(common_fields[i].name) == len &&
		    !memcmp(common_fields[i].name, name, len)) {
			*kind = K_NUM;
			return &common_fields[i];
		}
	return NULL;
}

/* kstrtoull/kstrtoll with base 0 over the whole of s: 0, or -EINVAL / -ERANGE. */
static int parse_u64(const char *s, uint64_t *out)
{
	unsigned int base = 10;
	uint64_t v = 0;

	if (*s == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && s[2]) {
		base = 16;
		s += 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	if (!*s)
		return -EINVAL;
	for (; *s; s++) {
		unsigned int d;

		if (is_digit(*s))
			d = (unsigned int)(*s - '0');
		else if (*s >= 'a' && *s <= 'f')
			d = (unsigned int)(*s - 'a' + 10);
		else if (*s >= 'A' && *s <= 'F')
			d = (unsigned int)(*s - 'A' + 10);
		else
			return -EINVAL;
		if (d >= base)
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

static int parse_s64(const char *s, uint64_t *out)
{
	uint64_t v;
	int err;

	if (*s == '-') {
		err = parse_u64(s + 1, &v);
		if (err || v > (1ull << 63))
			return err ? err : -ERANGE;
		*out = -v;
		return 0;
	}
	err = parse_u64(s, &v);
	if (err || v > (uint64_t)INT64_MAX)
		return err ? err : -ERANGE;
	*out = v;
	return 0;
}

/* filter_parse_regex / filter_build_regex for ~: which match, and the pattern it uses. */
static void build_glob(struct pred *pr)
{
	char *pat = pr->pat;
	size_t len = pr->plen, i;
	unsigned int type = M_FULL;

	if (pat[0] == '!') {
		pr->inv = 1;
		pat++;
		len--;
	}
	if (!is_digit(pat[0])) {
		for (i = 0; i < len; i++) {
			if (pat[i] == '*') {
				if (!i) {
					type = M_END;
				} else if (i == len - 1) {
					type = type == M_END ? M_MIDDLE : M_FRONT;
					pat[i] = 0;
					break;
				} else {
					type = M_GLOB;
					break;
				}
			} else if (pat[i] == '[' || pat[i] == '?' || pat[i] == '\\') {
				type = M_GLOB;
				break;
			}
		}
		if (type != M_GLOB && pat[0] == '*')
			pat++;
	}
	pr->match = (uint8_t)type;
	pr->plen = (uint16_t)strlen(pat);
	memmove(pr->pat, pat, pr->plen + 1u);
}

/* parse_pred: one predicate at p->s + start; its length, or a negative errno. */
static int parse_pred(struct parser *p, int start, struct pred *pr)
{
	const char *str = p->s + start;
	int pos = start + 1, i = 0, s, op;
	enum pred_kind kind;
	const struct trace_field *f;

	while (is_space(str[i]))
		i++;
	s = i;
	while (is_alnum(str[i]) || str[i] == '_')
		i++;
	if (i == s)
		return -EPERM; /* Linux's bare -1: "Error: (0)" */
	int name_len = i - s;
	bool ustring = !strncmp(str + i, ".ustring", 8); /* FIELD.ustring: a user string */

	if (ustring)
		i += 8;
	f = find_field(p, str + s, (size_t)name_len, &kind);
	if (!f)
		return fail(p, -EINVAL, TRACE_FILT_FIELD_NOT_FOUND, pos + i);
	if (ustring && kind == K_PSTR)
		kind = K_USTR;
	while (is_space(str[i]))
		i++;
	for (op = 0; op < NR_OPS; op++)
		if (!strncmp(str + i, op_text[op], strlen(op_text[op])))
			break;
	if (op == NR_OPS)
		return fail(p, -EINVAL, TRACE_FILT_INVALID_OP, pos + i);
	i += (int)strlen(op_text[op]);
	while (is_space(str[i]))
		i++;
	s = i;
	bool is_str = kind == K_COMM || kind == K_SSTR || kind == K_DSTR || kind == K_PSTR ||
		      kind == K_USTR;

	pr->kind = (uint8_t)kind;
	pr->op = (uint8_t)op;
	pr->offset = f->offset;
	pr->size = (uint8_t)f->size;
	pr->is_signed = f->is_signed;
	if (str[i] == '\'' || str[i] == '"') {
		char q = str[i];

		if (op != OP_NE && op != OP_EQ && op != OP_GLOB)
			return fail(p, -EINVAL, TRACE_FILT_ILLEGAL_FIELD_OP, pos + i);
		if (!is_str)
			return fail(p, -EINVAL, TRACE_FILT_EXPECT_DIGIT, pos + i);
		for (i++; str[i] && str[i] != q; i++)
			;
		if (!str[i])
			return fail(p, -EINVAL, TRACE_FILT_MISSING_QUOTE, pos + i);
		s++;
		if (i - s >= MAX_STR)
			return fail(p, -EINVAL, TRACE_FILT_OPERAND_TOO_LONG, pos + i);
		pr->pat = ksvc_alloc((size_t)(i - s) + 1);
		if (!pr->pat)
			return -ENOMEM;
		memcpy(pr->pat, str + s, (size_t)(i - s));
		pr->plen = (uint16_t)(i - s);
		pr->inv = op == OP_NE;
		if (op == OP_GLOB)
			build_glob(pr);
		return i + 1;
	}
	if (is_digit(str[i]) || str[i] == '-') {
		char num[MAX_NUM];
		int err;

		if (is_str)
			return fail(p, -EINVAL, TRACE_FILT_EXPECT_STRING, pos + i);
		if (op == OP_GLOB)
			return fail(p, -EINVAL, TRACE_FILT_ILLEGAL_FIELD_OP, pos + i);
		if (str[i] == '-')
			i++;
		while (is_alnum(str[i]))
			i++;
		if (i - s >= MAX_NUM)
			return fail(p, -EINVAL, TRACE_FILT_OPERAND_TOO_LONG, pos + i);
		memcpy(num, str + s, (size_t)(i - s));
		num[i - s] = 0;
		err = f->is_signed ? parse_s64(num, &pr->val) : parse_u64(num, &pr->val);
		if (err)
			return fail(p, -EINVAL, TRACE_FILT_ILLEGAL_INTVAL, pos + s);
		pr->inv = op == OP_NE && kind != K_CPU;
		return i;
	}
	return fail(p, -EINVAL, TRACE_FILT_INVALID_VALUE, pos + i);
}

/* calc_stack: quotes and parentheses balance; the number of predicates (runs of other
 * characters between operators and parentheses) and of nesting levels. */
static int first_pass(struct parser *p, int *preds)
{
	const char *s = p->s;
	int open = 1, quote = 0, last_quote = 0, n = 0, i;
	bool in_pred = false;

	for (i = 0; s[i]; i++) {
		if (is_space(s[i]))
			continue;
		if (quote) {
			if (s[i] == quote)
				quote = 0;
			continue;
		}
		switch (s[i]) {
		case '\'':
		case '"':
			quote = s[i];
			last_quote = i;
			break;
		case '|':
		case '&':
			if (s[i + 1] != s[i])
				break;
			in_pred = false;
			continue;
		case '(':
			in_pred = false;
			open++;
			continue;
		case ')':
			in_pred = false;
			if (open == 1)
				return fail(p, -EPERM, TRACE_FILT_TOO_MANY_CLOSE, i);
			open--;
			continue;
		}
		if (!in_pred) {
			n++;
			in_pred = true;
		}
	}
	if (quote)
		return fail(p, -ESRCH, TRACE_FILT_MISSING_QUOTE, last_quote);
	if (open != 1) {
		/* the '(' left open: walk back to the outermost unclosed one */
		int level = open;

		for (i--; i > 0; i--) {
			if (quote) {
				if (s[i] == quote)
					quote = 0;
				continue;
			}
			if (s[i] == '(') {
				if (level == open)
					return fail(p, -ENOENT, TRACE_FILT_TOO_MANY_OPEN, i);
				level--;
			} else if (s[i] == ')') {
				level++;
			} else if (s[i] == '\'' || s[i] == '"') {
				quote = s[i];
			}
		}
		return fail(p, -ENOENT, TRACE_FILT_TOO_MANY_OPEN, 0);
	}
	*preds = n;
	return 0;
}

static int new_node(struct parser *p, int type, int32_t left, int32_t right)
{
	struct node *n = &p->nodes[p->nn];

	n->type = (uint8_t)type;
	n->left = left;
	n->right = right;
	n->parent = -1;
	if (left >= 0)
		p->nodes[left].parent = p->nn;
	if (right >= 0)
		p->nodes[right].parent = p->nn;
	return p->nn++;
}

/* Apply the operators on the stack down to (not past) an OPEN whose precedence is >= min. */
static void reduce(struct parser *p, int min)
{
	while (p->no && !(p->ops[p->no - 1] & S_OPEN) && p->ops[p->no - 1] >= min) {
		int type = p->ops[--p->no];
		int32_t r = p->vals[--p->nv], l = p->vals[--p->nv];

		p->vals[p->nv++] = new_node(p, type, l, r);
	}
}

/* The second half of predicate_parse: after a predicate, the operator or ')' that follows. */
static int after_pred(struct parser *p, int *ip, bool *end)
{
	const char *s = p->s;
	int i = *ip;

	for (;;) {
		char c = s[i++];

		if (is_space(c))
			continue;
		if ((c == '&' || c == '|') && s[i] == c) {
			i++;
			reduce(p, c == '&' ? S_AND : S_OR);
			p->ops[p->no++] = c == '&' ? S_AND : S_OR;
			*ip = i;
			return 0;
		}
		if (c && c != ')')
			return fail(p, -EPERM, TRACE_FILT_TOO_MANY_PREDS, i - 1);
		reduce(p, S_OR);
		if (!c) {
			*end = true;
			*ip = i;
			return 0;
		}
		if (!p->no || !(p->ops[p->no - 1] & S_OPEN))
			return fail(p, -EPERM, TRACE_FILT_TOO_MANY_CLOSE, i);
		p->nodes[p->vals[p->nv - 1]].neg ^= (uint8_t)(p->ops[--p->no] & 1);
	}
}

/* Where to go when leaf yields r: the next predicate to test, or the answer. */
static int32_t next_of(const struct parser *p, int32_t leaf, int r)
{
	int32_t cur = leaf;
	int v = r ^ p->nodes[leaf].neg;

	for (;;) {
		int32_t up = p->nodes[cur].parent;

		if (up < 0)
			return v ? GO_TRUE : GO_FALSE;
		const struct node *u = &p->nodes[up];

		if (u->left == cur && ((u->type == S_AND && v) || (u->type == S_OR && !v))) {
			int32_t n = u->right;

			while (p->nodes[n].type)
				n = p->nodes[n].left;
			return p->nodes[n].pred;
		}
		v ^= u->neg;
		cur = up;
	}
}

static int parse(struct parser *p)
{
	const char *s = p->s;
	int i = 0, invert = 0, err;
	bool end = false;

	while (!end && s[i]) {
		char c = s[i];

		if (is_space(c)) {
			i++;
			continue;
		}
		if (c == '(') {
			p->ops[p->no++] = S_OPEN | invert;
			invert = 0;
			i++;
			continue;
		}
		if (c == '!' && s[i + 1] != '=' && s[i + 1] != '~') {
			invert ^= 1;
			i++;
			continue;
		}
		if (p->np >= p->maxp)
			return fail(p, -EPERM, TRACE_FILT_TOO_MANY_PREDS, i);
		int len = parse_pred(p, i, &p->preds[p->np]);

		if (len < 0)
			return len;
		p->nodes[p->nn].neg = (uint8_t)invert;
		p->nodes[p->nn].pred = p->np;
		p->vals[p->nv++] = new_node(p, 0, -1, -1);
		p->np++;
		invert = 0;
		i += len;
		err = after_pred(p, &i, &end);
		if (err)
			return err;
	}
	if (!p->np)
		return fail(p, -EINVAL, TRACE_FILT_NO_FILTER, i);
	if (!end) /* the string ended after && or || */
		return fail(p, -EINVAL, TRACE_FILT_INVALID_FILTER, i);
	return 0;
}

void trace_filter_free(struct trace_filter *f)
{
	if (!f)
		return;
	for (int i = 0; i < f->n; i++)
		ksvc_free(f->preds[i].pat);
	ksvc_free(f->preds);
	ksvc_free(f->go);
	ksvc_free(f);
}

int trace_filter_parse(const struct trace_field *fields, unsigned int nfields, const char *str,
		       struct trace_filter **out, struct trace_filter_err *err)
{
	struct parser p = { .s = str, .fields = fields, .nfields = nfields, .err = err };
	struct trace_filter *f = NULL;
	size_t len = strlen(str);
	int ret;

	err->code = TRACE_FILT_NONE;
	err->pos = 0;
	*out = NULL;
	ret = first_pass(&p, &p.maxp);
	if (ret)
		return ret;
	if (!p.maxp)
		return -EINVAL;
	p.preds = ksvc_alloc(sizeof(*p.preds) * (size_t)p.maxp);
	p.nodes = ksvc_alloc(sizeof(*p.nodes) * 2 * (size_t)p.maxp);
	p.vals = ksvc_alloc(sizeof(*p.vals) * (size_t)p.maxp);
	p.ops = ksvc_alloc(sizeof(*p.ops) * (len + 1));
	f = ksvc_alloc(sizeof(*f));
	ret = -ENOMEM;
	if (!p.preds || !p.nodes || !p.vals || !p.ops || !f)
		goto out;
	ret = parse(&p);
	f->n = p.np;
	f->preds = p.preds;
	p.preds = NULL;
	if (ret)
		goto out;
	f->go = ksvc_alloc(sizeof(*f->go) * (size_t)f->n);
	ret = -ENOMEM;
	if (!f->go)
		goto out;
	for (int32_t i = 0; i < p.nn; i++) {
		if (p.nodes[i].type)
			continue;
		f->go[p.nodes[i].pred][0] = next_of(&p, i, 0);
		f->go[p.nodes[i].pred][1] = next_of(&p, i, 1);
	}
	*out = f;
	f = NULL;
	ret = 0;
out:
	if (p.preds) {
		for (int i = 0; i < p.np; i++)
			ksvc_free(p.preds[i].pat);
		ksvc_free(p.preds);
	}
	trace_filter_free(f);
	ksvc_free(p.nodes);
	ksvc_free(p.vals);
	ksvc_free(p.ops);
	return ret;
}

/* ---- matching ---- */

/* lib/glob.c's glob_match over str (at most len bytes, or to its NUL): * any run, ? any one
 * character, [..] a class (ranges a-z, a leading ! inverts, a first ] is literal, an
 * unterminated [ is literal), \ quotes the next character. */
static int class_match(const char *pat, char c, const char **after)
{
	bool inv = *pat == '!', m = false;
	const char *p = pat + inv;
	char a = *p++;

	do {
		char b = a;

		if (!a)
			return -1;
		if (p[0] == '-' && p[1] && p[1] != ']') {
			b = p[1];
			p += 2;
		}
		if (a <= c && c <= b)
			m = true;
	} while ((a = *p++) != ']');
	*after = p;
	return m != inv;
}

static bool glob(const char *pat, const char *str, size_t len)
{
	const char *back_pat = NULL;
	size_t back = 0, si = 0;

	for (;;) {
		char c = si < len ? str[si] : 0;
		char d = *pat;
		const char *next = pat + 1;
		bool ok;

		if (d == '*') {
			if (!pat[1])
				return true;
			back_pat = pat + 1;
			back = si;
			pat++;
			continue;
		}
		if (!c) {
			if (!d)
				return true;
			return false; /* a star cannot take more of an ended string */
		}
		if (d == '?') {
			ok = true;
		} else if (d == '[') {
			int r = class_match(pat + 1, c, &next);

			if (r < 0) {
				next = pat + 1;
				r = c == '[';
			}
			ok = r;
		} else if (d == '\\' && pat[1]) {
			ok = c == pat[1];
			next = pat + 2;
		} else {
			ok = d && c == d;
		}
		if (ok) {
			pat = next;
			si++;
			continue;
		}
		if (!back_pat)
			return false;
		back++;
		si = back;
		pat = back_pat;
	}
}

static bool str_match(const struct pred *pr, const char *str, size_t len)
{
	size_t pl = pr->plen;

	if (!len) /* an empty __data_loc string: "" (regex_match_end: never, its len - 1 < 0) */
		return pr->match == M_GLOB ? glob(pr->pat, "", 0) : pr->match != M_END && !pl;
	switch (pr->match) {
	case M_FULL:
		return !strncmp(str, pr->pat, len);
	case M_FRONT:
		return len >= pl && !strncmp(str, pr->pat, pl);
	case M_MIDDLE:
		for (size_t i = 0; i + pl <= len; i++)
			if (!memcmp(str + i, pr->pat, pl))
				return true;
		return false;
	case M_END:
		return len >= 1 && len - 1 >= pl && !memcmp(str + len - 1 - pl, pr->pat, pl);
	default:
		return glob(pr->pat, str, len);
	}
}

#define CMP(T)                                                                                     \
	do {                                                                                       \
		T a, b = (T)pr->val;                                                               \
		memcpy(&a, field, sizeof(a));                                                      \
		switch (pr->op) {                                                                  \
		case OP_LT: return a < b;                                                          \
		case OP_LE: return a <= b;                                                         \
		case OP_GT: return a > b;                                                          \
		case OP_GE: return a >= b;                                                         \
		case OP_BAND: return (a & b) != 0;                                                 \
		default: return (a == b) ^ pr->inv;                                                \
		}                                                                                  \
	} while (0)

static bool num_match(const struct pred *pr, const uint8_t *field)
{
	switch (pr->size * 2 + pr->is_signed) {
	case 2: CMP(uint8_t);
	case 3: CMP(int8_t);
	case 4: CMP(uint16_t);
	case 5: CMP(int16_t);
	case 8: CMP(uint32_t);
	case 9: CMP(int32_t);
	case 16: CMP(uint64_t);
	case 17: CMP(int64_t);
	default: return false; /* select_comparison_fn has no function for other sizes */
	}
}

static bool cpu_match(const struct pred *pr, int cpu)
{
	int v = (int)pr->val;

	switch (pr->op) {
	case OP_EQ: return cpu == v;
	case OP_NE: return cpu != v;
	case OP_LT: return cpu < v;
	case OP_LE: return cpu <= v;
	case OP_GT: return cpu > v;
	case OP_GE: return cpu >= v;
	default: return false;
	}
}

#define USTRING_BUF_SIZE 1024

/* A char * field's string (user: a user address, else a kernel one) into buf, NUL-terminated
 * within USTRING_BUF_SIZE: its length with the NUL, or 0 when it cannot be read. */
static size_t pointed_string(const uint8_t *rec, uint32_t size, const struct pred *pr,
			     bool user, char buf[USTRING_BUF_SIZE])
{
	uint64_t ptr;
	size_t n = 0;

	if ((uint32_t)pr->offset + 8 > size)
		return 0;
	memcpy(&ptr, rec + pr->offset, 8);
	for (;;) {
		if (ksvc_read_nofault(&buf[n], (const void *)(uintptr_t)(ptr + n), 1, user))
			return 0;
		if (!buf[n] || n == USTRING_BUF_SIZE - 1)
			break;
		n++;
	}
	buf[n] = 0;
	return n + 1;
}

static bool pstr_match(const struct pred *pr, const uint8_t *rec, uint32_t size, bool user)
{
	char buf[USTRING_BUF_SIZE];
	size_t len = pointed_string(rec, size, pr, user, buf);

	return len && (str_match(pr, buf, len) ^ pr->inv); /* unreadable: false, even for != */
}

static bool pred_match(const struct pred *pr, const uint8_t *rec, uint32_t size,
		       const char *comm, unsigned int cpu)
{
	switch (pr->kind) {
	case K_NUM:
		return (uint32_t)pr->offset + pr->size <= size && num_match(pr, rec + pr->offset);
	case K_CPU:
		return cpu_match(pr, (int)cpu);
	case K_COMM:
		return str_match(pr, comm, 16) ^ pr->inv;
	case K_SSTR:
		if ((uint32_t)pr->offset + pr->size > size)
			return false;
		return str_match(pr, (const char *)rec + pr->offset, pr->size) ^ pr->inv;
	case K_DSTR: {
		uint32_t item;

		if ((uint32_t)pr->offset + 4 > size)
			return false;
		memcpy(&item, rec + pr->offset, 4);
		if ((item & 0xffff) + (item >> 16) > size)
			return false;
		return str_match(pr, (const char *)rec + (item & 0xffff), item >> 16) ^ pr->inv;
	}
	case K_PSTR:
		return pstr_match(pr, rec, size, false);
	default:
		return pstr_match(pr, rec, size, true);
	}
}

bool trace_filter_match(const struct trace_filter *f, const void *rec, uint32_t size,
			const char comm[16], unsigned int cpu)
{
	int32_t i = 0;

	if (!f)
		return true;
	for (;;) {
		i = f->go[i][pred_match(&f->preds[i], rec, size, comm, cpu)];
		if (i < 0)
			return i == GO_TRUE;
	}
}

/* ---- the filter file's text after a failed write (append_filter_err) ---- */

static const char *const err_text[] = {
	[TRACE_FILT_NONE] = "No error",
	[TRACE_FILT_INVALID_OP] = "Invalid operator",
	[TRACE_FILT_TOO_MANY_OPEN] = "Too many '('",
	[TRACE_FILT_TOO_MANY_CLOSE] = "Too few '('",
	[TRACE_FILT_MISSING_QUOTE] = "Missing matching quote",
	[TRACE_FILT_OPERAND_TOO_LONG] = "Operand too long",
	[TRACE_FILT_EXPECT_STRING] = "Expecting string field",
	[TRACE_FILT_EXPECT_DIGIT] = "Expecting numeric field",
	[TRACE_FILT_ILLEGAL_FIELD_OP] = "Illegal operation for field type",
	[TRACE_FILT_FIELD_NOT_FOUND] = "Field not found",
	[TRACE_FILT_ILLEGAL_INTVAL] = "Illegal integer value",
	[TRACE_FILT_BAD_SUBSYS_FILTER] = "Couldn't find or set field in one of a subsystem's events",
	[TRACE_FILT_TOO_MANY_PREDS] = "Too many terms in predicate expression",
	[TRACE_FILT_INVALID_FILTER] = "Meaningless filter expression",
	[TRACE_FILT_INVALID_VALUE] = "Invalid value (did you forget quotes)?",
	[TRACE_FILT_NO_FILTER] = "No filter found",
};

static size_t put(char *buf, size_t size, size_t at, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++, at++)
		if (at + 1 < size)
			buf[at] = s[i];
	if (size)
		buf[at + 1 < size ? at : size - 1] = 0;
	return at;
}

size_t trace_filter_err_text(char *buf, size_t size, const char *str,
			     const struct trace_filter_err *err)
{
	size_t n = put(buf, size, 0, str, strlen(str));
	size_t len = strlen(str);
	int pos = err->pos;

	if (err->code > 0 && (size_t)err->code < sizeof(err_text) / sizeof(err_text[0])) {
		const char *t = err_text[err->code];

		if ((size_t)pos > len)
			pos = (int)len;
		n = put(buf, size, n, "\n", 1);
		for (int i = 1; i < pos + (pos ? 1 : 0); i++)
			n = put(buf, size, n, " ", 1);
		n = put(buf, size, n, "^\nparse_error: ", 15);
		n = put(buf, size, n, t, strlen(t));
		n = put(buf, size, n, "\n", 1);
	} else {
		n = put(buf, size, n, "\nError: (0)\n", 12);
	}
	return n;
}
