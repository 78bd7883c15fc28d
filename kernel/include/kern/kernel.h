/* kernel.h - boot options and the top-level services of kernel/main.c. */
#pragma once

#include <stdbool.h>

struct boot_options {
	bool selftest; /* run the in-kernel self-tests instead of /init */
	bool quiet;
	unsigned int hungdump_s; /* hungdump=N: dump every task after N seconds (debugging) */
	char out_path[256]; /* host file (semihosting) that receives /out as a cpio archive */
};

extern struct boot_options boot_opts;

/* Flush /out to the host, print the exit line and power off. */
__attribute__((noreturn)) void kernel_shutdown(int status);
/* Run every in-kernel self-test; the number that failed (0: all passed). */
int ktest_run_all(void);
/* Start the user /init (pid 1); its exit ends the run. */
__attribute__((noreturn)) int kernel_start_user(void);
/* Send /out to the host (no-op without out=). */
void out_flush(void);
