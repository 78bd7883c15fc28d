/*
 * record.c - `perf record`: sample one event for a workload (or CPUs) and
 * write perf.data for Linux perf 6.1's `perf report` / `perf script`.
 *
 * Syscall behaviour follows perf 6.1 (perf-abi-notes.md): one event per
 * CPU with pid=child (not cpu=-1), sample_type IP|TID|TIME (+PERIOD with
 * -F, +CPU with -a/-C, +CALLCHAIN|REGS_USER(LR) with -g), read_format ID|LOST, disabled,
 * inherit, mmap, comm, enable_on_exec, task, sample_id_all, exclude_guest,
 * mmap2, comm_exec; a 1+2^n page ring per fd, PERF_EVENT_IOC_ID,
 * O_NONBLOCK. The rings are read through data_head (load-acquire) and
 * data_tail (store-release) while ppoll() waits for POLLHUP (the task
 * exited); a FINISHED_ROUND record follows every pass that copied data.
 * Before the kernel's records we synthesize what perf does and report needs:
 * the kernel MMAP ([kernel.kallsyms]_stext, from /proc/kallsyms when it shows
 * addresses) and the "perf-exec" COMM of the child. The workload's own
 * COMM/MMAP2 come from the kernel (comm_exec, mmap2).
 *
 * With -a/-C it also synthesizes COMM and MMAP2 (from /proc) for the tasks
 * already running.
 *
 * Not done: more than one event, -p/-t,
 * STACK_USER (dwarf unwinding), the side-band dummy event, build-ids, compression.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <poll.h>
#include <stddef.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef PERF_RECORD_FINISHED_ROUND
#define PERF_RECORD_FINISHED_ROUND 68 /* perf tool record, not in the uapi header */
#endif

_Static_assert(offsetof(struct perf_event_mmap_page, data_head) == 1024, "mmap page layout");

struct ring {
	int fd;
	int cpu;
	void *base;
	size_t size; /* data area bytes, a power of two */
	uint64_t id;
};

struct record_state {
	struct ring rings[PERF_MAX_CPUS];
	int nr_rings;
	struct perf_data_file data;
	char *copy; /* linear copy of one ring's new bytes */
	uint64_t nr_samples, first_ts, last_ts;
	uint64_t sample_type;
	unsigned wakeups;
};

static volatile sig_atomic_t rec_done;

static void rec_signal(int sig)
{
	(void)sig;
	rec_done = 1;
}

static void sigchld_noop(int sig)
{
	(void)sig;
}

/* Count samples and note first/last time (IP, TID, TIME come first in that order). */
static void scan_records(struct record_state *st, const char *p, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct perf_event_header) <= len) {
		const struct perf_event_header *h = (const void *)(p + off);

		if (h->size < sizeof(*h) || off + h->size > len)
			break;
		if (h->type == PERF_RECORD_SAMPLE && h->size >= 32) {
			uint64_t t;

			memcpy(&t, p + off + 24, sizeof(t));
			if (!st->nr_samples++)
				st->first_ts = t;
			if (t > st->last_ts)
				st->last_ts = t;
		}
		off += h->size;
	}
}

/* Copy everything between data_tail and data_head out of one ring. */
static int drain_ring(struct record_state *st, struct ring *r)
{
	struct perf_event_mmap_page *pg = r->base;
	const char *data =
	    (const char *)r->base + (pg->data_offset ? pg->data_offset : (uint64_t)getpagesize());
	/* pairs with the kernel's store-release of data_head after writing records */
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	size_t len = (size_t)(head - tail), first;

	if (!len)
		return 0;
	if (len > r->size) {
		/* the kernel overwrote unread data: record boundaries are lost, drop it all */
		fprintf(stderr, "perf record: ring of cpu %d overran (head %llu tail %llu)\n",
			r->cpu, (unsigned long long)head, (unsigned long long)tail);
		__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
		return 0;
	}
	first = r->size - (size_t)(tail & (r->size - 1));
	if (first > len)
		first = len;
	memcpy(st->copy, data + (tail & (r->size - 1)), first);
	memcpy(st->copy + first, data, len - first);
	/* pairs with the kernel's load of data_tail: the bytes are copied, it may reuse them */
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
	scan_records(st, st->copy, len);
	return perf_data_write(&st->data, st->copy, len) < 0 ? -1 : 1;
}

static int drain_all(struct record_state *st)
{
	int wrote = 0;

	for (int i = 0; i < st->nr_rings; i++) {
		int n = drain_ring(st, &st->rings[i]);

		if (n < 0)
			return -1;
		wrote |= n;
	}
	if (wrote) {
		struct perf_event_header round = {.type = PERF_RECORD_FINISHED_ROUND,
						  .size = sizeof(round)};

		return perf_data_write(&st->data, &round, sizeof(round));
	}
	return 0;
}

/* Zeroed sample_id_all trailer for synthesized records: TID, TIME, CPU as sample_type says. */
static size_t id_trailer_len(uint64_t sample_type)
{
	return 16 + ((sample_type & PERF_SAMPLE_CPU) ? 8 : 0);
}

static int synth_kernel_mmap(struct record_state *st)
{
	char line[512], name[256], best[16] = "";
	unsigned long long addr = 0, a;
	char type;
	FILE *f = fopen("/proc/kallsyms", "r");
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		uint64_t start, len, pgoff;
		char rest[128];
	} ev;
	size_t fname_len;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || strchr(line, '['))
			continue;
		if (!strcmp(name, "_text") || (!strcmp(name, "_stext") && !best[0])) {
			addr = a;
			strcpy(best, name[1] == 't' ? "_text" : "_stext");
			if (!strcmp(name, "_text"))
				break;
		}
	}
	fclose(f);
	if (!addr)
		return 0; /* no kallsyms or kptr_restrict hides addresses */
	memset(&ev, 0, sizeof(ev));
	snprintf(ev.rest, sizeof(ev.rest), "[kernel.kallsyms]%s", best);
	fname_len = (strlen(ev.rest) + 1 + 7) & ~(size_t)7;
	ev.h.type = PERF_RECORD_MMAP;
	ev.h.misc = PERF_RECORD_MISC_KERNEL;
	ev.h.size = (uint16_t)((sizeof(ev) - sizeof(ev.rest)) + fname_len +
			       id_trailer_len(st->sample_type));
	ev.pid = (uint32_t)-1;
	ev.start = addr;
	ev.len = ~0ULL - addr;
	ev.pgoff = addr;
	return perf_data_write(&st->data, &ev, ev.h.size);
}

static void read_comm(const char *path, char *out, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	if (fgets(out, (int)len, f))
		out[strcspn(out, "\n")] = 0;
	fclose(f);
}

static int synth_comm(struct record_state *st, pid_t pid, pid_t tid, const char *comm)
{
	struct {
		struct perf_event_header h;
		uint32_t pid, tid;
		char rest[64];
	} ev;
	size_t len;

	memset(&ev, 0, sizeof(ev));
	snprintf(ev.rest, 32, "%s", comm);
	len = (strlen(ev.rest) + 1 + 7) & ~(size_t)7;
	ev.h.type = PERF_RECORD_COMM;
	ev.h.size = (uint16_t)(16 + len + id_trailer_len(st->sample_type));
	ev.pid = (uint32_t)pid;
	ev.tid = (uint32_t)tid;
	return perf_data_write(&st->data, &ev, ev.h.size);
}

/* PERF_RECORD_MMAP2 for each executable mapping in /proc/PID/maps. */
static int synth_maps(struct record_state *st, pid_t pid)
{
	char path[64], line[4352];
	FILE *f;
	int err = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (!err && fgets(line, sizeof(line), f)) {
		struct {
			struct perf_event_header h;
			uint32_t pid, tid;
			uint64_t start, len, pgoff;
			uint32_t maj, min;
			uint64_t ino, ino_generation;
			uint32_t prot, flags;
			char rest[4096 + 32];
		} ev;
		unsigned long long start, end, pgoff, ino;
		unsigned maj, min;
		char perms[8];
		int name_at = 0;
		size_t nlen;

		if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &pgoff,
			   &maj, &min, &ino, &name_at) < 7 ||
		    perms[2] != 'x')
			continue;
		memset(&ev, 0, sizeof(ev));
		line[strcspn(line, "\n")] = 0;
		snprintf(ev.rest, 4096, "%s", name_at ? line + name_at : "");
		if (!ev.rest[0])
			strcpy(ev.rest, "//anon");
		nlen = (strlen(ev.rest) + 1 + 7) & ~(size_t)7;
		ev.h.type = PERF_RECORD_MMAP2;
		ev.h.misc = PERF_RECORD_MISC_USER;
		ev.h.size = (uint16_t)(sizeof(ev) - sizeof(ev.rest) + nlen +
				       id_trailer_len(st->sample_type));
		ev.pid = ev.tid = (uint32_t)pid;
		ev.start = start;
		ev.len = end - start;
		ev.pgoff = pgoff;
		ev.maj = maj;
		ev.min = min;
		ev.ino = ino;
		ev.prot =
		    (perms[0] == 'r' ? 1u : 0u) | (perms[1] == 'w' ? 2u : 0u) | 4u; /* PROT_* */
		ev.flags = perms[3] == 's' ? 1u : 2u; /* MAP_SHARED/PRIVATE */
		err = perf_data_write(&st->data, &ev, ev.h.size);
	}
	fclose(f);
	return err;
}

/* -a/-C: COMM for every thread and MMAP2 for every process already running, as perf does. */
static int synth_existing_tasks(struct record_state *st)
{
	DIR *proc = opendir("/proc");
	struct dirent *de;
	int err = 0;

	if (!proc)
		return 0;
	while (!err && (de = readdir(proc))) {
		pid_t pid = atoi(de->d_name);
		char path[64];
		DIR *task;
		struct dirent *te;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", pid);
		task = opendir(path);
		while (!err && task && (te = readdir(task))) {
			pid_t tid = atoi(te->d_name);
			char comm[64] = "";

			if (tid <= 0)
				continue;
			snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
			read_comm(path, comm, sizeof(comm));
			err = synth_comm(st, pid, tid, comm);
		}
		if (task)
			closedir(task);
		if (!err)
			err = synth_maps(st, pid);
	}
	closedir(proc);
	return err;
}

static int open_rings(struct record_state *st, struct perf_event_attr *attr, pid_t pid,
		      const int *cpus, int ncpus, size_t data_pages)
{
	size_t page = (size_t)getpagesize();

	for (int i = 0; i < ncpus; i++) {
		struct ring *r = &st->rings[st->nr_rings];

		r->cpu = cpus[i];
		r->fd = perf_open(attr, pid, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (r->fd < 0 && i == 0 && (attr->sample_type & PERF_SAMPLE_REGS_USER) &&
		    (errno == EINVAL || errno == EOPNOTSUPP)) {
			/* kernel without user-regs sampling: plain frame-pointer chains */
			attr->sample_type &= ~(uint64_t)PERF_SAMPLE_REGS_USER;
			attr->sample_regs_user = 0;
			r->fd = perf_open(attr, pid, cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		}
		if (r->fd < 0) {
			fprintf(stderr,
				"Error:\nThe sys_perf_event_open() syscall returned with %d (%s) "
				"for event (cpu %d).\n",
				errno, strerror(errno), cpus[i]);
			return -1;
		}
		r->size = data_pages * page;
		r->base = mmap(NULL, page + r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (r->base == MAP_FAILED) {
			perror("mmap");
			close(r->fd);
			return -1;
		}
		fcntl(r->fd, F_SETFL, O_RDONLY | O_NONBLOCK);
		if (ioctl(r->fd, PERF_EVENT_IOC_ID, &r->id) < 0) {
			perror("PERF_EVENT_IOC_ID");
			return -1;
		}
		st->nr_rings++;
	}
	return 0;
}

static void close_rings(struct record_state *st)
{
	size_t page = (size_t)getpagesize();

	for (int i = 0; i < st->nr_rings; i++) {
		munmap(st->rings[i].base, page + st->rings[i].size);
		close(st->rings[i].fd);
	}
	st->nr_rings = 0;
}

static void ioctl_rings(struct record_state *st, unsigned long req)
{
	for (int i = 0; i < st->nr_rings; i++)
		ioctl(st->rings[i].fd, req, 0);
}

/* Wait for the workload, copying the rings whenever the kernel wakes us. */
static int record_loop(struct record_state *st, pid_t child, int *status)
{
	struct pollfd pfd[PERF_MAX_CPUS];
	bool exited = false;

	for (int i = 0; i < st->nr_rings; i++) {
		pfd[i].fd = st->rings[i].fd;
		pfd[i].events = POLLIN | POLLERR | POLLHUP;
	}
	while (!exited && !rec_done) {
		struct timespec ts = {0, 200 * 1000 * 1000};
		int n = ppoll(pfd, (nfds_t)st->nr_rings, &ts, NULL), hup = 0;

		if (n > 0) {
			st->wakeups++;
			for (int i = 0; i < st->nr_rings; i++)
				hup += !!(pfd[i].revents & POLLHUP);
		}
		if (drain_all(st) < 0)
			return -1;
		if (waitpid(child, status, WNOHANG) == child)
			exited = true;
		else if (hup == st->nr_rings)
			break;
	}
	if (!exited)
		while (waitpid(child, status, 0) < 0 && errno == EINTR)
			;
	ioctl_rings(st, PERF_EVENT_IOC_DISABLE);
	return drain_all(st);
}

static void record_usage(void)
{
	fprintf(stderr, "\n Usage: perf record [<options>] [<command>]\n\n"
			"    -e <event>    event to sample (one)\n    -c <n>        sample period\n"
			"    -F <n>        sample frequency\n    -a            system-wide\n"
			"    -C <cpus>     cpu list\n    -g            frame-pointer call graphs\n"
			"    -m <pages>    ring data pages (power of two, default 128)\n"
			"    -o <file>     output file (default perf.data)\n\n");
}

struct record_opts {
	const char *event, *cpu_list, *out;
	uint64_t period, freq;
	bool system_wide, callchain;
	size_t pages;
};

static int parse_record_opts(int argc, char **argv, struct record_opts *o)
{
	int opt;

	*o = (struct record_opts){.event = "cycles", .out = "perf.data", .pages = 128};
	optind = 1;
	while ((opt = getopt(argc, argv, "+e:c:F:aC:go:m:")) != -1) {
		switch (opt) {
		case 'e':
			o->event = optarg;
			break;
		case 'c':
			o->period = strtoull(optarg, NULL, 0);
			break;
		case 'F':
			o->freq = strtoull(optarg, NULL, 0);
			break;
		case 'a':
			o->system_wide = true;
			break;
		case 'C':
			o->cpu_list = optarg;
			break;
		case 'g':
			o->callchain = true;
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'm':
			o->pages = strtoul(optarg, NULL, 0);
			break;
		default:
			return -1;
		}
	}
	if (optind >= argc || !o->pages || (o->pages & (o->pages - 1)))
		return -1;
	if (!o->period && !o->freq)
		o->freq = 4000;
	return optind;
}

static void setup_attr(struct perf_event_attr *a, const struct record_opts *o, bool per_cpu)
{
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	if (o->period) {
		a->sample_period = o->period;
	} else {
		a->freq = 1;
		a->sample_freq = o->freq;
		a->sample_type |= PERF_SAMPLE_PERIOD;
	}
	if (per_cpu)
		a->sample_type |= PERF_SAMPLE_CPU;
	if (o->callchain) {
		/* as perf 6.1 on arm64: LR (user reg 30) lets report fix up the leaf frame */
		a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER;
		a->sample_regs_user = 1ULL << 30;
	}
	a->read_format = PERF_FORMAT_ID | PERF_FORMAT_LOST;
	a->disabled = 1;
	a->inherit = 1;
	a->mmap = 1;
	a->comm = 1;
	a->enable_on_exec = !per_cpu;
	a->task = 1;
	a->sample_id_all = 1;
	a->exclude_guest = 1;
	a->mmap2 = 1;
	a->comm_exec = 1;
}

int perf_cmd_record(int argc, char **argv)
{
	static struct record_state st;
	struct record_opts o;
	struct perf_evdesc ev;
	struct perf_workload wl;
	uint64_t ids[PERF_MAX_CPUS];
	int cpus[PERF_MAX_CPUS], ncpus, status = 0, first;
	bool per_cpu;
	struct sigaction sa;

	first = parse_record_opts(argc, argv, &o);
	if (first < 0) {
		record_usage();
		return 129;
	}
	if (perf_parse_events(o.event, &ev, 1) != 1) {
		fprintf(stderr, "perf record: one event expected in '%s'\n", o.event);
		return 129;
	}
	per_cpu = o.system_wide || o.cpu_list;
	ncpus = o.cpu_list && !o.system_wide ? perf_parse_cpus(o.cpu_list, cpus, PERF_MAX_CPUS)
					     : perf_online_cpus(cpus, PERF_MAX_CPUS);
	if (ncpus <= 0) {
		fprintf(stderr, "perf record: bad cpu list\n");
		return 129;
	}
	setup_attr(&ev.attr, &o, per_cpu);
	st.sample_type = ev.attr.sample_type;
	st.copy = malloc(o.pages * (size_t)getpagesize());
	if (!st.copy)
		return 255;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = rec_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = sigchld_noop; /* makes ppoll return early when the workload exits */
	sigaction(SIGCHLD, &sa, NULL);

	if (perf_workload_prepare(argv + first, &wl) < 0) {
		perror("fork");
		return 255;
	}
	if (open_rings(&st, &ev.attr, per_cpu ? -1 : wl.pid, cpus, ncpus, o.pages) < 0)
		goto err_kill;
	for (int i = 0; i < st.nr_rings; i++)
		ids[i] = st.rings[i].id;
	if (!access(o.out, F_OK)) {
		/* as perf: keep the previous file as <name>.old */
		char old[PATH_MAX];

		snprintf(old, sizeof(old), "%s.old", o.out);
		rename(o.out, old);
	}
	if (perf_data_begin(&st.data, o.out, &ev.attr, ev.name, ids, st.nr_rings) < 0) {
		perror(o.out);
		goto err_kill;
	}
	if (synth_kernel_mmap(&st) < 0 || (per_cpu && synth_existing_tasks(&st) < 0) ||
	    synth_comm(&st, wl.pid, wl.pid, "perf-exec") < 0)
		goto err_kill;
	perf_workload_start(&wl);
	if (per_cpu)
		ioctl_rings(&st, PERF_EVENT_IOC_ENABLE);
	if (record_loop(&st, wl.pid, &status) < 0)
		goto err_close;
	close_rings(&st);
	if (perf_workload_exec_errno()) {
		fprintf(stderr, "Workload failed: %s\n", strerror(perf_workload_exec_errno()));
		return 255;
	}
	fprintf(stderr, "[ perf record: Woken up %u times to write data ]\n",
		st.wakeups ? st.wakeups : 1);
	if (perf_data_finish(&st.data, argc, argv, st.first_ts, st.last_ts) < 0) {
		perror(o.out);
		return 255;
	}
	fprintf(stderr, "[ perf record: Captured and wrote %.3f MB %s (%llu samples) ]\n",
		(double)(st.data.data_off + st.data.data_size) / (1024.0 * 1024.0), o.out,
		(unsigned long long)st.nr_samples);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 0;

err_kill:
	kill(wl.pid, SIGKILL);
	waitpid(wl.pid, NULL, 0);
err_close:
	close_rings(&st);
	return 255;
}
