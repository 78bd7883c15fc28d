/*
 * userinit.c - starting user space.  User processes are not built yet: without them kinit
 * runs the in-kernel self-tests, says so, and /out has nothing to deliver.
 */
#include <kern/kernel.h>
#include <kern/printk.h>

int kernel_start_user(void)
{
	printk("perfkernel: no user-space support yet; running the in-kernel self-tests\n");
	return ktest_run_all();
}

void out_flush(void)
{
	if (boot_opts.out_path[0])
		printk("perfkernel: out=%s requested but /out is not supported yet\n",
		       boot_opts.out_path);
}
