/*
 * events.c - the -e event list and -C cpu list parsers.
 *
 * Accepts what the brief of perf 6.1's parse-events grammar we need:
 * generalized hardware and software names (PERF_TYPE_HARDWARE/SOFTWARE),
 * raw rNNN (PERF_TYPE_RAW), `pmu/event=0x11/` with the PMU type and the
 * field position read from /sys/bus/event_source/devices/<pmu>/{type,format/},
 * and the u/k/h modifiers (exclude_* bits). The name kept for printing is the
 * event as typed, as perf 6.1 prints it. Not supported: cache events
 * (L1-dcache-...), tracepoints, groups {...}, sysfs event aliases.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../include/perf/sw_events.h" /* the software events' names, with the kernel's rules */

struct ev_name {
	const char *name;
	uint32_t type;
	uint64_t config;
};

/* the hardware events; the software ones are the kernel's table (perf_sw_events) */
static const struct ev_name ev_names[] = {
    {"cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
    {"branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"idle-cycles-frontend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
};

bool perf_ev_is(const struct perf_evdesc *ev, uint32_t type, uint64_t config)
{
	return ev->attr.type == type && ev->attr.config == config;
}

bool perf_ev_is_clock(const struct perf_evdesc *ev)
{
	const struct perf_sw_event_desc *d = perf_sw_event_desc(ev->attr.config);

	return ev->attr.type == PERF_TYPE_SOFTWARE && d && d->source == PERF_SW_CLOCK;
}

static int read_sysfs(const char *pmu, const char *file, char *buf, size_t len)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/%s", pmu, file);
	f = fopen(path, "r");
	if (!f)
		return -ENOENT;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -EINVAL;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return 0;
}

/*
 * "pmu/term=val,term=val/": each term's format file says "configN:lo-hi";
 * the value is shifted into that field.
 */
static int parse_pmu_event(const char *s, struct perf_event_attr *attr)
{
	char pmu[64], terms[256], buf[128], *save = NULL, *t;
	const char *slash = strchr(s, '/');
	const char *end = strrchr(s, '/');
	size_t n = (size_t)(slash - s);

	if (n == 0 || n >= sizeof(pmu) || end == slash ||
	    (size_t)(end - slash - 1) >= sizeof(terms))
		return -EINVAL;
	memcpy(pmu, s, n);
	pmu[n] = 0;
	memcpy(terms, slash + 1, (size_t)(end - slash - 1));
	terms[end - slash - 1] = 0;
	if (read_sysfs(pmu, "type", buf, sizeof(buf)))
		return -ENOENT;
	attr->type = (uint32_t)strtoul(buf, NULL, 0);
	for (t = strtok_r(terms, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		uint64_t val = eq ? strtoull(eq + 1, NULL, 0) : 1;
		unsigned lo = 0;
		__u64 *field = &attr->config;
		char fmt[80];

		if (eq)
			*eq = 0;
		if (!strcmp(t, "config") || !strcmp(t, "config1") || !strcmp(t, "config2")) {
			snprintf(buf, sizeof(buf), "%s:0", t);
		} else {
			snprintf(fmt, sizeof(fmt), "format/%s", t);
			if (read_sysfs(pmu, fmt, buf, sizeof(buf)))
				return -EINVAL;
		}
		if (!strncmp(buf, "config1", 7))
			field = &attr->config1;
		else if (!strncmp(buf, "config2", 7))
			field = &attr->config2;
		if (strchr(buf, ':'))
			lo = (unsigned)strtoul(strchr(buf, ':') + 1, NULL, 10);
		*field |= val << lo;
	}
	return 0;
}

static int parse_modifiers(const char *mod, struct perf_event_attr *attr)
{
	bool u = false, k = false, h = false;

	for (; *mod; mod++) {
		switch (*mod) {
		case 'u':
			u = true;
			break;
		case 'k':
			k = true;
			break;
		case 'h':
			h = true;
			break;
		case 'p':
			attr->precise_ip++;
			break;
		case 'G':
			attr->exclude_guest = 0;
			break;
		case 'H':
			attr->exclude_host = 0;
			break;
		default:
			return -EINVAL;
		}
	}
	if (u || k || h) {
		attr->exclude_user = !u;
		attr->exclude_kernel = !k;
		attr->exclude_hv = !h;
	}
	return 0;
}

static int parse_one(const char *s, struct perf_evdesc *ev)
{
	char base[96];
	const char *colon;
	size_t n;
	int err;

	memset(ev, 0, sizeof(*ev));
	if (strlen(s) >= sizeof(ev->name))
		return -EINVAL;
	strcpy(ev->name, s);
	ev->attr.size = PERF_ATTR_SIZE_VER7;
	ev->attr.exclude_guest = 1;

	if (strchr(s, '/')) {
		err = parse_pmu_event(s, &ev->attr);
		colon = strrchr(s, '/');
		colon = strchr(colon, ':');
		return err ? err : colon ? parse_modifiers(colon + 1, &ev->attr) : 0;
	}
	colon = strchr(s, ':');
	n = colon ? (size_t)(colon - s) : strlen(s);
	memcpy(base, s, n);
	base[n] = 0;
	err = -ENOENT;
	for (size_t i = 0; i < sizeof(ev_names) / sizeof(ev_names[0]); i++) {
		if (!strcmp(base, ev_names[i].name)) {
			ev->attr.type = ev_names[i].type;
			ev->attr.config = ev_names[i].config;
			err = 0;
			break;
		}
	}
	for (uint64_t c = 0; err && c < PERF_COUNT_SW_MAX; c++) {
		const struct perf_sw_event_desc *d = &perf_sw_events[c];

		if (!strcmp(base, d->name) || (d->alias && !strcmp(base, d->alias))) {
			ev->attr.type = PERF_TYPE_SOFTWARE;
			ev->attr.config = c;
			err = 0;
		}
	}
	if (err && base[0] == 'r' && base[1] &&
	    strspn(base + 1, "0123456789abcdefABCDEF") == n - 1) {
		ev->attr.type = PERF_TYPE_RAW;
		ev->attr.config = strtoull(base + 1, NULL, 16);
		err = 0;
	}
	if (err)
		return err;
	return colon ? parse_modifiers(colon + 1, &ev->attr) : 0;
}

/* Split on commas that are not inside pmu/.../ terms. */
int perf_parse_events(const char *list, struct perf_evdesc *out, int max)
{
	char tok[96];
	int n = 0;

	while (*list) {
		size_t len = 0;
		bool in_pmu = false;

		while (list[len] && (in_pmu || list[len] != ',')) {
			if (list[len] == '/')
				in_pmu = !in_pmu;
			len++;
		}
		if (len == 0 || len >= sizeof(tok) || n >= max)
			return -EINVAL;
		memcpy(tok, list, len);
		tok[len] = 0;
		if (parse_one(tok, &out[n])) {
			fprintf(stderr, "event syntax error: '%s'\n", tok);
			return -EINVAL;
		}
		n++;
		list += len;
		if (*list == ',')
			list++;
	}
	return n;
}

/* "0-3,5" -> {0,1,2,3,5} */
int perf_parse_cpus(const char *list, int *cpus, int max)
{
	int n = 0;
	char *end;

	while (*list) {
		long a = strtol(list, &end, 10), b;

		if (end == list || a < 0)
			return -EINVAL;
		b = a;
		if (*end == '-') {
			list = end + 1;
			b = strtol(list, &end, 10);
			if (end == list || b < a)
				return -EINVAL;
		}
		for (long c = a; c <= b; c++) {
			if (n >= max)
				return -EINVAL;
			cpus[n++] = (int)c;
		}
		list = end;
		if (*list == ',')
			list++;
		else if (*list)
			return -EINVAL;
	}
	return n;
}

/* Online CPUs from sysfs (as perf's cpu map), else sysconf. */
int perf_online_cpus(int *cpus, int max)
{
	char buf[256];
	FILE *f = fopen("/sys/devices/system/cpu/online", "r");
	int n = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f)) {
			buf[strcspn(buf, "\n")] = 0;
			n = perf_parse_cpus(buf, cpus, max);
		}
		fclose(f);
	}
	if (n <= 0) {
		long c = sysconf(_SC_NPROCESSORS_ONLN);

		n = 0;
		for (long i = 0; i < c && n < max; i++)
			cpus[n++] = (int)i;
	}
	return n;
}
