/*
 * note.S - the vDSO's ELF note naming the kernel (owner "Linux", type 0, LINUX_VERSION_CODE as
 * Linux's vDSO carries it: 6.1.0, our uname release).  The GNU build-id note comes from the
 * linker (--build-id=sha1); both land in the image's PT_NOTE (vdso.lds).
 */
	.section .note.Linux, "a", %note
	.balign	4
	.long	2f - 1f		/* namesz */
	.long	4f - 3f		/* descsz */
	.long	0		/* type */
1:	.asciz	"Linux"
2:	.balign	4
3:	.long	0x060100	/* KERNEL_VERSION(6, 1, 0) */
4:
