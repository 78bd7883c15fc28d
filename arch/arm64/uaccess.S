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
uaccess_end:

	.globl	uaccess_fixup_copy, uaccess_fixup_str
/* Resume points: x2 holds what arch_copy_user had left; strncpy reports -1. */
uaccess_fixup_copy:
	mov	x0, x2
	ret
uaccess_fixup_str:
	mov	x0, #-1
	ret
