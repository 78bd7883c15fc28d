/*
 * stat.c - `perf stat`: count events for a workload, tasks or CPUs and
 * print them in the exact layout of Linux perf 6.1 (stat-display.c and
 * the derived metrics of stat-shadow.c), both the aligned form and -x CSV.
 *
 * Syscall behaviour follows perf 6.1 (perf-abi-notes.md): one
 * perf_event_open per event and target (pid=child cpu=-1, or pid=-1 per
 * CPU with -a/-C, or per thread with -p/-t), no groups, disabled=1,
 * inherit=1, enable_on_exec=1 for a forked workload, read_format
 * TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING, FD_CLOEXEC; counts come from
 * read() after wait4. Events the kernel rejects as unknown print
 * `<not supported>`; counters that never ran print `<not counted>`;
 * multiplexed counters are scaled by enabled/running.
 *
 * Not done: --per-* aggregation, interval printing, groups, metric groups,
 * the "stalled cycles per insn" second line.
 */
#define _GNU_SOURCE
#include "perf.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define COUNTS_LEN 18 /* perf's column for the count */
#define EVNAME_LEN 32 /* event name column */
#define METRIC_LEN 35 /* derived-metric column */
#define MAX_TARGETS 256

/* Welford running mean/variance, as perf's struct stats. */
struct stats {
	double n, mean, m2;
};

static void stats_update(struct stats *s, double v)
{
	double delta = v - s->mean;

	s->n += 1;
	s->mean += delta / s->n;
	s->m2 += delta * (v - s->mean);
}

/* Standard error of the mean, which is what perf prints as "+-". */
static double stats_stddev(const struct stats *s)
{
	if (s->n < 2)
		return 0.0;
	return sqrt(s->m2 / (s->n - 1) / s->n);
}

struct counter {
	struct perf_evdesc ev;
	int fds[MAX_TARGETS];
	bool supported;
	struct stats res; /* scaled value per run */
	double ena_sum, run_sum;
	/* results for printing */
	double avg, ena, run;
};

struct stat_opts {
	char sep[16];
	bool csv;
	bool system_wide;
	const char *cpu_list;
	const char *pid, *tid;
	int runs;
	FILE *out;
	int argc;
	char **argv;
};

static struct counter counters[PERF_MAX_EVENTS];
static int nr_counters;
static int targets[MAX_TARGETS]; /* cpus (-a/-C) or tids (-p/-t) */
static int nr_targets;
static bool per_cpu;
static struct stats walltime;
static struct rusage ru;
static volatile sig_atomic_t done;
static volatile sig_atomic_t signr; /* re-raised after printing, as perf 6.1 does */

static const char *default_events = "task-clock,context-switches,cpu-migrations,page-faults,cycles,"
				    "instructions,branches,branch-misses";

static void on_signal(int sig)
{
	done = 1;
	signr = sig;
}

static bool errno_not_supported(int err)
{
	return err == ENOENT || err == EOPNOTSUPP || err == EINVAL || err == ENOSYS ||
	       err == ENXIO || err == ENODEV;
}

static int open_counters(pid_t child)
{
	for (int i = 0; i < nr_counters; i++) {
		struct counter *c = &counters[i];
		struct perf_event_attr attr = c->ev.attr;

		c->supported = true;
		attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		attr.sample_type = PERF_SAMPLE_IDENTIFIER;
		attr.disabled = 1;
		attr.inherit = 1;
		attr.enable_on_exec = child > 0 && !per_cpu;
		for (int t = 0; t < nr_targets; t++)
			c->fds[t] = -1;
		for (int t = 0; t < nr_targets; t++) {
			pid_t pid = per_cpu ? -1 : child > 0 ? child : targets[t];
			int cpu = per_cpu ? targets[t] : -1;

			c->fds[t] = perf_open(&attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
			if (c->fds[t] >= 0)
				continue;
			if (errno_not_supported(errno)) {
				c->supported = false;
				for (int k = 0; k < t; k++) {
					close(c->fds[k]);
					c->fds[k] = -1;
				}
				break;
			}
			fprintf(stderr,
				"Error:\nThe sys_perf_event_open() syscall returned with %d (%s) "
				"for event (%s).\n",
				errno, strerror(errno), c->ev.name);
			return -1;
		}
	}
	return 0;
}

static void ioctl_all(unsigned long req)
{
	for (int i = 0; i < nr_counters; i++)
		for (int t = 0; t < nr_targets; t++)
			if (counters[i].fds[t] >= 0)
				ioctl(counters[i].fds[t], req, 0);
}

/* read() each fd, scale each by enabled/running, sum over targets. */
static void read_counters(void)
{
	for (int i = 0; i < nr_counters; i++) {
		struct counter *c = &counters[i];
		double val = 0, ena = 0, run = 0;

		if (!c->supported)
			continue;
		for (int t = 0; t < nr_targets; t++) {
			uint64_t v[3];

			if (c->fds[t] < 0 || read(c->fds[t], v, sizeof(v)) != sizeof(v))
				continue;
			if (v[2] && v[2] < v[1])
				v[0] = (uint64_t)((double)v[0] * (double)v[1] / (double)v[2] + 0.5);
			else if (!v[2])
				v[0] = 0;
			val += (double)v[0];
			ena += (double)v[1];
			run += (double)v[2];
		}
		stats_update(&c->res, val);
		c->ena_sum += ena;
		c->run_sum += run;
	}
}

static void close_counters(void)
{
	for (int i = 0; i < nr_counters; i++)
		for (int t = 0; t < nr_targets; t++)
			if (counters[i].fds[t] >= 0) {
				close(counters[i].fds[t]);
				counters[i].fds[t] = -1;
			}
}

/*
 * Is any target task still there? perf 6.1 stats /proc/PID; we also treat a
 * zombie as gone. Without /proc, kill(tid, 0).
 * (poll() cannot tell: a perf fd without a ring always reports POLLHUP.)
 */
static bool target_alive(void)
{
	for (int t = 0; t < nr_targets; t++) {
		char path[64], buf[256], *p;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/stat", targets[t]);
		f = fopen(path, "r");
		if (!f) {
			if (access("/proc/self/stat", F_OK) &&
			    (kill(targets[t], 0) == 0 || errno != ESRCH))
				return true;
			continue;
		}
		p = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
		fclose(f);
		if (!p || (p[1] == ' ' && p[2] != 'Z' && p[2] != 'X'))
			return true;
	}
	return false;
}

/*
 * -p/-t: count until the tasks are gone (checked every 100 ms) or SIGINT.
 * -a/-C without a command: sleep until SIGINT/SIGTERM.
 */
static void wait_attached(const struct stat_opts *o)
{
	sigset_t block, old;

	if (!per_cpu && (o->pid || o->tid)) {
		while (!done && target_alive()) {
			struct timespec ts = {0, 100 * 1000 * 1000};

			nanosleep(&ts, NULL);
		}
		return;
	}
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	while (!done)
		sigsuspend(&old);
	sigprocmask(SIG_SETMASK, &old, NULL);
}

static int run_once(const struct stat_opts *o, int *exit_status)
{
	struct perf_workload wl = {.pid = -1, .go_fd = -1};
	bool forks = o->argc > 0;
	double t0, t1;
	int status = 0;

	if (forks && perf_workload_prepare(o->argv, &wl) < 0) {
		perror("fork");
		return -1;
	}
	if (open_counters(forks && !per_cpu ? wl.pid : 0) < 0) {
		if (forks) {
			kill(wl.pid, SIGTERM);
			waitpid(wl.pid, NULL, 0);
		}
		close_counters();
		return -1;
	}
	t0 = perf_now();
	if (forks) {
		perf_workload_start(&wl);
		if (per_cpu)
			ioctl_all(PERF_EVENT_IOC_ENABLE);
		while (wait4(wl.pid, &status, 0, &ru) < 0 && errno == EINTR)
			;
	} else {
		ioctl_all(PERF_EVENT_IOC_ENABLE);
		wait_attached(o);
	}
	t1 = perf_now();
	if (forks && perf_workload_exec_errno()) {
		fprintf(stderr, "Workload failed: %s\n", strerror(perf_workload_exec_errno()));
		close_counters();
		return -1;
	}
	if (!forks || per_cpu)
		ioctl_all(PERF_EVENT_IOC_DISABLE);
	stats_update(&walltime, (t1 - t0) * 1e9);
	read_counters();
	close_counters();
	if (forks) {
		if (WIFSIGNALED(status))
			psignal(WTERMSIG(status), o->argv[0]);
		*exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
	}
	return 0;
}

/* ---- output ---- */

static bool same_ctx(const struct perf_event_attr *a, const struct perf_event_attr *b)
{
	return a->exclude_user == b->exclude_user && a->exclude_kernel == b->exclude_kernel &&
	       a->exclude_hv == b->exclude_hv && a->exclude_host == b->exclude_host &&
	       a->exclude_idle == b->exclude_idle;
}

/* Mean of the counted events of one kind (perf's runtime_stat); n = how many. */
static double shadow(uint32_t type, uint64_t config, const struct perf_event_attr *ctx, int *n)
{
	double sum = 0;

	*n = 0;
	for (int i = 0; i < nr_counters; i++) {
		struct counter *c = &counters[i];
		bool clock = type == PERF_TYPE_SOFTWARE && config == PERF_COUNT_SW_TASK_CLOCK;

		if (!c->supported || c->run == 0 || c->ena == 0)
			continue;
		if (clock ? !perf_ev_is_clock(&c->ev) : !perf_ev_is(&c->ev, type, config))
			continue;
		if (ctx && !same_ctx(ctx, &c->ev.attr))
			continue;
		sum += c->avg;
		(*n)++;
	}
	return *n ? sum / *n : 0;
}

static void print_metric(const struct stat_opts *o, const char *fmt, const char *unit, double val)
{
	char buf[64];
	const char *v;
	int n;

	if (o->csv) {
		if (!fmt || !unit) {
			fprintf(o->out, "%s%s", o->sep, o->sep);
			return;
		}
		snprintf(buf, sizeof(buf), fmt, val);
		for (v = buf; *v == ' '; v++)
			;
		n = (int)strspn(v, "0123456789.");
		fprintf(o->out, "%s%.*s%s%s", o->sep, n, v, o->sep, unit);
		return;
	}
	if (!fmt || !unit) {
		fprintf(o->out, "%-*s", METRIC_LEN, "");
		return;
	}
	n = fprintf(o->out, " # ");
	n += fprintf(o->out, fmt, val);
	fprintf(o->out, " %-*s", METRIC_LEN - n - 1, unit);
}

static void print_shadow(const struct stat_opts *o, const struct counter *c)
{
	const struct perf_event_attr *a = &c->ev.attr;
	double avg = c->avg, total;
	int n;

	if (perf_ev_is(&c->ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS)) {
		total = shadow(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, a, &n);
		print_metric(o, total ? "%7.2f " : NULL, "insn per cycle", total ? avg / total : 0);
	} else if (perf_ev_is(&c->ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES)) {
		total = shadow(PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, a, &n);
		print_metric(o, n ? "%7.2f%%" : NULL, "of all branches",
			     total ? avg / total * 100 : 0);
	} else if (perf_ev_is(&c->ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES)) {
		total = shadow(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, a, &n);
		print_metric(o, n ? "%8.3f %%" : NULL, "of all cache refs",
			     total ? avg / total * 100 : 0);
	} else if (perf_ev_is(&c->ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_FRONTEND)) {
		double ratio;

		total = shadow(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, a, &n);
		ratio = total ? avg / total * 100 : 0;
		print_metric(o, ratio ? "%7.2f%%" : NULL, "frontend cycles idle", ratio);
	} else if (perf_ev_is(&c->ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND)) {
		total = shadow(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, a, &n);
		print_metric(o, "%7.2f%%", "backend cycles idle", total ? avg / total * 100 : 0);
	} else if (perf_ev_is(&c->ev, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)) {
		total = shadow(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, NULL, &n);
		print_metric(o, total ? "%8.3f" : NULL, "GHz", total ? avg / total : 0);
	} else if (perf_ev_is_clock(&c->ev)) {
		total = walltime.mean;
		print_metric(o, total ? "%8.3f" : NULL, "CPUs utilized", total ? avg / total : 0);
	} else if ((total = shadow(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, NULL, &n)), n) {
		char unit[16] = "/sec";
		double ratio = total ? 1e9 * avg / total : 0;
		char u = 0;

		if (ratio > 1e9) {
			u = 'G';
			ratio /= 1e9;
		} else if (ratio > 1e6) {
			u = 'M';
			ratio /= 1e6;
		} else if (ratio > 1e3) {
			u = 'K';
			ratio /= 1e3;
		}
		if (u)
			snprintf(unit, sizeof(unit), "%c/sec", u);
		print_metric(o, "%8.3f", unit, ratio);
	} else {
		print_metric(o, NULL, NULL, 0);
	}
}

static void print_noise(const struct stat_opts *o, double sd, double avg)
{
	double pct = avg ? 100.0 * sd / avg : 0;

	if (o->runs == 1)
		return;
	if (o->csv)
		fprintf(o->out, "%s%.2f%%", o->sep, pct);
	else if (pct)
		fprintf(o->out, "  ( +-%6.2f%% )", pct);
}

static void print_running(const struct stat_opts *o, double run, double ena)
{
	uint64_t r = (uint64_t)run, e = (uint64_t)ena;

	if (o->csv) /* perf 6.1 computes this one in u64, so it is a whole percent */
		fprintf(o->out, "%s%llu%s%.2f", o->sep, (unsigned long long)r, o->sep,
			r != e && e ? (double)(100 * r / e) : 100.0);
	else if (r != e && e)
		fprintf(o->out, "  (%.2f%%)", 100.0 * run / ena);
}

static void print_counter(const struct stat_opts *o, const struct counter *c, int unit_width)
{
	bool clock = perf_ev_is_clock(&c->ev);
	const char *unit = clock ? "msec" : "";
	double scale = clock ? 1e-6 : 1.0;
	int uw = o->csv ? 0 : unit_width;
	double sd = stats_stddev(&c->res);

	if (!c->supported || c->run == 0 || c->ena == 0) {
		fprintf(o->out, "%*s%s", o->csv ? 0 : COUNTS_LEN,
			c->supported ? "<not counted>" : "<not supported>", o->sep);
		fprintf(o->out, "%-*s%s", uw, unit, o->sep);
		fprintf(o->out, "%*s", o->csv ? 0 : -25, c->ev.name);
		if (!o->csv)
			print_metric(o, NULL, NULL, 0);
		print_noise(o, sd, c->avg);
		print_running(o, c->run, c->ena);
		if (o->csv)
			print_metric(o, NULL, NULL, 0);
		fputc('\n', o->out);
		return;
	}
	if (o->csv)
		fprintf(o->out, clock ? "%.2f%s" : "%.0f%s", c->avg * scale, o->sep);
	else
		fprintf(o->out, clock ? "%'*.2f%s" : "%'*.0f%s", COUNTS_LEN, c->avg * scale,
			o->sep);
	fprintf(o->out, "%-*s%s", uw, unit, o->sep);
	fprintf(o->out, "%-*s", o->csv ? 0 : EVNAME_LEN, c->ev.name);
	if (o->csv) {
		print_noise(o, sd, c->avg);
		print_running(o, c->run, c->ena);
	}
	print_shadow(o, c);
	if (!o->csv) {
		print_noise(o, sd, c->avg);
		print_running(o, c->run, c->ena);
	}
	fputc('\n', o->out);
}

static void print_header(const struct stat_opts *o)
{
	fprintf(o->out, "\n Performance counter stats for ");
	if (o->system_wide)
		fprintf(o->out, "'system wide");
	else if (o->cpu_list)
		fprintf(o->out, "'CPU(s) %s", o->cpu_list);
	else if (o->pid)
		fprintf(o->out, "process id '%s", o->pid);
	else if (o->tid)
		fprintf(o->out, "thread id '%s", o->tid);
	else {
		fprintf(o->out, "'%s", o->argv[0]);
		for (int i = 1; i < o->argc; i++)
			fprintf(o->out, " %s", o->argv[i]);
	}
	fprintf(o->out, "'");
	if (o->runs > 1)
		fprintf(o->out, " (%d runs)", o->runs);
	fprintf(o->out, ":\n\n");
}

static int precision_of(double num)
{
	if (num > 1)
		return 0;
	return (int)lround(ceil(-log10(num)));
}

static void print_footer(const struct stat_opts *o)
{
	double avg = walltime.mean / 1e9;

	fprintf(o->out, "\n");
	if (o->runs == 1) {
		fprintf(o->out, " %17.9f seconds time elapsed", avg);
		if (o->argc > 0 && !per_cpu) {
			fprintf(o->out, "\n\n");
			fprintf(o->out, " %17.9f seconds user\n",
				(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6);
			fprintf(o->out, " %17.9f seconds sys\n",
				(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
		}
	} else {
		double sd = stats_stddev(&walltime) / 1e9;
		int prec = precision_of(sd) + 2;

		fprintf(o->out, " %17.*f +- %.*f seconds time elapsed", prec, avg, prec, sd);
		if (avg && sd)
			fprintf(o->out, "  ( +-%6.2f%% )", 100.0 * sd / avg);
	}
	fprintf(o->out, "\n\n");
}

static void print_counters(const struct stat_opts *o)
{
	int unit_width = 4;

	for (int i = 0; i < nr_counters; i++) {
		struct counter *c = &counters[i];

		c->avg = c->res.mean;
		c->ena = c->ena_sum / o->runs;
		c->run = c->run_sum / o->runs;
	}
	if (!o->csv)
		print_header(o);
	for (int i = 0; i < nr_counters; i++)
		print_counter(o, &counters[i], unit_width);
	if (!o->csv)
		print_footer(o);
	fflush(o->out);
}

/* ---- command line ---- */

static int setup_targets(struct stat_opts *o)
{
	per_cpu = o->system_wide || o->cpu_list;
	if (o->cpu_list && !o->system_wide) {
		nr_targets = perf_parse_cpus(o->cpu_list, targets, MAX_TARGETS);
	} else if (o->system_wide) {
		nr_targets = perf_online_cpus(targets, MAX_TARGETS);
	} else if (o->tid || o->pid) {
		char path[64];
		DIR *d;
		struct dirent *de;

		nr_targets = 0;
		snprintf(path, sizeof(path), "/proc/%s/task", o->pid ? o->pid : "");
		d = o->pid ? opendir(path) : NULL;
		while (d && (de = readdir(d)) && nr_targets < MAX_TARGETS)
			if (de->d_name[0] != '.')
				targets[nr_targets++] = atoi(de->d_name);
		if (d)
			closedir(d);
		if (!nr_targets)
			targets[nr_targets++] = atoi(o->pid ? o->pid : o->tid);
	} else {
		nr_targets = 1;
		targets[0] = -1;
	}
	return nr_targets > 0 ? 0 : -1;
}

static void stat_usage(void)
{
	fprintf(stderr, "\n Usage: perf stat [<options>] [<command>]\n\n"
			"    -e <event>    event selector\n    -a            system-wide\n"
			"    -C <cpus>     cpu list\n    -p <pid>      existing process id\n"
			"    -t <tid>      existing thread id\n    -x <sep>      CSV output\n"
			"    -r <n>        repeat n times\n    -o <file>     output file\n\n");
}

int perf_cmd_stat(int argc, char **argv)
{
	static const struct option longopts[] = {
	    {"event", required_argument, 0, 'e'},
	    {"all-cpus", no_argument, 0, 'a'},
	    {"cpu", required_argument, 0, 'C'},
	    {"pid", required_argument, 0, 'p'},
	    {"tid", required_argument, 0, 't'},
	    {"field-separator", required_argument, 0, 'x'},
	    {"repeat", required_argument, 0, 'r'},
	    {"output", required_argument, 0, 'o'},
	    {0, 0, 0, 0},
	};
	struct stat_opts o = {.sep = " ", .runs = 1, .out = stderr};
	const char *out_path = NULL;
	int opt, exit_status = 0, n = 0;
	struct sigaction sa;

	setlocale(LC_ALL, "");
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+e:aC:p:t:x:r:o:", longopts, NULL)) != -1) {
		if (opt == 'e') {
			struct perf_evdesc tmp[PERF_MAX_EVENTS];

			n = perf_parse_events(optarg, tmp, PERF_MAX_EVENTS - nr_counters);
			if (n < 0)
				return 129;
			for (int i = 0; i < n; i++)
				counters[nr_counters++].ev = tmp[i];
			continue;
		}
		switch (opt) {
		case 'a':
			o.system_wide = true;
			break;
		case 'C':
			o.cpu_list = optarg;
			break;
		case 'p':
			o.pid = optarg;
			break;
		case 't':
			o.tid = optarg;
			break;
		case 'x':
			snprintf(o.sep, sizeof(o.sep), "%s", optarg);
			o.csv = true;
			break;
		case 'r':
			o.runs = atoi(optarg);
			break;
		case 'o':
			out_path = optarg;
			break;
		default:
			stat_usage();
			return 129;
		}
	}
	o.argc = argc - optind;
	o.argv = argv + optind;
	if (o.runs < 1 || (!o.argc && !o.system_wide && !o.cpu_list && !o.pid && !o.tid)) {
		stat_usage();
		return 129;
	}
	if (!nr_counters) {
		struct perf_evdesc tmp[PERF_MAX_EVENTS];

		n = perf_parse_events(default_events, tmp, PERF_MAX_EVENTS);
		for (int i = 0; i < n; i++)
			counters[nr_counters++].ev = tmp[i];
	}
	if (setup_targets(&o) < 0) {
		fprintf(stderr, "perf stat: bad target\n");
		return 129;
	}
	if (out_path) {
		time_t now = time(NULL);

		o.out = fopen(out_path, "w");
		if (!o.out) {
			perror(out_path);
			return 255;
		}
		fprintf(o.out, "# started on %s\n", ctime(&now));
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGCHLD, SIG_DFL);
	for (int r = 0; r < o.runs; r++) {
		if (run_once(&o, &exit_status) < 0)
			return 255;
		if (done && !o.argc)
			break;
	}
	print_counters(&o);
	if (out_path)
		fclose(o.out);
	if (signr) {
		/* like perf: die of the signal that stopped us, so the caller sees it */
		signal(signr, SIG_DFL);
		kill(getpid(), signr);
	}
	return exit_status;
}
