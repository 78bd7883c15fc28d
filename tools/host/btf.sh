#!/bin/sh
# btf.sh - the kernel's BTF, encoded by Debian's pahole (dwarves) from the kernel's DWARF, as
# Linux's scripts/link-vmlinux.sh does with pahole -J for its .BTF section.
#
#   btf.sh OUT PAHOLE "LINK" "ASSEMBLE"   encode: link the kernel with an empty symbol table
#       and an empty BTF (LINK: the link command without -o and without those two objects;
#       ASSEMBLE: the compiler command for kernel/*.S without -c/-o), and write the raw BTF of
#       that link to OUT.  The types do not depend on the layout, so the final image, whose
#       .BTF section holds OUT, has the same BTF; --check proves it.
#   btf.sh --check ELF BTF PAHOLE OBJCOPY   the BTF pahole encodes from the final ELF is BTF,
#       and so are the bytes of the ELF's .BTF section.
# Any message from pahole fails the build: pahole 1.24 reports DWARF it cannot encode (C11
# _Atomic's DW_TAG_atomic_type, hence -gdwarf-4 -gstrict-dwarf in the Makefile) and then
# encodes members of a type it lost as void, which BTF readers refuse.
set -eu
if [ "$1" = --check ]; then
	elf=$2 btf=$3 pahole=$4 objcopy=$5
	w=$elf.btfcheck
	rm -rf "$w" && mkdir -p "$w"
	"$pahole" --btf_encode_detached="$w/btf" "$elf" 2> "$w/err" || { cat "$w/err" >&2; exit 1; }
	[ ! -s "$w/err" ] || { cat "$w/err" >&2; exit 1; }
	cmp -s "$w/btf" "$btf" || { echo "btf: the final image's BTF differs from $btf" >&2; exit 1; }
	"$objcopy" -O binary --only-section=.BTF "$elf" "$w/section"
	cmp -s "$w/section" "$btf" || { echo "btf: the image's .BTF section is not $btf" >&2; exit 1; }
	rm -rf "$w"
	exit 0
fi
out=$1 pahole=$2 link=$3 asm=$4
w=$out.d
rm -rf "$w" && mkdir -p "$w"
: > "$w/empty"
$asm -DKALLSYMS_FILE="\"$w/empty\"" -c kernel/kallsyms.S -o "$w/ks.o"
$asm -DBTF_FILE="\"$w/empty\"" -c kernel/btf.S -o "$w/btf.o"
$link "$w/ks.o" "$w/btf.o" -o "$w/k"
"$pahole" --btf_encode_detached="$w/btf" "$w/k" 2> "$w/err" || { cat "$w/err" >&2; exit 1; }
[ ! -s "$w/err" ] || { head -20 "$w/err" >&2; echo "btf: pahole could not encode every type" >&2; exit 1; }
mv "$w/btf" "$out"
rm -rf "$w"
