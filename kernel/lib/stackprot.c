/*
 * stackprot.c - the stack-protector symbols Debian's libfdt.a was compiled against.  The kernel
 * itself is built without -fstack-protector; a smashed canary inside libfdt panics.
 */
#include <stdint.h>
#include <kern/assert.h>

uintptr_t __stack_chk_guard = 0x595e9fbd94fda766ull;
void __stack_chk_fail(void);

void __stack_chk_fail(void)
{
	kpanic("stack protector: canary smashed");
}
