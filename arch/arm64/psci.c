/*
 * psci.c - PSCI calls (CPU_ON, SYSTEM_OFF) through the conduit the device tree names, and
 * Arm semihosting (exit with a status, host file writes) when the boot arguments enable it.
 */
#include <stdint.h>
#include <arch/arch.h>
#include <kern/errno.h>
#include <kern/string.h>

static enum psci_conduit conduit;
static uint32_t fn_cpu_on, fn_system_off;
bool semihost_enabled;

void psci_init(const struct platform *pf)
{
	conduit = pf->psci_conduit;
	fn_cpu_on = pf->psci_fn_cpu_on;
	fn_system_off = pf->psci_fn_system_off;
}

static int64_t psci_call(uint64_t fn, uint64_t a1, uint64_t a2, uint64_t a3)
{
	register uint64_t x0 __asm__("x0") = fn;
	register uint64_t x1 __asm__("x1") = a1;
	register uint64_t x2 __asm__("x2") = a2;
	register uint64_t x3 __asm__("x3") = a3;

	if (conduit == PSCI_HVC)
		__asm__ volatile("hvc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
	else if (conduit == PSCI_SMC)
		__asm__ volatile("smc #0" : "+r"(x0) : "r"(x1), "r"(x2), "r"(x3) : "memory");
	else
		return -1;
	return (int64_t)x0;
}

int psci_cpu_on(uint64_t mpidr, uint64_t entry_pa, uint64_t context)
{
	if (!fn_cpu_on)
		return -ENODEV;
	int64_t r = psci_call(fn_cpu_on, mpidr, entry_pa, context);

	return r == 0 ? 0 : -EIO;
}

void psci_system_off(void)
{
	if (fn_system_off)
		psci_call(fn_system_off, 0, 0, 0);
	for (;;)
		__asm__ volatile("wfi");
}

/* ---- semihosting (Arm "Semihosting for AArch32 and AArch64", HLT #0xF000) ---- */

#define SYS_OPEN 0x01
#define SYS_CLOSE 0x02
#define SYS_WRITE 0x05
#define SYS_EXIT 0x18
#define ADP_STOPPED_APPLICATION_EXIT 0x20026

static uint64_t semihost_call(uint64_t op, const void *param)
{
	register uint64_t x0 __asm__("x0") = op;
	register uint64_t x1 __asm__("x1") = (uint64_t)param;

	__asm__ volatile("hlt #0xf000" : "+r"(x0) : "r"(x1) : "memory");
	return x0;
}

void semihost_exit(int code)
{
	uint64_t block[2] = { ADP_STOPPED_APPLICATION_EXIT, (uint64_t)(int64_t)code };

	if (semihost_enabled)
		semihost_call(SYS_EXIT, block);
	psci_system_off();
}

long semihost_open(const char *path, int mode)
{
	uint64_t block[3] = { (uint64_t)path, (uint64_t)mode, strlen(path) };

	return semihost_enabled ? (long)semihost_call(SYS_OPEN, block) : -1;
}

long semihost_write(long fd, const void *buf, size_t n)
{
	uint64_t block[3] = { (uint64_t)fd, (uint64_t)buf, n };

	/* Returns the number of bytes NOT written. */
	return semihost_enabled ? (long)semihost_call(SYS_WRITE, block) : (long)n;
}

void semihost_close(long fd)
{
	uint64_t block[1] = { (uint64_t)fd };

	if (semihost_enabled)
		semihost_call(SYS_CLOSE, block);
}
