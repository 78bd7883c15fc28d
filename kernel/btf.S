/* btf.S - the kernel's own BTF (/sys/kernel/btf/vmlinux), raw as pahole encodes it from this
 * kernel's DWARF: built into the image by the Makefile (BTF_FILE: tools/host/btf.sh's output;
 * an empty file for the link that blob is encoded from). */
	.section .BTF, "a"
	.balign 4
	.global __start_BTF, __stop_BTF
__start_BTF:
	.incbin BTF_FILE
__stop_BTF:
