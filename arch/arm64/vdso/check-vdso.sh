#!/bin/sh
# check-vdso.sh VDSO_SO READELF - the build's check of the vDSO image before the kernel links
# it in.  Every process maps the same read-only pages and nobody relocates them, so the image
# must be: an AArch64 ET_DYN with one read+execute PT_LOAD (no writable segment), no dynamic
# relocations, no TEXTREL, no DT_NEEDED, no undefined symbols; a SysV and a GNU hash table,
# the soname linux-vdso.so.1, version definitions; exactly the four symbols arm64 Linux
# exports, each at LINUX_2.6.39 (the clock ones STT_FUNC); a PT_NOTE with a GNU build-id.
# Prints what is wrong and exits 1.
set -u
so=$1 readelf=$2
fail=0
bad() { echo "check-vdso: $so: $*" >&2; fail=1; }

hdr=$($readelf -h "$so") || { bad "not an ELF file"; exit 1; }
echo "$hdr" | grep -q 'Type: *DYN' || bad "not ET_DYN"
echo "$hdr" | grep -q 'Machine: *AArch64' || bad "not AArch64"

ph=$($readelf -lW "$so")
[ "$(echo "$ph" | grep -c '^ *LOAD ')" -eq 1 ] || bad "want exactly one PT_LOAD"
echo "$ph" | grep '^ *LOAD ' | grep -q ' R E ' || bad "the PT_LOAD is not read+execute only"
for t in DYNAMIC NOTE; do
	echo "$ph" | grep -q "^ *$t " || bad "no PT_$t"
done

rel=$($readelf -rW "$so")
echo "$rel" | grep -q 'There are no relocations in this file' || bad "relocations: $rel"

dyn=$($readelf -dW "$so")
for t in HASH GNU_HASH SYMTAB STRTAB VERSYM VERDEF; do
	echo "$dyn" | grep -q "($t)" || bad "no DT_$t"
done
for t in NEEDED TEXTREL RELA REL RELR JMPREL PLTGOT; do
	echo "$dyn" | grep -q "($t)" && bad "has DT_$t"
done
echo "$dyn" | grep -q 'Library soname: \[linux-vdso.so.1\]' || bad "soname is not linux-vdso.so.1"

# dynamic symbols: Num: Value Size Type Bind Vis Ndx Name
syms=$($readelf --dyn-syms -W "$so" | awk '$1 ~ /^[0-9]+:$/ && $1 != "0:"')
und=$(echo "$syms" | awk '$7 == "UND"')
[ -z "$und" ] || bad "undefined symbols: $und"
got=$(echo "$syms" | awk '$5 == "GLOBAL" || $5 == "WEAK" { print $8 }' | sort | tr '\n' ' ')
want=$(printf '%s\n' LINUX_2.6.39 __kernel_clock_getres@@LINUX_2.6.39 \
	__kernel_clock_gettime@@LINUX_2.6.39 __kernel_gettimeofday@@LINUX_2.6.39 \
	__kernel_rt_sigreturn@@LINUX_2.6.39 | sort | tr '\n' ' ')
[ "$got" = "$want" ] || bad "exported symbols: got '$got', want '$want'"
echo "$syms" | awk '$8 ~ /^__kernel_(clock|get)/ && $4 != "FUNC" { exit 1 }' ||
	bad "a clock symbol is not a function"  # __kernel_rt_sigreturn is NOTYPE, as on Linux

$readelf -nW "$so" | grep -q 'NT_GNU_BUILD_ID' || bad "no GNU build-id note"
exit $fail
