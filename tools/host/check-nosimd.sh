#!/bin/sh
# check-nosimd.sh KERNEL_ELF [OBJDUMP] - fail when kernel code touches FP/SIMD registers outside
# the functions allowed to.  The FP/SIMD registers belong to the interrupted user task: the
# kernel saves them only at a context switch, so any other kernel use (a libgcc helper such as
# __popcountdi2, vectorised library code) silently corrupts user state.  Our own C builds with
# -mgeneral-regs-only; this catches what is linked in from elsewhere.  Run by the kernel's link
# rule in the Makefile.
elf=$1
objdump=${2:-aarch64-linux-gnu-objdump}
# fpsimd.S saves and restores user state; the libfdt read-write functions below come in with
# libfdt.a's objects but the kernel never calls them (it only reads the DTB).
allowed=' fpsimd_save fpsimd_restore fpsimd_load_zero fdt_splice_mem_rsv_ fdt_open_into fdt_appendprop_addrrange '
bad=$("$objdump" -d --no-show-raw-insn "$elf" | awk -v allowed="$allowed" '
	/^[0-9a-f]+ <.*>:$/ { fn = substr($2, 2, length($2) - 3); next }
	{
		n = split($0, f, "\t")
		if (n < 3) next
		ops = f[3]
		sub(/<.*/, "", ops); sub(/\/\/.*/, "", ops)
		if (f[2] != "at" && (f[2] ~ /^(f|scvtf|ucvtf)/ || ops ~ /(^|[^a-z0-9_])[vqdshb][0-9][0-9]?([^0-9_]|$)/))
			if (index(allowed, " " fn " ") == 0 && !(fn in seen)) { seen[fn] = 1; print fn }
	}')
if [ -n "$bad" ]; then
	echo "check-nosimd: kernel functions that use FP/SIMD registers (they would corrupt user state):" >&2
	printf '  %s\n' $bad >&2
	exit 1
fi
