#!/bin/sh
# user.sh KERNEL INITRAMFS - run every tests/user program inside perfkernel at -smp 4 (and the
# busybox script), counting their PASS/FAIL lines (USER_PROGS and USER_PRE: a subset, after a
# command).  A program that exits non-zero without a
# FAIL line, a missing end-of-run line, a panic or a hang is a failure too.
set -u
kernel=$1 initramfs=$2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# USER_PROGS: which programs (a guest glob, default every one); USER_PRE: a command run first
cmd="${USER_PRE:-:}; for t in ${USER_PROGS:-/bin/t_*}; do echo \"== \$t\"; \"\$t\"; echo \"== rc(\$t)=\$?\"; done; echo \"== user tests done\""
MACHINE=${MACHINE:-} CPU=${CPU:-} SMP=4 TIMEOUT=${USER_TEST_TIMEOUT:-240} sh tools/host/run.sh "$kernel" "$initramfs" "$cmd" > "$log" 2>&1
rc=$?
# Expected failures (tests/qemu/xfail.txt) are reported as XFAIL, not counted as failures.
xfail_keys=$(sed -n 's/^\([^#].*[^ ]\) *|.*/\1/p' tests/qemu/xfail.txt)
is_xfail() {
	printf '%s\n' "$xfail_keys" | while IFS= read -r k; do
		[ -n "$k" ] || continue # an empty list is one empty line: it names no check
		case "$1" in "$k"*) echo yes; break ;; esac
	done
}
pass=0 fail=0 xfail=0 xpass=0 seen=0
while IFS= read -r line; do
	case "$line" in
	"== rc("*)
		echo "$line"
		prc=${line##*=}
		# A non-zero exit with no failure line of its own (a crash, a missing summary).
		if [ "$prc" != 0 ] && [ "$seen" = 0 ]; then echo "FAIL ${line#== }: exit without FAIL lines"; fail=$((fail + 1)); fi
		seen=0 ;;
	"PASS "*)
		pass=$((pass + 1))
		[ -n "$(is_xfail "${line#PASS }")" ] && { echo "XPASS ${line#PASS } (remove from xfail.txt)"; xpass=$((xpass + 1)); } ;;
	"FAIL "*)
		seen=1
		if [ -n "$(is_xfail "${line#FAIL }")" ]; then echo "XFAIL ${line#FAIL }"; xfail=$((xfail + 1))
		else echo "$line"; fail=$((fail + 1)); fi ;;
	"SKIP "*|"== "*) echo "$line" ;;
	esac
done < "$log"
if ! grep -q '^== user tests done' "$log" || [ $rc -ne 0 ]; then
	echo "FAIL user: run did not finish (exit $rc)"
	grep -A30 -E "^\*\*\*|^kernel panic" "$log" | head -n 60
	tail -n 10 "$log"
	fail=$((fail + 1))
fi
# Per-call diagnostics go to the kernel log (dmesg), never into the programs' output on the
# console: t_procabi makes an unknown syscall and finds it with syslog(2).
diag='perfkernel: unknown syscall [0-9]\|\]: unhandled signal [0-9]'
if grep -q "$diag" "$log"; then
	echo "FAIL user: a per-call diagnostic on the console: $(grep -m1 "$diag" "$log")"
	fail=$((fail + 1))
else
	echo "PASS user: no per-call diagnostic on the console"
	pass=$((pass + 1))
fi
echo "expected failures: $xfail (tests/qemu/xfail.txt), unexpected passes: $xpass"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
