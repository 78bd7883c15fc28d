/* tap.h - tiny result helpers shared by the userland ABI tests (header only).
 *
 * Every check prints exactly one line:
 *   PASS <prog>: <what>
 *   FAIL <prog>: <what>: <why>
 *   SKIP <prog>: <what>: <why>
 * and tap_done() returns the exit status: 0 iff nothing failed.
 * tap_init() makes stdout unbuffered (so fork never duplicates output) and arms
 * an alarm() watchdog that reports a FAIL and exits if the program hangs.
 */
#ifndef TESTS_USER_TAP_H
#define TESTS_USER_TAP_H

#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char *tap_prog = "?";
static int tap_npass, tap_nfail, tap_nskip;

static inline void tap_vline(const char *kind, const char *what, const char *why, va_list *ap)
{
	char buf[1024];
	int n = snprintf(buf, sizeof(buf), "%s %s: %s", kind, tap_prog, what);
	if (why && ap && n >= 0 && n < (int)sizeof(buf)) {
		n += snprintf(buf + n, sizeof(buf) - n, ": ");
		if (n < (int)sizeof(buf))
			n += vsnprintf(buf + n, sizeof(buf) - n, why, *ap);
	}
	if (n < 0)
		return;
	if (n >= (int)sizeof(buf) - 1)
		n = sizeof(buf) - 2;
	buf[n++] = '\n';
	/* one write() per line: lines from forked children do not interleave */
	if (write(1, buf, n) < 0) {
		/* nothing useful to do */
	}
}

static inline void tap_pass(const char *what)
{
	tap_npass++;
	tap_vline("PASS", what, NULL, NULL);
}

__attribute__((format(printf, 2, 3)))
static inline void tap_fail(const char *what, const char *why, ...)
{
	va_list ap;
	tap_nfail++;
	va_start(ap, why);
	tap_vline("FAIL", what, why, &ap);
	va_end(ap);
}

__attribute__((format(printf, 2, 3)))
static inline void tap_skip(const char *what, const char *why, ...)
{
	va_list ap;
	tap_nskip++;
	va_start(ap, why);
	tap_vline("SKIP", what, why, &ap);
	va_end(ap);
}

/* PASS if ok, else FAIL with the formatted reason. Returns ok. */
__attribute__((format(printf, 3, 4)))
static inline int tap_check(int ok, const char *what, const char *why, ...)
{
	va_list ap;
	if (ok) {
		tap_pass(what);
		return 1;
	}
	tap_nfail++;
	va_start(ap, why);
	tap_vline("FAIL", what, why, &ap);
	va_end(ap);
	return 0;
}

#define CHECK(cond, what, ...) tap_check(!!(cond), (what), __VA_ARGS__)

/* ret (of a syscall that sets errno) must be -1 with errno == want; err is errno saved right after. */
static inline int tap_errno(long ret, int err, int want, const char *what)
{
	return tap_check(ret == -1 && err == want, what, "want -1/%s, got %ld errno %d (%s)",
			 strerrorname_np(want) ? strerrorname_np(want) : "?", ret,
			 ret == -1 ? err : 0, ret == -1 ? (strerrorname_np(err) ? strerrorname_np(err) : "?") : "-");
}

/* ret must not be -1 */
static inline int tap_ok(long ret, int err, const char *what)
{
	return tap_check(ret != -1, what, "got -1 errno %d (%s)", err,
			 strerrorname_np(err) ? strerrorname_np(err) : "?");
}

/* Evaluate a syscall expression, keep errno. */
#define EXPECT_ERRNO(expr, want, what) do { errno = 0; long r_ = (long)(expr); int e_ = errno; \
	tap_errno(r_, e_, (want), (what)); } while (0)
#define EXPECT_OK(expr, what) do { errno = 0; long r_ = (long)(expr); int e_ = errno; \
	tap_ok(r_, e_, (what)); } while (0)

static inline void tap_alarm_handler(int sig)
{
	char buf[160];
	int n = snprintf(buf, sizeof(buf), "FAIL %s: watchdog: timed out (pid %d)\n", tap_prog, (int)getpid());
	if (write(1, buf, n) < 0) {
	}
	_exit(1);
}

/* Name the program and arm a watchdog of `seconds` (0: none). */
static inline void tap_init(const char *prog, unsigned seconds)
{
	tap_prog = prog;
	setvbuf(stdout, NULL, _IONBF, 0);
	if (seconds) {
		signal(SIGALRM, tap_alarm_handler);
		alarm(seconds);
	}
}

static inline int tap_done(void)
{
	char buf[160];
	int n = snprintf(buf, sizeof(buf), "# %s: %d pass, %d fail, %d skip\n", tap_prog,
			 tap_npass, tap_nfail, tap_nskip);
	if (write(1, buf, n) < 0) {
	}
	return tap_nfail ? 1 : 0;
}

#endif
