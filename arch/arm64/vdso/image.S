/*
 * image.S - the vDSO image (vdso.so, built and checked by vdso/module.mk) inside the kernel, between
 * vdso_image_start and vdso_image_end; kernel/vdso.c copies it into its own pages at boot.
 */
	.section .rodata.vdso, "a"
	.balign	4096
	.globl	vdso_image_start, vdso_image_end
vdso_image_start:
	.incbin	VDSO_SO_PATH
vdso_image_end:
	.previous
