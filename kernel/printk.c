/*
 * printk.c - the kernel's messages on the console (and in the log, kernel/klog.c), and kpanic.
 * Lines are formatted into a buffer first and written under one lock, so output from several
 * CPUs does not interleave within a line.  kpanic stops the other CPUs, prints, and exits
 * QEMU with a failure status (semihosting when enabled, else PSCI SYSTEM_OFF).
 */
#include <stdarg.h>
#include <arch/arch.h>
#include <kern/assert.h>
#include <kern/format.h>
#include <kern/irq.h>
#include <kern/ksym.h>
#include <kern/printk.h>
#include <kern/sched.h>
#include <kern/spinlock.h>

static struct spinlock console_lock = SPINLOCK_INIT;
static _Atomic int panicking;

void console_write(const char *buf, unsigned long n)
{
	unsigned long f = 0;
	bool locked = !atomic_load(&panicking);

	if (locked)
		f = spin_lock_irqsave(&console_lock);
	for (unsigned long i = 0; i < n; i++) {
		if (buf[i] == '\n')
			uart_putc('\r');
		uart_putc(buf[i]);
	}
	if (locked)
		spin_unlock_irqrestore(&console_lock, f);
}

int console_getc(void)
{
	return uart_getc();
}

void vprintk(const char *fmt, va_list ap)
{
	char line[512];
	int n = kvsnprintf(line, sizeof(line), fmt, ap);

	if (n > (int)sizeof(line) - 1)
		n = sizeof(line) - 1;
	console_write(line, (unsigned long)n);
	if (!atomic_load(&panicking))
		klog_printk_text(line, (size_t)n);
}

void printk(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
}

void kpanic(const char *fmt, ...)
{
	va_list ap;

	__asm__ volatile("msr daifset, #0xf" ::: "memory");
	if (atomic_fetch_add(&panicking, 1) == 0) {
		for (unsigned int i = 0; i < nr_cpus_possible; i++)
			if (cpus[i].online && &cpus[i] != this_cpu())
				ipi_send(i, IPI_STOP);
	}
	printk("\nkernel panic: ");
	va_start(ap, fmt);
	vprintk(fmt, ap);
	va_end(ap);
	printk("\n");
	uint64_t fp;

	__asm__ volatile("mov %0, x29" : "=r"(fp));
	dump_backtrace(fp);
	printk("perfkernel: panic\n");
	semihost_exit(125);
}

extern const char kallsyms_text[], kallsyms_text_end[]; /* kernel/kallsyms.S */
extern char _stext[], _etext[];				/* linker.ld */

bool ksym_is_text(uint64_t addr)
{
	return addr >= (uint64_t)_stext && addr < (uint64_t)_etext;
}

bool ksym_addr(const char *name, uint64_t *addr, uint64_t *size)
{
	return ksym_find_name(kallsyms_text, (size_t)(kallsyms_text_end - kallsyms_text), name, addr,
			      size);
}

bool ksym_addr_any(const char *name, uint64_t *addr)
{
	return ksym_find_any(kallsyms_text, (size_t)(kallsyms_text_end - kallsyms_text), name, addr);
}

bool ksym_lookup(uint64_t addr, char *name, size_t size, uint64_t *off)
{
	if (addr < (uint64_t)_stext || addr >= (uint64_t)_etext)
		return false;
	return ksym_find(kallsyms_text, (size_t)(kallsyms_text_end - kallsyms_text), addr, name, size,
			 off);
}
