/*
 * ksym.c - kernel addresses to function names for panic reports and backtraces, by a linear
 * walk of the symbol table the image carries (tools/host/kallsyms.sh).  Portable: the host test
 * hands ksym_find a table of its own.
 */
#include <kern/ksym.h>
#include <kern/string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* One "%016lx %c %s\n" line at p: its address, type, name and name length, and the next
 * line; NULL when p does not start a whole table line. */
static const char *next_line(const char *p, const char *end, uint64_t *a, char *type,
			     const char **n, size_t *nlen)
{
	int i;

	if (end - p <= 19)
		return NULL;
	*a = 0;
	for (i = 0; i < 16 && hexval(p[i]) >= 0; i++)
		*a = *a << 4 | (uint64_t)hexval(p[i]);
	const char *nl = p + 19;

	while (nl < end && *nl != '\n')
		nl++;
	if (i != 16 || p[16] != ' ' || p[18] != ' ' || nl == end)
		return NULL;
	*type = p[17];
	*n = p + 19;
	*nlen = (size_t)(nl - *n);
	return nl + 1;
}

bool ksym_find(const char *tab, size_t len, uint64_t addr, char *name, size_t size, uint64_t *off)
{
	const char *p = tab, *end = tab + len, *best = NULL, *n, *next;
	size_t best_len = 0, nlen;
	uint64_t best_addr = 0, a;
	char t;

	while ((next = next_line(p, end, &a, &t, &n, &nlen)) != NULL) {
		if (a > addr)
			break; /* sorted: nothing further starts at or below addr */
		if (t == 'T' || t == 't') {
			best = n;
			best_len = nlen;
			best_addr = a;
		}
		p = next;
	}
	if (!best || !size)
		return false;
	if (best_len >= size)
		best_len = size - 1;
	memcpy(name, best, best_len);
	name[best_len] = 0;
	*off = addr - best_addr;
	return true;
}

bool ksym_find_name(const char *tab, size_t len, const char *name, uint64_t *addr, uint64_t *size)
{
	const char *p = tab, *end = tab + len, *n, *next;
	size_t want = strlen(name), nlen;
	bool found = false;
	uint64_t a;
	char t;

	while ((next = next_line(p, end, &a, &t, &n, &nlen)) != NULL) {
		if (found) {
			*size = a - *addr; /* up to the next symbol */
			return true;
		}
		if ((t == 'T' || t == 't') && nlen == want && !memcmp(n, name, want)) {
			*addr = a;
			found = true;
		}
		p = next;
	}
	if (found)
		*size = 4; /* the last symbol: one instruction known */
	return found;
}

bool ksym_find_any(const char *tab, size_t len, const char *name, uint64_t *addr)
{
	const char *p = tab, *end = tab + len, *n, *next;
	size_t want = strlen(name), nlen;
	uint64_t a;
	char t;

	while ((next = next_line(p, end, &a, &t, &n, &nlen)) != NULL) {
		if (nlen == want && !memcmp(n, name, want)) {
			*addr = a;
			return true;
		}
		p = next;
	}
	return false;
}
