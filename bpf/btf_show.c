/*
 * btf_show.c - a value shown as its BTF type describes it, the text of Linux 6.1's btf_show
 * (kernel/bpf/btf.c) byte for byte: what bpf_snprintf_btf writes (its helper is here too).
 *
 * The format, for the flags of uapi's BTF_F_*: each value is "[.member = ](type)value", the
 * type written as C would ("(struct perf_event_header){", "(__u32)", "(char[])[", "(void *)"),
 * an aggregate's members one per line indented by depth (BTF_F_COMPACT: all on one line, no
 * indent), each followed by ','; BTF_F_NONAME drops ".member = " and "(type)" but keeps the
 * brackets; members whose value is zero (and aggregates with nothing non-zero inside) are left
 * out below the top level unless BTF_F_ZERO; a pointer is "0x" and the hashed address (16 hex
 * digits, 8 of them the hash) unless BTF_F_PTR_RAW; char arrays show printable bytes as 'c'
 * up to the first NUL; enums by enumerator name; bitfields and odd-sized ints in hex.  Linux's
 * quirks are kept because the text is ABI: a type name is cut at 79 bytes, an array of
 * pointers or arrays (no size of their own) repeats its first element, members of a struct
 * inside an array show without their names, a union's members are separated by ',' except
 * when the union is empty (then '|').
 *
 * The object is read through a 32-byte window copied with ksvc_read_nofault as Linux's
 * btf_show_obj_safe does: a type that cannot be copied stops the output there and the call
 * returns -EFAULT (a type with no size, -EINVAL).
 * Not here: the seq_file form (bpftool map dump's pretty print), module BTF.
 */
#include <stdarg.h>
#include <stdint.h>

#include <linux/bpf.h>
#include <kern/errno.h>
#include <kern/format.h>
#include <kern/ksvc.h>
#include <kern/string.h>
#include "bpf_internal.h"
#include "btf_parse.h"

#define SHOW_SAFE 32 /* BTF_SHOW_OBJ_SAFE_SIZE */
#define SHOW_BASE 16 /* BTF_SHOW_OBJ_BASE_TYPE_SIZE */
#define SHOW_NAME 80 /* BTF_SHOW_NAME_SIZE */
#define SHOW_ITER 10 /* BTF_SHOW_MAX_ITER: pointer / array / typedef levels in a name */
#define BTF_F_ALL (BTF_F_COMPACT | BTF_F_NONAME | BTF_F_PTR_RAW | BTF_F_ZERO)

struct show {
	uint64_t flags;
	const struct bpf_btf *btf;
	char *out; /* where the next text goes */
	int64_t left; /* room at out, the NUL's included */
	int64_t len; /* everything asked for */
	struct {
		uint8_t depth, depth_to_show, depth_check; /* Linux's u8 */
		bool array_member, array_terminated;
		uint16_t array_encoding;
		uint32_t type_id;
		int status;
		const struct btf_type *type;
		const struct btf_member *member;
		char name[SHOW_NAME];
	} st;
	struct {
		uint32_t size;
		uintptr_t head, data;
		uint8_t safe[SHOW_SAFE];
	} obj;
};

static void show_type(const struct btf_type *t, uint32_t id, uintptr_t data, uint8_t bits,
		      struct show *s);

/* btf_snprintf_show: vsnprintf semantics, then only the length once the room is gone */
static void emit(struct show *s, const char *fmt, ...)
{
	va_list ap;
	int64_t n;

	if (s->st.depth_check)
		return;
	va_start(ap, fmt);
	n = (int64_t)kvsnprintf(s->out, s->left > 0 ? (size_t)s->left : 0, fmt, ap);
	va_end(ap);
	if (n >= s->left) {
		s->left = 0;
		s->len += n;
	} else {
		s->left -= n;
		s->len += n;
		s->out += n;
	}
}

static const char *str_at(const struct bpf_btf *btf, uint32_t off)
{
	const char *n = bpf_btf_str(btf, off);

	return n ? n : "";
}

/* btf_type_skip_qualifiers: modifiers but typedef */
static const struct btf_type *skip_qualifiers(const struct bpf_btf *btf, uint32_t id)
{
	const struct btf_type *t = bpf_btf_type(btf, id);

	while (t && is_modifier(t) && bpf_btf_kind(t) != BTF_KIND_TYPEDEF)
		t = bpf_btf_type(btf, t->type);
	return t;
}

/* "[.member = ](prefix name *[])paren" of the value about to be shown (btf_show_name) */
static const char *show_name(struct show *s)
{
	static const char arrays[] = "[][][][][][][][][][]", ptrs[] = "**********";
	const char *arr = arrays + sizeof(arrays) - 1, *ptr = ptrs + sizeof(ptrs) - 1;
	const char *name = NULL, *prefix = "", *paren = "", *member = "";
	const struct btf_member *m = s->st.member;
	uint32_t id = s->st.type_id, kinds = 0, i;
	const struct btf_type *t;

	s->st.name[0] = 0;
	if (s->st.array_member)
		return "";
	if (m) {
		member = str_at(s->btf, m->name_off);
		id = m->type;
	}
	t = bpf_btf_type(s->btf, id);
	if (!t)
		return "";
	for (i = 0; i < SHOW_ITER; i++) {
		uint32_t k = t == &bpf_btf_void ? 0 : bpf_btf_kind(t);

		if (k == BTF_KIND_TYPEDEF) {
			if (!name)
				name = str_at(s->btf, t->name_off);
			id = t->type;
		} else if (k == BTF_KIND_ARRAY) {
			paren = "[";
			if (arr > arrays)
				arr -= 2;
			id = u32_at(t, 0); /* btf_array.type */
		} else if (k == BTF_KIND_PTR) {
			if (ptr > ptrs)
				ptr--;
			id = t->type;
		} else {
			id = 0;
		}
		if (k == BTF_KIND_TYPEDEF || k == BTF_KIND_ARRAY || k == BTF_KIND_PTR)
			kinds |= 1u << k;
		if (!id)
			break;
		t = skip_qualifiers(s->btf, id);
		if (!t)
			return "";
	}
	if (i == SHOW_ITER)
		return "";
	if (!name)
		name = str_at(s->btf, t->name_off);
	if (is_struct(t)) {
		prefix = is_kind(t, BTF_KIND_STRUCT) ? "struct" : "union";
		if (!(kinds & (1u << BTF_KIND_ARRAY)))
			paren = "{";
	} else if (is_kind(t, BTF_KIND_ENUM) || is_kind(t, BTF_KIND_ENUM64)) {
		prefix = "enum";
	}
	if (kinds & (1u << BTF_KIND_PTR))
		paren = "";
	if (kinds & (1u << BTF_KIND_TYPEDEF))
		prefix = "";
	if (s->flags & BTF_F_NONAME)
		ksnprintf(s->st.name, sizeof(s->st.name), "%s", paren);
	else
		ksnprintf(s->st.name, sizeof(s->st.name), "%s%s%s(%s%s%s%s%s%s)%s",
			  *member ? "." : "", member, *member ? " = " : "", prefix,
			  *prefix && *name ? " " : "", name, *ptr ? " " : "", ptr, arr, paren);
	return s->st.name;
}

static const char *indent(const struct show *s)
{
	static const char spaces[] = "                                "; /* 32 */

	if (s->flags & BTF_F_COMPACT)
		return "";
	return s->st.depth < sizeof(spaces) ? spaces + sizeof(spaces) - 1 - s->st.depth : spaces;
}

static const char *newline(const struct show *s)
{
	return s->flags & BTF_F_COMPACT ? "" : "\n";
}

static const char *delim(const struct show *s)
{
	if (!s->st.depth)
		return "";
	if ((s->flags & BTF_F_COMPACT) && s->st.type && is_kind(s->st.type, BTF_KIND_UNION))
		return "|";
	return ",";
}

static void shown_at_depth(struct show *s)
{
	if (s->st.depth > s->st.depth_to_show)
		s->st.depth_to_show = s->st.depth;
}

/* btf_show_type_values: one value, shown even when zero */
static void value_always(struct show *s, const char *text)
{
	const char *name = show_name(s);

	emit(s, "%s%s%s%s%s", indent(s), name, text, delim(s), newline(s));
	shown_at_depth(s);
}

/* btf_show_type_value: one value, left out below the top level when zero (no BTF_F_ZERO) */
static void value(struct show *s, bool zero, const char *fmt, ...)
{
	char text[192];
	va_list ap;

	if (zero && !(s->flags & BTF_F_ZERO) && s->st.depth)
		return;
	va_start(ap, fmt);
	kvsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	value_always(s, text);
}

/* Linux's btf_resolve_size: the bytes of t, through modifiers and arrays; -EINVAL if none */
static int64_t type_size(const struct bpf_btf *btf, const struct btf_type *t)
{
	uint64_t n = 1;

	for (int i = 0; t && i < MAX_DEPTH; i++) {
		uint32_t k = t == &bpf_btf_void ? 0 : bpf_btf_kind(t);

		if (has_size(t) && k != BTF_KIND_DATASEC)
			return n * t->size > UINT32_MAX ? -EINVAL : (int64_t)(n * t->size);
		if (k == BTF_KIND_PTR)
			return n * 8 > UINT32_MAX ? -EINVAL : (int64_t)(n * 8);
		if (is_modifier(t)) {
			t = bpf_btf_type(btf, t->type);
		} else if (k == BTF_KIND_ARRAY) {
			uint32_t nelems = u32_at(t, 2);

			if (n && nelems > UINT32_MAX / n)
				return -EINVAL;
			n *= nelems;
			t = bpf_btf_type(btf, u32_at(t, 0));
		} else {
			return -EINVAL;
		}
	}
	return -EINVAL;
}

/* btf_show_obj_safe: a readable copy of the bytes at data, through the 32-byte window */
static const uint8_t *obj_safe(struct show *s, const struct btf_type *t, uintptr_t data)
{
	int64_t size = type_size(s->btf, t), left;
	const uint8_t *safe = NULL;

	if (size < 0) {
		s->st.status = (int)size;
		return NULL;
	}
	if (!s->st.depth) {
		s->obj.size = (uint32_t)size;
		s->obj.head = data;
	} else {
		int64_t need = size < SHOW_BASE ? size : SHOW_BASE;

		if (s->obj.data && data >= s->obj.data && data + need < s->obj.data + SHOW_SAFE)
			safe = s->obj.safe + (data - s->obj.data);
	}
	if (!safe) {
		left = (int64_t)(s->obj.head + s->obj.size) - (int64_t)data;
		if (left > SHOW_SAFE)
			left = SHOW_SAFE;
		if (left < 0)
			left = 0;
		s->st.status = ksvc_read_nofault(s->obj.safe, (const void *)data, (size_t)left, false);
		if (!s->st.status) {
			s->obj.data = data;
			safe = s->obj.safe;
		}
	}
	return safe;
}

static const uint8_t *start_type(struct show *s, const struct btf_type *t, uint32_t id,
				 uintptr_t data)
{
	s->st.type = t;
	s->st.type_id = id;
	s->st.name[0] = 0;
	return obj_safe(s, t, data);
}

static void end_type(struct show *s)
{
	s->st.type = NULL;
	s->st.type_id = 0;
	s->st.name[0] = 0;
}

static const uint8_t *start_aggr(struct show *s, const struct btf_type *t, uint32_t id,
				 uintptr_t data)
{
	const uint8_t *safe = start_type(s, t, id, data);

	if (!safe)
		return NULL;
	emit(s, "%s%s%s", indent(s), show_name(s), newline(s));
	s->st.depth++;
	return safe;
}

static void end_aggr(struct show *s, const char *suffix)
{
	s->st.depth--;
	emit(s, "%s%s%s%s", indent(s), suffix, delim(s), newline(s));
	end_type(s);
}

/* ---- integers: whole ones, 128-bit ones and bitfields ---- */

/* a 64-bit shift as arm64 executes it (the count modulo 64), as Linux's code runs there */
static uint64_t shl(uint64_t x, unsigned int n)
{
	return x << (n & 63);
}

static uint64_t shr(uint64_t x, unsigned int n)
{
	return x >> (n & 63);
}

/* btf_int128_print: num[0] the low half */
static void int128_print(struct show *s, const uint64_t num[2])
{
	char text[40];

	if (!num[1]) {
		value(s, !num[0], "0x%llx", (unsigned long long)num[0]);
		return;
	}
	ksnprintf(text, sizeof(text), "0x%llx%016llx", (unsigned long long)num[1],
		  (unsigned long long)num[0]);
	value_always(s, text);
}

/* btf_bitfield_show: nr_bits from bit bits_off of the bytes at p (little-endian) */
static void bitfield_show(struct show *s, const uint8_t *p, uint8_t bits_off, uint8_t nr_bits)
{
	uint8_t copy_bits = (uint8_t)(nr_bits + bits_off);
	uint16_t lsh = (uint16_t)(128 - copy_bits), rsh = (uint16_t)(128 - nr_bits);
	uint64_t num[2] = { 0, 0 }, lo, hi;

	memcpy(num, p, BITS_UP(copy_bits));
	lo = num[0];
	hi = num[1];
	if (lsh >= 64) {
		hi = shl(lo, lsh - 64);
		lo = 0;
	} else {
		hi = shl(hi, lsh) | shr(lo, 64 - lsh);
		lo = shl(lo, lsh);
	}
	if (rsh >= 64) {
		lo = shr(hi, rsh - 64);
		hi = 0;
	} else {
		lo = shr(lo, rsh) | shl(hi, 64 - rsh);
		hi = shr(hi, rsh);
	}
	num[0] = lo;
	num[1] = hi;
	int128_print(s, num);
}

static void int_bits_show(struct show *s, const struct btf_type *t, const uint8_t *p, uint8_t bits)
{
	uint32_t d = u32_at(t, 0);
	uint8_t total = (uint8_t)(bits + BTF_INT_OFFSET(d));

	bitfield_show(s, p + total / 8, total & 7, (uint8_t)BTF_INT_BITS(d));
}

/* Linux's kernel isprint on an unsigned char (arm64's char): ASCII and Latin-1 */
static bool printable(uint8_t c)
{
	return (c >= 0x20 && c < 0x7f) || c >= 0xa0;
}

static void int_show(const struct btf_type *t, uint32_t id, uintptr_t data, uint8_t bits,
		     struct show *s)
{
	uint32_t d = u32_at(t, 0), nr = BTF_INT_BITS(d);
	bool sign = BTF_INT_ENCODING(d) & BTF_INT_SIGNED;
	const uint8_t *p = start_type(s, t, id, data);
	int64_t v = 0;
	uint64_t u = 0;

	if (!p)
		return;
	if (bits || BTF_INT_OFFSET(d) || (nr & 7) || (nr != 8 && nr != 16 && nr != 32 && nr != 64 &&
						       nr != 128)) {
		int_bits_show(s, t, p, bits);
		end_type(s);
		return;
	}
	if (nr == 128) {
		uint64_t num[2];

		memcpy(num, p, sizeof(num));
		int128_print(s, num);
		end_type(s);
		return;
	}
	if (nr == 8 && s->st.array_encoding == BTF_INT_CHAR) {
		if (s->st.array_terminated) {
			end_type(s);
			return;
		}
		if (!p[0]) {
			s->st.array_terminated = true;
			end_type(s);
			return;
		}
		if (printable(p[0])) {
			value(s, false, "'%c'", p[0]);
			end_type(s);
			return;
		}
	}
	memcpy(&u, p, nr / 8); /* little-endian: the low bytes */
	v = nr == 64 ? (int64_t)u : (int64_t)(u << (64 - nr)) >> (64 - nr);
	if (sign)
		value(s, !v, "%lld", (long long)v);
	else
		value(s, !u, "%llu", (unsigned long long)u);
	end_type(s);
}

/* ---- the other kinds ---- */

/* an address as Linux's %p shows it: NULL and error values as they are, others hashed */
static uint64_t hashed(uint64_t p)
{
	static uint64_t key;
	uint64_t x;

	if (!p || p >= (uint64_t)-4095)
		return p;
	if (!key) /* once per boot; a race only makes two callers agree on either key */
		key = ((uint64_t)ksvc_random_u32() << 32 | ksvc_random_u32()) | 1;
	x = (p ^ key) * 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 32;
	return x >> 32;
}

static void ptr_show(const struct btf_type *t, uint32_t id, uintptr_t data, uint8_t bits,
		     struct show *s)
{
	const uint8_t *p = start_type(s, t, id, data);
	uint64_t v;

	if (!p)
		return;
	memcpy(&v, p, 8);
	value(s, !v, "0x%016llx", (unsigned long long)(s->flags & BTF_F_PTR_RAW ? v : hashed(v)));
	end_type(s);
}

static void enum_show(const struct btf_type *t, uint32_t id, uintptr_t data, uint8_t bits,
		      struct show *s)
{
	const uint8_t *p = start_type(s, t, id, data);
	bool is64 = is_kind(t, BTF_KIND_ENUM64);
	uint32_t step = is64 ? 3 : 2; /* words per enumerator */
	int64_t v;

	if (!p)
		return;
	if (is64) {
		memcpy(&v, p, 8);
	} else {
		int32_t x;

		memcpy(&x, p, 4);
		v = x;
	}
	for (uint32_t i = 0; i < bpf_btf_vlen(t); i++) {
		int64_t e = is64 ? (int64_t)((uint64_t)u32_at(t, i * step + 2) << 32 |
					     u32_at(t, i * step + 1)) :
				   (int32_t)u32_at(t, i * step + 1);

		if (e != v)
			continue;
		value(s, false, "%s", str_at(s->btf, u32_at(t, i * step)));
		end_type(s);
		return;
	}
	if (BTF_INFO_KFLAG(t->info))
		value(s, !v, is64 ? "%lld" : "%d", is64 ? (long long)v : (int)v);
	else
		value(s, !v, is64 ? "%llu" : "%u", is64 ? (unsigned long long)v : (unsigned)v);
	end_type(s);
}

/* Run an aggregate's show: with members below the top level that may all be zero, first
 * silently (depth_check) to learn whether anything inside would show */
static void aggr_checked(void (*fn)(const struct btf_type *, uint32_t, uintptr_t, uint8_t,
				    struct show *),
			 const struct btf_type *t, uint32_t id, uintptr_t data, uint8_t bits,
			 struct show *s)
{
	const struct btf_member *m = s->st.member;

	if (s->st.depth > 0 && !(s->flags & BTF_F_ZERO)) {
		if (!s->st.depth_check) {
			s->st.depth_check = (uint8_t)(s->st.depth + 1);
			s->st.depth_to_show = 0;
		}
		fn(t, id, data, bits, s);
		s->st.member = m;
		if (s->st.depth_check != s->st.depth + 1)
			return;
		s->st.depth_check = 0;
		if (s->st.depth_to_show <= s->st.depth)
			return;
	}
	fn(t, id, data, bits, s);
}

static void array_body(const struct btf_type *t, uint32_t id, uintptr_t data, uint8_t bits,
		       struct show *s)
{
	uint32_t elem_id = u32_at(t, 0), nelems = u32_at(t, 2), elem_size = 0;
	const struct btf_type *et = bpf_btf_skip_modifiers(s->btf, elem_id, NULL);
	uint16_t enc = 0;

	if (et && has_size(et))
		elem_size = et->size;
	if (et && is_kind(et, BTF_KIND_INT)) {
		enc = (uint16_t)BTF_INT_ENCODING(u32_at(et, 0));
		if (elem_size == 1) /* char arrays: printable bytes as characters */
			enc = BTF_INT_CHAR;
	}
	s->st.array_encoding = enc;
	s->st.array_terminated = false;
	if (!start_aggr(s, t, id, data))
		return;
	for (uint32_t i = 0; et && i < nelems; i++) {
		s->st.array_member = true;
		s->st.member = NULL;
		show_type(et, elem_id, data, bits, s);
		data += elem_size;
		s->st.array_member = false;
		s->st.member = NULL;
		if (s->st.array_terminated)
			break;
	}
	s->st.array_encoding = 0;
	s->st.array_terminated = false;
	end_aggr(s, "]");
}

static void struct_body(const struct btf_type *t, uint32_t id, uintptr_t data, uint8_t bits,
			struct show *s)
{
	const struct btf_member *m = (const struct btf_member *)(t + 1);
	bool kflag = BTF_INFO_KFLAG(t->info);

	if (!start_aggr(s, t, id, data))
		return;
	for (uint32_t i = 0; i < bpf_btf_vlen(t); i++, m++) {
		const struct btf_type *mt = bpf_btf_type(s->btf, m->type);
		uint32_t off = kflag ? BTF_MEMBER_BIT_OFFSET(m->offset) : m->offset;
		uint32_t bf = kflag ? BTF_MEMBER_BITFIELD_SIZE(m->offset) : 0;

		s->st.member = m;
		if (bf) {
			const uint8_t *p = start_type(s, mt, m->type, data + off / 8);

			if (p)
				bitfield_show(s, p, off & 7, (uint8_t)bf);
			end_type(s);
		} else {
			show_type(mt, m->type, data + off / 8, off & 7, s);
		}
		s->st.member = NULL;
	}
	end_aggr(s, "}");
}

static void datasec_show(const struct btf_type *t, uint32_t id, uintptr_t data, uint8_t bits,
			 struct show *s)
{
	const struct btf_var_secinfo *v = (const struct btf_var_secinfo *)(t + 1);

	if (!start_type(s, t, id, data)) /* no size: -EINVAL, as Linux */
		return;
	value(s, false, "section (\"%s\") = {", str_at(s->btf, t->name_off));
	for (uint32_t i = 0; i < bpf_btf_vlen(t); i++) {
		if (i)
			emit(s, ",");
		show_type(bpf_btf_type(s->btf, v[i].type), v[i].type, data + v[i].offset, bits, s);
	}
	end_type(s);
}

/* btf_type_ops(t)->show */
static void show_type(const struct btf_type *t, uint32_t id, uintptr_t data, uint8_t bits,
		      struct show *s)
{
	uint32_t k = !t || t == &bpf_btf_void ? BTF_KIND_UNKN : bpf_btf_kind(t);

	switch (k) {
	case BTF_KIND_INT:
		int_show(t, id, data, bits, s);
		return;
	case BTF_KIND_PTR:
		ptr_show(t, id, data, bits, s);
		return;
	case BTF_KIND_ARRAY:
		aggr_checked(array_body, t, id, data, bits, s);
		return;
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		aggr_checked(struct_body, t, id, data, bits, s);
		return;
	case BTF_KIND_ENUM:
	case BTF_KIND_ENUM64:
		enum_show(t, id, data, bits, s);
		return;
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_TYPE_TAG:
	case BTF_KIND_VAR: /* btf_modifier_show / btf_var_show: the resolved type, its id */
		id = s->btf->rid ? s->btf->rid[id] : id;
		t = s->btf->rid ? bpf_btf_type(s->btf, id) :
				  bpf_btf_skip_modifiers(s->btf, id, &id);
		if (t && t != &bpf_btf_void && (is_modifier(t) || is_kind(t, BTF_KIND_VAR)))
			t = NULL; /* not resolved: nothing sized to show */
		if (t && t != &bpf_btf_void)
			show_type(t, id, data, bits, s);
		else
			emit(s, "<unsupported kind:%s>", bpf_btf_kind_name(BTF_KIND_UNKN));
		return;
	case BTF_KIND_DATASEC:
		datasec_show(t, id, data, bits, s);
		return;
	default: /* btf_df_show: fwd, func, func_proto, float, decl_tag */
		emit(s, "<unsupported kind:%s>", bpf_btf_kind_name(k));
		return;
	}
}

int bpf_btf_snprintf_show(const struct bpf_btf *btf, uint32_t type_id, const void *obj,
			  char *buf, int32_t len, uint64_t flags)
{
	struct show s;

	memset(&s, 0, sizeof(s));
	s.flags = flags;
	s.btf = btf;
	s.out = buf;
	s.left = len;
	show_type(bpf_btf_type(btf, type_id), type_id, (uintptr_t)obj, 0, &s);
	return s.st.status ? s.st.status : (int)s.len;
}

/* bpf_snprintf_btf(str, str_size, ptr, btf_ptr_size, flags), as Linux 6.1's */
uint64_t bpf_h_snprintf_btf(uint64_t str, uint64_t str_size, uint64_t ptr, uint64_t ptr_size,
			    uint64_t flags)
{
	const struct btf_ptr *p = (const struct btf_ptr *)(uintptr_t)ptr;
	const struct bpf_btf *btf = bpf_btf_vmlinux();

	if ((flags & ~(uint64_t)BTF_F_ALL) || (uint32_t)ptr_size != sizeof(struct btf_ptr) || !btf)
		return (uint64_t)(int64_t)-EINVAL;
	if (!p->type_id)
		return (uint64_t)(int64_t)-EINVAL;
	if ((int32_t)p->type_id < 0 || !bpf_btf_type(btf, p->type_id))
		return (uint64_t)(int64_t)-ENOENT;
	return (uint64_t)(int64_t)bpf_btf_snprintf_show(btf, p->type_id, p->ptr,
						       (char *)(uintptr_t)str,
						       (int32_t)(uint32_t)str_size, flags);
}
