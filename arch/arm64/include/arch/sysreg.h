/*
 * sysreg.h - AArch64 system-register access and the bit fields the kernel uses.
 * Values follow the Arm ARM (DDI 0487); only what the kernel touches is named here.
 */
#pragma once

#ifdef __ASSEMBLY__
#define UL(x) (x)
#else
#define UL(x) (x##ull)
#endif

#ifndef __ASSEMBLY__
#include <stdint.h>

#define read_sysreg(r)                                                                             \
	({                                                                                         \
		uint64_t __v;                                                                      \
		__asm__ volatile("mrs %0, " #r : "=r"(__v));                                       \
		__v;                                                                               \
	})
#define write_sysreg(r, v)                                                                         \
	do {                                                                                       \
		uint64_t __v = (uint64_t)(v);                                                      \
		__asm__ volatile("msr " #r ", %x0" ::"rZ"(__v));                                   \
	} while (0)
/* Registers the assembler only knows by encoding (GICv3 CPU interface). */
#define read_sysreg_s(r)                                                                           \
	({                                                                                         \
		uint64_t __v;                                                                      \
		__asm__ volatile("mrs %0, " r : "=r"(__v));                                        \
		__v;                                                                               \
	})
#define write_sysreg_s(r, v)                                                                       \
	do {                                                                                       \
		uint64_t __v = (uint64_t)(v);                                                      \
		__asm__ volatile("msr " r ", %x0" ::"rZ"(__v));                                    \
	} while (0)

static inline void isb(void)
{
	__asm__ volatile("isb" ::: "memory");
}
static inline void dsb_sy(void)
{
	__asm__ volatile("dsb sy" ::: "memory");
}
static inline void dsb_ish(void)
{
	__asm__ volatile("dsb ish" ::: "memory");
}
static inline void dsb_ishst(void)
{
	__asm__ volatile("dsb ishst" ::: "memory");
}
static inline void wfi(void)
{
	__asm__ volatile("wfi" ::: "memory");
}
#endif

/* CurrentEL */
#define CURRENTEL_EL1 (1 << 2)
#define CURRENTEL_EL2 (2 << 2)

/* SCTLR_EL1 */
#define SCTLR_M (1 << 0)
#define SCTLR_A (1 << 1)
#define SCTLR_C (1 << 2)
#define SCTLR_SA (1 << 3)
#define SCTLR_SA0 (1 << 4)
#define SCTLR_I (1 << 12)
#define SCTLR_UCT (1 << 15)
#define SCTLR_DZE (1 << 14)
#define SCTLR_NTWE (1 << 18)
#define SCTLR_NTWI (1 << 16)
#define SCTLR_UCI (1 << 26)
#define SCTLR_SPAN (1 << 23)
#define SCTLR_EIS (1 << 22)
#define SCTLR_EOS (1 << 11)
#define SCTLR_TSCXT (1 << 20)
#define SCTLR_RES1 ((1 << 29) | (1 << 28) | (1 << 23) | (1 << 22) | (1 << 20) | (1 << 11))

/* SPSR / PSTATE */
#define PSR_MODE_EL0t 0x0
#define PSR_MODE_EL1t 0x4
#define PSR_MODE_EL1h 0x5
#define PSR_MODE_EL2h 0x9
#define PSR_MODE_MASK 0xf
#define PSR_F (1 << 6)
#define PSR_I (1 << 7)
#define PSR_A (1 << 8)
#define PSR_D (1 << 9)
#define DAIF_IRQ PSR_I

/* ESR_EL1 exception classes */
#define ESR_EC_SHIFT 26
#define ESR_EC_UNKNOWN 0x00
#define ESR_EC_WFX 0x01
#define ESR_EC_FPSIMD 0x07
#define ESR_EC_ILL 0x0e
#define ESR_EC_SVC64 0x15
#define ESR_EC_SYS64 0x18
#define ESR_EC_SVE 0x19
#define ESR_EC_PAC 0x1c
#define ESR_EC_IABT_LOW 0x20
#define ESR_EC_IABT_CUR 0x21
#define ESR_EC_PC_ALIGN 0x22
#define ESR_EC_DABT_LOW 0x24
#define ESR_EC_DABT_CUR 0x25
#define ESR_EC_SP_ALIGN 0x26
#define ESR_EC_FP_EXC64 0x2c
#define ESR_EC_SERROR 0x2f
#define ESR_EC_BREAKPT_LOW 0x30
#define ESR_EC_BREAKPT_CUR 0x31
#define ESR_EC_SOFTSTP_LOW 0x32
#define ESR_EC_SOFTSTP_CUR 0x33
#define ESR_EC_WATCHPT_LOW 0x34
#define ESR_EC_WATCHPT_CUR 0x35
#define ESR_EC_BRK64 0x3c
#define ESR_ISS_MASK 0x1ffffff
#define ESR_WNR (1 << 6)
#define ESR_FSC_MASK 0x3f

/* TCR_EL1: 4 KiB granule, 48-bit VA in both halves, inner-shareable write-back walks. */
#define TCR_T0SZ(n) ((n) << 0)
#define TCR_T1SZ(n) ((n) << 16)
#define TCR_IRGN0_WBWA (UL(1) << 8)
#define TCR_ORGN0_WBWA (UL(1) << 10)
#define TCR_SH0_INNER (UL(3) << 12)
#define TCR_TG0_4K (UL(0) << 14)
#define TCR_IRGN1_WBWA (UL(1) << 24)
#define TCR_ORGN1_WBWA (UL(1) << 26)
#define TCR_SH1_INNER (UL(3) << 28)
#define TCR_TG1_4K (UL(2) << 30)
#define TCR_IPS_SHIFT 32
#define TCR_AS (UL(1) << 36)
#define TCR_EPD1 (UL(1) << 23)

/* MAIR_EL1 attribute indexes */
#define MT_DEVICE_nGnRnE 0
#define MT_NORMAL 1
#define MT_NORMAL_NC 2
#define MAIR_VALUE ((UL(0x00) << (8 * MT_DEVICE_nGnRnE)) | (UL(0xff) << (8 * MT_NORMAL)) |         \
		    (UL(0x44) << (8 * MT_NORMAL_NC)))

/* CPACR_EL1 */
#define CPACR_FPEN_ALL (3 << 20)

/* HCR_EL2 */
#define HCR_RW (UL(1) << 31)

/* CNTHCTL_EL2 */
#define CNTHCTL_EL1PCTEN (1 << 0)
#define CNTHCTL_EL1PCEN (1 << 1)
