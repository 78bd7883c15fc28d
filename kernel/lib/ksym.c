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

bool ksym_find(const char *tab, size_t len, uint64_t addr, char *name, size_t size, uint64_t *off)
{
	const char *p = tab, *end = tab + len, *best = NULL;
	size_t best_len = 0;
	uint64_t best_addr = 0;

	while (end - p > 19) {
		uint64_t a = 0;
		int i;

		for (i = 0; i < 16 && hexval(p[i]) >= 0; i++)
			a = a << 4 | (uint64_t)hexval(p[i]);
		const char *n = p + 19, *nl = n;

		while (nl < end && *nl != '\n')
			nl++;
		if (i != 16 || p[16] != ' ' || p[18] != ' ' || nl == end)
			break; /* not a table line */
		if (a > addr)
			break; /* sorted: nothing further starts at or below addr */
		if (p[17] == 'T' || p[17] == 't') {
			best = n;
			best_len = (size_t)(nl - n);
			best_addr = a;
		}
		p = nl + 1;
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
