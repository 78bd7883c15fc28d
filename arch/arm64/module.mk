# arch/arm64: assembly in ASRCS, C in KSRCS (kernel only).
ASRCS += arch/arm64/start.S arch/arm64/vectors.S arch/arm64/uaccess.S arch/arm64/fpsimd.S
KSRCS += arch/arm64/trap.c arch/arm64/mmu.c arch/arm64/gic.c arch/arm64/uart.c arch/arm64/psci.c \
	arch/arm64/debug.c
# the vDSO image (its own build, then linked in as data)
include arch/arm64/vdso/module.mk
