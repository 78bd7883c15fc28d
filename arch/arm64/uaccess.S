/*
 * uaccess.S - copies that may fault (user memory, or unmapped kernel memory for probe reads).
 * A data abort whose ELR lies between uaccess_start and uaccess_end resumes at the routine's
 * fixup (trap.c / usertrap.c), which returns how much was left.
 */
	.text
	.globl	uaccess_start, uaccess_end
	.globl	arch_copy_user, arch_strncpy_user
uaccess_start:

/* size_t arch_copy_user(void *dst, const void *src, size_t n): bytes not copied */
arch_copy_user:
	cbz	x2, 3f
	orr	x3, x0, x1
	tst	x3, #7
	b.ne	2f
	tst	x3, #15		/* pairs only when both are 16-aligned: never across a page */
	b.ne	1f
0:	cmp	x2, #16
	b.lo	1f
	ldp	x4, x5, [x1], #16
	stp	x4, x5, [x0], #16
	sub	x2, x2, #16
	b	0b
1:	cmp	x2, #8
	b.lo	2f
	ldr	x4, [x1], #8
	str	x4, [x0], #8
	sub	x2, x2, #8
	b	1b
2:	cbz	x2, 3f
	ldrb	w4, [x1], #1
	strb	w4, [x0], #1
	sub	x2, x2, #1
	b	2b
3:	mov	x0, x2
	ret

/* long arch_strncpy_user(char *dst, const char *src, size_t n) */
arch_strncpy_user:
	mov	x3, #0
4:	cmp	x3, x2
	b.hs	5f
	ldrb	w4, [x1, x3]
	strb	w4, [x0, x3]
	cbz	w4, 6f
	add	x3, x3, #1
	b	4b
5:	mov	x0, x2
	ret
6:	mov	x0, x3
	ret

/* int arch_read_pair(uint64_t dst[2], const void *src): 0, or -1 (the strncpy fixup) on a
 * fault; src is 16-aligned, so the pair lies in one page. */
	.globl	arch_read_pair
arch_read_pair:
	ldp	x2, x3, [x1]
	stp	x2, x3, [x0]
	mov	x0, #0
	ret
uaccess_end:

	.globl	uaccess_fixup_copy, uaccess_fixup_str
/* Resume points: x2 holds what arch_copy_user had left; strncpy and read_pair report -1. */
uaccess_fixup_copy:
	mov	x0, x2
	ret
uaccess_fixup_str:
	mov	x0, #-1
	ret
