#!/bin/sh
# check-layers.sh - the layering of docs/architecture.md, checked on the source (tier 10).
#
# 1. perf/ and bpf/ (the portable layers) include only what the seam allows:
#      freestanding C: <stdarg.h> <stdbool.h> <stddef.h> <stdint.h> <stdatomic.h> <stdalign.h>
#                      <stdnoreturn.h>
#      the Linux uapi: <linux/...> <asm/...> <asm-generic/...>
#      the seam and the primitives: <kern/x.h> for the files in include/kern/
#      each other's public headers: <perf/x.h> <bpf/x.h> (include/perf/, include/bpf/)
#      their own private headers: "x.h" in the same folder (no path)
#      the PMU and debug register accessors: <arch/pmu_sysreg.h> in perf/pmuv3.c only,
#                      <arch/dbg_sysreg.h> in perf/bp.c only
#    Anything else (a kernel header: <kern/sched.h> lives in kernel/include/, <fs/vfs.h>, a
#    "../" path, libc) is a FAIL naming the file and line.
# 2. Every header compiles on its own (-fsyntax-only, the kernel's warnings as errors): those
#    perf/ and bpf/ may see with their include path, the kernel's with the kernel's.  Except
#    the bodies included into a function to instantiate it (TEMPLATES below), which are not
#    headers in that sense.
#
# The include paths mirror the Makefile's SEAM_INC / KERNEL_INC.  Prints PASS/FAIL lines and
# "N passed, M failed"; exits 1 on any failure.
set -u
BUILD=${BUILD:-build}
CROSS=${CROSS:-aarch64-linux-gnu-}
CC=${CROSS}gcc
UAPI=$BUILD/uapi
GCC_INC=$($CC -print-file-name=include)
pass=0 fail=0
ok() { echo "PASS layers: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL layers: $1"; fail=$((fail + 1)); }

if [ ! -d "$UAPI/linux" ]; then
	bad "no uapi headers in $UAPI (make BUILD=$BUILD kernel first)"
	echo "$pass passed, $fail failed"
	exit 1
fi

# ---- 1. what perf/ and bpf/ include ----
allowed() { # file, include spec (<x> or "x")
	f=$1 spec=$2
	case "$spec" in
	'<stdarg.h>' | '<stdbool.h>' | '<stddef.h>' | '<stdint.h>' | '<stdatomic.h>' | \
		'<stdalign.h>' | '<stdnoreturn.h>') return 0 ;;
	'<linux/'* | '<asm/'* | '<asm-generic/'*) return 0 ;;
	'<kern/'* | '<perf/'* | '<bpf/'*)
		p=${spec#<}; p=${p%>}
		[ -f "include/$p" ] && return 0 ;;
	'<arch/pmu_sysreg.h>') [ "$f" = perf/pmuv3.c ] && return 0 ;;
	'<arch/dbg_sysreg.h>') [ "$f" = perf/bp.c ] && return 0 ;;
	'"'*'"')
		p=${spec#\"}; p=${p%\"}
		case "$p" in */*) return 1 ;; esac
		[ -f "$(dirname "$f")/$p" ] && return 0 ;;
	esac
	return 1
}

for dir in perf bpf; do
	nf=0 nbad=0
	for f in $dir/*.c $dir/*.h; do
		[ -f "$f" ] || continue
		nf=$((nf + 1))
		grep -n '^[[:space:]]*#[[:space:]]*include' "$f" |
			sed -E 's/^([0-9]+):[[:space:]]*#[[:space:]]*include[[:space:]]*([<"][^>"]*[>"]).*/\1 \2/' \
			> "${TMPDIR:-/tmp}/layers.$$"
		while read -r line spec; do
			if ! allowed "$f" "$spec"; then
				bad "$f:$line includes $spec, which the seam does not allow (see tools/host/check-layers.sh)"
				nbad=$((nbad + 1))
			fi
		done < "${TMPDIR:-/tmp}/layers.$$"
	done
	rm -f "${TMPDIR:-/tmp}/layers.$$"
	[ $nbad -eq 0 ] && ok "$dir/ ($nf files) includes only the seam, the primitives, the uapi and perf/bpf public headers"
done

# ---- 2. every header compiles on its own ----
KFLAGS="-std=gnu11 -ffreestanding -nostdinc -isystem $GCC_INC -mgeneral-regs-only -fsyntax-only
	-Wall -Wextra -Werror -Wno-unused-parameter -Wstrict-prototypes -Wmissing-prototypes
	-Wno-missing-field-initializers"
SEAM_INC="-Iinclude -Iarch/arm64/include -I$UAPI"
KERNEL_INC="$SEAM_INC -Ikernel/include -Ikernel/libc-compat -I$BUILD/deps/arm64/usr/include"
TEMPLATES="bpf/interp_body.h" # interp.c includes it twice, inside its two interpreters
alone() { # header, include flags
	case " $TEMPLATES " in *" $1 "*) return ;; esac
	out=$(printf '#include "%s"\n' "$(pwd)/$1" | $CC $KFLAGS $2 -x c - -o /dev/null 2>&1)
	if [ $? -eq 0 ]; then
		ok "$1 compiles on its own"
	else
		bad "$1 does not compile on its own: $(printf '%s' "$out" | grep -m1 -E 'error|warning')"
	fi
}
for h in include/kern/*.h include/perf/*.h include/bpf/*.h perf/*.h bpf/*.h; do
	[ -f "$h" ] && alone "$h" "$SEAM_INC"
done
for h in kernel/include/kern/*.h kernel/include/fs/*.h arch/arm64/include/arch/*.h kernel/*.h \
	fs/*.h trace/*.h; do
	[ -f "$h" ] && alone "$h" "$KERNEL_INC"
done

echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
