#!/bin/sh
# Tier 4.5: the debug kernel (make DEBUG=1: freed memory poisoned and checked, refcount
# underflow traps, *_locked functions check their lock; built by make test into
# $BUILD/debug) runs
#   - every tests/user program, as tier 40 does (a use after free panics here, not later);
#   - perftorture (tests/fuzz/perftorture.c): threads on one shared table of perf fds, opening,
#     closing, dup-ing, ioctl-ing, mapping, reading, forking, exec-ing, all at once, then a leak
#     check: Slab (the kernel's kmalloc bytes) and MemAvailable back where they were.
# TORTURE_SEEDS / TORTURE_SECS: more and longer (make fuzz runs tests/fuzz/fuzz-torture.sh).
BUILD=${BUILD:-build}
kernel=$BUILD/debug/perfkernel.img
initramfs=$BUILD/initramfs.cpio
pass=0 fail=0
if [ ! -f "$kernel" ]; then
	echo "FAIL debug: no $kernel (make debug-kernel)"
	echo "0 passed, 1 failed"
	exit 1
fi

# 1. every tests/user program on the debug kernel
out=$(MACHINE= CPU= sh tests/qemu/user.sh "$kernel" "$initramfs" 2>&1)
printf '%s\n' "$out" | grep -E '^(FAIL|XFAIL|XPASS) ' | sed 's/^/debug: /'
p=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1/p' | tail -n 1)
f=$(printf '%s\n' "$out" | sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\2/p' | tail -n 1)
if [ -n "$p" ] && [ "$f" = 0 ]; then
	echo "PASS debug: tests/user on the debug kernel ($p checks)"
	pass=$((pass + p))
else
	echo "FAIL debug: tests/user on the debug kernel (${p:-?} passed, ${f:-?} failed)"
	printf '%s\n' "$out" | grep -A30 -E '^\*\*\*|kernel panic' | head -40
	pass=$((pass + ${p:-0})); fail=$((fail + ${f:-0} + 1))
fi

# 2. perftorture and the leak check (/proc is listed first: it drops dead processes' entries)
sh tests/fuzz/fuzz-torture.sh "$kernel" "$initramfs" > "${TMPDIR:-/tmp}/debug-torture.$$" 2>&1
rc=$?
cat "${TMPDIR:-/tmp}/debug-torture.$$"
pass=$((pass + $(grep -c '^PASS ' "${TMPDIR:-/tmp}/debug-torture.$$")))
fail=$((fail + $(grep -c '^FAIL ' "${TMPDIR:-/tmp}/debug-torture.$$")))
[ $rc -eq 0 ] || [ "$(grep -c '^FAIL ' "${TMPDIR:-/tmp}/debug-torture.$$")" -gt 0 ] ||
	{ echo "FAIL debug: fuzz-torture.sh exit $rc"; fail=$((fail + 1)); }
rm -f "${TMPDIR:-/tmp}/debug-torture.$$"
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
