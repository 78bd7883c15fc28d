/* kallsyms.S - the kernel's symbol table as /proc/kallsyms prints it, built into the image by
 * tools/host/kallsyms.sh (KALLSYMS_FILE: the text for this link). */
	.section .kallsyms, "a"
	.global kallsyms_text, kallsyms_text_end
kallsyms_text:
	.incbin KALLSYMS_FILE
kallsyms_text_end:
	.byte 0
