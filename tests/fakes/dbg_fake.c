/* dbg_fake.c - the simulated debug registers behind tests/fakes/include/arch/dbg_sysreg.h. */
#include <arch/dbg_sysreg.h>

struct dbg_fake_regs dbg_fake;
