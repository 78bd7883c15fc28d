/*
 * start.S - entry from QEMU (arm64 Linux Image protocol) and from PSCI CPU_ON.
 *
 * The boot CPU arrives with the MMU off, x0 = physical address of the DTB, at EL2 or EL1.
 * It drops to EL1, zeroes .bss, builds two small early page tables (an identity map of the
 * image for the instant the MMU turns on, and the image at KIMAGE_VA in the TTBR1 root),
 * turns the MMU on and jumps to kmain(dtb_pa, image_pa) at its linked address.  The rest of
 * the address space (linear map, MMIO) is built in C into the same TTBR1 root.
 * Secondaries enter at secondary_entry with x0 = their CPU index and reuse the same tables.
 */
#include <arch/sysreg.h>
#include <arch/memlayout.h>

#define BLOCK_2M_SHIFT 21
/* Block descriptor: normal memory, inner shareable, accessed, EL1 RW, no EL0 execute. */
#define PTE_BLOCK_NORMAL (0x1 | (MT_NORMAL << 2) | (3 << 8) | (1 << 10) | (1 << 54))
#define PTE_TABLE 0x3

	.section .head.text, "ax"
	.globl _head
_head:
	/* arm64 Image header (Documentation/arm64/booting.rst). */
	b	primary_entry		/* code0 */
	.long	0			/* code1 */
	.quad	TEXT_OFFSET		/* text_offset */
	.quad	_kernel_size		/* image_size, .bss included */
	.quad	0x2			/* flags: little endian, 4 KiB pages */
	.quad	0, 0, 0
	.ascii	"ARM\x64"		/* magic */
	.long	0

	.section .text.boot, "ax"
primary_entry:
	mov	x21, x0			/* DTB physical address */
	adr	x22, _head		/* physical load address of the image */
	bl	el2_to_el1
	/* Zero .bss (MMU off: physical addresses, 16-byte aligned stores). */
	adrp	x0, __bss_start
	adrp	x1, __bss_end
1:	cmp	x0, x1
	b.hs	2f
	stp	xzr, xzr, [x0], #16
	b	1b
2:
	/* Identity map: the 2 MiB blocks holding the image, at their physical addresses. */
	and	x23, x22, #~((1 << BLOCK_2M_SHIFT) - 1)	/* first block */
	adrp	x24, _kernel_end			/* PC-relative: its physical address */
	add	x24, x24, #:lo12:_kernel_end
	sub	x24, x24, x23
	mov	x0, #((1 << BLOCK_2M_SHIFT) - 1)
	add	x24, x24, x0
	lsr	x24, x24, #BLOCK_2M_SHIFT		/* block count */
	adrp	x0, idmap_l0
	adrp	x1, idmap_l1
	adrp	x2, idmap_l2
	mov	x3, x23					/* va == pa */
	mov	x4, x23
	mov	x5, x24
	bl	map_blocks
	/* The image at KIMAGE_VA: same offset within its 2 MiB block as the load address. */
	adrp	x0, kernel_l0
	adrp	x1, kimage_l1
	adrp	x2, kimage_l2
	ldr	x3, =KIMAGE_VA
	mov	x4, x23
	mov	x5, x24
	bl	map_blocks
	bl	mmu_on
	ldr	x0, =primary_high
	br	x0

primary_high:
	adrp	x0, boot_stack_top
	add	x0, x0, #:lo12:boot_stack_top
	mov	sp, x0
	adr	x0, vectors
	msr	vbar_el1, x0
	isb
	mov	x0, x21
	mov	x1, x22
	mov	x29, xzr
	mov	x30, xzr
	bl	kmain
3:	wfe
	b	3b

/*
 * map_blocks(x0 = l0, x1 = l1, x2 = l2, x3 = va, x4 = pa, x5 = count): point l0 and l1 at the
 * next level for va and fill count 2 MiB blocks from pa.  All blocks share one l2 table.
 */
map_blocks:
	ubfx	x6, x3, #39, #9
	orr	x7, x1, #PTE_TABLE
	str	x7, [x0, x6, lsl #3]
	ubfx	x6, x3, #30, #9
	orr	x7, x2, #PTE_TABLE
	str	x7, [x1, x6, lsl #3]
	ubfx	x6, x3, #21, #9
	ldr	x8, =PTE_BLOCK_NORMAL
1:	orr	x7, x4, x8
	str	x7, [x2, x6, lsl #3]
	add	x6, x6, #1
	add	x4, x4, #(1 << BLOCK_2M_SHIFT)
	subs	x5, x5, #1
	b.ne	1b
	ret

/* mmu_on: MAIR, TCR, both roots, then SCTLR.M with caches.  Clobbers x0-x2. */
mmu_on:
	ldr	x0, =MAIR_VALUE
	msr	mair_el1, x0
	ldr	x0, =(TCR_T0SZ(64 - VA_BITS) | TCR_T1SZ(64 - VA_BITS) | TCR_IRGN0_WBWA | \
		      TCR_ORGN0_WBWA | TCR_SH0_INNER | TCR_TG0_4K | TCR_IRGN1_WBWA | \
		      TCR_ORGN1_WBWA | TCR_SH1_INNER | TCR_TG1_4K | TCR_AS)
	mrs	x1, id_aa64mmfr0_el1
	and	x1, x1, #0x7				/* PARange */
	cmp	x1, #5
	mov	x2, #5
	csel	x1, x1, x2, ls				/* at most 48 bits */
	orr	x0, x0, x1, lsl #TCR_IPS_SHIFT
	msr	tcr_el1, x0
	adrp	x0, idmap_l0
	msr	ttbr0_el1, x0
	adrp	x0, kernel_l0
	msr	ttbr1_el1, x0
	mov	x0, #CPACR_FPEN_ALL
	msr	cpacr_el1, x0
	isb
	tlbi	vmalle1
	dsb	nsh
	isb
	ldr	x0, =(SCTLR_RES1 | SCTLR_M | SCTLR_C | SCTLR_SA | SCTLR_SA0 | SCTLR_I | \
		      SCTLR_UCT | SCTLR_DZE | SCTLR_NTWE | SCTLR_NTWI | SCTLR_UCI)
	msr	sctlr_el1, x0
	isb
	ret

/*
 * el2_to_el1: when entered at EL2, give EL1 the timers, the PMU (all counters: HPMN = N),
 * the GICv3 system registers and an AArch64 EL1, then return at EL1.  Clobbers x0-x1.
 */
el2_to_el1:
	mrs	x0, CurrentEL
	cmp	x0, #CURRENTEL_EL2
	b.ne	9f
	ldr	x0, =HCR_RW
	msr	hcr_el2, x0
	mov	x0, #(CNTHCTL_EL1PCTEN | CNTHCTL_EL1PCEN)
	msr	cnthctl_el2, x0
	msr	cntvoff_el2, xzr
	mrs	x0, pmcr_el0
	ubfx	x0, x0, #11, #5				/* PMCR.N */
	msr	mdcr_el2, x0				/* HPMN = N, no traps */
	mrs	x0, id_aa64pfr0_el1
	ubfx	x0, x0, #24, #4				/* GIC system registers? */
	cbz	x0, 1f
	mrs	x0, S3_4_C12_C9_5			/* ICC_SRE_EL2 */
	mov	x1, #0x9				/* SRE | Enable */
	orr	x0, x0, x1
	msr	S3_4_C12_C9_5, x0
	isb
1:	mrs	x0, midr_el1
	msr	vpidr_el2, x0
	mrs	x0, mpidr_el1
	msr	vmpidr_el2, x0
	msr	vttbr_el2, xzr
	ldr	x0, =SCTLR_RES1
	msr	sctlr_el1, x0
	mov	x0, #(PSR_D | PSR_A | PSR_I | PSR_F | PSR_MODE_EL1h)
	msr	spsr_el2, x0
	msr	elr_el2, x30
	eret
9:	ret

/* Secondary CPUs: PSCI CPU_ON enters here, MMU off, x0 = CPU index. */
	.globl secondary_entry
secondary_entry:
	mov	x21, x0
	bl	el2_to_el1
	bl	mmu_on
	ldr	x0, =secondary_high
	br	x0
secondary_high:
	adrp	x0, secondary_stack_tops
	add	x0, x0, #:lo12:secondary_stack_tops
	ldr	x0, [x0, x21, lsl #3]
	mov	sp, x0
	adr	x0, vectors
	msr	vbar_el1, x0
	isb
	mov	x0, x21
	mov	x29, xzr
	mov	x30, xzr
	bl	secondary_main
4:	wfe
	b	4b

	.ltorg

	.section .bss
	.balign 4096
	.globl idmap_l0, kernel_l0
idmap_l0:	.space 4096
idmap_l1:	.space 4096
idmap_l2:	.space 4096
kernel_l0:	.space 4096
kimage_l1:	.space 4096
kimage_l2:	.space 4096
	.balign 16
boot_stack:	.space KSTACK_SIZE
boot_stack_top:
