/*
 * userinit.c - starting user space and ending the run.
 *
 * kinit unpacks the initramfs into the root file system and starts init (pid 1), which
 * execs /init (tools/init).  Unlike Linux, init exiting is not a panic: it ends the run, and
 * its exit status (or 128 + the signal that killed it) becomes the machine's exit status.
 * Before power-off, /out is sent to the host as a cpio archive through semihosting when the
 * boot arguments name a host file (out=PATH).
 */
#include <arch/arch.h>
#include <arch/memlayout.h>
#include <fs/vfs.h>
#include <kern/kernel.h>
#include <kern/mm.h>
#include <kern/platform.h>
#include <kern/printk.h>
#include <kern/proc.h>
#include <kern/sched.h>

extern struct platform boot_platform;
extern void init_thread_start(void);
void userinit_exec(void);

static long out_fd = -1;
static bool out_failed;
static bool fs_ready; /* the root file system exists (not in self-test runs) */

static void out_emit(const void *buf, size_t n, void *arg)
{
	(void)arg;
	if (out_fd >= 0 && !out_failed && semihost_write(out_fd, buf, n) != 0)
		out_failed = true;
}

void out_flush(void)
{
	if (!boot_opts.out_path[0] || !fs_ready)
		return;
	out_fd = semihost_open(boot_opts.out_path, 4 /* "wb" */);
	if (out_fd < 0) {
		printk("perfkernel: cannot open host file %s for /out\n", boot_opts.out_path);
		return;
	}
	int err = vfs_archive_tree("/out", out_emit, NULL);

	semihost_close(out_fd);
	if (err || out_failed)
		printk("perfkernel: sending /out failed (%d)\n", err);
}

void kernel_init_exited(int status)
{
	int code = (status & 0x7f) ? 128 + (status & 0x7f) : (status >> 8) & 0xff;

	kernel_shutdown(code);
}

void userinit_exec(void)
{
	char *const argv[] = { "/init", NULL };
	char *const envp[] = { "HOME=/root", "PATH=/bin:/usr/bin:/sbin:/usr/sbin", "TERM=dumb",
			       NULL };
	int err = exec_kernel_path("/init", argv, envp);

	if (err) {
		printk("perfkernel: cannot exec /init: %d\n", err);
		kernel_shutdown(127);
	}
}

int kernel_start_user(void)
{
	const struct platform *pf = &boot_platform;

	vfs_init();
	fs_ready = true;
	if (pf->initrd_end) {
		int err = initramfs_unpack(phys_to_virt(pf->initrd_start),
					   pf->initrd_end - pf->initrd_start);

		if (err)
			printk("perfkernel: initramfs: %d\n", err);
		mm_free_initrd(pf);
	}
	proc_start_reaper();
	struct uthread *init = proc_create_init();

	init->task.ctx.lr = (uint64_t)init_thread_start;
	task_make_runnable(&init->task, -1);
	/* The run ends when init exits (kernel_init_exited). */
	thread_exit();
}
